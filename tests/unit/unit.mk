# tests/loops/loops.mk: the loop pass (rewrite/loops.c, docs/LOOPS.md).  Included by
# the top Makefile (TOP, BUILD, CC, TEST_CFLAGS are set).
#   make loops-unit      host unit tests of the pass (plain, then ASan/UBSan)
# tests/arena_loops_test.c (the VM test) is built by the generic tests rule.
LOOPS_SRCS := $(TOP)/rewrite/cfg.c $(TOP)/rewrite/loops.c
LOOPS_DEPS := $(LOOPS_SRCS) $(wildcard $(TOP)/rewrite/*.h) $(wildcard $(TOP)/tests/loops/*.h)
LOOPS_UNIT := $(BUILD)/host/loops_unit_test
LOOPS_UNIT_SAN := $(BUILD)/host/loops_unit_test_san
# bpf_for/bpf_repeat: the lowering's inline iterators, then the pass.
ITER_UNIT := $(BUILD)/host/iter_unit_test
ITER_UNIT_SAN := $(BUILD)/host/iter_unit_test_san
ITER_SRCS := $(TOP)/rewrite/lower.c $(LOOPS_SRCS)

$(LOOPS_UNIT): $(TOP)/tests/loops/loops_unit_test.c $(LOOPS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/rewrite -I$(TOP)/tests/loops -o $@ $< $(LOOPS_SRCS)

$(LOOPS_UNIT_SAN): $(TOP)/tests/loops/loops_unit_test.c $(LOOPS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
		-fno-sanitize-recover=all -I$(TOP)/rewrite -I$(TOP)/tests/loops -o $@ $< $(LOOPS_SRCS)

$(ITER_UNIT): $(TOP)/tests/loops/iter_unit_test.c $(LOOPS_DEPS) $(TOP)/rewrite/lower.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/rewrite -I$(TOP)/tests/loops -o $@ $< $(ITER_SRCS)

$(ITER_UNIT_SAN): $(TOP)/tests/loops/iter_unit_test.c $(LOOPS_DEPS) $(TOP)/rewrite/lower.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
		-fno-sanitize-recover=all -I$(TOP)/rewrite -I$(TOP)/tests/loops -o $@ $< $(ITER_SRCS)

.PHONY: loops-unit
## loops-unit: host unit tests of the loop pass, plain and with ASan/UBSan
loops-unit: $(LOOPS_UNIT) $(LOOPS_UNIT_SAN) $(ITER_UNIT) $(ITER_UNIT_SAN)
	$(LOOPS_UNIT)
	$(LOOPS_UNIT_SAN)
	$(ITER_UNIT)
	$(ITER_UNIT_SAN)

# A clang-19 can_loop program loaded by libbpf >= 1.4 (tests/libbpf-new/libbpf-new.mk
# provides LIBBPF_BPO_A / LIBBPF_BPO_INC, aliased LIBBPF_NEW_*).  This explicit rule overrides the generic
# $(BUILD)/tests/% rule, which links the system libbpf 1.1.
LOOPS_OUT := $(BUILD)/tests/loops
LOOPS_BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -Wall -Werror -I$(LIBBPF_NEW_INC) \
	-I/usr/include/$(shell $(CC) -dumpmachine)

$(LOOPS_OUT)/can_loop_walk.bpf.o: $(TOP)/tests/loops/can_loop_walk.bpf.c | $(LIBBPF_NEW_A)
	@mkdir -p $(dir $@)
	clang-19 $(LOOPS_BPF_CFLAGS) -c -o $@ $<

$(BUILD)/tests/arena_loops_clang_test: $(TOP)/tests/arena_loops_clang_test.c \
		$(LOOPS_OUT)/can_loop_walk.bpf.o $(LIBBPF_NEW_A) $(wildcard $(TOP)/tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) -I$(LIBBPF_NEW_INC) $(TEST_CFLAGS) -DLOOPS_OBJ='"$(LOOPS_OUT)/can_loop_walk.bpf.o"' \
		-o $@ $< $(LIBBPF_NEW_A) -lelf -lz -lpthread

# bpf_for / bpf_repeat (tests/arena_bpf_for_test.c): clang-19 objects with
# bpf_arena.h and libbpf 1.4.6's bpf_helpers.h, loaded by libbpf 1.4.6.
ITER_BPF_CFLAGS := $(LOOPS_BPF_CFLAGS) -I$(TOP)/lib/include

$(LOOPS_OUT)/%.bpf.o: $(TOP)/tests/loops/%.bpf.c $(TOP)/lib/include/bpf_arena.h | $(LIBBPF_NEW_A)
	@mkdir -p $(dir $@)
	clang-19 $(ITER_BPF_CFLAGS) -c -o $@ $<

$(BUILD)/tests/arena_bpf_for_test: $(TOP)/tests/arena_bpf_for_test.c \
		$(LOOPS_OUT)/bpf_for.bpf.o $(LOOPS_OUT)/bpf_for_refused.bpf.o $(LIBBPF_NEW_A) \
		$(wildcard $(TOP)/tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) -I$(LIBBPF_NEW_INC) $(TEST_CFLAGS) -DFOR_OBJ='"$(LOOPS_OUT)/bpf_for.bpf.o"' \
		-DREFUSED_OBJ='"$(LOOPS_OUT)/bpf_for_refused.bpf.o"' \
		-o $@ $< $(LIBBPF_NEW_A) -lelf -lz -lpthread

# review-iter: a non-arena program that feature-probes bpf_iter_num_new.
$(BUILD)/tests/arena_bpf_for_probe_test: $(TOP)/tests/arena_bpf_for_probe_test.c \
		$(LOOPS_OUT)/bpf_for_probe.bpf.o $(LIBBPF_NEW_A) $(wildcard $(TOP)/tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) -I$(LIBBPF_NEW_INC) $(TEST_CFLAGS) -DPROBE_OBJ='"$(LOOPS_OUT)/bpf_for_probe.bpf.o"' \
		-o $@ $< $(LIBBPF_NEW_A) -lelf -lz -lpthread

# Adversarial bpf_for shapes (attack review 3), each loaded alone.
$(BUILD)/tests/arena_bpf_for_adv_test: $(TOP)/tests/arena_bpf_for_adv_test.c \
		$(LOOPS_OUT)/bpf_for_adv.bpf.o $(LIBBPF_NEW_A) $(wildcard $(TOP)/tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) -I$(LIBBPF_NEW_INC) $(TEST_CFLAGS) -DADV_OBJ='"$(LOOPS_OUT)/bpf_for_adv.bpf.o"' \
		-o $@ $< $(LIBBPF_NEW_A) -lelf -lz -lpthread
