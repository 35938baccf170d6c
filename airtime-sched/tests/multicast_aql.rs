//! Multicast AQL: frames of station-less txqs charged to a per-AC multicast budget
//! (`aql_mc_pending_airtime` in mac80211's multicast AQL patches, 50 ms by default), kept apart from the unicast
//! counters, with the patches' per-txq pending query (`ieee80211_txq_aql_pending`).

mod common;

use airtime_sched::driver_loop::StationTable;
use airtime_sched::txqs::TurnBudget;
use airtime_sched::{
    Ac, Charge, DEFAULT_MULTICAST_LIMIT_US, Frame, Instant, Scheduler, StationId, Tid, TxqTable, Weight,
};
use common::fixtures::Peer;

type Fifo = common::fixtures::Fifo<Pkt>;

const NOW: Instant = Instant::from_micros(1000);

#[derive(Debug)]
struct Pkt;
impl Frame for Pkt {
    fn len_bytes(&self) -> u32 {
        1500
    }
}

/// Prices multicast frames at 2000 us (a 1500-byte frame at 6 Mbit/s).
struct Bss(Vec<Peer>);
impl StationTable for Bss {
    type Station = Peer;
    fn station(&self, id: StationId) -> Option<&Peer> {
        self.0.iter().find(|p| p.0 == id)
    }
    fn multicast_airtime_us(&self, _: u32, _: Ac) -> Option<u32> {
        Some(2000)
    }
}

type Hw = common::fixtures::OpenRing<Pkt>;

fn table() -> TxqTable<Fifo> {
    TxqTable::new(Scheduler::new(common::config()).unwrap())
}

#[test]
fn multicast_frames_stop_at_the_acs_multicast_budget_and_resume_on_completion() {
    let t = table();
    assert_eq!(t.scheduler().multicast_limit_us(Ac::Be), DEFAULT_MULTICAST_LIMIT_US);
    t.scheduler().set_multicast_limit_us(Ac::Be, 5000);
    let mc = t.add_txq(None, Tid::BE, Fifo::default()).unwrap();
    for _ in 0..10 {
        t.enqueue(mc, Pkt, NOW).unwrap();
    }
    let mut hw = Hw::default();
    let report = t.run_round(Ac::Be, NOW, &Bss(Vec::new()), &mut hw, TurnBudget::UNLIMITED);
    // Checked before each frame: 0, 2000, 4000 are under 5000; 6000 is not.
    assert_eq!(report.frames, 3);
    assert_eq!(t.scheduler().multicast_pending_us(Ac::Be), 6000);
    assert!(hw.0.iter().all(|(_, c)| c.as_ref().is_some_and(Charge::is_multicast)));
    // Multicast airtime is not unicast airtime: the AC and PHY totals do not see it, and
    // the PHY's `aql_pending` file shows it on a line of its own.
    assert_eq!((t.scheduler().ac_pending_us(Ac::Be), t.scheduler().total_pending_us()), (0, 0));
    let file = t.scheduler().phy_aql_pending();
    assert_eq!((file.total_us, file.multicast_us[Ac::Be], file.multicast_us[Ac::Vo]), (0, 6000, 0));
    let text = file.to_string();
    assert!(
        text.contains("MC BE  6000 us\n") && text.contains("MC VO  0 us\n") && text.contains("total  0 us"),
        "{text}"
    );
    assert_eq!(t.scheduler().txq_aql_pending_us(mc).unwrap(), 6000);
    // Completion releases it, in a batch as well, and the rest goes out.
    let released = t.scheduler().release_batch(hw.0.drain(..).filter_map(|(_, c)| c));
    assert!(released.is_clean() && released.released == 3);
    assert_eq!(t.scheduler().multicast_pending_us(Ac::Be), 0);
    let report = t.run_round(Ac::Be, NOW, &Bss(Vec::new()), &mut hw, TurnBudget::UNLIMITED);
    assert_eq!(report.frames, 3);
    for (_, c) in hw.0.drain(..) {
        t.scheduler().release(c.unwrap()).unwrap();
    }
}

#[test]
fn a_multicast_txq_over_its_budget_does_not_hold_up_a_station_txq() {
    let t = table();
    t.scheduler().set_multicast_limit_us(Ac::Be, 1000);
    let sta = t.scheduler().add_station(Weight::DEFAULT).unwrap();
    let bss = Bss(vec![Peer(sta)]);
    let mc = t.add_txq(None, Tid::BE, Fifo::default()).unwrap();
    let uc = t.add_txq(Some(sta), Tid::BE, Fifo::default()).unwrap();
    let held = t.scheduler().charge_multicast_us(Ac::Be, 1000).unwrap(); // the budget is used up
    t.enqueue(mc, Pkt, NOW).unwrap();
    t.enqueue(uc, Pkt, NOW).unwrap();
    let mut hw = Hw::default();
    let report = t.run_round(Ac::Be, NOW, &bss, &mut hw, TurnBudget::UNLIMITED);
    assert_eq!(report.frames, 1, "the station's frame went out");
    assert_eq!(hw.0[0].1.as_ref().and_then(Charge::station), Some(sta));
    assert_eq!(t.scheduler().txq_aql_pending_us(uc).unwrap(), 100);
    t.scheduler().release(held).unwrap();
    let report = t.run_round(Ac::Be, NOW, &bss, &mut hw, TurnBudget::UNLIMITED);
    assert_eq!(report.frames, 1, "the multicast frame follows once the budget allows");
    for (_, c) in hw.0.drain(..) {
        t.scheduler().release(c.unwrap()).unwrap();
    }
    assert_eq!(t.scheduler().total_pending_us() + t.scheduler().multicast_pending_us(Ac::Be), 0);
}

#[test]
fn without_a_multicast_price_station_less_frames_go_uncharged_and_with_aql_off_unlimited() {
    let t = table();
    let mc = t.add_txq(None, Tid::BE, Fifo::default()).unwrap();
    t.enqueue(mc, Pkt, NOW).unwrap();
    struct NoPrice;
    impl StationTable for NoPrice {
        type Station = Peer;
        fn station(&self, _: StationId) -> Option<&Peer> {
            None
        }
    }
    let mut hw = Hw::default();
    let _ = t.run_round(Ac::Be, NOW, &NoPrice, &mut hw, TurnBudget::UNLIMITED);
    assert!(hw.0[0].1.is_none(), "mainline's behaviour: multicast uncharged");
    // AQL off: the budget does not stop anything, and charges are still counted.
    t.scheduler().set_aql_enabled(false);
    t.scheduler().set_multicast_limit_us(Ac::Be, 0);
    for _ in 0..3 {
        t.enqueue(mc, Pkt, NOW).unwrap();
    }
    let report = t.run_round(Ac::Be, NOW, &Bss(Vec::new()), &mut hw, TurnBudget::UNLIMITED);
    assert_eq!(report.frames, 3);
    assert_eq!(t.scheduler().multicast_pending_us(Ac::Be), 6000);
    for (_, c) in hw.0.drain(..) {
        if let Some(c) = c {
            t.scheduler().release(c).unwrap();
        }
    }
}

#[test]
fn the_per_txq_query_follows_the_patches() {
    let s = Scheduler::new(common::config()).unwrap();
    let sta = s.add_station(Weight::DEFAULT).unwrap();
    let be = s.add_txq(Some(sta), Tid::BE).unwrap();
    let mgmt = s.add_txq(Some(sta), Tid::new(16).unwrap()).unwrap();
    let mc = s.add_txq(None, Tid::new(5).unwrap()).unwrap();
    let c = s.charge_us(sta, Ac::Be, 400).unwrap();
    let m = s.charge_multicast_us(Ac::Vi, 800).unwrap();
    assert_eq!(s.txq_aql_pending_us(be).unwrap(), 400);
    assert_eq!(s.txq_aql_pending_us(mgmt).unwrap(), 0, "management is never limited");
    assert_eq!(s.txq_aql_pending_us(mc).unwrap(), 800, "TID 5 is VI");
    s.release(c).unwrap();
    s.release(m).unwrap();
    s.remove_txq(be).unwrap();
    assert!(s.txq_aql_pending_us(be).is_err());
}
