#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tests/dkms/install-excluded.sh: `make install` for a kernel dkms.conf
# excludes (6.12: BPF arena in tree) must not fail on dkms's exit 77 but say
# what it did, and must not write the modules-load.d entry.  Runs the real
# dkms on this host against the installed 6.12 headers, inside a private
# mount namespace whose /usr/src, /var/lib/dkms, /etc/modules-load.d and
# /etc/udev/rules.d are overlays thrown away at exit: the host is untouched.
# Needs root.  Output: kselftest-style "ok N name" lines and "# Totals:".
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${BPF_ARENA_EXCLUDED_INNER:-}" ]; then
	# shellcheck disable=SC1091
	. "$top/cache/kernels.env"
	export K612 BPF_ARENA_EXCLUDED_INNER=1
	exec unshare -m --propagation private "$0" "$@"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in /usr/src /var/lib/dkms /etc/modules-load.d /etc/udev/rules.d; do
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
out="$tmp/out"
make -s -C "$top" install-dkms install-udev KERNELVER="$K612" BPF_ARENA_LOAD=no > "$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
t install_on_6_12_exits_0 test $rc = 0
t says_no_module_for_6_12 grep -q "^install: no module for $K612: dkms.conf builds only for kernels 6.1-6.8" "$out"
t dkms_exclusion_reported grep -q 'BUILD_EXCLUSIVE' "$out"
t source_added_to_dkms sh -c "dkms status -m bpf-arena | grep -q '^bpf-arena/$(cat "$top/VERSION"): added'"
t no_modules_load_entry test ! -e /etc/modules-load.d/bpf-arena.conf
t says_modules_load_skipped grep -q 'modules-load.d/bpf-arena.conf not written' "$out"
rm -f "$top/build/.dkms-excluded"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
