#!/usr/bin/env bash
# scripts/check-kernels.sh [--all] [--resume] [--list] [KVER...]: `make check-kernels [ALL=1] [RESUME=1]`.
#
# Builds the module for, and runs the whole VM suite on, Debian 12 6.1 kernels
# as the archive has them now: every ABI apt lists (linux-headers-6.1.0-N-*)
# in the flavours amd64, cloud-amd64 and rt-amd64.  Default: the oldest and
# the newest ABI of each flavour; --all: every one; KVER...: those.  --list
# prints the selection only.
#
# Per kernel, into cache/kernels/KVER/ (this script's own cache; reused):
# the image package (signed, else -unsigned) and the headers packages
# (linux-headers-KVER and its -common/-common-rt) are apt-get downloaded and
# extracted, not installed; kbuild/ is a module build tree made of them, with
# the host's linux-kbuild-6.1 (apt: >= every ABI's version) for scripts and
# tools, and the image's vmlinux for module BTF.  tests/vm/run --kernel KVER
# boots root/boot/vmlinuz-KVER.  Results: build/check-kernels/summary.txt and
# one log per kernel.  Every pass is recorded in docs/kernels-tested.txt (tracked:
# "KVER inputs-key commit date suite-line"; the README's list of kernels last
# tested), the key hashing the staged, working-tree and untracked contents of
# everything the module and the suite are built from.  --resume skips a kernel
# recorded there with the current key, so that ALL=1 (21 kernels) can be
# completed over several runs, and machines, without re-testing what has not
# changed; commit the file with the results.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cache="$top/cache/kernels"
out="$top/build/check-kernels"
mkdir -p "$cache" "$out"
all=no list=no resume=no sel=()
for a in "$@"; do
	case "$a" in
	--all) all=yes ;;
	--list) list=yes ;;
	--resume) resume=yes ;;
	6.1.0-*) sel+=("$a") ;;
	*) sed -n '2,23p' "$0" >&2; exit 2 ;;
	esac
done
log() { echo "check-kernels: $*" >&2; }

if [ ${#sel[@]} -eq 0 ]; then
	for fl in amd64 cloud-amd64 rt-amd64; do
		abis=$(apt-cache pkgnames "linux-headers-6.1.0-" |
			sed -n "s/^linux-headers-6\.1\.0-\([0-9]*\)-$fl\$/\1/p" | sort -n)
		[ -n "$abis" ] || { log "apt lists no linux-headers-6.1.0-N-$fl (apt-get update?)"; exit 1; }
		if [ $all = yes ]; then
			for n in $abis; do sel+=("6.1.0-$n-$fl"); done
		else
			sel+=("6.1.0-$(echo "$abis" | head -n1)-$fl")
			[ "$(echo "$abis" | tail -n1)" != "$(echo "$abis" | head -n1)" ] &&
				sel+=("6.1.0-$(echo "$abis" | tail -n1)-$fl")
		fi
	done
fi
if [ $list = yes ]; then printf '%s\n' "${sel[@]}"; exit 0; fi

# fetch PKG DIR: apt-get download PKG into DIR once (prints the .deb path).
fetch() {
	local deb
	deb=$(ls "$2/${1}_"*.deb 2>/dev/null | head -n1)
	if [ -z "$deb" ]; then
		(cd "$2" && apt-get download -qq -o APT::Sandbox::User=root "$1" >/dev/null 2>&1) || return 1
		deb=$(ls "$2/${1}_"*.deb 2>/dev/null | head -n1)
	fi
	[ -n "$deb" ] && echo "$deb"
}

prepare() { # prepare KVER: cache/kernels/KVER/{root,kbuild}
	local k=$1 d="$cache/$1" deb common hdr
	[ -f "$d/.done" ] && return 0
	rm -rf "$d"; mkdir -p "$d/debs" "$d/root"
	log "$k: downloading and extracting"
	deb=$(fetch "linux-image-$k" "$d/debs") || deb=$(fetch "linux-image-$k-unsigned" "$d/debs") ||
		{ log "$k: no image package"; return 1; }
	dpkg-deb -x "$deb" "$d/root"
	depmod -b "$d/root" "$k"
	common=$(echo "$k" | cut -d- -f1,2)-common	# 6.1.0-N-common(-rt)
	case "$k" in *-rt-amd64) common=$common-rt ;; esac
	deb=$(fetch "linux-headers-$k" "$d/debs") || { log "$k: no headers package"; return 1; }
	dpkg-deb -x "$deb" "$d/hdr"
	deb=$(fetch "linux-headers-$common" "$d/debs") || { log "$k: no linux-headers-$common"; return 1; }
	dpkg-deb -x "$deb" "$d/hdr"
	hdr="$d/hdr/usr/src/linux-headers-$k"
	# The flavour's Makefile includes the common tree by absolute path, and
	# scripts/ and tools/ point at linux-kbuild-6.1 relatively: re-point both.
	sed -i "s|/usr/src/linux-headers-$common/|$d/hdr/usr/src/linux-headers-$common/|" "$hdr/Makefile"
	mkdir -p "$d/hdr/usr/lib"
	ln -sfn /usr/lib/linux-kbuild-6.1 "$d/hdr/usr/lib/linux-kbuild-6.1"
	mkdir -p "$d/kbuild"
	for e in "$hdr"/* "$hdr"/.config "$hdr"/.kernelvariables; do
		ln -sfn "$e" "$d/kbuild/$(basename "$e")"
	done
	"$top/cache/linux-source-6.1/scripts/extract-vmlinux" "$d/root/boot/vmlinuz-$k" > "$d/kbuild/vmlinux" ||
		{ log "$k: extract-vmlinux failed"; return 1; }
	rm -rf "$d/debs"
	touch "$d/.done"
}

if ! dpkg-query -W -f='${Status}' linux-kbuild-6.1 2>/dev/null | grep -q 'install ok installed'; then
	log "installing linux-kbuild-6.1"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends linux-kbuild-6.1 >/dev/null
fi
# What a pass depends on: the sources the module, library and tests are built
# from and the scripts that run them (not docs, bench, packaging).
inputs_key() {
	local p=(module jit uapi lib tests scripts Kbuild Makefile)
	{
		git -C "$top" ls-files -s -- "${p[@]}"
		git -C "$top" diff HEAD -- "${p[@]}"
		# untracked files too (a new test not yet added)
		(cd "$top" && git ls-files -oz --exclude-standard -- "${p[@]}" | xargs -0r sha1sum)
	} | sha1sum | cut -c1-16
}
key=$(inputs_key)
record="$top/docs/kernels-tested.txt"
[ -f "$record" ] || printf '%s\n' "# make check-kernels passes: KVER inputs-key commit date suite-line" > "$record"
recorded_key() { awk -v k="$1" '$1 == k { print $2 }' "$record" | tail -n1; }
unrecord() { local t; t=$(mktemp); awk -v k="$1" '$1 != k' "$record" > "$t" && cat "$t" > "$record"; rm -f "$t"; }
summary="$out/summary.txt"
{
	echo "# make check-kernels, $(date -u +%FT%TZ), $(git -C "$top" rev-parse --short HEAD), inputs $key"
} > "$summary"
bad=0
for k in "${sel[@]}"; do
	if [ $resume = yes ] && [ "$(recorded_key "$k")" = "$key" ]; then
		echo "$k: PASS (earlier run, same inputs $key)" | tee -a "$summary"; continue
	fi
	t0=$(date +%s)
	if ! prepare "$k" > "$out/$k.log" 2>&1; then
		cat "$out/$k.log" >&2
		echo "$k: FAIL (could not fetch/prepare)" | tee -a "$summary"; bad=1; continue
	fi
	log "$k: suite"
	"$top/tests/vm/run" --kernel "$k" --timeout "${CHECK_KERNELS_TIMEOUT:-1800}" -- suite >> "$out/$k.log" 2>&1
	rc=$?
	line=$(grep -a '^suite:' "$out/$k.log" | tail -n1)
	unrecord "$k"
	if [ $rc -ne 0 ]; then
		r="FAIL (rc=$rc)"; bad=1
	elif [ "$(inputs_key)" != "$key" ]; then
		# the tree changed while this kernel ran: what it tested is unknown
		r="PASS (not recorded: the inputs changed during the run)"
	else
		r=PASS
		echo "$k $key $(git -C "$top" rev-parse --short HEAD) $(date -u +%F) ${line:-}" >> "$record"
	fi
	echo "$k: $r ${line:-no suite line} [$(( $(date +%s) - t0 )) s]" | tee -a "$summary"
done
exit $bad
