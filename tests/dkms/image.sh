#!/usr/bin/env bash
# tests/dkms/image.sh CACHEDIR: builds (or reuses) the Debian 12 disk image that
# `make check-dkms` boots: a debootstrap root filesystem with the stock
# linux-image-amd64, linux-headers-amd64, dkms and build-essential, in a raw
# ext4 image.  Prints the image directory.  The image is rebuilt when it is
# missing or when its recipe (this file) changed; the guest only ever runs with
# QEMU's -snapshot, so the image stays pristine between runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: tests/dkms/image.sh CACHEDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log() { printf 'dkms-image: %s\n' "$*" >&2; }

mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
size=${DKMS_IMAGE_SIZE:-6G}
# What the guest needs: the stock kernel and its headers, DKMS and a compiler
# (what an administrator installs), plus what the smoke test uses.
pkgs=(linux-image-amd64 linux-headers-amd64 dkms build-essential pkg-config
      systemd-sysv udev kmod procps libbpf1 bpftool xz-utils zstd initramfs-tools
      openssl dwarves linux-source libelf-dev zlib1g-dev python3 libbpf-dev)
# dwarves (pahole: module BTF), linux-source (linux-source-6.1.tar.xz),
# libelf-dev, zlib1g-dev, python3: what
# dkms/build.sh needs to build resolve_btfids (README.md: module BTF);
# libbpf-dev: libbpfarena.pc requires libbpf.

recipe=$( { cat "$0"; printf '%s\n' "${pkgs[@]}" "$mirror" "$security" "$size"; } | sha256sum | cut -d' ' -f1)
if [ -f "$out/disk.raw" ] && [ "$(cat "$out/recipe" 2>/dev/null)" = "$recipe" ] &&
   [ -f "$out/vmlinuz" ] && [ -f "$out/initrd.img" ] && [ -f "$out/kver" ]; then
	log "reusing $out/disk.raw ($(cat "$out/kver"))"
	echo "$out"; exit 0
fi

command -v debootstrap >/dev/null || {
	log "installing debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
}
command -v mkfs.ext4 >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends e2fsprogs >/dev/null

root="$out/root"
mounted=()
cleanup() {
	local m
	for ((i=${#mounted[@]}-1; i>=0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
	if ! grep -q " $root/" /proc/mounts; then rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT
rm -rf --one-file-system "$root"; rm -f "$out/disk.raw" "$out/recipe"
mkdir -p "$root"

t0=$(date +%s)
log "debootstrap bookworm ($mirror)"
debootstrap --variant=minbase --include=ca-certificates bookworm "$root" "$mirror" > "$out/debootstrap.log" 2>&1 ||
	{ tail -n 30 "$out/debootstrap.log" >&2; exit 1; }

cat > "$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
EOF
echo bpf-arena-guest > "$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 bpf-arena-guest\n' > "$root/etc/hosts"
printf '/dev/vda / ext4 rw,errors=remount-ro 0 1\n' > "$root/etc/fstab"
# No questions, no daemons started inside the chroot.
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"; chmod +x "$root/usr/sbin/policy-rc.d"
for m in proc sys dev dev/pts; do
	mount --bind "/$m" "$root/$m"; mounted+=("$root/$m")
done
log "installing ${pkgs[*]}"
chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive LC_ALL=C bash -euc "
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends ${pkgs[*]}
	apt-get clean
" > "$out/apt.log" 2>&1 || { tail -n 30 "$out/apt.log" >&2; exit 1; }
for ((i=${#mounted[@]}-1; i>=0; i--)); do umount "${mounted[i]}"; done
mounted=()
rm -f "$root/usr/sbin/policy-rc.d"

kver=$(ls "$root/lib/modules" | sort -V | tail -n1)
[ -f "$root/boot/vmlinuz-$kver" ] && [ -f "$root/boot/initrd.img-$kver" ] ||
	{ log "no kernel/initrd for $kver in the image"; exit 1; }

# Boot quickly and quietly under TCG: no timers or services the test does not need.
for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer \
	 man-db.timer dpkg-db-backup.timer systemd-tmpfiles-clean.timer \
	 getty@tty1.service serial-getty@ttyS0.service; do
	ln -sf /dev/null "$root/etc/systemd/system/$u"
done
sed -i "s|^root:[^:]*:|root::|" "$root/etc/shadow"	# root console login, no password
# The test driver: runs /mnt/share/guest.sh from the host's 9p share (so the
# image does not change when the test does) and powers off.
cp "$here/guest-boot.sh" "$root/usr/local/sbin/bpf-arena-check-boot"
chmod +x "$root/usr/local/sbin/bpf-arena-check-boot"
cat > "$root/etc/systemd/system/bpf-arena-check.service" <<'EOF'
[Unit]
Description=bpf-arena-dkms check driver (runs /mnt/share/guest.sh)
After=multi-user.target systemd-udev-settle.service systemd-modules-load.service
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/bpf-arena-check-boot
StandardOutput=journal+console
TimeoutStartSec=infinity
# As in a login shell (dkms's own `echo` into <(...) complains otherwise).
IgnoreSIGPIPE=no
[Install]
WantedBy=multi-user.target
EOF
ln -sf /etc/systemd/system/bpf-arena-check.service \
	"$root/etc/systemd/system/multi-user.target.wants/bpf-arena-check.service"

cp "$root/boot/vmlinuz-$kver" "$out/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$out/initrd.img"
echo "$kver" > "$out/kver"
log "making the ext4 image ($size)"
rm -f "$out/disk.raw.tmp"
truncate -s "$size" "$out/disk.raw.tmp"
mkfs.ext4 -q -F -L bpf-arena -d "$root" "$out/disk.raw.tmp"
mv "$out/disk.raw.tmp" "$out/disk.raw"
echo "$recipe" > "$out/recipe"
log "built $out/disk.raw with $kver in $(( $(date +%s) - t0 )) s"
echo "$out"
