#!/usr/bin/env bash
# Fuzz CI: builds every cargo-fuzz target of fuzz/, replays the committed corpus of each,
# then runs each for a fixed number of executions with a fixed seed. Exits non-zero on
# any crash, panic, leak or timeout. Nightly with AddressSanitizer when a nightly
# toolchain is installed, else stable with `-s none`. Budget: under 10 minutes on 2
# cores, build included (about 3 minutes of build from scratch, 5 to 6 of replay and
# fuzzing over the eight targets).
#
# Override the runs per target with FUZZ_RUNS_SCALE (default 1; 0 = replay only).
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

export CARGO_TERM_COLOR=never
# The fuzz workspace keeps its own target dir (fuzz/target), whatever the caller set.
unset CARGO_TARGET_DIR

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "::: installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

if rustup run nightly rustc --version >/dev/null 2>&1; then
    toolchain=+nightly
    sanitizer=(-s address)
else
    toolchain=+stable
    sanitizer=(-s none)
fi
echo "::: toolchain ${toolchain#+}, sanitizer ${sanitizer[1]}"

# target:runs:seed. Runs are sized so that each target takes 10 to 40 s under ASan on
# one core (the per-run cost differs by two orders of magnitude between targets:
# driver_loop, ath11k_completion, release_batch and txq_table run hundreds of stations,
# a few hundred executions a second without a sanitizer; mt76_txfree about a thousand).
# Their committed corpora already hold passes over more than eight (station, AC) groups,
# so the replay alone exercises release_batch's flushes (fuzz/README.md, "The planted
# release_batch bug").
#
# Timed with ASan at 114ad03 (whole run 737 s): estimator 8 s, fq_codel 26 s, driver_loop
# 45 s; scheduler_ops (30000 runs) 158 s, ath11k_completion (4000) 74 s, release_batch
# (6000) 93 s, txq_table (4000) 119 s and mt76_txfree (15000) 206 s, resized from those
# rates to about 40 s each.
targets=(
    "estimator:400000:101"
    "fq_codel:60000:102"
    "driver_loop:8000:103"
    "scheduler_ops:7000:104"
    "ath11k_completion:2000:105"
    "release_batch:2500:106"
    "txq_table:1200:107"
    "mt76_txfree:2800:108"
)
scale=${FUZZ_RUNS_SCALE:-1}

t0=$(date +%s)
cargo "$toolchain" fuzz build "${sanitizer[@]}"
echo "::: build: ok in $(($(date +%s) - t0)) s"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for spec in "${targets[@]}"; do
    IFS=: read -r name runs seed <<<"$spec"
    corpus="corpus/$name"
    t1=$(date +%s)
    log="$work/$name.log"
    # Replay: every committed input once (-runs=0 stops after loading the corpus).
    if ! cargo "$toolchain" fuzz run "${sanitizer[@]}" "$name" "$corpus" -- -runs=0 -timeout=20 >"$log" 2>&1; then
        tail -n 80 "$log"
        echo "::: $name: corpus replay FAILED; the crashing input is in fuzz/artifacts/$name/"
        exit 1
    fi
    grep -E 'INITED|files found' "$log" || true
    # Fuzz: new inputs go to a scratch dir, the committed corpus is only read.
    mkdir -p "$work/$name"
    if ! cargo "$toolchain" fuzz run "${sanitizer[@]}" "$name" "$work/$name" "$corpus" -- \
        -runs=$((runs * scale)) -seed="$seed" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
        tail -n 80 "$log"
        echo "::: $name: FAILED; the crashing input is in fuzz/artifacts/$name/"
        exit 1
    fi
    grep -E '^(Done|stat::number_of_executed_units)' "$log" || true
    echo "::: $name: ok in $(($(date +%s) - t1)) s"
done
echo "::: fuzz: ok in $(($(date +%s) - t0)) s"
