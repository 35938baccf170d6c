//! Charging through a held txq (`Serving::charge_us`): the station counts each frame at
//! once, the AC's counter gets the service's sum when the txq is returned, and the
//! serving context's own checks see the charges meanwhile, so a single context decides
//! exactly as it would charging through the scheduler.

mod common;

use airtime_sched::{Ac, AqlLimits, Charge, ChargeError, Scheduler, Serving, StationId, Tid, TxqId, TxqReturn};
use common::{T0, sched, w};

/// A round on BE and its first txq (the one station's, in these tests).
fn serve(s: &Scheduler) -> Serving<'_> {
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    s.next_txq(round, T0).expect("the woken txq is served")
}

fn one_station() -> (Scheduler, StationId, TxqId) {
    let s = sched();
    let sta = s.add_station(w(256)).unwrap();
    let txq = s.add_txq(Some(sta), Tid::BE).unwrap();
    s.wake_txq(txq, T0).unwrap();
    (s, sta, txq)
}

#[test]
fn the_station_counts_at_once_and_the_ac_when_the_txq_is_returned() {
    let (mut s, sta, _) = one_station();
    let mut serving = serve(&s);
    let a = serving.charge_us(100).unwrap();
    let b = serving.charge_us(200).unwrap();
    assert_eq!(s.station_pending_us(sta, Ac::Be).unwrap(), 300, "the station, at once");
    assert_eq!(s.ac_pending_us(Ac::Be), 0, "the AC, not yet");
    s.return_txq(serving, TxqReturn::Backlogged, T0);
    assert_eq!(s.ac_pending_us(Ac::Be), 300, "the AC, on return");
    s.check_invariants_quiescent().unwrap();
    assert!(s.release_batch([a, b]).is_clean());
    assert_eq!(s.total_pending_us(), 0);
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn a_handle_dropped_without_return_still_hands_its_charges_to_the_ac() {
    let (mut s, _, _) = one_station();
    let mut serving = serve(&s);
    let c = serving.charge_us(400).unwrap();
    drop(serving);
    assert_eq!(s.ac_pending_us(Ac::Be), 400);
    s.check_invariants_quiescent().unwrap();
    s.release(c).unwrap();
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn a_release_that_overtakes_the_return_reads_as_zero_and_nothing_is_lost() {
    let (mut s, _, _) = one_station();
    let mut serving = serve(&s);
    let c = serving.charge_us(100).unwrap();
    // The completion context releases the frame before the wake context returns the txq.
    assert_eq!(s.release(c), Ok(()), "a genuine release, not an underflow");
    assert_eq!(s.ac_pending_us(Ac::Be), 0, "below the sum for a while, read as 0");
    assert_eq!(s.total_pending_us(), 0);
    s.return_txq(serving, TxqReturn::Empty, T0);
    assert_eq!((s.ac_pending_us(Ac::Be), s.underflows()), (0, 0));
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn a_charge_for_a_removed_station_through_the_handle_is_refused_and_counts_nothing() {
    let (mut s, sta, _) = one_station();
    let mut serving = serve(&s);
    s.remove_station(sta).unwrap();
    assert!(serving.charge_us(100).is_err());
    s.return_txq(serving, TxqReturn::Empty, T0);
    assert_eq!(s.total_pending_us(), 0);
    s.check_invariants_quiescent().unwrap();
}

/// One context: the same AQL decisions frame by frame whether it charges through the
/// handle or through the scheduler, including where the PHY-wide threshold decides, and
/// with frames completing while the txq is held (`release_every`: after every n-th
/// charge, release the oldest held charge).
#[test]
fn a_single_context_decides_as_it_would_charging_through_the_scheduler() {
    for release_every in [0, 1, 2, 3] {
        let through_handle = run(true, release_every);
        assert_eq!(through_handle, run(false, release_every), "release_every={release_every}");
        if release_every == 0 {
            // 120 us frames: checks pass up to 960 us (under the threshold), refuse at 1080.
            assert_eq!(through_handle.iter().filter(|&&d| d).count(), 9, "{through_handle:?}");
        }
    }

    fn run(through_handle: bool, release_every: usize) -> Vec<bool> {
        let (s, sta, _) = one_station();
        // Low 200 us, high 2000 us, threshold 1000 us: between 200 and 2000 us pending,
        // the PHY total (this station's own charges here) decides.
        s.set_station_limits(sta, Ac::Be, AqlLimits::new(200, 2000).unwrap()).unwrap();
        s.set_aql_threshold_us(1000);
        let mut serving = serve(&s);
        let mut decisions = Vec::new();
        let mut held: Vec<Charge> = Vec::new();
        for n in 1..=24 {
            let may = serving.airtime_check();
            decisions.push(may);
            if !may {
                break;
            }
            let c = if through_handle { serving.charge_us(120) } else { s.charge_us(sta, Ac::Be, 120) };
            held.push(c.unwrap());
            if release_every != 0 && n % release_every == 0 {
                s.release(held.remove(0)).unwrap();
            }
        }
        s.return_txq(serving, TxqReturn::Backlogged, T0);
        assert!(s.release_batch(held).is_clean());
        decisions
    }
}

#[test]
fn a_held_sum_reaching_the_flush_bound_goes_to_the_ac_before_the_return() {
    let (mut s, _, _) = one_station();
    s.set_aql_enabled(false);
    let mut serving = serve(&s);
    let half = u32::try_from(Serving::FLUSH_US / 2).unwrap();
    let a = serving.charge_us(half).unwrap();
    assert_eq!(s.ac_pending_us(Ac::Be), 0, "under the bound: held");
    let b = serving.charge_us(half).unwrap();
    assert_eq!(u64::from(s.ac_pending_us(Ac::Be)), Serving::FLUSH_US, "at the bound: added");
    s.return_txq(serving, TxqReturn::Empty, T0);
    assert_eq!(u64::from(s.ac_pending_us(Ac::Be)), Serving::FLUSH_US, "nothing added twice");
    assert!(s.release_batch([a, b]).is_clean());
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn a_handle_charges_only_its_own_txq_station() {
    struct Priced(StationId);
    impl airtime_sched::Station for Priced {
        type Error = airtime_sched::StationErrorKind;
        fn station_id(&self) -> StationId {
            self.0
        }
        fn last_tx_rate(&self) -> Option<airtime_est::Rate> {
            None
        }
        fn expected_airtime_us(&self, frame_len: u32, ac: Ac) -> Result<u32, Self::Error> {
            airtime_sched::price_from_rate(self.last_tx_rate(), frame_len, ac)
        }
    }
    let (mut s, sta, _) = one_station();
    let other = s.add_station(w(256)).unwrap();
    let lone = s.add_txq(None, Tid::new(3).unwrap()).unwrap();
    s.wake_txq(lone, T0).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    let mut first = s.next_txq(round, T0).unwrap();
    let mut second = s.next_txq(round, T0).unwrap();
    let (station_txq, lone_txq) =
        if first.station() == Some(sta) { (&mut first, &mut second) } else { (&mut second, &mut first) };
    assert_eq!(station_txq.charge_frame(&Priced(other), 1500), Err(ChargeError::OtherStation));
    let c = station_txq.charge_frame(&Priced(sta), 1500).unwrap();
    // A station-less txq's frame goes to its AC's multicast budget, not to any station.
    let mc = lone_txq.charge_us(100).unwrap();
    assert!(mc.is_multicast() && mc.station().is_none());
    assert_eq!(s.multicast_pending_us(Ac::Be), 100);
    s.return_txq(first, TxqReturn::Empty, T0);
    s.return_txq(second, TxqReturn::Empty, T0);
    s.release(c).unwrap();
    s.release(mc).unwrap();
    assert_eq!(s.multicast_pending_us(Ac::Be), 0);
    assert_eq!(s.total_pending_us(), 0);
    s.check_invariants_quiescent().unwrap();
}
