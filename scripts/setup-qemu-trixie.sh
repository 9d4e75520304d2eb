#!/usr/bin/env bash
# Unpacks Debian trixie's QEMU (10.x, built with TCG plugin support) and the
# trixie libraries it needs into cache/qemu-trixie/root, without touching the
# system's apt sources or bookworm's QEMU: a private apt configuration
# (cache/qemu-trixie/apt) resolves and downloads the packages, dpkg-deb -x
# unpacks them.  The binary runs through that root's own ld.so
# (cache/qemu-trixie/qemu-system-x86_64, a wrapper), so trixie's glibc never
# meets bookworm's.  Also extracts include/qemu/qemu-plugin.h from trixie's
# qemu source package (the plugin header; no binary package ships it).
# Used by `make bench` only (bench/run).  Idempotent: does nothing when done.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir="$top/cache/qemu-trixie"
log() { printf 'setup-qemu-trixie: %s\n' "$*" >&2; }
# The wrapper finds the root next to itself: cache/ is shared by worktrees
# (a symlink), so no worktree's path may be written into it.
write_wrapper() {
	cat > "$dir/qemu-system-x86_64" <<'EOT'
#!/bin/sh
# trixie's qemu-system-x86_64 on trixie's own glibc (scripts/setup-qemu-trixie.sh)
r="$(cd "$(dirname "$0")" && pwd)/root"
exec "$r/usr/lib64/ld-linux-x86-64.so.2" --library-path "$r/usr/lib/x86_64-linux-gnu:$r/usr/lib/x86_64-linux-gnu/pulseaudio" \
	"$r/usr/bin/qemu-system-x86_64" -L "$r/usr/share/qemu" -L "$r/usr/share/seabios" "$@"
EOT
	chmod +x "$dir/qemu-system-x86_64"
}
if [ -f "$dir/.done" ]; then
	# a wrapper of an older setup named the worktree that ran it
	grep -q dirname "$dir/qemu-system-x86_64" 2>/dev/null || write_wrapper
	exit 0
fi

apt="$dir/apt"
mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/debs" "$apt/src" "$apt/etc/preferences.d"
cat > "$apt/sources.list" <<EOT
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
EOT
: > "$apt/status"
# Everything apt reads or writes is under $apt: sources, lists, cache, an empty
# dpkg status (so dependencies resolve as for an empty trixie system).
aptopt=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
	-o Dir::Etc::Preferences=/nonexistent -o Dir::Etc::PreferencesParts="$apt/etc/preferences.d"
	-o Dir::State="$apt" -o Dir::State::Lists="$apt/lists" -o Dir::State::status="$apt/status"
	-o Dir::Cache="$apt" -o Dir::Cache::archives="$apt/archives"
	-o APT::Sandbox::User=root -o Debug::NoLocking=1 -o APT::Architecture=amd64
	-o APT::Architectures::=amd64)
log "apt-get update (trixie, private lists)"
apt-get "${aptopt[@]}" update -qq >&2

# Runtime closure of qemu-system-x86 (Depends and PreDepends only).
mapfile -t pkgs < <(apt-cache "${aptopt[@]}" depends --recurse --no-recommends --no-suggests \
	--no-conflicts --no-breaks --no-replaces --no-enhances qemu-system-x86 |
	grep -v '^ ' | grep -v '^<' | sort -u)
# Packages only needed by maintainer scripts or for a full system are skipped.
skip='^(debconf|debconf-2.0|dpkg|perl-base|base-files|base-passwd|adduser|passwd|init-system-helpers|systemd.*|libsystemd.*|libpam.*|login.*|util-linux|mount|tar|gzip|coreutils|bash|dash|sed|grep|findutils|diffutils|ncurses-bin|sensible-utils|debianutils|usr-is-merged|cdebconf|install-info|libdebconfclient0)$'
want=()
for p in "${pkgs[@]}"; do [[ $p =~ $skip ]] || want+=("$p"); done
# The plugin's build needs glib's headers (qemu-plugin.h includes glib.h):
# trixie's libgio-2.0-dev (glib.h, glibconfig.h), unpacked like the rest, not installed.
want+=(libgio-2.0-dev)
log "downloading ${#want[@]} trixie packages"
(cd "$apt/debs" && apt-get "${aptopt[@]}" download -qq "${want[@]}" >&2)

root="$dir/root.tmp"
rm -rf "$root"; mkdir -p "$root"
for d in "$apt/debs"/*.deb; do dpkg-deb -x "$d" "$root"; done
# usrmerge layout: trixie debs install into /usr; make /lib64 resolve too.
[ -e "$root/lib64" ] || ln -s usr/lib64 "$root/lib64"
[ -e "$root/lib" ] || ln -s usr/lib "$root/lib"

# The plugin header from the source package (only that file is extracted).
(cd "$apt/src" && apt-get "${aptopt[@]}" source --download-only -qq qemu >&2)
orig=$(ls "$apt/src"/qemu_*.orig.tar.* | head -n1)
mkdir -p "$root/include"
tar -xf "$orig" -C "$root/include" --wildcards --strip-components=3 '*/include/qemu/qemu-plugin.h'
[ -f "$root/include/qemu-plugin.h" ] || { log "qemu-plugin.h not found in $orig"; exit 1; }
rm -f "$apt/src"/*.orig.tar.* "$apt/src"/*.debian.tar.*

rm -rf "$dir/root"; mv "$root" "$dir/root"
write_wrapper
"$dir/qemu-system-x86_64" --version | head -n1 >&2
touch "$dir/.done"
