//! Loom models of the scheduler's concurrency, run on the real code: under
//! `--cfg loom` the crate's `sync` module maps every atomic to loom's, so these
//! explore the interleavings of the shipped data path.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 tools/loom/cargo-loom test --release -p airtime-sched --test loom_models`.
//!
//! Each model has two or three threads and the smallest state that still shows its
//! race, and checks what must hold at the step where it must hold (a hand-out, a
//! charge, a check), not only after a final drain:
//!
//! | model | race | checked |
//! |---|---|---|
//! | 1 | rounds of two contexts, txqs returned empty | single server, no backlog lost, round numbers |
//! | 2 | charge, release and check on three threads | pending conserved, L2 overshoot bound |
//! | 3 | a wake during service | the wake is not lost |
//! | 4 | registered airtime and a top-up | no lost update of the deficit |
//! | 5 | a limit change (station and AC default) and a reader | limits seen whole |
//! | 6, 7 | station removal and reuse, releases (one, batch) | no charge on the next occupant |
//! | 8 | removal and reuse on two threads, a late charge | reuse only of a closed, empty slot |
//! | 9 | charges through a held txq, releases | the AC counter once the txq is back (A1) |
//! | 10 | rounds of two contexts, txqs returned backlogged | each round ends (S4), single server, none lost |
//! | 11 | station removed while its txq is served | charges after removal refused, A1, no revival |
//! | 12 | weight and limits changed during a walk of laps | deficits walked laps leave, changes seen |
//! | 13 | default limits changed while a station is added | no stale default |
//! | 14 | the AC closed at the PHY limit while another context serves | L3 for every round |
//! | 15 | laps walked while airtime is registered | the sequential walk's deficits, no starvation |
//! | 16 | laps walked while a charge completes | the served station and each deficit within the walks' (the lap skip's documented difference) |
//! | 17 | wake on BE, completion on VI, cross-AC threshold | decisions before/after the release, own charges |
//! | 18 | `may_transmit` and `next_txq` for one txq | single server, no wake lost |
//! | 19 | a txq slot reused while the old entry is queued | no stale hand-out, single server, none lost |
//! | 20 | a `Serving` dropped while its txq is woken | still scheduled, its charges counted once |
//! | 21 | `may_transmit` and a walk top up one debt | one top-up per debt |
//! | 22 | a txq slot reused between a round's checks and its take | the newcomer is checked before it is served |
//! | 23 | a txq slot reused while `may_transmit` reads it | no top-up of the newcomer's station |
//! | 24 | a txq slot reused while a round reads it, the newcomer not woken | no top-up of the newcomer's station |
//! | 25 | a txq slot reused by another AC's txq, served there, while a round reads it | the round ends only on its own stamps |
//! | 27 | a txq slot reused and the newcomer woken while a round tops up what it read | the newcomer is looked at again, none lost |
//! | 28 | a txq slot reused and the newcomer woken while a round reads the stamp it left on the old txq | the newcomer is looked at again, none lost |
//! | 29 | two completions put the only station back in debt between a walk's laps | the walk gives up after `MAX_LAPS` (some execution must), keeping the txq listed |
//!
//! A model that cannot fail proves nothing: each weakened variant below
//! (`AIRTIME_WEAKENED=NAME` in the environment of a loom test run switches on a
//! deliberately broken line of the crate: its `weakened!` sites, compiled into loom
//! builds only) must make the model beside it fail with a panic, not a loom limit, and
//! CI (`.ci/run`) runs each and requires it:
//! `topup` (model 4), `charge_order` (6), `wake_serving` (3), `release_store` (7),
//! `drained_ignores_open` (8), `ac_clamp` (9), `limits_split` (5),
//! `round_end_this_only` (10), `flush_live_only` (11), `threshold_own_ac` (17),
//! `drop_no_flush` and `drop_unscheduled` (20), `weight_reread` (12), `l3_round_only`
//! (14), `boost_rest_skipped` (15), `may_transmit_serving` (18), `reuse_no_orphan` (19),
//! `station_limits_split` (5), `topup_stale_read` (21), `take_any_generation` (22),
//! `may_transmit_no_recheck` (23), `topup_any_generation` (24),
//! `round_stamp_any_generation` (25), `station_relaxed` (24 and 25: the slot's
//! occupant fields read and written Relaxed), `changed_skips_look` (27 and 28),
//! `stamp_changed_skips_look` (28). Model 26 is
//! `adaptive4` in `loom_adaptive.rs`.
//! `round_load_store` (1: the round number taken in two steps), `release_store` (2),
//! `default_no_follow` (13), `boost_rest_skipped` (16), `max_laps_unlisted` (29).
//!
//! Two limits of loom shape the oracles. A loom SeqCst load may return a flag's initial
//! value after another thread's SeqCst store, and loom leaves a plain store that races a
//! read-modify-write of the same word unordered with it, so a later read may return the
//! RMW's value (C11 forbids both). So the models' own flags are read and written only
//! with RMWs, and model 13 leaves out the one race of that shape it would otherwise
//! assert on (its finding holds under sequential consistency).
#![cfg(loom)]

mod loom_common;

use airtime_sched::{Ac, AqlLimits, Charge, ChargeError, Scheduler, Serving, StationId, Tid, TxqId, TxqReturn, Weight};
use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;
use loom_common::{NOW, small};

fn unwrap_arc(sched: Arc<Scheduler>) -> Scheduler {
    Arc::try_unwrap(sched).unwrap_or_else(|_| panic!("all threads joined"))
}

/// One context's round: serve every txq handed out, draining its frame counter, with a
/// witness that no other context serves the same txq at the same time.
fn serve_round(sched: &Scheduler, frames: &[AtomicU32; 2], in_service: &[AtomicU32; 2], served: &AtomicU32) {
    let round = sched.start_round(Ac::Be);
    if !round.is_open() {
        return;
    }
    while let Some(serving) = sched.next_txq(round, NOW) {
        let i = serving.txq().index();
        assert_eq!(in_service[i].fetch_add(1, Ordering::SeqCst), 0, "S3: txq {i} has two servers");
        let n = frames[i].swap(0, Ordering::SeqCst);
        served.fetch_add(n, Ordering::SeqCst);
        in_service[i].fetch_sub(1, Ordering::SeqCst);
        let outcome = if frames[i].load(Ordering::SeqCst) == 0 { TxqReturn::Empty } else { TxqReturn::Backlogged };
        sched.return_txq(serving, outcome, NOW);
    }
}

/// After every thread: whatever frames are left must be reachable — their txq is
/// queued, so a final round serves them (S1: no lost backlog).
fn drain_and_check(sched: Scheduler, frames: &[AtomicU32; 2], served: &AtomicU32, total: u32) {
    let mut sched = sched;
    sched.check_invariants_quiescent().expect("invariants hold when quiescent");
    let in_service = [AtomicU32::new(0), AtomicU32::new(0)];
    for _ in 0..4 {
        serve_round(&sched, frames, &in_service, served);
    }
    assert_eq!(served.load(Ordering::SeqCst), total, "S1: every enqueued frame was served exactly once");
    sched.check_invariants_quiescent().expect("invariants hold after the drain");
}

/// Model 1: the wake context and the completion context run rounds for the same AC at
/// once. No txq has two servers; no txq with frames is lost; round numbers only grow.
#[test]
fn model1_concurrent_rounds_serve_each_txq_once_and_lose_none() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 2));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let a = sched.add_txq(Some(sta), Tid::BE).unwrap();
        let b = sched.add_txq(Some(sta), Tid::new(3).unwrap()).unwrap();
        let frames = Arc::new([AtomicU32::new(1), AtomicU32::new(1)]);
        let in_service = Arc::new([AtomicU32::new(0), AtomicU32::new(0)]);
        let served = Arc::new(AtomicU32::new(0));
        sched.wake_txq(a, NOW).unwrap();
        sched.wake_txq(b, NOW).unwrap();
        let t: Vec<_> = (0..2)
            .map(|_| {
                let (sched, frames, in_service, served) =
                    (sched.clone(), frames.clone(), in_service.clone(), served.clone());
                thread::spawn(move || serve_round(&sched, &frames, &in_service, &served))
            })
            .collect();
        for t in t {
            t.join().unwrap();
        }
        let (open, number) = sched.round(Ac::Be);
        assert!(open && number == 2, "two opened rounds got two distinct numbers (S5)");
        drain_and_check(unwrap_arc(sched), &frames, &served, 2);
    });
}

/// Model 3: a wake that arrives while its txq is being served is not lost: the server
/// saw the queue empty, but the txq is queued again on return.
#[test]
fn model3_a_wake_during_service_is_not_lost() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 2));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let a: TxqId = sched.add_txq(Some(sta), Tid::BE).unwrap();
        let frames = Arc::new([AtomicU32::new(1), AtomicU32::new(0)]);
        let served = Arc::new(AtomicU32::new(0));
        sched.wake_txq(a, NOW).unwrap();
        let server = {
            let (sched, frames, served) = (sched.clone(), frames.clone(), served.clone());
            thread::spawn(move || {
                let in_service = [AtomicU32::new(0), AtomicU32::new(0)];
                serve_round(&sched, &frames, &in_service, &served)
            })
        };
        let producer = {
            let (sched, frames) = (sched.clone(), frames.clone());
            thread::spawn(move || {
                frames[0].fetch_add(1, Ordering::SeqCst); // enqueue, then wake
                sched.wake_txq(a, NOW).unwrap();
            })
        };
        server.join().unwrap();
        producer.join().unwrap();
        drain_and_check(unwrap_arc(sched), &frames, &served, 2);
    });
}

/// Model 2: charges on one thread, releases on another, the station check on a third.
/// Pending airtime is conserved and returns to zero; a station overshoots its limit
/// by at most one frame per concurrent server (L2).
#[test]
fn model2_charge_release_and_check_conserve_pending_airtime() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        sched.set_station_limits(sta, Ac::Be, AqlLimits::new(8, 8).unwrap()).unwrap();
        let first = sched.charge_us(sta, Ac::Be, 4).unwrap();
        let handoff: Arc<Mutex<Vec<Charge>>> = Arc::new(Mutex::new(vec![first]));
        let charger = {
            let (sched, handoff) = (sched.clone(), handoff.clone());
            thread::spawn(move || {
                // A server: check, then charge (a frame of 8 us).
                if sched.airtime_check(sta, Ac::Be).unwrap() {
                    let c = sched.charge_us(sta, Ac::Be, 8).unwrap();
                    handoff.lock().unwrap().push(c);
                }
            })
        };
        let releaser = {
            let (sched, handoff) = (sched.clone(), handoff.clone());
            thread::spawn(move || {
                let c = handoff.lock().unwrap().pop();
                if let Some(c) = c {
                    sched.release(c).unwrap();
                }
            })
        };
        let checker = {
            let sched = sched.clone();
            thread::spawn(move || {
                // The check and a later read are not one step: only the bound holds.
                let _ = sched.airtime_check(sta, Ac::Be).unwrap();
                // Two servers may each add one 8 us frame after passing the check.
                assert!(sched.station_pending_us(sta, Ac::Be).unwrap() <= 8 + 2 * 8, "L2 overshoot bound");
            })
        };
        for t in [charger, releaser, checker] {
            t.join().unwrap();
        }
        for c in handoff.lock().unwrap().drain(..) {
            sched.release(c).unwrap();
        }
        assert_eq!(sched.station_pending_us(sta, Ac::Be).unwrap(), 0);
        assert_eq!(sched.total_pending_us(), 0, "A1: all released, all zero");
        unwrap_arc(sched).check_invariants_quiescent().unwrap();
    });
}

/// Model 4: airtime registered from the completion context while a round tops up the
/// same deficit: the result is exactly the initial deficit, minus the charge, plus a
/// whole number of top-ups (no lost update).
#[test]
fn model4_registered_airtime_and_top_ups_are_both_counted() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta: StationId = sched.add_station(Weight::new(1000).unwrap()).unwrap();
        let txq = sched.add_txq(Some(sta), Tid::BE).unwrap();
        // 2000 us in flight against a deficit of 1000: the effective deficit is negative.
        let inflight = sched.charge_us(sta, Ac::Be, 2000).unwrap();
        sched.wake_txq(txq, NOW).unwrap();
        let completion = {
            let sched = sched.clone();
            thread::spawn(move || sched.register_airtime(sta, Ac::Be, 100, 0, NOW).unwrap())
        };
        let round = {
            let sched = sched.clone();
            thread::spawn(move || {
                let round = sched.start_round(Ac::Be);
                if let Some(s) = sched.next_txq(round, NOW) {
                    sched.return_txq(s, TxqReturn::Empty, NOW);
                }
            })
        };
        completion.join().unwrap();
        round.join().unwrap();
        let d = sched.deficit_us(sta, Ac::Be).unwrap();
        let top_ups = d + 100 - 1000;
        assert!(top_ups >= 1000 && top_ups % 1000 == 0, "deficit {d}: a top-up or the charge was lost");
        sched.release(inflight).unwrap();
        unwrap_arc(sched).check_invariants_quiescent().unwrap();
    });
}

/// Model 5: a limit change while a round checks the station: the check sees the old
/// pair or the new pair, never a mix that breaks a limit. The same for the AC's default
/// limits, which round starts (the PHY limit) and new stations read.
#[test]
fn model5_a_limit_change_is_seen_whole() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let old = AqlLimits::DEFAULT;
        let new = AqlLimits::new(100, 200).unwrap();
        let new_default = AqlLimits::new(15_000, 30_000).unwrap();
        let writer = {
            let sched = sched.clone();
            thread::spawn(move || {
                sched.set_station_limits(sta, Ac::Be, new).unwrap();
                sched.set_weight(sta, Weight::new(1024).unwrap()).unwrap();
                sched.set_default_limits(Ac::Be, new_default);
            })
        };
        let reader = {
            let sched = sched.clone();
            thread::spawn(move || {
                let seen = sched.effective_limits(sta, Ac::Be).unwrap();
                assert!(seen == old || seen == new, "a torn pair of limits: {seen:?}");
                assert!(seen.low_us() <= seen.high_us());
                let seen = sched.default_limits(Ac::Be);
                assert!(seen == old || seen == new_default, "a torn pair of default limits: {seen:?}");
            })
        };
        writer.join().unwrap();
        reader.join().unwrap();
    });
}

/// Models 6 and 7: a station removed (and its slot wanted by a new station) on one
/// thread while `complete` releases the charges of its last frames (`charges_us`) on
/// another and a late charge races in on a third: no charge lands on the slot's next
/// occupant, and every charge is released.
fn station_removal_race(charges_us: &'static [u32], complete: fn(&Scheduler, Vec<Charge>)) {
    loom_common::model(move || {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let last: Vec<Charge> = charges_us.iter().map(|&us| sched.charge_us(sta, Ac::Be, us).unwrap()).collect();
        let late = {
            let sched = sched.clone();
            thread::spawn(move || sched.charge_us(sta, Ac::Be, 4).ok())
        };
        let completion = {
            let sched = sched.clone();
            thread::spawn(move || complete(&sched, last))
        };
        let control = {
            let sched = sched.clone();
            thread::spawn(move || {
                sched.remove_station(sta).unwrap();
                sched.add_station(Weight::DEFAULT).ok()
            })
        };
        let late_charge = late.join().unwrap();
        completion.join().unwrap();
        let newcomer = control.join().unwrap();
        if let Some(new) = newcomer {
            assert_ne!(new, sta);
            assert_eq!(sched.station_pending_us(new, Ac::Be).unwrap(), 0, "a charge landed on the new station");
        }
        if let Some(c) = late_charge {
            sched.release(c).expect("a late charge is released against its own station");
        }
        assert_eq!(sched.total_pending_us(), 0, "every charge released");
        unwrap_arc(sched).check_invariants_quiescent().unwrap();
    });
}

/// Model 6: the completion of the station's last frame, one release.
#[test]
fn model6_station_removal_races_charges_and_releases() {
    station_removal_race(&[8], |sched, charges| {
        for c in charges {
            sched.release(c).unwrap();
        }
    });
}

/// Model 7 (model 6 for a completion pass): the station's last two charges released by
/// one `release_batch`, in one compare-and-swap on the station's AQL word, racing the
/// late charge on that word and a reuse that waits for it to empty.
#[test]
fn model7_batch_release_races_station_removal() {
    station_removal_race(&[8, 12], |sched, charges| {
        let done = sched.release_batch(charges);
        assert_eq!((done.released, done.unknown_station, done.underflows), (2, 0, 0), "{done:?}");
    });
}

/// Model 8: removal and reuse on two threads, so a reuse can meet the slot retired but
/// not yet closed, racing a late charge and its release. A slot is reused only once its
/// AQL words are closed and empty, so the late charge either lands before the close and
/// holds the slot until it is released, or is refused.
#[test]
fn model8_a_reuse_never_meets_a_slot_still_open_for_charges() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let remove = {
            let sched = sched.clone();
            thread::spawn(move || sched.remove_station(sta).unwrap())
        };
        let reuse = {
            let sched = sched.clone();
            thread::spawn(move || sched.add_station(Weight::DEFAULT).ok())
        };
        let late = {
            let sched = sched.clone();
            thread::spawn(move || {
                if let Ok(c) = sched.charge_us(sta, Ac::Be, 4) {
                    sched.release(c).expect("a late charge is released against its own station");
                }
            })
        };
        remove.join().unwrap();
        let newcomer = reuse.join().unwrap();
        late.join().unwrap();
        if let Some(new) = newcomer {
            assert_ne!(new, sta);
            assert_eq!(sched.station_pending_us(new, Ac::Be).unwrap(), 0, "a charge landed on the new station");
        }
        assert_eq!(sched.total_pending_us(), 0, "every charge released");
        unwrap_arc(sched).check_invariants_quiescent().unwrap();
    });
}

/// Model 9: frames charged through a held txq reach the AC's counter when the txq is
/// returned, while the completion context releases them, possibly first: the counter may
/// dip below the stations' sum meanwhile (readers see at least 0), and is exactly the
/// sum once the txq is back (A1). (That the holder's own check decides on the true
/// total, releases included, is tested sequentially in `tests/serving_charge.rs`: here a
/// release in progress makes any single read transient.)
#[test]
fn model9_charges_through_a_held_txq_are_counted_once_returned() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let txq = sched.add_txq(Some(sta), Tid::BE).unwrap();
        sched.wake_txq(txq, NOW).unwrap();
        let handoff: Arc<Mutex<Vec<Charge>>> = Arc::new(Mutex::new(Vec::new()));
        let server = {
            let (sched, handoff) = (sched.clone(), handoff.clone());
            thread::spawn(move || {
                let round = sched.start_round(Ac::Be);
                assert!(round.is_open());
                let mut serving = sched.next_txq(round, NOW).expect("the woken txq is served");
                for us in [8, 12] {
                    let c = serving.charge_us(us).unwrap();
                    handoff.lock().unwrap().push(c);
                }
                sched.return_txq(serving, TxqReturn::Empty, NOW);
            })
        };
        let completion = {
            let (sched, handoff) = (sched.clone(), handoff.clone());
            thread::spawn(move || {
                let c = handoff.lock().unwrap().pop();
                if let Some(c) = c {
                    sched.release(c).unwrap();
                }
            })
        };
        server.join().unwrap();
        completion.join().unwrap();
        let left: u32 = handoff.lock().unwrap().iter().map(Charge::airtime_us).sum();
        assert_eq!(sched.ac_pending_us(Ac::Be), left, "the AC counts what is still out");
        for c in handoff.lock().unwrap().drain(..) {
            sched.release(c).unwrap();
        }
        assert_eq!(sched.total_pending_us(), 0, "every charge released");
        assert_eq!(sched.underflows(), 0);
        unwrap_arc(sched).check_invariants_quiescent().unwrap();
    });
}

// ---------------------------------------------------------------------------------------
// Models 10..=21: the paths review found no model could see. Each oracle is checked at
// the step where it must hold (a hand-out, a charge, a check), not only after a drain.
// ---------------------------------------------------------------------------------------

/// What the test knows of each txq (by an index the model chooses, usually the slot's),
/// checked at each hand-out: frames enqueued and not yet dequeued, the contexts serving
/// it now (S3: at most one), and the latest round that handed it out (S4).
struct Book {
    frames: Vec<AtomicU32>,
    in_service: Vec<AtomicU32>,
    last_round: Vec<AtomicU64>,
    served: AtomicU32,
    dropped: AtomicU32,
}

impl Book {
    fn new(frames: &[u32]) -> Book {
        Book {
            frames: frames.iter().map(|&n| AtomicU32::new(n)).collect(),
            in_service: frames.iter().map(|_| AtomicU32::new(0)).collect(),
            last_round: frames.iter().map(|_| AtomicU64::new(0)).collect(),
            served: AtomicU32::new(0),
            dropped: AtomicU32::new(0),
        }
    }

    fn len(&self) -> usize {
        self.frames.len()
    }

    /// A context takes txq `i` into service: nobody else may be serving it (S3).
    fn enter(&self, i: usize) {
        assert_eq!(self.in_service[i].fetch_add(1, Ordering::SeqCst), 0, "S3: txq {i} has two servers");
    }

    fn leave(&self, i: usize) {
        self.in_service[i].fetch_sub(1, Ordering::SeqCst);
    }

    /// Round `number` hands out txq `i`: no hand-out of it in this round or a later one
    /// may precede (S4; the recording happens while the txq is held, so it is exact).
    fn handed_out(&self, i: usize, number: u64) {
        let before = self.last_round[i].fetch_max(number, Ordering::SeqCst);
        assert!(before < number, "S4: round {number} handed out txq {i}, already handed out by round {before}");
    }

    /// Dequeues up to `max` frames of txq `i`.
    fn dequeue(&self, i: usize, max: u32) {
        let mut left = self.frames[i].load(Ordering::SeqCst);
        loop {
            let take = left.min(max);
            match self.frames[i].compare_exchange(left, left - take, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => {
                    self.served.fetch_add(take, Ordering::SeqCst);
                    return;
                }
                Err(now) => left = now,
            }
        }
    }

    /// The driver drops every frame of txq `i` (its txq was removed).
    fn drop_all(&self, i: usize) {
        self.dropped.fetch_add(self.frames[i].swap(0, Ordering::SeqCst), Ordering::SeqCst);
    }

    fn enqueue(&self, i: usize, n: u32) {
        self.frames[i].fetch_add(n, Ordering::SeqCst);
    }

    /// What the server saw when it is about to return txq `i`.
    fn outcome(&self, i: usize) -> TxqReturn {
        if self.frames[i].load(Ordering::SeqCst) == 0 { TxqReturn::Empty } else { TxqReturn::Backlogged }
    }

    /// One turn of the txq on line `i`, handed out by round `round`: S4 at the hand-out,
    /// S3 while it is served, up to `max` frames dequeued, then returned with what is left.
    fn serve(&self, sched: &Scheduler, serving: Serving<'_>, i: usize, max: u32, round: u64) {
        self.handed_out(i, round);
        self.serve_unnumbered(sched, serving, i, max);
    }

    /// [`Book::serve`] without the S4 check, for rounds whose hand-outs may repeat a txq.
    fn serve_unnumbered(&self, sched: &Scheduler, serving: Serving<'_>, i: usize, max: u32) {
        self.enter(i);
        self.dequeue(i, max);
        self.leave(i);
        sched.return_txq(serving, self.outcome(i), NOW);
    }

    /// Frames served and dropped: every frame enqueued, once the drain is over (S1).
    fn accounted(&self) -> u32 {
        self.served.load(Ordering::SeqCst) + self.dropped.load(Ordering::SeqCst)
    }
}

/// One context's round on BE, every hand-out checked: the single server (S3), and with
/// `s4` no earlier hand-out of the txq in this round or a later one, so a round hands out
/// at most one entry per txq and ends. Each service dequeues up to `per_service` frames.
/// `index` maps a handed-out txq to its line in the book. Returns the hand-outs.
fn checked_round(sched: &Scheduler, book: &Book, per_service: u32, s4: bool, index: &dyn Fn(TxqId) -> usize) -> u32 {
    let round = sched.start_round(Ac::Be);
    if !round.is_open() {
        return 0;
    }
    let mut handed = 0;
    while let Some(serving) = sched.next_txq(round, NOW) {
        handed += 1;
        assert!(handed as usize <= book.len(), "S4: round {} handed out {handed} txqs", round.number());
        let i = index(serving.txq());
        if s4 {
            book.serve(sched, serving, i, per_service, round.number());
        } else {
            book.serve_unnumbered(sched, serving, i, per_service);
        }
    }
    handed
}

fn by_slot(id: TxqId) -> usize {
    id.index()
}

/// After every thread: each txq with frames left is still scheduled, so rounds serve
/// them all (S1); the invariants hold before and after.
fn drain_book(sched: Scheduler, book: &Book, total: u32, index: &dyn Fn(TxqId) -> usize) -> Scheduler {
    let mut sched = sched;
    sched.check_invariants_quiescent().expect("invariants hold when quiescent");
    for _ in 0..3 {
        checked_round(&sched, book, u32::MAX, true, index);
    }
    assert_eq!(book.accounted(), total, "S1: every enqueued frame was served (or dropped with its txq) once");
    sched.check_invariants_quiescent().expect("invariants hold after the drain");
    sched
}

/// Airtime charged and not yet released, as the test counts it: `hi` grows before a
/// charge is tried and shrinks after its release completes, so no pending counter may
/// exceed it. Checked only in the one thread that charges (reading `hi` first): a
/// counter read there cannot see a charge `hi` lacks, nor miss a release `hi` has.
struct Outstanding {
    hi: AtomicU32,
}

impl Outstanding {
    fn new(us: u32) -> Outstanding {
        Outstanding { hi: AtomicU32::new(us) }
    }

    fn charge(&self, us: u32, charge: impl FnOnce() -> Result<Charge, ChargeError>) -> Result<Charge, ChargeError> {
        self.hi.fetch_add(us, Ordering::SeqCst);
        let result = charge();
        if result.is_err() {
            self.hi.fetch_sub(us, Ordering::SeqCst);
        }
        result
    }

    fn release(&self, sched: &Scheduler, charge: Charge) {
        let us = charge.airtime_us();
        sched.release(charge).expect("a genuine charge is released");
        self.hi.fetch_sub(us, Ordering::SeqCst);
    }

    /// Pending airtime is never above what is outstanding (A1's bound at each step).
    fn check(&self, sched: &Scheduler) {
        let hi = self.hi.load(Ordering::SeqCst);
        let total = sched.total_pending_us();
        assert!(total <= hi, "pending {total} us is above the {hi} us outstanding");
    }
}

fn flag() -> Arc<AtomicU32> {
    Arc::new(AtomicU32::new(0))
}

/// Whether `flag` is set. Flags are read and written only with read-modify-writes: an
/// RMW reads the latest value, so "not set yet" is as reliable as "set" (a loom SeqCst
/// load may still return the initial value after another thread's SeqCst store), and
/// loom orders RMWs of one location totally (a plain store racing an RMW is left
/// unordered, so a later read could return the RMW's value, which C11 forbids).
fn is_set(flag: &AtomicU32) -> bool {
    flag.fetch_or(0, Ordering::SeqCst) != 0
}

fn set(flag: &AtomicU32) {
    flag.fetch_or(1, Ordering::SeqCst);
}

/// Model 10: the wake and the completion context each run a round of their own on one
/// AC over two txqs (3 frames and 1), a server dequeuing one frame per hand-out and
/// returning the txq backlogged while frames are left, so a round meets txqs already
/// handed out, by it or by the other context's later round, and must end there (S4).
/// At each hand-out: no other context serves the txq (S3); neither this round nor a
/// later one handed it out before, so a round hands out at most one entry per txq (here
/// at most two) and ends; at the end no frame is lost (S1). (Two rounds per context take
/// over ten minutes; the second round adds nothing the other context's round does not.)
#[test]
fn model10_rounds_of_two_contexts_each_end() {
    // Each station's slot setup now resets its adaptive-AQL words too (one atomic store
    // per AC), which took this model past loom's default of 1000 branches per execution.
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 2_000;
    loom_common::check(builder, || {
        let sched = Arc::new(small(1, 2));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let a = sched.add_txq(Some(sta), Tid::BE).unwrap();
        let b = sched.add_txq(Some(sta), Tid::new(3).unwrap()).unwrap();
        let book = Arc::new(Book::new(&[3, 1]));
        sched.wake_txq(a, NOW).unwrap();
        sched.wake_txq(b, NOW).unwrap();
        let contexts: Vec<_> = (0..2)
            .map(|_| {
                let (sched, book) = (sched.clone(), book.clone());
                thread::spawn(move || {
                    checked_round(&sched, &book, 1, true, &by_slot);
                })
            })
            .collect();
        for t in contexts {
            t.join().unwrap();
        }
        drain_book(unwrap_arc(sched), &book, 4, &by_slot);
    });
}

/// Model 11: a station removed while a context serves its txq. The server charges two
/// frames through its handle, checks, and returns the txq; the control context removes
/// the station, then releases what the server handed it. At each step: a charge tried
/// after the removal returned is refused; pending airtime is never above what is
/// outstanding. After: the removed txq is never handed out again and no wake can revive
/// it; every charge made through the handle reached the AC counter once (A1, and
/// nothing pending once all are released); the station's and txq's slots are reusable.
#[test]
fn model11_a_station_removed_while_its_txq_is_served() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let a = sched.add_txq(Some(sta), Tid::BE).unwrap();
        sched.wake_txq(a, NOW).unwrap();
        let out = Arc::new(Outstanding::new(0));
        let handoff: Arc<Mutex<Vec<Charge>>> = Arc::new(Mutex::new(Vec::new()));
        let removed = flag();
        let server = {
            let (sched, out, handoff, removed) = (sched.clone(), out.clone(), handoff.clone(), removed.clone());
            thread::spawn(move || {
                let round = sched.start_round(Ac::Be);
                assert!(round.is_open());
                let Some(mut serving) = sched.next_txq(round, NOW) else { return };
                assert_eq!(serving.txq(), a);
                for us in [8, 12] {
                    let after_removal = is_set(&removed);
                    match out.charge(us, || serving.charge_us(us)) {
                        Ok(c) => {
                            assert!(!after_removal, "a charge after remove_station returned was accepted");
                            handoff.lock().unwrap().push(c);
                        }
                        Err(e) => assert_eq!(e, ChargeError::StationRemoved),
                    }
                    out.check(&sched);
                }
                sched.return_txq(serving, TxqReturn::Empty, NOW);
                out.check(&sched);
            })
        };
        let control = {
            let (sched, out, handoff, removed) = (sched.clone(), out.clone(), handoff.clone(), removed.clone());
            thread::spawn(move || {
                sched.remove_station(sta).unwrap();
                set(&removed);
                assert!(sched.wake_txq(a, NOW).is_err(), "a wake revived a txq removed with its station");
                let c = handoff.lock().unwrap().pop();
                if let Some(c) = c {
                    out.release(&sched, c);
                }
            })
        };
        server.join().unwrap();
        control.join().unwrap();
        for c in handoff.lock().unwrap().drain(..) {
            out.release(&sched, c);
        }
        assert_eq!(sched.total_pending_us(), 0, "every charge released");
        assert_eq!(sched.underflows(), 0, "no charge was released twice");
        let mut sched = unwrap_arc(sched);
        sched.check_invariants_quiescent().expect("A1: the AC counter is the stations' sum");
        let round = sched.start_round(Ac::Be);
        assert!(sched.next_txq(round, NOW).is_none(), "the removed txq was handed out");
        sched.check_invariants_quiescent().unwrap();
        let newcomer = sched.add_station(Weight::DEFAULT).expect("the retired slot is reusable once drained");
        sched.add_txq(Some(newcomer), Tid::BE).expect("the removed txq's slot is reusable");
        sched.check_invariants_quiescent().unwrap();
    });
}

/// Model 12: a station's weight and limits change while a round walks its debt. The
/// station (weight 2, deficit -5) must be walked two laps to be served under its old
/// settings; the writer sets weight 3 and limits that forbid any pending airtime. At
/// each step: the deficit is one walked laps can leave (-5 plus top-ups of 2 and 3) and
/// never lifted past zero by more than a weight; a served station's deficit is in
/// `[0, 3)`. A change that happened before a `next_txq` or a check is seen by it (the
/// station is refused); a `next_txq` and check that both happened before the writer
/// began used the old settings (the station is served and may send).
#[test]
fn model12_weight_and_limits_change_while_a_round_walks_the_debt() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(Weight::new(2).unwrap()).unwrap();
        let a = sched.add_txq(Some(sta), Tid::BE).unwrap();
        sched.register_airtime(sta, Ac::Be, 7, 0, NOW).unwrap(); // deficit 2 - 7 = -5
        sched.wake_txq(a, NOW).unwrap();
        let changed = flag();
        let (x_done, x_served, x_may_send) = (flag(), flag(), flag());
        let deficit_ok = |d: i64| d < 3 && (0..=2).any(|i| (0..=2).any(|j| -5 + 2 * i + 3 * j == d));
        let writer = {
            let (sched, changed, x_done, x_served, x_may_send) =
                (sched.clone(), changed.clone(), x_done.clone(), x_served.clone(), x_may_send.clone());
            thread::spawn(move || {
                if is_set(&x_done) {
                    // The whole round ran on the old settings: two laps, then served.
                    assert!(is_set(&x_served), "the old settings serve the station on the second lap");
                    assert!(is_set(&x_may_send), "the old limits let the station send");
                }
                sched.set_weight(sta, Weight::new(3).unwrap()).unwrap();
                sched.set_station_limits(sta, Ac::Be, AqlLimits::new(0, 0).unwrap()).unwrap();
                set(&changed);
            })
        };
        let server = {
            let sched = sched.clone();
            thread::spawn(move || {
                let round = sched.start_round(Ac::Be);
                let changed_before = is_set(&changed);
                let got = sched.next_txq(round, NOW);
                let d = sched.deficit_us(sta, Ac::Be).unwrap();
                assert!(deficit_ok(d), "deficit {d}: no walk of laps at weight 2 or 3 leaves it");
                if changed_before {
                    assert!(got.is_none(), "limits set before next_txq forbid the station, yet it was served");
                }
                if let Some(serving) = got {
                    assert!((0..3).contains(&d), "served with deficit {d}");
                    set(&x_served);
                    let changed_before = is_set(&changed);
                    let may_send = serving.airtime_check();
                    if changed_before {
                        assert!(!may_send, "limits set before the check forbid pending airtime");
                    }
                    if may_send {
                        set(&x_may_send);
                    }
                    sched.return_txq(serving, TxqReturn::Empty, NOW);
                }
                set(&x_done);
            })
        };
        writer.join().unwrap();
        server.join().unwrap();
        let d = sched.deficit_us(sta, Ac::Be).unwrap();
        assert!(deficit_ok(d), "deficit {d}: no walk of laps at weight 2 or 3 leaves it");
        unwrap_arc(sched).check_invariants_quiescent().unwrap();
    });
}

/// Model 13: the PHY default limits change (`set_default_limits`) while a station is
/// added. The new station never had limits of its own, so it must end on the new
/// default, never on the stale one. (A station whose limits are set explicitly at the
/// same time is left out: loom keeps the modification order of a plain store that races
/// a compare-and-swap partial, so a later load may return the swapped value, which C11's
/// read-modify-write atomicity forbids, and the model would fail on a race it cannot
/// tell from a real one.)
#[test]
// Found in review of the model itself: `add_station` copied a stale default after
// `set_default_limits` had converted every slot; both now finish by following the
// latest default (`registry::follow_default`), and this model passes.
fn model13_a_new_station_never_keeps_a_stale_default() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let new = AqlLimits::new(100, 200).unwrap();
        let control = {
            let sched = sched.clone();
            thread::spawn(move || sched.add_station(Weight::DEFAULT).unwrap())
        };
        let admin = {
            let sched = sched.clone();
            thread::spawn(move || sched.set_default_limits(Ac::Be, new))
        };
        let sta = control.join().unwrap();
        admin.join().unwrap();
        assert_eq!(sched.default_limits(Ac::Be), new);
        assert_eq!(sched.station_limits(sta, Ac::Be).unwrap(), new, "the new station kept the stale default");
        unwrap_arc(sched).check_invariants_quiescent().unwrap();
    });
}

/// Model 14: the AC closes at its PHY limit while another context serves. The serving
/// context holds a round opened while the AC was idle, over two listed txqs; the
/// completion context puts 14.5 ms in flight for another station (the PHY limit with two
/// txqs listed; the served station stays under its own AQL limits) and
/// starts a round, which closes the AC when it finds it over the limit. L3 at each
/// step: once such a start has returned, `next_txq` of any round on the AC (the
/// server's, opened before the close, and the closer's own) hands out nothing, until a
/// later start opens the AC again (the drain's, after the release).
#[test]
fn model14_a_closed_ac_hands_out_nothing_to_any_round() {
    // Each station's slot setup now resets its adaptive-AQL words too (one atomic store
    // per AC), which took this model past loom's default of 1000 branches per execution.
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 2_000;
    loom_common::check(builder, || {
        let sched = Arc::new(small(2, 2));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let other = sched.add_station(Weight::DEFAULT).unwrap();
        let a = sched.add_txq(Some(sta), Tid::BE).unwrap();
        let b = sched.add_txq(Some(sta), Tid::new(3).unwrap()).unwrap();
        let book = Arc::new(Book::new(&[1, 1]));
        sched.wake_txq(a, NOW).unwrap();
        sched.wake_txq(b, NOW).unwrap();
        let round = sched.start_round(Ac::Be);
        assert!(round.is_open());
        let closed = flag();
        let server = {
            let (sched, book, closed) = (sched.clone(), book.clone(), closed.clone());
            thread::spawn(move || {
                for _ in 0..2 {
                    let closed_before = is_set(&closed);
                    let got = sched.next_txq(round, NOW);
                    if closed_before {
                        assert!(got.is_none(), "L3: the AC was closed before next_txq, yet it handed out a txq");
                    }
                    let Some(serving) = got else { break };
                    let i = serving.txq().index();
                    book.serve(&sched, serving, i, 1, round.number());
                }
            })
        };
        let closer = {
            let (sched, closed) = (sched.clone(), closed.clone());
            thread::spawn(move || {
                let c = sched.charge_us(other, Ac::Be, 14_500).unwrap();
                let mine = sched.start_round(Ac::Be);
                if !mine.is_open() {
                    set(&closed);
                    assert!(sched.next_txq(mine, NOW).is_none(), "L3: the closing round handed out a txq");
                }
                c
            })
        };
        server.join().unwrap();
        let c = closer.join().unwrap();
        sched.release(c).unwrap();
        drain_book(unwrap_arc(sched), &book, 2, &by_slot);
    });
}

/// Mainline's walk of laps over mainline's order (station txqs woken with `list_add`, so
/// the last woken is at the head): pop the head; a negative effective deficit (deficit
/// minus pending) is topped up by the weight and goes to the tail; the first
/// non-negative one is served. `event` changes the
/// deficits or the pending airtime before the `at`-th pop (after the walk if it ends first).
fn walk(
    deficits: &mut [i64],
    pending: &mut [i64],
    weights: &[i64],
    at: usize,
    event: &dyn Fn(&mut [i64], &mut [i64]),
) -> Option<usize> {
    let mut list: std::collections::VecDeque<usize> = (0..deficits.len()).rev().collect();
    let mut step = 0;
    loop {
        if step == at {
            event(deficits, pending);
        }
        step += 1;
        let i = list.pop_front()?;
        if deficits[i] - pending[i] >= 0 {
            if step <= at {
                // The walk ended first: the event comes after it.
                event(deficits, pending);
            }
            return Some(i);
        }
        deficits[i] += weights[i];
        list.push_back(i);
    }
}

/// Every outcome (served, deficits) of the sequential walk from `deficits` and
/// `pending`, with `event` before each of its steps or after the walk.
fn walks(
    deficits: [i64; 2],
    pending: [i64; 2],
    weights: &[i64; 2],
    event: &dyn Fn(&mut [i64], &mut [i64]),
) -> Vec<(Option<usize>, [i64; 2])> {
    let mut outcomes: Vec<_> = (0..32)
        .map(|at| {
            let (mut d, mut p) = (deficits, pending);
            let served = walk(&mut d, &mut p, weights, at, event);
            (served, d)
        })
        .collect();
    outcomes.sort();
    outcomes.dedup();
    outcomes
}

/// What models 15 and 16 check once a walk that met another context's event served
/// station `served` and left deficits `d`. The lap skip reads the deficits in passes,
/// not in one step, so an event between its passes is not one of a walk's steps: the
/// served station must be one some walk serves, and each deficit must lie within what
/// the walks interleaved with the event leave (event before any step to after all); the
/// pair as a whole may be one no single walk leaves (see the crate docs' differences
/// from mainline). Then nobody starves: the other station is still listed and the next
/// round serves it.
fn after_a_walk(sched: Arc<Scheduler>, served: usize, d: [i64; 2], outcomes: &[(Option<usize>, [i64; 2])]) {
    let within = (0..2).all(|i| {
        let (lo, hi) = outcomes.iter().fold((i64::MAX, i64::MIN), |(lo, hi), (_, o)| (lo.min(o[i]), hi.max(o[i])));
        (lo..=hi).contains(&d[i])
    });
    let served_by_a_walk = outcomes.iter().any(|(s, _)| *s == Some(served));
    assert!(within && served_by_a_walk, "served {served} with deficits {d:?}; walks leave {outcomes:?}");
    let round = sched.start_round(Ac::Be);
    let next = sched.next_txq(round, NOW).expect("the other station is still listed");
    assert_ne!(next.txq().index(), served);
    sched.return_txq(next, TxqReturn::Empty, NOW);
    unwrap_arc(sched).check_invariants_quiescent().unwrap();
}

/// Two stations in debt, each with a txq on BE, woken in order: station 0 at weight 1
/// with `debts[0]`, station 1 at weight `weights[1]` with `debts[1]` (registered as
/// airtime the station used); AQL off, the models are about laps.
fn indebted(weights: [i64; 2], debts: [i64; 2]) -> (Arc<Scheduler>, [StationId; 2]) {
    let sched = Arc::new(small(2, 2));
    sched.set_aql_enabled(false);
    let stations: [StationId; 2] = core::array::from_fn(|i| {
        let sta = sched.add_station(Weight::new(weights[i] as u16).unwrap()).unwrap();
        let txq = sched.add_txq(Some(sta), if i == 0 { Tid::BE } else { Tid::new(3).unwrap() }).unwrap();
        let used = weights[i] - debts[i]; // a new station's deficit is its weight
        if used > 0 {
            sched.register_airtime(sta, Ac::Be, used as u32, 0, NOW).unwrap();
        }
        sched.wake_txq(txq, NOW).unwrap();
        sta
    });
    (sched, stations)
}

/// A loom builder for models that walk laps: a walk with its lap skip (three read-only
/// passes) takes more steps than loom's default bound of 1000 branches per execution.
fn walking_laps() -> loom::model::Builder {
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 4_000;
    builder
}

fn deficits_of(sched: &Scheduler, stations: &[StationId; 2]) -> [i64; 2] {
    core::array::from_fn(|i| sched.deficit_us(stations[i], Ac::Be).unwrap())
}

/// Model 15: laps walked while the completion context registers airtime. Station 0
/// (weight 1, deficit -3) and station 1 (weight 2, deficit -5) are both in debt, so one
/// `next_txq` must walk a lap and apply the laps a walk would take at once; meanwhile
/// the completion context registers 4 us more of station 1's airtime. At each step: the
/// served station's deficit is in `[0, weight)` (its holder alone touches it). After the
/// call: it terminated and served (the walk always serves; MAX_LAPS may not be reached),
/// with deficits within those the sequential walks leave with the registration before
/// one of their steps; nobody starves: the next round serves station 1.
#[test]
fn model15_laps_walked_while_airtime_is_registered() {
    const WEIGHTS: [i64; 2] = [1, 2];
    loom_common::check(walking_laps(), || {
        let (sched, stations) = indebted(WEIGHTS, [-3, -5]);
        let completion = {
            let sched = sched.clone();
            thread::spawn(move || sched.register_airtime(stations[1], Ac::Be, 4, 0, NOW).unwrap())
        };
        let server = {
            let sched = sched.clone();
            thread::spawn(move || {
                let round = sched.start_round(Ac::Be);
                let serving = sched.next_txq(round, NOW).expect("walked laps always serve someone");
                let i = serving.txq().index();
                let d = sched.deficit_us(stations[i], Ac::Be).unwrap();
                // The completion may register station 1's 4 us while it is held.
                let registered = if i == 1 { 4 } else { 0 };
                assert!((-registered..WEIGHTS[i]).contains(&d), "station {i} served with deficit {d}");
                sched.return_txq(serving, TxqReturn::Empty, NOW);
                i
            })
        };
        completion.join().unwrap();
        let served = server.join().unwrap();
        let d = deficits_of(&sched, &stations);
        let outcomes = walks([-3, -5], [0, 0], &WEIGHTS, &|d, _| d[1] -= 4);
        after_a_walk(sched, served, d, &outcomes);
    });
}

/// Model 16: a completion arrives while a context walks laps. Station 0 (weight 1) has
/// a deficit of 1 and 4 us in flight (effective -3); station 1 (weight 1) a deficit of
/// -5. The completion context releases station 0's charge during the walk. Walked laps
/// serve station 0 at its first visit after the release, every station topped up once
/// per lap walked before it. The lap skip reads the lap in passes, so when the release
/// makes station 0 eligible between them, station 1 may keep a lap's top-up the walk
/// would have stopped before: served station 0 with [2, -1], a pair no walk leaves
/// ([1, -4], [2, -3], [3, -2] or [4, -1]), though each deficit is one some walk leaves.
/// That bounded difference is documented in the crate docs; checked here: the served
/// station and each deficit are within the walks', and nobody starves.
#[test]
fn model16_a_completion_during_a_walk_of_laps() {
    loom_common::check(walking_laps(), || {
        let (sched, stations) = indebted([1, 1], [1, -5]);
        let inflight = sched.charge_us(stations[0], Ac::Be, 4).unwrap();
        let completion = {
            let sched = sched.clone();
            thread::spawn(move || sched.release(inflight).unwrap())
        };
        let server = {
            let sched = sched.clone();
            thread::spawn(move || {
                let round = sched.start_round(Ac::Be);
                let serving = sched.next_txq(round, NOW).expect("walked laps always serve someone");
                let i = serving.txq().index();
                sched.return_txq(serving, TxqReturn::Empty, NOW);
                i
            })
        };
        completion.join().unwrap();
        let served = server.join().unwrap();
        let d = deficits_of(&sched, &stations);
        let outcomes = walks([1, -5], [4, 0], &[1, 1], &|_, p| p[0] = 0);
        after_a_walk(sched, served, d, &outcomes);
    });
}

/// Model 29: a walk of laps gives up after three laps (`MAX_LAPS`) when another context
/// keeps putting the only station back in debt between them. Station 0 (weight 1) owes
/// 1 us; two completions register 1 us of its airtime each while a context walks. At
/// each step: the walk ends (it serves, or gives up); the station it serves has paid its
/// debt at that moment; a walk that gave up left the txq listed, so a round after the
/// registrations serves it. Some execution must give up, so the model cannot pass
/// without reaching that path.
#[test]
fn model29_a_walk_kept_in_debt_gives_up_after_max_laps_and_keeps_the_txq() {
    let gave_up = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = gave_up.clone();
    loom_common::check(walking_laps(), move || {
        let sched = Arc::new(small(1, 1));
        sched.set_aql_enabled(false);
        let sta = sched.add_station(Weight::new(1).unwrap()).unwrap();
        let txq = sched.add_txq(Some(sta), Tid::BE).unwrap();
        sched.wake_txq(txq, NOW).unwrap();
        // A new station's deficit is its weight (1): 2 us used leaves it owing 1.
        sched.register_airtime(sta, Ac::Be, 2, 0, NOW).unwrap();
        // Two completions, each on a thread of its own, so that each can land between
        // two laps without spending a preemption to stop between them.
        let completions: Vec<_> = (0..2)
            .map(|_| {
                let sched = sched.clone();
                thread::spawn(move || sched.register_airtime(sta, Ac::Be, 1, 0, NOW).unwrap())
            })
            .collect();
        let server = {
            let sched = sched.clone();
            thread::spawn(move || {
                let round = sched.start_round(Ac::Be);
                let serving = sched.next_txq(round, NOW)?;
                let d = sched.deficit_us(sta, Ac::Be).unwrap();
                // Served: its debt was paid at the visit (a registration may land since).
                assert!((-2..=1).contains(&d), "served with deficit {d}");
                sched.return_txq(serving, TxqReturn::Empty, NOW);
                Some(())
            })
        };
        for c in completions {
            c.join().unwrap();
        }
        if server.join().unwrap().is_none() {
            seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            // It gave up for its round, not for good: the txq is still listed.
            let round = sched.start_round(Ac::Be);
            let serving = sched.next_txq(round, NOW).expect("a walk that gave up lost the txq");
            sched.return_txq(serving, TxqReturn::Empty, NOW);
        }
        unwrap_arc(sched).check_invariants_quiescent().unwrap();
    });
    assert!(gave_up.load(std::sync::atomic::Ordering::Relaxed) > 0, "no walk reached MAX_LAPS");
}

/// Model 17: wake and completion on different ACs, at the cross-AC threshold. The
/// station is at its BE low limit (8 of 8..64 us), so it may send only while the PHY
/// total, every AC counted, is below the threshold (48 us); another station's 40 us on
/// VI put the total at it. The wake context serves BE; the completion context releases
/// the VI charge. At each step: a BE hand-out or check that happened before the release
/// began found the total at the threshold and refused; one after the release completed
/// found 8 us and allowed; the holder's own charges count in its checks at once (at 48
/// us of its own the station is refused whatever VI holds); pending airtime is never
/// above what is outstanding.
#[test]
fn model17_the_threshold_counts_every_ac() {
    loom_common::model(|| {
        let sched = Arc::new(small(2, 1));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let other = sched.add_station(Weight::DEFAULT).unwrap();
        let a = sched.add_txq(Some(sta), Tid::BE).unwrap();
        sched.set_station_limits(sta, Ac::Be, AqlLimits::new(8, 64).unwrap()).unwrap();
        sched.set_aql_threshold_us(48);
        let out = Arc::new(Outstanding::new(48));
        let at_low = sched.charge_us(sta, Ac::Be, 8).unwrap();
        let vi = sched.charge_us(other, Ac::Vi, 40).unwrap();
        sched.wake_txq(a, NOW).unwrap();
        let (released, be_allowed) = (flag(), flag());
        let completion = {
            let (sched, out, released, be_allowed) = (sched.clone(), out.clone(), released.clone(), be_allowed.clone());
            thread::spawn(move || {
                assert!(!is_set(&be_allowed), "BE was allowed while VI's airtime put the PHY total at the threshold");
                out.release(&sched, vi);
                set(&released);
            })
        };
        let wake = {
            let (sched, out, released, be_allowed) = (sched.clone(), out.clone(), released.clone(), be_allowed.clone());
            thread::spawn(move || {
                let mut charges = Vec::new();
                let round = sched.start_round(Ac::Be);
                assert!(round.is_open());
                let released_before = is_set(&released);
                let got = sched.next_txq(round, NOW);
                if released_before {
                    assert!(got.is_some(), "the PHY total was 8 us, under the threshold, yet BE was not served");
                }
                let Some(mut serving) = got else { return charges };
                set(&be_allowed);
                let released_before = is_set(&released);
                let may_send = serving.airtime_check();
                if released_before {
                    assert!(may_send, "the PHY total was 8 us, yet the check refused");
                }
                if may_send {
                    set(&be_allowed);
                    for us in [32, 8] {
                        charges.push(out.charge(us, || serving.charge_us(us)).unwrap());
                        out.check(&sched);
                    }
                    // 48 us pending on BE, 40 of them its own: at the threshold whatever VI holds.
                    assert!(!serving.airtime_check(), "the holder's own charges did not count in its check");
                }
                sched.return_txq(serving, TxqReturn::Empty, NOW);
                out.check(&sched);
                charges
            })
        };
        completion.join().unwrap();
        let charges = wake.join().unwrap();
        sched.release(at_low).unwrap();
        for c in charges {
            sched.release(c).unwrap();
        }
        assert_eq!(sched.total_pending_us(), 0);
        unwrap_arc(sched).check_invariants_quiescent().unwrap();
    });
}

/// Model 18: `may_transmit` (a pull-mode driver's firmware asking for the txq) races a
/// round's `next_txq` for the same txq, then the asker enqueues a frame and wakes it. At
/// each hand-out, by either path: nobody else serves the txq (S3). At the end no frame
/// is lost (S1): the txq is scheduled while it has frames.
#[test]
fn model18_may_transmit_and_next_txq_never_both_serve() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let a = sched.add_txq(Some(sta), Tid::BE).unwrap();
        let book = Arc::new(Book::new(&[1]));
        sched.wake_txq(a, NOW).unwrap();
        let round = {
            let (sched, book) = (sched.clone(), book.clone());
            thread::spawn(move || {
                checked_round(&sched, &book, u32::MAX, true, &by_slot);
            })
        };
        let pull = {
            let (sched, book) = (sched.clone(), book.clone());
            thread::spawn(move || {
                if let Some(serving) = sched.may_transmit(a, NOW).unwrap().granted() {
                    book.serve_unnumbered(&sched, serving, 0, u32::MAX);
                }
                book.enqueue(0, 1);
                sched.wake_txq(a, NOW).unwrap();
            })
        };
        round.join().unwrap();
        pull.join().unwrap();
        drain_book(unwrap_arc(sched), &book, 2, &by_slot);
    });
}

/// Model 19: a txq is removed while its entry is queued, and its slot (the only one) is
/// reused for a new txq, which is woken, while a context runs rounds. The stale entry
/// names the old occupant. At each hand-out: nobody else serves that txq (S3); the old
/// txq is never handed out once the new one was added before the `next_txq` began (its
/// stale entry must not hand out the slot under the old name, whose return would not
/// requeue the new occupant and so lose its wake). At the end the new txq's frame was
/// served once (S1), the old one's served or dropped with it, and the invariants hold.
#[test]
fn model19_a_reused_txq_slot_and_the_old_occupants_entry() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let a = sched.add_txq(Some(sta), Tid::BE).unwrap();
        let book = Arc::new(Book::new(&[1, 0])); // line 0: the old txq; line 1: the new one
        sched.wake_txq(a, NOW).unwrap();
        let (newcomer, index) = old_or_newcomer(a);
        let reused = flag();
        let server = {
            let (sched, book, reused, index) = (sched.clone(), book.clone(), reused.clone(), index.clone());
            thread::spawn(move || {
                for _ in 0..2 {
                    let round = sched.start_round(Ac::Be);
                    loop {
                        let reused_before = is_set(&reused);
                        let Some(serving) = sched.next_txq(round, NOW) else { break };
                        if reused_before {
                            assert_ne!(serving.txq(), a, "the old occupant's entry handed out the reused slot");
                        }
                        let i = index(serving.txq());
                        book.serve(&sched, serving, i, u32::MAX, round.number());
                    }
                }
            })
        };
        let control = {
            let (sched, book, newcomer, reused) = (sched.clone(), book.clone(), newcomer.clone(), reused.clone());
            thread::spawn(move || {
                sched.remove_txq(a).unwrap();
                book.drop_all(0);
                assert!(sched.wake_txq(a, NOW).is_err(), "a removed txq was woken");
                if let Ok(b) = sched.add_txq(Some(sta), Tid::BE) {
                    assert_ne!(b, a);
                    newcomer.store(b.to_raw(), Ordering::SeqCst);
                    set(&reused);
                    book.enqueue(1, 1);
                    sched.wake_txq(b, NOW).unwrap();
                }
            })
        };
        server.join().unwrap();
        control.join().unwrap();
        let total = 1 + u32::from(is_set(&reused));
        drain_book(unwrap_arc(sched), &book, total, &index);
    });
}

/// Counts the executions of a slot-reuse model that really reused the slot (a std
/// atomic: it outlives loom's executions).
#[derive(Clone)]
struct Reused(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl Reused {
    fn count(&self, reused: bool) {
        self.0.fetch_add(usize::from(reused), std::sync::atomic::Ordering::Relaxed);
    }
}

/// Runs a slot-reuse model and fails if no execution reused the slot: such a model would
/// pass without exploring its race. Two stations' slot setup and a removal's drain take
/// these models past loom's default of 1000 branches per execution.
fn check_reuse(model: impl Fn(Reused) + Sync + Send + 'static) {
    let reused = Reused(Default::default());
    let seen = reused.clone();
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 2_000;
    loom_common::check(builder, move || model(seen.clone()));
    assert!(reused.0.load(std::sync::atomic::Ordering::Relaxed) > 0, "no execution reused the slot");
}

/// For the models where a txq `old` is removed and a newcomer may take its slot: where
/// the control context records the newcomer's raw id (`u64::MAX` until then), and the
/// book's line of a handed-out txq (0 the old one, 1 the newcomer; any other is a txq
/// nobody added, and fails the model).
fn old_or_newcomer(old: TxqId) -> (Arc<AtomicU64>, impl Fn(TxqId) -> usize + Clone) {
    let newcomer = Arc::new(AtomicU64::new(u64::MAX));
    let seen = newcomer.clone();
    let index = move |id: TxqId| {
        if id == old {
            return 0;
        }
        assert_eq!(id.to_raw(), seen.load(Ordering::SeqCst), "a txq nobody added was handed out");
        1
    };
    (newcomer, index)
}

/// The control context of models 22 and 27: removes txq `old` and drops its frames (the
/// book's line 0), then adds a txq of `station`, which may take `old`'s slot, records it
/// in `newcomer`, enqueues one frame for it (line 1) and wakes it.
fn spawn_replace(
    sched: &Arc<Scheduler>,
    book: &Arc<Book>,
    newcomer: &Arc<AtomicU64>,
    old: TxqId,
    station: StationId,
) -> thread::JoinHandle<()> {
    let (sched, book, newcomer) = (sched.clone(), book.clone(), newcomer.clone());
    thread::spawn(move || {
        sched.remove_txq(old).unwrap();
        book.drop_all(0);
        if let Ok(b) = sched.add_txq(Some(station), Tid::BE) {
            newcomer.store(b.to_raw(), Ordering::SeqCst);
            book.enqueue(1, 1);
            sched.wake_txq(b, NOW).unwrap();
        }
    })
}

/// The start of the models where a txq's slot is reused by a txq of a station in debt:
/// one slot; station 0 free to send, with txq `a` listed in the slot; station 1 at
/// weight 1 with a debt (`debt`, its deficit, is negative) and no txq yet.
struct Reuse {
    sched: Arc<Scheduler>,
    indebted: StationId,
    debt: i64,
    a: TxqId,
}

impl Reuse {
    fn new() -> Reuse {
        let sched = Arc::new(small(2, 1));
        let free = sched.add_station(Weight::DEFAULT).unwrap();
        let indebted = sched.add_station(Weight::new(1).unwrap()).unwrap();
        sched.register_airtime(indebted, Ac::Be, 2, 0, NOW).unwrap();
        let debt = sched.deficit_us(indebted, Ac::Be).unwrap();
        assert!(debt < 0);
        let a = sched.add_txq(Some(free), Tid::BE).unwrap();
        sched.wake_txq(a, NOW).unwrap();
        Reuse { sched, indebted, debt, a }
    }
}

/// Model 20: a `Serving` handle dropped without `return_txq` (a driver bailing out with
/// a frame left) while the wake context enqueues and wakes the txq and the completion
/// releases the frame charged through the handle. At each step: nobody else serves the
/// txq (S3); pending airtime is never above what is outstanding. At the end the txq
/// stayed scheduled (every frame is served, S1), and the charge made through the
/// dropped handle reached the AC counter once (it counts exactly what is still out, A1).
#[test]
fn model20_a_dropped_handle_keeps_its_txq_and_its_charges() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let a = sched.add_txq(Some(sta), Tid::BE).unwrap();
        let book = Arc::new(Book::new(&[2]));
        sched.wake_txq(a, NOW).unwrap();
        let out = Arc::new(Outstanding::new(0));
        let handoff: Arc<Mutex<Vec<Charge>>> = Arc::new(Mutex::new(Vec::new()));
        let server = {
            let (sched, book, out, handoff) = (sched.clone(), book.clone(), out.clone(), handoff.clone());
            thread::spawn(move || {
                let round = sched.start_round(Ac::Be);
                let Some(mut serving) = sched.next_txq(round, NOW) else { return };
                book.enter(0);
                book.dequeue(0, 1);
                let c = out.charge(8, || serving.charge_us(8)).unwrap();
                handoff.lock().unwrap().push(c);
                out.check(&sched);
                book.leave(0);
                drop(serving); // no return_txq: the handle's drop returns the txq
                out.check(&sched);
            })
        };
        let wake = {
            let (sched, book, out, handoff) = (sched.clone(), book.clone(), out.clone(), handoff.clone());
            thread::spawn(move || {
                book.enqueue(0, 1);
                sched.wake_txq(a, NOW).unwrap();
                let c = handoff.lock().unwrap().pop();
                if let Some(c) = c {
                    out.release(&sched, c);
                }
            })
        };
        server.join().unwrap();
        wake.join().unwrap();
        let left: u32 = handoff.lock().unwrap().iter().map(Charge::airtime_us).sum();
        assert_eq!(sched.ac_pending_us(Ac::Be), left, "the AC counts the dropped handle's charge once");
        for c in handoff.lock().unwrap().drain(..) {
            sched.release(c).unwrap();
        }
        assert_eq!(sched.total_pending_us(), 0);
        assert_eq!(sched.underflows(), 0);
        drain_book(unwrap_arc(sched), &book, 3, &by_slot);
    });
}

/// Model 21: `may_transmit` and a round's `next_txq` both meet a station in debt
/// (weight 1, deficit -1). Each tops a negative deficit up by the weight, as mainline
/// does under its lock: together they must still leave it where walked laps would, at
/// most `weight - 1` above zero (here 0), whichever of them serves.
#[test]
// Mainline runs both under the AC's lock. Here each top-up is one compare-and-swap from
// the deficit it read (`LiveStation::top_up_debt`): a context whose read went stale
// (the other's top-up came first, even only in its view: a Relaxed read may return the
// older value) fails its swap and reads again. Weakened variant `topup_stale_read`: the
// check and the top-up as two steps, which tops one debt up twice.
fn model21_may_transmit_and_a_walk_top_up_a_debt_once() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(Weight::new(1).unwrap()).unwrap();
        let a = sched.add_txq(Some(sta), Tid::BE).unwrap();
        sched.register_airtime(sta, Ac::Be, 2, 0, NOW).unwrap(); // deficit 1 - 2 = -1
        sched.wake_txq(a, NOW).unwrap();
        let round = {
            let sched = sched.clone();
            thread::spawn(move || {
                let round = sched.start_round(Ac::Be);
                if let Some(serving) = sched.next_txq(round, NOW) {
                    let d = sched.deficit_us(sta, Ac::Be).unwrap();
                    assert!(d <= 0, "served with deficit {d}: topped up past zero by more than a weight");
                    sched.return_txq(serving, TxqReturn::Empty, NOW);
                }
            })
        };
        let pull = {
            let sched = sched.clone();
            thread::spawn(move || {
                if let Some(serving) = sched.may_transmit(a, NOW).unwrap().granted() {
                    sched.return_txq(serving, TxqReturn::Empty, NOW);
                }
            })
        };
        round.join().unwrap();
        pull.join().unwrap();
        let d = sched.deficit_us(sta, Ac::Be).unwrap();
        assert!(d <= 0, "deficit {d}: topped up past zero by more than a weight");
        unwrap_arc(sched).check_invariants_quiescent().unwrap();
    });
}

/// Model 22: a txq slot reused between a round's look at its entry and its take. The
/// only txq (station 0, free to send) is listed; the control context removes it, adds a
/// txq of station 1 in the same slot and wakes it, which makes the queued entry stand for
/// the newcomer. Station 1's AQL limits are zero, so it may never be served. At each
/// hand-out: the txq handed out is not station 1's (the round checked the old occupant's
/// station; the newcomer must be checked on its own, not served on those checks), and
/// nobody else serves it (S3). At the end, with station 1's limits lifted, every frame is
/// served or dropped with its txq (S1).
#[test]
fn model22_a_slot_reused_between_the_check_and_the_take() {
    check_reuse(|reused| {
        let sched = Arc::new(small(2, 1));
        let free = sched.add_station(Weight::DEFAULT).unwrap();
        let barred = sched.add_station(Weight::DEFAULT).unwrap();
        let never = AqlLimits::new(0, 0).unwrap();
        sched.set_station_limits(barred, Ac::Be, never).unwrap();
        let a = sched.add_txq(Some(free), Tid::BE).unwrap();
        let book = Arc::new(Book::new(&[1, 0])); // line 0: the old txq; line 1: the new one
        sched.wake_txq(a, NOW).unwrap();
        let (newcomer, index) = old_or_newcomer(a);
        let server = {
            let (sched, book, index) = (sched.clone(), book.clone(), index.clone());
            thread::spawn(move || {
                let round = sched.start_round(Ac::Be);
                while let Some(serving) = sched.next_txq(round, NOW) {
                    assert_ne!(serving.station(), Some(barred), "a txq of a station over its AQL limit was served");
                    let i = index(serving.txq());
                    book.serve(&sched, serving, i, u32::MAX, round.number());
                }
            })
        };
        let control = spawn_replace(&sched, &book, &newcomer, a, barred);
        server.join().unwrap();
        control.join().unwrap();
        let added = newcomer.load(Ordering::SeqCst) != u64::MAX;
        reused.count(added);
        sched.set_station_limits(barred, Ac::Be, AqlLimits::DEFAULT).unwrap();
        drain_book(unwrap_arc(sched), &book, 1 + u32::from(added), &index);
    });
}

/// Model 23: a txq slot reused while `may_transmit` reads it. The driver asks whether
/// txq `a` (station 0, not in debt) may send while the control context removes `a` and
/// adds a txq of station 1, which is in debt, in the same slot. `may_transmit(a)` tops
/// up the debt of `a`'s station only: station 1's deficit must be untouched when it
/// returns, whatever it returns (a top-up on behalf of another txq would give station 1
/// airtime no visit of its own earned). At the end the invariants hold.
#[test]
fn model23_may_transmit_never_tops_up_a_newcomers_station() {
    check_reuse(|reused| {
        let Reuse { sched, indebted, debt, a } = Reuse::new();
        let asker = {
            let sched = sched.clone();
            thread::spawn(move || {
                let answer = sched.may_transmit(a, NOW);
                assert_eq!(
                    sched.deficit_us(indebted, Ac::Be).unwrap(),
                    debt,
                    "may_transmit topped up the station of a txq that took the slot"
                );
                if let Ok(airtime_sched::MayTransmit::Granted(serving)) = answer {
                    sched.return_txq(serving, TxqReturn::Empty, NOW);
                }
            })
        };
        let control = {
            let sched = sched.clone();
            thread::spawn(move || {
                sched.remove_txq(a).unwrap();
                if let Ok(b) = sched.add_txq(Some(indebted), Tid::BE) {
                    reused.count(true);
                    sched.wake_txq(b, NOW).unwrap();
                }
            })
        };
        asker.join().unwrap();
        control.join().unwrap();
        unwrap_arc(sched).check_invariants_quiescent().expect("invariants hold when quiescent");
    });
}

/// Model 24: a txq slot reused while a round reads it, the newcomer not woken. Txq `a`
/// (station 0, not in debt) is listed; the control context removes it and adds a txq of
/// station 1, which is in debt, in the same slot, and does not wake it: the queued entry
/// is an orphan, which stands for no txq until a wake adopts it. A round meeting that
/// entry may serve `a` (if it takes it before the removal) or drop the entry, but no
/// visit of it may top up station 1's debt: station 1's deficit is untouched after each
/// `next_txq`, and nothing is handed out but `a`. At the end the invariants hold.
#[test]
fn model24_a_round_never_tops_up_an_unwoken_newcomers_station() {
    check_reuse(|reused| {
        let Reuse { sched, indebted, debt, a } = Reuse::new();
        let server = {
            let sched = sched.clone();
            thread::spawn(move || {
                let round = sched.start_round(Ac::Be);
                loop {
                    let serving = sched.next_txq(round, NOW);
                    assert_eq!(
                        sched.deficit_us(indebted, Ac::Be).unwrap(),
                        debt,
                        "a round topped up the station of a txq nobody woke"
                    );
                    let Some(serving) = serving else { break };
                    assert_eq!(serving.txq(), a, "a txq nobody woke was handed out");
                    sched.return_txq(serving, TxqReturn::Empty, NOW);
                }
            })
        };
        let control = {
            let sched = sched.clone();
            thread::spawn(move || {
                sched.remove_txq(a).unwrap();
                if sched.add_txq(Some(indebted), Tid::BE).is_ok() {
                    reused.count(true);
                }
            })
        };
        server.join().unwrap();
        control.join().unwrap();
        unwrap_arc(sched).check_invariants_quiescent().expect("invariants hold when quiescent");
    });
}

/// Model 25: a txq slot reused by a txq of another AC, which is served there, while a
/// round reads the slot. BE txqs `a` (slot 0) and `c` (slot 1) are listed, `a` first.
/// The control context removes `a`, adds a VI txq in slot 0, wakes it and serves it in
/// a VI round, which stamps the slot with that round's number. The BE round must not
/// take the newcomer's stamp for `a`'s ("already served in this round": the round would
/// end before `c`): at its end it has handed out `c`, once (S4), and nothing else but
/// `a`. At the end the invariants hold.
#[test]
fn model25_a_round_ends_only_on_its_own_txqs_stamps() {
    check_reuse(|reused| {
        let sched = Arc::new(small(1, 2));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let a = sched.add_txq(Some(sta), Tid::BE).unwrap();
        let c = sched.add_txq(Some(sta), Tid::BE).unwrap();
        // Station txqs are listed at the head: `c` first makes the list `a`, `c`.
        sched.wake_txq(c, NOW).unwrap();
        sched.wake_txq(a, NOW).unwrap();
        let server = {
            let sched = sched.clone();
            thread::spawn(move || {
                let round = sched.start_round(Ac::Be);
                let mut served_c = 0;
                while let Some(serving) = sched.next_txq(round, NOW) {
                    let id = serving.txq();
                    assert!(id == a || id == c, "the BE round handed out {id:?}, which nobody woke on BE");
                    served_c += u32::from(id == c);
                    sched.return_txq(serving, TxqReturn::Empty, NOW);
                }
                assert_eq!(served_c, 1, "the BE round ended before c, on a stamp that was not its own");
            })
        };
        let control = {
            let sched = sched.clone();
            thread::spawn(move || {
                sched.remove_txq(a).unwrap();
                let Ok(b) = sched.add_txq(Some(sta), Tid::VI) else { return };
                reused.count(true);
                sched.wake_txq(b, NOW).unwrap();
                let round = sched.start_round(Ac::Vi);
                while let Some(serving) = sched.next_txq(round, NOW) {
                    assert_eq!(serving.txq(), b, "the VI round handed out a txq nobody woke on VI");
                    sched.return_txq(serving, TxqReturn::Empty, NOW);
                }
            })
        };
        server.join().unwrap();
        control.join().unwrap();
        unwrap_arc(sched).check_invariants_quiescent().expect("invariants hold when quiescent");
    });
}

/// Model 27: a txq slot reused, and the newcomer woken, while a round reads the slot.
/// Txq `a` (station 0, not in debt, one frame) is listed; the control context removes it,
/// adds a txq of station 1 (in debt) in the same slot, enqueues a frame for it and wakes
/// it, which makes the queued entry the newcomer's. A round that read station 1 from the
/// slot for `a`'s entry finds the debt and must not top it up for `a`: it looks at the
/// entry again, as the newcomer's, and visits it as such. At each hand-out: it is `a` or
/// the newcomer, with no other server (S3), and station 1's deficit stays between its
/// debt and zero (one visit's top-up at most, weight 1). At the end every frame was served
/// or dropped with its txq (S1): the newcomer's entry was not lost on the way.
#[test]
fn model27_a_round_looks_again_at_an_entry_whose_txq_changed() {
    check_reuse(|reused| {
        let Reuse { sched, indebted, debt, a } = Reuse::new();
        let book = Arc::new(Book::new(&[1, 0])); // line 0: the old txq; line 1: the new one
        let (newcomer, index) = old_or_newcomer(a);
        let server = {
            let (sched, book, index) = (sched.clone(), book.clone(), index.clone());
            thread::spawn(move || {
                let round = sched.start_round(Ac::Be);
                loop {
                    let serving = sched.next_txq(round, NOW);
                    let d = sched.deficit_us(indebted, Ac::Be).unwrap();
                    assert!((debt..=0).contains(&d), "station 1's deficit {d}: topped up past one visit");
                    let Some(serving) = serving else { break };
                    let i = index(serving.txq());
                    book.serve(&sched, serving, i, u32::MAX, round.number());
                }
            })
        };
        let control = spawn_replace(&sched, &book, &newcomer, a, indebted);
        server.join().unwrap();
        control.join().unwrap();
        let added = newcomer.load(Ordering::SeqCst) != u64::MAX;
        reused.count(added);
        drain_book(unwrap_arc(sched), &book, 1 + u32::from(added), &index);
    });
}

/// Model 28: a txq slot reused, the newcomer on the same AC and woken, while a round that
/// already served the old txq reads its entry again: the round-stamp path's look again.
/// Txq `a` is served in the round and returned backlogged (stamped with the round's
/// number, listed again at the head). While the round looks at `a`'s entry a second time,
/// the control context removes `a`, adds `b` in the same slot and wakes it (the entry
/// becomes `b`'s, its stamp reset). If the round read `a`'s stamp and then finds the slot
/// changed, the entry is `b`'s: it must look at it again, not end the round on it nor
/// drop it. At each hand-out: the txq is `b` (the round never hands out `a` twice, S4).
/// At the end `b`'s wake was not lost: if the round did not serve it, the next one does.
#[test]
fn model28_a_round_looks_again_at_a_reused_entry_it_had_stamped() {
    check_reuse(|reused| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let a = sched.add_txq(Some(sta), Tid::BE).unwrap();
        sched.wake_txq(a, NOW).unwrap();
        let round = sched.start_round(Ac::Be);
        let first = sched.next_txq(round, NOW).expect("a is listed");
        assert_eq!(first.txq(), a);
        sched.return_txq(first, TxqReturn::Backlogged, NOW);
        let newcomer = Arc::new(AtomicU64::new(u64::MAX));
        let served_b = flag();
        let server = {
            let (sched, newcomer, served_b) = (sched.clone(), newcomer.clone(), served_b.clone());
            thread::spawn(move || {
                while let Some(serving) = sched.next_txq(round, NOW) {
                    let id = serving.txq();
                    assert_ne!(id, a, "S4: the round handed out a twice");
                    assert_eq!(id.to_raw(), newcomer.load(Ordering::SeqCst), "a txq nobody added was handed out");
                    set(&served_b);
                    sched.return_txq(serving, TxqReturn::Empty, NOW);
                }
            })
        };
        let control = {
            let (sched, newcomer) = (sched.clone(), newcomer.clone());
            thread::spawn(move || {
                sched.remove_txq(a).unwrap();
                if let Ok(b) = sched.add_txq(Some(sta), Tid::BE) {
                    newcomer.store(b.to_raw(), Ordering::SeqCst);
                    sched.wake_txq(b, NOW).unwrap();
                }
            })
        };
        server.join().unwrap();
        control.join().unwrap();
        let b = newcomer.load(Ordering::SeqCst);
        if b != u64::MAX {
            reused.count(true);
            if !is_set(&served_b) {
                let next = sched.start_round(Ac::Be);
                let got = sched.next_txq(next, NOW).map(|serving| {
                    let id = serving.txq();
                    sched.return_txq(serving, TxqReturn::Empty, NOW);
                    id.to_raw()
                });
                assert_eq!(got, Some(b), "S1: the newcomer's wake was lost");
            }
        }
        unwrap_arc(sched).check_invariants_quiescent().expect("invariants hold when quiescent");
    });
}
