#!/usr/bin/env bash
# Compile-time checks of lib/include/bpf_arena.h, printed as KTAP (a step of
# `make check`): a program written for clang >= 19's implicit arena casts
# (tests/progs/bpf_header_implicit_casts.bpf.c) builds with clang-19, and clang-14
# stops at the header's #error with a message saying what to do, rather than
# building an object the verifier refuses at load time.  And upstream's loop
# macros (tests/progs/arena_loop_macros.bpf.c, no opt-in defines) build with
# every header set a Debian 12 user has: bookworm's libbpf 1.1 headers with
# clang-14 and clang-19, libbpf 1.4.6's (bookworm-backports), and a 7.3
# vmlinux.h, whose struct bpf_iter_num must not be defined twice.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
src="$top/tests/progs/bpf_header_implicit_casts.bpf.c"
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
flags=(-g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -Wall -Werror -I"$top/lib/include"
       -I/usr/include/"$(gcc -dumpmachine)")
n=0 pass=0 fail=0 skip=0
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok $n $2"; return; fi
	fail=$((fail + 1)); echo "# $2: $3"; sed 's/^/#   /' "$out/log"; echo "not ok $n $2"
}
echo "TAP version 13"
echo "1..7"

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

loops="$top/tests/progs/arena_loop_macros.bpf.c"
bpo_inc="$top/cache/backports/root/usr/include"
vmlinux73="$top/cache/linux-7.3/vmlinux.h"
for cc in clang-14 clang-19; do
	$cc "${flags[@]}" -c -o "$out/loops.o" "$loops" > "$out/log" 2>&1
	ok $? ${cc/-/}_builds_upstream_loop_macros_with_libbpf_1_1_headers "$cc failed"
done
clang-19 "${flags[@]}" -I"$bpo_inc" -c -o "$out/loops.o" "$loops" > "$out/log" 2>&1
ok $? clang19_builds_them_with_libbpf_1_4_headers "clang-19 with $bpo_inc failed"
name=clang19_builds_them_with_a_7_3_vmlinux_h
if [ -f "$vmlinux73" ]; then
	# As upstream's arena programs: vmlinux.h's kfunc prototypes off.
	sed 's|#include <linux/bpf.h>|#define BPF_NO_KFUNC_PROTOTYPES\n#include "vmlinux.h"|' \
		"$loops" > "$out/vmlinux_loops.bpf.c"
	clang-19 "${flags[@]}" -Wno-missing-declarations -I"$(dirname "$vmlinux73")" \
		-c -o "$out/loops.o" "$out/vmlinux_loops.bpf.c" > "$out/log" 2>&1
	ok $? $name "clang-19 with $vmlinux73 failed"
else
	n=$((n + 1)) skip=$((skip + 1)); echo "ok $n $name # SKIP no $vmlinux73 (scripts/setup-linux-7.3.sh fetches it)"
fi

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ $fail = 0 ]
