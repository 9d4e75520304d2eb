# `make stress`: a bounded concurrent load on the arena surfaces in a 2-vCPU VM
# (tests/stress/: arena_stress.c is the load, guest.sh runs it with the security
# tests as background load and checks memory afterwards).  Not part of `make check`.
#
#   make stress [STRESS_SECONDS=120] [STRESS_KERNEL=6.1|debug] [SEED=S]
#   make stress-faults [...]   the same with failslab/fail_page_alloc on the load's
#                              threads (debug kernel: fault injection is not in
#                              Debian's config)

STRESS_SECONDS ?= 120
STRESS_KERNEL ?= 6.1
STRESS_BIN := $(BUILD)/tests/arena_stress

$(STRESS_BIN): $(TOP)/tests/stress/arena_stress.c $(wildcard $(TOP)/tests/include/*.h) $(wildcard $(TOP)/uapi/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -lpthread

userspace: $(STRESS_BIN)

.PHONY: stress stress-faults
## stress: the stress run in a VM (STRESS_SECONDS, STRESS_KERNEL, SEED)
stress: $(STRESS_BIN)
	$(TOP)/tests/vm/run --kernel $(STRESS_KERNEL) --timeout $$(( $(STRESS_SECONDS) * 4 + 600 )) \
		--file $(TOP)/tests/stress/guest.sh -- sh /opt/bpf-arena/bin/guest.sh $(STRESS_SECONDS) $(or $(SEED),0)

# Fault injection makes the stock kernel WARN where it does not expect a failure:
# 6.1's alloc_vmap_area() WARNs when its GFP_NOWAIT vmap_area allocation fails
# (mm/vmalloc.c, adjust_va_to_fit_type(); reached by the arena window's
# get_vm_area()).  Only that line is accepted; any other report fails the run.
FAULTS_ALLOW := --allow-warning 'mm/vmalloc.c:[0-9]+ alloc_vmap_area'

## stress-faults: the stress run with fault injection on the debug kernel
stress-faults: $(STRESS_BIN)
	$(TOP)/tests/vm/run --kernel $(or $(filter-out 6.1,$(STRESS_KERNEL)),debug) $(FAULTS_ALLOW) \
		--timeout $$(( $(STRESS_SECONDS) * 4 + 600 )) \
		--file $(TOP)/tests/stress/guest.sh -- sh /opt/bpf-arena/bin/guest.sh $(STRESS_SECONDS) $(or $(SEED),0) faults

# `make fuzz-syscalls SECONDS=N SEED=S [FUZZ_KERNEL=debug|6.1]`: the seeded,
# bounded syscall-sequence fuzzer (tests/stress/arena_syscall_fuzz.c) in a VM;
# the same SEED replays the same sequence.  Fails on any finding or kernel report.
SECONDS ?= 300
FUZZ_KERNEL ?= debug
SYSFUZZ_BIN := $(BUILD)/tests/arena_syscall_fuzz

$(SYSFUZZ_BIN): $(TOP)/tests/stress/arena_syscall_fuzz.c $(wildcard $(TOP)/tests/include/*.h) $(wildcard $(TOP)/uapi/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $<

userspace: $(SYSFUZZ_BIN)

.PHONY: fuzz-syscalls
## fuzz-syscalls: the seeded syscall-sequence fuzzer in a VM (SECONDS, SEED)
fuzz-syscalls: $(SYSFUZZ_BIN) $(STRESS_BIN)
	$(TOP)/tests/vm/run --kernel $(FUZZ_KERNEL) --timeout $$(( $(SECONDS) * 3 + 900 )) \
		--file $(TOP)/tests/stress/guest.sh -- sh /opt/bpf-arena/bin/guest.sh $(SECONDS) $(or $(SEED),1) fuzz
