#!/usr/bin/env bash
# Instructions per frame cycle, ours and the baseline, counted by valgrind (cachegrind,
# no cache simulation): deterministic, unlike wall-clock time on a shared machine.
#
# Each configuration runs N and 2N cycles; (I(2N) - I(N)) / N removes the startup
# (allocation, registering 4096 stations) and leaves the steady-state cost of one cycle.
#
# With LOCKED=1 it also counts the locked (atomic read-modify-write) instructions per
# cycle: callgrind with --dump-instr=yes gives per-instruction execution counts, and
# objdump says which instructions carry a lock prefix (or are an implicitly locked xchg).
# These are what a lock-free design trades its lock for; each costs a cache-line transfer
# when the other context wrote the line last.
#
# Usage: benches/instructions.sh [N] [STATIONS...]      (defaults: 20000, 1 4096)
#        WORKLOAD=debt benches/instructions.sh 200 16 256   (reference E6 selections)
#        LOCKED=1 benches/instructions.sh 20000 1 16
#        ADAPTIVE_AQL=1 benches/instructions.sh 20000 1 16     (ours with adaptive AQL on)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20000}
shift || true
if [ $# -gt 0 ]; then STATIONS=("$@"); else STATIONS=(1 4096); fi
WORKLOAD=${WORKLOAD:-cycle}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo build --quiet --release -p airtime-benches --example frame_cycle
BIN="$CARGO_TARGET_DIR/release/examples/frame_cycle"
command -v valgrind >/dev/null || { echo "valgrind not found" >&2; exit 1; }

irefs() { # which stations n -> instructions executed by the whole process
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        "$BIN" "$1" "$2" "$3" "$WORKLOAD" 2>&1 >/dev/null |
        sed -n 's/.*I *refs: *//p' | tr -d ,
}

LOCKS=$(mktemp)
trap 'rm -f "$LOCKS" "$LOCKS".cg' EXIT
objdump -d --no-show-raw-insn "$BIN" | awk '/\tlock |\txchg .*\(/ { sub(":", "", $1); print $1 }' >"$LOCKS"

locked() { # which stations n -> locked instructions executed in the binary itself
    valgrind --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no \
        --callgrind-out-file="$LOCKS.cg" "$BIN" "$1" "$2" "$3" "$WORKLOAD" >/dev/null 2>&1
    awk -v bin="$(basename "$BIN")" '
        NR == FNR { a = $1; sub(/^0+/, "", a); lock[a] = 1; next }
        /^ob=/ { mine = ($0 ~ ("/" bin "$")); next }
        /^calls=/ { skip = 1; next }
        skip { skip = 0; next }
        mine && /^0x/ { a = substr($1, 3); sub(/^0+/, "", a); if (a in lock) n += $3 }
        END { print n + 0 }' "$LOCKS" "$LOCKS.cg"
}

locked_per_cycle() {
    local one two
    one=$(locked "$1" "$2" "$N")
    two=$(locked "$1" "$2" $((2 * N)))
    echo "scale=2; ($two - $one) / $N" | bc
}

per_cycle() { # which stations -> instructions per cycle, 1 decimal
    local one two
    one=$(irefs "$1" "$2" "$N")
    two=$(irefs "$1" "$2" $((2 * N)))
    echo "scale=1; ($two - $one) / $N" | bc
}

echo "workload=$WORKLOAD N=$N ($(valgrind --version), $(rustc --version))"
printf '%-9s %12s %12s %10s\n' stations ours baseline ratio
for s in "${STATIONS[@]}"; do
    o=$(per_cycle ours "$s")
    b=$(per_cycle baseline "$s")
    printf '%-9s %12s %12s %9sx\n' "$s" "$o" "$b" "$(echo "scale=2; $b / $o" | bc)"
done
if [ "${LOCKED:-0}" = 1 ]; then
    echo "locked (atomic read-modify-write) instructions per cycle:"
    printf '%-9s %12s %12s\n' stations ours baseline
    for s in "${STATIONS[@]}"; do
        printf '%-9s %12s %12s\n' "$s" "$(locked_per_cycle ours "$s")" "$(locked_per_cycle baseline "$s")"
    done
fi
