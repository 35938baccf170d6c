//! A station leaving with frames in flight: the handle serving its txq tells the truth,
//! an uncharged frame is a counted decision, the departing station reports what it
//! still has in the air, a full table says whether it is only draining, and airtime
//! reported after the removal is counted, not lost.

mod common;

use airtime_sched::{Ac, ChargeError, SchedError, StationId, Tid, TxqReturn};
use common::*;

struct Peer(StationId);

impl airtime_sched::Station for Peer {
    type Error = airtime_sched::StationErrorKind;
    fn station_id(&self) -> StationId {
        self.0
    }
    fn last_tx_rate(&self) -> Option<airtime_est::Rate> {
        None
    }
    fn expected_airtime_us(&self, _: u32, _: Ac) -> Result<u32, Self::Error> {
        Ok(500)
    }
}

#[test]
fn a_held_txq_whose_station_is_removed_stops_dequeuing_and_charges_nothing() {
    let mut s = sched();
    let (sta, txq) = station_with_txq(&s, 256, Ac::Be);
    let mgmt = s.add_txq(Some(sta), Tid::MGMT).unwrap();
    s.wake_txq(txq, T0).unwrap();
    s.wake_txq(mgmt, T0).unwrap();
    let mut serving = s.next_txq(s.start_round(Ac::Be), T0).unwrap();
    let mut serving_mgmt = s.next_txq(s.start_round(Ac::Vo), T0).unwrap();
    let before = serving.charge_frame(&Peer(sta), 1500).unwrap();
    assert!(serving.airtime_check() && serving_mgmt.airtime_check());
    assert_eq!((serving.station(), serving.station_removed()), (Some(sta), false));

    let departing = s.remove_station(sta).unwrap();
    for held in [&serving, &serving_mgmt] {
        assert_eq!(held.station(), None, "the station is gone");
        assert!(held.station_removed());
        assert!(!held.airtime_check(), "nothing more is dequeued for a gone station, not even management");
    }
    assert_eq!(serving.charge_frame(&Peer(sta), 1500), Err(ChargeError::StationRemoved));
    assert_eq!(serving.charge_us(100), Err(ChargeError::StationRemoved));
    assert_eq!(serving_mgmt.charge_us(100), Err(ChargeError::StationRemoved));
    // A frame already dequeued that the driver sends anyway is a counted decision.
    serving.send_uncharged();
    s.return_txq(serving, TxqReturn::Empty, T0);
    s.return_txq(serving_mgmt, TxqReturn::Empty, T0);
    assert_eq!(s.ac_counters(Ac::Be).uncharged_frames, 1);
    assert_eq!(s.ac_counters(Ac::Vo).uncharged_frames, 0);
    assert_eq!(s.ac_pending_us(Ac::Be), 500, "only the charge made before the removal");
    assert_eq!(departing.pending_us(&s, Ac::Be), 500);
    s.release(before).unwrap();
    assert!(departing.is_drained(&s));
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn frames_sent_uncharged_are_counted_per_ac_with_or_without_a_held_txq() {
    let mut s = sched();
    let multicast = s.add_txq(None, Tid::VI).unwrap();
    s.wake_txq(multicast, T0).unwrap();
    let mut serving = s.next_txq(s.start_round(Ac::Vi), T0).unwrap();
    assert_eq!((serving.station(), serving.station_removed()), (None, false));
    assert!(serving.airtime_check(), "its AC's multicast budget has room");
    // Charged, a station-less txq's frame goes to the multicast budget; a driver that
    // does not price multicast sends it uncharged, and says so.
    let mc = serving.charge_us(100).unwrap();
    assert!(mc.is_multicast());
    s.release(mc).unwrap();
    serving.send_uncharged();
    serving.send_uncharged();
    s.return_txq(serving, TxqReturn::Empty, T0);
    s.send_uncharged(Ac::Bk);
    let counted = Ac::ALL.map(|ac| s.ac_counters(ac).uncharged_frames);
    assert_eq!(counted, [0, 2, 0, 1]);
    assert_eq!(s.total_pending_us(), 0);
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn a_departing_station_reports_its_pending_airtime_until_drained_and_its_slot_until_then_is_draining() {
    let mut s = sched_with(|c| c.max_stations = 2);
    let _stays = s.add_station(w(256)).unwrap();
    let leaves = s.add_station(w(256)).unwrap();
    assert_eq!(s.add_station(w(256)), Err(SchedError::StationsFull), "every slot is live");
    let be = s.charge_us(leaves, Ac::Be, 1000).unwrap();
    let vi = s.charge_us(leaves, Ac::Vi, 400).unwrap();

    let departing = s.remove_station(leaves).unwrap();
    assert_eq!(departing.id(), leaves);
    assert_eq!(Ac::ALL.map(|ac| departing.pending_us(&s, ac)), [0, 400, 1000, 0]);
    assert_eq!(departing.total_pending_us(&s), 1400);
    assert!(!departing.is_drained(&s));
    assert_eq!(s.add_station(w(256)), Err(SchedError::StationsDraining), "its slot waits for its frames");

    s.release(be).unwrap();
    assert_eq!(departing.total_pending_us(&s), 400);
    assert!(!departing.is_drained(&s));
    assert_eq!(s.add_station(w(256)), Err(SchedError::StationsDraining));
    s.release(vi).unwrap();
    assert!(departing.is_drained(&s), "the hardware's station index may be reused");
    assert_eq!(departing.total_pending_us(&s), 0);

    // The slot takes a newcomer; the departed station stays drained whatever it does.
    let newcomer = s.add_station(w(256)).unwrap();
    assert_eq!(newcomer.index(), leaves.index());
    let c = s.charge_us(newcomer, Ac::Be, 800).unwrap();
    assert!(departing.is_drained(&s));
    assert_eq!(departing.pending_us(&s, Ac::Be), 0, "the newcomer's airtime is not the departed one's");
    assert_eq!(s.remove_station(leaves), Err(SchedError::UnknownStation));
    s.release(c).unwrap();
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn airtime_reported_after_removal_is_counted_per_ac() {
    let mut s = sched_with(|c| c.max_stations = 1);
    let sta = s.add_station(w(256)).unwrap();
    s.register_airtime(sta, Ac::Be, 100, 10, T0).unwrap();
    s.remove_station(sta).unwrap();
    // The completion of a frame sent before the removal.
    assert_eq!(s.register_airtime(sta, Ac::Be, 300, 30, T0), Ok(()));
    assert_eq!(s.register_airtime(sta, Ac::Vo, 50, 0, T0), Ok(()));
    let be = s.ac_counters(Ac::Be);
    assert_eq!((be.departed_tx_us, be.departed_rx_us), (300, 30), "not the airtime registered while live");
    assert_eq!(s.ac_counters(Ac::Vo).departed_tx_us, 50);

    // Still counted once the slot holds a newcomer, and never charged to it.
    let newcomer = s.add_station(w(256)).unwrap();
    s.register_airtime(sta, Ac::Be, 200, 0, T0).unwrap();
    assert_eq!(s.ac_counters(Ac::Be).departed_tx_us, 500);
    assert_eq!(s.station_airtime(newcomer).unwrap().tx_us, 0);

    // A handle never issued is refused and counts nothing.
    for forged in [StationId::from_raw(0), StationId::from_raw(9 << 32), StationId::from_raw(5 | (1 << 32))] {
        assert_eq!(s.register_airtime(forged, Ac::Be, 1000, 0, T0), Err(SchedError::UnknownStation), "{forged}");
    }
    assert_eq!(s.ac_counters(Ac::Be).departed_tx_us, 500);
    s.check_invariants_quiescent().unwrap();
}
