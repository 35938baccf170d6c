#!/usr/bin/env python3
"""The README's coverage table, from the runs of fuzz/scripts/coverage.sh (run that
first, for every target):

    python3 fuzz/scripts/coverage_table.py              # the table (markdown)
    python3 fuzz/scripts/coverage_table.py --unreached  # the lines no target runs, per file

Per file and target: lines hit/lines and regions hit/regions, as llvm-cov counts them
(summary.tsv); the last column is the union over every target, in lines: a line counts
as reached if any target runs it (`llvm-cov show` per file and target). FUZZ_DIR=<dir>
reads another fuzz/ directory's runs (a snapshot's, see coverage.sh's COMMIT).
"""
import os, re, subprocess, sys

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


def lines_of(t, f):
    """(executable lines, lines run) of file f in target t's run."""
    binary = os.path.join(fuzz, "target", host, "coverage", host, "release", t)
    profdata = os.path.join(cov, t, "coverage.profdata")
    out = subprocess.run([llvm_cov, "show", "-instr-profile", profdata, binary, os.path.join(root, f),
                          "-show-line-counts"], capture_output=True, text=True).stdout
    code, run = set(), set()
    for row in out.split("\n"):
        m = re.match(r"^\s*(\d+)\|\s*([0-9.]+[kMG]?)\|", row)
        if m:
            n = int(m.group(1))
            code.add(n)
            if m.group(2) != "0":
                run.add(n)
    return code, run


union = {}
for f in files:
    code, run = set(), set()
    for t in targets:
        if (t, f) in data and data[(t, f)][1]:
            c, r = lines_of(t, f)
            code |= c
            run |= r
    union[f] = (code, run)

if "--unreached" in sys.argv:
    for f in files:
        code, run = union[f]
        missing = sorted(code - run)
        if not missing:
            continue
        src = open(os.path.join(root, f)).read().split("\n")
        print(f"== {f}: {len(missing)} of {len(code)} lines never run")
        for n in missing:
            print(f"{n:5}| {src[n - 1] if n - 1 < len(src) else ''}")
    sys.exit(0)

short = lambda f: f.replace("airtime-sched/src/", "sched/").replace("drivers/", "")


def cell(t, f):
    v = data.get((t, f))
    if v is None or v[0] == 0 and v[2] == 0:
        return "·"
    return f"{v[0]}/{v[1]} · {v[2]}/{v[3]}"


print("| file | " + " | ".join(f"`{t}`" for t in targets) + " | union (lines) |")
print("|---|" + "---|" * (len(targets) + 1))
for f in files:
    code, run = union[f]
    u = f"{len(run)}/{len(code)}" if code else "–"
    print(f"| `{short(f)}` | " + " | ".join(cell(t, f) for t in targets) + f" | {u} |")
print()
print("| target | lines | regions |")
print("|---|---:|---:|")


def pct(a, b):
    return f"{a}/{b} ({100 * a / b:.1f} %)" if b else "–"


for t in targets:
    vs = [v for (tt, f), v in data.items() if tt == t]
    lc, ln, rc, rn = (sum(v[i] for v in vs) for i in range(4))
    print(f"| `{t}` | {pct(lc, ln)} | {pct(rc, rn)} |")
code = sum(len(union[f][0]) for f in files)
run = sum(len(union[f][1]) for f in files)
print(f"| union | {pct(run, code)} | |")
for scope, prefix in [("airtime-sched", "airtime-sched/"), ("ath11k adapter", "drivers/ath11k/"), ("mt76 adapter", "drivers/mt76/")]:
    c = sum(len(union[f][0]) for f in files if f.startswith(prefix))
    r = sum(len(union[f][1]) for f in files if f.startswith(prefix))
    print(f"| union, {scope} | {pct(r, c)} | |")
