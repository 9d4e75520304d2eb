# tests/upstream/v7.3/upstream73.mk: Linux 7.3.4's loop selftests, unmodified
# (tests/upstream/v7.3/tools/..., ORIGIN.md), built as 7.3's selftests
# Makefile builds them and run by build/tests/upstream_loops (runner.c here)
# on 6.1 + module, 6.12 and 7.3.  Included by the top-level Makefile.
#
# Not part of `make check` (the binary's name does not end in _test, so the
# VM suite's glob skips it): on 6.1 + module many of these programs are
# expected to fail today; docs/results/upstream-loops-7.3.txt records them.
#
# As upstream: clang-19 (7.3's selftests accept it), BPF_CFLAGS of 7.3's
# Makefile, -DENABLE_ATOMICS_TESTS, "-O2 --target=bpfel -mcpu=v3"; the
# include path in upstream's order: INCLUDE_DIR (vmlinux.h, and 7.3's own
# libbpf headers, as upstream's in-tree libbpf installs them), CURDIR (the
# vendored tree), APIDIR and TOOLSINCDIR (7.3's tools/include, from
# cache/linux-7.3/src), libarena/include.  vmlinux.h is 7.3's BTF
# (scripts/setup-linux-7.3.sh).  The runner links bookworm-backports'
# libbpf 1.4 (UPSTREAM_LIBBPF_*), as upstream_arena_test does.
UP73_DIR := $(TOP)/tests/upstream/v7.3
UP73_SELF := $(UP73_DIR)/tools/testing/selftests/bpf
UP73_OUT := $(BUILD)/tests/upstream73
L73 := $(CACHE)/linux-7.3
L73_SCRIPT := $(TOP)/scripts/setup-linux-7.3.sh
UP73_PROGS := iters iters_num iters_looping iters_state_safety verifier_iterating_callbacks \
	verifier_may_goto_1 verifier_may_goto_2 bpf_loop verifier_linked_scalars \
	verifier_live_stack verifier_stack_ptr verifier_spin_lock compute_live_registers \
	verifier_arena_large arena_htab arena_list arena_strsearch \
	free_timer test_usdt bpf_for_bench
UP73_HDRS := $(wildcard $(UP73_SELF)/*.h $(UP73_SELF)/progs/*.h $(UP73_SELF)/libarena/include/*.h \
	$(UP73_DIR)/tools/include/linux/*.h)
UP73_BPF_CFLAGS = -g -Wall -Werror -D__TARGET_ARCH_x86 -mlittle-endian \
	-I$(UP73_OUT) -I$(L73)/libbpf-include -I$(UP73_SELF) -I$(L73)/src/tools/include/uapi \
	-I$(L73)/src/tools/include -I$(UP73_SELF)/libarena/include -I$(UP73_OUT)/bpfsys \
	-std=gnu11 -fno-strict-aliasing -Wno-microsoft-anon-tag -fms-extensions \
	-Wno-compare-distinct-pointer-types -Wno-initializer-overrides \
	$(UP_SYS_INCLUDES) -DENABLE_ATOMICS_TESTS -O2 --target=bpfel -mcpu=v3
# The one per-file shim: Debian's 7.3 BTF tags the arena kfuncs' pointers
# btf_type_tag("address_space(1)"), which bpftool dumps into vmlinux.h as a
# plain pointer; libarena's bpf_arena_common.h declares them with a real
# address_space(1), and clang refuses the two declarations.  This
# program gets vmlinux.h without kfunc prototypes (arena_htab.c and
# arena_list.c define BPF_NO_KFUNC_PROTOTYPES themselves for this reason).
$(UP73_OUT)/arena_strsearch.bpf.o: UP73_EXTRA := -DBPF_NO_KFUNC_PROTOTYPES
UP73_OBJS := $(foreach p,$(UP73_PROGS),$(UP73_OUT)/$(p).bpf.o)

.PHONY: upstream-loops upstream-loops-verify upstream-loops-results
## upstream-loops: Linux 7.3.4's loop selftests and their runner (build/tests/upstream_loops)
upstream-loops: $(BUILD)/tests/upstream_loops

## upstream-loops-verify: the vendored 7.3.4 files are byte-identical (SHA256SUMS)
upstream-loops-verify:
	cd $(UP73_DIR) && sha256sum --quiet -c SHA256SUMS

## upstream-loops-results: run them on 6.1 + module, 6.12 and 7.3; write docs/results/upstream-loops-7.3.txt
upstream-loops-results: upstream-loops
	$(UP73_DIR)/results.sh

$(L73)/.done:
	$(L73_SCRIPT)

$(UP73_OUT)/vmlinux.h: $(L73)/.done
	@mkdir -p $(dir $@)
	cp $(L73)/vmlinux.h $@

$(UP73_OUT)/bpfsys/gnu/stubs-32.h:
	@mkdir -p $(dir $@)
	@echo '/* empty: see tests/upstream/upstream.mk */' > $@

$(UP73_OUT)/%.bpf.o: $(UP73_SELF)/progs/%.c $(UP73_HDRS) $(UP73_OUT)/vmlinux.h \
		$(UP73_OUT)/bpfsys/gnu/stubs-32.h
	@cd $(UP73_DIR) && sha256sum --quiet -c SHA256SUMS
	$(UPSTREAM_CLANG) $(UP73_BPF_CFLAGS) $(UP73_EXTRA) -c $< -o $@

# The objects are embedded (the runner needs no file at run time): one
# UP73_EMBED line per object, generated.
$(UP73_OUT)/objs.h: $(UP73_DIR)/upstream73.mk
	@mkdir -p $(dir $@)
	@{ $(foreach p,$(UP73_PROGS),echo 'UP73_EMBED($(p))';) } > $@.tmp
	@mv $@.tmp $@

$(BUILD)/tests/upstream_loops: $(UP73_DIR)/runner.c $(UP73_OBJS) $(UP73_OUT)/objs.h $(UP_UAPI_HDRS) $(UPSTREAM_LIBBPF_A)
	@mkdir -p $(dir $@)
	$(CC) -I$(UP_OUT)/uapi -I$(UPSTREAM_LIBBPF_INC) -I$(UP73_OUT) $(TEST_CFLAGS) \
		-DUP73_OBJ_DIR='"$(UP73_OUT)"' -o $@ $< $(UPSTREAM_LIBBPF_A) -lelf -lz
