# rewrite/rewrite.mk: included by the top Makefile (TOP, BUILD, CC, TEST_CFLAGS are set).
# The rewriter is plain C, so its unit tests link its files directly.
# The lowering's files (lower_internal.h names each one's job); the loop and fuzz tests link them too.
LOWER_SRCS := $(addprefix $(TOP)/rewrite/,lower.c lower_classify.c lower_structure.c \
	lower_dataflow.c lower_emit.c lower_placeholders.c lower_iter.c)
REWRITE_SRCS := $(TOP)/rewrite/cfg.c $(LOWER_SRCS) $(TOP)/rewrite/raise.c
REWRITE_DEPS := $(REWRITE_SRCS) $(wildcard $(TOP)/rewrite/*.h)
LOWER_UNIT_SAN := $(BUILD)/host/lower_unit_test_san

# More specific than the generic $(BUILD)/tests/% rule: this one links rewrite/*.c.
$(BUILD)/tests/lower_unit_test: $(TOP)/tests/lower_unit_test.c $(REWRITE_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/rewrite -o $@ $< $(REWRITE_SRCS)

$(BUILD)/tests/raise_unit_test: $(TOP)/tests/raise_unit_test.c $(REWRITE_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/rewrite -o $@ $< $(TOP)/rewrite/raise.c

# Host-only variant with ASan/UBSan (the VM gets the plain binary above).
$(LOWER_UNIT_SAN): $(TOP)/tests/lower_unit_test.c $(REWRITE_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
		-fno-sanitize-recover=all -I$(TOP)/rewrite -o $@ $< $(REWRITE_SRCS)

.PHONY: lower-unit-san
## lower-unit-san: lower_unit_test with ASan/UBSan on the host
lower-unit-san: $(LOWER_UNIT_SAN)
	$(LOWER_UNIT_SAN)

# The fault fixup's decoder, linked as the module links it.
$(BUILD)/tests/fault_decode_unit_test: $(TOP)/tests/fault_decode_unit_test.c \
		$(TOP)/rewrite/fault_decode.c $(REWRITE_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/rewrite -o $@ $< $(TOP)/rewrite/fault_decode.c
