//! Patch 5: the scheduling round is the driver's, started by wake_tx_queue and
//! pushing into the sending CPU's ring.

mod common;

use airtime_ath11k::hal::RingId;
use airtime_ath11k::sim_hal::SimConfig;
use airtime_ath11k::{Config, RoundEnd};
use airtime_sched::Ac;
use common::Bench;

#[test]
fn waking_a_txq_runs_the_drivers_round_into_the_sending_cpus_ring() {
    let mut config = Config::default();
    config.aql = false; // twelve frames at the unknown-rate charge would close the AC
    let mut b = Bench::new(config, SimConfig::default());
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    for cpu in 0..6u32 {
        let r = b.send(q, 2, 1000, cpu);
        assert_eq!((r.ac, r.frames, r.end), (Ac::Be, 2, Some(RoundEnd::Exhausted)));
    }
    // cpu % 3: rings 0, 1, 2, 0, 1, 2, two frames each.
    for ring in RingId::ALL {
        assert_eq!(b.radio.hal().ring_len(ring), 4);
    }
    assert_eq!(b.radio.scheduler().ac_counters(Ac::Be).rounds_started, 6);
}

#[test]
fn one_round_serves_every_backlogged_station_of_the_ac() {
    let mut b = Bench::default();
    let stas: Vec<_> = (0..5u16).map(|p| b.station(p, 256)).collect();
    let txqs: Vec<_> = stas.iter().map(|s| b.txq(*s, 0)).collect();
    for q in &txqs {
        b.enqueue(*q, 3, 800);
        // Marked backlogged as an enqueue does, without running a round yet.
        b.radio.scheduler().wake_txq(*q, b.now).unwrap();
    }
    let r = b.radio.run_round(Ac::Be, 0, b.now);
    assert_eq!(r.frames, 15);
    assert_eq!(r.txqs_served, 5);
    assert_eq!(b.queued(), 0);
}

#[test]
fn a_wake_for_an_unknown_txq_is_refused() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.radio.remove_txq(q, drop).unwrap();
    assert!(b.radio.wake_tx_queue(q, 0, b.now).is_err());
}

#[test]
fn the_txq_of_a_peer_and_tid_is_found_and_a_second_one_refused() {
    let mut b = Bench::default();
    let s = b.station(42, 256);
    let q = b.txq(s, 5);
    let sta = b.radio.station_by_peer(42).unwrap();
    assert_eq!(b.radio.txq_for(sta, airtime_sched::Tid::new(5).unwrap()), Some(q));
    assert_eq!(b.radio.txq_for(sta, airtime_sched::Tid::new(4).unwrap()), None);
    let again = b.radio.add_txq(Some(s), airtime_sched::Tid::new(5).unwrap(), common::Q::default());
    assert_eq!(again.map_err(|e| e.0), Err(airtime_ath11k::Ath11kError::TxqInUse));
    b.radio.remove_txq(q, drop).unwrap();
    assert_eq!(b.radio.txq_for(sta, airtime_sched::Tid::new(5).unwrap()), None);
}
