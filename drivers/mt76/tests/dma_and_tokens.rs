//! `__mt76_tx_queue_skb` and the token table: a DMA queue found full at the write keeps
//! the frame (its charge given back until it is sent), a frame that cannot be mapped is
//! dropped as mt76 drops it; `mt76_token_consume` blocks tx at `token_size - MT76_TOKEN_FREE_THR`
//! and `mt76_token_release` (from the tx-free event) unblocks it.

mod common;

use airtime_mt76::hal::{DmaError, MT76_TOKEN_FREE_THR, TxOutcome};
use airtime_mt76::sim_hal::{SimConfig, SimHal};
use airtime_mt76::{Config, Mt76Error, RoundEnd};
use airtime_sched::{Ac, RingErrorKind};
use common::{Bench, Radio};

/// With a written token outstanding (its tx-free will run the tx worker), a queue
/// found full at the write keeps the frame for the next turn.
#[test]
fn a_full_dma_queue_at_the_write_keeps_the_frame_and_sends_it_first_next_turn() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    assert_eq!(b.send(q, 1, 1500).frames, 1, "one frame in flight");
    b.radio.hal().fail_dma(Ac::Be, [DmaError::Full]);
    let r = b.send(q, 5, 1500);
    assert_eq!(r.frames, 0);
    assert_eq!(r.end, Some(RoundEnd::Refused(RingErrorKind::Full)));
    assert!(!r.deferred && !b.radio.rounds_waiting(), "the frame in flight's tx-free runs the worker: {r:?}");
    assert_eq!(b.radio.tokens_in_use(), 1, "its token was given back");
    assert_eq!(b.radio.stats().dma_refused, 1);
    let held = b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap();
    let one = held;
    // The next wake sends it first, charged once.
    let r = b.radio.wake_tx_queue(q, b.now).unwrap();
    assert_eq!(r.frames, 5);
    assert_eq!(b.radio.hal().descs(Ac::Be).len(), 6);
    assert!(one > 0 && b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap() > one);
    b.drain();
    let seqs: Vec<u64> = b.done.iter().map(|(p, _)| p.seq).collect();
    assert_eq!(seqs, (0..6).collect::<Vec<_>>(), "the refused frame went first");
    b.check_invariants();
}

/// `queue_desc` answering `Full` with none of the adapter's descriptors in flight (a
/// ring shared with another writer, or the simulated HAL's fault injection): no tx-free
/// will come, so the round is run again at once, as after a drop with nothing in
/// flight, and the kept frame goes first.
#[test]
fn a_full_answer_from_a_queue_with_nothing_in_flight_is_retried_by_the_next_round() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.radio.hal().fail_dma(Ac::Be, [DmaError::Full]);
    let r = b.send(q, 3, 1500);
    assert!(r.frames == 3 && r.rounds >= 2, "the refused round, then one that sends: {r:?}");
    assert!(!r.deferred && !b.radio.rounds_waiting(), "{r:?}");
    assert_eq!((b.radio.stats().dma_refused, b.queued_frames()), (1, 0));
    b.drain();
    let seqs: Vec<u64> = b.done.iter().map(|(p, _)| p.seq).collect();
    assert_eq!(seqs, (0..3).collect::<Vec<_>>(), "the refused frame went first");
    b.check_invariants();
}

#[test]
fn a_frame_that_cannot_be_mapped_is_dropped_and_ends_its_burst() {
    let mut b = Bench::default();
    let s1 = b.station(1, 256);
    let s2 = b.station(2, 256);
    let t1 = b.txq(s1, 0);
    let t2 = b.txq(s2, 0);
    b.enqueue(t1, 5, 1500);
    b.enqueue(t2, 5, 1500);
    // The first write fails: the first frame of the first txq served.
    b.radio.hal().fail_dma(Ac::Be, [DmaError::MapFailed]);
    let r = b.radio.wake_tx_queue(t1, b.now).unwrap();
    b.collect();
    assert_eq!(b.outcomes(TxOutcome::Dropped), 1);
    let (dropped, report) = b.done[0].clone();
    assert!(report.charged_us > 0, "it was charged, and its charge given back");
    let (first, other) = if dropped.txq == t1 { ((t1, 1), (t2, 2)) } else { ((t2, 2), (t1, 1)) };
    // `mt76_dma_tx_queue_skb` frees it with its status, and `mt76_txq_send_burst` ends
    // the burst there: the round goes on with the next txq, and the first txq's four
    // other frames wait, the txq still listed, for the round after.
    assert_eq!(r.frames, 9, "the dropped frame is not counted as written: {r:?}");
    let order: Vec<u16> = b.radio.hal().descs(Ac::Be).iter().map(|d| d.wcid.unwrap()).collect();
    let mut want = vec![other.1; 5];
    want.extend([first.1; 4]);
    assert_eq!(order, want, "the burst ended at the unmapped frame");
    assert_eq!(b.radio.tokens_in_use(), 9);
    assert_eq!(b.radio.stats().dma_refused, 1, "one refusal: the frame held back at the burst's end is not one");
    b.drain();
    assert_eq!(b.queued_frames(), 0);
    assert_eq!(b.outcomes(TxOutcome::Acked), 9);
    let seqs: Vec<u64> =
        b.done.iter().filter(|(p, r)| p.txq == first.0 && r.outcome == TxOutcome::Acked).map(|(p, _)| p.seq).collect();
    assert_eq!(seqs, (dropped.seq + 1..dropped.seq + 5).collect::<Vec<_>>(), "its frames kept their order");
    b.check_invariants();
}

#[test]
fn a_txq_whose_burst_ended_at_an_unmapped_frame_is_served_with_nothing_in_flight() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.radio.hal().fail_dma(Ac::Be, [DmaError::MapFailed]);
    // Nothing in flight to bring a tx-free: the wake itself serves the rest.
    let r = b.send(q, 5, 1500);
    assert_eq!(r.frames, 4, "{r:?}");
    assert_eq!(b.queued_frames(), 0);
    b.drain();
    b.check_invariants();
}

#[test]
fn a_txq_whose_burst_ended_at_an_unmapped_frame_waits_for_the_tx_free_of_the_frames_in_flight() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    assert_eq!(b.send(q, 2, 1500).frames, 2);
    // The mapping keeps failing (an exhausted IOMMU): with frames in flight, a run of
    // the tx worker drops one frame and ends the burst, as mt76's does, not one per
    // round of the run.
    b.radio.hal().fail_dma(Ac::Be, [DmaError::MapFailed; 3]);
    let r = b.send(q, 5, 1500);
    assert_eq!((r.rounds, r.frames), (1, 0), "{r:?}");
    assert_eq!(b.radio.stats().dropped, 1);
    assert_eq!(b.queued_frames(), 4, "the other four wait in the txq, the first held back");
    // The frames in flight bring a tx-free, which runs the tx worker; it frees every
    // token, so that run goes on past the other two failures and sends the rest.
    let pass = b.step(1000, 64);
    assert_eq!((pass.completed, pass.frames_sent), (2, 2), "{pass:?}");
    assert_eq!(b.radio.stats().dropped, 3);
    b.drain();
    b.check_invariants();
}

/// With nothing in flight, each round that only drops a frame it cannot map asks for
/// another; when the call's rounds reach `max_rounds` on such a round, the txq's frames
/// would stay listed with no tx-free to come. The call says so (`deferred`), the AC
/// shows in `rounds_waiting`, and the next tx-free pass (even one with no event) runs
/// the round.
#[test]
fn a_drop_only_round_cut_by_max_rounds_leaves_the_ac_waiting_and_says_so() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    let max = b.radio.config().max_rounds;
    // The mapping fails for as many writes as one call has rounds (an exhausted IOMMU).
    b.radio.hal().fail_dma(Ac::Be, vec![DmaError::MapFailed; max as usize]);
    let r = b.send(q, max + 6, 1500);
    assert_eq!((r.rounds, r.frames), (max, 0), "{r:?}");
    assert_eq!(b.radio.stats().dropped, u64::from(max));
    assert_eq!((b.radio.tokens_in_use(), b.radio.hal().events_in_flight()), (0, 0), "nothing in flight");
    assert_eq!(b.queued_frames(), 6);
    assert!(r.deferred, "the call says a round must follow: {r:?}");
    assert!(b.radio.rounds_waiting());
    let pass = b.step(1000, 64);
    assert_eq!((pass.entries, pass.frames_sent), (0, 6), "{pass:?}");
    assert!(!pass.rounds_waiting && !b.radio.rounds_waiting());
    b.drain();
    b.check_invariants();
}

#[test]
fn a_frame_that_cannot_be_mapped_on_an_idle_radio_leaves_nothing_behind() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.radio.hal().fail_dma(Ac::Be, [DmaError::MapFailed]);
    b.send(q, 1, 1500);
    assert_eq!((b.radio.tokens_in_use(), b.queued_frames()), (0, 0));
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
    b.check_invariants();
}

#[test]
fn the_token_table_blocks_tx_near_full_and_the_tx_free_unblocks_it() {
    // 96 tokens: tx blocks at 96 - MT76_TOKEN_FREE_THR = 32 in use.
    let config = Config { token_size: 96, ..Config::default() };
    let mut b = Bench::new(config, SimConfig::default());
    b.radio.scheduler().set_aql_enabled(false);
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    let r = b.send(q, 50, 1500);
    assert_eq!(r.frames, 96 - MT76_TOKEN_FREE_THR);
    assert!(b.radio.tx_blocked());
    assert_eq!(r.end, Some(RoundEnd::RingFull));
    // Blocked: a wake sends nothing, though the DMA queue has room.
    assert_eq!(b.radio.wake_tx_queue(q, b.now).unwrap().frames, 0);
    let pass = b.step(1000, 256);
    assert!(pass.unblocked, "{pass:?}");
    assert_eq!(pass.frames_sent, 18, "the tx worker ran after the tx-free");
    b.drain();
    b.check_invariants();
}

#[test]
fn every_token_is_released_once_and_a_duplicate_tx_free_is_stale() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.send(q, 3, 1500);
    let first = b.radio.hal().oldest_token(Ac::Be).unwrap();
    b.drain();
    // The hardware repeats an event: the token holds nothing any more.
    b.radio.hal().inject_tx_free(airtime_mt76::hal::TxFree {
        token: first,
        wcid: Some(1),
        tries: 1,
        acked: true,
        rate: None,
    });
    let pass = b.radio.tx_free(16, b.now);
    assert_eq!((pass.completed, pass.stale), (0, 1));
    assert_eq!(b.radio.stats().stale_tx_free, 1);
    b.check_invariants();
}

/// A free threshold at or above the token count leaves no token to send with: a
/// configuration error, not an underflow of `token_size - token_free_thr`.
#[test]
fn a_free_threshold_not_below_the_token_count_is_a_config_error() {
    for (token_size, token_free_thr) in [(96, 96), (96, 97), (1, u32::MAX), (u32::MAX, u32::MAX), (0, 0)] {
        let config = Config { token_size, token_free_thr, ..Config::default() };
        let radio = Radio::new(SimHal::new(SimConfig::default()), config);
        assert!(matches!(radio, Err(Mt76Error::BadTokenConfig)), "{token_size} tokens, threshold {token_free_thr}");
    }
    // The largest threshold that leaves one token.
    let config = Config { token_size: 96, token_free_thr: 95, ..Config::default() };
    let mut b = Bench::new(config, SimConfig::default());
    b.radio.scheduler().set_aql_enabled(false);
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    assert_eq!(b.send(q, 4, 1500).frames, 1);
    assert!(b.radio.tx_blocked());
    b.drain();
    assert_eq!(b.done.len(), 4);
    b.check_invariants();
}

/// A configuration under which nothing could ever be sent, or every token would be
/// overdue at once, is refused by name, not accepted to fail in silence.
#[test]
fn no_rounds_or_no_status_timeout_is_a_config_error() {
    let config = Config { max_rounds: 0, ..Config::default() };
    assert!(matches!(Radio::new(SimHal::new(SimConfig::default()), config), Err(Mt76Error::NoRounds)));
    let config = Config { tx_status_timeout_us: 0, ..Config::default() };
    assert!(matches!(Radio::new(SimHal::new(SimConfig::default()), config), Err(Mt76Error::NoStatusTimeout)));
    let config = Config { max_rounds: 1, tx_status_timeout_us: 1, ..Config::default() };
    let mut b = Bench::new(config, SimConfig::default());
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    assert_eq!(b.send(q, 3, 1500).frames, 3, "one round sends the burst");
    b.drain();
    b.check_invariants();
}

/// A DMA queue with no more descriptors than the stop threshold would read stopped
/// while empty: the radio is refused at creation, naming the AC, instead of never
/// sending.
#[test]
fn a_dma_queue_no_larger_than_the_free_threshold_is_refused_at_creation() {
    let sim = SimConfig { ndesc: airtime_mt76::hal::MT_TXQ_FREE_THR, ..SimConfig::default() };
    match Radio::new(SimHal::new(sim), Config::default()) {
        Err(Mt76Error::DmaQueueTooSmall(ac)) => assert_eq!(ac, Ac::ALL[0]),
        Err(e) => panic!("refused for another reason: {e:?}"),
        Ok(_) => panic!("a radio whose DMA queues read stopped while empty was accepted"),
    }
    let sim = SimConfig { ndesc: airtime_mt76::hal::MT_TXQ_FREE_THR + 1, ..SimConfig::default() };
    assert!(Radio::new(SimHal::new(sim), Config::default()).is_ok(), "one descriptor above it works");
}

/// A HAL whose DMA cleanup runs apart from the tx-free events (a DMA-done interrupt):
/// `queued` drops only at `dma_done`, after the pass that handled the events.
struct LaggingCleanup {
    sim: SimHal<common::Pkt>,
    written: airtime_sched::PerAc<std::sync::atomic::AtomicU32>,
    cleaned: airtime_sched::PerAc<std::sync::atomic::AtomicU32>,
}

impl LaggingCleanup {
    fn dma_done(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        for ac in Ac::ALL {
            self.cleaned[ac].store(self.written[ac].load(SeqCst) - self.sim.queued(ac), SeqCst);
        }
    }
}

use airtime_mt76::hal::{AirtimeWords, DmaQueues, StatusSink, TxDesc, TxFree, TxFreeSource, TxReport, WtblCounters};

impl DmaQueues for LaggingCleanup {
    fn ndesc(&self, ac: Ac) -> u32 {
        self.sim.ndesc(ac)
    }
    fn queued(&self, ac: Ac) -> u32 {
        use std::sync::atomic::Ordering::SeqCst;
        self.written[ac].load(SeqCst) - self.cleaned[ac].load(SeqCst)
    }
    fn queue_desc(&self, desc: TxDesc) -> Result<(), DmaError> {
        let ac = desc.ac;
        self.sim.queue_desc(desc)?;
        self.written[ac].fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
    fn kick(&self, ac: Ac) {
        self.sim.kick(ac)
    }
}

impl TxFreeSource for LaggingCleanup {
    fn next_tx_free(&self) -> Option<TxFree> {
        self.sim.next_tx_free()
    }
}

impl WtblCounters for LaggingCleanup {
    fn airtime(&self, wcid: u16) -> AirtimeWords {
        self.sim.airtime(wcid)
    }
    fn clear_airtime(&self, wcid: u16) {
        self.sim.clear_airtime(wcid)
    }
    fn tx_rate(&self, wcid: u16) -> Option<airtime_est::Rate> {
        self.sim.tx_rate(wcid)
    }
}

impl StatusSink<common::Pkt> for LaggingCleanup {
    fn tx_status(&self, frame: common::Pkt, report: TxReport) {
        self.sim.tx_status(frame, report)
    }
}

/// The burst stops at the free threshold; the tx-free pass for every written frame
/// runs before the cleanup, so its rounds still read the queue stopped. Nothing is in
/// flight and no round is owed: only `tx_cleanup_done` after the cleanup sends the
/// rest (what the HAL contract of `DmaQueues::queued` asks of such a HAL).
#[test]
fn a_dma_cleanup_apart_from_the_tx_free_events_is_followed_by_tx_cleanup_done() {
    let sim = SimHal::new(SimConfig { ndesc: 64, ..SimConfig::default() });
    let hal = LaggingCleanup {
        sim,
        written: airtime_sched::PerAc::from_fn(|_| Default::default()),
        cleaned: airtime_sched::PerAc::from_fn(|_| Default::default()),
    };
    let radio: airtime_mt76::Mt76<LaggingCleanup, common::Q> = airtime_mt76::Mt76::new(hal, Config::default()).unwrap();
    let sta = radio.add_station(1, airtime_sched::Weight::DEFAULT).unwrap();
    let txq = radio.add_txq(Some(sta), airtime_sched::Tid::BE, common::Q::default()).map_err(|e| e.0).unwrap();
    let mut now = airtime_sched::Instant::from_millis(1);
    for seq in 0..40 {
        radio.enqueue(txq, common::Pkt { seq, txq, len: 200 }, now).unwrap();
    }
    let first = radio.wake_tx_queue(txq, now).unwrap();
    let written = first.frames;
    assert!(written > 0 && written < 40 && first.end == Some(RoundEnd::RingFull), "{first:?}");
    radio.hal().sim.advance(now);
    now = now.add_micros(1000);
    radio.hal().sim.advance(now);
    let pass = radio.tx_free(256, now);
    assert_eq!((pass.completed, pass.frames_sent), (written, 0), "{pass:?}");
    radio.hal().dma_done();
    assert_eq!(radio.tokens_in_use(), 0);
    assert!(!radio.rounds_waiting(), "nothing owed: only the cleanup's call can run the AC");
    let after = radio.tx_cleanup_done(Ac::Be, now);
    assert_eq!(u64::from(written + after.frames), 40, "{after:?}");
}
