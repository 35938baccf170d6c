#!/usr/bin/env bash
# Prints a markdown table of criterion medians, ours beside the baseline, from the last
# run's target/criterion/<group>/{ours,baseline}/<param>/new/estimates.json.
# ratio = baseline / ours (above 1: ours is faster). Needs jq.
set -euo pipefail
CRIT=${CARGO_TARGET_DIR:-target}/criterion
fmt() { # ns -> human
    awk -v ns="$1" 'BEGIN { if (ns < 1e3) printf "%.1f ns", ns; else if (ns < 1e6) printf "%.2f us", ns/1e3; else printf "%.2f ms", ns/1e6 }'
}
echo "| group | case | ours (median) | baseline (median) | baseline / ours |"
echo "|---|---|---:|---:|---:|"
# Each group's pairs: ours/baseline, and the contention group's ours_per_budget/
# baseline_per_budget (the completion context as the seed's patches 6 and 9 run it).
for group in "$@"; do
    for suffix in "" _per_budget; do
        [ -d "$CRIT/$group/ours$suffix" ] || continue
        for case in $(ls "$CRIT/$group/ours$suffix" | sort -V); do
            dir="$CRIT/$group/ours$suffix/$case"
            [ -d "$dir" ] || continue
            o="$dir/new/estimates.json"
            b="$CRIT/$group/baseline$suffix/$case/new/estimates.json"
            [ -f "$o" ] && [ -f "$b" ] || continue
            om=$(jq '.median.point_estimate' "$o")
            bm=$(jq '.median.point_estimate' "$b")
            extra=""
            if [ "$group" = contention ]; then
                frames=$(jq '.throughput.Elements // empty' "$dir/new/benchmark.json" 2>/dev/null || true)
                if [ -n "$frames" ]; then
                    extra=" ($(awk -v f="$frames" -v o="$om" -v b="$bm" 'BEGIN { printf "%.2f vs %.2f Mframes/s", f/o*1e3, f/b*1e3 }'))"
                fi
            fi
            printf '| %s | %s%s | %s | %s | %.2fx%s |\n' "$group" "$case" "${suffix:+ ${suffix#_}}" "$(fmt "$om")" \
                "$(fmt "$bm")" "$(awk -v o="$om" -v b="$bm" 'BEGIN { print b / o }')" "$extra"
        done
    done
done
