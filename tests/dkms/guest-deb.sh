# Sourced by tests/dkms/guest.sh in the check-dkms guest (the same shell: its
# helpers check, run, timed, save, installed, devnode_ok, module_files and
# its variables are used here).  The .deb path, after the `make install`
# path has been removed:
#   deb_install (end of boot 2): apt-get install of the four .debs from
#     build/deb (share/debs) with a fake extra kernel whose headers are
#     broken: the postinst's DKMS build, the postinst loading the module (no
#     modprobe here), the broken kernel's failed build reported without
#     failing the configuration; the udev example rule, smoke test against
#     the packaged libbpfarena-dev, the packaged demo (and inspector, when
#     packaged); then a reboot.
#   deb_after_reboot (boot 3): the module is back, smoke test and demo, a
#     kernel upgrade's rebuild (the kernel postinst hook), an upgrade to the
#     6.12 kernel (K612, its .debs in share/k612: the inactive stub), the
#     postinst again with 6.12 present, apt-get remove (the prerm unloads the
#     module, DKMS forgets it) and purge: every file is as before the install.
debs_pkgs="bpf-arena-dkms bpf-arena-tools libbpfarena-dev libbpfarena0"
# A kernel whose headers are broken: its build fails, the package configures.
bad_kver=6.1.0-99-amd64
snap_dirs="/usr /etc /var/lib/dkms"

# Every file and directory under $snap_dirs (names only).
snapshot() { find $snap_dirs -xdev 2>/dev/null | LC_ALL=C sort; }
smoke_deb() { # smoke_deb root|arena: the smoke test built against the .debs
	if [ "$1" = root ]; then /var/tmp/bpf-arena-smoke-deb; else runuser -u arena -- /var/tmp/bpf-arena-smoke-deb; fi
}
dpkg_state() { dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null | tr -d ' '; }
demo_ok() { # the packaged demo: a BPF program builds a table in the arena
	local out
	out=$(bpf-arena-demo 2>&1); local rc=$?
	printf '%s\n' "$out" | sed 's/^/demo: /'
	[ $rc = 0 ] && printf '%s\n' "$out" | grep -q '^ok: '
}
inspector() { # the packaged inspector, when the tools package has one
	if [ -x /usr/bin/bpf-arena ]; then
		run bpf-arena list; check "inspector-list-$1" test $? = 0
	else
		say "no /usr/bin/bpf-arena in bpf-arena-tools: inspector not packaged (yet)"
	fi
}

k612_install() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"$share"/k612/*.deb > "$state/k612.log" 2>&1
}
# The four .debs; apt's output (the postinst's messages) in $state/apt-install.log.
apt_install_debs() { apt-get install -y -q "$share"/debs/*.deb > "$state/apt-install.log" 2>&1; }
reconfigure() { DEBIAN_FRONTEND=noninteractive dpkg-reconfigure bpf-arena-dkms > "$state/reconf.log" 2>&1; }

# What the make-install path left (make uninstall's part that dkms remove
# does not do): the staged library, headers, .pc, udev rule, modules-load.d
# entry, the source tree in /usr/src, the smoke binary.
remove_make_install() {
	(cd "$share/stage" && find . \( -type f -o -type l \) -printf '/%P\n') | while read -r f; do rm -f "$f"; done
	rm -f /usr/local/bin/bpf-arena-smoke
	rm -rf /usr/src/bpf-arena-*
	ldconfig
	udevadm control --reload
}

deb_install() {
	run remove_make_install
	snapshot > "$state/snap-before"
	say "files under $snap_dirs before the .debs: $(wc -l < "$state/snap-before")"
	run ls -l "$share"/debs
	# The extra kernel: "headers" whose Makefile fails (removed again before
	# the last snapshot, deb_after_reboot).
	mkdir -p "/lib/modules/$bad_kver/build/include"
	printf '%s\n' '$(error these headers are broken on purpose)' > "/lib/modules/$bad_kver/build/Makefile"
	: > "/lib/modules/$bad_kver/build/.config"
	check deb-module-not-loaded-before test ! -d /sys/module/bpf_arena
	# The postinst builds the module (dkms); in quick mode with the host's
	# resolve_btfids (the environment reaches dkms through apt and dpkg).
	DEBIAN_FRONTEND=noninteractive timed deb-apt-install apt_install_debs
	rc=$?
	sed 's/^/apt: /' "$state/apt-install.log"
	check deb-apt-install test $rc = 0
	for p in $debs_pkgs; do check "deb-installed-$p" test "$(dpkg_state "$p")" = ii; done
	says() { grep -qF -- "$1" "$state/apt-install.log"; }
	# Loaded by the postinst.
	check deb-loaded-by-postinst test -d /sys/module/bpf_arena
	check deb-postinst-says-loaded says "bpf-arena-dkms: loaded bpf_arena $VERSION into the running kernel $kver"
	# The broken kernel: said, with its log and the fix; configured all the same.
	check deb-postinst-says-failed-kernel says "bpf-arena-dkms: ERROR: the build of bpf_arena $VERSION for kernel $bad_kver failed"
	check deb-postinst-says-log says "bpf-arena-dkms:   log: /var/log/bpf-arena-dkms/make-$bad_kver.log"
	check deb-postinst-failed-log-kept grep -q 'these headers are broken on purpose' "/var/log/bpf-arena-dkms/make-$bad_kver.log"
	check deb-postinst-says-fix says "bpf-arena-dkms:     dkms install bpf-arena/$VERSION -k $bad_kver"
	check deb-postinst-says-configured says "bpf-arena-dkms: the build failed for kernel(s): $bad_kver (above); bpf-arena-dkms is configured"
	check deb-failed-kernel-not-installed sh -c "! dkms status -m bpf-arena -k '$bad_kver' | grep -q ': installed'"
	run dkms status
	check deb-dkms-status-installed installed
	log="/var/lib/dkms/bpf-arena/$VERSION/$kver/x86_64/log/make.log"
	grep '^bpf-arena: ' "$log"
	check deb-btf-level-2 grep -q 'BTF level 2' "$log"
	check deb-source-in-usr-src test -f "/usr/src/bpf-arena-$VERSION/dkms.conf" -a -f "/usr/src/bpf-arena-$VERSION/LICENSE"
	check deb-modinfo-updates-dkms sh -c "modinfo -n bpf_arena | grep -q '/updates/dkms/bpf_arena.ko'"
	check deb-modinfo-version sh -c "modinfo -F version bpf_arena | grep -qx '$VERSION'"
	check deb-modules-load-conffile sh -c "dpkg -S /etc/modules-load.d/bpf-arena.conf | grep -q '^bpf-arena-dkms:'"
	check deb-module-btf-loaded test -e /sys/kernel/btf/bpf_arena
	# Group access, as README says: the example rule, with this run's group/mode.
	sed -e "s/GROUP=\"bpf\"/GROUP=\"$GROUP\"/" -e "s/MODE=\"0660\"/MODE=\"$MODE\"/" \
		/usr/share/doc/bpf-arena-dkms/examples/60-bpf-arena.rules.example > /etc/udev/rules.d/60-bpf-arena.rules
	run udevadm control --reload
	run udevadm trigger --action=change /sys/class/misc/bpf_arena
	check deb-devnode-mode-group devnode_ok
	cc=$(pkg-config --cflags --libs libbpfarena); say "pkg-config libbpfarena (packaged): $cc"
	check deb-pc-from-usr sh -c "pkg-config --variable=libdir libbpfarena | grep -qx /usr/lib/x86_64-linux-gnu"
	timed deb-smoke-build gcc -O2 -Wall -Wextra -Werror -o /var/tmp/bpf-arena-smoke-deb "$share/smoke.c" $cc
	check deb-smoke-build test -x /var/tmp/bpf-arena-smoke-deb
	check deb-smoke-links-packaged-lib sh -c "ldd /var/tmp/bpf-arena-smoke-deb | grep -q 'libbpfarena.so.0 => /lib/x86_64-linux-gnu/libbpfarena.so.0\|libbpfarena.so.0 => /usr/lib/x86_64-linux-gnu/libbpfarena.so.0'"
	run smoke_deb root; check deb-smoke-root test $? = 0
	run smoke_deb arena; check deb-smoke-user-in-group test $? = 0
	check deb-demo demo_ok
	inspector install
}

deb_after_reboot() {
	check deb-module-loaded-after-reboot test -d /sys/module/bpf_arena
	run dkms status
	check deb-dkms-status-installed-after-reboot installed
	check deb-devnode-after-reboot devnode_ok
	run smoke_deb root; check deb-smoke-root-after-reboot test $? = 0
	run smoke_deb arena; check deb-smoke-user-after-reboot test $? = 0
	check deb-demo-after-reboot demo_ok
	inspector after-reboot
	if [ "${AUTOINSTALL_TEST:-1}" = 1 ]; then
		# A kernel upgrade: the new kernel's postinst runs
		# /etc/kernel/postinst.d/dkms NEWKERNEL.  No second 6.1 kernel is in
		# the archive, so as in boot 2: this kernel, with the module taken out.
		run rmmod bpf_arena
		run dkms unbuild -m bpf-arena -v "$VERSION" -k "$kver"
		check deb-removed-for-kernel test -z "$(module_files)"
		BPF_ARENA_RESOLVE_BTFIDS=${BPF_ARENA_RESOLVE_BTFIDS:-$state/rbt/resolve_btfids} \
			timed deb-kernel-upgrade-rebuild /etc/kernel/postinst.d/dkms "$kver"
		run dkms status
		check deb-rebuilt-on-kernel-upgrade installed
		run modprobe bpf_arena; check deb-modprobe-after-rebuild test $? = 0
		run smoke_deb root; check deb-smoke-after-rebuild test $? = 0
	fi
	if [ -n "${K612:-}" ] && [ -d "$share/k612" ]; then
		# An upgrade to a kernel with BPF arena in tree (Debian 12's 6.12):
		# its postinst hooks run dkms autoinstall, which builds the inactive
		# stub; the kernel's installation must succeed.
		timed deb-kernel-upgrade-6.12 k612_install; rc=$?
		grep -i -E 'dkms|bpf-arena|exclusive|error' "$state/k612.log" | sed 's/^/apt: /'
		check deb-kernel-upgrade-6.12-succeeds test $rc = 0
		run dkms status
		check deb-6.12-stub-installed sh -c "dkms status -m bpf-arena -k '$K612' | grep -q ': installed'"
		check deb-6.12-stub-built-as-stub grep -q "^bpf-arena: kernel $K612 has BPF arena in tree: building the inactive stub" \
			/var/lib/dkms/bpf-arena/"$VERSION"/"$K612"/x86_64/log/make.log
		check deb-6.12-module-file test -n "$(find /lib/modules/$K612 -name 'bpf_arena.ko*' 2>/dev/null)"
		check deb-6.1-still-installed installed
	fi
	if [ -n "${K612:-}" ] && [ -d "$share/k612" ] && [ "${AUTOINSTALL_TEST:-1}" = 1 ]; then
		# The package's postinst with the 6.12 kernel present: it builds for
		# 6.1 again (and 6.12's stub, if the kernel hook had not).
		# (A rebuild: skipped with the others by CHECK_DKMS_AUTOINSTALL=0.)
		BPF_ARENA_RESOLVE_BTFIDS=${BPF_ARENA_RESOLVE_BTFIDS:-$state/rbt/resolve_btfids} \
			timed deb-reconfigure-with-6.12 reconfigure; rc=$?
		sed 's/^/postinst: /' "$state/reconf.log"
		check deb-postinst-with-6.12-succeeds test $rc = 0
		check deb-6.12-stub-installed-after-reconfigure sh -c "dkms status -m bpf-arena -k '$K612' | grep -q ': installed'"
		check deb-6.1-installed-after-reconfigure installed
		run modprobe bpf_arena; check deb-modprobe-after-reconfigure test $? = 0
	fi
	# Remove: the prerm unloads the (loaded, unused) module and DKMS forgets
	# it; the conffile stays until purge.
	rm -f /etc/udev/rules.d/60-bpf-arena.rules /var/tmp/bpf-arena-smoke-deb
	check deb-module-loaded-before-remove test -d /sys/module/bpf_arena
	DEBIAN_FRONTEND=noninteractive timed deb-apt-remove apt-get remove -y -q $debs_pkgs
	check deb-apt-remove test $? = 0
	check deb-remove-unloaded-module test ! -d /sys/module/bpf_arena
	run dkms status
	check deb-remove-dkms-status-empty test -z "$(dkms_status)"
	check deb-remove-no-dkms-tree test ! -e /var/lib/dkms/bpf-arena
	left=$(module_files); echo "module files left: ${left:-none}"
	check deb-remove-no-module-files test -z "$left"
	check deb-remove-no-usr-src sh -c '! ls -d /usr/src/bpf-arena-* 2>/dev/null'
	check deb-remove-conffile-kept test -f /etc/modules-load.d/bpf-arena.conf
	# Only what is left in state "rc" (conffiles): a removed package without
	# conffiles is forgotten, and apt-get purge of an unknown name aborts.
	rc_pkgs=$(for p in $debs_pkgs; do [ "$(dpkg_state "$p")" != rc ] || echo "$p"; done)
	say "left as rc after remove: ${rc_pkgs:-none}"
	DEBIAN_FRONTEND=noninteractive timed deb-apt-purge apt-get purge -y -q $rc_pkgs
	check deb-apt-purge test $? = 0
	for p in $debs_pkgs; do check "deb-purged-$p" sh -c "case '$(dpkg_state "$p")' in ''|un) ;; *) exit 1 ;; esac"; done
	check deb-purge-conffile-gone test ! -e /etc/modules-load.d/bpf-arena.conf
	check deb-purge-failed-logs-gone test ! -e /var/log/bpf-arena-dkms
	rm -rf "/lib/modules/$bad_kver"
	# The 6.12 kernel's own files (installed above) are not ours.
	snapshot | { if [ -n "${K612:-}" ]; then grep -v -F "${K612%-amd64}"; else cat; fi; } > "$state/snap-after"
	diff "$state/snap-before" "$state/snap-after" > "$state/snap-diff"
	say "files under $snap_dirs after purge: $(wc -l < "$state/snap-after"); differences:"
	sed 's/^/  /' "$state/snap-diff"
	check deb-purge-leaves-nothing test ! -s "$state/snap-diff"
}
