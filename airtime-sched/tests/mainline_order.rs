//! The scheduler's order against mainline mac80211's, on hand-built cases whose
//! mainline answer is worked out in the comments: `__ieee80211_schedule_txq` puts a newly
//! backlogged station txq at the head of the AC's one list and a station-less txq at its
//! tail, and `ieee80211_next_txq` walks the list lap by lap, topping up a negative
//! deficit by the weight at each visit. The proptest state machine (tests/model.rs)
//! checks the same algorithm on random sequences; these pin the cases by name.

mod common;

use airtime_sched::{Ac, Instant, Scheduler, StationId, TxqId, TxqReturn};
use common::*;

const BE: Ac = Ac::Be;

/// Starts a round on BE and serves one txq with `outcome`; returns the txq.
fn serve(s: &Scheduler, outcome: TxqReturn, now: Instant) -> Option<TxqId> {
    serve_once(s, s.start_round(BE), outcome, now)
}

/// Registers `us` of tx airtime for `sta` on BE (the station must be active).
fn debt(s: &Scheduler, sta: StationId, us: u32, now: Instant) {
    s.register_airtime(sta, BE, us, 0, now).unwrap();
}

/// Mainline: A, B, C are each listed with `list_add`, so the list is C, B, A and
/// `ieee80211_next_txq` hands out C first (last woken, first served).
#[test]
fn head_insertion_serves_the_last_woken_station_txq_first() {
    let mut s = sched();
    let (_, a) = station_with_txq(&s, 256, BE);
    let (_, b) = station_with_txq(&s, 256, BE);
    let (_, c) = station_with_txq(&s, 256, BE);
    for txq in [a, b, c] {
        s.wake_txq(txq, T0).unwrap();
    }
    let round = s.start_round(BE);
    let order: Vec<TxqId> = std::iter::from_fn(|| serve_once(&s, round, TxqReturn::Empty, T0)).collect();
    assert_eq!(order, [c, b, a]);
    s.check_invariants_quiescent().unwrap();
}

/// A multicast (station-less) txq that is always backlogged and a station txq that keeps
/// running into debt. Mainline lists the multicast txq at the tail on every return, so
/// the station txq, at the head, is visited (topped up by its weight) at every
/// `ieee80211_next_txq` and served once its deficit is back to zero: with weight 256
/// and 1000 us a frame, about every fourth round. Before the redesign the multicast txq
/// went back to the front queue each time and the station txq, rotated to the back, was
/// neither visited nor served (once in 1000 rounds).
#[test]
fn multicast_backlog_does_not_starve_a_station_txq_in_debt() {
    let mut s = sched();
    let (sta, txq) = station_with_txq(&s, 256, BE);
    let mcast = s.add_txq(None, tid_of(BE)).unwrap();
    s.wake_txq(mcast, T0).unwrap();
    s.wake_txq(txq, T0).unwrap();
    let mut last_served = 0;
    let mut longest_gap = 0;
    let mut station_served = 0;
    for n in 1..=1000u64 {
        let now = T0.add_micros(n * 100);
        let round = s.start_round(BE);
        assert!(round.is_open());
        while let Some(mut serving) = s.next_txq(round, now) {
            if serving.txq() == txq {
                // One frame of 1000 us, completed at once and registered.
                let charge = serving.charge_us(1000).unwrap();
                s.return_txq(serving, TxqReturn::Backlogged, now);
                s.release(charge).unwrap();
                debt(&s, sta, 1000, now);
                longest_gap = longest_gap.max(n - last_served);
                last_served = n;
                station_served += 1;
            } else {
                s.return_txq(serving, TxqReturn::Backlogged, now);
            }
        }
    }
    longest_gap = longest_gap.max(1000 - last_served);
    assert!(longest_gap <= 8, "the station txq waited {longest_gap} rounds ({station_served} services)");
    assert!(station_served >= 1000 / 8, "{station_served} services in 1000 rounds");
    s.check_invariants_quiescent().unwrap();
}

/// E6: at weight 1 a debt of tens of milliseconds takes tens of thousands of
/// laps. Mainline walks them in one `ieee80211_next_txq` call; the scheduler must answer
/// in that one call too, with the deficits the walked laps leave.
///
/// List B, A (A listed first and returned Stalled, to the tail; B woken after it, at the
/// head). A's effective deficit is 1 - 50 000 = -49 999 and B's 1 - 70 000 = -69 999,
/// so both are topped up at each of laps 1..=49 999; at lap 50 000 B is topped a
/// 50 000th time (-19 999) and A, now at 0, is served.
#[test]
fn weight_one_debt_is_served_in_one_call_with_the_deficits_of_walked_laps() {
    let mut s = sched();
    let (sta_a, a) = station_with_txq(&s, 1, BE);
    let (sta_b, b) = station_with_txq(&s, 1, BE);
    s.wake_txq(a, T0).unwrap();
    assert_eq!(serve(&s, TxqReturn::Stalled, T0), Some(a));
    s.wake_txq(b, T0).unwrap();
    debt(&s, sta_a, 50_000, T0);
    debt(&s, sta_b, 70_000, T0);
    assert_eq!(s.deficit_us(sta_a, BE).unwrap(), -49_999);
    assert_eq!(s.deficit_us(sta_b, BE).unwrap(), -69_999);

    assert_eq!(serve(&s, TxqReturn::Empty, T0), Some(a));
    assert_eq!(s.deficit_us(sta_a, BE).unwrap(), 0);
    assert_eq!(s.deficit_us(sta_b, BE).unwrap(), -19_999);
    s.check_invariants_quiescent().unwrap();
}

/// After a long walk mainline's list resumes behind the served txq: the txqs before it
/// in the last lap went to the tail, those after it stay ahead of them.
///
/// List A, B, C (each listed by a Stalled return, at the tail), weight 1, effective
/// deficits A -10, B -3, C -9. Laps 1..=3 top all three up (A -7, B 0, C -6); in lap 4,
/// A is topped (-6) and moved to the tail, B is served: the list is C, A, both at -6.
/// The next call tops C and A up six more times (both reach 0) and serves C, the one
/// ahead; A follows.
#[test]
fn after_a_long_walk_the_list_resumes_behind_the_served_txq() {
    let mut s = sched();
    let mut stations = Vec::new();
    for _ in 0..3 {
        let (sta, txq) = station_with_txq(&s, 1, BE);
        s.wake_txq(txq, T0).unwrap();
        assert_eq!(serve(&s, TxqReturn::Stalled, T0), Some(txq));
        stations.push((sta, txq));
    }
    let [(sta_a, a), (sta_b, b), (sta_c, c)] = stations[..] else { unreachable!() };
    debt(&s, sta_a, 11, T0);
    debt(&s, sta_b, 4, T0);
    debt(&s, sta_c, 10, T0);

    assert_eq!(serve(&s, TxqReturn::Empty, T0), Some(b));
    assert_eq!(s.deficit_us(sta_a, BE).unwrap(), -6);
    assert_eq!(s.deficit_us(sta_c, BE).unwrap(), -6);
    assert_eq!(serve(&s, TxqReturn::Empty, T0), Some(c));
    assert_eq!(s.deficit_us(sta_a, BE).unwrap(), 0);
    assert_eq!(serve(&s, TxqReturn::Empty, T0), Some(a));
    s.check_invariants_quiescent().unwrap();
}

/// A station with two txqs on one AC (TIDs 0 and 3 are both BE) is visited, and topped
/// up, once per txq per lap. Mainline, weight 1, effective deficit 1 - 1001 = -1000, list
/// [B, A] (B woken last): each lap adds 2; the 1000th top-up comes at the 1000th visit,
/// the last of lap 500, which is A's; the next visit, B's in lap 501, finds 0 and serves
/// B. The lap skip must count both visits, or it lifts the station too far and serves A.
#[test]
fn a_station_with_two_txqs_on_an_ac_is_topped_up_once_per_txq_per_lap() {
    let mut s = sched();
    let sta = s.add_station(w(1)).unwrap();
    let a = s.add_txq(Some(sta), airtime_sched::Tid::new(0).unwrap()).unwrap();
    let b = s.add_txq(Some(sta), airtime_sched::Tid::new(3).unwrap()).unwrap();
    s.wake_txq(a, T0).unwrap();
    s.wake_txq(b, T0).unwrap();
    debt(&s, sta, 1001, T0);
    assert_eq!(serve(&s, TxqReturn::Backlogged, T0), Some(b));
    assert_eq!(s.deficit_us(sta, BE).unwrap(), 0, "1000 top-ups, as walked laps give");
    s.check_invariants_quiescent().unwrap();
}

/// An entry left by a txq no longer listed is not on mainline's list, so a walk that
/// meets the lap's head again has passed it: a txq added later into that slot is listed
/// afresh by its wake (a station-less one at the tail), not in the dead entry's place.
#[test]
fn a_lap_drops_the_dead_entries_ahead_of_its_head() {
    let mut s = sched_with(|c| c.max_txqs = 2);
    let sta = s.add_station(w(1)).unwrap();
    let a = s.add_txq(Some(sta), airtime_sched::Tid::BE).unwrap();
    let gone = s.add_txq(None, airtime_sched::Tid::BE).unwrap();
    s.wake_txq(gone, T0).unwrap(); // list: [gone]
    s.wake_txq(a, T0).unwrap(); // list: [a, gone]
    s.remove_txq(gone).unwrap(); // mainline: [a]
    // A is in debt and over its AQL limit: topped up once and rotated, and the lap ends
    // at A with nobody eligible. The walk passed the dead entry on its way round.
    debt(&s, sta, 1000, T0); // deficit 1 - 1000 = -999
    s.set_station_limits(sta, BE, airtime_sched::AqlLimits::new(0, 0).unwrap()).unwrap();
    assert_eq!(serve(&s, TxqReturn::Backlogged, T0), None);
    assert_eq!(s.deficit_us(sta, BE).unwrap(), -998);
    // A new station-less txq takes the slot; its wake lists it at the tail: [a, m].
    let m = s.add_txq(None, airtime_sched::Tid::BE).unwrap();
    assert_eq!(m.index(), gone.index());
    s.wake_txq(m, T0).unwrap();
    s.set_station_limits(sta, BE, airtime_sched::AqlLimits::DEFAULT).unwrap();
    // Mainline: A first (topped up, rotated), then M. Had M taken the dead entry's place
    // ahead of A, M would be served without A's top-up.
    assert_eq!(serve(&s, TxqReturn::Empty, T0), Some(m));
    assert_eq!(s.deficit_us(sta, BE).unwrap(), -997, "A was met, and topped up, before M");
    s.check_invariants_quiescent().unwrap();
}
