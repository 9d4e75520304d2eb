# tests/libbpf-new/libbpf-new.mk: arena globals and skeletons with a libbpf >=
# 1.4, included by the top-level Makefile (TOP, BUILD, CACHE, CC, TEST_CFLAGS,
# HARNESS_DIR).
#
# The libbpf >= 1.4 is Debian bookworm-backports' (libbpf-dev, libbpf1 1.4.x)
# with its bpftool (7.5), what the README tells users to install: setup.sh
# (scripts/setup-backports.sh) fetches the .debs with apt-get download and
# unpacks them under $(LIBBPF_BPO_DIR); bookworm's libbpf 1.1 stays in /usr.
#
# LIBBPF_BPO_DIR is the one place that says where it is; other .mk files
# (tests/upstream/) use it and the variables derived from it below.  Test
# binaries link $(LIBBPF_BPO_A) statically and take $(LIBBPF_BPO_INC) first
# on the include path, so /usr/include/bpf (1.1) is never seen.
#
# Its BPF objects (tests/libbpf-new/*.bpf.c) are built with clang-19 -mcpu=v3
# (native casts, __arena_global = address_space(1)) and clang-14 (asm casts,
# __arena_global = SEC(".addr_space.1")) into $(BUILD)/tests/libbpf-new/.
# arena_globals_test embeds them (.incbin); arena_skel_test uses the
# skeletons that bpftool 7.5 generates from them.  These explicit rules
# override the top-level pattern rule for $(BUILD)/tests/%, which would use
# the system libbpf.
LIBBPF_BPO_DIR := $(CACHE)/backports/root
LIBBPF_BPO_INC := $(LIBBPF_BPO_DIR)/usr/include
LIBBPF_BPO_A := $(LIBBPF_BPO_DIR)/usr/lib/x86_64-linux-gnu/libbpf.a
LIBBPF_BPO_LIBS := $(LIBBPF_BPO_A) -lelf -lz
BPFTOOL_BPO := $(LIBBPF_BPO_DIR)/usr/sbin/bpftool
LIBBPF_BPO_SCRIPT := $(TOP)/scripts/setup-backports.sh
# The names this file used when it built trixie's libbpf from source, for
# parts written against them.
LIBBPF_NEW_INC := $(LIBBPF_BPO_INC)
LIBBPF_NEW_A := $(LIBBPF_BPO_A)
AG_CLANG_NATIVE ?= clang-19
AG_CLANG_ASM ?= clang-14
AG_OBJDUMP ?= llvm-objdump
AG_OUT := $(BUILD)/tests/libbpf-new
AG_PROG_NAMES := arena_globals arena_globals_htab
AG_HDRS := $(TOP)/lib/include/bpf_arena.h $(TOP)/tests/bpf/arena_prog_common.h \
	$(wildcard $(TOP)/tests/libbpf-new/*.h)
AG_BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror -DBPF_ARENA_EXPLICIT_CASTS \
	-I$(LIBBPF_BPO_INC) -I$(TOP)/lib/include -I$(TOP)/tests/libbpf-new -I$(TOP)/tests/bpf \
	-I/usr/include/$(shell $(CC) -dumpmachine)
AG_OBJS := $(foreach p,$(AG_PROG_NAMES),$(AG_OUT)/$(p).v3.bpf.o $(AG_OUT)/$(p).asm.bpf.o)
# addr_space_cast (cast_kern or cast_user), as tests/bpf/bpf.mk checks
AG_CAST_RE := 'bf [0-9a-f]{2} 01 00 (01 00 00 00|00 00 01 00)'

.PHONY: libbpf-bpo
## libbpf-bpo: libbpf 1.4 from bookworm-backports into cache/ (for the newer tests)
libbpf-bpo: $(LIBBPF_BPO_A)

# Only when missing (setup.sh runs the script first anyway; it is idempotent).
$(LIBBPF_BPO_A) $(BPFTOOL_BPO):
	$(LIBBPF_BPO_SCRIPT)

# Every object must have an ".addr_space.1" section and a cast instruction.
define AG_BPF_RULE
$(AG_OUT)/%.$(1).bpf.o: $(TOP)/tests/libbpf-new/%.bpf.c $(AG_HDRS) | $(LIBBPF_BPO_A)
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

$(BUILD)/tests/arena_globals_test: $(TOP)/tests/arena_globals_test.c $(AG_OBJS) $(LIBBPF_BPO_A) \
		$(AG_HDRS) $(wildcard $(TOP)/tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) -I$(LIBBPF_BPO_INC) $(TEST_CFLAGS) -I$(TOP)/tests/libbpf-new -I$(TOP)/tests/bpf \
		-DAG_OBJ_DIR='"$(AG_OUT)"' -o $@ $< $(LIBBPF_BPO_LIBS) -lpthread

# Skeletons by bookworm-backports' bpftool 7.5 (bookworm's 7.1 fails on these
# objects: "bad map relo against ... '.addr_space.1'", and with __ulong:
# "attr 'map_extra': expected PTR, got enum64").  Name: arena_globals_v3 or
# arena_globals_asm, i.e. struct arena_globals_v3, arena_globals_v3__open().
AG_SKELS := $(AG_OUT)/arena_globals.v3.skel.h $(AG_OUT)/arena_globals.asm.skel.h
define AG_SKEL_RULE
$(AG_OUT)/%.$(1).skel.h: $(AG_OUT)/%.$(1).bpf.o | $(BPFTOOL_BPO)
	$(BPFTOOL_BPO) gen skeleton $$< name $$*_$(1) > $$@.tmp
	@mv $$@.tmp $$@
endef
$(eval $(call AG_SKEL_RULE,v3))
$(eval $(call AG_SKEL_RULE,asm))

# It also links libbpfarena (built against libbpf 1.1's headers; the public
# libbpf ABI is the same) to test bpf_arena_object_prepare() under libbpf 1.4.
$(BUILD)/tests/arena_skel_test: $(TOP)/tests/arena_skel_test.c $(AG_SKELS) $(LIBBPF_BPO_A) \
		$(LIB_A) $(AG_HDRS) $(wildcard $(TOP)/tests/*.h) $(wildcard $(TOP)/lib/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) -I$(LIBBPF_BPO_INC) $(TEST_CFLAGS) -I$(TOP)/tests/libbpf-new -I$(AG_OUT) \
		-DBPFTOOL_VERSION='"$(shell $(BPFTOOL_BPO) version 2>/dev/null | head -n1)"' \
		-o $@ $< $(LIB_A) $(LIBBPF_BPO_LIBS) -lpthread

# The stock route: bookworm's bpftool 7.1 skeletons of tests/bpf/arena_list
# (no arena globals), loaded by bookworm's libbpf 1.1 with
# bpf_arena_object_prepare() (libbpfarena).  The objects come from
# tests/bpf/bpf.mk ($(BPF_OUT)).
BPFTOOL_SYS ?= /usr/sbin/bpftool
SKEL11_SKELS = $(BPF_OUT)/arena_list.v3.skel.h $(BPF_OUT)/arena_list.asm.skel.h
define SKEL11_RULE
$(BUILD)/tests/bpf/%.$(1).skel.h: $(BUILD)/tests/bpf/%.$(1).bpf.o
	$(BPFTOOL_SYS) gen skeleton $$< name $$*_$(1) > $$@.tmp
	@mv $$@.tmp $$@
endef
$(eval $(call SKEL11_RULE,v3))
$(eval $(call SKEL11_RULE,asm))

$(BUILD)/tests/arena_skel_libbpf11_test: $(TOP)/tests/arena_skel_libbpf11_test.c $(SKEL11_SKELS) \
		$(LIB_A) $(wildcard $(TOP)/lib/include/*.h) $(wildcard $(TOP)/tests/*.h) \
		$(TOP)/tests/bpf/arena_prog_common.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/tests/bpf -I$(BPF_OUT) \
		-DBPFTOOL_VERSION='"$(shell $(BPFTOOL_SYS) version 2>/dev/null | head -n1)"' \
		-o $@ $< $(LIB_A) -lbpf -lpthread
