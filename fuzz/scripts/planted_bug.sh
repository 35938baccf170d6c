#!/usr/bin/env bash
# Plants a known bug in a scratch copy of the workspace and runs fuzz targets on it the
# way .ci/fuzz.sh does (corpus replay, then a fixed number of runs with a fixed seed),
# to show that they catch it and how soon. The bug: a completion pass touching more
# than eight (station, AC) groups forgets the charge that starts the ninth group in
# `Scheduler::release_batch` (its flush restarts with no group instead of the
# charge's). Nothing outside fuzz/target/planted-bug is changed.
#
#   fuzz/scripts/planted_bug.sh [target:runs:seed ...]   # default: the CI specs below
#   EMPTY_CORPUS=1 ...                                    # fuzz from nothing, no replay
#   SANITIZER=none ...                                    # default: address (as CI)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/.." && pwd)
scratch="$here/target/planted-bug"
unset CARGO_TARGET_DIR

# Sources only (the scratch copy keeps its own fuzz/target between runs).
mkdir -p "$scratch"
find "$scratch" -mindepth 1 -maxdepth 1 ! -name fuzz -exec rm -rf {} +
find "$scratch/fuzz" -mindepth 1 -maxdepth 1 ! -name target -exec rm -rf {} + 2>/dev/null || true
(cd "$root" && tar cf - --exclude=./.git --exclude=./target --exclude=./fuzz/target --exclude=./fuzz/artifacts \
    --exclude=./fuzz/coverage --exclude=./fuzz/coverage-before --exclude=./drivers/ath11k/kmod/build .) |
    (cd "$scratch" && tar xf -)
file="$scratch/airtime-sched/src/scheduler/batch_release.rs"
# The flush that makes room for the ninth group: restart with no group (the charge
# that starts it is forgotten) instead of a group of that charge.
python3 - "$file" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "            groups[0] = group_of(&charge);\n            used = 1;\n"
assert old in s, "release_batch changed: update the planted bug"
s = s.replace(old, "            let _ = group_of(&charge);\n            used = 0;\n")
open(p, "w").write(s)
PY
echo "::: planted in $file:"
grep -n "used = 0;" -B2 "$file"

cd "$scratch/fuzz"
sanitizer=${SANITIZER:-address}
if [ $# -eq 0 ]; then
    set -- $(sed -n 's/^    "\([a-z_0-9]*:[0-9]*:[0-9]*\)"$/\1/p' "$root/.ci/fuzz.sh")
fi
cargo +nightly fuzz build -s "$sanitizer" >/dev/null 2>&1 || cargo +nightly fuzz build -s "$sanitizer"
for spec in "$@"; do
    IFS=: read -r name runs seed <<<"$spec"
    work=$(mktemp -d)
    log="$work/log"
    t0=$(date +%s.%N)
    caught=""
    if [ -z "${EMPTY_CORPUS:-}" ]; then
        if ! cargo +nightly fuzz run -s "$sanitizer" "$name" "corpus/$name" -- -runs=0 -timeout=20 >"$log" 2>&1; then
            caught="in the corpus replay"
        fi
    fi
    if [ -z "$caught" ]; then
        corpora=("$work/new")
        [ -z "${EMPTY_CORPUS:-}" ] && corpora+=("corpus/$name")
        mkdir -p "$work/new"
        if ! cargo +nightly fuzz run -s "$sanitizer" "$name" "${corpora[@]}" -- \
            -runs="$runs" -seed="$seed" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
            n=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
            caught="after about ${n:-?} executions (the last libFuzzer status line before the crash)"
        fi
    fi
    t=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
    if [ -n "$caught" ]; then
        echo "::: $name: CAUGHT $caught, ${t} s"
        grep -m1 -A3 "panicked at" "$log" || true
    else
        echo "::: $name: not caught in $runs runs (seed $seed), ${t} s"
    fi
    rm -rf "$work"
done
