# The sanitizer tier, included by the top-level Makefile (not part of `make check`:
# the one-time kernel build alone is longer than CI's budget; see README "Testing").
#
#   make debug-kernel          build (once per machine, cached in cache/debug-kernel/)
#                              a 6.1 kernel from Debian's linux-source-6.1 with KASAN,
#                              lockdep, KFENCE, kmemleak, fault injection and BTF
#   make check-debug           build it if needed, build the module against it and run
#                              the whole VM suite on it; fails on any KASAN, lockdep,
#                              WARN, BUG or kmemleak report (tests/vm/run --kernel debug)
#   make check-faults          the suite and the stress run on the debug kernel with
#                              failslab and fail_page_alloc on (tests/stress/faults)
#
# DEBUG_TIMEOUT [5400]: seconds the suite VM may run (KASAN+lockdep under TCG is slow).

DEBUG_TIMEOUT ?= 5400

.PHONY: debug-kernel check-debug check-faults
## debug-kernel: build the KASAN/lockdep 6.1 kernel (cached)
debug-kernel:
	nice -n 10 $(TOP)/scripts/debug-kernel.sh build

## check-debug: the VM suite on the debug kernel
check-debug: debug-kernel
	$(TOP)/tests/vm/run --kernel debug --timeout $(DEBUG_TIMEOUT) -- suite

# `make check-kernels [ALL=1]`: the module and the VM suite on the Debian 12 6.1
# kernels apt lists now (amd64, cloud-amd64, rt-amd64); default the oldest and
# newest ABI of each flavour, ALL=1 every ABI; KERNELS="6.1.0-N-FLAVOUR ..." picks.
.PHONY: check-kernels
## check-kernels: module and VM suite on other Debian 6.1 kernels (ALL=1, KERNELS=)
check-kernels:
	$(TOP)/scripts/check-kernels.sh $(if $(ALL),--all) $(if $(RESUME),--resume) $(KERNELS)

# `make check-faults`: fault injection on the debug kernel (Debian's config has
# none): the whole suite with every test process failing 5% of its slab and page
# allocations (task filter; assertions fail by design, the kernel log, the module's
# clean unload, the memory and kmemleak decide), then `make stress-faults`.
## check-faults: the suite and stress with fault injection on the debug kernel
check-faults: debug-kernel $(STRESS_BIN)
	$(TOP)/tests/vm/run --kernel debug --timeout $(DEBUG_TIMEOUT) $(FAULTS_ALLOW) \
		--file $(TOP)/tests/stress/guest.sh -- sh /opt/bpf-arena/bin/guest.sh 0 0 suite-faults
	$(MAKE) -s stress-faults STRESS_KERNEL=debug
