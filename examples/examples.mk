# examples/examples.mk: the programs of examples/ (examples/README.md), each
# built the two ways a Debian 12 user builds them, with the in-tree paths;
# included by the top-level Makefile (TOP, BUILD, CC, WARN, TEST_CFLAGS,
# LIB_A, and tests/progs/progs.mk's LIBBPF_BPO_*, BPFTOOL_BPO, BPFTOOL_SYS).
#
#   bpo    clang-19, bookworm-backports' libbpf 1.4.6 and bpftool 7.5
#   stock  clang-14 (first: clang-19, the README's code relies on implicit
#          casts), bookworm's libbpf 1.1 and bpftool 7.1
#
# Each example's own Makefile (the one users run) does the build, into
# build/examples/FLAVOUR/NAME; the program is copied to
# build/tests/example_NAME.FLAVOUR (first's object too, as
# example_first.FLAVOUR.bpf.o), where the VM runner takes it into the guest
# and tests/examples_test runs it on both kernels.  The README's code blocks
# and examples/first/ are compared by tests/unit/readme_examples_test.sh.
EXAMPLES_DIR := $(TOP)/examples
EXAMPLES := first htab ring alloc
EXAMPLE_FLAVOURS := bpo stock
EXAMPLE_BINS := $(foreach f,$(EXAMPLE_FLAVOURS),$(foreach e,$(EXAMPLES),$(BUILD)/tests/example_$(e).$(f)))

# What every in-tree build passes: this checkout's library and headers,
# and the developer build's -Werror.
EXAMPLE_VARS := CC='$(CC)' CFLAGS='-O2 -g $(WARN)' BPF_CFLAGS='-g -O2 -Wall -Werror' \
	BPF_ARENA_CFLAGS='-I$(TOP)/lib/include -I$(TOP)/uapi' BPF_ARENA_LIBS='$(LIB_A) -lpthread'
EXAMPLE_VARS_bpo = CLANG=clang-19 BPFTOOL='$(BPFTOOL_BPO)' LIBBPF_CFLAGS='-I$(LIBBPF_BPO_INC)' \
	LIBBPF_LIBS='$(LIBBPF_BPO_LIBS)'
EXAMPLE_VARS_stock = CLANG=$(if $(filter first,$(1)),clang-19,clang-14) BPFTOOL='$(BPFTOOL_SYS)' \
	LIBBPF_CFLAGS= LIBBPF_LIBS=-lbpf

.PHONY: examples
## examples: every program of examples/, built with the backports and the stock toolchain
examples: $(EXAMPLE_BINS)

# $(1): the example, $(2): the flavour.  The example's Makefile knows its own
# dependencies but not the library's: -B rebuilds it whole whenever this
# rule runs (a second or two).
define EXAMPLE_RULE
$(BUILD)/tests/example_$(1).$(2): $(wildcard $(EXAMPLES_DIR)/$(1)/*.[ch]) $(EXAMPLES_DIR)/$(1)/Makefile \
		$(LIB_A) $(wildcard $(TOP)/lib/include/*.h $(TOP)/uapi/linux/*.h) | $(LIBBPF_BPO_A) $(BPFTOOL_BPO)
	$$(MAKE) -B --no-print-directory -C $(EXAMPLES_DIR)/$(1) OUTPUT=$(BUILD)/examples/$(2)/$(1) \
		$(EXAMPLE_VARS) $(call EXAMPLE_VARS_$(2),$(1))
	@mkdir -p $$(dir $$@)
	$(if $(filter first,$(1)),cp $(BUILD)/examples/$(2)/$(1)/$(1).bpf.o $$@.bpf.o)
	cp $(BUILD)/examples/$(2)/$(1)/$(1) $$@
endef
$(foreach f,$(EXAMPLE_FLAVOURS),$(foreach e,$(EXAMPLES),$(eval $(call EXAMPLE_RULE,$(e),$(f)))))

# The test that runs them in the VM suite (it only runs them: no libbpf).
$(BUILD)/tests/examples_test: $(TOP)/tests/examples_test.c $(EXAMPLE_BINS) \
		$(wildcard $(TOP)/tests/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $<
