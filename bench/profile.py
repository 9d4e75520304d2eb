#!/usr/bin/env python3
"""bench/profile.py PROF KALLSYMS [N]: where the profiled instructions went.

PROF: `address count` lines of bench/plugin/insn_count.c (profile=FILE);
KALLSYMS: the guest's /proc/kallsyms (boot with nokaslr, read as root).
Prints the N (40) functions with the most instructions and their share."""
import bisect, sys
from collections import Counter

prof, ksyms = sys.argv[1], sys.argv[2]
top = int(sys.argv[3]) if len(sys.argv) > 3 else 40
syms = []
for l in open(ksyms):
    f = l.split()
    if len(f) >= 3 and f[1].lower() == 't':
        syms.append((int(f[0], 16), f[2] + (' ' + f[3] if len(f) > 3 else '')))
syms.sort()
addrs = [a for a, _ in syms]
c = Counter()
for l in open(prof):
    a, n = l.split()
    a = int(a, 16)
    i = bisect.bisect_right(addrs, a) - 1
    c[syms[i][1] if i >= 0 else hex(a)] += int(n)
tot = sum(c.values())
print(f'total {tot}')
for s, n in c.most_common(top):
    print(f'{n:10d} {100 * n / tot:5.1f}%  {s}')
