#!/usr/bin/env bash
# `make check-dkms`: installs bpf-arena with DKMS on a real Debian 12 system
# and checks it end to end.  The system is a debootstrapped bookworm disk
# image (tests/dkms/image.sh, cached in cache/dkms-image/, rebuilt when its recipe
# changes) with the stock linux-image-amd64, linux-headers-amd64, dkms and
# build-essential, booted in QEMU TCG with -snapshot (the image stays
# pristine).  The guest runs tests/dkms/guest.sh from a 9p share at every boot
# (boot 1: install and smoke test, reboot; boot 2: module back after reboot,
# smoke test, AUTOINSTALL, dkms remove --all leaves nothing; then the .debs
# of `make deb` installed with apt-get, smoke test and demo, reboot; boot 3:
# module back, kernel upgrade rebuild, apt-get remove and purge leave nothing:
# tests/dkms/guest-deb.sh).
#
# Environment: CHECK_DKMS_TIMEOUT (s, default 5400) for the whole QEMU run;
# CHECK_DKMS_DEB=0 skips the .deb path (and `make deb`); CHECK_DKMS_K612=0
# skips its upgrade to the 6.12 kernel;
# CHECK_DKMS_QUICK=1 gives the guest the host's resolve_btfids (built by
# setup.sh from linux-source-6.1) instead of letting the DKMS build make one
# from the guest's linux-source-6.1 (that path is then not tested);
# CHECK_DKMS_AUTOINSTALL=0 skips the rebuilds after the first build of each
# path (AUTOINSTALL through the kernel hook in boots 2 and 3, the postinst
# run again with 6.12 installed); CHECK_DKMS_GROUP,
# CHECK_DKMS_MODE for the udev rule (default bpf, 0660).
# Ends with "check-dkms: N passed, M failed" and the times; exit 0 iff all passed.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
version=$(cat "$top/VERSION")
timeout=${CHECK_DKMS_TIMEOUT:-5400}
group=${CHECK_DKMS_GROUP:-bpf}
mode=${CHECK_DKMS_MODE:-0660}
t_start=$(date +%s)
log() { printf 'check-dkms: %s\n' "$*" >&2; }

tarball="$top/build/dist/bpf-arena-$version.tar.gz"
[ -f "$tarball" ] || make -s -C "$top" dist >&2

# 1. The disk image (cached).
t0=$(date +%s)
img=$("$top/tests/dkms/image.sh" "$top/cache/dkms-image")
t_image=$(( $(date +%s) - t0 ))
kver=$(cat "$img/kver")
log "image $img/disk.raw, kernel $kver (${t_image}s)"

# 2. The share: the dist tarball, the staged library + udev rule +
#    modules-load.d entry, the smoke test source and the guest script.
work="$top/build/check-dkms"
rm -rf "$work"; mkdir -p "$work/share"
share="$work/share"
cp "$tarball" "$share/"
make -s -C "$top" install-lib install-udev DESTDIR="$share/stage" PREFIX=/usr/local \
	BPF_ARENA_GROUP="$group" BPF_ARENA_MODE="$mode" BPF_ARENA_AUTOLOAD=yes >&2
cp "$top/tests/dkms/smoke.c" "$share/smoke.c"
install -m 0755 "$top/tests/dkms/guest.sh" "$share/guest.sh"
cp "$top/tests/dkms/guest-deb.sh" "$share/guest-deb.sh"
deb_test=${CHECK_DKMS_DEB:-1}
if [ "$deb_test" = 1 ]; then
	# The packages `make deb` built (make check-dkms builds them first).
	mkdir -p "$share/debs"
	for p in bpf-arena-dkms libbpfarena0 libbpfarena-dev bpf-arena-tools; do
		f=$(ls "$top/build/deb/${p}_${version}_"*.deb 2>/dev/null | head -n1)
		[ -n "$f" ] || { log "no $p .deb in build/deb: run make deb"; exit 1; }
		cp "$f" "$share/debs/"
	done
	if [ "${CHECK_DKMS_K612:-1}" = 1 ]; then
		# A kernel upgrade to 6.12 (native arena) in the guest: the stock
		# image and headers, downloaded once into cache/dkms-debs/.
		# shellcheck disable=SC1091
		. "$top/cache/kernels.env"
		kdebs="$top/cache/dkms-debs"; mkdir -p "$kdebs" "$share/k612"
		for p in "linux-image-$K612" "linux-headers-$K612" "linux-headers-${K612%-amd64}-common" \
			 "linux-kbuild-${K612%-amd64}"; do
			f=$(ls "$kdebs/${p}_"*.deb "$top/cache/debs/${p}_"*.deb 2>/dev/null | head -n1 || true)
			if [ -z "$f" ]; then
				log "downloading $p"
				(cd "$kdebs" && apt-get download -qq -o APT::Sandbox::User=root "$p" >/dev/null) ||
					{ log "apt-get download $p failed"; exit 1; }
				f=$(ls "$kdebs/${p}_"*.deb | head -n1)
			fi
			cp "$f" "$share/k612/"
		done
		k612_env=$K612
	fi
fi
quick=${CHECK_DKMS_QUICK:-0}
if [ "$quick" = 1 ]; then
	# The resolve_btfids setup.sh built from linux-source-6.1 on this (Debian 12)
	# host: the guest then skips building it (the slowest part under TCG).
	install -m 0755 "$top/cache/tools/resolve_btfids-6.1/resolve_btfids" "$share/resolve_btfids"
fi
printf 'VERSION=%s\nGROUP=%s\nMODE=%s\nAUTOINSTALL_TEST=%s\nQUICK=%s\nDEB_TEST=%s\nK612=%s\n' "$version" "$group" "$mode" \
	"${CHECK_DKMS_AUTOINSTALL:-1}" "$quick" "$deb_test" "${k612_env:-}" > "$share/guest.env"

# 3. Boot it: console on ttyS0, the guest script's output on ttyS1.  The
#    guest reboots once by itself (QEMU resets and boots the same kernel).
qpid=""
cleanup() {
	if [ -n "$qpid" ] && kill -0 "$qpid" 2>/dev/null; then kill "$qpid" 2>/dev/null || true; fi
	if [ -f "$work/qemu.pid" ]; then
		local p; p=$(cat "$work/qemu.pid" 2>/dev/null || true)
		if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then kill -9 "$p" 2>/dev/null || true; fi
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
: > "$work/console.log"; : > "$work/out.log"
t0=$(date +%s)
timeout -k 5 "$timeout" qemu-system-x86_64 -accel tcg -cpu max -m 2G -smp 2 \
	-nographic -monitor none -snapshot \
	-drive "file=$img/disk.raw,format=raw,if=virtio" \
	-kernel "$img/vmlinuz" -initrd "$img/initrd.img" \
	-append "root=/dev/vda rw console=ttyS0 panic=-1 systemd.show_status=0" \
	-serial "file:$work/console.log" -serial "file:$work/out.log" \
	-virtfs "local,path=$share,mount_tag=host0,security_model=none,id=host0" \
	-pidfile "$work/qemu.pid" </dev/null >"$work/qemu.stdout" 2>&1 &
qpid=$!
tail -n +1 -f --pid=$qpid "$work/out.log" 2>/dev/null | tr -d '\r' &
tailpid=$!
set +e
wait $qpid; qrc=$?
set -e
wait $tailpid 2>/dev/null || true
qpid=""
t_vm=$(( $(date +%s) - t0 ))

tr -d '\r' < "$work/out.log" > "$work/out.txt"
tr -d '\r' < "$work/console.log" > "$work/console.txt"
pass=$(grep -ac '^@@CHECK [^ ]* ok@@' "$work/out.txt" || true)
fail=$(grep -ac '^@@CHECK [^ ]* FAIL@@' "$work/out.txt" || true)
boots=$(grep -ac '^@@CHECK-DKMS-BOOT' "$work/out.txt" || true)
status=0
if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	log "QEMU timed out after ${timeout}s"; status=124; fail=$((fail + 1))
fi
want_boots=$((2 + deb_test))
if ! grep -aq '^@@CHECK-DKMS-DONE' "$work/out.txt" || [ "$boots" -lt $want_boots ]; then
	log "the guest did not finish all $want_boots boots (boots seen: $boots; qemu rc=$qrc)"
	cat "$work/qemu.stdout" >&2 || true
	tail -n 40 "$work/console.txt" >&2
	fail=$((fail + 1))
fi
bad='BUG:|WARNING:|Oops|general protection|KASAN|UBSAN|RCU stall|rcu_sched self-detected stall|Kernel panic|kernel BUG|blocked for more than|refcount_t:'
if grep -aEn "$bad" "$work/console.txt" >&2; then
	log "the guest kernel logged a BUG/WARNING/Oops line (above)"; fail=$((fail + 1))
fi
cp "$work/console.txt" "$work/last-console.log"
echo "----- times -----"
grep -a '^@@TIME' "$work/out.txt" | sed 's/^@@TIME \(.*\)@@$/guest \1/' | tr -s ' ' | sed 's/ \([0-9.]*s\)$/: \1/'
echo "image: ${t_image}s, VM (both boots): ${t_vm}s, total: $(( $(date +%s) - t_start ))s"
echo "check-dkms: $pass passed, $fail failed (log: build/check-dkms/out.txt, console: build/check-dkms/console.txt)"
[ "$fail" -eq 0 ] && [ $status -eq 0 ]
