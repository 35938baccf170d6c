//! `mt76_txq_schedule_list` / `mt76_txq_send_burst`: one burst per txq per turn, one
//! kick per burst, bounded by the DMA queue's free threshold (`MT_TXQ_FREE_THR`), by
//! AQL (since mt76 e861cb05), or by the legacy 16-frame limit.

mod common;

use airtime_mt76::hal::{LEGACY_AMPDU_BURST, MT_TXQ_FREE_THR};
use airtime_mt76::sim_hal::SimConfig;
use airtime_mt76::{Config, RoundEnd};
use airtime_sched::{Ac, AqlLimits};
use common::Bench;

fn txq_order(b: &Bench) -> Vec<u64> {
    b.radio.hal().descs(Ac::Be).iter().map(|d| d.token.0 as u64).collect()
}

#[test]
fn a_burst_drains_one_txq_before_the_next_and_kicks_once_per_burst() {
    let mut b = Bench::default();
    let (s1, s2) = (b.station(1, 256), b.station(2, 256));
    let (q1, q2) = (b.txq(s1, 0), b.txq(s2, 0));
    b.enqueue(q1, 5, 1500);
    b.enqueue(q2, 5, 1500);
    let r = b.radio.wake_tx_queue(q1, b.now).unwrap();
    assert_eq!((r.frames, r.bursts), (10, 2), "two txqs, two bursts, one kick each");
    assert_eq!(b.radio.stats().bursts, 2);
    // Each burst's descriptors are contiguous in the DMA queue: the hardware sees one
    // station's frames back to back and can aggregate them.
    let wcids: Vec<_> = b.radio.hal().descs(Ac::Be).iter().map(|d| d.wcid.unwrap()).collect();
    assert!(wcids == [1, 1, 1, 1, 1, 2, 2, 2, 2, 2] || wcids == [2, 2, 2, 2, 2, 1, 1, 1, 1, 1], "{wcids:?}");
    assert_eq!(txq_order(&b).len(), 10);
    b.drain();
    b.check_invariants();
}

#[test]
fn a_burst_stops_at_the_dma_queue_free_threshold_and_resumes_after_tx_free() {
    let sim = SimConfig { ndesc: 64, ..SimConfig::default() };
    let config = Config::default();
    let mut b = Bench::new(config, sim);
    b.radio.scheduler().set_aql_enabled(false);
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    let r = b.send(q, 100, 1500);
    // mt76_txq_stopped: queued + MT_TXQ_FREE_THR >= ndesc.
    assert_eq!(r.frames, 64 - MT_TXQ_FREE_THR);
    assert_eq!(r.end, Some(RoundEnd::RingFull));
    assert_eq!(b.radio.hal().descs(Ac::Be).len() as u32, 64 - MT_TXQ_FREE_THR);
    assert_eq!(b.queued_frames(), 100 - 32, "the rest waits in the txq, uncharged");
    // The hardware fetches the descriptors; the tx-free event's tx worker refills.
    let pass = b.step(1000, 256);
    assert_eq!(pass.completed, 32);
    assert_eq!(pass.frames_sent, 32);
    b.drain();
    let seqs: Vec<u64> = b.done.iter().map(|(p, _)| p.seq).collect();
    assert_eq!(seqs, (0..100).collect::<Vec<_>>(), "every frame, in order");
    b.check_invariants();
}

#[test]
fn aql_ends_a_burst_at_the_station_limit_since_mt76_relies_on_aql() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    let r = b.send(q, 200, 1500);
    let pending = b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap();
    let limits = AqlLimits::DEFAULT;
    assert!(r.frames < 200 && r.frames > 0, "{r:?}");
    assert!(b.radio.hal().descs(Ac::Be).len() as u32 + MT_TXQ_FREE_THR < 256, "the DMA queue did not stop it");
    assert!(pending >= limits.low_us(), "{pending}");
    // One frame past the limit at most (the check precedes each frame).
    let one = pending / r.frames;
    assert!(pending < limits.high_us() + one, "{pending}");
    b.drain();
    b.check_invariants();
}

#[test]
fn the_legacy_burst_limit_sends_16_frames_per_turn_and_alternates_txqs() {
    let config = Config { burst: Config::legacy_burst(), ..Config::default() };
    let mut b = Bench::new(config, SimConfig { ndesc: 2048, ..SimConfig::default() });
    b.radio.scheduler().set_aql_enabled(false);
    let (s1, s2) = (b.station(1, 256), b.station(2, 256));
    let (q1, q2) = (b.txq(s1, 0), b.txq(s2, 0));
    b.enqueue(q1, 40, 1500);
    b.enqueue(q2, 40, 1500);
    let r = b.radio.schedule(Ac::Be, b.now);
    assert_eq!(r.frames, 80);
    let wcids: Vec<u16> = b.radio.hal().descs(Ac::Be).iter().map(|d| d.wcid.unwrap()).collect();
    // Runs of at most LEGACY_AMPDU_BURST frames per station.
    let mut runs = Vec::new();
    let mut it = wcids.iter().peekable();
    while let Some(&w) = it.next() {
        let mut n = 1;
        while it.peek() == Some(&&w) {
            it.next();
            n += 1;
        }
        runs.push(n);
    }
    assert!(runs.iter().all(|&n| n <= LEGACY_AMPDU_BURST), "{runs:?}");
    assert!(runs.len() >= 5, "{runs:?}");
    assert_eq!(b.radio.stats().bursts as usize, runs.len(), "one kick per burst");
    b.drain();
    b.check_invariants();
}

#[test]
fn multicast_frames_are_charged_to_the_multicast_budget() {
    let mut b = Bench::default();
    let mq = b.radio.add_txq(None, airtime_sched::Tid::BE, common::Q::default()).map_err(|e| e.0).unwrap();
    let r = b.send(mq, 3, 500);
    assert_eq!(r.frames, 3);
    assert!(b.radio.scheduler().multicast_pending_us(Ac::Be) > 0);
    assert!(b.radio.hal().descs(Ac::Be).iter().all(|d| d.wcid.is_none()));
    b.drain();
    assert_eq!(b.radio.scheduler().multicast_pending_us(Ac::Be), 0);
    b.check_invariants();
}
