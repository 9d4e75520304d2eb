#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tests/deb/postinst.sh DEB: bpf-arena-dkms's postinst (debian/), installed
# with dpkg and run by dpkg-reconfigure, with the real dkms of this host:
#  1. a kernel whose build fails (a fake 6.1.0-99-amd64 whose "headers" have
#     a Makefile that fails) leaves the package configured; the postinst says
#     which kernel, where the log is (kept in /var/log/bpf-arena-dkms) and what
#     to do, and still builds the other kernels (the 6.12 headers: the stub);
#  2. the running kernel not installed (this host's: a container) is said,
#     and nothing is loaded;
#  3. with the running kernel faked to be 6.12 (uname), the postinst loads
#     the module (modprobe bpf_arena; modprobe is a stub here that only
#     records), and says it is the stub; a modprobe that fails is said and
#     does not fail the configuration; a chroot (ischroot) loads nothing;
#     a running kernel without headers is said;
#  4. purge leaves no log directory and nothing of bpf-arena in DKMS.
# Runs inside a private mount namespace whose /usr, /etc and /var are
# overlays thrown away at exit: the host is untouched (its 6.1 kernel is
# hidden there, so that only the quick stub is built).  Needs root, dkms and
# dwarves (the package's Depends), and the 6.12 headers of `make setup`.
# Output: kselftest-style "ok N name" lines and "# Totals:".
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
deb=${1:?usage: postinst.sh bpf-arena-dkms_VERSION_amd64.deb}
deb=$(readlink -f "$deb")
if [ -z "${BPF_ARENA_POSTINST_INNER:-}" ]; then
	# shellcheck disable=SC1091
	. "$top/cache/kernels.env"
	export K612 BPF_ARENA_POSTINST_INNER=1
	exec unshare -m --propagation private "$0" "$@"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 pass=0 fail=0
t() { # t NAME CMD...
	n=$((n + 1))
	if "${@:2}"; then echo "ok $n $1"; pass=$((pass + 1)); else echo "not ok $n $1"; fail=$((fail + 1)); fi
}
for d in /usr /etc /var; do
	m=$(echo "$d" | tr / _)
	mkdir -p "$tmp/$m/u" "$tmp/$m/w"
	mount -t overlay overlay -o "lowerdir=$d,upperdir=$tmp/$m/u,workdir=$tmp/$m/w" "$d" ||
		{ echo "not ok 1 overlay_mount # cannot overlay $d"; echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"; exit 1; }
done
version=$(dpkg-deb -f "$deb" Version)
bad=6.1.0-99-amd64
noheaders=6.1.0-98-amd64
export LC_ALL=C DEBIAN_FRONTEND=noninteractive

# The kernels: 6.12 (headers), a fake one whose build fails, a fake one
# without headers; every other one hidden.
for k in /lib/modules/*; do
	[ "$(basename "$k")" = "$K612" ] || rm -rf "$k"
done
[ -e "/lib/modules/$K612/build/include" ] ||
	{ echo "not ok 1 headers_6_12 # no headers for $K612: run make setup"; echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"; exit 1; }
mkdir -p "/lib/modules/$bad/build/include" "/lib/modules/$noheaders/kernel"
printf '%s\n' '# broken headers (tests/deb/postinst.sh)' \
	'$(error these headers are broken on purpose)' > "/lib/modules/$bad/build/Makefile"
: > "/lib/modules/$bad/build/.config"

# uname -r and modprobe, steered by files in $tmp: the running kernel, and
# whether modprobe succeeds.  The real modprobe is never run here.
mv /usr/bin/uname /usr/bin/uname.real
cat > /usr/bin/uname <<EOF
#!/bin/sh
if [ "\$1" = -r ] && [ -s $tmp/running ]; then cat $tmp/running; else exec /usr/bin/uname.real "\$@"; fi
EOF
chmod 0755 /usr/bin/uname
rm -f /usr/sbin/modprobe /sbin/modprobe 2>/dev/null
cat > /usr/sbin/modprobe <<EOF
#!/bin/sh
echo "\$*" >> $tmp/modprobe.calls
[ ! -e $tmp/modprobe.fails ] || { echo "modprobe: ERROR: could not insert 'bpf_arena': Operation not permitted" >&2; exit 1; }
EOF
chmod 0755 /usr/sbin/modprobe
mv /usr/bin/ischroot /usr/bin/ischroot.real
cat > /usr/bin/ischroot <<EOF
#!/bin/sh
[ -e $tmp/chroot ]
EOF
chmod 0755 /usr/bin/ischroot

dkms_installed() { dkms status -m bpf-arena -v "$version" -k "$1" 2>/dev/null | grep -q ': installed'; }
configured() { [ "$(dpkg-query -W -f='${db:Status-Abbrev}' bpf-arena-dkms 2>/dev/null | tr -d ' ')" = ii ]; }
says() { grep -qF -- "$2" "$1" || { echo "# missing in $(basename "$1"): $2"; return 1; }; }
show() { sed 's/^/# /' "$1"; }
reconf() { dpkg-reconfigure bpf-arena-dkms > "$tmp/$1" 2>&1; }
log="/var/log/bpf-arena-dkms/make-$bad.log"

# 1. dpkg -i, the running kernel faked to be 6.12, whose modprobe fails
#    (a container without CAP_SYS_MODULE, a rejected signature).
echo "$K612" > "$tmp/running"
touch "$tmp/modprobe.fails"
dpkg -i "$deb" > "$tmp/install" 2>&1
rc=$?
show "$tmp/install"
t install_exits_0_with_a_failed_kernel test $rc = 0
t package_configured configured
t says_which_kernel_failed says "$tmp/install" "bpf-arena-dkms: ERROR: the build of bpf_arena $version for kernel $bad failed"
t says_where_the_log_is says "$tmp/install" "bpf-arena-dkms:   log: $log"
t log_kept test -s "$log"
t log_is_the_failed_build grep -q 'these headers are broken on purpose' "$log"
t says_what_to_do says "$tmp/install" "bpf-arena-dkms:     dkms install bpf-arena/$version -k $bad"
t says_configured_all_the_same says "$tmp/install" "bpf-arena-dkms: the build failed for kernel(s): $bad (above); bpf-arena-dkms is configured"
t other_kernel_built_stub dkms_installed "$K612"
t says_stub_for_6_12 says "$tmp/install" "bpf-arena-dkms: kernel $K612: bpf_arena installed (the inactive stub: this kernel has BPF arena in tree)"
t says_no_headers_for_other_kernel says "$tmp/install" "bpf-arena-dkms: kernel $noheaders: no headers (linux-headers-$noheaders is not installed): not built for it"
t says_could_not_load says "$tmp/install" "bpf-arena-dkms: could not load bpf_arena into the running kernel $K612: modprobe: ERROR: could not insert 'bpf_arena': Operation not permitted"
t says_loads_at_boot says "$tmp/install" "it loads at the next boot (/etc/modules-load.d/bpf-arena.conf), or now with: modprobe bpf_arena"
# dh_dkms's own postinst code (it runs /usr/lib/dkms/common.postinst) is not in it.
t no_dh_dkms_postinst_code sh -c "! grep -q 'DKMS_POSTINST' /var/lib/dpkg/info/bpf-arena-dkms.postinst"
rm -f "$tmp/modprobe.fails" "$tmp/modprobe.calls"

# 2. modprobe works: loaded.
reconf load; rc=$?
show "$tmp/load"
t reconfigure_running_6_12_exits_0 test $rc = 0
t modprobe_called grep -qx bpf_arena "$tmp/modprobe.calls"
t says_loaded_stub says "$tmp/load" "bpf-arena-dkms: loaded bpf_arena $version into the running kernel $K612 (the inactive stub: this kernel has BPF arena in tree)"
rm -f "$tmp/modprobe.calls"

# 3. A chroot: no modprobe.
touch "$tmp/chroot"
reconf chroot; rc=$?
show "$tmp/chroot"
t chroot_exits_0 test $rc = 0
t says_chroot says "$tmp/chroot" "bpf-arena-dkms: in a chroot: bpf_arena is not loaded"
t no_modprobe_in_chroot test ! -e "$tmp/modprobe.calls"
rm -f "$tmp/chroot"

# 4. Nothing to load (6.12's headers set aside: no build to wait for): the
#    running kernel (this host's) is not installed; then it is, without headers.
mv "/lib/modules/$K612/build" "/lib/modules/$K612/build.aside"
: > "$tmp/running"
reconf container; rc=$?
show "$tmp/container"
t container_exits_0 test $rc = 0
t says_running_kernel_not_installed says "$tmp/container" "bpf-arena-dkms: the running kernel $(uname -r) is not installed here (a chroot or a container?): bpf_arena is not loaded now"
t no_modprobe_without_running_kernel test ! -e "$tmp/modprobe.calls"
echo "$noheaders" > "$tmp/running"
reconf noheaders; rc=$?
show "$tmp/noheaders"
t no_headers_exits_0 test $rc = 0
t says_no_headers_for_running says "$tmp/noheaders" "bpf-arena-dkms: no headers for the running kernel $noheaders: bpf_arena is not built for it and not loaded"
t no_modprobe_without_headers test ! -e "$tmp/modprobe.calls"
mv "/lib/modules/$K612/build.aside" "/lib/modules/$K612/build"

# 5. Purge.
dpkg --purge bpf-arena-dkms > "$tmp/purge" 2>&1
rc=$?
show "$tmp/purge"
t purge_exits_0 test $rc = 0
t purge_removes_logs test ! -e /var/log/bpf-arena-dkms
t purge_leaves_no_dkms_tree test ! -e /var/lib/dkms/bpf-arena
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
