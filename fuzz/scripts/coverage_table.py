#!/usr/bin/env python3
"""The README's coverage table, from the runs of fuzz/scripts/coverage.sh (run that
first, for every target):

    python3 fuzz/scripts/coverage_table.py              # the table (markdown)
    python3 fuzz/scripts/coverage_table.py --unreached  # the lines no target runs, per file

Per file and target: lines run/lines with code, each source line once, as `llvm-cov
show` counts them (from the `llvm-cov export` segments, with llvm-cov's own line rule);
then regions run/regions as llvm-cov's summary counts them (summary.tsv; its line counts
count a line once per function that contains it, so a closure's line twice). The last
column is the union over every target, in lines: a line counts as reached if any target
runs it. FUZZ_DIR=<dir>
reads another fuzz/ directory's runs (a snapshot's, see coverage.sh's COMMIT).
"""
import json, os, re, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
fuzz = os.path.abspath(os.environ.get("FUZZ_DIR") or os.path.dirname(here))
root = os.path.dirname(fuzz)
host = subprocess.check_output(["rustc", "+nightly", "-vV"], text=True).split("host: ")[1].split()[0]
llvm_cov = subprocess.check_output([os.path.join(here, "coverage.sh"), "--llvm-cov"], text=True).strip()

ORDER = ["driver_loop", "txq_table", "release_batch", "scheduler_ops", "ath11k_completion", "mt76_txfree",
         "fq_codel", "estimator"]
cov = os.path.join(fuzz, "coverage")
targets = [t for t in ORDER if os.path.exists(os.path.join(cov, t, "summary.tsv"))]
targets += sorted(t for t in os.listdir(cov) if t not in targets and os.path.exists(os.path.join(cov, t, "summary.tsv")))

data = {}
for t in targets:
    for line in open(os.path.join(cov, t, "summary.tsv")):
        if line.strip():
            _, f, lc, ln, rc, rn = line.rstrip("\n").split("\t")
            data[(t, f)] = (int(lc), int(ln), int(rc), int(rn))
files = sorted({f for (_, f) in data})


def line_stats(segments):
    """{line: (mapped, count)} from a file's segments, as llvm-cov's LineCoverageStats
    computes them for its summary (CoverageMapping.cpp)."""
    out = {}
    if not segments:
        return out
    i, line, wrapped, prev = 0, segments[0][0], None, []
    while i < len(segments):
        if prev:
            wrapped = prev[-1]
        here = []
        while i < len(segments) and segments[i][0] == line:
            here.append(segments[i])
            i += 1
        start = [g for g in here if g[3] and g[4] and not g[5]]  # has count, region entry, not gap
        skipped = bool(here) and not here[0][3] and here[0][4]
        mapped = not skipped and ((wrapped is not None and wrapped[3]) or bool(start))
        mapped |= any(g[4] and g[3] for g in here)
        if mapped:
            count = wrapped[2] if wrapped is not None else 0
            for g in start:
                count = max(count, g[2])
            out[line] = count
        prev = here
        line += 1
    return out


# The union over targets: a line is reached if any target runs it, each target's lines
# counted as `llvm-cov show` counts them.
per_line = {}  # (target, file) -> {line: count}
for t in targets:
    if not any(v[1] for (tt, _), v in data.items() if tt == t):
        continue
    binary = os.path.join(fuzz, "target", host, "coverage", host, "release", t)
    export = json.loads(subprocess.run([llvm_cov, "export", "-skip-expansions", "-skip-functions", "-instr-profile",
                                        os.path.join(cov, t, "coverage.profdata"), binary],
                                       capture_output=True, text=True, check=True).stdout)
    for f in export["data"][0]["files"]:
        name = f["filename"].replace(root + "/", "")
        if name in files:
            stats = line_stats(f["segments"])
            per_line[(t, name)] = stats
union = {}
for f in files:
    lines = {}
    for (t, g), stats in per_line.items():
        if g == f:
            for n, c in stats.items():
                lines[n] = max(lines.get(n, 0), c)
    union[f] = lines

if "--unreached" in sys.argv:
    for f in files:
        missing = sorted(n for n, c in union[f].items() if c == 0)
        if not missing:
            continue
        src = open(os.path.join(root, f)).read().split("\n")
        print(f"== {f}: {len(missing)} of {len(union[f])} lines never run")
        for n in missing:
            print(f"{n:5}| {src[n - 1] if n - 1 < len(src) else ''}")
    sys.exit(0)

short = lambda f: f.replace("airtime-sched/src/", "sched/").replace("drivers/", "")


def lines(t, f):
    stats = per_line.get((t, f), {})
    return sum(1 for c in stats.values() if c), len(stats)


def cell(t, f):
    v = data.get((t, f))
    if v is None or v[0] == 0 and v[2] == 0:
        return "·"
    lc, ln = lines(t, f)
    return f"{lc}/{ln} · {v[2]}/{v[3]}"


print("| file | " + " | ".join(f"`{t}`" for t in targets) + " | union (lines) |")
print("|---|" + "---|" * (len(targets) + 1))
for f in files:
    u = union[f]
    u = f"{sum(1 for c in u.values() if c)}/{len(u)}" if u else "–"
    print(f"| `{short(f)}` | " + " | ".join(cell(t, f) for t in targets) + f" | {u} |")
print()
print("| target | lines | regions |")
print("|---|---:|---:|")


def pct(a, b):
    return f"{a}/{b} ({100 * a / b:.1f} %)" if b else "–"


for t in targets:
    vs = [v for (tt, f), v in data.items() if tt == t]
    rc, rn = sum(v[2] for v in vs), sum(v[3] for v in vs)
    ls = [lines(t, f) for (tt, f) in data if tt == t]
    lc, ln = sum(x[0] for x in ls), sum(x[1] for x in ls)
    print(f"| `{t}` | {pct(lc, ln)} | {pct(rc, rn)} |")
for scope, prefix in [("all", ""), ("airtime-sched", "airtime-sched/"), ("ath11k adapter", "drivers/ath11k/"),
                      ("mt76 adapter", "drivers/mt76/")]:
    us = [u for f, u in union.items() if f.startswith(prefix)]
    lc, ln = sum(sum(1 for c in u.values() if c) for u in us), sum(len(u) for u in us)
    print(f"| union, {scope} | {pct(lc, ln)} | |")
