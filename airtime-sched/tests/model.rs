//! A proptest state machine: random sequences of data-path and control operations run
//! on the real [`Scheduler`] and, step by step, on a plain sequential reference model
//! that is Linux mac80211's algorithm: one ordered list of txqs per AC,
//! `__ieee80211_schedule_txq` (head insertion for newly backlogged station txqs, tail
//! for the rest), `ieee80211_txq_schedule_start`, and `ieee80211_next_txq` walked one
//! entry and one lap at a time, with only the crate's deliberate differences (stalled
//! txqs return to the tail, `may_transmit` does not rotate the list, round numbers are
//! kept when an AC closes), each named in the model's documentation.
//!
//! The model and the harness live in tests/common/reference_model.rs, shared with the
//! `scheduler_ops` fuzz target. This file holds the proptest strategy: which operations,
//! how often, in which ranges. Every `next_txq` answer, every counter and the round state
//! are compared after each step, and `check_invariants` runs after each step; at the end
//! everything is completed and served and nothing may stay pending.

mod common;

use airtime_sched::{Ac, ChargeError, DEFAULT_AQL_THRESHOLD_US, Weight};
use common::reference_model::{ACS, Harness, Op, TIDS, config};
use proptest::prelude::*;

fn weight() -> impl Strategy<Value = u16> {
    prop_oneof![1 => Just(1u16), 1 => 2u16..64, 6 => 64u16..=1024]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => weight().prop_map(|weight| Op::AddStation { weight }),
        1 => any::<usize>().prop_map(|sta| Op::RemoveStation { sta }),
        3 => (proptest::option::weighted(0.85, any::<usize>()), 0..TIDS.len())
            .prop_map(|(sta, tid)| Op::AddTxq { sta, tid }),
        1 => any::<usize>().prop_map(|txq| Op::RemoveTxq { txq }),
        6 => (any::<usize>(), 1u32..4).prop_map(|(txq, frames)| Op::Enqueue { txq, frames }),
        4 => (0..ACS.len()).prop_map(|ac| Op::StartRound { ac }),
        10 => (0..ACS.len(), proptest::bool::weighted(0.4), 0u32..6, 1u32..8000, any::<bool>(),
              proptest::option::weighted(0.2, any::<usize>()), proptest::bool::weighted(0.2))
            .prop_map(|(ac, start, max_frames, airtime_us, backlogged, wake, second)| Op::Serve {
                ac, start, max_frames, airtime_us, backlogged, wake, second
            }),
        5 => (any::<usize>(), any::<bool>()).prop_map(|(which, register)| Op::Complete { which, register }),
        2 => (any::<usize>(), 0..ACS.len(), 0u32..5000, 0u32..2000)
            .prop_map(|(sta, ac, tx_us, rx_us)| Op::RegisterAirtime { sta, ac, tx_us, rx_us }),
        1 => (any::<usize>(), weight()).prop_map(|(sta, weight)| Op::SetWeight { sta, weight }),
        1 => (any::<usize>(), 0..ACS.len(), 0u32..15_000, 0u32..15_000)
            .prop_map(|(sta, ac, a, b)| Op::SetLimits { sta, ac, a, b }),
        2 => (0u64..60_000).prop_map(|us| Op::Advance { us }),
        1 => any::<bool>().prop_map(Op::SetAqlEnabled),
        3 => (any::<usize>(), 0u32..4, 1u32..8000, any::<bool>())
            .prop_map(|(txq, max_frames, airtime_us, backlogged)| Op::Pull { txq, max_frames, airtime_us, backlogged }),
        1 => (0..ACS.len(), 0u32..15_000, 0u32..15_000).prop_map(|(ac, a, b)| Op::SetDefaultLimits { ac, a, b }),
        1 => prop_oneof![Just(DEFAULT_AQL_THRESHOLD_US), 0u32..40_000].prop_map(|us| Op::SetThreshold { us }),
        1 => (any::<bool>(), any::<bool>()).prop_map(|(tx, rx)| Op::SetAirtimeFlags { tx, rx }),
        1 => any::<usize>().prop_map(|sta| Op::ResetAirtime { sta }),
    ]
}

fn any_config() -> impl Strategy<Value = airtime_sched::Config> {
    (any::<bool>(), proptest::bool::weighted(0.3), any::<bool>())
        .prop_map(|(reset, no_pushback, allow)| config(reset, no_pushback, allow))
}

proptest! {
    // proptest's default: 256 cases, or PROPTEST_CASES (an explicit `cases` would
    // override the variable).
    #![proptest_config(ProptestConfig::default())]

    // The model is mainline's single list; the scheduler still has its two FIFO queues
    // and the lap boost, so they disagree until the queue redesign lands (head
    // insertion order, station-less txqs at the tail, removed and pulled txqs off the
    // list at once, laps walked one by one). Un-ignore with the redesign.
    #[test]
    #[ignore = "fails until the queue redesign lands: the model is mainline's single list"]
    fn scheduler_follows_the_sequential_model(
        config in any_config(),
        start in prop_oneof![Just(0u64), 0u64..200_000, 1_000_000u64..2_000_000],
        ops in proptest::collection::vec(op(), 1..200),
    ) {
        let mut h = Harness::new(config, start);
        h.compare();
        for op in &ops {
            h.apply(op);
            h.compare();
        }
        h.drain();
    }
}

#[test]
fn charge_errors_match_the_model_for_removed_stations() {
    // The harness never charges a removed station; pin the error it would get.
    let s = common::sched();
    let sta = s.add_station(Weight::DEFAULT).unwrap();
    s.remove_station(sta).unwrap();
    assert_eq!(s.charge_us(sta, Ac::Be, 100).unwrap_err(), ChargeError::UnknownStation);
    assert_eq!(s.total_pending_us(), 0);
}
