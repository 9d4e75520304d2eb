#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tests/dkms/install-other-kernels.sh: the DKMS paths for kernels other than
# 6.1, with the real dkms on this host against the installed 6.12 headers:
#  1. `make install` for 6.12 (BPF arena in tree) builds and installs the
#     inactive stub, says so, and writes the modules-load.d entry (the stub
#     loads, so systemd-modules-load does not fail at boot);
#  2. `dkms autoinstall -k 6.12`, what a new kernel package's postinst runs,
#     succeeds (the bug this replaced: BUILD_EXCLUSIVE_KERNEL made bookworm's
#     dkms 3.0.10 fail it, exit 11, and with it the kernel's installation);
#  3. `make install` for an arch dkms.conf excludes (DKMS_ARCH=aarch64) does
#     not fail on dkms's exit 77 but says what it did, and writes no
#     modules-load.d entry.
# Runs inside a private mount namespace whose /usr/src, /var/lib/dkms,
# /lib/modules, /etc/modules-load.d and /etc/udev/rules.d are overlays thrown
# away at exit: the host is untouched.  Needs root.  Output: kselftest-style
# "ok N name" lines and "# Totals:".
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${BPF_ARENA_OTHER_KERNELS_INNER:-}" ]; then
	# shellcheck disable=SC1091
	. "$top/cache/kernels.env"
	export K612 BPF_ARENA_OTHER_KERNELS_INNER=1
	exec unshare -m --propagation private "$0" "$@"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in /usr/src /var/lib/dkms /lib/modules /etc/modules-load.d /etc/udev/rules.d; do
	n=$(echo "$d" | tr / _)
	mkdir -p "$d" "$tmp/$n/u" "$tmp/$n/w"
	mount -t overlay overlay -o "lowerdir=$d,upperdir=$tmp/$n/u,workdir=$tmp/$n/w" "$d" ||
		{ echo "not ok 1 overlay_mount # cannot overlay $d"; echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"; exit 1; }
done
n=0 pass=0 fail=0
t() { # t NAME CMD...
	n=$((n + 1))
	if "${@:2}"; then echo "ok $n $1"; pass=$((pass + 1)); else echo "not ok $n $1"; fail=$((fail + 1)); fi
}
version=$(cat "$top/VERSION")
installed_612() { dkms status -m bpf-arena -v "$version" -k "$K612" | grep -q ': installed'; }
ko_612() { find "/lib/modules/$K612/updates" -name 'bpf_arena.ko*' 2>/dev/null | head -n 1; }

# 1. make install for 6.12: the stub.
out="$tmp/out"
make -s -C "$top" install-dkms install-udev KERNELVER="$K612" BPF_ARENA_LOAD=no > "$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
t install_on_6_12_exits_0 test $rc = 0
t says_stub_for_6_12 grep -q "^bpf-arena: kernel $K612 has BPF arena in tree: building the inactive stub" "$out"
t stub_installed_for_6_12 installed_612
t stub_module_file_present test -n "$(ko_612)"
t stub_built_for_6_12 sh -c "modinfo -F vermagic '$(ko_612)' | grep -q '^$K612 '"
t modules_load_entry_written grep -qx bpf_arena /etc/modules-load.d/bpf-arena.conf

# 2. The kernel package's hook: dkms autoinstall for 6.12.
dkms unbuild -m bpf-arena -v "$version" -k "$K612" > "$tmp/rm" 2>&1
t stub_removed_before_autoinstall test -z "$(ko_612)"
t source_still_added sh -c "dkms status -m bpf-arena | grep -q '^bpf-arena/$version: added'"
dkms autoinstall -k "$K612" > "$tmp/auto" 2>&1
rc=$?
sed 's/^/# autoinstall: /' "$tmp/auto"
t autoinstall_6_12_exits_0 test $rc = 0
t autoinstall_6_12_installs_stub installed_612

# 3. An arch dkms.conf excludes: exit 77 from dkms, not a failure.
make -s -C "$top" install-dkms install-udev KERNELVER="$K612" DKMS_ARCH=aarch64 BPF_ARENA_LOAD=no > "$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
t install_excluded_arch_exits_0 test $rc = 0
t says_no_module_for_arch grep -q "^install: no module for $K612 (aarch64): dkms.conf builds only for x86_64" "$out"
t dkms_exclusion_reported grep -q 'BUILD_EXCLUSIVE' "$out"
t source_added_to_dkms sh -c "dkms status -m bpf-arena | grep -q '^bpf-arena/$version: added'"
t no_modules_load_entry test ! -e /etc/modules-load.d/bpf-arena.conf
t says_modules_load_skipped grep -q 'modules-load.d/bpf-arena.conf not written' "$out"
rm -f "$top/build/.dkms-excluded"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
