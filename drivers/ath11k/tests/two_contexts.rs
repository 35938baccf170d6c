//! The wake path and the completion path at once, on two threads, over the simulated
//! HAL with faults injected (TCL enqueues refused with -ENOMEM and -ENOSPC, rings held
//! full, every completion status), while a third context adds and removes stations and
//! changes weights. The adapter is shared as `&Ath11k` (an `Arc`): no lock around it.
//!
//! The wake thread wakes a txq only after it enqueued to it (mac80211's order), so a
//! txq with frames is served only while the scheduler keeps it listed.
//!
//! Checked throughout:
//! * every station's pending airtime on each AC stays within its high AQL limit plus
//!   one frame (checked after every round by the wake thread and by the control thread);
//! * the core's live invariant check (`Scheduler::check_invariants`, what a debugfs read
//!   runs on the shared scheduler) never reports a violation: an observer thread runs
//!   it back to back, and the wake, completion and control contexts run it after each
//!   wake, completion pass and control operation;
//! * every MSDU completes once: the status sink never sees a frame twice;
//! * at each pause between phases (threads joined): the core's exact invariant checker,
//!   and conservation: every frame enqueued is in a txq, a retry slot, the hardware,
//!   handed back by the status sink, purged with a removed txq, or handed back by an
//!   enqueue that raced a removal.
//!
//! Run twice: with concurrent rounds (the default), and with the rounds gated
//! (`Rounds::Gated`, a budget of two rounds a call), where a context that finds another
//! running an AC's rounds hands its request over and a runner that spends its budget
//! defers the rest: the wake thread then runs the waiting rounds at the end of its sweep
//! and the completion thread right after its pass, as a driver would reschedule its work.
//! With the senders stopped and the threads joined, waiting rounds run until none wait.
//!
//! Checked after every phase, not only the last (a later phase's wakes would list a
//! txq whose wake was lost and hide it): with the senders stopped, rounds alone (no
//! wake) deliver every frame still queued, so a txq left with frames but unlisted (a
//! lost wake) fails the test. The phases alternate a saturating sender (txqs stay
//! listed) and a trickling one (txqs drain between wakes, so wakes list them). At the
//! end, after the radio's shutdown, every frame enqueued was completed, freed with a
//! status, or handed back; pending airtime is 0 for the radio and every station; no
//! release error, no underflow.

mod common;

use airtime_ath11k::hal::{RingId, TxStatus};
use airtime_ath11k::sim_hal::{SimConfig, SimHal};
use airtime_ath11k::{AcSet, Ath11k, Config, Rounds};
use airtime_sched::txqs::EnqueueError;
use airtime_sched::{Ac, Instant, RingErrorKind, StationId, Tid, TxqId, Weight};
use common::{Pkt, Q, Shared};
use std::collections::HashSet;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Radio = Ath11k<SimHal<Pkt>, Q>;

/// A small xorshift generator: deterministic choices without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A live station as the test's own bookkeeping sees it (the driver's `sta` list).
#[derive(Clone)]
struct Live {
    sta: StationId,
    txqs: Vec<(TxqId, Arc<Shared>)>,
}

/// A txq ever made: its id, what it shares, and the frames accepted into it.
type TxqRecord = (TxqId, Arc<Shared>, Arc<AtomicU64>);

/// What the threads share beside the radio: the test's counts.
struct World {
    radio: Radio,
    start: std::time::Instant,
    /// Simulated time the drains between phases skipped ahead, in us.
    skipped_us: AtomicU64,
    /// The live stations (the test's list, not the adapter's: the adapter takes no lock).
    live: Mutex<Vec<Live>>,
    /// Per txq ever made: what it shares and how many frames were accepted into it.
    all_txqs: Mutex<Vec<TxqRecord>>,
    next_seq: AtomicU64,
    /// Frames the radio took (enqueue returned `Ok`, or `Removed` for this frame).
    entered: AtomicU64,
    /// Frames handed back by an enqueue that raced its txq's removal.
    handed_back: AtomicU64,
    /// Frames purged from removed txqs' queues.
    purged: AtomicU64,
    /// Sequence numbers the status sink returned (each once).
    seen: Mutex<HashSet<u64>>,
    one_frame_us: u32,
    /// Live invariant checks run during the phases, per context.
    live_checks: [AtomicU64; CONTEXTS],
    /// Gated: round requests handed to the context running the AC's rounds, and calls
    /// whose rounds were deferred.
    handed_off: AtomicU64,
    deferred: AtomicU64,
}

/// The contexts that run the live invariant check.
const CONTEXTS: usize = 4;
const CONTEXT_NAMES: [&str; CONTEXTS] = ["wake", "completion", "control", "observer"];
const WAKE: usize = 0;
const COMPLETION: usize = 1;
const CONTROL: usize = 2;
const OBSERVER: usize = 3;

impl World {
    /// Counts a gated round request handed off, and a call that deferred rounds.
    fn count_gate(&self, handed_off: bool, deferred: bool) {
        self.handed_off.fetch_add(u64::from(handed_off), Ordering::Relaxed);
        self.deferred.fetch_add(u64::from(deferred), Ordering::Relaxed);
    }

    /// Wall-clock time since the start, plus the simulated time the drains skipped.
    fn now(&self) -> Instant {
        Instant::from_micros(self.start.elapsed().as_micros() as u64 + self.skipped_us.load(Ordering::Relaxed))
    }

    /// Every station's pending airtime within its high limit plus one frame.
    fn check_limits(&self, live: &[Live]) {
        let sched = self.radio.scheduler();
        for l in live {
            for ac in [Ac::Be, Ac::Vi] {
                let (Ok(pending), Ok(limits)) =
                    (sched.station_pending_us(l.sta, ac), sched.effective_limits(l.sta, ac))
                else {
                    continue; // removed meanwhile
                };
                assert!(
                    pending <= limits.high_us() + self.one_frame_us,
                    "{:?} on {ac:?}: pending {pending} us over {} + one frame",
                    l.sta,
                    limits.high_us()
                );
            }
        }
    }

    /// The core's invariant check on the live, shared scheduler (what a debugfs read
    /// runs while the radio transmits), from context `who`: it must never report a
    /// violation, whatever the other contexts are doing.
    fn check_live(&self, who: usize) {
        if let Err(e) = self.radio.scheduler().check_invariants() {
            panic!("{} context: live invariant check failed: {e:?}", CONTEXT_NAMES[who]);
        }
        self.live_checks[who].fetch_add(1, Ordering::Relaxed);
    }

    /// Moves the frames the status sink returned into `seen`, each exactly once.
    fn collect_done(&self) {
        let done = self.radio.hal().take_done();
        let mut seen = self.seen.lock().unwrap();
        for (p, _) in done {
            assert!(seen.insert(p.seq), "frame {} completed twice", p.seq);
        }
    }

    fn purge(&self, q: Q) {
        self.purged.fetch_add(q.len() as u64, Ordering::Relaxed);
    }

    fn add_station(&self, peer: u16, weight: u16) {
        let Ok(sta) = self.radio.add_station(peer, Weight::new(weight).unwrap()) else { return };
        let mut txqs = Vec::new();
        for tid in [0u8, 5] {
            let shared = Arc::new(Shared::default());
            match self.radio.add_txq(Some(sta), Tid::new(tid).unwrap(), Q(shared.clone())) {
                Ok(id) => {
                    self.all_txqs.lock().unwrap().push((id, shared.clone(), Arc::new(AtomicU64::new(0))));
                    txqs.push((id, shared));
                }
                Err((e, q)) => panic!("txq refused: {e:?} (queue back: {})", q.is_some()),
            }
        }
        self.live.lock().unwrap().push(Live { sta, txqs });
    }

    fn remove_station(&self, i: usize) {
        let l = {
            let mut live = self.live.lock().unwrap();
            if live.is_empty() {
                return;
            }
            let at = i % live.len();
            live.remove(at)
        };
        self.radio.remove_station(l.sta, |q| self.purge(q)).expect("remove");
    }

    /// One frame for `txq`; counts where it went.
    fn send(&self, txq: TxqId, accepted: &AtomicU64) {
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        match self.radio.enqueue(txq, Pkt { seq, txq, len: 1500 }, self.now()) {
            Ok(()) => {
                accepted.fetch_add(1, Ordering::Relaxed);
                self.entered.fetch_add(1, Ordering::Relaxed);
            }
            // Removed before the call: the frame was never taken.
            Err(EnqueueError::UnknownTxq(_)) => {}
            Err(EnqueueError::Removed(back)) => {
                self.entered.fetch_add(1, Ordering::Relaxed);
                self.handed_back.fetch_add(back.count() as u64, Ordering::Relaxed);
            }
            Err(e) => panic!("enqueue: {e}"),
        }
    }

    /// Frames in the live txqs: their FIFOs and their intakes.
    fn queued(&self) -> u64 {
        let mut queued = 0u64;
        for (id, shared, accepted) in self.all_txqs.lock().unwrap().iter() {
            // A removed txq's frames were purged or handed to the status sink.
            if self.radio.scheduler().txq_info(*id).is_err() {
                continue;
            }
            let fifo = shared.fifo.lock().unwrap().len() as u64;
            queued += fifo + accepted.load(Ordering::Relaxed) - shared.pulled.load(Ordering::Relaxed);
        }
        queued
    }

    /// The live txqs that hold frames: where a lost wake leaves them.
    fn txqs_with_frames(&self) -> Vec<TxqId> {
        let all = self.all_txqs.lock().unwrap();
        all.iter()
            .filter(|(id, shared, accepted)| {
                self.radio.scheduler().txq_info(*id).is_ok()
                    && (!shared.fifo.lock().unwrap().is_empty()
                        || accepted.load(Ordering::Relaxed) > shared.pulled.load(Ordering::Relaxed))
            })
            .map(|t| t.0)
            .collect()
    }

    /// Frames that are not in a txq: retry slots, the hardware, returned in any way.
    fn outside_txqs(&self) -> u64 {
        u64::from(self.radio.held_frames())
            + u64::from(self.radio.outstanding_msdus())
            + self.seen.lock().unwrap().len() as u64
            + self.purged.load(Ordering::Relaxed)
            + self.handed_back.load(Ordering::Relaxed)
    }

    /// Every frame that entered is in exactly one place (the radio at rest).
    fn accounted(&self) -> (u64, u64) {
        (self.entered.load(Ordering::Relaxed), self.queued() + self.outside_txqs())
    }
}

/// Runs the wake, completion and control contexts for `ms` milliseconds.
fn phase(world: &Arc<World>, seed: u64, ms: u64, backlog_cap: u64) {
    let checks_before: Vec<u64> = world.live_checks.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let wake = {
        let (w, stop) = (world.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut rng = Rng(seed | 1);
            let mut cpu = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let live = w.live.lock().unwrap().clone();
                for l in &live {
                    for (txq, _) in &l.txqs {
                        let accepted = {
                            let all = w.all_txqs.lock().unwrap();
                            all.iter().find(|t| t.0 == *txq).map(|t| t.2.clone())
                        };
                        let Some(accepted) = accepted else { continue };
                        // A paced sender: a backlog of at most about `backlog_cap` frames
                        // per txq (100: txqs stay listed; 2: they drain between wakes, so
                        // that wakes list them, and a phase's last wake of a txq is often
                        // all that lists its frames).
                        let shared = l.txqs.iter().find(|t| t.0 == *txq).map(|t| t.1.clone());
                        let backlog = shared.map_or(0, |s| {
                            let fifo = s.fifo.lock().unwrap().len() as u64;
                            fifo + accepted.load(Ordering::Relaxed).saturating_sub(s.pulled.load(Ordering::Relaxed))
                        });
                        let sent = if backlog < backlog_cap { rng.below(4) } else { 0 };
                        for _ in 0..sent {
                            w.send(*txq, &accepted);
                        }
                        // Woken only after an enqueue: a txq that keeps frames must stay
                        // listed by itself, or the drain at the end finds them.
                        if sent > 0 {
                            cpu = (cpu + 1) % 6; // rings 0, 1, 2, 0, ...: shared with the completion path
                            if let Ok(r) = w.radio.wake_tx_queue(*txq, cpu, w.now()) {
                                w.count_gate(r.rounds == 0, r.deferred);
                            }
                            w.check_limits(&live);
                        }
                    }
                }
                // The requests a runner left deferred (gated, or a concurrent round's
                // follow-ups out of their bound), as a rescheduled wake work item would
                // run them.
                w.radio.run_waiting_rounds(cpu, w.now());
                w.check_live(WAKE);
                std::thread::yield_now();
            }
        })
    };
    let completion = {
        let (w, stop) = (world.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut rng = Rng(seed.rotate_left(17) | 1);
            let mut cpu = 0u32;
            let hal = w.radio.hal();
            let mut held_for = 0u32;
            while !stop.load(Ordering::Relaxed) {
                // The firmware: faults, statuses, rings held full for a while.
                let ring = RingId::for_cpu(rng.below(3) as u32);
                match rng.below(10) {
                    0 => hal.fail_enqueues(ring, [RingErrorKind::OutOfMemory]),
                    1 => hal.fail_enqueues(ring, [RingErrorKind::Full, RingErrorKind::OutOfMemory]),
                    2 => hal.script_statuses([TxStatus::ALL[rng.below(6) as usize]; 3]),
                    3 if held_for == 0 => {
                        hal.hold_rings(true);
                        held_for = 20;
                    }
                    _ => {}
                }
                if held_for > 0 {
                    held_for -= 1;
                    if held_for == 0 {
                        hal.hold_rings(false);
                    }
                }
                let now = w.now();
                hal.advance(now);
                // The NAPI poll, then airtime reports.
                cpu = (cpu + 1) % 6;
                let pass = w.radio.poll_tx_completions(1 + rng.below(32) as u32, cpu, now);
                assert!(pass.work_done <= 32);
                w.count_gate(false, !pass.deferred.is_empty());
                if !pass.deferred.is_empty() {
                    // A NAPI poll that left rounds deferred is polled again: its rounds.
                    w.radio.run_waiting_rounds(cpu, now);
                }
                w.radio.poll_airtime_reports(16, now);
                w.collect_done();
                w.check_live(COMPLETION);
                std::thread::yield_now();
            }
            hal.hold_rings(false);
        })
    };
    // A debugfs reader: the live check back to back, on the scheduler the others use.
    let observer = {
        let (w, stop) = (world.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                w.check_live(OBSERVER);
                std::thread::yield_now();
            }
        })
    };
    // The control context: station churn and weight changes, with frames in flight.
    let mut rng = Rng(seed.rotate_left(33) | 1);
    let deadline = std::time::Instant::now() + Duration::from_millis(ms);
    let mut peer = 1000 + (seed as u16 % 1000);
    while std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
        match rng.below(4) {
            0 => world.remove_station(rng.below(64) as usize),
            1 => {
                peer = peer.wrapping_add(1);
                world.add_station(peer, 64 + rng.below(1024) as u16);
            }
            _ => {
                let live = world.live.lock().unwrap().clone();
                if let Some(l) = live.get(rng.below(live.len() as u64) as usize) {
                    let _ = world.radio.set_weight(l.sta, Weight::new(1 + rng.below(2048) as u16).unwrap());
                }
            }
        }
        let live = world.live.lock().unwrap().clone();
        world.check_limits(&live);
        world.check_live(CONTROL);
    }
    stop.store(true, Ordering::Relaxed);
    wake.join().expect("wake thread");
    completion.join().expect("completion thread");
    observer.join().expect("observer thread");
    // Every context ran the live check during the phase, the observer many times.
    for (who, before) in checks_before.iter().enumerate() {
        let ran = world.live_checks[who].load(Ordering::Relaxed) - before;
        let least = if who == OBSERVER { 10 } else { 1 };
        assert!(ran >= least, "{} context ran {ran} live invariant checks", CONTEXT_NAMES[who]);
    }
    // Gated: requests the last runners deferred wait for a context to ask again; with
    // the threads stopped, this one does, until none waits.
    for _ in 0..64 {
        if world.radio.rounds_waiting().is_empty() {
            break;
        }
        world.radio.run_waiting_rounds(0, world.now());
    }
    assert!(world.radio.rounds_waiting().is_empty(), "deferred rounds kept waiting with one context asking");
    // A txq removed while a round served it comes back now.
    world.radio.reap_removed(|q| world.purge(q));
    world.collect_done();
}

/// After a phase (threads joined): the firmware completes everything, and rounds deliver
/// what is queued. No txq is woken here: one with frames that its last wake failed to
/// list stays unserved, and the drain never ends. Run after every phase, not only the
/// last: a later phase's wakes would list such a txq again and hide the lost wake.
fn drain_without_wakes(w: &World, phase: usize, saturated: bool) {
    let hal = w.radio.hal();
    let mut drained = false;
    // Simulated time from here on: each step completes what the firmware holds.
    let mut t = w.now();
    let left = w.queued() + u64::from(w.radio.held_frames());
    // A trickling phase may end with every txq empty.
    assert!(
        left > 0 || !saturated,
        "phase {phase}: frames were still queued when the senders stopped: the drain has work"
    );
    let every_ac: AcSet = Ac::ALL.into_iter().collect();
    for _ in 0..20_000 {
        if w.queued() == 0
            && w.radio.held_frames() == 0
            && w.radio.outstanding_msdus() == 0
            && hal.completions_waiting() == 0
        {
            drained = true;
            break;
        }
        t = t.add_micros(1000);
        let now = t;
        hal.advance(now);
        t = t.add_micros(1000);
        hal.advance(t);
        w.radio.poll_tx_completions(64, 0, now);
        w.collect_done();
        // A round on every AC whatever the pass reaped (a timer's rounds): it serves
        // only the txqs the scheduler has listed.
        w.radio.run_rounds(every_ac, 1, now);
    }
    assert!(
        drained,
        "phase {phase}: rounds alone deliver the {left} frames still queued (no wake lost): queued {} in txqs {:?}, held {}, \
         outstanding {}, completions {}, in flight {}, rings {:?}, stats {:?}, pending {}",
        w.queued(),
        w.txqs_with_frames(),
        w.radio.held_frames(),
        w.radio.outstanding_msdus(),
        hal.completions_waiting(),
        hal.in_flight(),
        RingId::ALL.map(|r| hal.ring_len(r)),
        w.radio.dp_stats(),
        w.radio.scheduler().total_pending_us()
    );
    // The next phase's clock goes on from where the drain's simulated time got to.
    w.skipped_us.fetch_add(t.micros().saturating_sub(w.now().micros()), Ordering::Relaxed);
}

#[test]
fn wake_and_completion_paths_run_at_once_and_lose_nothing() {
    wake_and_completion_lose_nothing(Rounds::Concurrent);
}

/// The same with the rounds gated: a small budget makes runners defer, so the hand-off,
/// the deferral and the waiting rounds all run.
#[test]
fn gated_rounds_lose_nothing_either() {
    wake_and_completion_lose_nothing(Rounds::Gated { max_rounds: NonZeroU32::new(2).unwrap() });
}

fn wake_and_completion_lose_nothing(rounds: Rounds) {
    let mut sim = SimConfig::default();
    sim.tcl_ring_size = 24;
    sim.msdu_capacity = 40;
    sim.completion_delay_us = 300;
    sim.fw_take_per_advance = 8;
    let mut config = Config::default();
    // Weights leave the limits alone, so the bound below is the configured one.
    config.tx_no_pushback = false;
    config.rounds = rounds;
    let radio: Radio = Ath11k::new(SimHal::new(sim), config).expect("radio");
    let one_frame_us = radio.config().sched.unknown_rate_charge_us;
    let mut world = Arc::new(World {
        radio,
        start: std::time::Instant::now(),
        skipped_us: AtomicU64::new(0),
        live: Mutex::new(Vec::new()),
        all_txqs: Mutex::new(Vec::new()),
        next_seq: AtomicU64::new(0),
        entered: AtomicU64::new(0),
        handed_back: AtomicU64::new(0),
        purged: AtomicU64::new(0),
        seen: Mutex::new(HashSet::new()),
        one_frame_us,
        live_checks: Default::default(),
        handed_off: AtomicU64::new(0),
        deferred: AtomicU64::new(0),
    });
    for peer in 0..6u16 {
        world.add_station(peer, 256);
    }

    for (i, seed) in [0x9e37_79b9_7f4a_7c15u64, 0x2545_f491_4f6c_dd1d, 0xdead_beef_cafe_f00d, 7].into_iter().enumerate()
    {
        // Saturating and trickling phases in turn.
        let saturated = i % 2 == 0;
        phase(&world, seed, 150, if saturated { 100 } else { 2 });
        // At rest: the core's checker, and every frame in one place.
        let (entered, places) = world.accounted();
        assert_eq!(entered, places, "phase {i}: frames entered vs. accounted for");
        let w = Arc::get_mut(&mut world).expect("threads joined");
        w.radio.check_invariants().unwrap_or_else(|e| panic!("phase {i}: {e:?}"));
        let s = world.radio.dp_stats();
        assert_eq!((s.release_errors, s.msdu_table_errors), (0, 0), "phase {i}");
        drain_without_wakes(&world, i, saturated);
    }
    let s = world.radio.dp_stats();
    assert!(s.out_of_memory.iter().sum::<u64>() > 0, "-ENOMEM was injected: {s:?}");
    assert!(s.held_for_retry > 0, "refused frames were kept: {s:?}");
    assert!(world.entered.load(Ordering::Relaxed) > 1000, "the threads ran");
    let (handed_off, deferred) = (world.handed_off.load(Ordering::Relaxed), world.deferred.load(Ordering::Relaxed));
    // Gated, how often the contexts meet depends on the machine (`gated_rounds.rs`
    // makes each case happen on cue). Concurrent rounds never hand off; they defer only
    // when a round's follow-up rounds ran out of their bound (another context kept
    // starting rounds while it held txqs, or the ring kept being freed after it read it
    // full), and the loops above run what they deferred, as the drain below checks.
    if rounds == Rounds::Concurrent {
        assert_eq!(handed_off, 0, "concurrent rounds never hand off (deferred {deferred})");
    }

    // The last phase's drain (in the loop above) left nothing: every station leaves
    // and the radio shuts down.
    let w = &world;
    let n = w.radio.shutdown(|q| w.purge(q));
    w.collect_done();
    assert_eq!(n, 0, "nothing was left to free after the drain");
    let (entered, places) = w.accounted();
    assert_eq!(entered, places, "every frame enqueued was completed, freed or handed back");
    let done = w.seen.lock().unwrap().len() as u64;
    assert_eq!(
        entered,
        done + w.purged.load(Ordering::Relaxed) + w.handed_back.load(Ordering::Relaxed),
        "nothing is left anywhere"
    );
    assert_eq!(w.radio.scheduler().total_pending_us(), 0);
    for ac in Ac::ALL {
        assert_eq!(w.radio.scheduler().ac_pending_us(ac), 0, "{ac:?}");
    }
    assert_eq!(w.radio.held_frames(), 0);
    assert_eq!(w.radio.outstanding_msdus(), 0);
    let s = w.radio.dp_stats();
    assert_eq!((s.release_errors, s.msdu_table_errors, s.unknown_msdu), (0, 0, 0), "{s:?}");
    assert_eq!(w.radio.scheduler().underflows(), 0);
    println!(
        "{rounds:?}: entered {entered}, completed or freed {done}, purged {}, handed back by enqueue {}, rounds \
         handed off {handed_off}, deferred {deferred}; {s:?}",
        w.purged.load(Ordering::Relaxed),
        w.handed_back.load(Ordering::Relaxed)
    );
    let w = Arc::get_mut(&mut world).expect("one owner");
    w.radio.check_invariants().expect("invariants after shutdown");
}

/// Control operations take no lock either: two threads adding the same peer ids, the
/// same TIDs and removing the same stations at once never both succeed.
#[test]
fn concurrent_control_operations_claim_each_peer_and_tid_once() {
    let mut config = Config::default();
    config.sched.max_stations = 64;
    let radio: Arc<Radio> = Arc::new(Ath11k::new(SimHal::new(SimConfig::default()), config).expect("radio"));
    for round in 0..20u16 {
        let peers: Vec<u16> = (0..32).map(|p| round * 100 + p).collect();
        let run = |f: &(dyn Fn(&Radio, usize) -> bool + Sync)| -> Vec<u32> {
            let wins: Vec<AtomicU64> = (0..peers.len()).map(|_| AtomicU64::new(0)).collect();
            std::thread::scope(|s| {
                for _ in 0..2 {
                    s.spawn(|| {
                        for (i, win) in wins.iter().enumerate() {
                            if f(&radio, i) {
                                win.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    });
                }
            });
            wins.iter().map(|w| w.load(Ordering::Relaxed) as u32).collect()
        };
        let added = run(&|r, i| r.add_station(peers[i], Weight::DEFAULT).is_ok());
        assert!(added.iter().all(|n| *n == 1), "each peer id added once: {added:?}");
        let stas: Vec<StationId> = peers.iter().map(|p| radio.station_by_peer(*p).expect("added")).collect();
        let txqs = run(&|r, i| r.add_txq(Some(stas[i]), Tid::BE, Q::default()).is_ok());
        assert!(txqs.iter().all(|n| *n == 1), "each TID added once: {txqs:?}");
        let removed = run(&|r, i| r.remove_station(stas[i], drop).is_ok());
        assert!(removed.iter().all(|n| *n == 1), "each station removed once: {removed:?}");
        assert!(peers.iter().all(|p| radio.station_by_peer(*p).is_none()));
    }
    let mut radio = Arc::try_unwrap(radio).expect("one owner");
    radio.check_invariants().expect("invariants");
}
