//! One context at a time runs an AC's rounds; the others leave it a note.
//!
//! Rounds may run at once from several contexts ([`TxqTable::run_round`] is `&self`),
//! and no context ever waits for another to do so. But two rounds on one AC at once
//! fight over the same lines (the AC's list, the txqs both meet, the ring), and on the
//! end-to-end benchmark they sent fewer frames per second than one context running
//! the rounds of both. mac80211 goes further and forbids it: the driver must not run
//! two scheduling rounds on one AC at once (`ieee80211_txq_schedule_start`), so ath10k
//! takes a per-AC lock around each round, the generic `ieee80211_handle_wake_tx_queue`
//! a radio-wide one, and mt76 runs every round from one tx worker.
//!
//! A [`RoundGate`] gives the worker's behaviour without the worker and without a lock
//! anyone waits on: a context that wants a round on an AC either becomes the AC's
//! runner, or, when another context is running rounds there, leaves a note in one
//! atomic operation and returns at once ([`GateOutcome::HandedOff`]). The runner runs
//! one more round for every note it finds before it leaves, so what the note's context
//! enqueued and woke before it asked is served by a round that starts after the note:
//! no wake is lost. Like NAPI's "missed" bit, a burst of notes during one round costs
//! one more round, not one each.
//!
//! What it gives up: while the runner is preempted in a round, the rounds the others
//! asked for wait with it (their enqueues and completions do not). A driver whose round
//! contexts can be preempted for long (user space, PREEMPT_RT threads of different
//! priorities) and that cannot accept that should run rounds concurrently instead: the
//! scheduler stays correct either way. A runner also keeps running while notes keep
//! arriving; each round serves what was queued, so it stops once the others stop
//! asking, as a NAPI poll stops when its queue is empty.
//!
//! [`TxqTable::run_round`]: crate::TxqTable::run_round

use crate::Ac;
use crate::cache_line::CacheLines;
use crate::sync::{AtomicU32, Ordering};

/// A context is running rounds on the AC.
const RUNNING: u32 = 1;
/// Another context asked for a round since the runner last looked.
const AGAIN: u32 = 2;

/// What [`RoundGate::run`] did with the round it was asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use]
pub enum GateOutcome {
    /// This context was the AC's runner: it ran the round `rounds` times, once for
    /// itself and once more for each time other contexts asked meanwhile.
    Ran {
        /// Rounds run (at least one).
        rounds: u32,
    },
    /// Another context was running rounds on the AC; it runs one more, starting after
    /// this call, before it stops. Nothing ran here.
    HandedOff,
}

/// Per AC, which context runs rounds, and whether another asked for one meanwhile (see
/// the [module docs](self)). One per radio, shared by every context that runs rounds.
#[derive(Debug)]
pub struct RoundGate {
    /// Per AC: `RUNNING` and `AGAIN`, each AC on lines of its own (the contexts of one
    /// AC write its word on every round they ask for).
    acs: [CacheLines<AtomicU32>; 4],
}

impl Default for RoundGate {
    fn default() -> Self {
        RoundGate::new()
    }
}

impl RoundGate {
    /// A gate with no round running on any AC.
    pub fn new() -> RoundGate {
        RoundGate { acs: core::array::from_fn(|_| CacheLines(AtomicU32::new(0))) }
    }

    /// Runs `round` on `ac` here, or hands it to the context already running rounds
    /// there. `round` runs in one context at a time per AC; it runs here until no other
    /// context has asked since it last started, so each request is served by a run that
    /// starts after it was made.
    ///
    /// `round` should run one round of the AC ([`TxqTable::run_round`]) and keep what
    /// the caller wants of its report; it is called again for other contexts' requests,
    /// so it must not assume it runs once. If it panics, the gate is left open for the
    /// next request (the requests made during that round wait for it).
    ///
    /// [`TxqTable::run_round`]: crate::TxqTable::run_round
    pub fn run(&self, ac: Ac, mut round: impl FnMut()) -> GateOutcome {
        let word = &self.acs[ac.index()].0;
        // AcqRel: the Release half orders this context's enqueues and wakes before the
        // note the runner reads (Acquire, below); the Acquire half, when this context
        // becomes the runner, sees the last runner's rounds.
        let ordering = if cfg!(airtime_weakened = "gate_relaxed") { Ordering::Relaxed } else { Ordering::AcqRel };
        if word.fetch_or(RUNNING | AGAIN, ordering) & RUNNING != 0 {
            return GateOutcome::HandedOff;
        }
        // This context is the runner. If `round` unwinds, open the gate on the way out:
        // later requests then run their own rounds (rather than hand them to nobody).
        let open_on_unwind = OpenOnDrop(word);
        let mut rounds = 0u32;
        loop {
            if cfg!(airtime_weakened = "gate_clear_after") {
                // Weakened variant, only to prove the loom model catches it: the notes
                // cleared after the round, so one left during it is lost.
                round();
                word.fetch_and(!AGAIN, Ordering::Acquire);
            } else {
                // Take the notes left so far before the round (Acquire: it sees what
                // their contexts enqueued and woke); a note left during the round makes
                // the exit below fail, and the round runs again.
                let acquire =
                    if cfg!(airtime_weakened = "gate_relaxed") { Ordering::Relaxed } else { Ordering::Acquire };
                word.fetch_and(!AGAIN, acquire);
                round();
            }
            rounds = rounds.saturating_add(1);
            if cfg!(airtime_weakened = "gate_exit_store") {
                // Weakened variant: leaving with a plain store drops a note left after
                // the last round started.
                word.store(0, Ordering::Release);
                break;
            }
            // Release: the next runner (Acquire in its `fetch_or`) sees these rounds.
            if word.compare_exchange(RUNNING, 0, Ordering::Release, Ordering::Relaxed).is_ok() {
                break;
            }
        }
        core::mem::forget(open_on_unwind);
        GateOutcome::Ran { rounds }
    }

    /// Whether a context is running rounds on `ac` (a snapshot, for statistics).
    pub fn is_running(&self, ac: Ac) -> bool {
        self.acs[ac.index()].0.load(Ordering::Relaxed) & RUNNING != 0
    }
}

/// Opens an AC's gate when a runner's round unwinds.
struct OpenOnDrop<'a>(&'a AtomicU32);

impl Drop for OpenOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(0, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use core::cell::Cell;

    #[test]
    fn a_lone_context_runs_its_round_once() {
        let gate = RoundGate::new();
        let runs = Cell::new(0);
        assert_eq!(gate.run(Ac::Be, || runs.set(runs.get() + 1)), GateOutcome::Ran { rounds: 1 });
        assert_eq!(runs.get(), 1);
        assert!(!gate.is_running(Ac::Be));
        assert_eq!(gate.run(Ac::Be, || runs.set(runs.get() + 1)), GateOutcome::Ran { rounds: 1 });
        assert_eq!(runs.get(), 2);
    }

    #[test]
    fn a_request_during_a_round_is_handed_off_and_run_once_more() {
        let gate = RoundGate::new();
        let (runs, handed) = (Cell::new(0), Cell::new(None));
        let outcome = gate.run(Ac::Vi, || {
            runs.set(runs.get() + 1);
            if runs.get() == 1 {
                assert!(gate.is_running(Ac::Vi));
                // Two requests during the first round: one more round serves both.
                let first = gate.run(Ac::Vi, || panic!("a handed-off round must not run here"));
                let second = gate.run(Ac::Vi, || panic!("a handed-off round must not run here"));
                handed.set(Some((first, second)));
            }
        });
        assert_eq!(handed.get(), Some((GateOutcome::HandedOff, GateOutcome::HandedOff)));
        assert_eq!(outcome, GateOutcome::Ran { rounds: 2 });
        assert_eq!(runs.get(), 2);
        assert!(!gate.is_running(Ac::Vi));
    }

    #[test]
    fn the_acs_are_gated_apart() {
        let gate = RoundGate::new();
        let mut inner = None;
        let outer = gate.run(Ac::Be, || inner = Some(gate.run(Ac::Bk, || ())));
        assert_eq!((outer, inner), (GateOutcome::Ran { rounds: 1 }, Some(GateOutcome::Ran { rounds: 1 })));
    }

    #[test]
    fn a_round_that_panics_leaves_the_gate_open() {
        let gate = RoundGate::new();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = gate.run(Ac::Be, || panic!("the driver's round failed"));
        }));
        assert!(caught.is_err());
        assert!(!gate.is_running(Ac::Be));
        assert_eq!(gate.run(Ac::Be, || ()), GateOutcome::Ran { rounds: 1 });
    }

    /// Two threads asking for rounds as fast as they can: every request is served by a
    /// run that starts after it (checked in the run), and runs never overlap.
    #[test]
    fn two_threads_lose_no_request_and_never_overlap() {
        use std::sync::atomic::{AtomicBool, AtomicU64};
        const REQUESTS: u64 = if cfg!(miri) { 200 } else { 20_000 };
        let gate = RoundGate::new();
        let requested = [AtomicU64::new(0), AtomicU64::new(0)];
        let served = [AtomicU64::new(0), AtomicU64::new(0)];
        let inside = AtomicBool::new(false);
        std::thread::scope(|s| {
            for me in 0..2 {
                let (gate, requested, served, inside) = (&gate, &requested, &served, &inside);
                s.spawn(move || {
                    for n in 1..=REQUESTS {
                        requested[me].store(n, Ordering::Relaxed);
                        let mut saw_mine = false;
                        let outcome = gate.run(Ac::Be, || {
                            assert!(!inside.swap(true, Ordering::Relaxed), "two runners at once");
                            for who in 0..2 {
                                let r = requested[who].load(Ordering::Relaxed);
                                assert!(r >= served[who].load(Ordering::Relaxed), "a request went back");
                                served[who].store(r, Ordering::Relaxed);
                            }
                            saw_mine = served[me].load(Ordering::Relaxed) >= n;
                            inside.store(false, Ordering::Relaxed);
                        });
                        if let GateOutcome::Ran { .. } = outcome {
                            assert!(saw_mine, "the runner's last round missed its own request");
                        }
                    }
                });
            }
        });
        for (who, served) in served.iter().enumerate() {
            assert_eq!(served.load(Ordering::Relaxed), REQUESTS, "context {who}'s last request was lost");
        }
    }
}

/// Loom models of the gate. Run with `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3
/// cargo test --release -p airtime-sched --lib gate1_`; CI proves the weakened variants
/// `gate_clear_after`, `gate_exit_store` and `gate_relaxed` are caught.
#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use crate::sync::UnsafeCell;
    use loom::sync::Arc;
    use loom::thread;

    struct Shared {
        gate: RoundGate,
        /// Each context's request count, written by it alone before it asks (Relaxed:
        /// only the gate orders it before the round that reads it).
        requested: [AtomicU32; 2],
        /// What the rounds served of each context's requests: only rounds touch it, so
        /// loom reports any two rounds that overlap.
        served: UnsafeCell<[u32; 2]>,
    }

    /// Model gate1: two contexts each enqueue (a request count) and ask for a round,
    /// twice. At every run: runs never overlap (the cell), and what a run reads of a
    /// context's requests never goes back. When a context was the runner, its last
    /// run saw its own request; when it handed off, the runner's runs after the note
    /// serve it; after both return, every request was served by some run, without any
    /// drain after the fact.
    #[test]
    fn gate1_every_request_is_served_by_a_later_run() {
        loom::model(|| {
            let shared = Arc::new(Shared {
                gate: RoundGate::new(),
                requested: [AtomicU32::new(0), AtomicU32::new(0)],
                served: UnsafeCell::new([0, 0]),
            });
            let contexts: Vec<_> = (0..2)
                .map(|me| {
                    let s = shared.clone();
                    thread::spawn(move || {
                        for n in 1..=2u32 {
                            s.requested[me].store(n, Ordering::Relaxed);
                            let mut saw_mine = false;
                            let outcome = s.gate.run(Ac::Be, || {
                                s.served.with_mut(|served| {
                                    // SAFETY: loom's cell checks that no other run
                                    // touches it at the same time.
                                    let served = unsafe { &mut *served };
                                    for (served, requested) in served.iter_mut().zip(&s.requested) {
                                        let r = requested.load(Ordering::Relaxed);
                                        assert!(r >= *served, "a run saw an older request");
                                        *served = r;
                                    }
                                    saw_mine = served[me] >= n;
                                });
                            });
                            if let GateOutcome::Ran { rounds } = outcome {
                                assert!(rounds >= 1);
                                assert!(saw_mine, "the runner's last run missed its own request");
                            }
                        }
                    })
                })
                .collect();
            for c in contexts {
                c.join().unwrap();
            }
            shared.served.with(|served| {
                // SAFETY: both contexts have returned; nothing runs.
                let served = unsafe { &*served };
                assert_eq!(*served, [2, 2], "a request was never served");
            });
            assert!(!shared.gate.is_running(Ac::Be));
        });
    }
}
