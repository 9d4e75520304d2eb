#!/usr/bin/env bash
# Compile-time checks of lib/include/bpf_arena.h, printed as KTAP (a step of
# `make check`): a program written for clang >= 19's implicit arena casts
# (tests/progs/bpf_header_implicit_casts.bpf.c) builds with clang-19, and clang-14
# stops at the header's #error with a message saying what to do, rather than
# building an object the verifier refuses at load time.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
src="$top/tests/progs/bpf_header_implicit_casts.bpf.c"
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
flags=(-g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror -I"$top/lib/include"
       -I/usr/include/"$(gcc -dumpmachine)")
n=0 pass=0 fail=0
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok $n $2"; return; fi
	fail=$((fail + 1)); echo "# $2: $3"; sed 's/^/#   /' "$out/log"; echo "not ok $n $2"
}
echo "TAP version 13"
echo "1..3"

clang-19 "${flags[@]}" -c -o "$out/v3.o" "$src" > "$out/log" 2>&1
ok $? clang19_builds_a_program_relying_on_implicit_casts "clang-19 failed"

clang-14 "${flags[@]}" -c -o "$out/asm.o" "$src" > "$out/log" 2>&1
rc=$?
[ $rc != 0 ] && grep -q 'bpf_arena.h.*error:.*needs clang >= 19, or use the explicit cast macros' "$out/log" &&
	[ ! -e "$out/asm.o" ]
ok $? clang14_stops_with_needs_clang_19_or_explicit_casts \
	"expected clang-14 to fail at bpf_arena.h's #error (rc $rc)"

# Saying the casts are explicit lifts the error (the object then is the
# programmer's responsibility, as with upstream's BPF_ARENA_FORCE_ASM).
clang-14 "${flags[@]}" -DBPF_ARENA_EXPLICIT_CASTS -c -o "$out/asm.o" "$src" > "$out/log" 2>&1
ok $? clang14_builds_it_with_bpf_arena_explicit_casts "clang-14 -DBPF_ARENA_EXPLICIT_CASTS failed"

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
