#!/bin/bash
# Runs inside the check-dkms guest (a debootstrapped Debian 12 with the stock
# kernel), as /mnt/share/guest.sh, at every boot (bpf-arena-check.service).
# Boot 1: installs bpf-arena as an administrator would (dist tarball into
# /usr/src, dkms add/build/install), the library, udev rule and modules-load
# entry (staged by the host with `make install-lib install-udev DESTDIR=`),
# loads the module, runs the smoke test; exits 100 to reboot.
# Boot 2: checks that the module came back by itself, smoke test again, the
# AUTOINSTALL path (the kernel postinst hook rebuilds it), then dkms remove
# --all and that nothing is left.  Then (DEB_TEST=1) the .deb path of
# tests/dkms/guest-deb.sh: apt-get install of the packages, smoke test, reboot;
# boot 3: after reboot, kernel upgrade rebuild, remove and purge.  Prints "@@CHECK <name> ok|FAIL@@" per check
# and finally "@@CHECK-DKMS-DONE passed=N failed=M@@".
set -u
share=/mnt/share
. "$share/guest.env"		# VERSION, GROUP, MODE, AUTOINSTALL_TEST, QUICK, DEB_TEST, K612
state=/var/lib/bpf-arena-check
mkdir -p "$state"
phase=$(cat "$state/phase" 2>/dev/null || echo 1)
pass=$(cat "$state/pass" 2>/dev/null || echo 0)
fail=$(cat "$state/fail" 2>/dev/null || echo 0)
kver=$(uname -r)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C
t0=$(cut -d' ' -f1 /proc/uptime)
# Quick mode (CHECK_DKMS_QUICK=1): the host's resolve_btfids (same Debian)
# instead of one built from linux-source in the guest.
if [ "${QUICK:-0}" = 1 ]; then export BPF_ARENA_RESOLVE_BTFIDS=$share/resolve_btfids; fi

ts() { printf '[%7.1f] ' "$(cut -d' ' -f1 /proc/uptime)"; }
say() { ts; echo "$*"; }
ok() { echo "@@CHECK $1 ok@@"; pass=$((pass + 1)); }
bad() { echo "@@CHECK $1 FAIL@@ ${2:-}"; fail=$((fail + 1)); }
check() { # check NAME CMD...: ok if CMD succeeds
	local name=$1; shift
	if "$@"; then ok "$name"; else bad "$name" "($*)"; fi
}
run() { ts; echo "# $*"; "$@"; }
save() { echo "$pass" > "$state/pass"; echo "$fail" > "$state/fail"; sync; }
timed() { # timed NAME CMD...: runs CMD, prints its wall time
	local name=$1 s e rc; shift
	s=$(date +%s.%N); ts; echo "# $*"
	"$@"; rc=$?
	e=$(date +%s.%N)
	echo "@@TIME $name $(awk "BEGIN{printf \"%.1f\", $e - $s}")s@@"
	return $rc
}
dkms_status() { dkms status -m bpf-arena 2>/dev/null; }
installed() { dkms_status | grep -q "^bpf-arena/$VERSION, $kver, x86_64: installed"; }
devnode_ok() {
	udevadm settle -t 30
	local s; s=$(stat -c '%a %G' /dev/bpf_arena 2>/dev/null)
	echo "/dev/bpf_arena: ${s:-missing}"
	[ "$s" = "$(printf '%o' $((8#$MODE))) $GROUP" ]
}
smoke() { # smoke AS: the smoke test as root or as the unprivileged user
	if [ "$1" = root ]; then /usr/local/bin/bpf-arena-smoke; else runuser -u arena -- /usr/local/bin/bpf-arena-smoke; fi
}
module_files() { find /lib/modules -path '*/updates/*' -name 'bpf_arena.ko*' 2>/dev/null; }

echo "@@CHECK-DKMS-BOOT phase=$phase kernel=$kver uptime=$t0@@"
say "$(uname -a)"
say "lockdown: $(cat /sys/kernel/security/lockdown 2>/dev/null || echo n/a); cmdline: $(cat /proc/cmdline)"

case $phase in
1)
	say "dkms $(dkms --version 2>&1 | head -n1); gcc $(gcc -dumpversion); headers: $(readlink -f /lib/modules/$kver/build)"
	check vmlinux-btf-present test -r /sys/kernel/btf/vmlinux
	run tar -xzf "$share/bpf-arena-$VERSION.tar.gz" -C /usr/src
	timed dkms-add dkms add -m bpf-arena -v "$VERSION"; check dkms-add test $? = 0
	# The resolve_btfids built from linux-source is kept for the AUTOINSTALL
	# rebuild of boot 2 (that path is checked here; there the hook is).
	BPF_ARENA_SAVE_RESOLVE_BTFIDS="$state/rbt" \
		timed dkms-build dkms build -m bpf-arena -v "$VERSION" -k "$kver"; rc=$?
	check dkms-build test $rc = 0
	if [ $rc != 0 ]; then
		tail -n 40 "/var/lib/dkms/bpf-arena/$VERSION/build/make.log" 2>&1
	fi
	log="/var/lib/dkms/bpf-arena/$VERSION/$kver/x86_64/log/make.log"
	[ -f "$log" ] || log="/var/lib/dkms/bpf-arena/$VERSION/build/make.log"
	say "make.log lines of dkms/build.sh:"; grep '^bpf-arena: ' "$log"
	check btf-level-2 grep -q 'BTF level 2' "$log"
	check module-btf-built grep -q '^bpf-arena: module BTF: yes' "$log"
	timed dkms-install dkms install -m bpf-arena -v "$VERSION" -k "$kver"; check dkms-install test $? = 0
	run dkms status
	check dkms-status-installed installed
	run modinfo bpf_arena | grep -E '^(filename|version|vermagic|signer|sig_key|description):'
	check modinfo-updates-dkms sh -c "modinfo -n bpf_arena | grep -q '/updates/dkms/bpf_arena.ko'"
	check modinfo-version sh -c "modinfo -F version bpf_arena | grep -qx '$VERSION'"

	# Library, headers, .pc, udev rule, modules-load.d: staged on the host.
	run cp -a "$share/stage/." /
	run ldconfig
	getent group "$GROUP" >/dev/null || run groupadd --system "$GROUP"
	id arena >/dev/null 2>&1 || run useradd -m -G "$GROUP" arena
	run udevadm control --reload
	run modprobe bpf_arena; check modprobe test $? = 0
	dmesg | grep -E 'bpf_arena' | sed 's/^/dmesg: /'
	check dmesg-loaded sh -c "dmesg | grep -q 'bpf_arena: version $VERSION loaded'"
	check module-btf-loaded test -e /sys/kernel/btf/bpf_arena
	check kfuncs-available sh -c "! dmesg | grep -q 'bpf_arena: .*kfuncs.*unavailable'"
	# DKMS signed it with its own MOK key, which the kernel does not know:
	# the taint message README.md explains, and the module loads.
	run modinfo -F signer bpf_arena
	check taint-message-as-documented sh -c "dmesg | grep -q 'bpf_arena: module verification failed: signature and/or required key missing - tainting kernel'"
	say "taint: $(cat /sys/module/bpf_arena/taint)"
	bpftool btf dump file /sys/kernel/btf/bpf_arena 2>/dev/null | head -n 3 | sed 's/^/btf: /'
	check devnode-mode-group devnode_ok
	cc=$(pkg-config --cflags --libs libbpfarena); say "pkg-config libbpfarena: $cc"
	timed smoke-build gcc -O2 -Wall -Wextra -Werror -o /usr/local/bin/bpf-arena-smoke "$share/smoke.c" $cc
	check smoke-build test -x /usr/local/bin/bpf-arena-smoke
	ldd /usr/local/bin/bpf-arena-smoke | grep bpfarena
	run smoke root; check smoke-root test $? = 0
	run smoke arena; check smoke-user-in-group test $? = 0
	check modules-load-conf grep -qx bpf_arena /etc/modules-load.d/bpf-arena.conf
	echo 2 > "$state/phase"; save
	say "rebooting"
	exit 100
	;;
2)
	check module-loaded-after-reboot test -d /sys/module/bpf_arena
	journalctl -b -u systemd-modules-load --no-pager 2>/dev/null | tail -n 3
	dmesg | grep -E 'bpf_arena' | sed 's/^/dmesg: /'
	run dkms status
	check dkms-status-installed-after-reboot installed
	check devnode-after-reboot devnode_ok
	run smoke root; check smoke-root-after-reboot test $? = 0
	run smoke arena; check smoke-user-after-reboot test $? = 0
	if [ "${AUTOINSTALL_TEST:-1}" = 1 ]; then
		# A kernel upgrade runs /etc/kernel/postinst.d/dkms NEWKERNEL, which
		# builds and installs every AUTOINSTALL module: do that for this kernel
		# after taking the module out of it.
		run rmmod bpf_arena
		run dkms unbuild -m bpf-arena -v "$VERSION" -k "$kver"	# back to "added"
		check removed-for-kernel sh -c "[ -z \"\$(find /lib/modules -path '*/updates/*' -name 'bpf_arena.ko*')\" ]"
		BPF_ARENA_RESOLVE_BTFIDS=${BPF_ARENA_RESOLVE_BTFIDS:-$state/rbt/resolve_btfids} \
			timed autoinstall /etc/kernel/postinst.d/dkms "$kver"
		grep -h '^bpf-arena: ' /var/lib/dkms/bpf-arena/$VERSION/$kver/x86_64/log/make.log 2>/dev/null
		run dkms status
		check autoinstall-installed installed
		run modprobe bpf_arena; check modprobe-after-autoinstall test $? = 0
		run smoke root; check smoke-after-autoinstall test $? = 0
	fi
	run rmmod bpf_arena; check rmmod test $? = 0
	timed dkms-remove dkms remove -m bpf-arena -v "$VERSION" --all; check dkms-remove test $? = 0
	run dkms status
	check dkms-status-empty test -z "$(dkms_status)"
	check no-dkms-tree test ! -e /var/lib/dkms/bpf-arena
	left=$(module_files); echo "module files left: ${left:-none}"
	check no-module-files test -z "$left"
	check modinfo-gone sh -c '! modinfo bpf_arena >/dev/null 2>&1'
	run ls -la /lib/modules/$kver/updates 2>&1
	if [ "${DEB_TEST:-1}" = 1 ]; then
		# The .deb path (tests/dkms/guest-deb.sh), on the system the make-install
		# path has just been removed from.
		. "$share/guest-deb.sh"
		deb_install
		echo 3 > "$state/phase"; save
		say "rebooting"
		exit 100
	fi
	save
	;;
3)
	. "$share/guest-deb.sh"
	deb_after_reboot
	save
	;;
esac
echo "@@CHECK-DKMS-DONE passed=$pass failed=$fail@@"
exit 0
