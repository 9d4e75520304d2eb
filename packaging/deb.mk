# Debian packages, included by the top-level Makefile.
#
#   make deb         build/deb/*.deb (bpf-arena-dkms, libbpfarena0,
#                    libbpfarena-dev, bpf-arena-tools) with dpkg-buildpackage
#                    (debhelper, dh-dkms from bookworm), then lintian; needs
#                    only debian/control's Build-Depends, no `make setup`
#   make deb-lint    lintian on the last build (fails on warnings and errors)
#
# debian/rules builds through the two goals below, which need no `make setup`
# (no kernels, no cache/): they are not among the top Makefile's SETUP_GOALS.
#   make pkg-build                 the library and every $(TOOLS_BINS)
#   make pkg-install DESTDIR=...   stages them, and the DKMS source tree
#
# The tools package installs every binary in TOOLS_BINS into /usr/bin; each
# tool's own .mk adds its binary (recursively expanded: DEMO_BIN is defined
# after this file is read, hence the second expansion below), and its manual
# page to TOOLS_MANS (lintian wants one per binary).
TOOLS_BINS += $(DEMO_BIN)
# Their manual pages (section 1), installed into /usr/share/man/man1.
TOOLS_MANS += $(TOP)/packaging/bpf-arena-demo.1

DEB_DIR := $(BUILD)/deb
DEB_SRC := $(DEB_DIR)/src/bpf-arena-dkms-$(VERSION)
LIBDIR_NAME ?= lib
PKG_LIBDIR = $(DESTDIR)$(PREFIX)/$(LIBDIR_NAME)

.PHONY: deb deb-lint pkg-build pkg-install
.SECONDEXPANSION:

## pkg-build: the library and the tools, as debian/rules builds them
pkg-build: lib $$(TOOLS_BINS)

# The library (as install-lib, with a multiarch LIBDIR_NAME), the tools, and
# the DKMS tree exactly as in `make dist` (README and licences included).
## pkg-install: stage them and the DKMS tree into DESTDIR, for debian/rules
pkg-install: pkg-build $(DIST_TARBALL)
	install -d $(PKG_LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include/linux $(DESTDIR)$(PREFIX)/bin $(DESTDIR)/usr/src
	install -m 0644 $(LIB_A) $(PKG_LIBDIR)/libbpfarena.a
	install -m 0644 $(LIB_SO) $(PKG_LIBDIR)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(PKG_LIBDIR)/libbpfarena.so
	install -m 0644 $(wildcard $(TOP)/lib/include/*.h) $(DESTDIR)$(PREFIX)/include/
	install -m 0644 $(TOP)/uapi/linux/bpf_arena.h $(DESTDIR)$(PREFIX)/include/linux/bpf_arena.h
	sed -e 's|@VERSION@|$(VERSION)|' -e 's|@PREFIX@|$(PREFIX)|' \
		-e 's|^libdir=.*|libdir=$${prefix}/$(LIBDIR_NAME)|' \
		$(TOP)/lib/libbpfarena.pc.in > $(PKG_LIBDIR)/pkgconfig/libbpfarena.pc
	install -m 0755 $(TOOLS_BINS) $(DESTDIR)$(PREFIX)/bin/
	$(if $(strip $(TOOLS_MANS)),install -d $(DESTDIR)$(PREFIX)/share/man/man1 && install -m 0644 $(TOOLS_MANS) $(DESTDIR)$(PREFIX)/share/man/man1/)
	tar -xzf $(DIST_TARBALL) -C $(DESTDIR)/usr/src

# The package is built from a copy of the checkout's files (tracked and
# untracked-but-not-ignored, so uncommitted work is packaged as it is): no
# build/, cache/ or .git, and dpkg-buildpackage writes into build/deb/src/.
# Without git (a tree from a tarball, or git not installed) tar copies the
# tree with the .gitignore patterns applied.  It needs what debian/control's
# Build-Depends name, which dpkg-checkbuilddeps checks first, and nothing of
# `make setup` (deb is not one of the top Makefile's SETUP_GOALS;
# tests/deb/check.sh builds it with setup made impossible).  lintian, not a
# build dependency, runs when installed.
DEB_FILES_GIT = git -C $(TOP) ls-files -co --exclude-standard -z | \
	xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
	tar --null -T - -c
DEB_FILES_TAR = tar -c --exclude-vcs --exclude-vcs-ignores --exclude=./build --exclude=./cache .
## deb: the four Debian packages in build/deb (needs only the Build-Depends), then lintian
deb:
	@command -v dpkg-checkbuilddeps >/dev/null || \
		{ echo "deb: dpkg-checkbuilddeps is missing: apt-get install build-essential (dpkg-dev)" >&2; exit 1; }
	@cd $(TOP) && dpkg-checkbuilddeps || \
		{ echo "deb: install the build dependencies above (apt-get install ...), see docs/INSTALL.md" >&2; exit 1; }
	@v=$$(dpkg-parsechangelog -l $(TOP)/debian/changelog -S Version); [ "$$v" = "$(VERSION)" ] || \
		{ echo "deb: debian/changelog is at $$v but VERSION is $(VERSION): add a changelog entry (dch -v $(VERSION))" >&2; exit 1; }
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	cd $(TOP) && if [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(TOP)" ]; then \
		$(DEB_FILES_GIT); else $(DEB_FILES_TAR); fi | tar -x -C $(DEB_SRC)
	cd $(DEB_SRC) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		dpkg-buildpackage -us -uc -j$$(nproc) > $(DEB_DIR)/build.log 2>&1 || \
		{ tail -n 40 $(DEB_DIR)/build.log >&2; echo "deb: dpkg-buildpackage failed (log: $(DEB_DIR)/build.log)" >&2; exit 1; }
	mv $(DEB_DIR)/src/*.deb $(DEB_DIR)/src/*.changes $(DEB_DIR)/src/*.buildinfo $(DEB_DIR)/src/*.dsc $(DEB_DIR)/src/*.tar.* $(DEB_DIR)/
	@if command -v lintian >/dev/null; then $(MAKE) -s deb-lint; else \
		echo "deb: lintian is not installed: the packages are not checked (apt-get install lintian; make deb-lint)"; fi
	@ls -1 $(DEB_DIR)/*.deb

## deb-lint: lintian on the last make deb
deb-lint:
	@# --show-overrides would count overridden warnings towards --fail-on
	@# (lintian 2.116): judge without it, then list the overrides.
	@lintian --fail-on error,warning --display-info \
		$(DEB_DIR)/bpf-arena-dkms_$(VERSION)_$$(dpkg --print-architecture).changes > $(DEB_DIR)/lintian.txt 2>&1; \
		rc=$$?; lintian --display-info --show-overrides \
		$(DEB_DIR)/bpf-arena-dkms_$(VERSION)_$$(dpkg --print-architecture).changes 2>/dev/null | \
		grep '^O: ' >> $(DEB_DIR)/lintian.txt; \
		cat $(DEB_DIR)/lintian.txt; [ $$rc = 0 ] || echo "deb: lintian failed (exit $$rc)" >&2; exit $$rc
	@echo "deb: lintian: $$(grep -c '^[EW]: ' $(DEB_DIR)/lintian.txt || true) errors/warnings, $$(grep -c '^I: ' $(DEB_DIR)/lintian.txt || true) infos, $$(grep -c '^O: ' $(DEB_DIR)/lintian.txt || true) overridden"
