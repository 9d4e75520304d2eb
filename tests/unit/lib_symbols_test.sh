#!/usr/bin/env bash
# libbpfarena's ABI, printed as KTAP (a step of `make check`): the shared
# library exports exactly the functions its public headers declare
# (bpf_arena_lib.h, bpf_arena_libbpf.h), every one of them and nothing else,
# and none under the BPF kfuncs' names (bpf_arena_alloc_pages,
# bpf_arena_free_pages, bpf_arena_reserve_pages), which programs declare with
# other prototypes.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
so=${1:-$(ls "$top"/build/lib/libbpfarena.so.* 2>/dev/null | head -n1)}
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
echo "TAP version 13"
echo "1..3"
if [ ! -f "$so" ]; then
	echo "# no libbpfarena.so under build/lib (make lib)"; echo "not ok 1 library_built"
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"; exit 1
fi
nm -D --defined-only "$so" | awk '$2 == "T" { print $3 }' | sort > "$out/exported"
# A declaration: a line that starts with a type and has "bpf_arena_NAME(".
sed -n 's/^[a-z_].*[ *]\(bpf_arena_[a-z0-9_]*\)(.*/\1/p' \
	"$top/lib/include/bpf_arena_lib.h" "$top/lib/include/bpf_arena_libbpf.h" | sort -u > "$out/declared"
pass=0 fail=0
check() {
	if [ -s "$out/$2" ]; then
		fail=$((fail + 1)); echo "# $3:"; sed 's/^/#   /' "$out/$2"; echo "not ok $1 $4"
	else
		pass=$((pass + 1)); echo "ok $1 $4"
	fi
}
comm -13 "$out/exported" "$out/declared" > "$out/missing"
check 1 missing "declared but not exported" every_declared_function_is_exported
comm -23 "$out/exported" "$out/declared" > "$out/extra"
check 2 extra "exported but not declared" nothing_else_is_exported
grep -xE 'bpf_arena_(alloc|free|reserve)_pages' "$out/exported" > "$out/kfunc" || true
check 3 kfunc "exported under a kfunc's name" no_kfunc_name_is_exported
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
