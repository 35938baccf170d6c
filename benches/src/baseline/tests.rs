//! The baseline behaves like mainline (`__ieee80211_schedule_txq`, `ieee80211_txq_schedule_start`, `ieee80211_next_txq`, `ieee80211_txq_airtime_check`, `ieee80211_txq_schedule_airtime_check`, `ieee80211_sta_update_pending_airtime`, `ieee80211_sta_register_airtime`): if it
//! did not, every ratio in BENCHMARKS.md would compare against the wrong thing.

use super::*;

const BE: Ac = Ac::Be;
const T0: u64 = 1_000_000;

fn tid0() -> Tid {
    Tid::BE
}

/// A baseline with `n` stations of the given weights, one BE txq each (txq i = station i).
fn with_stations(weights: &[u16]) -> Baseline {
    let mut b = Baseline::with_capacity(weights.len(), weights.len() + 2);
    for &w in weights {
        let s = b.add_station(w).unwrap();
        assert_eq!(b.add_txq(Some(s), tid0()), Some(s));
    }
    b
}

#[test]
fn wake_inserts_station_txqs_at_the_head_and_stationless_txqs_at_the_tail() {
    let mut b = with_stations(&[256, 256]);
    let mcast = b.add_txq(None, tid0()).unwrap();
    b.schedule_txq(0, true, true, T0);
    b.schedule_txq(mcast, true, true, T0);
    b.schedule_txq(1, true, true, T0);
    assert_eq!(b.order(BE), [1, 0, mcast]);
    // A second wake of a listed txq changes nothing (a txq is never listed twice).
    b.schedule_txq(0, true, true, T0);
    assert_eq!(b.order(BE), [1, 0, mcast]);
}

#[test]
fn a_txq_returned_with_frames_goes_back_to_the_head_and_ends_the_round() {
    let b = with_stations(&[256, 256]);
    b.schedule_txq(0, true, true, T0);
    b.schedule_txq(1, true, true, T0);
    assert!(b.schedule_start(BE));
    let held = b.next_txq(BE).unwrap();
    assert_eq!(held.txq, 1);
    b.schedule_txq(held.txq, false, true, T0);
    assert_eq!(b.order(BE), [1, 0]);
    // Same round: the head was already served, so the round ends (3.4 step 6).
    assert_eq!(b.next_txq(BE), None);
    // A new round serves it again.
    assert!(b.schedule_start(BE));
    assert_eq!(b.next_txq(BE), Some(Held { txq: 1 }));
}

#[test]
fn negative_deficits_are_topped_up_by_the_weight_once_per_lap_until_one_is_served() {
    // Weight 1 (E6): A owes 10 us, B owes 5 us.
    let b = with_stations(&[1, 1]);
    b.schedule_txq(0, true, true, T0);
    b.schedule_txq(1, true, true, T0);
    b.register_airtime(0, BE, 10, 0, T0);
    b.register_airtime(1, BE, 5, 0, T0);
    assert_eq!((b.deficit(0, BE), b.deficit(1, BE)), (-9, -4));
    assert!(b.schedule_start(BE));
    // Head B: -4, -3, -2, -1 topped up, served at 0; A topped up on each of the 4 laps.
    assert_eq!(b.next_txq(BE), Some(Held { txq: 1 }));
    assert_eq!((b.deficit(0, BE), b.deficit(1, BE)), (-5, 0));
    assert_eq!(b.order(BE), [0]);
}

#[test]
fn the_effective_deficit_subtracts_airtime_in_flight() {
    let b = with_stations(&[256]);
    b.schedule_txq(0, true, true, T0);
    let c = b.charge(0, BE, 400).unwrap();
    assert!(b.schedule_start(BE));
    // 256 - 400 < 0: one top-up (512 - 400 >= 0), then served.
    assert_eq!(b.next_txq(BE), Some(Held { txq: 0 }));
    assert_eq!(b.deficit(0, BE), 512);
    b.release(c);
    assert_eq!((b.station_pending(0, BE), b.ac_pending(BE), b.total_pending()), (0, 0, 0));
}

#[test]
fn a_lap_in_which_no_station_passes_its_aql_check_returns_nothing() {
    let mut b = with_stations(&[256, 256]);
    b.set_aql_threshold(0);
    for s in 0..2 {
        b.set_station_limits(s, BE, 100, 100);
        b.schedule_txq(s, true, true, T0);
    }
    let _c0 = b.charge(0, BE, 100).unwrap();
    let _c1 = b.charge(1, BE, 100).unwrap();
    assert!(!b.airtime_check(0) && !b.airtime_check(1));
    assert!(b.schedule_start(BE));
    assert_eq!(b.next_txq(BE), None);
    assert_eq!(b.order(BE), [1, 0], "one full lap: both rotated once");
}

#[test]
fn the_station_check_allows_the_high_limit_only_below_the_threshold() {
    let b = with_stations(&[256, 256]);
    let _c = b.charge(0, BE, 4092).unwrap();
    let _c2 = b.charge(0, BE, 1000).unwrap();
    // 5092 pending: over low (5000), under high (12000); total 5092 < 24000.
    assert!(b.airtime_check(0));
    let _big: Vec<_> = (0..5).map(|_| b.charge(1, BE, 4092).unwrap()).collect();
    // Total now 25552 >= 24000: station 0 is cut to its low limit.
    assert!(!b.airtime_check(0));
    assert!(!b.airtime_check(1), "20460 us pending, over both limits at this total");
}

#[test]
fn the_phy_check_counts_listed_txqs_and_an_empty_list_wraps_to_no_limit() {
    let b = with_stations(&[256, 256, 256]);
    let charges: Vec<_> = (0..3).map(|_| b.charge(2, BE, 4000).unwrap()).collect();
    assert_eq!(b.ac_pending(BE), 12000);
    // n = 0: (0 - 1) * 5000 / 2 + 12000 wraps to about 2.1e9.
    assert!(b.schedule_start(BE));
    // n = 1: limit 12000, pending 12000: closed, round reset to 0.
    b.schedule_txq(0, true, true, T0);
    assert!(!b.schedule_start(BE));
    assert_eq!(b.schedule_round(BE), 0);
    assert_eq!(b.next_txq(BE), None);
    // n = 2: limit 14500: open.
    b.schedule_txq(1, true, true, T0);
    assert!(b.schedule_start(BE));
    for c in charges {
        b.release(c);
    }
}

#[test]
fn closing_the_ac_resets_the_round_so_the_txq_served_in_round_one_is_skipped_once() {
    // The seed's bug (B1, in `ieee80211_txq_schedule_start`): mainline has it, so the baseline has it.
    let b = with_stations(&[256]);
    b.schedule_txq(0, true, true, T0);
    assert!(b.schedule_start(BE));
    assert_eq!(b.schedule_round(BE), 1);
    let held = b.next_txq(BE).unwrap();
    let charges: Vec<_> = (0..3).map(|_| b.charge(0, BE, 4092).unwrap()).collect();
    b.schedule_txq(held.txq, false, true, T0);
    assert!(!b.schedule_start(BE), "12276 us pending over the 12000 us limit of one txq");
    for c in charges {
        b.release(c);
    }
    assert!(b.schedule_start(BE));
    assert_eq!(b.schedule_round(BE), 1, "round number 1 is reused");
    assert_eq!(b.next_txq(BE), None, "the head is stamped 1: the round is lost");
    assert!(b.schedule_start(BE));
    assert_eq!(b.next_txq(BE), Some(Held { txq: 0 }));
}

#[test]
fn an_empty_txq_of_a_station_in_debt_stays_listed_at_the_tail_for_100_ms() {
    let b = with_stations(&[256, 256]);
    b.schedule_txq(0, true, true, T0);
    b.schedule_txq(1, true, true, T0);
    assert!(b.schedule_start(BE));
    let held = b.next_txq(BE).unwrap();
    assert_eq!(held.txq, 1);
    b.register_airtime(1, BE, 1000, 0, T0);
    b.schedule_txq(1, false, false, T0 + 50_000);
    assert_eq!(b.order(BE), [0, 1], "kept active, at the tail");

    // Out of the window, or out of debt, an empty txq leaves the list.
    let b = with_stations(&[256, 256]);
    b.schedule_txq(0, true, true, T0);
    b.schedule_txq(1, true, true, T0);
    assert!(b.schedule_start(BE));
    let held = b.next_txq(BE).unwrap();
    b.register_airtime(held.txq, BE, 1000, 0, T0);
    b.schedule_txq(held.txq, false, false, T0 + 150_000);
    assert_eq!(b.order(BE), [0]);
    let held = b.next_txq(BE).unwrap();
    b.schedule_txq(held.txq, false, false, T0);
    assert_eq!(b.order(BE), Vec::<u32>::new());
}

#[test]
fn registered_airtime_charges_the_deficit_only_within_the_active_window() {
    let b = with_stations(&[256]);
    b.schedule_txq(0, true, true, T0);
    b.register_airtime(0, BE, 100, 20, T0 + 100_000);
    assert_eq!(b.deficit(0, BE), 256 - 120);
    b.register_airtime(0, BE, 100, 20, T0 + 100_001);
    assert_eq!(b.deficit(0, BE), 256 - 120, "idle: statistics only");
    assert_eq!(b.tx_airtime(0, BE), 200);
}

#[test]
fn a_release_larger_than_pending_clamps_at_zero_and_keeps_the_total_the_sum() {
    let b = with_stations(&[256]);
    let _c = b.charge(0, BE, 100).unwrap();
    b.release(BaselineCharge { sta: 0, ac: BE, airtime_us: 200 });
    assert_eq!((b.station_pending(0, BE), b.ac_pending(BE), b.total_pending()), (0, 0, 0));
}

#[test]
fn charges_are_rounded_down_to_4_us_and_clamped_at_4092_and_zero_is_not_charged() {
    let b = with_stations(&[256]);
    assert_eq!(b.charge(0, BE, 3), None);
    let c = b.charge(0, BE, 29).unwrap();
    assert_eq!(c.airtime_us, 28);
    let big = b.charge(0, BE, 12_506).unwrap();
    assert_eq!(big.airtime_us, 4092);
    let raw = <Baseline as SchedulerUnderTest>::charge_into_raw(big);
    assert_eq!(
        <Baseline as SchedulerUnderTest>::charge_from_raw(raw),
        Some(BaselineCharge { sta: 0, ac: BE, airtime_us: 4092 })
    );
}

#[test]
fn a_stationless_txq_skips_the_deficit_and_aql_checks() {
    let mut b = with_stations(&[1]);
    let mcast = b.add_txq(None, tid0()).unwrap();
    b.register_airtime(0, BE, 10_000, 0, T0);
    b.schedule_txq(mcast, true, true, T0);
    assert!(b.schedule_start(BE));
    assert_eq!(b.next_txq(BE), Some(Held { txq: mcast }));
    assert!(b.airtime_check(mcast));
}
