#!/usr/bin/env bash
# Installs every build/test dependency and fetches the stock Debian kernels the
# project is tested on into cache/.  Idempotent: a second run on a set-up machine
# downloads nothing.  REFRESH=1 re-resolves the kernel versions from the archive.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cache="$top/cache"
mkdir -p "$cache/debs"
log() { printf 'setup: %s\n' "$*" >&2; }

# Host tools, by Debian package name.
pkgs=(gcc make libc6-dev clang-14 clang-19 llvm libbpf-dev bpftool dwarves
      busybox-static qemu-system-x86 kmod cpio dkms xz-utils zstd libelf-dev
      zlib1g-dev libcap-dev bc flex bison python3 file)
apt_updated=0
has_candidate() { apt-cache policy "$1" 2>/dev/null | grep 'Candidate: [0-9]' >/dev/null; }
apt_update() { [ $apt_updated = 1 ] || { log "apt-get update"; apt-get update -qq; apt_updated=1; }; }
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep 'install ok installed' >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	apt_update
	log "installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Kernel versions: the bookworm 6.1 ABI that linux-image-amd64 points at, and the
# newest 6.12 +deb12 image that also has headers.
env_file="$cache/kernels.env"
if [ ! -f "$env_file" ] || [ "${REFRESH:-0}" = 1 ]; then
	apt_update
	k61=$(apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: linux-image-\(6\.1\.[^ ]*-amd64\)$/\1/p' | head -n1)
	[ -n "$k61" ] || { log "cannot resolve the 6.1 kernel from linux-image-amd64"; exit 1; }
	k612=$(apt-cache pkgnames linux-headers-6.12. | sed -n 's/^linux-headers-\(6\.12\.[0-9]*+deb12-amd64\)$/\1/p' | sort -V |
		while read -r v; do
			if has_candidate "linux-image-$v-unsigned" || has_candidate "linux-image-$v"; then echo "$v"; fi
		done | tail -n1)
	[ -n "$k612" ] || { log "cannot find a 6.12 +deb12 kernel with headers"; exit 1; }
	printf 'K61=%s\nK612=%s\n' "$k61" "$k612" > "$env_file.tmp"
	mv "$env_file.tmp" "$env_file"
fi
# shellcheck disable=SC1090
. "$env_file"

# Headers are installed with apt (they live in /usr/src, managed by dpkg).
for k in "$K61" "$K612"; do
	if ! dpkg-query -W -f='${Status}' "linux-headers-$k" 2>/dev/null | grep 'install ok installed' >/dev/null; then
		apt_update
		log "installing linux-headers-$k"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "linux-headers-$k" >/dev/null
	fi
done

# Download a package into cache/debs once; sets $deb to the .deb path.
fetch_deb() {
	local name=$1
	deb=$(ls "$cache/debs/${name}_"*.deb 2>/dev/null | head -n1 || true)
	if [ -z "$deb" ]; then
		apt_update
		log "downloading $name"
		(cd "$cache/debs" && apt-get download -qq -o APT::Sandbox::User=root "$name" >/dev/null)
		deb=$(ls "$cache/debs/${name}_"*.deb | head -n1)
	fi
}

# Kernel images: extracted whole (boot/ and lib/modules/), modules indexed.
for k in "$K61" "$K612"; do
	root="$cache/root-$k"
	[ -f "$root/.done" ] && continue
	if [ -n "$(ls "$cache/debs/linux-image-${k}_"*.deb 2>/dev/null)" ] || has_candidate "linux-image-$k"; then
		fetch_deb "linux-image-$k"
	else
		fetch_deb "linux-image-$k-unsigned"
	fi
	rm -rf "$root"; mkdir -p "$root"
	log "extracting $(basename "$deb")"
	dpkg-deb -x "$deb" "$root"
	depmod -b "$root" "$k"
	touch "$root/.done"
done

# linux-source-6.1: kselftest_harness.h, checkpatch.pl, extract-vmlinux and the
# resolve_btfids sources (linux-kbuild-6.1 ships no resolve_btfids).
src="$cache/linux-source-6.1"
if [ ! -f "$src/.done" ]; then
	fetch_deb linux-source-6.1
	tmp="$cache/tmp-src"; rm -rf "$tmp" "$src"; mkdir -p "$tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" --wildcards './usr/src/linux-source-6.1.tar.xz'
	mkdir -p "$src"
	log "extracting linux-source-6.1 (partial)"
	tar -xJf "$tmp/usr/src/linux-source-6.1.tar.xz" -C "$src" --strip-components=1 \
		linux-source-6.1/tools linux-source-6.1/scripts linux-source-6.1/include/uapi \
		linux-source-6.1/include/linux/btf_ids.h linux-source-6.1/arch/x86/include/uapi \
		linux-source-6.1/arch/x86/include/asm/unistd.h linux-source-6.1/Makefile
	rm -rf "$tmp"
	touch "$src/.done"
fi

rbt="$cache/tools/resolve_btfids-6.1"
if [ ! -x "$rbt/resolve_btfids" ]; then
	log "building resolve_btfids"
	mkdir -p "$rbt"
	make -s -C "$src/tools/bpf/resolve_btfids" O="$rbt" -j"$(nproc)" >/dev/null
fi

# Private kbuild objtrees: the installed headers plus a vmlinux, so Kbuild's own
# module-BTF step runs (6.1's headers ship no vmlinux; 6.12's do).
for k in "$K61" "$K612"; do
	kb="$cache/kbuild/$k"
	[ -f "$kb/.done" ] && continue
	hdr="/usr/src/linux-headers-$k"
	rm -rf "$kb"; mkdir -p "$kb"
	for e in "$hdr"/* "$hdr"/.config "$hdr"/.kernelvariables; do
		[ "$(basename "$e")" = vmlinux ] && continue
		ln -s "$e" "$kb/$(basename "$e")"
	done
	if [ -f "$hdr/vmlinux" ]; then
		ln -s "$hdr/vmlinux" "$kb/vmlinux"
	else
		log "extracting vmlinux of $k"
		"$src/scripts/extract-vmlinux" "$cache/root-$k/boot/vmlinuz-$k" > "$kb/vmlinux"
	fi
	touch "$kb/.done"
done
# make deb's tools (debhelper, dh-dkms, lintian): packaging/setup.sh, when one is missing.
if [ -x "$top/packaging/setup.sh" ] && ! { command -v dh && command -v dh_dkms && command -v lintian; } >/dev/null; then
	"$top/packaging/setup.sh"
fi
log "ready: 6.1=$K61 6.12=$K612"
