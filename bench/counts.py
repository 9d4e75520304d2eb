#!/usr/bin/env python3
"""bench/counts.py OUT_LOG COUNTS_TXT ROUND KERNEL: the counting boot's CSV rows.

Pairs the guest's `COUNT name iters` lines (bench/arena_bench.c -c) in order
with the plugin's `seq count vcpu` lines (bench/plugin/insn_count.c) and prints
`round,kernel,workload,value,unit` rows: per-iteration figures from two sizes
((min at 2N - min at N) / N) when at each size two repetitions agree on the
minimum (a reproducible, interrupt-free count), else
(min at 2N) / 2N (amortised, unit says so), whole counts (iters 0) as their
minimum, and
`<name>_rep_spread` (max - min over the repetitions, in instructions: 0 when
every repetition counted the same).
"""
import sys
from collections import defaultdict

out_log, counts_txt, rnd, kern = sys.argv[1:5]
names = [l.rstrip('\n').split('\t')[1:3] for l in open(out_log, errors='replace')
         if l.startswith('COUNT\t')]
counts = [l.split() for l in open(counts_txt) if l.strip()]
if len(names) != len(counts):
    sys.exit(f'counts.py: {len(names)} COUNT lines but {len(counts)} plugin lines')
m = defaultdict(list)
for (name, iters), (seq, cnt, vcpu) in zip(names, counts):
    if name == 'warmup':
        continue
    if int(cnt) < 0:
        sys.exit(f'counts.py: {name}: start and stop markers on different vCPUs')
    m[(name, int(iters))].append(int(cnt))
rows = {}
by_name = defaultdict(dict)
for (name, iters), v in m.items():
    by_name[name][iters] = v
for name, sizes in by_name.items():
    spread = max(max(v) - min(v) for v in sizes.values())
    if 0 in sizes:
        rows[name] = (min(sizes[0]), 'insns')
    else:
        a, b = sorted(sizes)[:2]
        # a minimum that two repetitions reproduced exactly is the clean count
        if all(v.count(min(v)) >= 2 for v in (sizes[a], sizes[b])):
            rows[name] = ((min(sizes[b]) - min(sizes[a])) / (b - a), 'insns/iter')
        else:  # allocator state varies: amortised over the larger size (fixed cost included)
            rows[name] = (min(sizes[b]) / b, 'insns/iter, amortised')
    rows[name + '_rep_spread'] = (spread, 'insns')
w, wo = rows.get('load_nonarena_3progs_with_module'), rows.get('load_nonarena_3progs')
if w and wo:
    rows['load_nonarena_module_overhead'] = ((w[0] / wo[0] - 1) * 100, '%')
for name, (v, unit) in rows.items():
    print(f'{rnd},{kern},{name},{v:.4f},{unit}')
