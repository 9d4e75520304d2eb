# tests/libbpf-new/libbpf-new.mk: arena globals with a libbpf >= 1.4, included
# by the top-level Makefile (TOP, BUILD, CACHE, CC, TEST_CFLAGS, HARNESS_DIR).
#
# build-libbpf.sh builds a static libbpf (Debian trixie's libbpf source
# package, 1.5.x) into $(CACHE)/libbpf-new once.  build/tests/arena_globals_test
# links it statically and takes its headers first (-I before everything, so
# /usr/include/bpf of Debian 12's libbpf 1.1 is never used); its BPF objects
# (tests/libbpf-new/*.bpf.c) are built with clang-19 -mcpu=v3 (native casts,
# __arena_global = address_space(1)) and clang-14 (asm casts, __arena_global =
# SEC(".addr_space.1")) into $(BUILD)/tests/libbpf-new/ and embedded (.incbin).
# This explicit rule overrides the top-level pattern rule for
# $(BUILD)/tests/%, which would use the system libbpf.
LIBBPF_NEW_DIR := $(CACHE)/libbpf-new
LIBBPF_NEW_A := $(LIBBPF_NEW_DIR)/lib64/libbpf.a
LIBBPF_NEW_INC := $(LIBBPF_NEW_DIR)/include
LIBBPF_NEW_SCRIPT := $(TOP)/tests/libbpf-new/build-libbpf.sh
AG_CLANG_NATIVE ?= clang-19
AG_CLANG_ASM ?= clang-14
AG_OBJDUMP ?= llvm-objdump
AG_OUT := $(BUILD)/tests/libbpf-new
AG_PROG_NAMES := arena_globals arena_globals_htab
AG_HDRS := $(TOP)/lib/include/bpf_arena.h $(TOP)/tests/bpf/arena_prog_common.h \
	$(wildcard $(TOP)/tests/libbpf-new/*.h)
AG_BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror \
	-I$(LIBBPF_NEW_INC) -I$(TOP)/lib/include -I$(TOP)/tests/libbpf-new -I$(TOP)/tests/bpf \
	-I/usr/include/$(shell $(CC) -dumpmachine)
AG_OBJS := $(foreach p,$(AG_PROG_NAMES),$(AG_OUT)/$(p).v3.bpf.o $(AG_OUT)/$(p).asm.bpf.o)
# addr_space_cast (cast_kern or cast_user), as tests/bpf/bpf.mk checks
AG_CAST_RE := 'bf [0-9a-f]{2} 01 00 (01 00 00 00|00 00 01 00)'

.PHONY: libbpf-new
libbpf-new: $(LIBBPF_NEW_A)

# Only when missing (the script is idempotent and caches under $(CACHE)).
$(LIBBPF_NEW_A):
	$(LIBBPF_NEW_SCRIPT)

# Every object must have an ".addr_space.1" section and a cast instruction.
define AG_BPF_RULE
$(AG_OUT)/%.$(1).bpf.o: $(TOP)/tests/libbpf-new/%.bpf.c $(AG_HDRS) | $(LIBBPF_NEW_A)
	@mkdir -p $$(dir $$@)
	$(2) $(AG_BPF_CFLAGS) -c -o $$@.tmp $$<
	@$(AG_OBJDUMP) -d $$@.tmp | grep -Eq $(AG_CAST_RE) || \
		{ echo "$$@: no addr_space_cast instruction"; rm -f $$@.tmp; exit 1; }
	@$(AG_OBJDUMP) -h $$@.tmp | grep -q ' \.addr_space\.1 ' || \
		{ echo "$$@: no .addr_space.1 section"; rm -f $$@.tmp; exit 1; }
	@mv $$@.tmp $$@
endef
$(eval $(call AG_BPF_RULE,v3,$(AG_CLANG_NATIVE)))
$(eval $(call AG_BPF_RULE,asm,$(AG_CLANG_ASM)))

$(BUILD)/tests/arena_globals_test: $(TOP)/tests/arena_globals_test.c $(AG_OBJS) $(LIBBPF_NEW_A) \
		$(AG_HDRS) $(wildcard $(TOP)/tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) -I$(LIBBPF_NEW_INC) $(TEST_CFLAGS) -I$(TOP)/tests/libbpf-new -I$(TOP)/tests/bpf \
		-DAG_OBJ_DIR='"$(AG_OUT)"' -o $@ $< $(LIBBPF_NEW_A) -lelf -lz -lpthread
