#!/usr/bin/env bash
# `make check`: style, the VM runner's own tests, and the whole kselftest suite
# in a VM on each kernel.  Ends with one line "N passed, N failed, N skipped".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
pass=0 fail=0 skip=0
logdir="$top/build/check"; mkdir -p "$logdir"

# add_totals LOG: add the "# Totals:" (kselftest) or "suite:" counts found in LOG.
add_totals() {
	local line p f s e
	line=$(grep -a -E '^(# Totals:|suite:)' "$1" | tail -n1)
	if [ -z "$line" ]; then echo "check: no totals in $1: one failure"; fail=$((fail + 1)); return 1; fi
	case "$line" in
	suite:*)
		p=$(sed -n 's/^suite: \([0-9]*\) passed.*/\1/p' <<<"$line")
		f=$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$line")
		s=$(sed -n 's/.* \([0-9]*\) skipped.*/\1/p' <<<"$line")
		e=0 ;;
	*)
		p=$(sed -n 's/.* pass:\([0-9]*\).*/\1/p' <<<"$line")
		f=$(sed -n 's/.* fail:\([0-9]*\).*/\1/p' <<<"$line")
		s=$(sed -n 's/.*skip:\([0-9]*\).*/\1/p' <<<"$line")
		e=$(sed -n 's/.*error:\([0-9]*\).*/\1/p' <<<"$line") ;;
	esac
	pass=$((pass + p)); fail=$((fail + f + e)); skip=$((skip + s))
}

# step NAME CMD...: run one step with its output in build/check/NAME.log.
step() {
	local name=$1; shift
	echo "=== $name"
	"$@" > "$logdir/$name.log" 2>&1
	local rc=$?
	cat "$logdir/$name.log"
	add_totals "$logdir/$name.log"
	if [ $rc -ne 0 ] && ! grep -aqE '( fail:[1-9]|[1-9][0-9]* failed)' "$logdir/$name.log"; then
		echo "check: $name exited $rc with no failed test: one failure"; fail=$((fail + 1))
	fi
}

style() {
	if make -s checkpatch; then
		echo "ok 1 checkpatch_clean"; echo "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0"
	else
		echo "not ok 1 checkpatch_clean"; echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"; return 1
	fi
}

# A bounded libFuzzer run over the lowering and the raise (tests/fuzz/).
fuzz() {
	if make -s fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-90}"; then
		echo "ok 1 fuzz_lowering_and_raise_no_crash"; echo "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0"
	else
		echo "not ok 1 fuzz_lowering_and_raise_no_crash"; echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"; return 1
	fi
}

step style style
# make deb without make setup, lintian, the packages' contents, the postinst.
step deb tests/deb/check.sh
step dkms-other-kernels tests/dkms/install-other-kernels.sh
step fuzz fuzz
# The loop pass in user space (tests/unit/, docs/LOOPS.md), plain and ASan/UBSan.
step loops-unit make -s loops-unit
step bpf-header tests/unit/bpf_header_test.sh
step lib-symbols tests/unit/lib_symbols_test.sh
# The README's first program is examples/first/, byte for byte.
step readme-examples tests/unit/readme_examples_test.sh
step vm-runner tests/vm/selftest
step suite-6.1 tests/vm/run --kernel 6.1 -- suite
step suite-6.12 tests/vm/run --kernel 6.12 -- suite
# The device's caps on a 4-level-paging guest (-cpu max has LA57).
step dev-no5lvl tests/vm/run --kernel 6.1 --append no5lvl -- arena_dev_security_test

echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
