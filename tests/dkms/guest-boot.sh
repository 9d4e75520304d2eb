#!/bin/sh
# Installed in the check-dkms image as /usr/local/sbin/bpf-arena-check-boot and
# run by bpf-arena-check.service at every boot: mounts the host's 9p share,
# runs its guest.sh with the output on the second serial port (/dev/ttyS1),
# then reboots if guest.sh exits 100, else powers off.
out=/dev/ttyS1
[ -c "$out" ] || out=/dev/console
modprobe -q 9pnet_virtio 2>/dev/null; modprobe -q 9p 2>/dev/null
mkdir -p /mnt/share
if ! mountpoint -q /mnt/share; then
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 host0 /mnt/share 2>>"$out"
fi
if [ -x /mnt/share/guest.sh ]; then
	/mnt/share/guest.sh >"$out" 2>&1
	rc=$?
else
	echo "@@CHECK-DKMS no /mnt/share/guest.sh@@" >"$out"
	rc=1
fi
sync
if [ "$rc" = 100 ]; then
	systemctl reboot
else
	systemctl poweroff
fi
