# DKMS packaging and installation, included by the top-level Makefile.
# README.md, "Installing on a Debian 12 host (DKMS)", is the manual.
#
#   make dist                 build/dist/bpf-arena-VERSION.tar.gz: what DKMS needs
#   make install              DKMS add/build/install for the running kernel, udev
#                             rule, modules-load.d entry, libbpfarena + headers + .pc
#   make uninstall            undoes all of it (every installed version)
#
# install/uninstall variables (defaults in brackets):
#   PREFIX [/usr/local]       library, headers, pkg-config file
#   DESTDIR []                staging root; then no dkms/udevadm/ldconfig/modprobe runs
#   KERNELVER [uname -r]      kernel to build and install the module for
#   BPF_ARENA_GROUP [root]    group of /dev/bpf_arena (created as a system group)
#   BPF_ARENA_MODE [0600]     mode of /dev/bpf_arena
#   BPF_ARENA_AUTOLOAD [yes]  /etc/modules-load.d/bpf-arena.conf: load at boot
#   BPF_ARENA_DKMS [yes]      no: skip the module (library and udev rule only)
#   BPF_ARENA_LOAD [yes]      (re)load the module after installing it
#   DKMS_ARCH []              dkms -a ARCH (tests: a kernel arch dkms.conf excludes)

DKMS_NAME := bpf-arena
DIST_NAME := $(DKMS_NAME)-$(VERSION)
DIST_TARBALL := $(BUILD)/dist/$(DIST_NAME).tar.gz
# Exactly what DKMS builds from: dkms.conf, Kbuild, VERSION, the kernel sources
# (module/, rewrite/, uapi/) and dkms/build.sh.  Plus the README and the
# licences (LICENSE, LICENSES/), copied as they are.
DIST_FILES = dkms.conf Kbuild VERSION module rewrite uapi dkms/build.sh
DIST_DOCS = README.md LICENSE LICENSES
DIST_DEPS = $(TOP)/dkms.conf $(TOP)/Kbuild $(TOP)/VERSION $(TOP)/dkms/build.sh \
	$(addprefix $(TOP)/,$(DIST_DOCS)) \
	$(shell find $(TOP)/module $(TOP)/rewrite $(TOP)/uapi $(TOP)/LICENSES -type f 2>/dev/null)

PREFIX ?= /usr/local
DESTDIR ?=
KERNELVER ?= $(shell uname -r)
BPF_ARENA_GROUP ?= root
BPF_ARENA_MODE ?= 0600
BPF_ARENA_AUTOLOAD ?= yes
BPF_ARENA_DKMS ?= yes
BPF_ARENA_LOAD ?= yes
DKMS ?= dkms
DKMS_ARCH ?=
DKMS_ARCH_ARG = $(if $(DKMS_ARCH),-a $(DKMS_ARCH))
UDEV_RULE := $(DESTDIR)/etc/udev/rules.d/60-bpf-arena.rules
MODULES_LOAD := $(DESTDIR)/etc/modules-load.d/bpf-arena.conf
LIBDIR := $(DESTDIR)$(PREFIX)/lib
INCDIR := $(DESTDIR)$(PREFIX)/include

.PHONY: dist install uninstall install-dkms install-udev install-lib \
	uninstall-dkms uninstall-udev uninstall-lib

# The files' time in the tarball: a package build's SOURCE_DATE_EPOCH
# (dpkg-buildpackage: the changelog's date), else the last commit's, else now
# (a tree without git: the epoch would be an "ancient file" to lintian).
DIST_MTIME = $(or $(SOURCE_DATE_EPOCH),$(shell git -C $(TOP) log -1 --format=%ct 2>/dev/null),$(shell date +%s))

## dist: build/dist/bpf-arena-VERSION.tar.gz, the tree DKMS builds
dist: $(DIST_TARBALL)

$(DIST_TARBALL): $(DIST_DEPS)
	@rm -rf $(BUILD)/dist/$(DIST_NAME) && mkdir -p $(BUILD)/dist/$(DIST_NAME)
	cd $(TOP) && tar -c --exclude='*.o' --exclude='*.ko' --exclude='*.cmd' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude='.*' --exclude='*.mk' --exclude='*.md' $(DIST_FILES) | tar -x -C $(BUILD)/dist/$(DIST_NAME)
	cd $(TOP) && cp -r $(DIST_DOCS) $(BUILD)/dist/$(DIST_NAME)/
	sed -i 's/^PACKAGE_VERSION=.*/PACKAGE_VERSION="$(VERSION)"/' $(BUILD)/dist/$(DIST_NAME)/dkms.conf
	@grep -q '^PACKAGE_VERSION="$(VERSION)"$$' $(TOP)/dkms.conf || \
		echo "dist: note: dkms.conf says $$(sed -n 's/^PACKAGE_VERSION=//p' $(TOP)/dkms.conf), VERSION $(VERSION): the tarball has $(VERSION)" >&2
	tar -C $(BUILD)/dist --sort=name --owner=0 --group=0 --numeric-owner \
		--mtime='@$(DIST_MTIME)' -czf $@.tmp $(DIST_NAME)
	@mv $@.tmp $@
	@echo "dist: $@"

## install: DKMS module, udev rule, modules-load.d entry, library (PREFIX, DESTDIR)
install: $(if $(filter yes,$(BPF_ARENA_DKMS)),install-dkms) install-udev install-lib
	@echo "install: done (module for $(KERNELVER): $(if $(filter yes,$(BPF_ARENA_DKMS)),$$(if [ -e $(BUILD)/.dkms-excluded ]; then echo "none, excluded: not x86_64"; else echo "dkms $(DKMS_NAME)/$(VERSION)"; fi),skipped); /dev/bpf_arena $(BPF_ARENA_GROUP) $(BPF_ARENA_MODE); library in $(PREFIX))"

## uninstall: undo install (every installed version)
uninstall: uninstall-dkms uninstall-udev uninstall-lib

# The module: the dist tree in /usr/src, then dkms add/build/install.  Any
# other version of bpf-arena is removed first (an upgrade), and so is this one
# (a reinstall builds again).
## install-dkms: the module through dkms add/build/install for KERNELVER
install-dkms: $(DIST_TARBALL)
ifeq ($(DESTDIR),)
	@command -v $(DKMS) >/dev/null || { echo "install: dkms is not installed (apt-get install dkms)" >&2; exit 1; }
	@test -e /lib/modules/$(KERNELVER)/build/Makefile || { echo "install: no headers for $(KERNELVER) (apt-get install linux-headers-$(KERNELVER))" >&2; exit 1; }
	@for v in $$($(DKMS) status -m $(DKMS_NAME) 2>/dev/null | sed -n 's|^$(DKMS_NAME)[/,] *\([^,:]*\)[,:].*|\1|p' | sort -u); do \
		echo "install: removing $(DKMS_NAME)/$$v from dkms"; \
		$(DKMS) remove -m $(DKMS_NAME) -v $$v --all || exit 1; \
	done
	rm -rf /usr/src/$(DKMS_NAME)-*
	tar -xzf $(DIST_TARBALL) -C /usr/src
	$(DKMS) add -m $(DKMS_NAME) -v $(VERSION)
	@# dkms exits 77 for an arch dkms.conf's BUILD_EXCLUSIVE_ARCH leaves out
	@# (not x86_64): no module, and that is right.  (6.9+ kernels get the
	@# inactive stub: see dkms.conf.)
	@rc=0; $(DKMS) build -m $(DKMS_NAME) -v $(VERSION) -k $(KERNELVER) $(DKMS_ARCH_ARG) || rc=$$?; \
	if [ $$rc = 77 ]; then \
		echo "install: no module for $(KERNELVER)$(if $(DKMS_ARCH), ($(DKMS_ARCH))): dkms.conf builds only for x86_64 (BUILD_EXCLUSIVE_ARCH; the JIT hooks are x86-64 code)."; \
		echo "install: $(DKMS_NAME)/$(VERSION) stays added to dkms."; \
		touch $(BUILD)/.dkms-excluded; \
	else \
		rm -f $(BUILD)/.dkms-excluded; [ $$rc = 0 ] || exit $$rc; \
		$(DKMS) install -m $(DKMS_NAME) -v $(VERSION) -k $(KERNELVER) $(DKMS_ARCH_ARG) || exit $$?; \
		grep -h '^bpf-arena: ' /var/lib/dkms/$(DKMS_NAME)/$(VERSION)/$(KERNELVER)/*/log/make.log 2>/dev/null || true; \
	fi
ifeq ($(BPF_ARENA_LOAD),yes)
	@if [ "$(KERNELVER)" = "$$(uname -r)" ] && [ ! -e $(BUILD)/.dkms-excluded ]; then \
		if [ -d /sys/module/bpf_arena ]; then modprobe -r bpf_arena 2>/dev/null || \
			echo "install: the loaded bpf_arena is in use; the new one loads after a reboot" >&2; fi; \
		[ -d /sys/module/bpf_arena ] || modprobe bpf_arena; \
	fi
endif
else
	mkdir -p $(DESTDIR)/usr/src
	tar -xzf $(DIST_TARBALL) -C $(DESTDIR)/usr/src
endif

## install-udev: the udev rule of /dev/bpf_arena and the modules-load.d entry
install-udev:
	@case "$(BPF_ARENA_MODE)" in [0-7][0-7][0-7]|[0-7][0-7][0-7][0-7]) ;; \
		*) echo "install: BPF_ARENA_MODE must be octal, e.g. 0660" >&2; exit 1 ;; esac
ifeq ($(DESTDIR),)
	@getent group $(BPF_ARENA_GROUP) >/dev/null || { echo "install: adding system group $(BPF_ARENA_GROUP)"; groupadd --system $(BPF_ARENA_GROUP); }
endif
	mkdir -p $(dir $(UDEV_RULE))
	printf '%s\n' '# bpf-arena-dkms: access to /dev/bpf_arena (make install BPF_ARENA_GROUP=... BPF_ARENA_MODE=...)' \
		'KERNEL=="bpf_arena", SUBSYSTEM=="misc", GROUP="$(BPF_ARENA_GROUP)", MODE="$(BPF_ARENA_MODE)"' > $(UDEV_RULE)
ifeq ($(BPF_ARENA_AUTOLOAD),yes)
	@# No boot-time load where install-dkms found the kernel's arch excluded:
	@# systemd-modules-load would fail at every boot.
	@if [ -z "$(DESTDIR)" ] && [ -e $(BUILD)/.dkms-excluded ]; then \
		echo "install: $(MODULES_LOAD) not written: no module for $(KERNELVER)"; rm -f $(MODULES_LOAD); \
	else \
		mkdir -p $(dir $(MODULES_LOAD)) && \
		printf '%s\n' '# bpf-arena-dkms: load the BPF arena module at boot' bpf_arena > $(MODULES_LOAD) && \
		echo "install: wrote $(MODULES_LOAD)"; \
	fi
else
	rm -f $(MODULES_LOAD)
endif
ifeq ($(DESTDIR),)
	-udevadm control --reload 2>/dev/null
	-[ ! -e /sys/class/misc/bpf_arena ] || udevadm trigger --action=change /sys/class/misc/bpf_arena
endif

# libbpfarena as lib/lib.mk builds it; the .pc file is made for PREFIX here.
## install-lib: libbpfarena, its headers and libbpfarena.pc into PREFIX
install-lib: $(LIB_A) $(LIB_SO)
	install -d $(LIBDIR)/pkgconfig $(INCDIR)/linux
	install -m 0644 $(LIB_A) $(LIBDIR)/libbpfarena.a
	install -m 0755 $(LIB_SO) $(LIBDIR)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(LIBDIR)/libbpfarena.so
	install -m 0644 $(wildcard $(TOP)/lib/include/*.h) $(INCDIR)/
	install -m 0644 $(TOP)/uapi/linux/bpf_arena.h $(INCDIR)/linux/bpf_arena.h
	sed -e 's|@VERSION@|$(VERSION)|' -e 's|@PREFIX@|$(PREFIX)|' $(TOP)/lib/libbpfarena.pc.in > $(LIBDIR)/pkgconfig/libbpfarena.pc
ifeq ($(DESTDIR),)
	-ldconfig
endif

## uninstall-dkms: unload and dkms remove every version
uninstall-dkms:
ifeq ($(DESTDIR),)
	-[ ! -d /sys/module/bpf_arena ] || modprobe -r bpf_arena || rmmod bpf_arena
	@if command -v $(DKMS) >/dev/null; then \
		for v in $$($(DKMS) status -m $(DKMS_NAME) 2>/dev/null | sed -n 's|^$(DKMS_NAME)[/,] *\([^,:]*\)[,:].*|\1|p' | sort -u); do \
			echo "$(DKMS) remove -m $(DKMS_NAME) -v $$v --all"; $(DKMS) remove -m $(DKMS_NAME) -v $$v --all; \
		done; \
	fi
	rm -rf /var/lib/bpf-arena
endif
	rm -rf $(DESTDIR)/usr/src/$(DKMS_NAME)-*

## uninstall-udev: remove the udev rule and the modules-load.d entry
uninstall-udev:
	rm -f $(UDEV_RULE) $(MODULES_LOAD)
ifeq ($(DESTDIR),)
	-udevadm control --reload 2>/dev/null
endif

## uninstall-lib: remove the library, headers and .pc file
uninstall-lib:
	rm -f $(LIBDIR)/libbpfarena.a $(LIBDIR)/$(LIB_SONAME) $(LIBDIR)/libbpfarena.so \
		$(LIBDIR)/pkgconfig/libbpfarena.pc $(addprefix $(INCDIR)/,$(notdir $(wildcard $(TOP)/lib/include/*.h))) $(INCDIR)/linux/bpf_arena.h
	-rmdir $(INCDIR)/linux 2>/dev/null
ifeq ($(DESTDIR),)
	-ldconfig
endif
