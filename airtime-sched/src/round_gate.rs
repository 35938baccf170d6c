//! One context at a time runs an AC's rounds; the others leave it a note.
//!
//! Rounds may run at once from several contexts ([`TxqTable::run_round`] is `&self`),
//! and no context ever waits for another to do so. But two rounds on one AC at once
//! pass the same lines between the CPUs (the AC's list, the txqs both meet, the ring),
//! and on the end-to-end benchmark one context running the rounds of both sent more
//! frames per second than both running them at once. mac80211 forbids concurrent
//! rounds outright ("The driver must not call multiple TXQ scheduling rounds
//! concurrently", `ieee80211_txq_schedule_start`), so drivers serialize them: ath10k
//! with a per-AC lock in its `wake_tx_queue` op, the generic
//! `ieee80211_handle_wake_tx_queue` with a radio-wide lock, and mt76 by running every
//! round from one tx worker.
//!
//! A [`RoundGate`] gives the worker's behaviour without the worker and without a lock
//! anyone waits on: a context that wants a round on an AC either becomes the AC's
//! runner, or, when another context is running rounds there, leaves a note in one
//! atomic operation and returns at once ([`GateOutcome::HandedOff`]). The runner takes
//! the notes left so far before each round and runs one more round whenever a note
//! arrived after that, so what the note's context enqueued and woke before it asked is
//! served by a round that starts after the note: no wake is lost, unless the runner's
//! budget runs out and its caller ignores [`GateOutcome::Deferred`], or a round unwinds
//! (see [`RoundGate::run`]). Like NAPI's "missed" bit, a burst of notes during one round
//! costs one more round, not one each.
//!
//! What it gives up, and bounds:
//! * while the runner is preempted in a round, the rounds the others asked for wait
//!   with it (their enqueues and completions do not). A driver whose round contexts can
//!   be preempted for long (user space, PREEMPT_RT threads of different priorities) and
//!   cannot accept that should run rounds concurrently instead. Both ways keep every
//!   frame and txq (S1) and neither loses a round: gated, the runner runs one for each
//!   note; concurrent, the ready loops ([`TxqTable::run_round`],
//!   [`driver_loop::run_round`]) run one more round when another context started one
//!   while theirs had an entry off the list, and say when their bound left that undone
//!   ([`RoundReport::overlapped`], which a caller must act on as on
//!   [`GateOutcome::Deferred`]). A driver's own loop over `next_txq` run concurrently
//!   must ask [`Scheduler::round_started_since`](crate::Scheduler::round_started_since)
//!   itself (the crate docs give the recipe);
//! * a runner stays only while notes keep arriving, and never longer than the budget
//!   of rounds its caller gives: a context that must get back to its own work (a tx
//!   completion handler that alone drains the ring) is not held by others' wakes. With
//!   the budget spent and notes pending, the runner leaves them for the next caller and
//!   says so ([`GateOutcome::Deferred`]); its caller then runs again later, as a NAPI
//!   poll that used its budget is polled again.
//!
//! [`TxqTable::run_round`]: crate::TxqTable::run_round
//! [`driver_loop::run_round`]: crate::driver_loop::run_round
//! [`RoundReport::overlapped`]: crate::driver_loop::RoundReport::overlapped

use crate::cache_line::CacheLines;
use crate::sync::{AtomicU32, Ordering};
use crate::{Ac, PerAc};

/// A context is running rounds on the AC.
const RUNNING: u32 = 1;
/// Another context asked for a round since the runner last looked.
const AGAIN: u32 = 2;

/// What [`RoundGate::run`] did with the round it was asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use]
pub enum GateOutcome {
    /// This context was the AC's runner and left with no note pending: it ran the round
    /// `rounds` times, once for itself and once more for each round before whose end
    /// another context asked.
    Ran {
        /// Rounds run (at least one).
        rounds: u32,
    },
    /// Another context was running rounds on the AC: a round that starts after this
    /// call's note (it may start, or even end, before this call returns) serves what
    /// this context queued before it, run by that context or, if its budget runs out
    /// first ([`Deferred`](Self::Deferred)), by the next caller. "Will be served", not
    /// "has been": a path that must know its frames are out (a flush, a suspend) cannot
    /// rely on it.
    HandedOff,
    /// This context ran `rounds` rounds, its whole budget, and other contexts asked for
    /// more meanwhile. The gate is open again; the caller must make sure `run` is called
    /// on this AC again (schedule its own work again), or those requests wait for the
    /// next context that asks: any call then becomes the runner, and its first round
    /// serves them.
    Deferred {
        /// Rounds run (the budget).
        rounds: u32,
    },
}

/// Per AC, which context runs rounds, and whether another asked for one meanwhile (see
/// the [module docs](self)). One per radio, shared by every context that runs rounds.
#[derive(Debug)]
pub struct RoundGate {
    /// Per AC: `RUNNING` and `AGAIN`, each AC on lines of its own (the contexts of one
    /// AC write its word on every round they ask for).
    acs: PerAc<CacheLines<AtomicU32>>,
}

impl Default for RoundGate {
    fn default() -> Self {
        RoundGate::new()
    }
}

impl RoundGate {
    /// A gate with no round running on any AC.
    pub fn new() -> RoundGate {
        RoundGate { acs: PerAc::from_fn(|_| CacheLines(AtomicU32::new(0))) }
    }

    /// Runs `round` on `ac` here, or hands it to the context already running rounds
    /// there. `round` runs in one context at a time per AC; here it runs until a whole
    /// round passes with no other context asking, or `max_rounds` times in all, this
    /// context's own round included (at least once), so each request is served by a
    /// round that starts after it was made (or, on [`GateOutcome::Deferred`], by the
    /// next caller's).
    ///
    /// `round` should run one round of the AC ([`TxqTable::run_round`]) and keep what
    /// the caller wants of its report; it is called again for other contexts'
    /// requests, so it must not assume it runs once. If it panics, the gate is opened
    /// on the way out, and the requests that round was serving, and any made during
    /// it, are not served until some context calls `run` on the AC again; meanwhile
    /// [`is_waiting`](Self::is_waiting) shows them. `round`
    /// itself is dropped after the gate opens: state it owns must not be what the next
    /// runner's rounds touch.
    ///
    /// [`TxqTable::run_round`]: crate::TxqTable::run_round
    pub fn run(&self, ac: Ac, max_rounds: u32, mut round: impl FnMut()) -> GateOutcome {
        let word = &self.acs[ac].0;
        let budget = max_rounds.max(1);
        // Release: orders this context's enqueues and wakes before the note, for the
        // runner that acquires it (`fetch_and` below). A context that becomes the runner
        // acquires the last runner's rounds there too, from the same release sequence.
        let release = if weakened!("gate_relaxed") { Ordering::Relaxed } else { Ordering::Release };
        if word.fetch_or(RUNNING | AGAIN, release) & RUNNING != 0 {
            return GateOutcome::HandedOff;
        }
        // This context is the runner. If `round` unwinds, open the gate on the way out,
        // so that later requests run their own rounds rather than hand them to nobody.
        let open_on_unwind = OpenOnDrop(word);
        let mut rounds = 0u32;
        let outcome = loop {
            if weakened!("gate_clear_after") {
                // Weakened variant, only to prove the loom model catches it: the notes
                // cleared after the round, so one left during it is lost.
                round();
                word.fetch_and(!AGAIN, Ordering::Acquire);
            } else {
                // Take the notes left so far before the round (Acquire: it sees what
                // their contexts enqueued and woke); a note left during the round makes
                // the exit below fail, and the round runs again.
                let acquire = if weakened!("gate_relaxed") { Ordering::Relaxed } else { Ordering::Acquire };
                word.fetch_and(!AGAIN, acquire);
                round();
            }
            rounds = rounds.saturating_add(1);
            if weakened!("gate_exit_store") {
                // Weakened variant: leaving with a plain store drops a note left after
                // the last round started.
                word.store(0, Ordering::Release);
                break GateOutcome::Ran { rounds };
            }
            // Release: the next runner (Acquire in its `fetch_and`) sees these rounds.
            match word.compare_exchange(RUNNING, 0, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => break GateOutcome::Ran { rounds },
                // Only this runner clears RUNNING.
                Err(seen) => debug_assert!(seen & RUNNING != 0, "the gate opened under its runner"),
            }
            if rounds >= budget {
                // The budget is spent with notes pending: open the gate (the next
                // `fetch_or` finds RUNNING clear, becomes the runner, and its first round
                // serves them; the AGAIN left set changes nothing). A read-modify-write
                // with Release, as the exit above, so the next runner's Acquire sees
                // these rounds and every note before it. The weakened variant, only to prove the
                // loom model catches it, leaves without opening the gate, so every
                // later request is handed to nobody.
                if weakened!("gate_defer_clears_note") {
                    // Weakened variant, only to prove loom model gate4 catches it: the
                    // deferred notes cleared with RUNNING, so nothing shows them waiting.
                    word.fetch_and(!(RUNNING | AGAIN), Ordering::Release);
                } else if !weakened!("gate_defer_closed") {
                    word.fetch_and(!RUNNING, Ordering::Release);
                }
                break GateOutcome::Deferred { rounds };
            }
        };
        core::mem::forget(open_on_unwind);
        outcome
    }

    /// Whether a context is running rounds on `ac` (a snapshot, for statistics).
    pub fn is_running(&self, ac: Ac) -> bool {
        self.acs[ac].0.load(Ordering::Relaxed) & RUNNING != 0
    }

    /// Whether requests for rounds on `ac` wait with no context running them: the last
    /// runner left on its budget ([`GateOutcome::Deferred`]) or its round unwound, and
    /// nobody has called [`run`](Self::run) on the AC since. A snapshot of the gate itself, so a driver that
    /// cannot act on every `Deferred` where it is returned (a C caller told only the frames
    /// sent) can poll it, from a timer or at the end of a NAPI poll, and call `run` when
    /// it is true: that call's first round serves them. False while a runner is in a
    /// round (it serves them) and after any exit with nothing pending.
    pub fn is_waiting(&self, ac: Ac) -> bool {
        // Relaxed: a hint to call `run`, whose own read-modify-write orders what matters.
        self.acs[ac].0.load(Ordering::Relaxed) & (RUNNING | AGAIN) == AGAIN
    }
}

/// Opens an AC's gate when a runner's round unwinds.
struct OpenOnDrop<'a>(&'a AtomicU32);

impl Drop for OpenOnDrop<'_> {
    fn drop(&mut self) {
        // A read-modify-write, not a store, so it continues the word's release
        // sequence (Release: the next runner sees what the failed round did). Only the
        // runner clears RUNNING, so this never opens the gate under another runner. It
        // leaves AGAIN set: the requests that round was serving, and any made during
        // it, show as waiting (`is_waiting`) until a call serves them. The weakened
        // variant, only to prove the loom model catches it, leaves it closed.
        if !weakened!("gate_unwind_closed") {
            self.0.swap(AGAIN, Ordering::Release);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use core::cell::Cell;

    const NO_BUDGET: u32 = u32::MAX;

    #[test]
    fn a_lone_context_runs_its_round_once() {
        let gate = RoundGate::new();
        let runs = Cell::new(0);
        for budget in [0, 1, NO_BUDGET] {
            assert_eq!(gate.run(Ac::Be, budget, || runs.set(runs.get() + 1)), GateOutcome::Ran { rounds: 1 });
            assert!(!gate.is_running(Ac::Be));
        }
        assert_eq!(runs.get(), 3);
    }

    #[test]
    fn a_request_during_a_round_is_handed_off_and_run_once_more() {
        let gate = RoundGate::new();
        let (runs, handed) = (Cell::new(0), Cell::new(None));
        let outcome = gate.run(Ac::Vi, NO_BUDGET, || {
            runs.set(runs.get() + 1);
            if runs.get() == 1 {
                assert!(gate.is_running(Ac::Vi));
                // Two requests during the first round: one more round serves both.
                let first = gate.run(Ac::Vi, NO_BUDGET, || panic!("a handed-off round must not run here"));
                let second = gate.run(Ac::Vi, NO_BUDGET, || panic!("a handed-off round must not run here"));
                handed.set(Some((first, second)));
            }
        });
        assert_eq!(handed.get(), Some((GateOutcome::HandedOff, GateOutcome::HandedOff)));
        assert!(!gate.is_waiting(Ac::Vi), "handed-off requests were served by the runner");
        assert_eq!(outcome, GateOutcome::Ran { rounds: 2 });
        assert_eq!(runs.get(), 2);
        assert!(!gate.is_running(Ac::Vi));
    }

    /// A runner whose every round meets a new request leaves after its budget, the gate
    /// open and the last note kept: the next caller runs, and leaves with none pending.
    #[test]
    fn a_runner_kept_busy_leaves_after_its_budget() {
        let gate = RoundGate::new();
        let runs = Cell::new(0);
        let outcome = gate.run(Ac::Be, 3, || {
            runs.set(runs.get() + 1);
            assert_eq!(gate.run(Ac::Be, 3, || panic!("handed off")), GateOutcome::HandedOff);
        });
        assert_eq!((outcome, runs.get()), (GateOutcome::Deferred { rounds: 3 }, 3));
        assert!(!gate.is_running(Ac::Be));
        assert!(gate.is_waiting(Ac::Be), "a deferred request shows as waiting");
        assert_eq!(gate.run(Ac::Be, 3, || runs.set(runs.get() + 1)), GateOutcome::Ran { rounds: 1 });
        assert_eq!(runs.get(), 4);
        assert!(!gate.is_waiting(Ac::Be), "served, nothing waits");
    }

    #[test]
    fn the_acs_are_gated_apart() {
        let gate = RoundGate::new();
        let mut inner = None;
        let outer = gate.run(Ac::Be, NO_BUDGET, || inner = Some(gate.run(Ac::Bk, NO_BUDGET, || ())));
        assert_eq!((outer, inner), (GateOutcome::Ran { rounds: 1 }, Some(GateOutcome::Ran { rounds: 1 })));
    }

    #[test]
    fn a_round_that_panics_leaves_the_gate_open() {
        let gate = RoundGate::new();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = gate.run(Ac::Be, NO_BUDGET, || panic!("the driver's round failed"));
        }));
        assert!(caught.is_err());
        assert!(!gate.is_running(Ac::Be));
        assert!(gate.is_waiting(Ac::Be), "the failed round's request shows as waiting");
        assert_eq!(gate.run(Ac::Be, NO_BUDGET, || ()), GateOutcome::Ran { rounds: 1 });
        assert!(!gate.is_waiting(Ac::Be));
    }

    /// Two threads asking for rounds as fast as they can, with a small budget (a
    /// deferred caller asks again at once): rounds never overlap, a runner's last round
    /// saw its own request and every request the other thread handed off before, and
    /// at the end every request was served.
    #[test]
    fn two_threads_lose_no_request_and_never_overlap() {
        use std::sync::atomic::{AtomicBool, AtomicU64};
        const REQUESTS: u64 = if cfg!(miri) { 200 } else { 20_000 };
        let gate = RoundGate::new();
        let requested = [AtomicU64::new(0), AtomicU64::new(0)];
        let owed = [AtomicU64::new(0), AtomicU64::new(0)];
        let served = [AtomicU64::new(0), AtomicU64::new(0)];
        let inside = AtomicBool::new(false);
        std::thread::scope(|s| {
            for me in 0..2 {
                let (gate, requested, owed, served, inside) = (&gate, &requested, &owed, &served, &inside);
                s.spawn(move || {
                    for n in 1..=REQUESTS {
                        requested[me].store(n, Ordering::Relaxed);
                        let mut last = [0, 0];
                        let mut round = || {
                            assert!(!inside.swap(true, Ordering::Relaxed), "two runners at once");
                            for who in 0..2 {
                                let r = requested[who].load(Ordering::Relaxed);
                                assert!(r >= served[who].load(Ordering::Relaxed), "a request went back");
                                served[who].store(r, Ordering::Relaxed);
                                last[who] = r;
                            }
                            inside.store(false, Ordering::Relaxed);
                        };
                        loop {
                            match gate.run(Ac::Be, 2, &mut round) {
                                GateOutcome::Deferred { .. } => continue,
                                GateOutcome::HandedOff => owed[me].store(n, Ordering::Relaxed),
                                GateOutcome::Ran { .. } => {
                                    assert!(last[me] >= n, "the runner missed its own request");
                                    let other = owed[1 - me].load(Ordering::Relaxed);
                                    assert!(other <= last[1 - me], "a handed-off request was not served");
                                }
                            }
                            break;
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
/// tools/loom/cargo-loom test --release -p airtime-sched --lib gate`; CI proves the weakened variants
/// `gate_clear_after`, `gate_exit_store`, `gate_relaxed`, `gate_defer_closed` and
/// `gate_unwind_closed` are caught.
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
        /// Each context's last request it handed off, written after the hand-off.
        owed: [AtomicU32; 2],
        /// What the rounds served of each context's requests: only rounds touch it, so
        /// loom reports any two rounds that overlap.
        served: UnsafeCell<[u32; 2]>,
    }

    impl Shared {
        fn new() -> Arc<Shared> {
            Arc::new(Shared {
                gate: RoundGate::new(),
                requested: [AtomicU32::new(0), AtomicU32::new(0)],
                owed: [AtomicU32::new(0), AtomicU32::new(0)],
                served: UnsafeCell::new([0, 0]),
            })
        }

        /// One round: serves every request made so far, then unwinds on `fail`.
        /// Returns what the requests it served came to.
        fn round(&self, fail: bool) -> [u32; 2] {
            let seen = self.served.with_mut(|served| {
                // SAFETY: loom's cell checks that no other round touches it meanwhile.
                let served = unsafe { &mut *served };
                for (served, requested) in served.iter_mut().zip(&self.requested) {
                    let r = requested.load(Ordering::Relaxed);
                    assert!(r >= *served, "a round saw an older request");
                    *served = r;
                }
                *served
            });
            if fail {
                // Unwinds without the panic hook, so that a model's output names only the
                // checks that fail.
                std::panic::resume_unwind(alloc::boxed::Box::new("the round failed"));
            }
            seen
        }

        /// Context `me`'s `n`-th request with a budget of `budget` rounds (a deferred
        /// caller asks again at once, as it would reschedule itself); checks at once
        /// what must hold when the call returns.
        fn request(&self, me: usize, n: u32, budget: u32) {
            self.requested[me].store(n, Ordering::Relaxed);
            let mut last = [0, 0];
            loop {
                match self.gate.run(Ac::Be, budget, || last = self.round(false)) {
                    GateOutcome::Ran { rounds } => {
                        assert!(rounds >= 1 && rounds <= budget);
                        assert!(last[me] >= n, "the runner's last round missed its own request");
                        // The other context's hand-offs before this exit were served:
                        // its note saw RUNNING set, so it came before the exit, and the
                        // last round started after it.
                        let other = 1 - me;
                        let owed = self.owed[other].load(Ordering::Relaxed);
                        assert!(owed <= last[other], "a handed-off request was not served");
                        return;
                    }
                    GateOutcome::HandedOff => {
                        self.owed[me].store(n, Ordering::Relaxed);
                        return;
                    }
                    GateOutcome::Deferred { rounds } => assert_eq!(rounds, budget),
                }
            }
        }

        /// [`request`](Self::request) by a caller that does not ask again when its
        /// rounds are deferred (a C caller told only the frames sent): the request
        /// then waits for whoever polls [`RoundGate::is_waiting`].
        fn request_once(&self, me: usize, n: u32, budget: u32) {
            self.requested[me].store(n, Ordering::Relaxed);
            let mut last = [0, 0];
            match self.gate.run(Ac::Be, budget, || last = self.round(false)) {
                GateOutcome::Ran { .. } | GateOutcome::Deferred { .. } => {
                    assert!(last[me] >= n, "the runner's last round missed its own request")
                }
                GateOutcome::HandedOff => self.owed[me].store(n, Ordering::Relaxed),
            }
        }

        fn all_served(&self) -> bool {
            // SAFETY: every context has returned; no round runs.
            self.served.with(|served| unsafe { *served } == [2, 2])
        }

        fn check_all_served(&self) {
            self.served.with(|served| {
                // SAFETY: every context has returned; no round runs.
                let served = unsafe { &*served };
                assert_eq!(*served, [2, 2], "a request was never served");
            });
            assert!(!self.gate.is_running(Ac::Be), "the gate was left closed");
        }
    }

    /// Runs two contexts that each make two requests with `request` (context, number),
    /// and joins them.
    fn both_request(shared: &Arc<Shared>, request: impl Fn(&Shared, usize, u32) + Copy + Send + 'static) {
        let contexts: Vec<_> = (0..2)
            .map(|me| {
                let s = shared.clone();
                thread::spawn(move || {
                    for n in 1..=2 {
                        request(&s, me, n);
                    }
                })
            })
            .collect();
        for c in contexts {
            c.join().unwrap();
        }
    }

    fn two_contexts(budget: u32) {
        crate::loom_model::model(move || {
            let shared = Shared::new();
            both_request(&shared, move |s, me, n| s.request(me, n, budget));
            shared.check_all_served();
        });
    }

    /// Model gate1: two contexts each enqueue (a request count) and ask for a round,
    /// twice, with no budget. At every round: rounds never overlap (the cell), and what
    /// a round reads of a context's requests never goes back. When a call returns: a
    /// runner's last round saw its own request and every request the other context
    /// handed off before it; after both return, every request was served, without any
    /// drain after the fact.
    #[test]
    fn gate1_every_request_is_served_by_a_later_round() {
        two_contexts(u32::MAX);
    }

    /// Model gate2: the same with a budget of one round, so a runner that meets a note
    /// defers it (and asks again, as a rescheduled caller would), and of two rounds, so
    /// a runner runs one more round for a note and defers the next.
    #[test]
    fn gate2_a_deferred_note_is_served_by_the_next_caller() {
        two_contexts(1);
        two_contexts(2);
    }

    /// Model gate4: as gate2 with a budget of one round, but a caller whose rounds are
    /// deferred does not ask again. Once both contexts have returned, a request no round
    /// served shows as waiting ([`RoundGate::is_waiting`]), and one call by a poller that
    /// sees it serves it and leaves nothing waiting.
    #[test]
    fn gate4_a_deferred_request_shows_as_waiting_until_served() {
        crate::loom_model::model(|| {
            let shared = Shared::new();
            both_request(&shared, |s, me, n| s.request_once(me, n, 1));
            let waiting = shared.gate.is_waiting(Ac::Be);
            assert!(shared.all_served() || waiting, "a deferred request was left with nothing showing it");
            if waiting {
                let _ = shared.gate.run(Ac::Be, 1, || {
                    shared.round(false);
                });
            }
            shared.check_all_served();
            assert!(!shared.gate.is_waiting(Ac::Be), "nothing waits once all is served");
        });
    }

    /// Model gate3: context 0's first round panics after serving; the gate opens on the
    /// way out, rounds still never overlap, and every request made after the failed
    /// round is served.
    #[test]
    fn gate3_a_round_that_unwinds_opens_the_gate() {
        crate::loom_model::model(|| {
            let shared = Shared::new();
            let failing = {
                let s = shared.clone();
                thread::spawn(move || {
                    s.requested[0].store(1, Ordering::Relaxed);
                    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        let _ = s.gate.run(Ac::Be, u32::MAX, || {
                            s.round(true);
                        });
                    }));
                    if let Err(e) = failed {
                        // Only the round's own panic; loom's (a race, a causality
                        // violation) must reach the model.
                        if e.downcast_ref::<&str>() != Some(&"the round failed") {
                            std::panic::resume_unwind(e);
                        }
                    }
                    s.request(0, 2, u32::MAX);
                })
            };
            let other = {
                let s = shared.clone();
                thread::spawn(move || {
                    for n in 1..=2 {
                        s.request(1, n, u32::MAX);
                    }
                })
            };
            failing.join().unwrap();
            other.join().unwrap();
            shared.check_all_served();
        });
    }
}
