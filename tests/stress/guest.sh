#!/bin/sh
# Guest side of `make stress` / `make stress-faults` / `make check-faults`
# (tests/stress/stress.mk, scripts/debug-kernel.mk), run by tests/vm/run:
#
#   guest.sh SECONDS SEED          arena_stress for SECONDS with the two security
#                                  tests looping as background load
#   guest.sh SECONDS SEED faults   the same, failslab + fail_page_alloc failing
#                                  the stress threads' ioctl/bpf calls (task filter)
#   guest.sh SECONDS SEED fuzz     arena_syscall_fuzz (make fuzz-syscalls)
#   guest.sh 0 0 suite-faults      the whole kselftest suite with every test
#                                  process failing allocations (task filter)
#
# Then, every mode: the module's references must drop to 0 and it must unload,
# and MemAvailable (with the per-CPU free lists) must be back within MEM_SLACK_KB of the baseline taken after
# a warm-up (kmemleak, on the debug kernel, is checked by tests/vm/init after
# this script).  Last line: "# Totals: ..." (ok/not ok per check).
secs=${1:-120} seed=${2:-0} mode=${3:-stress}
[ "$seed" = 0 ] && seed=$(date +%s)
MEM_SLACK_KB=${MEM_SLACK_KB:-16384}
bin=/opt/bpf-arena/tests
pass=0 fail=0 n=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n $1"; }
notok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $1"; }
# MemAvailable plus the pages on per-CPU free lists (/proc/zoneinfo counts),
# which it leaves out: where pages are freed must not look like pages kept.
avail() {
	echo $(( $(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) + \
		 $(awk '/^ +count:/ { s += $2 } END { print s * 4 }' /proc/zoneinfo) ))
}
# Shrinking every slab cache also empties KASAN's quarantine of its objects
# (kmem_cache_shrink() -> kasan_cache_shrink()): on the debug kernel freed
# objects otherwise wait there, up to 1/32 of RAM (64 MiB in this guest), which
# a 30-minute fuzz run filled (MemAvailable 67 MB lower, kmemleak clean).
settle() {
	sync; echo 3 > /proc/sys/vm/drop_caches
	for f in /sys/kernel/slab/*/shrink; do echo 1 > "$f" 2>/dev/null; done
	sleep 1
}
refcnt() { cat /sys/module/bpf_arena/refcnt 2>/dev/null || echo gone; }
# Where memory went: /proc/meminfo and /proc/vmstat fields that moved by at
# least 1 MiB (vmstat nr_* counts pages) since the baseline, and the memory
# cgroups still dying, so that a failed memory_back names its suspect.
snapshot() { cat /proc/meminfo > /tmp/meminfo.$1; grep '^nr_' /proc/vmstat > /tmp/vmstat.$1; }
mem_diff() {
	snapshot now
	awk 'NR == FNR { b[$1] = $2; next } ($1 in b) { d = $2 - b[$1]; if (d >= 1024 || d <= -1024) printf "# guest:   %s %+d kB\n", $1, d }' \
		/tmp/meminfo.base /tmp/meminfo.now
	awk 'NR == FNR { b[$1] = $2; next } ($1 in b) { d = $2 - b[$1]; if (d >= 256 || d <= -256) printf "# guest:   %s %+d pages\n", $1, d }' \
		/tmp/vmstat.base /tmp/vmstat.now
	[ -r /sys/fs/cgroup/cgroup.stat ] && sed 's/^/# guest:   cgroup.stat /' /sys/fs/cgroup/cgroup.stat
}

fault_setup() { # fault_setup PROBABILITY%: task-filtered failslab and fail_page_alloc
	for f in failslab fail_page_alloc; do
		d=/sys/kernel/debug/$f
		if [ ! -d $d ]; then
			echo "# guest: no $d: this kernel has no fault injection (use --kernel debug)"
			return 1
		fi
		echo Y > $d/task-filter
		echo "$1" > $d/probability
		echo 1 > $d/interval
		echo -1 > $d/times
		echo 0 > $d/space
		echo 0 > $d/verbose
		echo N > $d/ignore-gfp-wait
	done
	echo N > /sys/kernel/debug/failslab/cache-filter
	echo 0 > /sys/kernel/debug/fail_page_alloc/min-order
	echo N > /sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem
}

# Background load: a test binary in a loop until /tmp/stress.stop exists.  Its
# own assertions may fail under the interference (it lowers the module's
# global arena caps, counts arenas, measures memory): what counts is that it
# is never killed by a signal.
bg_loop() {
	runs=0 crashes=0
	while [ ! -e /tmp/stress.stop ]; do
		"$bin/$1" > /tmp/bg.$1.log 2>&1 &
		echo $! > /tmp/bg.$1.pid
		runs=$((runs + 1))
		wait $!
		rc=$?
		[ -e /tmp/stress.stop ] && break	# stopped by us, below
		if [ $rc -ge 128 ]; then
			crashes=$((crashes + 1))
			echo "# guest: $1 killed by signal $((rc - 128))"
			tail -n 20 /tmp/bg.$1.log
		fi
	done
	echo "$runs $crashes" > /tmp/bg.$1.result
}

params=/sys/module/bpf_arena/parameters
saved=$(for f in $params/*; do [ -w "$f" ] && echo "$f $(cat "$f")"; done)
restore_params() { # the security tests change them and may be stopped midway
	echo "$saved" | while read -r f v; do [ -n "$f" ] && echo "$v" > "$f"; done
}

# warm-up: slab caches and the module's lazily built state, then the baseline
"$bin/arena_stress" 5 "$seed" > /tmp/warmup.log 2>&1 || { cat /tmp/warmup.log; notok warmup_stress_run; }
settle
base=$(avail)
snapshot base
echo "# guest: MemAvailable baseline ${base} kB, module refcnt $(refcnt)"

case "$mode" in
stress|faults)
	rm -f /tmp/stress.stop
	bg_loop arena_load_security_test & bg1=$!
	bg_loop arena_dev_security_test & bg2=$!
	if [ "$mode" = faults ]; then
		fault_setup 10 || { notok fault_injection_available; echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"; exit 1; }
		export BPF_ARENA_STRESS_FAULTS=1
		# No rseq area: a thread's make-it-fail covers its return to user
		# mode too, where the kernel writes the thread's rseq area; after a
		# fork that page is copy-on-write, the injected failure of the copy
		# makes the write fail and the kernel kills the thread with SIGSEGV
		# (si_code SI_KERNEL, address 0: force_sigsegv() in
		# rseq_handle_notify_resume()).  That was stress-faults' rc=3 ("signal
		# 11 (code 128) at (nil) in thread progs"): the stock kernel's, not
		# the module's.  glibc 2.35+ registers rseq unless told not to.
		export GLIBC_TUNABLES=glibc.pthread.rseq=0
	fi
	"$bin/arena_stress" "$secs" "$seed"
	rc=$?
	unset BPF_ARENA_STRESS_FAULTS GLIBC_TUNABLES
	touch /tmp/stress.stop
	for t in arena_load_security_test arena_dev_security_test; do
		kill "$(cat /tmp/bg.$t.pid)" 2>/dev/null
	done
	wait $bg1 $bg2
	restore_params
	if [ $rc -eq 0 ]; then ok "arena_stress_$mode"; else notok "arena_stress_$mode (rc=$rc)"; fi
	for t in arena_load_security_test arena_dev_security_test; do
		read -r runs crashes < /tmp/bg.$t.result
		echo "# guest: background $t: $runs runs started, $crashes killed by a signal"
		echo "# guest: its last run: $(grep '^# Totals' /tmp/bg.$t.log)"
		if [ "$crashes" = 0 ] && [ "$runs" -gt 0 ]; then ok "background_${t}_never_crashed"; else notok "background_${t}_never_crashed"; fi
	done
	;;
fuzz)
	"$bin/arena_syscall_fuzz" "$secs" "$seed"
	rc=$?
	if [ $rc -eq 0 ]; then ok fuzz_syscalls_no_finding; else notok "fuzz_syscalls_no_finding (rc=$rc)"; fi
	;;
suite-faults)
	fault_setup 5 || { notok fault_injection_available; echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"; exit 1; }
	# Every test process fails allocations (the suite sets make-it-fail in
	# each test, not in the shells: a shell failing its own allocations died
	# with SIGSEGV before the first test).  Test assertions fail then, by
	# design; what counts is the kernel's log, the module's clean unload and
	# the memory.
	SUITE_MAKE_IT_FAIL=1 sh /opt/bpf-arena/bin/suite > /tmp/suite.log 2>&1
	echo "# guest: suite under fault injection: $(grep '^suite:' /tmp/suite.log)"
	grep -E '^not ok' /tmp/suite.log | head -n 40 | sed 's/^/# guest:   /'
	if grep -q '^suite:' /tmp/suite.log; then ok suite_ran_to_the_end_under_faults; else tail -n 30 /tmp/suite.log; notok suite_ran_to_the_end_under_faults; fi
	;;
esac

# Everything back: references, module unload, memory.
for f in failslab fail_page_alloc; do [ -d /sys/kernel/debug/$f ] && echo 0 > /sys/kernel/debug/$f/probability; done
i=0
while [ "$(refcnt)" != 0 ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
if [ "$(refcnt)" = 0 ]; then ok module_references_dropped; else notok "module_references_dropped (refcnt $(refcnt))"; fi
settle
after=$(avail)
echo "# guest: MemAvailable after ${after} kB (baseline ${base} kB, delta $((base - after)) kB, slack ${MEM_SLACK_KB} kB)"
if [ $((base - after)) -le "$MEM_SLACK_KB" ]; then ok memory_back; else mem_diff; notok memory_back; fi
if rmmod bpf_arena; then ok module_unloads; else notok module_unloads; fi
settle
echo "# guest: MemAvailable after unload $(avail) kB"
# (MemFree in the diff leaves the per-CPU free lists out; avail() counts them)
[ $((base - $(avail))) -le "$MEM_SLACK_KB" ] || { echo "# guest: since the baseline, after unload:"; mem_diff; }
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail -eq 0 ]
