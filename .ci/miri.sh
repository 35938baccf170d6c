#!/usr/bin/env bash
# Miri over the core's tests: airtime-est (unit + integration) and airtime-sched (unit +
# integration), in shards (see below). Installs the nightly component itself; bounded in
# time.
#
# Measured in a clean-clone .ci/run at a59e251 on 2 shared cores, beside the fuzzer
# (647 s): shard 1 590 s, shard 2 717 s (airtime-est 177 s); the step 718 s. One
# unsharded run beside the fuzzer had passed 1800 s (fq_codel.rs 305 s, invariants.rs
# 296 s) before the integration tests built their schedulers on a smaller table under
# Miri (tests/common's `config`). A timeout per cargo invocation bounds a test that
# stalls in the interpreter.
#
# Skipped under Miri (each runs natively in `cargo test`, and the same properties are
# fuzzed): exhaustive loops over whole input domains,
# simulations stepped microsecond by microsecond, threads racing a wall-clock deadline,
# and proptest state machines with a fixed case count; in the interpreter they would
# take tens of minutes to hours, or fail their deadline.
# Proptests with the default case count run with PROPTEST_CASES cases.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TERM_COLOR=never
rustup toolchain install nightly --profile minimal >/dev/null 2>&1 || true
rustup component add miri rust-src --toolchain nightly
cargo +nightly miri setup
# `.ci/miri.sh setup` installs and stops there: .ci/run calls it once before it starts
# the shards side by side, because two installs of one component at once race (a
# clean machine's run failed with "detected conflict: 'bin/cargo-miri'", and left a
# Miri that could not load its rustc).
if [ "${1:-}" = setup ]; then
    exit 0
fi

# proptest's failure persistence reads the working directory: allow it.
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}"
export PROPTEST_CASES="${PROPTEST_CASES:-2}"
# cargo miri builds into <target dir>/miri, apart from the normal build.
# At 8107e6c, from a clean clone beside the fuzzer (and other work on the machine),
# shard 2's airtime-sched run took 1733 s; at a84ef5a, on an idle Intel guest, 368 s
# (fq_codel.rs's proptests shortened under Miri). 2400 s leaves a margin for a slow,
# busy machine: the bound is for a test that stalls, not a budget; the step's length
# is what .ci/run watches.
limit="${MIRI_TIMEOUT:-2400}"

est_skips=(
    # properties.rs: every rate x every length / every constructor argument.
    constructors_accept_exactly_the_documented_domain
    every_rate_equals_mainline_up_to_3290_bytes
    gi_and_bandwidth_monotone_for_every_rate
    table_duration_never_rises_with_streams_mcs_or_bandwidth
    # tables.rs: every table entry looked up and recomputed.
    lookup_answers_exactly_inside_the_tables
    every_entry_matches_a_plain_recomputation_from_the_same_rows
    # golden.rs: every rate at two lengths against mainline's 32-bit product.
    the_wrapping_rates_the_documentation_counts
    # airtime-est forbids unsafe code and has no atomics, so the interpreter finds nothing in
    # its arithmetic that the native run misses; these three are its costliest sweeps
    # (properties.rs: every group at every case, 161 s for 2 cases; golden.rs: the golden
    # file parsed line by line, 259 s for the two), and the other est tests still run here.
    non_increasing_as_mcs_rises
    sampled_estimates_equal_mainlines
    every_group_of_mainline_has_its_shift_and_entries
    # calibrate.rs: two million samples (the dead zone at the largest shift), which in
    # the interpreter passed the shard's 40-minute bound on its own.
    no_dead_zone_at_the_largest_shift
)
sched_skips=(
    # table_two_threads.rs: threads until a wall-clock churn schedule ends.
    two_contexts_with_churn_keep_every_frame_and_charge_exact_at_every_step
    # tx_status.rs: 4096 stations, 40 removals and additions of the last.
    the_last_station_slot_never_takes_the_multicast_mark
    # txq_table.rs: an intake filled to its 8192-frame bound (twice).
    an_intake_nobody_serves_is_bounded
    a_burst_is_queued_whole_with_one_wake_and_stops_at_the_intake_bound
    # txq_table_direct.rs: intakes filled to their bound (the first, with its 8192 frames
    # dropped at the turn, about 10 minutes in the interpreter).
    an_unserved_txq_fills_its_queue_then_its_intake_and_drops_only_at_its_turn
    a_burst_whose_iterator_panics_keeps_the_intake_bound_exact
    # model.rs, bad_input.rs: 256-case state machines.
    scheduler_follows_the_sequential_model
    random_raw_ids_into_every_method_never_panic
    # fq_codel.rs: a txq of MAX_FLOWS flows, each built (about 3 minutes in the interpreter).
    the_largest_flow_count_works
    # src/weakened.rs: reads the crate's sources and .ci/run and searches them for each
    # variant's name (no unsafe, no atomics; it stalled a shard past 15 minutes).
    every_variant_is_used_and_checked_by_ci
    # src/scheduler/listing.rs: every one of 2^15 txq words through a pure function of the
    # word (no atomics; 81 s in the interpreter).
    listed_unheld_is_the_wake_that_changes_nothing
    # src/fq_codel: proptests of the flow table and the txq alone (45 s and 23 s for 2
    # cases), safe code with no atomics, as below.
    internal_invariants_hold_after_every_operation
    rotating_until_positive_leaves_what_the_steps_leave
    # fq_codel.rs: proptests of the FQ-CoDel txq alone (2 cases took 218 s and 120 s), which
    # is safe code with no atomics (src/fq_codel); the table tests (txq_table_direct.rs,
    # coverage_gaps.rs, txq_table_alloc.rs) still run it under Miri.
    every_frame_is_sent_dropped_or_queued_exactly_once
    an_emptied_txq_is_left_as_the_dequeue_that_finds_it_empty_leaves_it
    # codel.rs: 100 000 Newton iterations checked against isqrt.
    inv_sqrt_matches_an_integer_square_root_for_counts_up_to_100000
    # fq_codel.rs: CoDel schedules simulated microsecond by microsecond over seconds.
    codel_never_drops_while_the_sojourn_stays_below_target
    codel_drops_after_an_interval_above_target_then_at_interval_over_sqrt_count
    codel_marks_ect_frames_on_the_same_schedule_instead_of_dropping
    # shares.rs: airtime shares measured over thousands of simulated rounds (substring
    # filters: each covers its `_with_unequal_frame_airtimes` twin too).
    split_airtime_
    # concurrency_smoke.rs: two threads against a 20 s wall-clock deadline, which the
    # interpreter cannot meet (they fail with "no progress"; the loom models cover them).
    small_queues_that_wrap_constantly_lose_no_txq
    # round_recheck.rs: two threads, 100 000 calls of the ready loop each, over an empty AC.
    two_contexts_over_an_empty_list_never_ask_each_other_for_rounds
    # list_membership.rs: a reader racing 200 000 rounds of another thread.
    the_phy_limit_never_counts_more_txqs_than_exist_under_concurrency
    # list_membership.rs, mainline_order.rs: 1000 rounds of a multicast and a station
    # txq, with the invariants checked after each.
    a_backlogged_multicast_txq_does_not_starve_a_station_txq_in_debt
    multicast_backlog_does_not_starve_a_station_txq_in_debt
    two_stations_at_weight_one_under_concurrent_rounds_lose_nothing
    wake_and_completion_rounds_at_once_serve_every_frame_exactly_once
    # adaptive_aql.rs: link models simulated for seconds of airtime over many rates and
    # turnarounds (one of them ran more than 5 minutes in the interpreter).
    stays_within_floor_and_configured_on_every_link
    a_fast_link_settles_low_and_keeps_its_throughput
    a_slow_link_keeps_enough_for_its_turnaround
    a_rate_drop_is_followed_within_20_ms
    a_backlogged_station_always_has_a_frame_in_flight
    a_station_that_learnt_nothing_follows_its_configured_limit
)

skip_args() {
    for s in "$@"; do printf -- '--skip\n%s\n' "$s"; done
    # More arguments for the test harness, e.g. MIRI_TEST_ARGS="-Z unstable-options
    # --report-time" for each test's time (how the weights below were measured).
    local extra=()
    read -ra extra <<<"${MIRI_TEST_ARGS:-}"
    for a in "${extra[@]}"; do printf -- '%s\n' "$a"; done
}

# Shard K of N (arguments, default 1 1). A unit is one `cargo miri test` target set:
# airtime-sched's unit tests, airtime-est, and each of airtime-sched's integration test
# files; cargo builds each shard's targets under one lock, then the interpreters run in
# parallel. The units are dealt by weight (their Miri seconds below), heaviest first,
# each to the shard with the least so far (ties: the lower shard), so that shards side by
# side on separate cores end together (dealt in turn, the last clean-clone run's two
# ended 200 s apart). A unit without a weight (a new test file) counts as 30 s. Every
# unit lands in exactly one shard.
declare -A weight=(
    # Seconds on the CI's scale: its last clean-clone run's per-binary times, scaled by
    # what the reductions above saved when measured one unit at a time on 2 shared cores.
    [sched-lib]=175 [txq_table]=170 [est]=100 [round_recheck]=90 [txq_table_alloc]=65
    [fq_codel]=50 [adaptive_aql]=50 [coverage_gaps]=50 [invariants]=50
    [txq_table_direct]=45 [bad_input]=45 [model]=40 [adaptive_aql_props]=30
)
shard=${1:-1}
shards=${2:-1}
units=(sched-lib est)
for f in airtime-sched/tests/*.rs; do
    name=$(basename "$f" .rs)
    # The loom models compile to nothing without --cfg loom.
    [[ $name == loom_* ]] || units+=("$name")
done
# Heaviest first (by name on equal weights, so that the deal does not depend on the
# order the files are listed in).
mapfile -t units < <(for u in "${units[@]}"; do echo "${weight[$u]:-30} $u"; done | sort -k1,1nr -k2,2 | cut -d' ' -f2)
load=()
for ((k = 0; k < shards; k++)); do load[k]=0; done
est=0
sched_targets=()
for u in "${units[@]}"; do
    lightest=0
    for ((k = 1; k < shards; k++)); do
        ((load[k] < load[lightest])) && lightest=$k
    done
    load[lightest]=$((load[lightest] + ${weight[$u]:-30}))
    ((lightest == shard - 1)) || continue
    case $u in
        est) est=1 ;;
        sched-lib) sched_targets+=(--lib) ;;
        *) sched_targets+=(--test "$u") ;;
    esac
done
echo "::: miri shard $shard of $shards:$( ((est)) && echo " airtime-est") airtime-sched ${sched_targets[*]}"

if ((est)); then
    t0=$(date +%s)
    mapfile -t args < <(skip_args "${est_skips[@]}")
    timeout "$limit" cargo +nightly miri test -p airtime-est --lib --tests -- "${args[@]}"
    echo "::: miri airtime-est: ok in $(($(date +%s) - t0)) s"
fi

if ((${#sched_targets[@]})); then
    t1=$(date +%s)
    mapfile -t args < <(skip_args "${sched_skips[@]}")
    timeout "$limit" cargo +nightly miri test -p airtime-sched "${sched_targets[@]}" -- "${args[@]}"
    echo "::: miri airtime-sched (shard $shard of $shards): ok in $(($(date +%s) - t1)) s"
fi
