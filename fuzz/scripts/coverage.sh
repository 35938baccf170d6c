#!/usr/bin/env bash
# Line and region coverage of airtime-sched/src and the driver adapters (drivers/ath11k/src,
# drivers/mt76/src) reached by each fuzz target's corpus: `cargo fuzz coverage` (nightly,
# llvm-tools-preview), then `llvm-cov export -summary-only`, summed per file. Writes
# fuzz/coverage/<target>/summary.tsv (target, file, lines hit, lines, regions hit,
# regions) and prints it.
#
#   fuzz/scripts/coverage.sh [target...]          # default: every target
#   CORPUS_EXTRA=dir fuzz/scripts/coverage.sh t   # also replay dir/<t> (e.g. a CI run's)
#   COMMIT=rev fuzz/scripts/coverage.sh           # a commit's tree, not the working tree
#
# With COMMIT, the commit is exported (git archive) to fuzz/target/snapshot/<rev>/ and
# measured there, so that edits others make to the working tree meanwhile cannot mix
# into the numbers; its outputs are under fuzz/target/snapshot/<rev>/fuzz/coverage/.
# `FUZZ_DIR=fuzz/target/snapshot/<rev>/fuzz fuzz/scripts/functions.py` reads them.
#
# Per-line listings: `llvm-cov show` with the same binary and profile, e.g.
#   $(fuzz/scripts/coverage.sh --llvm-cov) show -instr-profile fuzz/coverage/T/coverage.profdata \
#     fuzz/target/x86_64-unknown-linux-gnu/coverage/x86_64-unknown-linux-gnu/release/T \
#     airtime-sched/src/scheduler/batch_release.rs
set -euo pipefail
cd "$(dirname "$0")/.."
unset CARGO_TARGET_DIR

if [ -n "${COMMIT:-}" ] && [ -z "${IN_SNAPSHOT:-}" ]; then
    rev=$(git -C .. rev-parse --short "$COMMIT")
    snap="$PWD/target/snapshot/$rev"
    if [ ! -f "$snap/fuzz/Cargo.toml" ]; then
        mkdir -p "$snap"
        git -C .. archive "$rev" | tar -x -C "$snap"
    fi
    echo "::: measuring $rev in $snap" >&2
    IN_SNAPSHOT=1 exec "$snap/fuzz/scripts/coverage.sh" "$@"
fi

sysroot=$(rustc +nightly --print sysroot)
host=$(rustc +nightly -vV | sed -n 's/^host: //p')
llvm_bin="$sysroot/lib/rustlib/$host/bin"
if [ "${1:-}" = "--llvm-cov" ]; then
    echo "$llvm_bin/llvm-cov"
    exit 0
fi
if [ ! -x "$llvm_bin/llvm-cov" ]; then
    rustup component add llvm-tools-preview --toolchain nightly
fi

if [ $# -eq 0 ]; then
    set -- $(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^airtime-fuzz$')
fi
root=$(cd .. && pwd)
for t in "$@"; do
    corpora=("corpus/$t")
    if [ -n "${CORPUS_EXTRA:-}" ] && [ -d "$CORPUS_EXTRA/$t" ]; then
        corpora+=("$CORPUS_EXTRA/$t")
    fi
    mkdir -p coverage
    if ! cargo +nightly fuzz coverage -s none "$t" "${corpora[@]}" >"coverage/$t.log" 2>&1; then
        tail -n 40 "coverage/$t.log"
        exit 1
    fi
    bin="target/$host/coverage/$host/release/$t"
    "$llvm_bin/llvm-cov" export -summary-only -instr-profile "coverage/$t/coverage.profdata" "$bin" \
        >"coverage/$t/export.json"
    python3 - "$t" "$root" "coverage/$t/export.json" >"coverage/$t/summary.tsv" <<'PY'
import json, sys
target, root, path = sys.argv[1], sys.argv[2] + "/", sys.argv[3]
data = json.load(open(path))
for f in sorted(data["data"][0]["files"], key=lambda f: f["filename"]):
    name = f["filename"].replace(root, "")
    if not name.startswith(("airtime-sched/src/", "drivers/ath11k/src/", "drivers/mt76/src/")):
        continue
    s = f["summary"]
    print("\t".join([target, name, str(s["lines"]["covered"]), str(s["lines"]["count"]),
                     str(s["regions"]["covered"]), str(s["regions"]["count"])]))
PY
    cat "coverage/$t/summary.tsv"
done
