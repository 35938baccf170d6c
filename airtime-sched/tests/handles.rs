//! Handles and slot reuse: a handle kept after its station or txq was removed never
//! names the slot's later occupant, however often the slot is reused, and allocation
//! spreads reuse over every slot instead of churning the first.

mod common;

use airtime_sched::{Ac, ChargeError, SchedError, StationId, Tid, TxqId};
use common::{T0, sched_with, w};

/// More add/remove cycles of one slot than a 16-bit generation has values: with one,
/// the last of these cycles handed out a handle equal to the first.
const CYCLES: u32 = (1 << 16) + 2;

#[test]
#[cfg_attr(miri, ignore = "65 538 add/remove cycles take minutes in the interpreter; safe integer code only")]
fn a_stale_station_handle_never_names_the_live_occupant_after_65536_reuses_of_its_slot() {
    // One station slot: every station takes the same slot.
    let mut s = sched_with(|c| {
        c.max_stations = 1;
        c.max_txqs = 1;
    });
    let stale = s.add_station(w(256)).unwrap();
    s.remove_station(stale).unwrap();
    for cycle in 0..CYCLES {
        let live = s.add_station(w(100)).unwrap();
        assert_eq!(live.index(), stale.index());
        assert_ne!(live, stale, "cycle {cycle}: the stale handle equals the live one");
        assert_ne!(StationId::from_raw(stale.to_raw()), live, "cycle {cycle}: the raw form aliases");
        assert_eq!(s.remove_station(stale), Err(SchedError::UnknownStation), "cycle {cycle}");
        assert_eq!(s.weight(live).unwrap(), w(100), "cycle {cycle}: the live station was touched");
        s.remove_station(live).unwrap();
    }
    // After the cycles: the stale handle reaches nothing of the live station.
    let live = s.add_station(w(100)).unwrap();
    assert_eq!(s.remove_station(stale), Err(SchedError::UnknownStation));
    assert_eq!(s.set_weight(stale, w(7)), Err(SchedError::UnknownStation));
    assert_eq!(s.charge_us(stale, Ac::Be, 100), Err(ChargeError::UnknownStation));
    assert_eq!(s.add_txq(Some(stale), Tid::BE), Err(SchedError::UnknownStation));
    assert_eq!(s.station_pending_us(live, Ac::Be).unwrap(), 0);
    assert_eq!(s.weight(live).unwrap(), w(100));
    s.check_invariants_quiescent().unwrap();
}

#[test]
#[cfg_attr(miri, ignore = "65 538 add/remove cycles take minutes in the interpreter; safe integer code only")]
fn a_stale_txq_handle_never_removes_the_live_txq_after_65536_reuses_of_its_slot() {
    // One txq slot: every txq takes the same slot.
    let mut s = sched_with(|c| c.max_txqs = 1);
    let sta = s.add_station(w(256)).unwrap();
    let stale = s.add_txq(Some(sta), Tid::BE).unwrap();
    s.remove_txq(stale).unwrap();
    for cycle in 0..CYCLES {
        let live = s.add_txq(None, Tid::BE).unwrap();
        assert_eq!(live.index(), stale.index());
        assert_ne!(live, stale, "cycle {cycle}: the stale handle equals the live one");
        assert_ne!(TxqId::from_raw(stale.to_raw()), live, "cycle {cycle}: the raw form aliases");
        assert_eq!(s.remove_txq(stale), Err(SchedError::UnknownTxq), "cycle {cycle}: removed the live txq");
        assert_eq!(s.txq_info(live).unwrap(), (None, Tid::BE), "cycle {cycle}");
        s.remove_txq(live).unwrap();
    }
    let live = s.add_txq(Some(sta), Tid::BE).unwrap();
    assert_eq!(s.remove_txq(stale), Err(SchedError::UnknownTxq));
    assert_eq!(s.wake_txq(stale, T0), Err(SchedError::UnknownTxq));
    assert_eq!(s.txq_info(live).unwrap(), (Some(sta), Tid::BE));
    s.wake_txq(live, T0).unwrap();
    assert!(s.phy_limit_us(Ac::Be).is_some(), "the live txq is listed");
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn next_fit_reuses_a_station_slot_only_after_every_other_free_slot() {
    let mut s = sched_with(|c| c.max_stations = 4);
    // Slot 1 stays taken throughout: the churn goes round the other three.
    let a = s.add_station(w(256)).unwrap();
    let held = s.add_station(w(256)).unwrap();
    s.remove_station(a).unwrap();
    assert_eq!((a.index(), held.index()), (0, 1));
    let mut order = Vec::new();
    for _ in 0..9 {
        let id = s.add_station(w(256)).unwrap();
        order.push(id.index());
        s.remove_station(id).unwrap();
    }
    assert_eq!(order, [2, 3, 0, 2, 3, 0, 2, 3, 0], "next-fit, skipping the taken slot");
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn next_fit_reuses_a_txq_slot_only_after_every_other_free_slot() {
    let mut s = sched_with(|c| c.max_txqs = 4);
    let sta = s.add_station(w(256)).unwrap();
    let a = s.add_txq(Some(sta), Tid::BE).unwrap();
    let held = s.add_txq(Some(sta), Tid::new(5).unwrap()).unwrap();
    s.remove_txq(a).unwrap();
    assert_eq!((a.index(), held.index()), (0, 1));
    let mut order = Vec::new();
    for _ in 0..9 {
        let id = s.add_txq(None, Tid::BE).unwrap();
        order.push(id.index());
        s.remove_txq(id).unwrap();
    }
    assert_eq!(order, [2, 3, 0, 2, 3, 0, 2, 3, 0], "next-fit, skipping the taken slot");
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn next_fit_spreads_churn_evenly_over_all_slots() {
    // Many cycles of one station and one txq: every slot of each table takes its share,
    // so no slot's generation runs ahead of the others' (first-fit put it all on slot 0).
    let mut s = sched_with(|c| {
        c.max_stations = 8;
        c.max_txqs = 8;
    });
    let mut per_station_slot = [0u32; 8];
    let mut per_txq_slot = [0u32; 8];
    for _ in 0..8 * 50 {
        let sta = s.add_station(w(256)).unwrap();
        let txq = s.add_txq(Some(sta), Tid::BE).unwrap();
        per_station_slot[sta.index()] += 1;
        per_txq_slot[txq.index()] += 1;
        s.remove_station(sta).unwrap();
    }
    assert_eq!(per_station_slot, [50; 8]);
    assert_eq!(per_txq_slot, [50; 8]);
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn a_txq_slot_with_an_entry_left_on_a_list_is_taken_last() {
    // The clean-first pass is kept: a removed txq whose entry is still listed leaves its
    // slot to be taken only when no clean slot is free, wherever the cursor stands.
    let mut s = sched_with(|c| c.max_txqs = 3);
    let sta = s.add_station(w(256)).unwrap();
    let dirty = s.add_txq(Some(sta), Tid::BE).unwrap();
    s.wake_txq(dirty, T0).unwrap();
    s.remove_txq(dirty).unwrap();
    let order: Vec<usize> = (0..3).map(|_| s.add_txq(None, Tid::BE).unwrap().index()).collect();
    assert_eq!(order, [1, 2, 0], "the slot with the dead entry last");
    s.check_invariants_quiescent().unwrap();
}
