# tests/upstream/upstream.mk: upstream v6.12's arena selftests, unmodified
# (tests/upstream/progs, ORIGIN.md), built as upstream's selftests Makefile
# builds them and run by build/tests/upstream_arena_test (runner.c), on 6.1 +
# module and on 6.12.  Included by the top-level Makefile (TOP, BUILD, CACHE,
# CC, TEST_CFLAGS, K612).
#
# The one libbpf choice: a libbpf >= 1.4, bookworm-backports' 1.4.6 as
# tests/libbpf-new/libbpf-new.mk unpacks it (LIBBPF_BPO_*).
UPSTREAM_LIBBPF_INC ?= $(LIBBPF_BPO_INC)
UPSTREAM_LIBBPF_A ?= $(LIBBPF_BPO_A)
UPSTREAM_CLANG ?= clang-19
UP_DIR := $(TOP)/tests/upstream
UP_OUT := $(BUILD)/tests/upstream
# Upstream compiles against the installed uapi headers of the kernel it
# tests (its ../usr/include): here 6.12's linux/bpf.h and bpf_common.h, copied
# from linux-headers-*-common (scripts/setup.sh installs it for the module
# build) into $(UP_OUT)/uapi (the runner uses them too); the rest of <linux/...> is the system's.
UP_UAPI_SRC := /usr/src/linux-headers-$(K612:-amd64=-common)/include/uapi/linux
UP_UAPI_HDRS := $(UP_OUT)/uapi/linux/bpf.h $(UP_OUT)/uapi/linux/bpf_common.h
# vmlinux.h: one, from 6.12's BTF, for both kernels.  The objects are CO-RE
# (vmlinux.h marks every struct preserve_access_index): on 6.1 libbpf
# relocates struct bpf_arena against the module's BTF, as a user shipping one
# object for both kernels would.  6.1's own BTF has no arena types at all.
UP_VMLINUX_BTF := $(CACHE)/kbuild/$(K612)/vmlinux
UP_PROGS := verifier_arena verifier_arena_large arena_atomics arena_list arena_htab arena_htab_asm
UP_HDRS := $(wildcard $(UP_DIR)/include/*.h $(UP_DIR)/progs/*.h)
UP_SYS_INCLUDES = $(shell $(UPSTREAM_CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
# Upstream's BPF_CFLAGS + CLANG_CFLAGS + -DENABLE_ATOMICS_TESTS (test_progs),
# then CLANG_BPF_BUILD_RULE's "-O2 --target=bpf -mcpu=v3".
UP_BPF_CFLAGS = -g -Wall -Werror -D__TARGET_ARCH_x86 -mlittle-endian \
	-I$(UP_OUT) -I$(UPSTREAM_LIBBPF_INC) -I$(UP_DIR)/include -I$(UP_DIR)/progs \
	-I$(UP_OUT)/uapi -I$(UP_OUT)/bpfsys -Wno-compare-distinct-pointer-types $(UP_SYS_INCLUDES) \
	-DENABLE_ATOMICS_TESTS -O2 --target=bpf -mcpu=v3
UP_OBJS := $(foreach p,$(UP_PROGS),$(UP_OUT)/$(p).bpf.o)

.PHONY: upstream-tests upstream-verify
## upstream-tests: the vendored upstream arena selftests and their runner
upstream-tests: $(BUILD)/tests/upstream_arena_test

# The vendored files must stay byte-identical to upstream.
## upstream-verify: the vendored upstream files are byte-identical (SHA256SUMS)
upstream-verify:
	cd $(UP_DIR) && sha256sum --quiet -c SHA256SUMS

$(UP_OUT)/vmlinux.h: $(UP_VMLINUX_BTF)
	@mkdir -p $(dir $@)
	bpftool btf dump file $< format c > $@.tmp
	@mv $@.tmp $@

# <errno.h> (bpf_arena_htab.h) with --target=bpf reaches glibc's
# gnu/stubs-32.h, which only multilib hosts have: an empty one stands in
# (it lists unimplemented functions; BPF programs call none).
$(UP_OUT)/bpfsys/gnu/stubs-32.h:
	@mkdir -p $(dir $@)
	@echo '/* empty: see tests/upstream/upstream.mk */' > $@

$(UP_OUT)/uapi/linux/%.h: $(UP_UAPI_SRC)/%.h
	@mkdir -p $(dir $@)
	cp $< $@

$(UP_OUT)/%.bpf.o: $(UP_DIR)/progs/%.c $(UP_HDRS) $(UP_OUT)/vmlinux.h $(UP_UAPI_HDRS) \
		$(UP_OUT)/bpfsys/gnu/stubs-32.h | $(UPSTREAM_LIBBPF_A)
	@cd $(UP_DIR) && sha256sum --quiet -c SHA256SUMS
	$(UPSTREAM_CLANG) $(UP_BPF_CFLAGS) -c $< -o $@

UP_RUNNER_SRCS := $(UP_DIR)/runner.c $(UP_DIR)/runner_atomics.c $(UP_DIR)/runner_loops.c
$(BUILD)/tests/upstream_arena_test: $(UP_RUNNER_SRCS) $(UP_DIR)/runner.h $(UP_OBJS) \
		$(UP_UAPI_HDRS) $(UPSTREAM_LIBBPF_A)
	@mkdir -p $(dir $@)
	$(CC) -I$(UP_OUT)/uapi -I$(UPSTREAM_LIBBPF_INC) -I$(UP_DIR)/include $(TEST_CFLAGS) \
		-DUP_OBJ_DIR='"$(UP_OUT)"' -o $@ $(UP_RUNNER_SRCS) $(UPSTREAM_LIBBPF_A) -lelf -lz -lpthread

userspace: $(BUILD)/tests/upstream_arena_test
