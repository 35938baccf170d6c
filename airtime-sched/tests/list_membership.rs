//! Where txqs sit on their AC's list, and what leaving it frees: regression tests for
//! defects found in review (a starved station txq, slots held by removed txqs, a torn
//! PHY limit).

mod common;

use airtime_sched::{Ac, Scheduler, Tid, TxqReturn, Weight};
use common::{T0, sched, station_with_txq};

/// A backlogged station-less (multicast) txq goes to the tail of the list, as in
/// mainline, so a station txq rotated for its debt is still met and topped up every
/// round. When station-less txqs went to the head, every round ended at the multicast
/// txq and the station txq was served once in 1000 rounds.
#[test]
fn a_backlogged_multicast_txq_does_not_starve_a_station_txq_in_debt() {
    let mut s = sched();
    let (sta, y) = station_with_txq(&s, 256, Ac::Be);
    let m = s.add_txq(None, Tid::BE).unwrap();
    s.wake_txq(y, T0).unwrap();
    s.wake_txq(m, T0).unwrap();
    let (mut y_served, mut m_served) = (0, 0);
    let mut now = T0;
    for _ in 0..1000 {
        now = now.add_micros(1000);
        let round = s.start_round(Ac::Be);
        assert!(round.is_open());
        let mut charges = Vec::new();
        while let Some(mut serving) = s.next_txq(round, now) {
            if serving.txq() == y {
                y_served += 1;
                charges.push(serving.charge_us(1000).unwrap());
            } else {
                m_served += 1;
            }
            s.return_txq(serving, TxqReturn::Backlogged, now);
        }
        for c in charges {
            s.release(c).unwrap();
            s.register_airtime(sta, Ac::Be, 1000, 0, now).unwrap();
        }
        s.check_invariants_quiescent().unwrap();
    }
    // 1000 us of airtime a service against 256 us of top-up a round: about one round in
    // four, as mainline's list gives it.
    assert!(y_served >= 200, "the station txq was served {y_served} times in 1000 rounds (multicast {m_served})");
    assert!(m_served >= 900, "and the multicast txq still every round or so: {m_served}");
}

/// A txq removed while listed frees its slot at once, for a txq of any AC, even when no
/// round ever runs on the removed txq's AC to meet its entry.
#[test]
fn a_removed_listed_txq_frees_its_slot_for_any_ac_at_once() {
    let mut s = Scheduler::new({
        let mut c = common::config();
        c.max_txqs = 1;
        c
    })
    .unwrap();
    let sta = s.add_station(Weight::DEFAULT).unwrap();
    let bk = s.add_txq(Some(sta), Tid::new(1).unwrap()).unwrap();
    s.wake_txq(bk, T0).unwrap();
    s.remove_station(sta).unwrap();
    assert_eq!(s.phy_limit_us(Ac::Bk), None, "the removed txq's entry is not counted as listed");
    let sta2 = s.add_station(Weight::DEFAULT).unwrap();
    let be = s.add_txq(Some(sta2), Tid::BE).expect("the slot is free");
    s.check_invariants_quiescent().unwrap();
    // The new txq works on its own AC; the old entry is dropped when BK next runs.
    s.wake_txq(be, T0).unwrap();
    let serving = s.next_txq(s.start_round(Ac::Be), T0).expect("the new txq is served");
    assert_eq!(serving.txq(), be);
    s.return_txq(serving, TxqReturn::Empty, T0);
    assert!(s.next_txq(s.start_round(Ac::Bk), T0).is_none(), "the dead BK entry hands out nothing");
    s.check_invariants_quiescent().unwrap();
}

/// A slot whose removed txq's entry is still on the same AC's list takes a new txq: the
/// entry stands for no wake of it (it is not handed out), and a wake takes it over.
#[test]
fn a_new_txq_in_a_slot_with_a_dead_entry_is_served_only_once_woken() {
    let mut s = Scheduler::new({
        let mut c = common::config();
        c.max_txqs = 1;
        c
    })
    .unwrap();
    let old = s.add_txq(None, Tid::BE).unwrap();
    s.wake_txq(old, T0).unwrap();
    s.remove_txq(old).unwrap();
    let new = s.add_txq(None, Tid::BE).expect("the slot is free");
    assert_ne!(old, new);
    assert_eq!(s.phy_limit_us(Ac::Be), None, "nothing is listed");
    s.check_invariants_quiescent().unwrap();
    assert!(s.next_txq(s.start_round(Ac::Be), T0).is_none(), "the new txq was never woken");
    s.check_invariants_quiescent().unwrap();
    // Again, with a wake before any round: the old entry now stands for the new txq.
    s.remove_txq(new).unwrap();
    let newer = s.add_txq(None, Tid::BE).unwrap();
    s.wake_txq(newer, T0).unwrap();
    let serving = s.next_txq(s.start_round(Ac::Be), T0).expect("the woken txq is served");
    assert_eq!(serving.txq(), newer);
    s.return_txq(serving, TxqReturn::Empty, T0);
    s.check_invariants_quiescent().unwrap();
}

/// The per-AC PHY limit read by one context while another keeps popping and pushing
/// the AC's entries never reads more txqs than are registered (a torn read of the list's
/// positions once made it ~1025, a limit of about 2.5 s of airtime).
#[test]
fn the_phy_limit_never_counts_more_txqs_than_exist_under_concurrency() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let s = Arc::new(sched());
    let (_, q) = station_with_txq(&s, 256, Ac::Be);
    let q2 = s.add_txq(None, Tid::BE).unwrap();
    s.wake_txq(q, T0).unwrap();
    s.wake_txq(q2, T0).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let rounds = Arc::new(AtomicU64::new(0));
    let churn = {
        let (s, stop, rounds) = (s.clone(), stop.clone(), rounds.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let round = s.start_round(Ac::Be);
                while let Some(x) = s.next_txq(round, T0) {
                    s.return_txq(x, TxqReturn::Stalled, T0);
                }
                rounds.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    // Two listed txqs: high + low / 2 = 14500 us at most. Read while the other thread
    // runs rounds (bounded in reads, not in time).
    let mut worst = 0;
    let mut reads = 0u64;
    while reads < 50_000_000 && (reads < 100_000 || rounds.load(Ordering::Relaxed) < 200_000) {
        worst = worst.max(s.phy_limit_us(Ac::Be).unwrap_or(0));
        reads += 1;
    }
    stop.store(true, Ordering::Relaxed);
    churn.join().unwrap();
    assert!(worst <= 14_500, "PHY limit read as {worst} us with two txqs ({reads} reads)");
}
