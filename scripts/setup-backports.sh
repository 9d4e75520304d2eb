#!/usr/bin/env bash
# Fetches Debian bookworm-backports' libbpf (libbpf-dev, libbpf1: 1.4.x) and
# bpftool (7.5) with apt-get download and unpacks them into cache/backports/
# (called by scripts/setup.sh).  These are the packages the README tells users
# to install (`apt install -t bookworm-backports libbpf-dev bpftool`); the
# tests build and link against exactly them, while bookworm's libbpf 1.1 and
# bpftool 7.1 stay installed in /usr and keep being tested too.
#
# Idempotent: a second run does nothing (cache/backports/.done holds the
# versions).  REFRESH=1 re-resolves the versions from the archive.
#
# The system's apt configuration is not touched: when bookworm-backports is
# not among the configured sources, a private sources list, lists and cache
# under cache/backports/apt/ are used.  Trust chain: apt checks the suite's
# InRelease with debian-archive-keyring, then the Packages index, then each
# .deb's hash (apt-get download verifies it).
#
# Output (the paths tests/progs/progs.mk uses):
#   cache/backports/root/usr/include/bpf/*.h
#   cache/backports/root/usr/lib/x86_64-linux-gnu/libbpf.{a,so*}
#   cache/backports/root/usr/sbin/bpftool     (libbpf is linked in statically)
#   cache/backports/VERSIONS                  ("package version" lines)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out="$top/cache/backports"
suite=${BPO_SUITE:-bookworm-backports}
mirror=${BPO_MIRROR:-http://deb.debian.org/debian}
pkgs=(libbpf-dev libbpf1 bpftool)
log() { printf 'setup-backports: %s\n' "$*" >&2; }

if [ -f "$out/.done" ] && [ "${REFRESH:-0}" != 1 ]; then
	exit 0
fi

start=$(date +%s)
apt_dir="$out/apt"
rm -rf "$out/root" "$out/debs" "$out/VERSIONS" "$out/.done" "$apt_dir"
mkdir -p "$out/debs"

# Does the system's apt already know the suite?  Then use it as is.
apt_opts=(-o APT::Sandbox::User=root)
if ! apt-cache policy 2>/dev/null | grep -q " $suite/"; then
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	echo "deb $mirror $suite main" > "$apt_dir/sources.list"
	: > "$apt_dir/status"
	apt_opts+=(-o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		   -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache"
		   -o Dir::State::Status="$apt_dir/status" -o Acquire::Languages=none
		   -o Debug::NoLocking=1)
	log "apt-get update ($suite, private lists under $apt_dir)"
	apt-get "${apt_opts[@]}" update -qq
else
	log "$suite is configured on this system: using its lists"
fi

: > "$out/VERSIONS.tmp"
for p in "${pkgs[@]}"; do
	# The suite's version: the highest one from $suite (the private list has
	# only that suite; a configured system may have bookworm's too).
	v=$(apt-cache "${apt_opts[@]}" madison "$p" | awk -F'|' -v s="$suite" \
		'$3 ~ s { gsub(/ /, "", $2); print $2 }' | sort -V | tail -n1)
	[ -n "$v" ] || { log "no $p in $suite"; exit 1; }
	log "apt-get download $p=$v"
	(cd "$out/debs" && apt-get "${apt_opts[@]}" download -qq "$p=$v" >/dev/null)
	echo "$p $v" >> "$out/VERSIONS.tmp"
done

mkdir -p "$out/root"
for d in "$out"/debs/*.deb; do
	dpkg-deb -x "$d" "$out/root"
done
# libbpf.so in libbpf-dev is a relative symlink to libbpf1's file: both unpacked.
for f in usr/include/bpf/libbpf.h usr/lib/x86_64-linux-gnu/libbpf.a usr/sbin/bpftool; do
	[ -e "$out/root/$f" ] || { log "unpacked packages lack $f"; exit 1; }
done
mv "$out/VERSIONS.tmp" "$out/VERSIONS"
rm -rf "$apt_dir"
touch "$out/.done"
log "$(tr '\n' ' ' < "$out/VERSIONS")in $out/root ($(( $(date +%s) - start )) s)"
