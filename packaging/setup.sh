#!/usr/bin/env bash
# packaging/setup.sh: what `make deb` needs (debhelper, dh-dkms, lintian,
# from bookworm), installed with apt-get when missing.  Called by
# scripts/setup.sh; does nothing on a machine that has them.
set -euo pipefail
pkgs=(debhelper dh-dkms lintian dpkg-dev fakeroot)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
printf 'setup: installing %s (make deb)\n' "${missing[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
