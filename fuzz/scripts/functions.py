#!/usr/bin/env python3
"""Functions of airtime-sched and the driver adapters that the fuzz targets execute,
from the coverage runs of fuzz/scripts/coverage.sh (run that first):

    python3 fuzz/scripts/functions.py [--pub] [target...]   # default: every target measured

FUZZ_DIR=<snapshot>/fuzz reads a snapshot's runs (coverage.sh with COMMIT).
Prints each function never executed by any of the given targets (all monomorphisations
summed; generic functions no target instantiates count as never executed), then, per
function executed, the targets that execute it when --by-target is given. With --pub, only
functions whose definition line starts with `pub fn` / `pub const fn` (the public API).
"""
import json, os, re, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
# FUZZ_DIR: the fuzz/ directory measured (a snapshot's, see coverage.sh's COMMIT).
fuzz = os.path.abspath(os.environ.get("FUZZ_DIR") or os.path.dirname(here))
root = os.path.dirname(fuzz)
host = subprocess.check_output(["rustc", "+nightly", "-vV"], text=True).split("host: ")[1].split()[0]
llvm_cov = subprocess.check_output([os.path.join(here, "coverage.sh"), "--llvm-cov"], text=True).strip()

args = sys.argv[1:]
only_pub = "--pub" in args
by_target = "--by-target" in args
targets = [a for a in args if not a.startswith("--")]
if not targets:
    targets = sorted(t for t in os.listdir(os.path.join(fuzz, "coverage"))
                     if os.path.exists(os.path.join(fuzz, "coverage", t, "coverage.profdata")))

KEEP = ("airtime-sched/src/", "drivers/ath11k/src/", "drivers/mt76/src/")
names = {}
lines_cache = {}


def demangle(mangled):
    if mangled not in names:
        out = subprocess.run(["c++filt"], input=mangled, capture_output=True, text=True).stdout.strip()
        # Drop crate hashes and generic arguments: one entry per source function.
        out = re.sub(r"\[[0-9a-f]+\]", "", out)
        names[mangled] = out
    return names[mangled]


def is_pub(path, line):
    if path not in lines_cache:
        lines_cache[path] = open(os.path.join(root, path)).read().split("\n")
    text = lines_cache[path][line - 1].strip() if line - 1 < len(lines_cache[path]) else ""
    return re.match(r"pub (const |unsafe )?fn ", text) is not None


seen = {}  # (file, line) -> [name, total count, {target: count}]
for t in targets:
    profdata = os.path.join(fuzz, "coverage", t, "coverage.profdata")
    binary = os.path.join(fuzz, "target", host, "coverage", host, "release", t)
    data = json.loads(subprocess.check_output([llvm_cov, "export", "-skip-expansions", "-instr-profile",
                                               profdata, binary]))
    for f in data["data"][0]["functions"]:
        path = f["filenames"][0].replace(root + "/", "")
        if not path.startswith(KEEP):
            continue
        line = f["regions"][0][0]
        key = (path, line)
        entry = seen.setdefault(key, [demangle(f["name"]), 0, {}])
        entry[1] += f["count"]
        entry[2][t] = entry[2].get(t, 0) + f["count"]

never = []
for (path, line), (name, count, per) in sorted(seen.items()):
    if only_pub and not is_pub(path, line):
        continue
    if count == 0:
        never.append(f"{path}:{line}  {name}")
    elif by_target:
        hit = ", ".join(sorted(t for t, c in per.items() if c))
        print(f"{path}:{line}  {name}  [{hit}]")
print(f"== never executed by {', '.join(targets)} ({len(never)}):")
print("\n".join(never))
