//! Interleavings of the tx worker and the other contexts, each forced by parking the
//! worker at one point with a barrier (as a preemption there would): a station's wake
//! or a tx-free meeting a turn that holds the txq it makes servable, and a station's
//! removal meeting a turn that is writing its frame.

mod common;

use airtime_mt76::hal::{
    AirtimeWords, DmaError, DmaQueues, StatusSink, TxDesc, TxFree, TxFreeSource, TxOutcome, TxReport, WtblCounters,
};
use airtime_mt76::sim_hal::{SimConfig, SimHal};
use airtime_mt76::{Config, DriverTxq, Mt76, Mt76Error};
use airtime_sched::traits::{Enqueue, Txq};
use airtime_sched::{Ac, Instant, Tid, Weight};
use common::{Pkt, Q};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Barrier, Mutex};
use std::thread::ThreadId;

/// Frames accepted and neither handed back nor holding a token: in txqs.
fn held<H: airtime_mt76::Hal<Pkt>, T: DriverTxq<Frame = Pkt>>(r: &Mt76<H, T>) -> u64 {
    let s = r.stats();
    s.enqueued - s.completed - s.flushed - s.purged - s.dropped - u64::from(r.tokens_in_use())
}

/// A FIFO txq whose `take_dropped`, which the round runs at the end of each turn while
/// it holds the txq, parks the caller once when armed.
struct ParkingQ {
    q: Q,
    armed: &'static AtomicBool,
    reached: &'static Barrier,
    resume: &'static Barrier,
}

/// `Txq` for a wrapper of the FIFO `Q` in its field `q`: dequeues from it.
macro_rules! txq_of_fifo {
    ($wrapper:ty) => {
        impl Txq for $wrapper {
            type Frame = Pkt;
            type Error = core::convert::Infallible;
            fn dequeue(&mut self, now: Instant) -> Result<Option<Pkt>, Self::Error> {
                self.q.dequeue(now)
            }
            fn peek_len(&self) -> Option<u32> {
                self.q.peek_len()
            }
        }
    };
}

txq_of_fifo!(ParkingQ);

impl Enqueue for ParkingQ {
    fn enqueue(&mut self, frame: Pkt, now: Instant) {
        self.q.enqueue(frame, now)
    }
}

impl DriverTxq for ParkingQ {
    fn take_dropped(&mut self, _each: &mut dyn FnMut(Pkt)) {
        if self.armed.swap(false, Ordering::AcqRel) {
            self.reached.wait();
            self.resume.wait();
        }
    }
}

#[test]
fn a_wake_meeting_the_turn_that_skips_the_dozing_station_is_served_by_one_more_round() {
    static ARMED: AtomicBool = AtomicBool::new(false);
    static REACHED: Barrier = Barrier::new(2);
    static RESUME: Barrier = Barrier::new(2);
    let radio: Mt76<SimHal<Pkt>, ParkingQ> = Mt76::new(SimHal::new(SimConfig::default()), Config::default()).unwrap();
    let now = Instant::from_millis(1);
    let sta = radio.add_station(1, Weight::DEFAULT).unwrap();
    let queue = ParkingQ { q: Q::default(), armed: &ARMED, reached: &REACHED, resume: &RESUME };
    let txq = radio.add_txq(Some(sta), Tid::BE, queue).map_err(|e| e.0).unwrap();
    radio.sta_ps(sta, true, now).unwrap();
    for seq in 0..5 {
        radio.enqueue(txq, Pkt { seq, txq, len: 1500 }, now).unwrap();
    }
    ARMED.store(true, Ordering::Release);
    let (worker, woke) = std::thread::scope(|s| {
        // The tx worker: its turn on the dozing station's txq is skipped, and it is
        // preempted at the turn's end, still holding the txq.
        let a = s.spawn(|| radio.wake_tx_queue(txq, now).unwrap());
        REACHED.wait();
        // The PM bit clears on another CPU (`mt76_sta_ps_transition`): the wake's round
        // cannot see the held txq, so it leaves its request to the worker.
        let woke = radio.sta_ps(sta, false, now).unwrap();
        RESUME.wait();
        (a.join().unwrap(), woke)
    });
    assert_eq!(woke, 0, "the wake ran no round on BE: the worker was running them");
    assert_eq!(worker.frames, 5, "the worker ran one more round for the wake, and sent the frames: {worker:?}");
    assert!(worker.rounds >= 2);
    assert_eq!(held(&radio), 0);
    assert_eq!(radio.tokens_in_use(), 5);
}

/// The simulated HAL with park points, each parking its caller once on `bar` (twice:
/// parked, then released) when armed: the worker thread's second reads of `queued` and
/// `ndesc` (preempted inside `mt76_txq_stopped` while it holds a txq), the first
/// descriptor write (the frame charged and given a token), the first frame's status
/// (a tx-free pass).
struct ParkHal {
    inner: SimHal<Pkt>,
    /// The thread whose `queued` and `ndesc` reads park.
    worker: Mutex<Option<ThreadId>>,
    queued_calls: AtomicU32,
    ndesc_calls: AtomicU32,
    park_desc: AtomicBool,
    park_status: AtomicBool,
    /// Parks the first tx-free event read, once read (the event taken from the ring).
    park_event: AtomicBool,
    /// Parks the next `next_tx_free`, before it reads anything (the pass is counted).
    park_poll: AtomicBool,
    /// `ndesc` reads from any thread: a round that runs reads it (`has_room`); one that
    /// finds tx stopped makes no HAL call.
    ndesc_reads: AtomicU32,
    bar: Barrier,
}

impl ParkHal {
    fn new(sim: SimConfig) -> ParkHal {
        ParkHal {
            inner: SimHal::new(sim),
            worker: Mutex::new(None),
            queued_calls: AtomicU32::new(0),
            ndesc_calls: AtomicU32::new(0),
            park_desc: AtomicBool::new(false),
            park_status: AtomicBool::new(false),
            park_event: AtomicBool::new(false),
            park_poll: AtomicBool::new(false),
            ndesc_reads: AtomicU32::new(0),
            bar: Barrier::new(2),
        }
    }

    fn park(&self) {
        self.bar.wait();
        self.bar.wait();
    }

    fn park_on_second(&self, calls: &AtomicU32) {
        let mine = *self.worker.lock().unwrap() == Some(std::thread::current().id());
        if mine && calls.fetch_add(1, Ordering::AcqRel) == 1 {
            self.park();
        }
    }
}

impl DmaQueues for ParkHal {
    fn ndesc(&self, ac: Ac) -> u32 {
        self.ndesc_reads.fetch_add(1, Ordering::AcqRel);
        self.park_on_second(&self.ndesc_calls);
        self.inner.ndesc(ac)
    }
    fn queued(&self, ac: Ac) -> u32 {
        self.park_on_second(&self.queued_calls);
        self.inner.queued(ac)
    }
    fn queue_desc(&self, d: TxDesc) -> Result<(), DmaError> {
        if self.park_desc.swap(false, Ordering::AcqRel) {
            self.park();
        }
        self.inner.queue_desc(d)
    }
    fn kick(&self, ac: Ac) {
        self.inner.kick(ac)
    }
}

impl TxFreeSource for ParkHal {
    fn next_tx_free(&self) -> Option<TxFree> {
        if self.park_poll.swap(false, Ordering::AcqRel) {
            self.park();
        }
        let event = self.inner.next_tx_free();
        if event.is_some() && self.park_event.swap(false, Ordering::AcqRel) {
            self.park();
        }
        event
    }
}

impl WtblCounters for ParkHal {
    fn airtime(&self, w: u16) -> AirtimeWords {
        self.inner.airtime(w)
    }
    fn clear_airtime(&self, w: u16) {
        self.inner.clear_airtime(w)
    }
    fn tx_rate(&self, w: u16) -> Option<airtime_est::Rate> {
        self.inner.tx_rate(w)
    }
}

impl StatusSink<Pkt> for ParkHal {
    fn tx_status(&self, f: Pkt, r: TxReport) {
        if self.park_status.swap(false, Ordering::AcqRel) {
            self.park();
        }
        self.inner.tx_status(f, r)
    }
}

#[test]
fn a_tx_free_meeting_a_turn_that_read_the_queue_full_is_served_by_one_more_round() {
    // 40 descriptors and a free threshold of 32: 8 fit.
    let hal = ParkHal::new(SimConfig { ndesc: 40, ..SimConfig::default() });
    let radio: Mt76<ParkHal, Q> = Mt76::new(hal, Config::default()).unwrap();
    let now = Instant::from_millis(1);
    let s1 = radio.add_station(1, Weight::DEFAULT).unwrap();
    let s2 = radio.add_station(2, Weight::DEFAULT).unwrap();
    let t1 = radio.add_txq(Some(s1), Tid::BE, Q::default()).map_err(|e| e.0).unwrap();
    let t2 = radio.add_txq(Some(s2), Tid::BE, Q::default()).map_err(|e| e.0).unwrap();
    for seq in 0..8 {
        radio.enqueue(t1, Pkt { seq, txq: t1, len: 1500 }, now).unwrap();
    }
    for seq in 8..16 {
        radio.enqueue(t2, Pkt { seq, txq: t2, len: 1500 }, now).unwrap();
    }
    let later = now.add_micros(2000);
    let (worker, other_wake, tx_free) = std::thread::scope(|s| {
        let a = s.spawn(|| {
            *radio.hal().worker.lock().unwrap() = Some(std::thread::current().id());
            radio.wake_tx_queue(t1, now).unwrap()
        });
        let bar = &radio.hal().bar;
        // The worker holds t1, about to read the queue's fill level.
        bar.wait();
        // Another CPU's wake for t2: it must not serve BE beside the worker.
        let other_wake = radio.wake_tx_queue(t2, now).unwrap();
        bar.wait();
        bar.wait();
        // Still inside the check: the hardware sends what there is and the tx-free
        // runs the tx worker, which is running.
        radio.hal().inner.advance(now);
        radio.hal().inner.advance(later);
        let tx_free = radio.tx_free(64, later);
        bar.wait();
        (a.join().unwrap(), other_wake, tx_free)
    });
    assert!(other_wake.handed_off && other_wake.rounds == 0, "{other_wake:?}");
    assert!(worker.frames >= 8, "the worker served the other context's request: {worker:?}; tx-free {tx_free:?}");
    // Nothing is stranded: everything sent completes, and the rest follows.
    let mut t = later;
    for _ in 0..100 {
        t = t.add_micros(1000);
        radio.hal().inner.advance(t);
        radio.tx_free(64, t);
        if held(&radio) == 0 && radio.tokens_in_use() == 0 {
            break;
        }
    }
    assert_eq!(held(&radio), 0, "frames stranded: {:?}", radio.stats());
    assert_eq!(radio.stats().completed, 16);
    assert_eq!(radio.scheduler().total_pending_us(), 0);
}

#[test]
fn a_wcid_whose_removed_station_is_writing_a_frame_is_not_given_to_a_new_station() {
    let hal = ParkHal::new(SimConfig::default());
    hal.park_desc.store(true, Ordering::Release);
    let radio: Mt76<ParkHal, Q> = Mt76::new(hal, Config::default()).unwrap();
    let now = Instant::from_millis(1);
    let old = radio.add_station(7, Weight::DEFAULT).unwrap();
    let t = radio.add_txq(Some(old), Tid::BE, Q::default()).map_err(|e| e.0).unwrap();
    radio.enqueue(t, Pkt { seq: 0, txq: t, len: 1500 }, now).unwrap();
    let (removed, draining, readded, worker) = std::thread::scope(|s| {
        let a = s.spawn(|| radio.wake_tx_queue(t, now).unwrap());
        radio.hal().bar.wait();
        // `sta_state`: the station leaves while its frame is being written, and a new
        // station asks for its WTBL index.
        let removed = radio.remove_station(old, now);
        let draining = radio.wcid_draining(7);
        let readded = radio.add_station(7, Weight::DEFAULT);
        radio.hal().bar.wait();
        (removed, draining, readded, a.join().unwrap())
    });
    assert_eq!(removed, Ok(()));
    assert!(draining);
    assert_eq!(readded, Err(Mt76Error::WcidDraining(7)));
    assert_eq!(worker.frames, 1);
    // The old station's frame went out under its own WTBL entry; once it completes, the
    // index is free.
    assert_eq!(radio.hal().inner.descs(Ac::Be).iter().map(|d| d.wcid).collect::<Vec<_>>(), [Some(7)]);
    assert_eq!(radio.add_station(7, Weight::DEFAULT), Err(Mt76Error::WcidDraining(7)));
    let later = now.add_micros(2000);
    radio.hal().inner.advance(now);
    radio.hal().inner.advance(later);
    assert_eq!(radio.tx_free(64, later).completed, 1);
    assert!(!radio.wcid_draining(7));
    let new = radio.add_station(7, Weight::DEFAULT).unwrap();
    assert_eq!(radio.station(new).unwrap().wcid(), Some(7));
    assert_eq!(radio.scheduler().total_pending_us(), 0);
}

/// A token another AC's round has taken for a frame whose mapping then fails is
/// released with no tx-free: it must not count as "a tx-free will come" for a round that
/// only dropped frames. Both ACs failing to map at once is the usual shape of an
/// exhausted IOMMU.
///
/// 1. VI's round (thread B) takes token 0 for its frame and is preempted before the
///    descriptor write.
/// 2. BE's round (main): its first frame fails to map, the burst ends, the next frame
///    goes to the retry slot; the round wrote nothing, and no written token is
///    outstanding (VI's is only taken): BE runs the next round, which sends the rest.
/// 3. VI's write fails to map: the token is released, no event will come.
#[test]
fn a_token_taken_by_another_ac_for_an_unmappable_frame_does_not_hide_the_rerun() {
    let hal = ParkHal::new(SimConfig::default());
    let radio: Mt76<ParkHal, Q> = Mt76::new(hal, Config::default()).unwrap();
    let now = Instant::from_millis(1);
    let s1 = radio.add_station(1, Weight::DEFAULT).unwrap();
    let s2 = radio.add_station(2, Weight::DEFAULT).unwrap();
    let be = radio.add_txq(Some(s1), Tid::BE, Q::default()).map_err(|e| e.0).unwrap();
    let vi = radio.add_txq(Some(s2), Tid::new(5).unwrap(), Q::default()).map_err(|e| e.0).unwrap();
    for seq in 0..5 {
        radio.enqueue(be, Pkt { seq, txq: be, len: 1500 }, now).unwrap();
    }
    radio.enqueue(vi, Pkt { seq: 5, txq: vi, len: 1500 }, now).unwrap();
    radio.hal().inner.fail_dma(Ac::Vi, [DmaError::MapFailed]);
    radio.hal().inner.fail_dma(Ac::Be, [DmaError::MapFailed]);
    radio.hal().park_desc.store(true, Ordering::Release);
    let (be_report, vi_report) = std::thread::scope(|sc| {
        let vi_worker = sc.spawn(|| radio.wake_tx_queue(vi, now).unwrap());
        // VI's round holds token 0, before its descriptor write.
        radio.hal().bar.wait();
        assert_eq!(radio.tokens_in_use(), 1);
        let be_report = radio.wake_tx_queue(be, now).unwrap();
        radio.hal().bar.wait();
        (be_report, vi_worker.join().unwrap())
    });
    assert_eq!(be_report.frames, 4, "BE's next round sent the frames its drop left: {be_report:?}");
    assert!(be_report.rounds >= 2 && !be_report.deferred, "{be_report:?}");
    assert_eq!(vi_report.frames, 0, "{vi_report:?}");
    assert_eq!(radio.stats().dropped, 2);
    assert_eq!(held(&radio), 0, "{:?}", radio.stats());
    assert_eq!(radio.tokens_in_use(), 4);
    assert!(!radio.rounds_waiting());
}

/// Another AC's unwritten token does not only hide a rerun: it can *block the table*
/// (a `token_size - token_free_thr` of 1, accepted by `Mt76::new`), and the round it
/// blocks ends with nothing written and nothing dropped. Once that token is released
/// unwritten (its frame failed to map, so no tx-free comes), the releasing call runs
/// the blocked AC's round.
///
/// 1. VI's round (thread B) takes token 0 (the table is now blocked) and is preempted
///    before its descriptor write.
/// 2. BE's round (main): `has_room` reads the table blocked; the round ends with
///    nothing written or dropped. BE's 3 frames stay listed.
/// 3. VI's write fails to map: token 0 is released with no written token left, so VI's
///    call sets every other AC's rerun bit and runs BE, which writes its first frame
///    (the table blocks again at one token); its tx-free runs the rest.
#[test]
fn a_round_blocked_by_another_acs_unwritten_token_runs_once_that_token_is_released_unwritten() {
    let hal = ParkHal::new(SimConfig::default());
    let config = Config { token_size: 2, token_free_thr: 1, ..Config::default() };
    let radio: Mt76<ParkHal, Q> = Mt76::new(hal, config).unwrap();
    let mut now = Instant::from_millis(1);
    let s1 = radio.add_station(1, Weight::DEFAULT).unwrap();
    let s2 = radio.add_station(2, Weight::DEFAULT).unwrap();
    let be = radio.add_txq(Some(s1), Tid::BE, Q::default()).map_err(|e| e.0).unwrap();
    let vi = radio.add_txq(Some(s2), Tid::new(5).unwrap(), Q::default()).map_err(|e| e.0).unwrap();
    radio.enqueue(vi, Pkt { seq: 0, txq: vi, len: 1500 }, now).unwrap();
    radio.hal().inner.fail_dma(Ac::Vi, [DmaError::MapFailed]);
    radio.hal().park_desc.store(true, Ordering::Release);
    let (be_report, vi_report) = std::thread::scope(|sc| {
        let vi_worker = sc.spawn(|| radio.wake_tx_queue(vi, now).unwrap());
        radio.hal().bar.wait();
        assert_eq!(radio.tokens_in_use(), 1, "VI's round holds token 0, unwritten");
        for seq in 1..4 {
            radio.enqueue(be, Pkt { seq, txq: be, len: 1500 }, now).unwrap();
        }
        let be_report = radio.wake_tx_queue(be, now).unwrap();
        radio.hal().bar.wait();
        (be_report, vi_worker.join().unwrap())
    });
    assert_eq!(be_report.frames, 0, "BE's round met the blocked table: {be_report:?}");
    assert_eq!(radio.stats().dropped, 1, "VI's frame, unmapped");
    assert_eq!(vi_report.frames, 1, "VI's call ran BE's round, which wrote one frame: {vi_report:?}");
    assert_eq!((radio.tokens_in_use(), held(&radio)), (1, 2), "{:?}", radio.stats());
    // The written frame's tx-free runs the rest, one at a time (the table blocks at 1).
    for _ in 0..8 {
        radio.hal().inner.advance(now);
        now = now.add_micros(1000);
        radio.hal().inner.advance(now);
        let _ = radio.tx_free(64, now);
    }
    assert_eq!((held(&radio), radio.tokens_in_use()), (0, 0), "{:?}", radio.stats());
    assert_eq!(radio.stats().completed, 3);
    assert!(!radio.rounds_waiting());
}

#[test]
fn a_tx_free_pass_meeting_a_reset_writes_no_descriptor_until_tx_restarts() {
    // 6 tokens, all usable; 8 descriptors fit.
    let config = Config { token_size: 6, token_free_thr: 0, ..Config::default() };
    let sim = SimConfig { ndesc: 40, tx_free_delay_us: 0, ..SimConfig::default() };
    let radio: Mt76<ParkHal, Q> = Mt76::new(ParkHal::new(sim), config).unwrap();
    let now = Instant::from_millis(1);
    let s = radio.add_station(1, Weight::DEFAULT).unwrap();
    let q = radio.add_txq(Some(s), Tid::BE, Q::default()).map_err(|e| e.0).unwrap();
    radio.scheduler().set_aql_enabled(false);
    for seq in 0..20 {
        radio.enqueue(q, Pkt { seq, txq: q, len: 1500 }, now).unwrap();
    }
    assert_eq!(radio.wake_tx_queue(q, now).unwrap().frames, 6);
    radio.hal().inner.advance(now);
    radio.hal().park_status.store(true, Ordering::Release);
    let (pass, written_during_reset, flushed) = std::thread::scope(|sc| {
        // The tx-free NAPI, preempted in its first frame's status; its pass then runs
        // the tx worker.
        let napi = sc.spawn(|| radio.tx_free(1, now));
        radio.hal().bar.wait();
        // The reset work: tx stopped, DMA reset, tokens flushed; the pass resumes.
        radio.stop_tx();
        radio.hal().inner.reset_dma();
        radio.hal().bar.wait();
        let pass = napi.join().unwrap();
        let written = radio.hal().inner.descs(Ac::Be);
        (pass, written, radio.reset_tokens())
    });
    assert_eq!(pass.frames_sent, 0, "the pass's rounds wrote nothing while tx was stopped: {pass:?}");
    assert!(written_during_reset.is_empty(), "{written_during_reset:?}");
    assert_eq!(flushed, Ok(5));
    assert_eq!(radio.tokens_in_use(), 0);
    // Tx restarts: the txq, still listed, is served; everything completes once.
    assert_eq!(radio.start_tx(now), Ok(6));
    let mut t = now;
    for _ in 0..20 {
        t = t.add_micros(1000);
        radio.hal().inner.advance(t);
        radio.tx_free(64, t);
    }
    let st = radio.stats();
    assert_eq!((st.completed, st.flushed, st.enqueued), (15, 5, 20), "{st:?}");
    assert_eq!(radio.tokens_in_use(), 0);
    assert_eq!(radio.scheduler().total_pending_us(), 0);
}

#[test]
fn a_tx_free_event_read_before_a_reset_never_completes_a_frame_written_after_it() {
    // 2 tokens, both usable: after the reset the ids come round again at once.
    let config = Config { token_size: 2, token_free_thr: 0, ..Config::default() };
    let sim = SimConfig { tx_free_delay_us: 0, ..SimConfig::default() };
    let radio: Mt76<ParkHal, Q> = Mt76::new(ParkHal::new(sim), config).unwrap();
    let now = Instant::from_millis(1);
    let s = radio.add_station(1, Weight::DEFAULT).unwrap();
    let q = radio.add_txq(Some(s), Tid::BE, Q::default()).map_err(|e| e.0).unwrap();
    radio.scheduler().set_aql_enabled(false);
    for seq in 0..4 {
        radio.enqueue(q, Pkt { seq, txq: q, len: 1500 }, now).unwrap();
    }
    assert_eq!(radio.wake_tx_queue(q, now).unwrap().frames, 2, "frames 0 and 1, on tokens 0 and 1");
    // Both are sent; both tx-free events are ready.
    radio.hal().inner.advance(now);
    radio.hal().park_event.store(true, Ordering::Release);
    let (busy, pass) = std::thread::scope(|sc| {
        // The tx-free NAPI reads frame 0's event and is preempted before it frees the
        // token.
        let napi = sc.spawn(|| radio.tx_free(1, now));
        radio.hal().bar.wait();
        // The reset work: tx stopped, DMA reset (frame 1's event is gone with it). The
        // flush waits for the pass: under it, frames 2 and 3 would take tokens 0 and 1
        // after the restart, and the pass would free frame 2 with frame 0's status
        // while its descriptor is in the DMA queue.
        radio.stop_tx();
        radio.hal().inner.reset_dma();
        let busy = radio.reset_tokens();
        radio.hal().bar.wait();
        (busy, napi.join().unwrap())
    });
    assert_eq!(busy, Err(Mt76Error::TxFreeBusy));
    assert_eq!((pass.completed, pass.frames_sent), (1, 0), "frame 0 completed by its own event: {pass:?}");
    assert_eq!(radio.reset_tokens(), Ok(1), "frame 1, whose event the DMA reset dropped");
    assert_eq!(radio.start_tx(now), Ok(2), "frames 2 and 3");
    let done: Vec<(u64, TxOutcome)> = radio.hal().inner.take_done().iter().map(|(p, r)| (p.seq, r.outcome)).collect();
    assert_eq!(done, [(0, TxOutcome::Acked), (1, TxOutcome::Flushed)]);
    // Frames 2 and 3 complete by their own events, once each.
    let later = now.add_micros(1000);
    radio.hal().inner.advance(now);
    radio.hal().inner.advance(later);
    assert_eq!(radio.tx_free(64, later).completed, 2);
    let st = radio.stats();
    assert_eq!((st.enqueued, st.completed, st.flushed, st.stale_tx_free), (4, 3, 1, 0), "{st:?}");
    assert_eq!(radio.tokens_in_use(), 0);
    assert_eq!(radio.scheduler().total_pending_us(), 0);
}

#[test]
fn the_token_flush_is_refused_while_tx_runs() {
    let radio: Mt76<ParkHal, Q> = Mt76::new(ParkHal::new(SimConfig::default()), Config::default()).unwrap();
    let now = Instant::from_millis(1);
    let s = radio.add_station(1, Weight::DEFAULT).unwrap();
    let q = radio.add_txq(Some(s), Tid::BE, Q::default()).map_err(|e| e.0).unwrap();
    radio.enqueue(q, Pkt { seq: 0, txq: q, len: 1500 }, now).unwrap();
    assert_eq!(radio.wake_tx_queue(q, now).unwrap().frames, 1);
    // Without `stop_tx` a round may be writing a descriptor for a token the flush
    // would complete: refused, nothing flushed.
    assert_eq!(radio.reset_tokens(), Err(Mt76Error::TxNotStopped));
    assert_eq!(radio.tokens_in_use(), 1);
    radio.stop_tx();
    radio.stop_tx(); // twice: still stopped, no wait
    radio.hal().inner.reset_dma();
    assert_eq!(radio.reset_tokens(), Ok(1));
    assert_eq!(radio.start_tx(now), Ok(0));
    assert_eq!(radio.reset_tokens(), Err(Mt76Error::TxNotStopped), "tx runs again");
    assert_eq!(radio.start_tx(now), Ok(0), "start_tx without stop_tx runs the worker, nothing more");
}

/// `stop_tx` publishes "stopped" only after its wait: a flush from another context
/// while `stop_tx` still waits for a round that is writing a descriptor is refused
/// (`TxNotStopped`), as is a `start_tx` (`TxStopping`); once `stop_tx` returns, the
/// DMA reset drops that descriptor and the flush completes its frame.
///
/// 1. The tx worker's round took token 0 for frame 0 and is preempted before the write.
/// 2. `stop_tx` (thread S) marks tx stopping and waits for the round.
/// 3. `reset_tokens` and `start_tx` (main): refused, nothing flushed.
/// 4. The round resumes and writes frame 0's descriptor; `stop_tx` returns.
#[test]
fn the_token_flush_is_refused_while_stop_tx_still_waits_for_a_round_writing_a_descriptor() {
    let hal = ParkHal::new(SimConfig::default());
    hal.park_desc.store(true, Ordering::Release);
    let radio: Mt76<ParkHal, Q> = Mt76::new(hal, Config::default()).unwrap();
    let now = Instant::from_millis(1);
    let s1 = radio.add_station(1, Weight::DEFAULT).unwrap();
    let s2 = radio.add_station(2, Weight::DEFAULT).unwrap();
    let be = radio.add_txq(Some(s1), Tid::BE, Q::default()).map_err(|e| e.0).unwrap();
    let vi = radio.add_txq(Some(s2), Tid::new(5).unwrap(), Q::default()).map_err(|e| e.0).unwrap();
    radio.enqueue(be, Pkt { seq: 0, txq: be, len: 1500 }, now).unwrap();
    radio.sta_ps(s2, true, now).unwrap();
    radio.enqueue(vi, Pkt { seq: 1, txq: vi, len: 1500 }, now).unwrap();
    let (refused, start) = std::thread::scope(|sc| {
        let worker = sc.spawn(|| radio.wake_tx_queue(be, now).unwrap());
        radio.hal().bar.wait();
        let stopper = sc.spawn(|| radio.stop_tx());
        // Rounds on VI until one makes no HAL call: `stop_tx` has marked tx stopping
        // (it now waits for the BE round, which is parked).
        loop {
            let reads = radio.hal().ndesc_reads.load(Ordering::Acquire);
            let _ = radio.schedule(Ac::Vi, now);
            if radio.hal().ndesc_reads.load(Ordering::Acquire) == reads {
                break;
            }
        }
        let refused = radio.reset_tokens();
        let start = radio.start_tx(now);
        radio.hal().bar.wait();
        assert_eq!(worker.join().unwrap().frames, 1, "the round wrote the frame it held");
        stopper.join().unwrap();
        (refused, start)
    });
    assert_eq!(refused, Err(Mt76Error::TxNotStopped), "nothing flushed under the round");
    assert_eq!(start, Err(Mt76Error::TxStopping));
    assert!(radio.hal().inner.take_done().is_empty(), "no frame handed back");
    assert_eq!(radio.tokens_in_use(), 1);
    // The reset, in order: the DMA reset drops the descriptor, then the flush.
    assert_eq!(radio.hal().inner.reset_dma(), 1);
    assert_eq!(radio.reset_tokens(), Ok(1));
    let done: Vec<(u64, TxOutcome)> = radio.hal().inner.take_done().iter().map(|(p, r)| (p.seq, r.outcome)).collect();
    assert_eq!(done, [(0, TxOutcome::Flushed)]);
    assert!(radio.hal().inner.descs(Ac::Be).is_empty(), "no descriptor written after the DMA reset");
    assert_eq!(radio.start_tx(now), Ok(0), "VI's station dozes");
    assert_eq!(held(&radio), 1);
}

/// While `reset_tokens` flushes (here parked in the first frame's status), `start_tx`
/// and a second flush are refused (`TxFlushing`): a frame written now could be flushed
/// while the hardware holds its descriptor. After the flush both proceed.
#[test]
fn start_tx_and_a_second_flush_are_refused_while_the_tokens_flush() {
    let radio: Mt76<ParkHal, Q> = Mt76::new(ParkHal::new(SimConfig::default()), Config::default()).unwrap();
    let now = Instant::from_millis(1);
    let s = radio.add_station(1, Weight::DEFAULT).unwrap();
    let q = radio.add_txq(Some(s), Tid::BE, Q::default()).map_err(|e| e.0).unwrap();
    for seq in 0..2 {
        radio.enqueue(q, Pkt { seq, txq: q, len: 1500 }, now).unwrap();
    }
    assert_eq!(radio.wake_tx_queue(q, now).unwrap().frames, 2);
    radio.stop_tx();
    radio.hal().inner.reset_dma();
    radio.enqueue(q, Pkt { seq: 2, txq: q, len: 1500 }, now).unwrap();
    radio.hal().park_status.store(true, Ordering::Release);
    let (flushed, start, second) = std::thread::scope(|sc| {
        let flush = sc.spawn(|| radio.reset_tokens());
        radio.hal().bar.wait();
        let start = radio.start_tx(now);
        let second = radio.reset_tokens();
        radio.hal().bar.wait();
        (flush.join().unwrap(), start, second)
    });
    assert_eq!((flushed, start, second), (Ok(2), Err(Mt76Error::TxFlushing), Err(Mt76Error::TxFlushing)));
    assert_eq!(radio.hal().inner.descs(Ac::Be).len(), 0, "nothing written during the flush");
    assert_eq!(radio.reset_tokens(), Ok(0), "stopped again once the flush ended");
    assert_eq!(radio.start_tx(now), Ok(1), "frame 2");
    assert_eq!(held(&radio), 0);
}

/// `reset_tokens` counts a tx-free pass for the whole `next_tx_free` call, so it
/// answers `TxFreeBusy` while a pass is inside it, even one that reads no event. A HAL
/// that keeps `next_tx_free`'s contract (its reader never waits on anything held across
/// the flush: the simulated HAL takes its event lock only while it drops or reads
/// events) lets the pass leave, and the next retry flushes.
#[test]
fn a_pass_inside_next_tx_free_holds_off_the_flush_only_until_it_returns() {
    let config = Config { token_size: 4, token_free_thr: 0, ..Config::default() };
    let radio: Mt76<ParkHal, Q> = Mt76::new(ParkHal::new(SimConfig::default()), config).unwrap();
    let now = Instant::from_millis(1);
    let s = radio.add_station(1, Weight::DEFAULT).unwrap();
    let q = radio.add_txq(Some(s), Tid::BE, Q::default()).map_err(|e| e.0).unwrap();
    radio.enqueue(q, Pkt { seq: 0, txq: q, len: 1500 }, now).unwrap();
    assert_eq!(radio.wake_tx_queue(q, now).unwrap().frames, 1);
    radio.stop_tx();
    radio.hal().park_poll.store(true, Ordering::Release);
    let (busy, pass) = std::thread::scope(|sc| {
        let napi = sc.spawn(|| radio.tx_free(64, now));
        // The pass is inside `next_tx_free`, past its count, before its read.
        radio.hal().bar.wait();
        // The reset work: the DMA reset (the event lock held only while it drops the
        // events), then the flush, refused while the pass is inside the call.
        radio.hal().inner.reset_dma();
        let busy = radio.reset_tokens();
        radio.hal().bar.wait();
        (busy, napi.join().unwrap())
    });
    assert_eq!(busy, Err(Mt76Error::TxFreeBusy));
    assert_eq!(pass.entries, 0, "the DMA reset dropped every event: {pass:?}");
    assert_eq!(radio.reset_tokens(), Ok(1), "the pass has returned: the retry flushes");
    assert_eq!(radio.start_tx(now), Ok(0));
    assert_eq!(held(&radio), 0);
}

#[test]
fn a_stop_ends_the_running_burst_at_its_next_frame_and_what_came_meanwhile_goes_at_start_tx() {
    let hal = ParkHal::new(SimConfig::default());
    hal.park_desc.store(true, Ordering::Release);
    let radio: Mt76<ParkHal, Q> = Mt76::new(hal, Config::default()).unwrap();
    let now = Instant::from_millis(1);
    let s1 = radio.add_station(1, Weight::DEFAULT).unwrap();
    let s2 = radio.add_station(2, Weight::DEFAULT).unwrap();
    let be = radio.add_txq(Some(s1), Tid::BE, Q::default()).map_err(|e| e.0).unwrap();
    let vi = radio.add_txq(Some(s2), Tid::new(5).unwrap(), Q::default()).map_err(|e| e.0).unwrap();
    for seq in 0..3 {
        radio.enqueue(be, Pkt { seq, txq: be, len: 1500 }, now).unwrap();
    }
    // A dozing station's VI txq: a VI round that runs reads the queue's fill level and
    // writes nothing.
    radio.sta_ps(s2, true, now).unwrap();
    radio.enqueue(vi, Pkt { seq: 3, txq: vi, len: 1500 }, now).unwrap();
    let (worker, at_stop) = std::thread::scope(|sc| {
        // The tx worker passed its check and is writing BE's first frame.
        let worker = sc.spawn(|| radio.wake_tx_queue(be, now).unwrap());
        radio.hal().bar.wait();
        sc.spawn(|| {
            // Another CPU's rounds on VI until one makes no HAL call: the flag is set.
            loop {
                let reads = radio.hal().ndesc_reads.load(Ordering::Acquire);
                let _ = radio.schedule(Ac::Vi, now);
                if radio.hal().ndesc_reads.load(Ordering::Acquire) == reads {
                    break;
                }
            }
            // Only now does the worker go on, the flag set: it writes the frame it holds
            // and, as `mt76_txq_send_burst` checks `MT76_RESET` before each frame, no
            // other.
            radio.hal().bar.wait();
        });
        // The reset work: returns once that round has ended.
        radio.stop_tx();
        let at_stop = radio.hal().inner.descs(Ac::Be).len();
        (worker.join().unwrap(), at_stop)
    });
    assert_eq!((worker.frames, at_stop), (1, 1), "the burst ended at the stop, before stop_tx returned: {worker:?}");
    assert_eq!(held(&radio), 3, "BE's two other frames and VI's stay queued, not written to be flushed");
    // While stopped: an enqueue and its wake, the VI station's wake, a tx-free pass.
    for seq in 4..6 {
        radio.enqueue(be, Pkt { seq, txq: be, len: 1500 }, now).unwrap();
    }
    assert_eq!(radio.wake_tx_queue(be, now).unwrap().frames, 0);
    assert_eq!(radio.sta_ps(s2, false, now).unwrap(), 0);
    let later = now.add_micros(1000);
    radio.hal().inner.advance(now);
    radio.hal().inner.advance(later);
    let pass = radio.tx_free(64, later);
    assert_eq!((pass.completed, pass.frames_sent), (1, 0), "{pass:?}");
    assert!(radio.hal().inner.descs(Ac::Be).is_empty() && radio.hal().inner.descs(Ac::Vi).is_empty());
    // No further event: start_tx serves all of it, in order.
    assert_eq!(radio.start_tx(later), Ok(5));
    assert!(!radio.rounds_waiting());
    assert_eq!(held(&radio), 0);
    assert_eq!(radio.tokens_in_use(), 5);
    assert_eq!((radio.hal().inner.descs(Ac::Be).len(), radio.hal().inner.descs(Ac::Vi).len()), (4, 1));
}

/// Suspends a chosen thread wherever it is, from another thread: `pthread_kill` with
/// `SIGUSR1`, whose handler spins until resumed (atomics only, which a signal handler
/// may use). It forces a preemption inside `stop_tx`'s wait, where the adapter makes no
/// call a test could park (the wait only reads the gate).
#[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
mod suspend {
    use std::os::raw::{c_int, c_ulong};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    const SIGUSR1: c_int = 10;

    unsafe extern "C" {
        fn pthread_self() -> c_ulong;
        fn pthread_kill(thread: c_ulong, sig: c_int) -> c_int;
        fn signal(sig: c_int, handler: usize) -> usize;
    }

    static SUSPENDED: AtomicBool = AtomicBool::new(false);
    static RESUME: AtomicBool = AtomicBool::new(false);
    /// The thread to suspend (`pthread_t`), 0 until it registers.
    static TARGET: AtomicU64 = AtomicU64::new(0); // `c_ulong` is `u64` on these targets

    extern "C" fn park(_sig: c_int) {
        SUSPENDED.store(true, Ordering::SeqCst);
        while !RESUME.load(Ordering::SeqCst) {
            core::hint::spin_loop();
        }
    }

    /// Called by the thread to be suspended.
    pub fn register() {
        // SAFETY: `pthread_self` has no preconditions.
        TARGET.store(unsafe { pthread_self() }, Ordering::SeqCst);
    }

    /// Waits for `register`, then suspends that thread and returns once it is suspended.
    pub fn suspend() {
        while TARGET.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        let handler: extern "C" fn(c_int) = park;
        // SAFETY: the handler only touches atomics; the target thread is alive (it is
        // joined after `resume`).
        unsafe {
            assert_ne!(signal(SIGUSR1, handler as usize), usize::MAX, "signal");
            assert_eq!(pthread_kill(TARGET.load(Ordering::SeqCst), SIGUSR1), 0, "pthread_kill");
        }
        while !SUSPENDED.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
    }

    pub fn resume() {
        RESUME.store(true, Ordering::SeqCst);
    }
}

/// A `stop_tx` (B) whose wait outlasts a whole reset run by another context (A's
/// `stop_tx`, which publishes stopped, the flush, `start_tx`) does not return with tx
/// running: its last step finds tx restarted, and it stops tx again.
///
/// 1. The tx worker's BE round (W1) is writing frame 0's descriptor, parked in the HAL.
/// 2. B's `stop_tx` (thread B) marks tx stopping (seen: a VI round makes no HAL call) and
///    waits for W1's round; B is suspended there (a signal, as a preemption would),
///    before its last step.
/// 3. W1's round resumes and ends at its next frame. A's `stop_tx` (main) joins the stop,
///    finds no round running and publishes stopped; the DMA reset; the flush; `start_tx`
///    (thread W2), whose BE round is writing frame 1's descriptor, parked in the HAL.
/// 4. B resumes (still in its wait, which now covers W2's round), then W2's round.
///
/// Once B returns, tx is stopped: a wake writes nothing and the flush is allowed.
#[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
#[test]
fn a_stop_tx_whose_wait_outlasts_another_stop_flush_and_start_tx_returns_only_with_tx_stopped_again() {
    let hal = ParkHal::new(SimConfig::default());
    hal.park_desc.store(true, Ordering::Release);
    let radio: Mt76<ParkHal, Q> = Mt76::new(hal, Config::default()).unwrap();
    let now = Instant::from_millis(1);
    let s1 = radio.add_station(1, Weight::DEFAULT).unwrap();
    let s2 = radio.add_station(2, Weight::DEFAULT).unwrap();
    let be = radio.add_txq(Some(s1), Tid::BE, Q::default()).map_err(|e| e.0).unwrap();
    let vi = radio.add_txq(Some(s2), Tid::new(5).unwrap(), Q::default()).map_err(|e| e.0).unwrap();
    for seq in 0..3 {
        radio.enqueue(be, Pkt { seq, txq: be, len: 1500 }, now).unwrap();
    }
    // A dozing station's VI txq: a VI round that runs reads the queue's fill level and
    // writes nothing; one that finds tx stopping makes no HAL call.
    radio.sta_ps(s2, true, now).unwrap();
    radio.enqueue(vi, Pkt { seq: 100, txq: vi, len: 1500 }, now).unwrap();
    let (flushed, restart) = std::thread::scope(|sc| {
        let w1 = sc.spawn(|| radio.wake_tx_queue(be, now).unwrap());
        radio.hal().bar.wait();
        let b = sc.spawn(|| {
            suspend::register();
            radio.stop_tx();
        });
        loop {
            let reads = radio.hal().ndesc_reads.load(Ordering::Acquire);
            let _ = radio.schedule(Ac::Vi, now);
            if radio.hal().ndesc_reads.load(Ordering::Acquire) == reads {
                break;
            }
        }
        // B has marked tx stopping and cannot leave its wait while W1's round is parked.
        suspend::suspend();
        radio.hal().bar.wait();
        assert_eq!(w1.join().unwrap().frames, 1, "W1's round wrote the frame it held and stopped");
        // The reset work in another context, all of it while B is inside its wait.
        radio.stop_tx();
        assert_eq!(radio.hal().inner.reset_dma(), 1);
        let flushed = radio.reset_tokens();
        radio.hal().park_desc.store(true, Ordering::Release);
        let w2 = sc.spawn(|| radio.start_tx(now));
        // W2's round on BE is writing frame 1's descriptor.
        radio.hal().bar.wait();
        suspend::resume();
        radio.hal().bar.wait();
        let restart = w2.join().unwrap();
        b.join().unwrap();
        (flushed, restart)
    });
    assert_eq!(flushed, Ok(1), "frame 0");
    assert!(matches!(restart, Ok(n) if n >= 1), "{restart:?}");
    // B has returned: no descriptor is written until the next `start_tx`.
    let before = radio.hal().inner.descs(Ac::Be).len();
    radio.enqueue(be, Pkt { seq: 3, txq: be, len: 1500 }, now).unwrap();
    let wake = radio.wake_tx_queue(be, now).unwrap();
    let after = radio.hal().inner.descs(Ac::Be).len();
    assert_eq!(
        (wake.frames, after),
        (0, before),
        "B's stop_tx returned with tx running: a wake wrote descriptors: {wake:?}"
    );
    radio.hal().inner.reset_dma();
    assert!(radio.reset_tokens().is_ok(), "tx is stopped once B's stop_tx has returned");
    let waiting = u32::try_from(held(&radio)).unwrap();
    assert_eq!(radio.start_tx(now), Ok(waiting - 1), "all but VI's dozing frame");
}

/// A FIFO txq that the enqueue writes itself (`DIRECT_ENQUEUE`): the enqueue of frame
/// `seq == 99` parks once where it holds the queue's lock (its room check, as a
/// preemption there would), then finds room or, if `full`, none.
struct ParkingEnqueueQ {
    q: Q,
    full: bool,
    reached: &'static Barrier,
    resume: &'static Barrier,
}

txq_of_fifo!(ParkingEnqueueQ);

impl Enqueue for ParkingEnqueueQ {
    const DIRECT_ENQUEUE: bool = true;
    fn has_room_for(&self, frame: &Pkt) -> bool {
        if frame.seq == 99 {
            self.reached.wait();
            self.resume.wait();
            return !self.full;
        }
        true
    }
    fn enqueue(&mut self, frame: Pkt, now: Instant) {
        self.q.enqueue(frame, now)
    }
}

impl DriverTxq for ParkingEnqueueQ {}

/// A station removed while an enqueue holds its txq's queue: the removal cannot take
/// the queue then, and the enqueue hands the txq's frames back as it returns, whether
/// it wrote its frame (`full: false`) or was refused for room (`full: true`, a dozing
/// station's full FQ-CoDel txq), so they do not wait for a later call that a quiet
/// radio may never make.
fn a_txq_removed_under_an_enqueue_is_handed_back_by_that_enqueue(
    full: bool,
    reached: &'static Barrier,
    resume: &'static Barrier,
) {
    let radio: Mt76<SimHal<Pkt>, ParkingEnqueueQ> =
        Mt76::new(SimHal::new(SimConfig::default()), Config::default()).unwrap();
    let now = Instant::from_millis(1);
    let sta = radio.add_station(1, Weight::DEFAULT).unwrap();
    let queue = ParkingEnqueueQ { q: Q::default(), full, reached, resume };
    let txq = radio.add_txq(Some(sta), Tid::BE, queue).map_err(|e| e.0).unwrap();
    // Asleep: the frames stay in the txq.
    radio.sta_ps(sta, true, now).unwrap();
    for seq in 0..3 {
        radio.enqueue(txq, Pkt { seq, txq, len: 1500 }, now).unwrap();
    }
    // Every check after the writer is released: a failed one inside the scope would
    // leave it parked, and the scope's join waiting for it.
    let (removed, purged_meanwhile, written) = std::thread::scope(|s| {
        let writer = s.spawn(|| radio.enqueue(txq, Pkt { seq: 99, txq, len: 1500 }, now));
        reached.wait();
        let removed = radio.remove_station(sta, now);
        let purged = radio.stats().purged;
        resume.wait();
        (removed, purged, writer.join().unwrap())
    });
    assert!(removed.is_ok(), "{removed:?}");
    assert_eq!(purged_meanwhile, 0, "the enqueue held the queue: the removal could not take it");
    let s = radio.stats();
    if full {
        assert_eq!(written.map_err(|p| p.seq), Err(99), "no room: the frame comes back to the caller");
        assert_eq!((s.enqueued, s.purged), (3, 3), "handed back by the refused enqueue: {s:?}");
    } else {
        assert!(written.is_ok());
        assert_eq!((s.enqueued, s.purged), (4, 4), "handed back by the enqueue itself: {s:?}");
    }
    assert_eq!(radio.hal().take_done().len() as u64, s.purged);
    assert_eq!(radio.reap(now), 0, "nothing left for a later call");
}

#[test]
fn a_txq_removed_under_an_enqueue_that_writes_is_handed_back_by_it() {
    static REACHED: Barrier = Barrier::new(2);
    static RESUME: Barrier = Barrier::new(2);
    a_txq_removed_under_an_enqueue_is_handed_back_by_that_enqueue(false, &REACHED, &RESUME);
}

#[test]
fn a_txq_removed_under_an_enqueue_refused_for_room_is_handed_back_by_it() {
    static REACHED: Barrier = Barrier::new(2);
    static RESUME: Barrier = Barrier::new(2);
    a_txq_removed_under_an_enqueue_is_handed_back_by_that_enqueue(true, &REACHED, &RESUME);
}
