#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# dkms/build.sh KERNELVER KERNEL_SOURCE_DIR: DKMS's MAKE[0] for bpf-arena.
#
# Builds bpf_arena.ko in the current directory (the DKMS build directory) with
# module BTF, which stock Debian 12 headers cannot give by themselves (on a
# kernel with BPF arena in tree it builds the inactive stub, without BTF):
#
#  - Kbuild (scripts/Makefile.modfinal) generates module BTF only when the
#    objtree holds a `vmlinux`; Debian's 6.1 headers have none.  This script
#    builds through a private objtree (.kbuild/: symlinks to the headers plus
#    a `vmlinux` holding the kernel's raw BTF, which pahole --btf_base and
#    resolve_btfids -b accept), taken, first found:
#      1. $BPF_ARENA_VMLINUX (a vmlinux ELF or raw BTF file);
#      2. the headers' own vmlinux (Debian's 6.12 headers ship one);
#      3. /sys/kernel/btf/vmlinux, when building for the running kernel;
#      4. the .BTF section of /boot/vmlinuz-KERNELVER (decompressed here).
#    pahole (package dwarves) turns it into module BTF.
#  - resolve_btfids fills in the BTF IDs of the module's kfunc sets.
#    Debian's linux-kbuild-6.1 does not ship it; taken, first found:
#      1. $BPF_ARENA_RESOLVE_BTFIDS (DKMS passes its environment through);
#      2. the headers' tools/bpf/resolve_btfids/resolve_btfids (6.12);
#      3. built now (about 30 s) from /usr/src/linux-source-SERIES.tar.xz
#         (SERIES: 6.1; Debian's linux-source-SERIES package; needs
#         libelf-dev, zlib1g-dev and python3), in a temporary directory: nothing is
#         kept outside DKMS's build directory.
#    A resolve_btfids of another series is not used: 6.12's gives wrong
#    IDs for 6.1 modules.
#
# Without one of them the module still builds, with KCFLAGS
# -DBPF_ARENA_BUILD_BTF=0 (no module BTF) or 1 (module BTF, BTF IDs not
# resolved) instead of 2 (complete), and this script prints why on a line
# starting "bpf-arena: WARNING:" (kept in DKMS's make.log).  BPF programs
# then cannot use the module's kfuncs.
set -euo pipefail
kver=${1:?usage: build.sh KERNELVER KERNEL_SOURCE_DIR}
ksrc=${2:?usage: build.sh KERNELVER KERNEL_SOURCE_DIR}
here=$(pwd)
say() { printf 'bpf-arena: %s\n' "$*"; }
warn() { printf 'bpf-arena: WARNING: %s\n' "$*"; }
series=$(printf '%s\n' "$kver" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p')
boot=${BPF_ARENA_BOOT_DIR:-/boot}
usrsrc=${BPF_ARENA_USR_SRC:-/usr/src}

[ -f "$ksrc/Makefile" ] || { echo "bpf-arena: no kernel headers in $ksrc (install linux-headers-$kver)" >&2; exit 1; }

kb="$here/.kbuild"
tmp=""
cleanup() { [ -z "$tmp" ] || rm -rf "$tmp"; }
trap cleanup EXIT
rm -rf "$kb"
mkdir -p "$kb"
for e in "$ksrc"/* "$ksrc"/.config "$ksrc"/.kernelvariables; do
	[ -e "$e" ] || continue
	[ "$(basename "$e")" = vmlinux ] && continue
	ln -s "$e" "$kb/$(basename "$e")"
done

# Native arena (6.9+, or a backport) ---------------------------------------------
# Kbuild then builds only the inactive stub (module/main.c), which needs no
# module BTF.  The probe is Kbuild's own: BPF_MAP_TYPE_ARENA in the uapi
# bpf.h of the source tree (Debian: the -common headers the Makefile includes).
srctree=$ksrc
if [ ! -f "$srctree/include/uapi/linux/bpf.h" ]; then
	common=$(sed -n 's|^include \(/.*\)/Makefile$|\1|p' "$ksrc/Makefile" | head -n 1)
	[ -z "$common" ] || srctree=$common
fi
if grep -qsw BPF_MAP_TYPE_ARENA "$srctree/include/uapi/linux/bpf.h"; then
	say "kernel $kver has BPF arena in tree: building the inactive stub (it loads and does nothing; BPF_MAP_TYPE_ARENA is the kernel's own)"
	make -C "$kb" M="$here" KERNELRELEASE="$kver" -j"$(nproc)" \
		KCFLAGS="${KCFLAGS:-} -DBPF_ARENA_BUILD_BTF=0" modules
	rm -rf "$kb"
	exit 0
fi

# vmlinux BTF ------------------------------------------------------------------
# extract_btf VMLINUZ OUT: the raw .BTF of a compressed kernel image.
extract_btf() {
	local img=$1 out=$2 magic dec off elf
	tmp=${tmp:-$(mktemp -d)}
	elf="$tmp/vmlinux"
	for magic in xz zstd gzip; do
		case $magic in
		xz) pat='\xfd7zXZ\x00'; dec="xz -dc" ;;
		zstd) pat='\x28\xb5\x2f\xfd'; dec="zstd -dcq" ;;
		gzip) pat='\x1f\x8b\x08'; dec="gzip -dc" ;;
		esac
		command -v "${dec%% *}" >/dev/null || continue
		for off in $(LC_ALL=C grep -aboP "$pat" "$img" 2>/dev/null | cut -d: -f1 | head -n 4); do
			tail -c +$((off + 1)) "$img" | $dec > "$elf" 2>/dev/null || true
			if [ "$(head -c 4 "$elf" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
				objcopy -O binary --only-section=.BTF "$elf" "$out" 2>/dev/null && [ -s "$out" ] && {
					rm -f "$elf"; return 0; }
			fi
		done
	done
	rm -f "$elf" "$out"
	return 1
}

btf_src=""
if [ -n "${BPF_ARENA_VMLINUX:-}" ]; then
	ln -s "$(readlink -f "$BPF_ARENA_VMLINUX")" "$kb/vmlinux"; btf_src=$BPF_ARENA_VMLINUX
elif [ -f "$ksrc/vmlinux" ]; then
	ln -s "$ksrc/vmlinux" "$kb/vmlinux"; btf_src="$ksrc/vmlinux"
elif [ "$kver" = "$(uname -r)" ] && [ -r /sys/kernel/btf/vmlinux ]; then
	cp /sys/kernel/btf/vmlinux "$kb/vmlinux"; btf_src=/sys/kernel/btf/vmlinux
elif [ -r "$boot/vmlinuz-$kver" ] && extract_btf "$boot/vmlinuz-$kver" "$kb/vmlinux"; then
	btf_src="$boot/vmlinuz-$kver (.BTF)"
fi

# Module BTF is made by pahole (package dwarves), which the headers do not pull in.
no_pahole=""
if [ -n "$btf_src" ] && ! command -v "${PAHOLE:-pahole}" >/dev/null; then
	no_pahole=1; btf_src=""
fi

# resolve_btfids ---------------------------------------------------------------
build_resolve_btfids() { # build_resolve_btfids TARBALL: sets rbt
	local tarball=$1 top=linux-source-$series dec
	tmp=${tmp:-$(mktemp -d)}
	say "building resolve_btfids from $tarball"
	command -v python3 >/dev/null || { warn "building resolve_btfids needs python3 (libbpf's headers)"; return 1; }
	case $tarball in
	*.xz) dec="xz -T0 -dc" ;; *.bz2) dec="bzip2 -dc" ;; *) dec="cat" ;;
	esac
	$dec "$tarball" | tar -x -C "$tmp" --wildcards \
		"$top/tools" "$top/scripts" "$top/include/uapi" "$top/include/linux/btf_ids.h" \
		"$top/arch/x86/include/uapi" "$top/arch/x86/include/asm/unistd.h" "$top/Makefile" ||
		return 1
	mkdir -p "$tmp/rbt"
	make -s -C "$tmp/$top/tools/bpf/resolve_btfids" O="$tmp/rbt" -j"$(nproc)" >&2 || return 1
	rm -rf "${tmp:?}/$top"
	rbt="$tmp/rbt/resolve_btfids"
	# Kept only on request (BPF_ARENA_SAVE_RESOLVE_BTFIDS=DIR), e.g. for
	# building many kernels of the series with BPF_ARENA_RESOLVE_BTFIDS.
	if [ -n "${BPF_ARENA_SAVE_RESOLVE_BTFIDS:-}" ]; then
		mkdir -p "$BPF_ARENA_SAVE_RESOLVE_BTFIDS"
		install -m 0755 "$rbt" "$BPF_ARENA_SAVE_RESOLVE_BTFIDS/resolve_btfids"
	fi
}

rbt=""
if [ -n "${BPF_ARENA_RESOLVE_BTFIDS:-}" ]; then
	rbt=$BPF_ARENA_RESOLVE_BTFIDS
elif [ -x "$ksrc/tools/bpf/resolve_btfids/resolve_btfids" ]; then
	rbt="$ksrc/tools/bpf/resolve_btfids/resolve_btfids"
elif [ -n "$btf_src" ]; then
	for t in "$usrsrc/linux-source-$series.tar.xz" "$usrsrc/linux-source-$series.tar.bz2"; do
		[ -f "$t" ] || continue
		build_resolve_btfids "$t" || { rbt=""; warn "building resolve_btfids from $t failed"; }
		break
	done
fi

level=2
args=()
if [ -n "$no_pahole" ]; then
	level=0
	warn "pahole is not installed: building without module BTF; BPF kfuncs of bpf_arena" \
		"will be unavailable. Fix: apt-get install dwarves, then:" \
		"dkms install bpf-arena/<version> -k $kver --force"
elif [ -z "$btf_src" ]; then
	level=0
	warn "no BTF for kernel $kver (not running it, and no readable /boot/vmlinuz-$kver):" \
		"building without module BTF; BPF kfuncs of bpf_arena will be unavailable." \
		"Fix: boot $kver and run: dkms install bpf-arena/<version> -k $kver --force"
elif [ -z "$rbt" ]; then
	level=1
	args+=(RESOLVE_BTFIDS=true)
	warn "no resolve_btfids for $kver (linux-kbuild-$series has none): module BTF IDs" \
		"stay unresolved; BPF kfuncs of bpf_arena will be unavailable." \
		"Fix: apt-get install linux-source-$series libelf-dev zlib1g-dev python3, then:" \
		"dkms install bpf-arena/<version> -k $kver --force"
elif [ "$rbt" != "$ksrc/tools/bpf/resolve_btfids/resolve_btfids" ]; then
	args+=(RESOLVE_BTFIDS="$rbt")
fi
say "kernel $kver; vmlinux BTF: ${btf_src:-none}; resolve_btfids: ${rbt:-none}; BTF level $level"

if [ $level = 0 ]; then rm -f "$kb/vmlinux"; fi
make -C "$kb" M="$here" KERNELRELEASE="$kver" -j"$(nproc)" \
	KCFLAGS="${KCFLAGS:-} -DBPF_ARENA_BUILD_BTF=$level" "${args[@]}" modules

# What came out: bpf_arena.ko with a .BTF section (levels 1 and 2).
if [ $level -gt 0 ]; then
	if readelf -S -W bpf_arena.ko | grep -q ' \.BTF '; then
		say "module BTF: yes"
	else
		warn "module BTF was expected but bpf_arena.ko has no .BTF section"
	fi
fi
rm -rf "$kb"
