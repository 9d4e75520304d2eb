# BPF test programs (tests/bpf/*.bpf.c), included by the top-level Makefile.
# Uses TOP, BUILD, CC, TEST_CFLAGS, LIB_A, HARNESS_DIR from there.
#
# Each program is built twice:
#   NAME.v3.bpf.o   clang-19 -mcpu=v3: native address-space casts (LLVM emits
#                   addr_space_cast itself; __BPF_FEATURE_ADDR_SPACE_CAST)
#   NAME.asm.bpf.o  clang-14 -mcpu=v3: the inline-asm casts of bpf_arena.h
# into $(BUILD)/tests/bpf/ (a directory: the VM runner copies only the files
# of build/tests/), and embedded into build/tests/arena_prog_test, which
# needs nothing else at run time.  Every object must contain at least one
# cast instruction (BPF_ALU64|BPF_MOV|BPF_X with off=1: bytes "bf XY 01 00"
# then imm 1 (cast_kern) or 0x10000 (cast_user)), checked with llvm-objdump.
BPF_CLANG_NATIVE ?= clang-19
BPF_CLANG_ASM ?= clang-14
BPF_OBJDUMP ?= llvm-objdump
BPF_OUT := $(BUILD)/tests/bpf
BPF_PROG_NAMES := arena_list arena_htab verifier_arena verifier_arena_large arena_fault arena_reject \
	arena_reserve arena_any_ctx arena_take_back arena_any_ctx_alloc
BPF_HDRS := $(TOP)/lib/include/bpf_arena.h $(TOP)/tests/bpf/arena_prog_common.h \
	$(TOP)/tests/bpf/arena_kfunc_common.h
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror -DBPF_ARENA_EXPLICIT_CASTS \
	-I$(TOP)/lib/include -I$(TOP)/tests/bpf -I/usr/include/$(shell $(CC) -dumpmachine)
BPF_OBJS := $(foreach p,$(BPF_PROG_NAMES),$(BPF_OUT)/$(p).v3.bpf.o $(BPF_OUT)/$(p).asm.bpf.o)
BPF_CAST_RE := 'bf [0-9a-f]{2} 01 00 (01 00 00 00|00 00 01 00)'

.PHONY: bpf-progs
## bpf-progs: the tests' BPF objects (clang-19), cast instructions checked
bpf-progs: $(BPF_OBJS)

$(BPF_OUT)/%.v3.bpf.o: $(TOP)/tests/bpf/%.bpf.c $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(BPF_CLANG_NATIVE) $(BPF_CFLAGS) -c -o $@.tmp $<
	@$(BPF_OBJDUMP) -d $@.tmp | grep -Eq $(BPF_CAST_RE) || \
		{ echo "$@: no addr_space_cast instruction"; rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@

$(BPF_OUT)/%.asm.bpf.o: $(TOP)/tests/bpf/%.bpf.c $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(BPF_CLANG_ASM) $(BPF_CFLAGS) -c -o $@.tmp $<
	@$(BPF_OBJDUMP) -d $@.tmp | grep -Eq $(BPF_CAST_RE) || \
		{ echo "$@: no addr_space_cast instruction"; rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@

# arena_prog_test embeds the objects (.incbin from BPF_OBJ_DIR) and links libbpf.
$(BUILD)/tests/arena_prog_test: $(TOP)/tests/arena_prog_test.c $(BPF_OBJS) $(LIB_A) \
		$(wildcard $(TOP)/tests/*.h) $(wildcard $(TOP)/lib/include/*.h) $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/tests/bpf -DBPF_OBJ_DIR='"$(BPF_OUT)"' -o $@ $< \
		$(LIB_A) -lbpf -lpthread

# The kfunc tests (tests/arena_reserve_test.c, tests/arena_kfunc_any_ctx_test.c)
# embed their objects the same way.
KFUNC_TESTS := arena_reserve_test:arena_reserve arena_kfunc_any_ctx_test:arena_any_ctx \
	arena_take_back_test:arena_take_back arena_any_ctx_alloc_test:arena_any_ctx_alloc
define kfunc_test_rule
$(BUILD)/tests/$(1): $(TOP)/tests/$(1).c $(BPF_OUT)/$(2).v3.bpf.o $(BPF_OUT)/$(2).asm.bpf.o \
		$(LIB_A) $(wildcard $(TOP)/tests/*.h) $(wildcard $(TOP)/lib/include/*.h) $(BPF_HDRS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(TEST_CFLAGS) -I$(TOP)/tests/bpf -DBPF_OBJ_DIR='"$(BPF_OUT)"' -o $$@ $$< \
		$$(LIB_A) -lbpf -lpthread
endef
$(foreach t,$(KFUNC_TESTS),$(eval $(call kfunc_test_rule,$(word 1,$(subst :, ,$(t))),$(word 2,$(subst :, ,$(t))))))
