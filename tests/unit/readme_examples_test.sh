#!/usr/bin/env bash
# The README's "A first arena program" is examples/first/, byte for byte,
# printed as KTAP (a step of `make check`): the section's first ```c block
# must be examples/first/first.bpf.c and its second examples/first/first.c,
# so the code the README shows is the code examples_test builds and runs on
# both kernels, and the two cannot drift apart.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
readme=${README:-$top/README.md}
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
# The section, from its heading to the next "## " heading.
awk '/^## A first arena program$/ { on = 1; next } on && /^## / { exit } on' "$readme" > "$out/section"
# Block N of the section: the lines between "```c" and the next "```".
block() { awk -v want="$1" '/^```c$/ { n++; on = (n == want); next } /^```$/ { on = 0 } on' "$out/section"; }
echo "TAP version 13"
echo "1..2"
pass=0 fail=0 n=0
for f in first.bpf.c first.c; do
	n=$((n + 1))
	block "$n" > "$out/$f"
	if [ -s "$out/$f" ] && cmp -s "$out/$f" "$top/examples/first/$f"; then
		pass=$((pass + 1)); echo "ok $n readme_block_${n}_is_examples_first_${f//./_}"
	else
		fail=$((fail + 1))
		echo "# README.md \"A first arena program\", code block $n, and examples/first/$f differ:"
		diff -u "$out/$f" "$top/examples/first/$f" | sed 's/^/#   /'
		echo "not ok $n readme_block_${n}_is_examples_first_${f//./_}"
	fi
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" -eq 0 ]
