# tests/unit/unit.mk: the tests of the rewriter (rewrite/) that need no kernel;
# included by the top Makefile (TOP, BUILD, CC, TEST_CFLAGS, REWRITE_SRCS and
# REWRITE_DEPS from rewrite/rewrite.mk are set).  The rewriter is plain C, so
# each test links the files it tests directly.
#   lower_unit_test, raise_unit_test, fault_decode_unit_test: built into
#                        build/tests/ with the VM tests, so the suite runs them
#                        on both kernels' user space
#   make lower-unit-san  lower_unit_test with ASan/UBSan on the host
#   make loops-unit      the loop pass (rewrite/loops.c, docs/LOOPS.md) and the
#                        lowering's inline iterators on the host, plain and
#                        ASan/UBSan
# bpf_header_test.sh (a step of make check) compiles a program against
# lib/include/bpf_arena.h.
UNIT_DIR := $(TOP)/tests/unit

# More specific than the generic $(BUILD)/tests/% rule: these link rewrite/*.c.
$(BUILD)/tests/lower_unit_test: $(UNIT_DIR)/lower_unit_test.c $(REWRITE_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/rewrite -o $@ $< $(REWRITE_SRCS)

$(BUILD)/tests/raise_unit_test: $(UNIT_DIR)/raise_unit_test.c $(REWRITE_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/rewrite -o $@ $< $(TOP)/rewrite/raise.c

# The fault fixup's decoder, linked as the module links it.
$(BUILD)/tests/fault_decode_unit_test: $(UNIT_DIR)/fault_decode_unit_test.c \
		$(TOP)/rewrite/fault_decode.c $(REWRITE_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/rewrite -o $@ $< $(TOP)/rewrite/fault_decode.c

UNIT_TESTS := $(BUILD)/tests/lower_unit_test $(BUILD)/tests/raise_unit_test \
	$(BUILD)/tests/fault_decode_unit_test
tests: $(UNIT_TESTS)

# Host-only variant with ASan/UBSan (the VM gets the plain binary above).
LOWER_UNIT_SAN := $(BUILD)/host/lower_unit_test_san

$(LOWER_UNIT_SAN): $(UNIT_DIR)/lower_unit_test.c $(REWRITE_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
		-fno-sanitize-recover=all -I$(TOP)/rewrite -o $@ $< $(REWRITE_SRCS)

.PHONY: lower-unit-san
## lower-unit-san: lower_unit_test with ASan/UBSan on the host
lower-unit-san: $(LOWER_UNIT_SAN)
	$(LOWER_UNIT_SAN)

# The loop pass, and bpf_for/bpf_repeat: the lowering's inline iterators, then the pass.
LOOPS_SRCS := $(TOP)/rewrite/cfg.c $(TOP)/rewrite/helper_args.c $(TOP)/rewrite/loops.c \
	$(TOP)/rewrite/src_line.c \
	$(TOP)/rewrite/log_xlate.c
LOOPS_DEPS := $(LOOPS_SRCS) $(wildcard $(TOP)/rewrite/*.h) $(wildcard $(UNIT_DIR)/*.h)
LOOPS_UNIT := $(BUILD)/host/loops_unit_test
LOOPS_UNIT_SAN := $(BUILD)/host/loops_unit_test_san
ITER_UNIT := $(BUILD)/host/iter_unit_test
ITER_UNIT_SAN := $(BUILD)/host/iter_unit_test_san
ITER_SRCS := $(LOWER_SRCS) $(LOOPS_SRCS)

$(LOOPS_UNIT): $(UNIT_DIR)/loops_unit_test.c $(LOOPS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/rewrite -I$(UNIT_DIR) -o $@ $< $(LOOPS_SRCS)

$(LOOPS_UNIT_SAN): $(UNIT_DIR)/loops_unit_test.c $(LOOPS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
		-fno-sanitize-recover=all -I$(TOP)/rewrite -I$(UNIT_DIR) -o $@ $< $(LOOPS_SRCS)

$(ITER_UNIT): $(UNIT_DIR)/iter_unit_test.c $(LOOPS_DEPS) $(LOWER_SRCS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/rewrite -I$(UNIT_DIR) -o $@ $< $(ITER_SRCS)

$(ITER_UNIT_SAN): $(UNIT_DIR)/iter_unit_test.c $(LOOPS_DEPS) $(LOWER_SRCS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
		-fno-sanitize-recover=all -I$(TOP)/rewrite -I$(UNIT_DIR) -o $@ $< $(ITER_SRCS)

.PHONY: loops-unit
## loops-unit: host unit tests of the loop pass, plain and with ASan/UBSan
loops-unit: $(LOOPS_UNIT) $(LOOPS_UNIT_SAN) $(ITER_UNIT) $(ITER_UNIT_SAN)
	$(LOOPS_UNIT)
	$(LOOPS_UNIT_SAN)
	$(ITER_UNIT)
	$(ITER_UNIT_SAN)
