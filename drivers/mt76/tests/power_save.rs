//! `MT_WCID_FLAG_PS`: `mt76_txq_schedule_list` skips a sleeping station's txqs, and
//! `mt76_sta_ps_transition` runs the tx worker when it wakes.

mod common;

use airtime_sched::Ac;
use common::Bench;

#[test]
fn a_sleeping_station_is_skipped_and_its_frames_go_in_order_when_it_wakes() {
    let mut b = Bench::default();
    let (s1, s2) = (b.station(1, 256), b.station(2, 256));
    let (q1, q2) = (b.txq(s1, 0), b.txq(s2, 0));
    assert_eq!(b.radio.sta_ps(s1, true, b.now).unwrap(), 0);
    b.enqueue(q1, 5, 1500);
    b.enqueue(q2, 5, 1500);
    let r = b.radio.schedule(Ac::Be, b.now);
    assert_eq!(r.frames, 5, "only the awake station's frames");
    assert!(b.radio.hal().descs(Ac::Be).iter().all(|d| d.wcid == Some(2)));
    assert_eq!(b.radio.scheduler().station_pending_us(s1, Ac::Be).unwrap(), 0, "nothing charged while asleep");
    b.drain();
    assert_eq!(b.done.len(), 5);
    // Still asleep after the tx-free's rounds; the wake sends everything, in order.
    assert_eq!(b.radio.sta_ps(s1, false, b.now).unwrap(), 5);
    b.drain();
    let s1_seqs: Vec<u64> = b.done.iter().filter(|(p, _)| p.txq == q1).map(|(p, _)| p.seq).collect();
    assert_eq!(s1_seqs, (0..5).collect::<Vec<_>>());
    b.check_invariants();
}

#[test]
fn a_station_removed_while_asleep_hands_back_every_frame() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.radio.sta_ps(s, true, b.now).unwrap();
    b.send(q, 4, 1500);
    b.radio.remove_station(s, b.now).unwrap();
    b.drain();
    assert_eq!(b.outcomes(airtime_mt76::hal::TxOutcome::Purged), 4);
    b.check_invariants();
}

#[test]
fn a_sleeping_stations_queue_drops_are_taken_while_it_sleeps() {
    use airtime_mt76::sim_hal::{SimConfig, SimHal};
    use airtime_mt76::{Config, Mt76};
    use airtime_sched::fq_codel::{FqCodelConfig, FqCodelTxq};
    use airtime_sched::{Instant, Tid, Weight};
    use common::Pkt;

    let radio: Mt76<SimHal<Pkt>, FqCodelTxq<Pkt>> =
        Mt76::new(SimHal::new(SimConfig::default()), Config::default()).unwrap();
    let sta = radio.add_station(7, Weight::DEFAULT).unwrap();
    let mut fq = FqCodelConfig::default();
    fq.packet_limit = 48;
    let q = radio.add_txq(Some(sta), Tid::BE, FqCodelTxq::new(fq).unwrap()).map_err(|e| e.0).unwrap();
    let now = Instant::from_millis(1);
    radio.sta_ps(sta, true, now).unwrap();
    // A sender that keeps sending to a dozing station: each wake's round skips the txq,
    // but its turn pulled the intake into the queue, whose limit drops the excess.
    let mut seq = 0;
    for _ in 0..200 {
        for _ in 0..50 {
            seq += 1;
            let _ = radio.enqueue(q, Pkt { seq, txq: q, len: 1500 }, now);
        }
        let _ = radio.wake_tx_queue(q, now);
    }
    let s = radio.stats();
    let held = s.enqueued - s.completed - s.flushed - s.purged - s.dropped;
    assert_eq!(s.queued_to_dma, 0, "nothing sent while asleep");
    assert!(held <= 100, "{held} frames held for a dozing station past its queue's limit of 48");
}
