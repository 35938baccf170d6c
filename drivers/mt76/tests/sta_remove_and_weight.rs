//! Station removal with frames in the token table (`mt76_sta_pre_rcu_remove`,
//! `mt76_wcid_cleanup`), and a weight change at run time.

mod common;

use airtime_mt76::Config;
use airtime_mt76::hal::TxOutcome;
use airtime_mt76::sim_hal::SimConfig;
use airtime_sched::{Ac, Weight};
use common::Bench;

#[test]
fn removing_a_station_with_tokens_in_flight_completes_them_and_hands_back_its_queue() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let other = b.station(2, 256);
    let q = b.txq(s, 0);
    let q2 = b.txq(other, 0);
    b.send(q, 100, 1500); // AQL stops the burst: some frames stay in the txq
    b.send(q2, 3, 1500);
    let in_flight = b.radio.tokens_in_use();
    assert!(in_flight > 3 && in_flight < 103, "{in_flight}");
    b.radio.remove_station(s, b.now).unwrap();
    b.collect();
    let purged = b.outcomes(TxOutcome::Purged);
    assert_eq!(purged as u32 + in_flight, 103, "its queued frames came back at once");
    assert!(b.radio.station(s).is_none());
    // Its tokens stay and complete at their tx-free; their charges are released.
    assert_eq!(b.radio.tokens_in_use(), in_flight);
    assert!(b.radio.scheduler().total_pending_us() > 0);
    // Frames enqueued to the removed txq are refused and handed back to the caller.
    assert!(b.radio.enqueue(q, common::Pkt { seq: 999, txq: q, len: 100 }, b.now).is_err());
    b.drain();
    assert_eq!(b.outcomes(TxOutcome::Acked) as u32, in_flight);
    // The WTBL index is free for a new station, whose counters start at zero.
    let again = b.station(1, 256);
    assert_eq!(b.radio.scheduler().station_airtime(again).unwrap().tx_us, 0);
    b.radio.remove_station(other, b.now).unwrap();
    b.radio.remove_station(again, b.now).unwrap();
    b.check_invariants();
}

#[test]
fn a_second_station_on_the_same_wcid_is_refused() {
    let mut b = Bench::default();
    b.station(1, 256);
    assert_eq!(b.radio.add_station(1, Weight::DEFAULT).unwrap_err(), airtime_mt76::Mt76Error::WcidInUse(1));
    b.check_invariants();
}

/// Two backlogged stations at the same rate; the share of BE airtime the first gets,
/// in percent, over `steps` ms of tx-free events.
fn share_percent(b: &mut Bench, q1: airtime_sched::TxqId, q2: airtime_sched::TxqId, steps: u32) -> (u64, u64) {
    let air = |b: &Bench, wcid: u16| u64::from(b.radio.hal().airtime_words(wcid).tx_us[Ac::Be]);
    let (a0, b0) = (air(b, 1), air(b, 2));
    for _ in 0..steps {
        // Offer more than the DMA queue passes per step (32 frames): both stay backlogged.
        b.enqueue(q1, 24, 1500);
        b.enqueue(q2, 24, 1500);
        b.radio.schedule(Ac::Be, b.now);
        b.step(1000, 512);
    }
    (air(b, 1) - a0, air(b, 2) - b0)
}

#[test]
fn a_weight_change_at_run_time_moves_the_airtime_share() {
    // Legacy 16-frame bursts and a small DMA queue, so that the scheduler's order is
    // what reaches the air.
    let config = Config { burst: Config::legacy_burst(), ..Config::default() };
    let mut b = Bench::new(config, SimConfig { ndesc: 64, ..SimConfig::default() });
    let (s1, s2) = (b.station(1, 256), b.station(2, 256));
    let (q1, q2) = (b.txq(s1, 0), b.txq(s2, 0));
    let (x, y) = share_percent(&mut b, q1, q2, 200);
    let even = x * 100 / (x + y);
    assert!((40..=60).contains(&even), "equal weights: {even}% ({x} vs {y})");
    b.radio.set_weight(s1, Weight::new(768).unwrap()).unwrap();
    let (x, y) = share_percent(&mut b, q1, q2, 400);
    let weighted = x * 100 / (x + y);
    println!("equal weights {even}%, weight 768 vs 256 {weighted}%");
    assert!((65..=85).contains(&weighted), "weight 768 vs 256: {weighted}% ({x} vs {y})");
    b.radio.remove_station(s1, b.now).unwrap();
    b.radio.remove_station(s2, b.now).unwrap();
    b.drain();
    b.check_invariants();
}

/// A FIFO txq whose dequeue refuses while a BlockAck session is being set up
/// (mac80211's `IEEE80211_TXQ_STOP`), with a `purge` that takes its frames whatever the
/// stop, or (`purges: false`) without one.
struct BaSetupQ {
    q: common::Q,
    stopped: bool,
    purges: bool,
}

#[derive(Debug)]
struct BaStopped;

impl airtime_sched::traits::TxqError for BaStopped {
    fn kind(&self) -> airtime_sched::traits::TxqErrorKind {
        airtime_sched::traits::TxqErrorKind::Stopped
    }
}

impl airtime_sched::Txq for BaSetupQ {
    type Frame = common::Pkt;
    type Error = BaStopped;
    fn dequeue(&mut self, _: airtime_sched::Instant) -> Result<Option<common::Pkt>, BaStopped> {
        if self.stopped { Err(BaStopped) } else { Ok(self.q.0.pop_front()) }
    }
    fn peek_len(&self) -> Option<u32> {
        self.q.0.front().map(|p| p.len)
    }
}

impl airtime_sched::traits::Enqueue for BaSetupQ {
    fn enqueue(&mut self, frame: common::Pkt, _: airtime_sched::Instant) {
        self.q.0.push_back(frame);
    }
}

impl airtime_mt76::DriverTxq for BaSetupQ {
    fn purge(&mut self, now: airtime_sched::Instant, each: &mut dyn FnMut(common::Pkt)) {
        if !self.purges {
            // The trait's default: dequeue until empty or refused.
            while let Ok(Some(frame)) = airtime_sched::Txq::dequeue(self, now) {
                each(frame);
            }
            return;
        }
        for frame in self.q.0.drain(..) {
            each(frame);
        }
    }
}

/// A station removed while its txq's BlockAck session is being set up: the frames its
/// stopped queue holds come back purged, none lost; a queue that does not override
/// `purge` is counted, not lost from the books in silence.
#[test]
fn removing_a_station_whose_txq_is_stopped_for_a_block_ack_setup_hands_back_its_frames() {
    for purges in [true, false] {
        let radio: airtime_mt76::Mt76<airtime_mt76::sim_hal::SimHal<common::Pkt>, BaSetupQ> =
            airtime_mt76::Mt76::new(airtime_mt76::sim_hal::SimHal::new(SimConfig::default()), Config::default())
                .unwrap();
        let now = airtime_sched::Instant::from_millis(1);
        let sta = radio.add_station(1, Weight::DEFAULT).unwrap();
        let queue = BaSetupQ { q: common::Q::default(), stopped: true, purges };
        let txq = radio.add_txq(Some(sta), airtime_sched::Tid::BE, queue).map_err(|e| e.0).unwrap();
        for seq in 0..3 {
            radio.enqueue(txq, common::Pkt { seq, txq, len: 1500 }, now).unwrap();
        }
        // The turn pulls the intake into the queue, whose dequeue refuses.
        let report = radio.wake_tx_queue(txq, now).unwrap();
        assert_eq!(report.frames, 0, "{report:?}");
        radio.remove_station(sta, now).unwrap();
        radio.reap(now);
        let s = radio.stats();
        if purges {
            assert_eq!((s.purged, s.unpurged_txqs), (3, 0), "{s:?}");
            assert_eq!(radio.hal().take_done().len(), 3);
            assert_eq!(s.enqueued, s.completed + s.flushed + s.purged + s.dropped, "{s:?}");
        } else {
            assert_eq!((s.purged, s.unpurged_txqs), (0, 1), "the loss is counted: {s:?}");
        }
    }
}
