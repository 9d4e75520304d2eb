#!/usr/bin/env bash
# scripts/debug-kernel.sh [build|path|kbuild|kver]
#
# The debug kernel of `make check-debug`: Debian's linux-source-6.1 (the same
# 6.1.x as the stock image the suite boots), Debian's own config for that image
# reduced to what the QEMU guest needs, plus the sanitizers (KASAN inline,
# lockdep/PROVE_LOCKING/PROVE_RCU, DEBUG_ATOMIC_SLEEP, DEBUG_VM, DEBUG_LIST,
# KFENCE, kmemleak, SLUB_DEBUG, failslab/fail_page_alloc) and BTF (vmlinux and
# module BTF, so the module and its kfuncs work as on the stock kernel).
#
#   build   build once per machine into cache/debug-kernel/ (does nothing when
#           the cached build matches this script); long: see README "Testing"
#   path    print the bzImage path;  kbuild: the tree modules build against
#   kver    print the kernel release (uname -r in the guest)
#
# Everything the guest loads from the stock image as modules (9p share,
# virtio-pci) is built in, so the runner needs no stock modules for it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dk="$top/cache/debug-kernel"
src="$dk/linux-source-6.1"
obj="$dk/build"
. "$top/cache/kernels.env"
deb=$(ls "$top"/cache/debs/linux-source-6.1_*_all.deb 2>/dev/null | tail -n1 || true)
stock_config="$top/cache/root-$K61/boot/config-$K61"

# Debug options on top of Debian's config.  y/n/"string"/number values.
# Not here: FAULT_INJECTION_STACKTRACE_FILTER (6.1: depends on !X86_64; fault
# injection is targeted with the per-task filter instead), MODULE_SIG=n (the
# lockdown LSM selects it; unsigned modules load, tainting, as on the stock image).
debug_options() {
	cat <<'EOF'
KASAN=y
KASAN_GENERIC=y
KASAN_INLINE=y
KASAN_OUTLINE=n
KASAN_VMALLOC=n
KASAN_STACK=y
DEBUG_KERNEL=y
LOCKDEP=y
PROVE_LOCKING=y
PROVE_RCU=y
DEBUG_LOCK_ALLOC=y
DEBUG_SPINLOCK=y
DEBUG_MUTEXES=y
DEBUG_RWSEMS=y
DEBUG_ATOMIC_SLEEP=y
DEBUG_VM=y
DEBUG_LIST=y
KFENCE=y
KFENCE_SAMPLE_INTERVAL=100
DEBUG_KMEMLEAK=y
DEBUG_KMEMLEAK_DEFAULT_OFF=n
DEBUG_KMEMLEAK_AUTO_SCAN=n
DEBUG_KMEMLEAK_MEM_POOL_SIZE=65536
SLUB_DEBUG=y
FAULT_INJECTION=y
FAILSLAB=y
FAIL_PAGE_ALLOC=y
FAULT_INJECTION_DEBUG_FS=y
FUNCTION_ERROR_INJECTION=y
FAIL_FUNCTION=y
DEBUG_FS=y
DEBUG_INFO=y
DEBUG_INFO_BTF=y
DEBUG_INFO_BTF_MODULES=y
DEBUG_INFO_REDUCED=n
DEBUG_INFO_SPLIT=n
RCU_CPU_STALL_TIMEOUT=60
MODULE_SIG_ALL=n
SYSTEM_TRUSTED_KEYS=""
LOCALVERSION="-bpfarena-debug"
LOCALVERSION_AUTO=n
EOF
	# What a QEMU guest (serial console, virtio-pci, 9p, initramfs) never
	# uses, off to shorten the build (hypervisors, IOMMUs, LSMs but lockdown,
	# firmware and display, radios, USB/HID, power management, IPv6,
	# netfilter, qdiscs).  Nothing the module or the tests touch.
	local o
	for o in XEN HYPERV AMD_IOMMU INTEL_IOMMU SECURITY_SELINUX SECURITY_TOMOYO \
		SECURITY_APPARMOR IMA EVM INTEGRITY DRM FB EFI MFD_INTEL_LPSS WLAN WIRELESS \
		BT NFC USB_SUPPORT HID INPUT_JOYSTICK INPUT_TOUCHSCREEN INPUT_MISC \
		VIRTUALIZATION PCCARD KEXEC KEXEC_FILE CRASH_DUMP HIBERNATION SUSPEND \
		MICROCODE MEMORY_HOTPLUG ACPI_APEI X86_SGX NETLABEL MEDIA_SUPPORT SOUND \
		I2C SPI THERMAL_HWMON HWMON X86_INTEL_LPSS IPV6 NETFILTER XFRM_USER \
		NET_SCHED RFKILL INFINIBAND VFIO AGP FRAMEBUFFER_CONSOLE LOGO; do
		echo "$o=n"
	done
}

# The cache key: the config fragment, the source package and the recipe
# version (bump it when the build steps change).
recipe=1
key=$( { debug_options; basename "${deb:-none}"; echo "$recipe"; } | sha256sum | cut -c1-16)

apply_options() { # apply_options CONFIG
	local cfg=$1 line name val
	while read -r line; do
		name=${line%%=*}; val=${line#*=}
		case "$val" in
		y) "$src/scripts/config" --file "$cfg" --enable "$name" ;;
		n) "$src/scripts/config" --file "$cfg" --disable "$name" ;;
		\"*) val=${val#\"}; val=${val%\"}; "$src/scripts/config" --file "$cfg" --set-str "$name" "$val" ;;
		*) "$src/scripts/config" --file "$cfg" --set-val "$name" "$val" ;;
		esac
	done < <(debug_options)
}

check_options() { # every requested option must have survived olddefconfig
	local cfg=$1 line name val bad=0
	while read -r line; do
		name=${line%%=*}; val=${line#*=}
		case "$val" in
		n) if grep -q "^CONFIG_$name=" "$cfg"; then echo "debug-kernel: CONFIG_$name still set" >&2; bad=1; fi ;;
		*) if ! grep -qx "CONFIG_$name=$val" "$cfg"; then
			echo "debug-kernel: CONFIG_$name=$val did not stick: $(grep "CONFIG_$name[= ]" "$cfg" || echo unset)" >&2; bad=1
		   fi ;;
		esac
	done < <(debug_options)
	return $bad
}

build() {
	if [ -f "$dk/built.$key" ] && [ -f "$obj/arch/x86/boot/bzImage" ]; then
		echo "debug-kernel: cached: $obj/arch/x86/boot/bzImage ($(kver))"
		return 0
	fi
	[ -n "$deb" ] || { echo "debug-kernel: no linux-source-6.1 .deb in cache/debs (run make setup)" >&2; exit 1; }
	[ -f "$stock_config" ] || { echo "debug-kernel: no $stock_config (run make setup)" >&2; exit 1; }
	mkdir -p "$dk"
	rm -f "$dk"/built.*
	local t0; t0=$(date +%s)
	if [ ! -f "$src/.extracted" ]; then
		echo "debug-kernel: extracting $(basename "$deb")"
		rm -rf "$src" "$dk/deb"
		dpkg-deb -x "$deb" "$dk/deb"
		mkdir -p "$src"
		tar -xJf "$dk"/deb/usr/src/linux-source-6.1.tar.xz -C "$src" --strip-components=1
		rm -rf "$dk/deb"
		touch "$src/.extracted"
	fi
	mkdir -p "$obj"
	cp "$stock_config" "$obj/.config"
	# localmodconfig keeps only the modules in this list (the guest's: the 9p
	# share over virtio-pci, from the stock image's modules.dep), then they
	# become built-in.
	{
		echo "Module                  Size  Used by"
		"$top/tests/vm/modules-closure" "$top/cache/root-$K61/lib/modules/$K61" 9p 9pnet_virtio virtio_pci |
			while read -r rel; do n=$(basename "$rel"); echo "${n%%.ko*} 16384 0"; done
	} > "$dk/lsmod"
	# (yes ends on SIGPIPE: its status is not the pipeline's.)
	{ yes '' || true; } | make -s -C "$src" O="$obj" LSMOD="$dk/lsmod" localmodconfig \
		>"$dk/localmodconfig.log" 2>&1 || { cat "$dk/localmodconfig.log" >&2; exit 1; }
	sed -i 's/=m$/=y/' "$obj/.config"
	apply_options "$obj/.config"
	make -s -C "$src" O="$obj" olddefconfig
	check_options "$obj/.config"
	echo "debug-kernel: building $(kver) in $obj (log: this command's output)"
	make -C "$src" O="$obj" -j"${JOBS:-$(( $(nproc) + 1 ))}" bzImage modules
	# The modules' build tree: the object dir with its source link is a full
	# kbuild tree (scripts, Module.symvers, vmlinux for module BTF, resolve_btfids).
	test -x "$obj/tools/bpf/resolve_btfids/resolve_btfids"
	test -f "$obj/vmlinux"
	local t1; t1=$(date +%s)
	echo "$(( t1 - t0 )) s on $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the end, $(date -u +%FT%TZ)" > "$dk/build-time"
	touch "$dk/built.$key"
	echo "debug-kernel: built $(kver) in $(( (t1 - t0) / 60 )) min"
}

kver() { cat "$obj/include/config/kernel.release" 2>/dev/null || echo "6.1-bpfarena-debug"; }

case "${1:-build}" in
build) build ;;
path) echo "$obj/arch/x86/boot/bzImage" ;;
kbuild) echo "$obj" ;;
kver) kver ;;
key) echo "$key" ;;
*) sed -n '2,17p' "$0" >&2; exit 2 ;;
esac
