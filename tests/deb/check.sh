#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tests/deb/check.sh: the Debian packages, a step of `make check`.
#  1. `make deb` builds them in a copy of the checkout (what
#     packaging/deb.mk copies itself) that has no cache/ and no .git, with a
#     git that fails and a scripts/setup.sh and packaging/setup.sh that fail
#     loudly, and BPF_ARENA_SETUP_DONE unset: it needs only the
#     Build-Depends (dpkg-checkbuilddeps), never `make setup`; lintian is
#     clean (make deb runs it).
#  2. debian/control's Maintainer, debian/changelog's trailer and
#     debian/copyright's Upstream-Contact are one identity, the git one.
#  3. libbpfarena-dev holds the handbook (USAGE.md, PORTING.md, compressed
#     as dh_compress does) and every file of examples/ under
#     /usr/share/doc/libbpfarena-dev/examples, uncompressed and not
#     executable.  While the checkout has no examples/, the copy gets a
#     stand-in tree (two examples, a script with an executable bit, a file
#     over dh_compress's 4 KiB).
#  4. bpf-arena-dkms's postinst with the real dkms: tests/deb/postinst.sh.
# Output: kselftest-style "ok N name" lines and "# Totals:".
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
version=$(cat "$top/VERSION")
arch=$(dpkg --print-architecture)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 pass=0 fail=0
t() { # t NAME CMD...
	n=$((n + 1))
	if "${@:2}"; then echo "ok $n $1"; pass=$((pass + 1)); else echo "not ok $n $1"; fail=$((fail + 1)); fi
}

# 1. The copy, as make deb takes the checkout's files.
src="$tmp/src"
mkdir -p "$src"
(cd "$top" && git ls-files -co --exclude-standard -z |
	xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
	tar --null -T - -c) | tar -x -C "$src"
for s in scripts/setup.sh packaging/setup.sh; do
	printf '#!/bin/sh\necho "SETUP RAN: %s" >&2\ntouch %s\nexit 1\n' "$s" "$tmp/setup-ran" > "$src/$s"
	chmod 0755 "$src/$s"
done
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "git: not available in this check" >&2\nexit 1\n' > "$tmp/bin/git"
chmod 0755 "$tmp/bin/git"
stand_in=""
if [ ! -d "$top/examples" ]; then
	stand_in=1
	for e in hello list; do
		mkdir -p "$src/examples/$e"
		printf 'all:\n\t@echo %s\n' "$e" > "$src/examples/$e/Makefile"
		printf '// SPDX-License-Identifier: BSD-2-Clause\n/* %s: BPF side */\n' "$e" > "$src/examples/$e/$e.bpf.c"
		printf '// SPDX-License-Identifier: BSD-2-Clause\n/* %s: user side */\nint main(void) { return 0; }\n' "$e" > "$src/examples/$e/$e.c"
	done
	printf '#!/bin/sh\necho run\n' > "$src/examples/list/run.sh"
	chmod 0755 "$src/examples/list/run.sh" "$src/examples/hello/hello.c"
	{ echo '/* a long comment */'; for i in $(seq 200); do echo "/* line $i of a file over 4 KiB */"; done; } > "$src/examples/list/big.h"
	echo "# examples/ is not in the checkout: a stand-in tree is packaged"
fi
(cd "$src" && env -u BPF_ARENA_SETUP_DONE -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	PATH="$tmp/bin:$PATH" make -s deb) > "$tmp/deb.log" 2>&1
rc=$?
sed 's/^/# /' "$tmp/deb.log"
t deb_builds_without_setup_cache_git test $rc = 0
t setup_not_run test ! -e "$tmp/setup-ran"
t no_cache_created test ! -e "$src/cache"
t lintian_clean grep -q '^deb: lintian: 0 errors/warnings' "$tmp/deb.log"
debs="$src/build/deb"
for p in bpf-arena-dkms libbpfarena0 libbpfarena-dev bpf-arena-tools; do
	t "deb_${p//-/_}_built" test -f "$debs/${p}_${version}_$arch.deb"
done

# 2. One maintainer identity.
id_control=$(sed -n 's/^Maintainer: //p' "$top/debian/control")
id_changelog=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Maintainer)
id_copyright=$(sed -n 's/^Upstream-Contact: //p' "$top/debian/copyright")
id_deb=$(dpkg-deb -f "$debs/bpf-arena-dkms_${version}_$arch.deb" Maintainer 2>/dev/null)
echo "# Maintainer: $id_control; changelog: $id_changelog; Upstream-Contact: $id_copyright"
t maintainer_changelog_agree test "$id_control" = "$id_changelog"
t maintainer_copyright_agree test "$id_control" = "$id_copyright"
t maintainer_in_deb test "$id_control" = "$id_deb"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	# The project's identity is its git authors' (docs/INSTALL.md, "Install
	# from the Debian packages").
	t maintainer_is_a_git_author sh -c "git -C '$top' log --format='%an <%ae>' | grep -qxF '$id_control'"
fi

# 3. The developer package's documentation and examples.
dev="$debs/libbpfarena-dev_${version}_$arch.deb"
dpkg-deb -c "$dev" > "$tmp/dev.list" 2>/dev/null
doc=./usr/share/doc/libbpfarena-dev
for f in USAGE.md PORTING.md; do
	t "dev_doc_${f%.md}" grep -q " $doc/$f.gz\$" "$tmp/dev.list"
done
(cd "$src/examples" && find . -type f ! -name .gitignore | sed 's|^\./||' | LC_ALL=C sort) > "$tmp/ex.want"
grep " $doc/examples/" "$tmp/dev.list" | grep -v '^d' | sed "s|.* $doc/examples/||" | LC_ALL=C sort > "$tmp/ex.got"
echo "# examples: $(wc -l < "$tmp/ex.want") files in examples/, $(wc -l < "$tmp/ex.got") in the package"
t dev_examples_nonempty test -s "$tmp/ex.got"
t dev_examples_every_file diff "$tmp/ex.want" "$tmp/ex.got"
t dev_examples_not_executable sh -c "! grep ' $doc/examples/' '$tmp/dev.list' | grep -v '^d' | grep -q '^-..x\|^-.....x\|^-........x'"
if [ -n "$stand_in" ]; then
	t dev_examples_not_compressed grep -q " $doc/examples/list/big.h\$" "$tmp/dev.list"
fi

# 4. The postinst (a mount namespace with throw-away overlays).
"$top/tests/deb/postinst.sh" "$debs/bpf-arena-dkms_${version}_$arch.deb" > "$tmp/postinst.log" 2>&1
rc=$?
sed 's/^\(ok\|not ok\) [0-9]* /\1 postinst_/; s/^# Totals:/# postinst totals:/' "$tmp/postinst.log" > "$tmp/postinst.out"
while IFS= read -r line; do
	case $line in
	"ok postinst_"*) n=$((n + 1)); pass=$((pass + 1)); echo "ok $n ${line#ok }" ;;
	"not ok postinst_"*) n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n ${line#not ok }" ;;
	*) echo "# ${line#\# }" ;;
	esac
done < "$tmp/postinst.out"
t postinst_script_exits_0 test $rc = 0
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
