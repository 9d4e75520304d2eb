# tests/fuzz/fuzz.mk: libFuzzer target for the lowering and the raise (rewrite/).
# Included by the top Makefile (TOP, BUILD, TEST_CFLAGS, HARNESS_DIR are set).
#   make fuzz-build           build $(BUILD)/fuzz/lower_fuzz and its seed corpus
#   make fuzz [FUZZ_SECONDS=180] [FUZZ_JOBS=1]
#                             replay tests/fuzz/findings/ (past findings, now regressions),
#                             then fuzz; fails on any crash (reproducers: $(BUILD)/fuzz/artifacts)
#   make fuzz-findings        replay tests/fuzz/findings/ only
#   make raise-stats          the raise's optimisations on the test and bench BPF objects
#                             (forms, zero-extensions left out, bases reused; tests/fuzz/raise_stats.c)
FUZZ_CC ?= clang-14
FUZZ_SECONDS ?= 180
FUZZ_DIR := $(BUILD)/fuzz
FUZZ_BIN := $(FUZZ_DIR)/lower_fuzz
FUZZ_SEEDS := $(FUZZ_DIR)/seeds
FUZZ_CORPUS := $(FUZZ_DIR)/corpus
FUZZ_JIT := $(TOP)/rewrite/cfg.c $(TOP)/rewrite/helper_args.c $(LOWER_SRCS) $(TOP)/rewrite/raise.c $(TOP)/rewrite/loops.c \
	$(TOP)/rewrite/src_line.c
FUZZ_CFLAGS := -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -Wall -Wextra -Werror -I$(TOP)/rewrite
# Raw-instruction tests dumped as seeds (tests/fuzz/dump_progs.c).
FUZZ_DUMP_TESTS := $(wildcard $(TOP)/tests/arena_jit_test.c $(TOP)/tests/arena_adversarial_test.c \
	$(TOP)/tests/arena_loops_test.c)
# The libbpf 1.1 and loop objects of tests/progs/progs.mk, and upstream's.
FUZZ_BPF_OBJS = $(wildcard $(BPF_OBJS) $(BUILD)/tests/upstream/*.bpf.o $(LOOPS_OBJS))

FUZZ_FINDINGS := $(wildcard $(TOP)/tests/fuzz/findings/*.bin)

.PHONY: fuzz-build fuzz fuzz-seeds fuzz-findings

$(FUZZ_BIN): $(TOP)/tests/fuzz/lower_fuzz.c $(FUZZ_JIT) $(wildcard $(TOP)/rewrite/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_JIT)

$(FUZZ_DIR)/dump_%: $(TOP)/tests/%.c $(TOP)/tests/fuzz/dump_progs.c $(wildcard $(TOP)/tests/include/*.h)
	@mkdir -p $(dir $@)
	$(CC) -O0 -g -w -D_GNU_SOURCE -std=gnu11 -isystem $(HARNESS_DIR) -I$(TOP)/uapi \
		-I$(TOP)/lib/include -I$(TOP)/tests/include -DBPF_ARENA_VERSION='"fuzz"' \
		-DTEST_SRC='"$<"' -DTEST_NAME='"$*"' -o $@ $(TOP)/tests/fuzz/dump_progs.c -lpthread

## fuzz-seeds: the fuzzer's seed corpus from the tests' programs and BPF objects
fuzz-seeds: $(patsubst $(TOP)/tests/%.c,$(FUZZ_DIR)/dump_%,$(FUZZ_DUMP_TESTS))
	@rm -rf $(FUZZ_SEEDS) && mkdir -p $(FUZZ_SEEDS)
	@for t in $^; do DUMP_DIR=$(FUZZ_SEEDS) $$t >/dev/null 2>&1 || true; done
	@python3 $(TOP)/tests/fuzz/objseed.py $(FUZZ_SEEDS) $(FUZZ_BPF_OBJS)
	@cp $(TOP)/tests/fuzz/seeds/* $(FUZZ_SEEDS)/ 2>/dev/null || true
	@cp $(FUZZ_FINDINGS) $(FUZZ_SEEDS)/ 2>/dev/null || true
	@python3 $(TOP)/tests/fuzz/raise_seeds.py $(FUZZ_SEEDS)
	@echo "fuzz seeds: $$(ls $(FUZZ_SEEDS) | wc -l) in $(FUZZ_SEEDS)"

## fuzz-build: the libFuzzer target of the rewriter and its seeds
fuzz-build: $(FUZZ_BIN) fuzz-seeds

RAISE_STATS := $(FUZZ_DIR)/raise_stats
RAISE_STATS_OBJS = $(FUZZ_BPF_OBJS) $(wildcard $(BUILD)/bench/bpf/*.bpf.o)

$(RAISE_STATS): $(TOP)/tests/fuzz/raise_stats.c $(TOP)/tests/fuzz/lower_fuzz.c $(FUZZ_JIT) \
		$(wildcard $(TOP)/rewrite/*.h)
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -Wall -Wextra -Werror -I$(TOP)/rewrite -I$(TOP)/tests/fuzz -o $@ $< $(FUZZ_JIT)

.PHONY: raise-stats
## raise-stats: what the raise's optimisations do to the test and bench objects
raise-stats: $(RAISE_STATS)
	@rm -rf $(FUZZ_DIR)/stats-seeds
	@python3 $(TOP)/tests/fuzz/objseed.py $(FUZZ_DIR)/stats-seeds $(RAISE_STATS_OBJS)
	@$(RAISE_STATS) $(FUZZ_DIR)/stats-seeds/*

# Each past finding runs once (libFuzzer runs file arguments and exits); any failure fails.
## fuzz-findings: replay tests/fuzz/findings/ only
fuzz-findings: $(FUZZ_BIN)
	@$(FUZZ_BIN) $(FUZZ_FINDINGS) > $(FUZZ_DIR)/findings.log 2>&1 || \
		{ tail -40 $(FUZZ_DIR)/findings.log; echo "fuzz: a past finding fails again"; exit 1; }
	@echo "fuzz: $(words $(FUZZ_FINDINGS)) past findings replayed, no failure"

# One line of summary from libFuzzer's last stats line; non-zero exit on any crash.
## fuzz: replay past findings, then fuzz the rewriter FUZZ_SECONDS [180]
fuzz: fuzz-build fuzz-findings
	@mkdir -p $(FUZZ_CORPUS) $(FUZZ_DIR)/artifacts
	@rc=0; \
	$(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) -max_len=32768 -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/artifacts/ \
		$(FUZZ_CORPUS) $(FUZZ_SEEDS) > $(FUZZ_DIR)/fuzz.log 2>&1 || rc=$$?; \
	execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_DIR)/fuzz.log); \
	last=$$(grep -E '^#[0-9]+' $(FUZZ_DIR)/fuzz.log | tail -1); \
	cov=$$(echo "$$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p'); \
	ft=$$(echo "$$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p'); \
	crashes=$$(ls $(FUZZ_DIR)/artifacts | grep -c -E '^(crash|leak|timeout|oom)-' || true); \
	echo "fuzz: lower_fuzz $(FUZZ_SECONDS)s: execs $${execs:-?} cov $${cov:-?} ft $${ft:-?} corpus $$(ls $(FUZZ_CORPUS) | wc -l) crashes $$crashes (exit $$rc; log $(FUZZ_DIR)/fuzz.log)"; \
	if [ $$rc -ne 0 ] || [ $$crashes -ne 0 ]; then tail -40 $(FUZZ_DIR)/fuzz.log; exit 1; fi
