#!/usr/bin/env python3
"""bench/report.py: the table, markdown and plot of one `make bench` run.

Reads the raw CSV (round,kernel,workload,value,unit) bench/run collected,
prints a markdown table (median/min/max per kernel over the rounds, ratio of
medians 6.1+module / 6.12) and writes OUT.md and OUT.png (gnuplot)."""
import argparse, csv, os, statistics, subprocess, sys
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
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
    print(table)

    desc = ["| workload | what |", "|---|---|"] + [f"| {w} | {DESC[w][0]} |" for w in names if w in DESC]
    md = ["# make bench results", ""]
    md += [f"- {m.split('=', 1)[0]}: {m.split('=', 1)[1]}" for m in a.meta]
    md += ["", "Every value is a cost (lower is better); ratio = median(6.1 + module) / median(6.12).",
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

    dat = a.out + ".dat"
    with open(dat, "w") as f:
        for w, r, lo, hi in plot:
            f.write(f'"{w}" {r:.4f} {lo:.4f} {hi:.4f}\n')
    gp = f"""
set terminal pngcairo size 1200,700 font ",10"
set output "{a.out}.png"
set title "bpf-arena: 6.1 + module / 6.12 in-tree (median; bars: min/max ratio over rounds)"
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
     1.0 with lines lc rgb "#208020" dt 2 title "1.0", 1.1 with lines lc rgb "#c03030" dt 2 title "1.10 goal"
"""
    r = subprocess.run(["gnuplot"], input=gp, text=True, capture_output=True)
    if r.returncode:
        print("gnuplot failed: " + r.stderr, file=sys.stderr)
    os.remove(dat)


main()
