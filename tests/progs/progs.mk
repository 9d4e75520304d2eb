# tests/progs/progs.mk: the BPF programs of tests/progs/ and the tests that load
# them, included by the top-level Makefile (TOP, BUILD, CACHE, CC, TEST_CFLAGS,
# LIB_A).
#
# tests/progs/NAME*.bpf.c is loaded by tests/NAME_test.c (a program loaded by
# several tests is named after the main one, and says so at its top).  The
# objects go to $(BUILD)/tests/progs/ (a directory: the VM runner copies only
# the files of build/tests/); each test embeds its objects (.incbin) or their
# skeletons, and needs nothing else at run time.  Three kinds:
#
#   BPF_PROG_NAMES    loaded by bookworm's libbpf 1.1 with libbpfarena's
#                     bpf_arena_object_prepare(); each built twice:
#                       NAME.v3.bpf.o   clang-19 -mcpu=v3: native address-space
#                                       casts (LLVM emits addr_space_cast itself;
#                                       __BPF_FEATURE_ADDR_SPACE_CAST)
#                       NAME.asm.bpf.o  clang-14 -mcpu=v3: the inline-asm casts
#                                       of bpf_arena.h
#   AG_PROG_NAMES     arena globals, loaded by a libbpf >= 1.4: built the same
#                     two ways (clang-19: __arena_global = address_space(1);
#                     clang-14: SEC(".addr_space.1"))
#   LOOPS_PROG_NAMES  clang-19 loops (can_loop, bpf_for), loaded by a libbpf >= 1.4
#
# Every object of the first two kinds must contain at least one cast
# instruction (BPF_ALU64|BPF_MOV|BPF_X with off=1: bytes "bf XY 01 00" then imm
# 1 (cast_kern) or 0x10000 (cast_user)), checked with llvm-objdump.
PROGS_DIR := $(TOP)/tests/progs
BPF_OUT := $(BUILD)/tests/progs

# The libbpf >= 1.4 is Debian bookworm-backports' (libbpf-dev, libbpf1 1.4.x)
# with its bpftool (7.5), what the README tells users to install: setup.sh
# (scripts/setup-backports.sh) fetches the .debs with apt-get download and
# unpacks them under $(LIBBPF_BPO_DIR); bookworm's libbpf 1.1 stays in /usr.
#
# LIBBPF_BPO_DIR is the one place that says where it is; other .mk files
# (tests/upstream/) use it and the variables derived from it below.  Test
# binaries link $(LIBBPF_BPO_A) statically and take $(LIBBPF_BPO_INC) first
# on the include path, so /usr/include/bpf (1.1) is never seen.
LIBBPF_BPO_DIR := $(CACHE)/backports/root
LIBBPF_BPO_INC := $(LIBBPF_BPO_DIR)/usr/include
LIBBPF_BPO_A := $(LIBBPF_BPO_DIR)/usr/lib/x86_64-linux-gnu/libbpf.a
LIBBPF_BPO_LIBS := $(LIBBPF_BPO_A) -lelf -lz
BPFTOOL_BPO := $(LIBBPF_BPO_DIR)/usr/sbin/bpftool
LIBBPF_BPO_SCRIPT := $(TOP)/scripts/setup-backports.sh

.PHONY: libbpf-bpo
## libbpf-bpo: libbpf 1.4 from bookworm-backports into cache/ (for the newer tests)
libbpf-bpo: $(LIBBPF_BPO_A)

# Only when missing (setup.sh runs the script first anyway; it is idempotent).
$(LIBBPF_BPO_A) $(BPFTOOL_BPO):
	$(LIBBPF_BPO_SCRIPT)

BPF_CLANG_NATIVE ?= clang-19
BPF_CLANG_ASM ?= clang-14
BPF_OBJDUMP ?= llvm-objdump
BPF_CAST_RE := 'bf [0-9a-f]{2} 01 00 (01 00 00 00|00 00 01 00)'

# --- libbpf 1.1 programs
BPF_PROG_NAMES := arena_prog_list arena_prog_htab arena_prog_verifier_arena \
	arena_prog_verifier_arena_large arena_prog_fault arena_prog_reject \
	arena_reserve arena_kfunc_any_ctx arena_take_back arena_any_ctx_alloc
BPF_HDRS := $(TOP)/lib/include/bpf_arena.h $(PROGS_DIR)/arena_prog_common.h \
	$(PROGS_DIR)/arena_kfunc_common.h
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror -DBPF_ARENA_EXPLICIT_CASTS \
	-I$(TOP)/lib/include -I$(PROGS_DIR) -I/usr/include/$(shell $(CC) -dumpmachine)
BPF_OBJS := $(foreach p,$(BPF_PROG_NAMES),$(BPF_OUT)/$(p).v3.bpf.o $(BPF_OUT)/$(p).asm.bpf.o)

.PHONY: bpf-progs
## bpf-progs: the tests' BPF objects (clang-19), cast instructions checked
bpf-progs: $(BPF_OBJS)

$(filter %.v3.bpf.o,$(BPF_OBJS)): $(BPF_OUT)/%.v3.bpf.o: $(PROGS_DIR)/%.bpf.c $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(BPF_CLANG_NATIVE) $(BPF_CFLAGS) -c -o $@.tmp $<
	@$(BPF_OBJDUMP) -d $@.tmp | grep -Eq $(BPF_CAST_RE) || \
		{ echo "$@: no addr_space_cast instruction"; rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@

$(filter %.asm.bpf.o,$(BPF_OBJS)): $(BPF_OUT)/%.asm.bpf.o: $(PROGS_DIR)/%.bpf.c $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(BPF_CLANG_ASM) $(BPF_CFLAGS) -c -o $@.tmp $<
	@$(BPF_OBJDUMP) -d $@.tmp | grep -Eq $(BPF_CAST_RE) || \
		{ echo "$@: no addr_space_cast instruction"; rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@

# arena_prog_test embeds the objects (.incbin from BPF_OBJ_DIR) and links libbpf.
$(BUILD)/tests/arena_prog_test: $(TOP)/tests/arena_prog_test.c \
		$(filter $(BPF_OUT)/arena_prog_%,$(BPF_OBJS)) $(LIB_A) \
		$(wildcard $(TOP)/tests/include/*.h) $(wildcard $(TOP)/lib/include/*.h) $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(PROGS_DIR) -DBPF_OBJ_DIR='"$(BPF_OUT)"' -o $@ $< \
		$(LIB_A) -lbpf -lpthread

# The kfunc tests embed their objects the same way.
KFUNC_TESTS := arena_reserve arena_kfunc_any_ctx arena_take_back arena_any_ctx_alloc
define kfunc_test_rule
$(BUILD)/tests/$(1)_test: $(TOP)/tests/$(1)_test.c $(BPF_OUT)/$(1).v3.bpf.o $(BPF_OUT)/$(1).asm.bpf.o \
		$(LIB_A) $(wildcard $(TOP)/tests/include/*.h) $(wildcard $(TOP)/lib/include/*.h) $(BPF_HDRS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(TEST_CFLAGS) -I$(PROGS_DIR) -DBPF_OBJ_DIR='"$(BPF_OUT)"' -o $$@ $$< \
		$$(LIB_A) -lbpf -lpthread
endef
$(foreach t,$(KFUNC_TESTS),$(eval $(call kfunc_test_rule,$(t))))

# The stock route: bookworm's bpftool 7.1 skeletons of arena_prog_list (no
# arena globals), loaded by bookworm's libbpf 1.1 with
# bpf_arena_object_prepare() (libbpfarena).  The skeletons keep the name of
# the upstream program the object ports, arena_list (struct arena_list_v3,
# arena_list_v3__open()), which the test names carry.
BPFTOOL_SYS ?= /usr/sbin/bpftool
SKEL11_SKELS = $(BPF_OUT)/arena_prog_list.v3.skel.h $(BPF_OUT)/arena_prog_list.asm.skel.h
define SKEL11_RULE
$(BPF_OUT)/arena_prog_list.$(1).skel.h: $(BPF_OUT)/arena_prog_list.$(1).bpf.o
	$(BPFTOOL_SYS) gen skeleton $$< name arena_list_$(1) > $$@.tmp
	@mv $$@.tmp $$@
endef
$(eval $(call SKEL11_RULE,v3))
$(eval $(call SKEL11_RULE,asm))

$(BUILD)/tests/arena_skel_libbpf11_test: $(TOP)/tests/arena_skel_libbpf11_test.c $(SKEL11_SKELS) \
		$(LIB_A) $(wildcard $(TOP)/lib/include/*.h) $(wildcard $(TOP)/tests/include/*.h) \
		$(PROGS_DIR)/arena_prog_common.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(PROGS_DIR) -I$(BPF_OUT) \
		-DBPFTOOL_VERSION='"$(shell $(BPFTOOL_SYS) version 2>/dev/null | head -n1)"' \
		-o $@ $< $(LIB_A) -lbpf -lpthread

# --- libbpf >= 1.4 programs with arena globals
# arena_globals_test embeds them (.incbin); arena_skel_test uses the
# skeletons that bpftool 7.5 generates from them.  These explicit rules
# override the top-level pattern rule for $(BUILD)/tests/%, which would use
# the system libbpf.
AG_CLANG_NATIVE ?= clang-19
AG_CLANG_ASM ?= clang-14
AG_PROG_NAMES := arena_globals arena_globals_htab
AG_HDRS := $(TOP)/lib/include/bpf_arena.h $(PROGS_DIR)/arena_prog_common.h \
	$(PROGS_DIR)/arena_globals_common.h $(PROGS_DIR)/arena_globals_alloc.h
AG_BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror -DBPF_ARENA_EXPLICIT_CASTS \
	-I$(LIBBPF_BPO_INC) -I$(TOP)/lib/include -I$(PROGS_DIR) \
	-I/usr/include/$(shell $(CC) -dumpmachine)
AG_OBJS := $(foreach p,$(AG_PROG_NAMES),$(BPF_OUT)/$(p).v3.bpf.o $(BPF_OUT)/$(p).asm.bpf.o)

# Every object must have an ".addr_space.1" section and a cast instruction.
define AG_BPF_RULE
$(filter %.$(1).bpf.o,$(AG_OBJS)): $(BPF_OUT)/%.$(1).bpf.o: $(PROGS_DIR)/%.bpf.c $(AG_HDRS) | $(LIBBPF_BPO_A)
	@mkdir -p $$(dir $$@)
	$(2) $(AG_BPF_CFLAGS) -c -o $$@.tmp $$<
	@$(BPF_OBJDUMP) -d $$@.tmp | grep -Eq $(BPF_CAST_RE) || \
		{ echo "$$@: no addr_space_cast instruction"; rm -f $$@.tmp; exit 1; }
	@$(BPF_OBJDUMP) -h $$@.tmp | grep -q ' \.addr_space\.1 ' || \
		{ echo "$$@: no .addr_space.1 section"; rm -f $$@.tmp; exit 1; }
	@mv $$@.tmp $$@
endef
$(eval $(call AG_BPF_RULE,v3,$(AG_CLANG_NATIVE)))
$(eval $(call AG_BPF_RULE,asm,$(AG_CLANG_ASM)))

$(BUILD)/tests/arena_globals_test: $(TOP)/tests/arena_globals_test.c $(AG_OBJS) $(LIBBPF_BPO_A) \
		$(AG_HDRS) $(wildcard $(TOP)/tests/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) -I$(LIBBPF_BPO_INC) $(TEST_CFLAGS) -I$(PROGS_DIR) \
		-DBPF_OBJ_DIR='"$(BPF_OUT)"' -o $@ $< $(LIBBPF_BPO_LIBS) -lpthread

# Skeletons by bookworm-backports' bpftool 7.5 (bookworm's 7.1 fails on these
# objects: "bad map relo against ... '.addr_space.1'", and with __ulong:
# "attr 'map_extra': expected PTR, got enum64").  Name: arena_globals_v3 or
# arena_globals_asm, i.e. struct arena_globals_v3, arena_globals_v3__open().
AG_SKELS := $(BPF_OUT)/arena_globals.v3.skel.h $(BPF_OUT)/arena_globals.asm.skel.h
define AG_SKEL_RULE
$(BPF_OUT)/arena_globals.$(1).skel.h: $(BPF_OUT)/arena_globals.$(1).bpf.o | $(BPFTOOL_BPO)
	$(BPFTOOL_BPO) gen skeleton $$< name arena_globals_$(1) > $$@.tmp
	@mv $$@.tmp $$@
endef
$(eval $(call AG_SKEL_RULE,v3))
$(eval $(call AG_SKEL_RULE,asm))

# It also links libbpfarena (built against libbpf 1.1's headers; the public
# libbpf ABI is the same) to test bpf_arena_object_prepare() under libbpf 1.4.
$(BUILD)/tests/arena_skel_test: $(TOP)/tests/arena_skel_test.c $(AG_SKELS) $(LIBBPF_BPO_A) \
		$(LIB_A) $(AG_HDRS) $(wildcard $(TOP)/tests/include/*.h) $(wildcard $(TOP)/lib/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) -I$(LIBBPF_BPO_INC) $(TEST_CFLAGS) -I$(PROGS_DIR) -I$(BPF_OUT) \
		-DBPFTOOL_VERSION='"$(shell $(BPFTOOL_BPO) version 2>/dev/null | head -n1)"' \
		-o $@ $< $(LIB_A) $(LIBBPF_BPO_LIBS) -lpthread

# --- clang-19 loops, loaded by libbpf >= 1.4
# The loop pass (rewrite/loops.c, docs/LOOPS.md) and the lowering's inline
# iterators on what clang makes of can_loop and bpf_for / bpf_repeat.  These
# explicit rules override the generic $(BUILD)/tests/% rule, which links the
# system libbpf 1.1.
LOOPS_PROG_NAMES := arena_loops_clang arena_bpf_for arena_bpf_for_refused arena_bpf_for_probe \
	arena_bpf_for_adv arena_log_xlate
LOOPS_OBJS := $(foreach p,$(LOOPS_PROG_NAMES),$(BPF_OUT)/$(p).bpf.o)
LOOPS_BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -Wall -Werror -I$(LIBBPF_BPO_INC) \
	-I/usr/include/$(shell $(CC) -dumpmachine)

# can_loop (upstream's macro, no project header).
$(BPF_OUT)/arena_loops_clang.bpf.o: $(PROGS_DIR)/arena_loops_clang.bpf.c | $(LIBBPF_BPO_A)
	@mkdir -p $(dir $@)
	clang-19 $(LOOPS_BPF_CFLAGS) -c -o $@ $<

$(BUILD)/tests/arena_loops_clang_test: $(TOP)/tests/arena_loops_clang_test.c \
		$(BPF_OUT)/arena_loops_clang.bpf.o $(LIBBPF_BPO_A) $(wildcard $(TOP)/tests/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) -I$(LIBBPF_BPO_INC) $(TEST_CFLAGS) -DBPF_OBJ_DIR='"$(BPF_OUT)"' \
		-o $@ $< $(LIBBPF_BPO_LIBS) -lpthread

# bpf_for / bpf_repeat: bpf_arena.h and libbpf 1.4.6's bpf_helpers.h.
ITER_BPF_CFLAGS := $(LOOPS_BPF_CFLAGS) -I$(TOP)/lib/include

$(filter-out %/arena_loops_clang.bpf.o,$(LOOPS_OBJS)): $(BPF_OUT)/%.bpf.o: $(PROGS_DIR)/%.bpf.c \
		$(TOP)/lib/include/bpf_arena.h | $(LIBBPF_BPO_A)
	@mkdir -p $(dir $@)
	clang-19 $(ITER_BPF_CFLAGS) -c -o $@ $<

$(BUILD)/tests/arena_bpf_for_test: $(TOP)/tests/arena_bpf_for_test.c \
		$(BPF_OUT)/arena_bpf_for.bpf.o $(BPF_OUT)/arena_bpf_for_refused.bpf.o $(LIBBPF_BPO_A) \
		$(wildcard $(TOP)/tests/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) -I$(LIBBPF_BPO_INC) $(TEST_CFLAGS) -DBPF_OBJ_DIR='"$(BPF_OUT)"' \
		-o $@ $< $(LIBBPF_BPO_LIBS) -lpthread

# A program refused inside a loop body: the verifier log in the user's numbers.
$(BPF_OUT)/arena_log_xlate.bpf.o: $(PROGS_DIR)/arena_log_xlate.h

$(BUILD)/tests/arena_log_xlate_test: $(TOP)/tests/arena_log_xlate_test.c \
		$(BPF_OUT)/arena_log_xlate.bpf.o $(PROGS_DIR)/arena_log_xlate.h $(LIBBPF_BPO_A) \
		$(wildcard $(TOP)/tests/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) -I$(LIBBPF_BPO_INC) $(TEST_CFLAGS) -I$(PROGS_DIR) -DBPF_OBJ_DIR='"$(BPF_OUT)"' \
		-o $@ $< $(LIBBPF_BPO_LIBS) -lpthread

# A non-arena program that feature-probes bpf_iter_num_new.
$(BUILD)/tests/arena_bpf_for_probe_test: $(TOP)/tests/arena_bpf_for_probe_test.c \
		$(BPF_OUT)/arena_bpf_for_probe.bpf.o $(LIBBPF_BPO_A) $(wildcard $(TOP)/tests/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) -I$(LIBBPF_BPO_INC) $(TEST_CFLAGS) -DBPF_OBJ_DIR='"$(BPF_OUT)"' \
		-o $@ $< $(LIBBPF_BPO_LIBS) -lpthread

# Edge shapes of clang's bpf_for, each loaded alone.
$(BUILD)/tests/arena_bpf_for_adv_test: $(TOP)/tests/arena_bpf_for_adv_test.c \
		$(BPF_OUT)/arena_bpf_for_adv.bpf.o $(LIBBPF_BPO_A) $(wildcard $(TOP)/tests/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) -I$(LIBBPF_BPO_INC) $(TEST_CFLAGS) -DBPF_OBJ_DIR='"$(BPF_OUT)"' \
		-o $@ $< $(LIBBPF_BPO_LIBS) -lpthread

# Upstream's loop macros with the system's headers, no opt-in defines: the
# stock build (clang-14, bookworm's libbpf 1.1 headers: bpf_arena.h supplies
# every macro and struct bpf_iter_num) and the backports one (clang-19,
# libbpf 1.4.6's headers: bpf_for comes from them).  Loaded by libbpf 1.1.
LOOP_MACROS_SRC := $(PROGS_DIR)/arena_loop_macros.bpf.c
LOOP_MACROS_HDRS := $(TOP)/lib/include/bpf_arena.h $(TOP)/lib/include/bpf_arena_loops.h
$(BPF_OUT)/arena_loop_macros.stock.bpf.o: $(LOOP_MACROS_SRC) $(LOOP_MACROS_HDRS)
	@mkdir -p $(dir $@)
	$(BPF_CLANG_ASM) -g -O2 -target bpf -mcpu=v3 -Wall -Werror -I$(TOP)/lib/include \
		-I/usr/include/$(shell $(CC) -dumpmachine) -c -o $@ $<
$(BPF_OUT)/arena_loop_macros.bpo.bpf.o: $(LOOP_MACROS_SRC) $(LOOP_MACROS_HDRS) | $(LIBBPF_BPO_A)
	@mkdir -p $(dir $@)
	clang-19 $(ITER_BPF_CFLAGS) -c -o $@ $<

$(BUILD)/tests/arena_loop_macros_test: $(TOP)/tests/arena_loop_macros_test.c \
		$(BPF_OUT)/arena_loop_macros.stock.bpf.o $(BPF_OUT)/arena_loop_macros.bpo.bpf.o \
		$(LIB_A) $(wildcard $(TOP)/tests/include/*.h) $(wildcard $(TOP)/lib/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -DBPF_OBJ_DIR='"$(BPF_OUT)"' -o $@ $< $(LIB_A) -lbpf -lpthread
