#!/usr/bin/env bash
# Builds a static libbpf >= 1.4 (the libbpf source package of Debian trixie,
# 1.5.x) into cache/libbpf-new/, for tests/arena_globals_test (arena globals,
# ".addr_space.1", which Debian 12's libbpf 1.1 cannot load).
#
# Idempotent: a second run does nothing (cache/libbpf-new/.done).  The system's
# apt configuration is not touched: a private sources list with one deb-src
# line, private lists and caches under cache/libbpf-new/apt/.
#
# Trust chain: apt verifies trixie's InRelease with the archive keys of
# debian-archive-keyring (installed on every Debian 12), then the Sources
# index, then the hashes of the .dsc, .orig.tar and .debian.tar it downloads;
# dpkg-source -x checks the tarballs against the .dsc's hashes.  The .dsc's
# own OpenPGP signature is the maintainer's (debian-keyring, not installed):
# dpkg-source reports it cannot check it, which is fine since apt already
# authenticated the .dsc through the signed archive.
#
# Output: cache/libbpf-new/{include/bpf/*.h,lib64/libbpf.a,VERSION}.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out="$top/cache/libbpf-new"
suite=${LIBBPF_SUITE:-trixie}
mirror=${LIBBPF_MIRROR:-http://deb.debian.org/debian}
log() { printf 'libbpf-new: %s\n' "$*" >&2; }

if [ -f "$out/.done" ] && [ -f "$out/lib64/libbpf.a" ]; then
	log "libbpf $(cat "$out/VERSION") already built in $out"
	exit 0
fi

start=$(date +%s)
for p in libelf-dev zlib1g-dev pkg-config make gcc dpkg-dev xz-utils; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ -n "${missing[*]:-}" ]; then
	log "installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

apt_dir="$out/apt"
src_dir="$out/src"
rm -rf "$apt_dir" "$src_dir" "$out/include" "$out/lib64" "$out/VERSION" "$out/.done"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$src_dir"
echo "deb-src $mirror $suite main" > "$apt_dir/sources.list"
apt_opts=(-o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
	  -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache"
	  -o Dir::State::Status="$apt_dir/status" -o APT::Sandbox::User=root
	  -o Acquire::Languages=none -o Debug::NoLocking=1)
: > "$apt_dir/status"
log "apt-get update ($suite deb-src, private lists)"
apt-get "${apt_opts[@]}" update -qq
ver=$(apt-cache "${apt_opts[@]}" showsrc libbpf | sed -n 's/^Version: //p' | sort -V | tail -n1)
[ -n "$ver" ] || { log "no libbpf source package in $suite"; exit 1; }
log "fetching libbpf $ver source (apt-get source, verified by apt and dpkg-source)"
(cd "$src_dir" && apt-get "${apt_opts[@]}" source -qq --download-only "libbpf=$ver" >/dev/null)
dsc=$(ls "$src_dir"/libbpf_*.dsc)
(cd "$src_dir" && dpkg-source -x "$(basename "$dsc")" libbpf >"$src_dir/dpkg-source.log" 2>&1) ||
	{ cat "$src_dir/dpkg-source.log" >&2; exit 1; }
grep -i 'signature\|warning' "$src_dir/dpkg-source.log" | sed 's/^/libbpf-new: dpkg-source: /' >&2 || true

log "building static libbpf"
make -s -C "$src_dir/libbpf/src" BUILD_STATIC_ONLY=y OBJDIR="$src_dir/obj" \
	PREFIX="$out" LIBDIR="$out/lib64" DESTDIR= -j"$(nproc)" install >"$src_dir/build.log" 2>&1 ||
	{ tail -n 40 "$src_dir/build.log" >&2; exit 1; }
v=$(sed -n 's/^Version: //p' "$out/lib64/pkgconfig/libbpf.pc")
echo "$v" > "$out/VERSION"
touch "$out/.done"
log "built libbpf $v (Debian $ver) in $out/ in $(( $(date +%s) - start )) s"
