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

    // The model is mainline's single list, laps walked one by one; the scheduler must
    // give the same answer at every step.
    #[test]
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
    assert_eq!(s.charge_us(sta, Ac::Be, 100).unwrap_err(), ChargeError::StationRemoved);
    assert_eq!(s.total_pending_us(), 0);
}

// ------------------------------------------------------------------------------------
// The smallest sequence of each kind of disagreement between the model (mainline) and
// the two-FIFO-queue scheduler, as the state machine finds them, replayed through the
// same harness (every answer and counter compared after each step, then the drain).

/// Runs `ops` from time `start` on the default harness configuration.
fn replay(start: u64, ops: &[Op]) {
    let mut h = Harness::new(config(false, false, false), start);
    h.compare();
    for op in ops {
        h.apply(op);
        h.compare();
    }
    h.drain();
}

/// A round on BE that serves one txq, moving up to `max_frames` frames of 100 us.
fn serve(max_frames: u32) -> Op {
    Op::Serve { ac: 0, start: true, max_frames, airtime_us: 100, backlogged: true, wake: None, second: false }
}

fn station(weight: u16) -> Op {
    Op::AddStation { weight }
}

/// A BE txq of station `sta` (None: station-less).
fn txq(sta: Option<usize>) -> Op {
    Op::AddTxq { sta, tid: 0 }
}

fn enqueue(txq: usize) -> Op {
    Op::Enqueue { txq, frames: 1 }
}

fn debt(sta: usize, tx_us: u32) -> Op {
    Op::RegisterAirtime { sta, ac: 0, tx_us, rx_us: 0 }
}

/// Stops a station at the AQL check for good (limits of 0).
fn aql_blocked(sta: usize) -> Op {
    Op::SetLimits { sta, ac: 0, a: 0, b: 0 }
}

/// Two station txqs woken A then B: mainline's `list_add` serves B first.
#[test]
fn model_head_insertions_are_last_in_first_out() {
    replay(0, &[station(256), station(256), txq(Some(0)), txq(Some(1)), enqueue(0), enqueue(1), serve(1)]);
}

/// A station txq in debt is AQL-blocked at the back; a multicast txq is woken. Mainline
/// lists it at the tail, so the next walk visits (and tops up) the station txq before
/// serving it. (The two-FIFO scheduler listed it at the front and skipped the station
/// txq: its deficit was one weight short.)
#[test]
fn model_station_less_txqs_are_listed_at_the_tail() {
    replay(
        0,
        &[
            station(1),
            txq(Some(0)),
            txq(None),
            aql_blocked(0),
            enqueue(0),
            debt(0, 100),
            serve(1),
            enqueue(1),
            serve(1),
        ],
    );
}

/// A removed txq leaves the list at once (`ieee80211_txq_purge`): the per-AC PHY limit
/// counts nothing. The scheduler counts its entry until `next_txq` drops it.
#[test]
fn model_removed_txqs_leave_the_phy_limit_at_once() {
    replay(0, &[txq(None), enqueue(0), Op::RemoveTxq { txq: 0 }]);
}

/// A txq allowed by `may_transmit` leaves the list (mainline's `list_del_init`) and,
/// returned empty, is listed no more. The scheduler keeps its entry where it was: it
/// counts in the PHY limit, and a later `next_txq` would hand out the empty txq.
#[test]
fn model_pulled_txqs_leave_the_list() {
    replay(0, &[txq(None), enqueue(0), Op::Pull { txq: 0, max_frames: 1, airtime_us: 100, backlogged: true }]);
}

/// Three weight-1 txqs A, B, C, listed in that order by Stalled returns, in debt
/// -10, -3, -9: mainline walks four laps and serves B, leaving C, A (both at -6), and
/// serves C next. (The old lap boost left A, C and served A.)
#[test]
fn model_long_walks_leave_mainline_order() {
    replay(
        0,
        &[
            station(1),
            station(1),
            station(1),
            txq(Some(0)),
            txq(Some(1)),
            txq(Some(2)),
            enqueue(0),
            serve(0),
            enqueue(1),
            serve(0),
            enqueue(2),
            serve(0),
            debt(0, 11),
            debt(1, 4),
            debt(2, 10),
            serve(1),
            serve(1),
        ],
    );
}

/// With no airtime flags set, `__ieee80211_schedule_txq` lists station txqs at the tail
/// too. The scheduler still puts them at the front, so, as with the multicast txq
/// above, the AQL-blocked station txq in debt at the back is not visited.
#[test]
fn model_station_txqs_are_listed_at_the_tail_without_airtime_flags() {
    replay(
        0,
        &[
            station(1),
            station(256),
            txq(Some(0)),
            txq(Some(1)),
            aql_blocked(0),
            enqueue(0),
            debt(0, 100),
            serve(1),
            Op::SetAirtimeFlags { tx: false, rx: false },
            enqueue(1),
            serve(1),
        ],
    );
}

/// `ieee80211_txq_set_active` runs only when a txq is newly listed: a second wake of a
/// listed txq 60 ms later does not refresh the station's `last_active`, so 120 ms after
/// the first wake the station is inactive and registered airtime is not charged. The
/// scheduler does the same: a wake stamps the station only when it lists the txq.
#[test]
fn model_a_wake_of_a_listed_txq_keeps_last_active() {
    replay(
        0,
        &[
            station(256),
            txq(Some(0)),
            enqueue(0),
            Op::Advance { us: 60_000 },
            enqueue(0),
            Op::Advance { us: 60_000 },
            debt(0, 1000),
        ],
    );
}

/// The activity stamp has a grain (`Config::active_stamp_grain_us`, 781 us of the 100 ms
/// window), and the model keeps it as the scheduler does: a wake 500 us after a stamp
/// of 0 leaves 0, so 99.8 ms after the wake the station is already inactive and
/// registered airtime is not charged; a wake a grain after the stamp moves it, so the
/// same airtime 99.8 ms after that wake is charged.
#[test]
fn model_last_active_moves_only_once_a_grain_old() {
    replay(
        0,
        &[station(1), txq(Some(0)), Op::Advance { us: 500 }, enqueue(0), Op::Advance { us: 99_800 }, debt(0, 1000)],
    );
    replay(
        0,
        &[station(1), txq(Some(0)), Op::Advance { us: 781 }, enqueue(0), Op::Advance { us: 99_800 }, debt(0, 1000)],
    );
}
