#!/usr/bin/env python3
"""bench/report.py: the tables, markdown and plots of one `make bench` run.

Primary: the exact guest instruction counts (--count-csv, bench/counts.py rows):
per workload the 6.1+module and 6.12 counts, their ratio, the issue's goal, and
whether the counting rounds agreed.  Secondary: the TCG times (--csv, raw rows
round,kernel,workload,value,unit; median/min/max per kernel over the rounds,
ratio of medians 6.1+module / 6.12).  Writes OUT.md, OUT.png (instruction
ratios) and OUT-time.png (time ratios) with gnuplot."""
import argparse, csv, os, shutil, statistics, subprocess, sys
from collections import defaultdict

# workload -> (description, goal kind)
DESC = {
    "bpf_ldst_loop_4acc": ("BPF raw loop: bpf_loop callback with 2 arena loads + 2 stores", "bpf"),
    "bpf_empty_loop": ("BPF raw loop, same callback without arena accesses (reference)", "ref"),
    "bpf_ldst_minus_empty_4acc": ("BPF raw loop: cost of the 4 arena accesses (difference)", "ref"),
    "bpf_list_add_del_1000": ("BPF arena_list: add 1000 + delete all", "bpf"),
    "bpf_list_add_del_100k": ("BPF arena_list: add 100k + delete all", "bpf"),
    "bpf_htab_10k_upd_10k_lookup": ("BPF arena_htab: 10k updates + 10k lookups (1000 keys)", "bpf"),
    "bpf_alloc_free_1page": ("BPF bpf_arena_alloc_pages+free_pages, 1 page", "bpf"),
    "bpf_alloc_free_512pages": ("BPF bpf_arena_alloc_pages+free_pages, 512 pages", "bpf"),
    "user_fault_in_1thr": ("user fault-in of 16384 pages, 1 thread", "fault"),
    "user_fault_in_4thr": ("user fault-in of 16384 pages, 4 threads", "fault"),
    "lib_alloc_free_1page": ("libbpfarena alloc+free, 1 page (module only)", "info"),
    "lib_alloc_free_512pages": ("libbpfarena alloc+free, 512 pages (module only)", "info"),
    "load_arena_raw_prog": ("load: raw arena loop program (2 funcs, 4 accesses)", "info"),
    "load_arena_obj_libbpf": ("load: bench object with libbpf (4 progs, arena created)", "info"),
    "load_nonarena_3progs": ("load: 3 non-arena programs, no module", "info"),
    "load_nonarena_3progs_with_module": ("load: 3 non-arena programs, module loaded (6.1)", "info"),
    "load_nonarena_module_overhead": ("load: non-arena overhead of the module on 6.1 (with/without - 1)", "loadovh"),
    "mem_arena_4g_1pct": ("memory: 4 GiB arena, 1% of pages touched (MemFree delta)", "info"),
    "mem_arena_4g_10pct": ("memory: 4 GiB arena, 10% touched", "info"),
    "mem_array_4g_extrapolated": ("memory: BPF_F_MMAPABLE array, 512 MiB measured x 8 = 4 GiB", "info"),
    "mem_array_over_arena_1pct": ("memory: array / arena at 1% touched", "sparse"),
    "code_jit_bytes_per_access": ("code: JITed bytes per arena access (64 accesses)", "info"),
    "code_x86_insns_per_access": ("code: x86 instructions per arena access (objdump)", "info"),
    "code_xlated_insns_per_access": ("code: xlated BPF insns per arena access", "info"),
    "code_jit_bytes_prog0": ("code: JITed bytes of the program with 0 accesses", "info"),
    "code_loop_cb_jit_bytes": ("code: JITed bytes of the raw loop's callback", "info"),
    "code_loop_cb_x86_insns": ("code: x86 insns executed per raw loop iteration (callback)", "info"),
    "code_loop_cb_empty_x86_insns": ("code: same for the callback without accesses", "info"),
}
ORDER = list(DESC)

# Counted workloads (bench/arena_bench.c -c): description, goal (max ratio, or
# max % for the overhead row; None: no goal).
CDESC = {
    "bpf_8_loads_per_iter": ("bpf_loop callback with 8 u64 arena loads through one base", None),
    "bpf_16_loads_per_iter": ("same, 16 loads", 1.20),
    "bpf_8_stores_per_iter": ("bpf_loop callback with 8 u64 arena stores through one base", None),
    "bpf_16_stores_per_iter": ("same, 16 stores", 1.20),
    "bpf_ldst_loop_4acc_per_iter": ("the raw loop: 2 loads + 2 stores with ALU between", None),
    "list_walk_16hops_per_iter": ("arena_list walk, 16 hops per bpf_loop iteration", 1.30),
    "list_add_del_per_elem": ("arena_list add + delete, per element", 1.10),
    "htab_upd_lookup_per_op": ("arena_htab update + lookup, per key", 1.10),
    "alloc_free_1page_per_op": ("bpf_arena_alloc_pages + free_pages of 1 page", 1.05),
    "user_fault_in_per_page": ("user-space write fault-in, per page", 1.05),
    "load_arena_prog_128acc": ("BPF_PROG_LOAD of a straight-line program with 128 arena accesses", 1.5),
    "load_arena_raw_loop_prog": ("BPF_PROG_LOAD of the raw loop program (2 funcs, 4 accesses)", None),
    "load_nonarena_3progs": ("BPF_PROG_LOAD of 3 non-arena programs (6.1: module unloaded)", None),
    "load_nonarena_3progs_with_module": ("same, module loaded (6.1)", None),
    "load_nonarena_module_overhead": ("non-arena load overhead of the module on 6.1, %", 0.5),
}


def count_section(path, out):
    """The instruction-count table (markdown lines) and plot rows."""
    vals = defaultdict(lambda: defaultdict(dict))
    units = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            vals[row["workload"]][row["kernel"]][row["round"]] = float(row["value"])
            units[row["workload"]] = row["unit"]
    names = [w for w in CDESC if w in vals] + sorted(
        w for w in vals if w not in CDESC and not w.endswith("_rep_spread"))
    lines = ["| workload | unit | 6.1+module | 6.12 | ratio | goal | rounds agree |",
             "|---|---|---|---|---|---|---|"]
    plot, nondet = [], []

    def fmt(x):
        return "n/a" if x is None else f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"

    for w in names:
        v61, v612 = vals[w].get("6.1", {}), vals[w].get("6.12", {})
        agree = all(len(set(round(x, 3) for x in v.values())) <= 1 for v in (v61, v612) if v)
        if not agree:
            nondet.append(w)
        a = min(v61.values()) if v61 else None
        b = min(v612.values()) if v612 else None
        ratio = a / b if a is not None and b else None
        goal = CDESC.get(w, ("", None))[1]
        g = ""
        if w == "load_nonarena_module_overhead" and a is not None:
            g = ("ok" if a <= goal else "MISS") + f" (<= {goal} %)"
        elif goal is not None and ratio is not None:
            g = ("ok" if ratio <= goal else "MISS") + f" (<= {goal})"
        spread = ""
        if not agree:  # relative spread between the rounds, per kernel
            spread = ", ".join(f"{k} {100 * (max(v.values()) - min(v.values())) / abs(min(v.values()) or 1):.2g} %"
                               for k, v in (("6.1", v61), ("6.12", v612)) if v)
        lines.append(f"| {w} | {units[w]} | {fmt(a)} | {fmt(b)} | {fmt(ratio) if ratio else '-'} | {g} | "
                     f"{'yes' if agree else 'NO (' + spread + ')'} |")
        if ratio:
            plot.append((w, ratio, ratio, ratio))
    desc = ["| workload | what |", "|---|---|"] + [f"| {w} | {CDESC[w][0]} |" for w in names if w in CDESC]
    return lines, desc, plot, nondet


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--count-csv")
    ap.add_argument("--runs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--meta", action="append", default=[])
    a = ap.parse_args()

    vals = defaultdict(lambda: defaultdict(list))
    units = {}
    with open(a.csv) as f:
        for row in csv.DictReader(f):
            vals[row["workload"]][row["kernel"]].append(float(row["value"]))
            units[row["workload"]] = row["unit"]
    names = [w for w in ORDER if w in vals] + sorted(w for w in vals if w not in DESC)

    def st(v):
        return (statistics.median(v), min(v), max(v)) if v else None

    def fmt(x):
        if x is None:
            return "n/a"
        ax = abs(x)
        return f"{x:.0f}" if ax >= 1000 else f"{x:.1f}" if ax >= 10 else f"{x:.2f}"

    lines = ["| workload | unit | 6.1+module median [min, max] | 6.12 median [min, max] | ratio 6.1/6.12 | goal |",
             "|---|---|---|---|---|---|"]
    plot = []
    for w in names:
        s61, s612 = st(vals[w].get("6.1", [])), st(vals[w].get("6.12", []))
        kind = DESC.get(w, ("", "info"))[1]
        ratio = s61[0] / s612[0] if s61 and s612 and s612[0] else None
        goal = ""
        if kind == "bpf" and ratio is not None:
            goal = ("ok" if ratio <= 1.10 else "MISS") + " (<= 1.10)"
        elif kind == "fault" and ratio is not None:
            goal = ("ok" if ratio <= 1.0 else "MISS") + " (<= 1.0)"
        elif kind == "loadovh" and s61:
            goal = ("ok" if s61[0] < 1.0 else "MISS") + " (< 1%)"
        elif kind == "sparse" and s61:
            goal = ("ok" if s61[0] >= 50 else "MISS") + " (6.1 >= 50x)"
        cell = lambda s: f"{fmt(s[0])} [{fmt(s[1])}, {fmt(s[2])}]" if s else "n/a"
        lines.append(f"| {w} | {units[w]} | {cell(s61)} | {cell(s612)} | "
                     f"{fmt(ratio) if ratio is not None else '-'} | {goal} |")
        if ratio is not None and ratio > 0 and kind != "ref" and not w.startswith(("code_", "mem_")):
            lo = max(s61[1] / s612[2], 0.07) if s612[2] > 0 else ratio
            hi = s61[2] / s612[1] if s612[1] > 0 else ratio
            plot.append((w, ratio, lo, hi))
    table = "\n".join(lines)
    ctable, cdesc, cplot, nondet = count_section(a.count_csv, a.out) if a.count_csv else ([], [], [], [])
    if ctable:
        print("\n".join(ctable))
        print("counting rounds: " + ("identical for every workload" if not nondet else
              "NOT identical for " + ", ".join(nondet)))
    print(table)

    desc = ["| workload | what |", "|---|---|"] + [f"| {w} | {DESC[w][0]} |" for w in names if w in DESC]
    md = ["# make bench results", ""]
    md += [f"- {m.split('=', 1)[0]}: {m.split('=', 1)[1]}" for m in a.meta]
    if ctable:
        md += ["", "## Guest instructions (primary)", "",
               "Exact counts of executed guest instructions (TCG plugin bench/plugin/insn_count.c),",
               "minimum over the repetitions in a boot, then over the counting rounds; per-iteration",
               "rows are (count at 2N - count at N) / N.  ratio = 6.1+module / 6.12.",
               "counting rounds: " + ("identical for every workload." if not nondet else
                                      "NOT identical for " + ", ".join(nondet) + " (allocator and "
                                      "interrupt effects; see bench/README.md)."), "",
               *ctable, "", *cdesc]
    md += ["", "## TCG time (secondary)", "",
           "Every value is a cost (lower is better); ratio = median(6.1 + module) / median(6.12).",
           "min/max are over the rounds (each round's value is the median of the repetitions in one boot).",
           "Times are QEMU TCG guest times: compare the ratio, not the absolute numbers.", "",
           table, "", "## Workloads", "", *desc, ""]
    for k in ("6.1", "6.12"):
        d = os.path.join(a.runs, f"r1-{k}", "share")
        for f, title in (("loop_cb", "raw loop callback (2 loads + 2 stores)"),
                         ("code64", "straight-line program, first accesses")):
            p = os.path.join(d, f + ".bin")
            if not os.path.exists(p):
                continue
            dis = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64", p],
                                 capture_output=True, text=True).stdout.splitlines()
            body = [l for l in dis if l.startswith(" ") and ":\t" in l]
            if f == "code64":
                body = body[:40]
            md += [f"### JIT, {k}: {title}", "", "```", *body, "```", ""]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(md))

    if cplot:
        do_plot(cplot, a.out + ".png", "bpf-arena: guest instructions, 6.1 + module / 6.12 in-tree")
    if plot:
        do_plot(plot, a.out + ("-time.png" if cplot else ".png"),
                "bpf-arena: TCG time, 6.1 + module / 6.12 in-tree (median; bars: min/max ratio over rounds)")


def do_plot(plot, png, title):
    if not shutil.which("gnuplot"):
        print("report: no gnuplot, no " + png, file=sys.stderr)
        return
    dat = png + ".dat"
    with open(dat, "w") as f:
        for w, r, lo, hi in plot:
            f.write(f'"{w}" {r:.4f} {lo:.4f} {hi:.4f}\n')
    gp = f"""
set terminal pngcairo size 1200,700 font ",10"
set output "{png}"
set title "{title}"
set ylabel "ratio (lower is better for 6.1 + module)"
set logscale y 2
set yrange [0.0625:16]
set grid ytics
set xtics rotate by -40 left noenhanced
set bmargin 12
set rmargin 12
set style fill solid 0.5
set boxwidth 0.6
plot "{dat}" using 0:2:xtic(1) with boxes lc rgb "#4a78b8" notitle, \\
     "" using 0:2:3:4 with yerrorbars lc rgb "black" pt 0 notitle, \\
     1.0 with lines lc rgb "#208020" dt 2 title "1.0", 1.1 with lines lc rgb "#c03030" dt 2 title "1.10"
"""
    r = subprocess.run(["gnuplot"], input=gp, text=True, capture_output=True)
    if r.returncode:
        print("gnuplot failed: " + r.stderr, file=sys.stderr)
    os.remove(dat)


main()
