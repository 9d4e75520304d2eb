# tests/kshim/kshim.mk: included by the top Makefile (TOP, BUILD, CC, TEST_CFLAGS set).
# module/fault_x86.c's decoder built in user space against tests/kshim's
# stand-in headers (more specific than the generic $(BUILD)/tests/% rule).
$(BUILD)/tests/fault_decode_unit_test: $(TOP)/tests/fault_decode_unit_test.c \
		$(TOP)/module/fault_x86.c $(TOP)/module/fault.h $(TOP)/rewrite/raise.h \
		$(wildcard $(TOP)/tests/kshim/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/tests/kshim -I$(TOP)/rewrite -o $@ $<
