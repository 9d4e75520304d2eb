# make bench: bench/run boots 6.1 + module and 6.12 in turn and runs
# build/bench/arena_bench in each (see bench/README.md).  Included by the
# top-level Makefile; uses TOP, BUILD, CC, TEST_CFLAGS, LIB_A and the BPF
# compiler settings of tests/bpf/bpf.mk.
BENCH_OUT := $(BUILD)/bench
BENCH_BPF_OBJ := $(BENCH_OUT)/bpf/bench_arena.v3.bpf.o
BENCH_BIN := $(BENCH_OUT)/arena_bench

.PHONY: bench bench-build
bench-build: $(BENCH_BIN)

bench: bench-build
	$(TOP)/bench/run

$(BENCH_BPF_OBJ): $(TOP)/bench/bpf/bench_arena.bpf.c $(TOP)/bench/bpf/bench_common.h $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(BPF_CLANG_NATIVE) $(BPF_CFLAGS) -I$(TOP)/bench/bpf -c -o $@ $<

$(BENCH_BIN): $(TOP)/bench/arena_bench.c $(BENCH_BPF_OBJ) $(TOP)/bench/bpf/bench_common.h \
		$(LIB_A) $(wildcard $(TOP)/tests/*.h) $(wildcard $(TOP)/lib/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/tests -I$(TOP)/tests/bpf -I$(TOP)/bench/bpf \
		-DBENCH_OBJ='"$(BENCH_BPF_OBJ)"' -o $@ $< $(LIB_A) -lbpf -lpthread
