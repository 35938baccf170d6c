//! Adaptive AQL's bounds after every step of random sequences of charges, releases
//! (single and batched, some larger than what is pending), checks, and run-time changes of
//! the limits, the defaults, the weight (with TX_NO_PUSHBACK) and the threshold: the
//! applied high limit stays in `[min(floor, configured high), configured high]`, the low
//! limit at most the high and not 0 unless configured 0, and a station with nothing
//! pending is allowed whenever its configured limits would allow it.

mod common;

use airtime_sched::{Ac, AqlLimits, Scheduler, StationId, Weight};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Charge(u32),
    Release(usize),
    ReleaseAll,
    Check,
    StationLimits(u32, u32),
    DefaultLimits(u32, u32),
    Weight(u16),
    Threshold(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (4u32..40_000).prop_map(Op::Charge),
        6 => (0usize..8).prop_map(Op::Release),
        1 => Just(Op::ReleaseAll),
        4 => Just(Op::Check),
        // Small lows (scaled to below 1 us), and highs beyond the learnt word's ~1 s.
        1 => (prop_oneof![0u32..4, 0u32..20_000], prop_oneof![4 => 0u32..40_000, 1 => 1_000_000u32..3_000_000])
            .prop_map(|(a, b)| Op::StationLimits(a.min(b), a.max(b))),
        1 => (prop_oneof![0u32..4, 0u32..20_000], 0u32..40_000).prop_map(|(a, b)| Op::DefaultLimits(a.min(b), a.max(b))),
        1 => (1u16..1024).prop_map(Op::Weight),
        1 => (0u32..40_000).prop_map(Op::Threshold),
    ]
}

fn check_bounds(s: &Scheduler, sta: StationId, floor_us: u32) -> Result<(), TestCaseError> {
    let aql = s.station_aql(sta).unwrap();
    let (l, c) = (aql.limits[Ac::Be], aql.configured.unwrap()[Ac::Be]);
    let lowest = floor_us.min(c.high_us());
    prop_assert!(l.high_us() <= c.high_us(), "{l:?} over {c:?}");
    prop_assert!(l.high_us() >= lowest, "{l:?} under the floor {floor_us} ({c:?})");
    prop_assert!(l.low_us() <= l.high_us());
    prop_assert!(c.low_us() == 0 || l.low_us() >= 1, "{l:?}: low 0 from {c:?}");
    if aql.pending_us[Ac::Be] == 0 {
        // What the configured limits decide at nothing pending, with this threshold (the
        // station is the PHY's only one and charges BE only: the PHY total is 0 too).
        let configured = airtime_sched::aql::station_may_send(0, c, 0, s.aql_threshold_us());
        prop_assert!(!configured || s.airtime_check(sta, Ac::Be).unwrap(), "nothing pending, refused at {l:?} ({c:?})");
    }
    Ok(())
}

fn run(no_pushback: bool, floor_us: u32, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let config = common::builder()
        .adaptive_aql(true)
        .adaptive_aql_floor_us(floor_us.into())
        .unwrap()
        .tx_no_pushback(no_pushback)
        .build();
    let s = Scheduler::new(config).unwrap();
    let sta = s.add_station(Weight::DEFAULT).unwrap();
    let mut charges = Vec::new();
    for op in ops {
        match op {
            Op::Charge(us) => charges.extend(s.charge_us(sta, Ac::Be, us).ok()),
            Op::Release(i) if !charges.is_empty() => {
                let c = charges.swap_remove(i % charges.len());
                // Half of them twice: a release of more than is pending (an underflow).
                let twice = i % 2 == 0;
                let raw = c.into_raw();
                let _ = s.release(airtime_sched::Charge::from_raw(raw).unwrap());
                if twice {
                    let _ = s.release(airtime_sched::Charge::from_raw(raw).unwrap());
                }
            }
            Op::Release(_) => {}
            Op::ReleaseAll => {
                let _ = s.release_batch(core::mem::take(&mut charges));
            }
            Op::Check => {
                let _ = s.airtime_check(sta, Ac::Be).unwrap();
            }
            Op::StationLimits(lo, hi) => s.set_station_limits(sta, Ac::Be, AqlLimits::new(lo, hi).unwrap()).unwrap(),
            Op::DefaultLimits(lo, hi) => s.set_default_limits(Ac::Be, AqlLimits::new(lo, hi).unwrap()),
            Op::Weight(w) => s.set_weight(sta, Weight::new(w).unwrap()).unwrap(),
            Op::Threshold(t) => s.set_aql_threshold_us(t),
        }
        check_bounds(&s, sta, floor_us)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn bounds_hold_at_every_step(no_pushback: bool, floor_us in prop_oneof![Just(4u32), Just(500), 4u32..30_000, 1_000_000u32..2_000_000],
                                 ops in proptest::collection::vec(op(), 1..300)) {
        run(no_pushback, floor_us, ops)?;
    }
}
