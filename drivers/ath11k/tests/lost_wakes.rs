//! Lost wakes between two contexts' rounds on one AC (from a review): each test parks
//! context A at one point of its round while context B runs, and then lets only the
//! hardware move (firmware time passes, completion passes are polled; no wake, no
//! timer). No frame may be left stranded in a txq then.
//!
//! Context A (a thread named "A", the wake path) is parked with a `Barrier` at one
//! point of its round; the test thread plays context B (the completion NAPI poll) while
//! A is parked, then lets A go on.
//!
//! Park points:
//! * `PQ::peek_len` (the txq's `is_empty`), which the core's turn calls from
//!   `TxqTurn::is_backlogged` after its send loop ended and before the txq is returned:
//!   A holds the txq and has decided to stop (AQL refused, or the ring read full).
//! * `ParkHal::msdu_outstanding` after it read a full MSDU table: inside the ring's
//!   `has_room`, the value already read.
//!
//! What fixes each:
//! * (a) AQL and (b) ring, concurrent rounds: B's round could not see the txq A held;
//!   the core's round, having had a txq off the list, sees that a round started
//!   meanwhile and runs one more (`TxqTable::run_round_hooked`; undone by the
//!   `no_overlap_recheck` variant, which these tests then fail). Gated, the gate's
//!   runner runs one more round for B's note.
//! * (c) blocked-AC race, concurrent and gated: B's pass read `blocked` before A's
//!   round marked BE, and A's round read the ring full before B reaped; the adapter
//!   now re-reads the ring after marking the AC, with SeqCst fences on both sides
//!   (`one_round`, `finish_pass`).

use airtime_ath11k::hal::{
    Msdu, MsduTable, PpduStats, PpduStatsSource, RingId, RxPpdu, RxStatusSource, StatusSink, TclDesc, TclRings,
    TxCompletion, TxCompletionRing, TxStatus,
};
use airtime_ath11k::sim_hal::{SimConfig, SimHal};
use airtime_ath11k::{Ath11k, Config, RoundOutcome, Rounds};
use airtime_sched::traits::Frame;
use airtime_sched::{Ac, Enqueue, Instant, RingErrorKind, Tid, Txq, TxqId, Weight};
use std::collections::VecDeque;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};

#[derive(Debug, Clone, PartialEq, Eq)]
struct Pkt {
    seq: u64,
    len: u32,
}
impl Frame for Pkt {
    fn len_bytes(&self) -> u32 {
        self.len
    }
}

/// A one-shot park point: the first call from thread "A" while armed waits on `ready`
/// (the test thread now knows A is there) and then on `go`.
#[derive(Default)]
struct Park {
    armed: AtomicBool,
    ready: Option<Barrier>,
    go: Option<Barrier>,
    hits: AtomicU64,
}
impl Park {
    fn new() -> Park {
        Park {
            armed: AtomicBool::new(false),
            ready: Some(Barrier::new(2)),
            go: Some(Barrier::new(2)),
            hits: AtomicU64::new(0),
        }
    }
    fn maybe_park(&self) {
        if std::thread::current().name() == Some("A") && self.armed.swap(false, Ordering::AcqRel) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            self.ready.as_ref().unwrap().wait();
            self.go.as_ref().unwrap().wait();
        }
    }
    fn wait_parked(&self) {
        self.ready.as_ref().unwrap().wait();
    }
    fn release(&self) {
        self.go.as_ref().unwrap().wait();
    }
}

/// A FIFO txq whose `peek_len` (hence `is_empty`) can park thread A.
#[derive(Default)]
struct Shared {
    fifo: Mutex<VecDeque<Pkt>>,
    pulled: AtomicU64,
    park: Mutex<Option<Arc<Park>>>,
}
struct PQ(Arc<Shared>);
impl Txq for PQ {
    type Frame = Pkt;
    type Error = core::convert::Infallible;
    fn dequeue(&mut self, _: Instant) -> Result<Option<Pkt>, Self::Error> {
        Ok(self.0.fifo.lock().unwrap().pop_front())
    }
    fn peek_len(&self) -> Option<u32> {
        let v = self.0.fifo.lock().unwrap().front().map(|p| p.len);
        let park = self.0.park.lock().unwrap().clone();
        if let Some(p) = park {
            p.maybe_park();
        }
        v
    }
}
impl Enqueue for PQ {
    fn enqueue(&mut self, frame: Pkt, _: Instant) {
        self.0.fifo.lock().unwrap().push_back(frame);
        self.0.pulled.fetch_add(1, Ordering::Relaxed);
    }
}

/// The simulated HAL, with a park point in `msdu_outstanding` when it reads a full
/// table, and two in `msdu_insert`: before the insert, and after one that failed.
struct ParkHal {
    inner: SimHal<Pkt>,
    park: Mutex<Option<Arc<Park>>>,
    before_insert: Mutex<Option<Arc<Park>>>,
    after_failed_insert: Mutex<Option<Arc<Park>>>,
}
impl TclRings for ParkHal {
    type Error = RingErrorKind;
    fn tcl_descriptors(&self, ring: RingId) -> u32 {
        self.inner.tcl_descriptors(ring)
    }
    fn tcl_free(&self, ring: RingId) -> u32 {
        self.inner.tcl_free(ring)
    }
    fn tcl_enqueue(&self, ring: RingId, desc: TclDesc) -> Result<(), RingErrorKind> {
        self.inner.tcl_enqueue(ring, desc)
    }
}
impl MsduTable for ParkHal {
    type Frame = Pkt;
    fn msdu_capacity(&self, ring: RingId) -> u32 {
        self.inner.msdu_capacity(ring)
    }
    fn msdu_outstanding(&self, ring: RingId) -> u32 {
        let v = self.inner.msdu_outstanding(ring);
        if v >= self.inner.msdu_capacity(ring) {
            let park = self.park.lock().unwrap().clone();
            if let Some(p) = park {
                p.maybe_park();
            }
        }
        v
    }
    fn msdu_insert(&self, ring: RingId, msdu: Msdu<Pkt>) -> Result<u32, Msdu<Pkt>> {
        let before = self.before_insert.lock().unwrap().clone();
        if let Some(p) = before {
            p.maybe_park();
        }
        let r = self.inner.msdu_insert(ring, msdu);
        if r.is_err() {
            let after = self.after_failed_insert.lock().unwrap().clone();
            if let Some(p) = after {
                p.maybe_park();
            }
        }
        r
    }
    fn msdu_take(&self, ring: RingId, id: u32) -> Option<Msdu<Pkt>> {
        self.inner.msdu_take(ring, id)
    }
    fn msdu_take_any(&self, ring: RingId) -> Option<(u32, Msdu<Pkt>)> {
        self.inner.msdu_take_any(ring)
    }
}
impl TxCompletionRing for ParkHal {
    fn reap_tx_completion(&self) -> Option<TxCompletion> {
        self.inner.reap_tx_completion()
    }
}
impl StatusSink for ParkHal {
    type Frame = Pkt;
    fn tx_status(&self, frame: Pkt, status: TxStatus) {
        self.inner.tx_status(frame, status)
    }
    fn tx_completed(&self, frame: Pkt, c: &TxCompletion) {
        self.inner.tx_completed(frame, c)
    }
}
impl PpduStatsSource for ParkHal {
    fn next_ppdu_stats(&self) -> Option<PpduStats> {
        self.inner.next_ppdu_stats()
    }
}
impl RxStatusSource for ParkHal {
    fn next_rx_ppdu(&self) -> Option<RxPpdu> {
        self.inner.next_rx_ppdu()
    }
}

type Radio = Ath11k<ParkHal, PQ>;

struct World {
    radio: Arc<Radio>,
    seq: u64,
    now: Instant,
}

impl World {
    fn new(rounds: Rounds, sim: SimConfig) -> World {
        let mut config = Config::default();
        config.rounds = rounds;
        let hal = ParkHal {
            inner: SimHal::new(sim),
            park: Mutex::new(None),
            before_insert: Mutex::new(None),
            after_failed_insert: Mutex::new(None),
        };
        World { radio: Arc::new(Ath11k::new(hal, config).expect("radio")), seq: 0, now: Instant::from_micros(1) }
    }
    fn txq(&self, peer: u16, tid: u8) -> (TxqId, Arc<Shared>) {
        let sta = match self.radio.station_by_peer(peer) {
            Some(s) => s,
            None => self.radio.add_station(peer, Weight::new(256).unwrap()).expect("station"),
        };
        let shared = Arc::new(Shared::default());
        let id =
            self.radio.add_txq(Some(sta), Tid::new(tid).unwrap(), PQ(shared.clone())).map_err(|e| e.0).expect("txq");
        (id, shared)
    }
    fn enqueue(&mut self, txq: TxqId, n: u32) {
        for _ in 0..n {
            self.seq += 1;
            self.radio
                .enqueue(txq, Pkt { seq: self.seq, len: 1500 }, self.now)
                .map_err(|e| e.to_string())
                .expect("enqueue");
        }
    }
    /// Context B: the firmware takes and completes everything in the rings, then one
    /// completion NAPI pass (budget 64, CPU 1) runs, with its rounds.
    fn completion_pass(&mut self) -> airtime_ath11k::CompletionPass {
        self.now = self.now.add_micros(10);
        self.radio.hal().inner.advance(self.now);
        self.now = self.now.add_micros(5000);
        self.radio.hal().inner.advance(self.now);
        self.radio.poll_tx_completions(64, 1, self.now)
    }
    /// Only the hardware moves from here on: 50 more firmware steps and completion passes,
    /// no wake, no timer. Returns the frames left in `q` (queue + intake).
    fn settle(&mut self, shared: &Shared, accepted: u64) -> u64 {
        for _ in 0..50 {
            self.completion_pass();
        }
        let fifo = shared.fifo.lock().unwrap().len() as u64;
        let left = fifo + (accepted - shared.pulled.load(Ordering::Relaxed));
        self.radio.scheduler().check_invariants().expect("invariants");
        assert!(self.radio.rounds_waiting().is_empty(), "no round left asked for: {}", self.state());
        left
    }
    /// Runs `f` on thread "A" and, while A is parked, `b` here; then lets A go on.
    fn interleave<B: FnOnce(&mut World) -> R, R>(
        &mut self,
        park: &Arc<Park>,
        a: impl FnOnce(&Radio, Instant) -> RoundOutcome + Send + 'static,
        b: B,
    ) -> (RoundOutcome, R) {
        park.armed.store(true, Ordering::Release);
        let radio = self.radio.clone();
        let now = self.now;
        let th = std::thread::Builder::new().name("A".into()).spawn(move || a(&radio, now)).unwrap();
        park.wait_parked();
        let r = b(self);
        park.release();
        let out = th.join().unwrap();
        assert_eq!(park.hits.load(Ordering::Relaxed), 1, "A never reached its park point");
        (out, r)
    }
    fn state(&self) -> String {
        format!(
            "outstanding {}, completions waiting {}, held {}, blocked {:?}, rounds waiting {:?}",
            self.radio.outstanding_msdus(),
            self.radio.hal().inner.completions_waiting(),
            self.radio.held_frames(),
            self.radio.blocked_acs(),
            self.radio.rounds_waiting()
        )
    }
}

fn gated() -> Rounds {
    Rounds::Gated { max_rounds: NonZeroU32::new(4).unwrap() }
}

/// (a) AQL: A's turn on T sends until T's station reaches its AQL limit; the check
/// refuses; A is parked before it returns T. B's completion pass releases every charge
/// of the station and runs its BE round, which cannot see T. A returns T. Returns the
/// frames T still holds once only the hardware runs.
fn variant_aql(rounds: Rounds) -> u64 {
    let mut w = World::new(rounds, SimConfig::default());
    let (t, shared) = w.txq(1, 0);
    let park = Arc::new(Park::new());
    *shared.park.lock().unwrap() = Some(park.clone());
    w.enqueue(t, 20);
    let (a, b) = w.interleave(
        &park,
        move |radio, now| radio.wake_tx_queue(t, 0, now).unwrap(),
        |w| {
            let sta = w.radio.station_by_peer(1).unwrap();
            let pending = w.radio.scheduler().station_pending_us(sta, Ac::Be).unwrap();
            let in_hw = w.radio.outstanding_msdus();
            let pass = w.completion_pass();
            let after = w.radio.scheduler().station_pending_us(sta, Ac::Be).unwrap();
            format!(
                "B: while A parked: station pending {pending} us, {in_hw} MSDUs out; B's pass reaped {:?}, \
                 asked rounds on {:?}, pushed {} frames; station pending after {after} us",
                pass.reaped, pass.rounds, pass.frames_pushed
            )
        },
    );
    println!("  {b}");
    println!("  A: rounds {}, frames {}, served {}, end {:?}", a.rounds, a.frames, a.txqs_served, a.end);
    println!("  after A: {}", w.state());
    let left = w.settle(&shared, 20);
    println!("  after 50 completion passes, no wake: T holds {left} frames; {}", w.state());
    left
}

/// (b) ring: A's turn on T fills ring 0's MSDU table; A's `has_room` reads it full and
/// A is parked there (holding T). B's pass completes everything and runs its BE round
/// (ring 1, empty), which cannot see T. A returns T and marks BE blocked.
fn variant_ring(rounds: Rounds) -> u64 {
    let mut sim = SimConfig::default();
    sim.msdu_capacity = 4;
    let mut w = World::new(rounds, sim);
    let (t, shared) = w.txq(1, 0);
    let park = Arc::new(Park::new());
    *w.radio.hal().park.lock().unwrap() = Some(park.clone());
    w.enqueue(t, 10);
    let (a, b) = w.interleave(
        &park,
        move |radio, now| radio.wake_tx_queue(t, 0, now).unwrap(),
        |w| {
            let in_hw = w.radio.outstanding_msdus();
            let pass = w.completion_pass();
            format!(
                "B: while A parked: {in_hw} MSDUs out; B's pass reaped {:?}, asked rounds on {:?}, pushed {} frames",
                pass.reaped, pass.rounds, pass.frames_pushed
            )
        },
    );
    println!("  {b}");
    println!("  A: rounds {}, frames {}, served {}, end {:?}", a.rounds, a.frames, a.txqs_served, a.end);
    println!("  after A: {}", w.state());
    let left = w.settle(&shared, 10);
    println!("  after 50 completion passes, no wake: T holds {left} frames; {}", w.state());
    left
}

/// (c) blocked-AC race: ring 0's MSDU table is full of VO frames. A's wake of T (BE)
/// reads it full at the top of its round (holding no txq) and is parked. B's pass
/// reaps the VO frames: BE is not reaped and not yet in `blocked`, so B runs no BE
/// round. A then ends its round RingFull and marks BE blocked.
fn variant_blocked(rounds: Rounds) -> u64 {
    let mut sim = SimConfig::default();
    sim.msdu_capacity = 4;
    let mut w = World::new(rounds, sim);
    let (t, shared) = w.txq(1, 0);
    let (v, _vs) = w.txq(2, 6);
    w.enqueue(v, 4);
    let r = w.radio.wake_tx_queue(v, 0, w.now).unwrap();
    assert_eq!(r.frames, 4);
    println!("  setup: VO round pushed {} frames into ring 0 (table of 4), end {:?}; {}", r.frames, r.end, w.state());
    let park = Arc::new(Park::new());
    *w.radio.hal().park.lock().unwrap() = Some(park.clone());
    w.enqueue(t, 5);
    let (a, b) = w.interleave(
        &park,
        move |radio, now| radio.wake_tx_queue(t, 0, now).unwrap(),
        |w| {
            let pass = w.completion_pass();
            format!(
                "B: while A parked: B's pass reaped {:?}, asked rounds on {:?}, pushed {} frames",
                pass.reaped, pass.rounds, pass.frames_pushed
            )
        },
    );
    println!("  {b}");
    println!("  A: rounds {}, frames {}, served {}, end {:?}", a.rounds, a.frames, a.txqs_served, a.end);
    println!("  after A: {}", w.state());
    let left = w.settle(&shared, 5);
    println!("  after 50 completion passes, no wake: T holds {left} frames; {}", w.state());
    left
}

/// (d) a push refused as full: ring 0's MSDU table has one id free. A's wake of T (BE)
/// is parked before its insert; B's VO push takes the last id; A's insert fails
/// (`Refused(Full)`) and A is parked before it marks BE blocked. B's completion pass
/// reaps only VO frames and reads `blocked` without BE. A then marks BE blocked.
fn variant_refused(rounds: Rounds) -> u64 {
    let mut sim = SimConfig::default();
    sim.msdu_capacity = 4;
    let mut w = World::new(rounds, sim);
    let (t, shared) = w.txq(1, 0);
    let (v, _vo) = w.txq(2, 6);
    w.enqueue(v, 3);
    assert_eq!(w.radio.wake_tx_queue(v, 0, w.now).unwrap().frames, 3);
    let (before, after) = (Arc::new(Park::new()), Arc::new(Park::new()));
    *w.radio.hal().before_insert.lock().unwrap() = Some(before.clone());
    *w.radio.hal().after_failed_insert.lock().unwrap() = Some(after.clone());
    w.enqueue(t, 5);
    before.armed.store(true, Ordering::Release);
    after.armed.store(true, Ordering::Release);
    let (radio, now) = (w.radio.clone(), w.now);
    let a =
        std::thread::Builder::new().name("A".into()).spawn(move || radio.wake_tx_queue(t, 0, now).unwrap()).unwrap();
    before.wait_parked();
    w.enqueue(v, 1);
    let r = w.radio.wake_tx_queue(v, 0, w.now).unwrap();
    println!("  B: VO round pushed {} (ring 0 full: {})", r.frames, w.state());
    before.release();
    after.wait_parked();
    let pass = w.completion_pass();
    println!("  B: pass reaped {:?}, rounds on {:?}, pushed {}", pass.reaped, pass.rounds, pass.frames_pushed);
    after.release();
    let a = a.join().unwrap();
    println!("  A: rounds {}, frames {}, end {:?}, deferred {}", a.rounds, a.frames, a.end, a.deferred);
    let left = w.settle(&shared, 5);
    println!("  after the completion passes, no wake: T holds {left} frames; {}", w.state());
    left
}

#[test]
fn a_aql_concurrent() {
    println!("(a) AQL, Rounds::Concurrent");
    assert_eq!(variant_aql(Rounds::Concurrent), 0, "frames stranded");
}

#[test]
fn a_aql_gated() {
    println!("(a) AQL, Rounds::Gated {{ max_rounds: 4 }}");
    assert_eq!(variant_aql(gated()), 0, "frames stranded");
}

#[test]
fn b_ring_concurrent() {
    println!("(b) ring, Rounds::Concurrent");
    assert_eq!(variant_ring(Rounds::Concurrent), 0, "frames stranded");
}

#[test]
fn b_ring_gated() {
    println!("(b) ring, Rounds::Gated {{ max_rounds: 4 }}");
    assert_eq!(variant_ring(gated()), 0, "frames stranded");
}

#[test]
fn c_blocked_concurrent() {
    println!("(c) blocked-AC race, Rounds::Concurrent");
    assert_eq!(variant_blocked(Rounds::Concurrent), 0, "frames stranded");
}

#[test]
fn c_blocked_gated() {
    println!("(c) blocked-AC race, Rounds::Gated {{ max_rounds: 4 }}");
    assert_eq!(variant_blocked(gated()), 0, "frames stranded");
}

#[test]
fn a_aql_gated_budget_one() {
    println!("(a) AQL, Rounds::Gated {{ max_rounds: 1 }}");
    // B's note meets a runner with no round left: deferred, and the next completion
    // pass (polled while the AC's rounds wait) serves it.
    assert_eq!(variant_aql(Rounds::Gated { max_rounds: NonZeroU32::new(1).unwrap() }), 0, "frames stranded");
}

#[test]
fn d_refused_concurrent() {
    println!("(d) a push refused as full, Rounds::Concurrent");
    assert_eq!(variant_refused(Rounds::Concurrent), 0, "frames stranded");
}

#[test]
fn d_refused_gated() {
    println!("(d) a push refused as full, Rounds::Gated");
    assert_eq!(variant_refused(gated()), 0, "frames stranded");
}
