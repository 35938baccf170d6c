#!/usr/bin/env bash
# Lines of FILE... that TARGET's coverage run (fuzz/scripts/coverage.sh) never executed.
#   fuzz/scripts/unreached.sh TARGET airtime-sched/src/scheduler/batch_release.rs ...
set -euo pipefail
cd "$(dirname "$0")/.."
t=$1
shift
host=$(rustc +nightly -vV | sed -n 's/^host: //p')
llvm_cov=$(scripts/coverage.sh --llvm-cov)
for f in "$@"; do
    echo "== $t: $f"
    "$llvm_cov" show -instr-profile "coverage/$t/coverage.profdata" "target/$host/coverage/$host/release/$t" \
        "../$f" -show-line-counts | awk -F'|' 'NR>1 && $2 ~ /^ *0$/ {print $1 "|" $3}'
done
