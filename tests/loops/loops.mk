# tests/loops/loops.mk: the loop pass (jit/loops.c, docs/LOOPS.md).  Included by
# the top Makefile (TOP, BUILD, CC, TEST_CFLAGS are set).
#   make loops-unit      host unit tests of the pass (plain, then ASan/UBSan)
# tests/arena_loops_test.c (the VM test) is built by the generic tests rule.
LOOPS_SRCS := $(TOP)/jit/loops.c
LOOPS_DEPS := $(LOOPS_SRCS) $(wildcard $(TOP)/jit/*.h) $(wildcard $(TOP)/tests/loops/*.h)
LOOPS_UNIT := $(BUILD)/host/loops_unit_test
LOOPS_UNIT_SAN := $(BUILD)/host/loops_unit_test_san

$(LOOPS_UNIT): $(TOP)/tests/loops/loops_unit_test.c $(LOOPS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/jit -I$(TOP)/tests/loops -o $@ $< $(LOOPS_SRCS)

$(LOOPS_UNIT_SAN): $(TOP)/tests/loops/loops_unit_test.c $(LOOPS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
		-fno-sanitize-recover=all -I$(TOP)/jit -I$(TOP)/tests/loops -o $@ $< $(LOOPS_SRCS)

.PHONY: loops-unit
loops-unit: $(LOOPS_UNIT) $(LOOPS_UNIT_SAN)
	$(LOOPS_UNIT)
	$(LOOPS_UNIT_SAN)
