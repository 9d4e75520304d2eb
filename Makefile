# bpf-arena-dkms: top-level build.  `make help` lists every target; see README.md.
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
CACHE := $(TOP)/cache
BUILD := $(TOP)/build
# The fragments included below define targets first: plain `make` is `make all`.
.DEFAULT_GOAL := all

# The goals that need the toolchain, the stock kernels and cache/ run the
# idempotent setup first (it does nothing on a set-up machine), never under
# `make -n`.  Every other goal (lib, tools, dist, deb, install, help, ...)
# works without it.  A single build/ file outside these goals is built
# without it too: run `make setup` once on a new machine.
SETUP_GOALS := all module modules userspace tests check check-% demo checkpatch \
	bench bench-% fuzz fuzz-% raise-stats loops-unit lower-unit-san stress stress-% \
	upstream-tests libbpf-bpo bpf-progs debug-kernel examples prog-sizes
DRY_RUN := $(findstring n,$(firstword -$(MAKEFLAGS)))
ifneq ($(filter $(SETUP_GOALS),$(or $(MAKECMDGOALS),all)),)
ifeq ($(BPF_ARENA_SETUP_DONE)$(DRY_RUN),)
$(shell BPF_ARENA_SETUP_BENCH=$(if $(filter bench bench-%,$(MAKECMDGOALS)),1) $(TOP)/scripts/setup.sh 1>&2)
ifneq ($(.SHELLSTATUS),0)
$(error make setup failed)
endif
export BPF_ARENA_SETUP_DONE := 1
endif
endif
# K61 and K612, the stock kernels (written by setup); absent before the first setup.
ifneq ($(wildcard $(CACHE)/kernels.env),)
include $(CACHE)/kernels.env
endif

KVER ?= $(K61)
VERSION := $(shell cat $(TOP)/VERSION)
KBUILD_DIR = $(CACHE)/kbuild/$(KVER)
MOD_BUILD = $(BUILD)/module/$(KVER)
# linux-kbuild-6.1 has no resolve_btfids: setup builds one from linux-source-6.1.
RESOLVE_BTFIDS_ARG = $(if $(filter 6.1.%,$(KVER)),RESOLVE_BTFIDS=$(CACHE)/tools/resolve_btfids-6.1/resolve_btfids)
HARNESS_DIR := $(CACHE)/linux-source-6.1/tools/testing/selftests

CC := gcc
WARN := -Wall -Wextra -Werror
USER_CFLAGS := -O2 -g $(WARN) -D_GNU_SOURCE -I$(TOP)/uapi -I$(TOP)/lib/include
TEST_CFLAGS := $(USER_CFLAGS) -std=gnu11 -isystem $(HARNESS_DIR) -I$(TOP)/tests/include \
	-DBPF_ARENA_VERSION='"$(VERSION)"'

# Per-folder fragments, each owning its targets (`## target:` lines: make help).
include $(TOP)/lib/lib.mk
include $(TOP)/rewrite/rewrite.mk
include $(TOP)/tests/progs/progs.mk
include $(TOP)/examples/examples.mk
include $(TOP)/dkms/dkms.mk
include $(TOP)/tests/dkms/check-dkms.mk
include $(TOP)/tests/fuzz/fuzz.mk
include $(TOP)/bench/bench.mk
include $(TOP)/tests/upstream/upstream.mk
include $(TOP)/tests/upstream/v7.3/upstream73.mk
include $(TOP)/tests/unit/unit.mk
include $(TOP)/tests/stress/stress.mk
include $(TOP)/inspect/inspect.mk
include $(TOP)/packaging/deb.mk
include $(TOP)/scripts/debug-kernel.mk

TEST_SRCS := $(wildcard $(TOP)/tests/*_test.c)
TEST_BINS := $(patsubst $(TOP)/tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
DEMO_BIN := $(BUILD)/bin/bpf-arena-demo

.PHONY: all setup module modules userspace tests tools check demo checkpatch clean help

## all: the default: the module for both kernels, the library, the tools, the tests
all: modules userspace

## help: this list
help:
	@echo "make TARGET [VAR=...]; targets:"
	@sed -n 's/^## \([^:]*\): \(.*\)/\1\t\2/p' $(MAKEFILE_LIST) | sort | \
		awk -F '\t' '{ printf "  %-16s %s\n", $$1, $$2 }'

## setup: install the toolchain and fetch the stock Debian kernels into cache/
setup:
	BPF_ARENA_SETUP_DONE= $(TOP)/scripts/setup.sh

# Kbuild puts objects next to the sources, so each kernel builds in its own copy.
# -Werror in developer builds only: a DKMS build on a user's machine must
# survive a new compiler's or header's warning.
## module: bpf_arena.ko for KVER (default: the 6.1 kernel), with -Werror
module:
	@mkdir -p $(MOD_BUILD)/tests/vm
	@cp -au $(wildcard $(TOP)/Kbuild $(TOP)/VERSION $(TOP)/module $(TOP)/rewrite $(TOP)/uapi) $(MOD_BUILD)/
	@cp -au $(TOP)/tests/vm/warnmod $(MOD_BUILD)/tests/vm/
	$(MAKE) -s -C $(KBUILD_DIR) M=$(MOD_BUILD) $(RESOLVE_BTFIDS_ARG) BPF_ARENA_WERROR=1 \
		BPF_ARENA_TEST_MODULES=m modules

## modules: bpf_arena.ko for the 6.1 and the 6.12 kernel
modules:
	$(MAKE) -s module KVER=$(K61)
	$(MAKE) -s module KVER=$(K612)

## userspace: the library, the tools and every test binary
userspace: lib tools tests
## tests: the kselftest binaries (build/tests)
tests: $(TEST_BINS)
## tools: the inspector and the demo (build/bin), what the tools package installs
tools: $(TOOLS_BINS)

$(BUILD)/tests/%: $(TOP)/tests/%.c $(wildcard $(TOP)/tests/include/*.h) $(wildcard $(TOP)/uapi/*/*.h) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(LIB_A) -lpthread

# arena_inspect_json_test checks bpf-arena against the schema tables of
# docs/INSPECT-JSON.md: the document is embedded, so the two cannot drift.
INSPECT_JSON_DOC_H := $(BUILD)/tests/gen/inspect_json_doc.h
$(INSPECT_JSON_DOC_H): $(TOP)/docs/INSPECT-JSON.md
	@mkdir -p $(dir $@)
	{ echo 'static const char inspect_json_doc[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } > $@.tmp
	mv $@.tmp $@
$(BUILD)/tests/arena_inspect_json_test: $(INSPECT_JSON_DOC_H)
$(BUILD)/tests/arena_inspect_json_test: TEST_CFLAGS += -I$(BUILD)/tests/gen

# The demo: a BPF object built with clang-19 and embedded (demo/demo.mk).
include $(TOP)/demo/demo.mk

## checkpatch: kernel coding style of module/, rewrite/ and uapi/
checkpatch:
	$(CACHE)/linux-source-6.1/scripts/checkpatch.pl --no-tree --quiet \
		-f $(wildcard $(TOP)/module/*.[ch] $(TOP)/rewrite/*.[ch] $(TOP)/uapi/*.h)

## check: the CI: style, .debs, DKMS, fuzz, host unit tests, both VM suites
check: all
	$(TOP)/scripts/check.sh

## demo: the demo in a 6.1 VM with the module
demo: all
	$(TOP)/tests/vm/run --kernel 6.1 -- bpf-arena-demo

## clean: remove build/ (cache/ stays)
clean:
	rm -rf $(BUILD)
