#!/usr/bin/env python3
"""Markdown table of line coverage per file and target, before -> after, from two
summary.tsv files of fuzz/scripts/coverage.sh (concatenated over targets):

    python3 fuzz/scripts/coverage_table.py before.tsv after.tsv
"""
import sys

def load(path):
    d = {}
    for line in open(path):
        if line.strip():
            t, f, lc, ln, rc, rn = line.rstrip("\n").split("\t")
            d[(t, f)] = (int(lc), int(ln), int(rc), int(rn))
    return d

before, after = load(sys.argv[1]), load(sys.argv[2])
targets = ["driver_loop", "ath11k_completion", "release_batch", "scheduler_ops", "fq_codel"]
targets = [t for t in targets if any(k[0] == t for k in list(before) + list(after))]
files = sorted({k[1] for k in list(before) + list(after)})

def cell(v):
    if v is None or v[1] == 0:
        return "–"
    return f"{v[0]}/{v[1]}"

def pair(t, f):
    b, a = before.get((t, f)), after.get((t, f))
    if (b is None or b[0] == 0) and (a is None or a[0] == 0):
        return "·"
    return f"{cell(b)} → {cell(a)}" if b != a else cell(a)

short = lambda f: f.replace("airtime-sched/src/", "sched/").replace("drivers/ath11k/src/", "ath11k/")
print("| file (lines hit/lines) | " + " | ".join(f"`{t}`" for t in targets) + " | best single target |")
print("|---|" + "---|" * (len(targets) + 1))
for f in files:
    def union(d):
        best = [v for (t, g), v in d.items() if g == f]
        return max(best, key=lambda v: v[0]) if best else None
    print(f"| `{short(f)}` | " + " | ".join(pair(t, f) for t in targets) +
          f" | {cell(union(before))} → {cell(union(after))} |")
print()
print("| target | lines before | lines after | regions before | regions after |")
print("|---|---:|---:|---:|---:|")
for t in targets:
    def tot(d):
        vs = [v for (tt, f), v in d.items() if tt == t]
        if not vs:
            return "–", "–"
        lc, ln, rc, rn = (sum(v[i] for v in vs) for i in range(4))
        return f"{lc}/{ln} ({100*lc/ln:.1f} %)", f"{rc}/{rn} ({100*rc/rn:.1f} %)"
    (lb, rb), (la, ra) = tot(before), tot(after)
    print(f"| `{t}` | {lb} | {la} | {rb} | {ra} |")
