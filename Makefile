# bpf-arena-dkms: top-level build.  `make demo`, `make check`; see README.md.
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
CACHE := $(TOP)/cache
BUILD := $(TOP)/build

# Every goal but these needs the toolchain and the kernels: run the idempotent
# setup first (it does nothing on a set-up machine).
NO_SETUP_GOALS := setup clean help dist install uninstall install-dkms install-udev install-lib uninstall-dkms uninstall-udev uninstall-lib \
	pkg-build pkg-install
ifneq ($(filter-out $(NO_SETUP_GOALS),$(or $(MAKECMDGOALS),all)),)
ifeq ($(BPF_ARENA_SETUP_DONE),)
$(shell BPF_ARENA_SETUP_BENCH=$(if $(filter bench bench-%,$(MAKECMDGOALS)),1) $(TOP)/scripts/setup.sh 1>&2)
ifneq ($(.SHELLSTATUS),0)
$(error make setup failed)
endif
export BPF_ARENA_SETUP_DONE := 1
endif
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
TEST_CFLAGS := $(USER_CFLAGS) -std=gnu11 -isystem $(HARNESS_DIR) -DBPF_ARENA_VERSION='"$(VERSION)"'

# libbpfarena: lib/lib.mk defines LIB_A, LIB_SO, LIB_PC and their rules.
include $(TOP)/lib/lib.mk
# Optional parts, each owned by its directory.
-include $(TOP)/rewrite/rewrite.mk
-include $(TOP)/tests/bpf/bpf.mk
-include $(TOP)/dkms/dkms.mk
-include $(TOP)/tests/fuzz/fuzz.mk
-include $(TOP)/bench/bench.mk
-include $(TOP)/tests/libbpf-new/libbpf-new.mk
-include $(TOP)/tests/upstream/upstream.mk
-include $(TOP)/tests/loops/loops.mk
-include $(TOP)/tests/stress/stress.mk
-include $(TOP)/inspect/inspect.mk
-include $(TOP)/packaging/deb.mk
-include $(TOP)/scripts/debug-kernel.mk

TEST_SRCS := $(wildcard $(TOP)/tests/*_test.c)
TEST_BINS := $(patsubst $(TOP)/tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
DEMO_BIN := $(BUILD)/bin/bpf-arena-demo

.PHONY: all setup module modules userspace tests lib check demo checkpatch clean help
all: modules userspace

help:
	@echo "make demo | check | setup | module KVER=... | modules | userspace | checkpatch | clean"

setup:
	BPF_ARENA_SETUP_DONE= $(TOP)/scripts/setup.sh

# Kbuild puts objects next to the sources, so each kernel builds in its own copy.
module:
	@mkdir -p $(MOD_BUILD)/tests/vm
	@cp -au $(wildcard $(TOP)/Kbuild $(TOP)/VERSION $(TOP)/module $(TOP)/rewrite $(TOP)/uapi) $(MOD_BUILD)/
	@cp -au $(TOP)/tests/vm/warnmod $(MOD_BUILD)/tests/vm/
	$(MAKE) -s -C $(KBUILD_DIR) M=$(MOD_BUILD) $(RESOLVE_BTFIDS_ARG) BPF_ARENA_TEST_MODULES=m modules

modules:
	$(MAKE) -s module KVER=$(K61)
	$(MAKE) -s module KVER=$(K612)

userspace: lib $(TEST_BINS) $(DEMO_BIN)
tests: $(TEST_BINS)

$(BUILD)/tests/%: $(TOP)/tests/%.c $(wildcard $(TOP)/tests/*.h) $(wildcard $(TOP)/uapi/*/*.h) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(LIB_A) -lpthread

# The demo: a BPF object built with clang-19 and embedded (demo/demo.mk).
include $(TOP)/demo/demo.mk

checkpatch:
	$(CACHE)/linux-source-6.1/scripts/checkpatch.pl --no-tree --quiet \
		-f $(wildcard $(TOP)/module/*.[ch] $(TOP)/rewrite/*.[ch] $(TOP)/uapi/*.h)

check: all
	$(TOP)/scripts/check.sh

demo: all
	$(TOP)/tests/vm/run --kernel 6.1 -- bpf-arena-demo

clean:
	rm -rf $(BUILD)
