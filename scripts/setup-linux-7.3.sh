#!/usr/bin/env bash
# Fetches Linux 7.3 from Debian trixie-backports into cache/linux-7.3/ for the
# upstream loop selftests (tests/upstream/v7.3, `make upstream-loops`):
#   - linux-image-7.3.4+deb13-amd64 (or its -unsigned variant) and the
#     packages of that kernel it depends on (linux-binary-, linux-modules-,
#     linux-base-7.3.4+deb13-amd64), unpacked into
#     cache/linux-7.3/root (boot/vmlinuz-KVER, lib/modules/KVER, indexed with
#     depmod): the reference kernel `tests/vm/run --kernel 7.3` boots;
#   - linux-source-7.3, of which only tools/testing/selftests/bpf,
#     tools/include/linux/filter.h (some selftests include it),
#     include/uapi/linux and scripts/extract-vmlinux are unpacked into
#     cache/linux-7.3/src (the vendored selftests are checked against it);
#   - cache/linux-7.3/vmlinux (extracted from the vmlinuz with 7.3's own
#     scripts/extract-vmlinux) and cache/linux-7.3/vmlinux.h (its BTF dumped
#     as C by bookworm-backports' bpftool 7.5): the selftests' vmlinux.h.
# cache/linux-7.3/env records KVER73 and the package versions.
#
# Idempotent: does nothing when cache/linux-7.3/.done exists; REFRESH=1 redoes
# it.  The system's apt configuration is not touched: a private sources list,
# lists, cache and empty dpkg status under cache/linux-7.3/apt resolve and
# download the packages (apt checks trixie-backports' InRelease with
# debian-archive-keyring, then each .deb's hash); dpkg-deb -x unpacks them.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir="$top/cache/linux-7.3"
suite=${L73_SUITE:-trixie-backports}
mirror=${L73_MIRROR:-http://deb.debian.org/debian}
kver=${L73_KVER:-7.3.4+deb13-amd64}
log() { printf 'setup-linux-7.3: %s\n' "$*" >&2; }

if [ -f "$dir/.done" ] && [ "${REFRESH:-0}" != 1 ]; then
	exit 0
fi
start=$(date +%s)
# bpftool 7.5 (dumps 7.3's BTF; bookworm's 7.1 may not know its newer kinds)
"$top/scripts/setup-backports.sh"
bpftool="$top/cache/backports/root/usr/sbin/bpftool"

apt="$dir/apt"
rm -rf "$dir/root" "$dir/src" "$dir/vmlinux" "$dir/vmlinux.h" "$dir/env" "$dir/.done" "$dir/VERSIONS.tmp"
mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/debs" "$apt/etc/preferences.d"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" > "$apt/sources.list"
: > "$apt/status"
aptopt=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
	-o Dir::Etc::Preferences=/nonexistent -o Dir::Etc::PreferencesParts="$apt/etc/preferences.d"
	-o Dir::State="$apt" -o Dir::State::Lists="$apt/lists" -o Dir::State::status="$apt/status"
	-o Dir::Cache="$apt" -o Dir::Cache::archives="$apt/archives"
	-o APT::Sandbox::User=root -o Debug::NoLocking=1 -o APT::Architecture=amd64
	-o APT::Architectures::=amd64 -o Acquire::Languages=none)
log "apt-get update ($suite, private lists under $apt)"
apt-get "${aptopt[@]}" update -qq >&2

# The highest version of PKG in the suite, or nothing.
version() {
	apt-cache "${aptopt[@]}" madison "$1" 2>/dev/null | awk -F'|' -v s="$suite" \
		'$3 ~ s { gsub(/ /, "", $2); print $2 }' | sort -V | tail -n1
}
img=linux-image-$kver
vimg=$(version "$img")
if [ -z "$vimg" ]; then
	img=linux-image-$kver-unsigned
	vimg=$(version "$img")
fi
[ -n "$vimg" ] || { log "neither linux-image-$kver nor its -unsigned variant is in $suite"; exit 1; }
src=linux-source-7.3
vsrc=$(version "$src")
[ -n "$vsrc" ] || { log "no $src in $suite"; exit 1; }

# A .deb already downloaded (a re-run after a failed unpack) is kept.
fetch() { # fetch PKG VERSION: sets $deb
	deb=$(ls "$apt/debs/${1}_"*.deb 2>/dev/null | head -n1 || true)
	if [ -z "$deb" ]; then
		log "apt-get download $1=$2"
		(cd "$apt/debs" && apt-get "${aptopt[@]}" download -qq "$1=$2" >/dev/null)
		deb=$(ls "$apt/debs/${1}_"*.deb | head -n1)
	fi
}

# 7.3's linux-image-KVER is a metapackage: the vmlinuz is in linux-binary-KVER,
# the modules in linux-modules-KVER, config and System.map in linux-base-KVER.
# Every package of this kernel it depends on (names with KVER) is unpacked.
mapfile -t parts < <(apt-cache "${aptopt[@]}" depends "$img=$vimg" 2>/dev/null |
	sed -n 's/^ *\(Pre\)\{0,1\}Depends: \([^ <>|]*\)$/\2/p' | grep -F -- "$kver" | sort -u)
root="$dir/root.tmp"
rm -rf "$root"; mkdir -p "$root"
for p in "$img" "${parts[@]}"; do
	v=$(version "$p")
	[ -n "$v" ] || { log "no $p in $suite"; exit 1; }
	fetch "$p" "$v"
	log "unpacking $(basename "$deb")"
	dpkg-deb -x "$deb" "$root"
	echo "$p $v" >> "$dir/VERSIONS.tmp"
done
# trixie installs into /usr (usrmerge): tests/vm/run reads ROOT/lib/modules.
if [ ! -e "$root/lib" ]; then ln -s usr/lib "$root/lib"; fi
# The image is in /usr/lib/modules/KVER/vmlinuz (and config, System.map next
# to it); tests/vm/run boots ROOT/boot/vmlinuz-KVER, as for 6.1 and 6.12.
if [ ! -e "$root/boot/vmlinuz-$kver" ] && [ -f "$root/lib/modules/$kver/vmlinuz" ]; then
	mkdir -p "$root/boot"
	for f in vmlinuz config System.map; do
		if [ -f "$root/lib/modules/$kver/$f" ]; then
			ln -s "../usr/lib/modules/$kver/$f" "$root/boot/$f-$kver"
		fi
	done
fi
[ -f "$root/boot/vmlinuz-$kver" ] || { log "$img has no boot/vmlinuz-$kver"; exit 1; }
[ -d "$root/lib/modules/$kver" ] || { log "$img has no lib/modules/$kver"; exit 1; }
depmod -b "$root" "$kver"
mv "$root" "$dir/root"

fetch "$src" "$vsrc"
log "unpacking the selftests and uapi headers of $(basename "$deb")"
tmp="$dir/src.tmp"
rm -rf "$tmp"; mkdir -p "$tmp"
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" --wildcards './usr/src/linux-source-7.3.tar.*'
tarball=$(ls "$tmp"/usr/src/linux-source-7.3.tar.*)
mkdir -p "$tmp/tree"
tar -xf "$tarball" -C "$tmp/tree" --strip-components=1 \
	linux-source-7.3/tools/testing/selftests/bpf linux-source-7.3/include/uapi/linux \
	linux-source-7.3/scripts/extract-vmlinux linux-source-7.3/tools/include/linux/filter.h
rm -rf "$dir/src"; mv "$tmp/tree" "$dir/src"; rm -rf "$tmp"

log "extracting vmlinux from vmlinuz-$kver and dumping its BTF"
"$dir/src/scripts/extract-vmlinux" "$dir/root/boot/vmlinuz-$kver" > "$dir/vmlinux.tmp"
mv "$dir/vmlinux.tmp" "$dir/vmlinux"
"$bpftool" btf dump file "$dir/vmlinux" format c > "$dir/vmlinux.h.tmp"
mv "$dir/vmlinux.h.tmp" "$dir/vmlinux.h"

echo "$src $vsrc" >> "$dir/VERSIONS.tmp"
{ echo "KVER73=$kver"; sed 's/^/# /' "$dir/VERSIONS.tmp"; } > "$dir/env"
rm -f "$dir/VERSIONS.tmp"
# The downloaded debs are kept (re-vendoring checks against them); the lists are not.
rm -rf "$apt/lists" "$apt/archives" "$apt/pkgcache.bin" "$apt/srcpkgcache.bin"
touch "$dir/.done"
log "ready: $img $vimg, $src $vsrc in $dir ($(( $(date +%s) - start )) s)"
