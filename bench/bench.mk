# make bench: bench/run boots 6.1 + module and 6.12 in turn and runs
# build/bench/arena_bench in each (see bench/README.md).  Included by the
# top-level Makefile; uses TOP, BUILD, CC, TEST_CFLAGS, LIB_A and the BPF
# compiler settings of tests/progs/progs.mk.
BENCH_OUT := $(BUILD)/bench
BENCH_BPF_OBJ := $(BENCH_OUT)/bpf/bench_arena.v3.bpf.o
BENCH_BIN := $(BENCH_OUT)/arena_bench

# The instruction-counting TCG plugin, against trixie's qemu-plugin.h and glib
# headers (scripts/setup-qemu-trixie.sh, run by setup.sh for bench goals).
QEMU_TRIXIE := $(TOP)/cache/qemu-trixie
BENCH_PLUGIN := $(BENCH_OUT)/insn_count.so

.PHONY: bench bench-build
## bench-build: the instruction-count benchmark and its TCG plugin
bench-build: $(BENCH_BIN) $(BENCH_PLUGIN)

$(QEMU_TRIXIE)/.done:
	$(TOP)/scripts/setup-qemu-trixie.sh

$(BENCH_PLUGIN): $(TOP)/bench/plugin/insn_count.c $(QEMU_TRIXIE)/.done
	@mkdir -p $(dir $@)
	$(CC) -O2 $(WARN) -shared -fPIC -I$(QEMU_TRIXIE)/root/include \
		-I$(QEMU_TRIXIE)/root/usr/include/glib-2.0 \
		-I$(QEMU_TRIXIE)/root/usr/lib/x86_64-linux-gnu/glib-2.0/include -o $@ $< -lpthread

## bench: the benchmark on 6.1 + module and on 6.12 (bench/README.md)
bench: bench-build
	$(TOP)/bench/run

$(BENCH_BPF_OBJ): $(TOP)/bench/bpf/bench_arena.bpf.c $(TOP)/bench/bpf/bench_common.h $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(BPF_CLANG_NATIVE) $(BPF_CFLAGS) -I$(TOP)/bench/bpf -c -o $@ $<

$(BENCH_BIN): $(TOP)/bench/arena_bench.c $(BENCH_BPF_OBJ) $(TOP)/bench/bpf/bench_common.h \
		$(LIB_A) $(wildcard $(TOP)/tests/include/*.h) $(wildcard $(TOP)/lib/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -I$(TOP)/tests/progs -I$(TOP)/bench/bpf \
		-DBPF_OBJ_DIR='"$(BENCH_OUT)/bpf"' -o $@ $< $(LIB_A) -lbpf -lpthread

# What the kernel keeps of each program of the corpus (bench/sizes/).
SIZES_BIN := $(BENCH_OUT)/prog_sizes
.PHONY: prog-sizes
## prog-sizes: xlated/JITed/verified sizes of the corpus, 6.1 + module vs 6.12
prog-sizes: $(SIZES_BIN) examples bpf-progs upstream-tests
	$(TOP)/bench/sizes/run

$(SIZES_BIN): $(TOP)/bench/sizes/prog_sizes.c $(LIB_A) $(LIBBPF_BPO_A) \
		$(wildcard $(TOP)/lib/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) -I$(LIBBPF_BPO_INC) $(TEST_CFLAGS) -o $@ $< $(LIB_A) $(LIBBPF_BPO_LIBS)
