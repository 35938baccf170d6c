//! Loom model of adaptive AQL's per-(station, AC) word, which two contexts write: the
//! station check sets its "held back" flag when the limit refuses the station (the wake
//! or completion context), and each release rewrites the word (the completion context).
//! A refusal racing the release that empties the station must not be lost: either that
//! release grows the limit, or the flag survives for the next one. And neither write,
//! however late, may reach the slot's next occupant once a removed station's slot is
//! reused (the word carries its occupant's tag, as the slot's other per-occupant words).
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 RUST_BACKTRACE=0 tools/loom/cargo-loom test --release
//! -p airtime-sched --test loom_adaptive`.
//!
//! | variant | what it undoes | caught by |
//! |---|---|---|
//! | `adaptive_store` | a release writes the word with a load and a store, not a compare-and-swap | `adaptive1` |
//! | `adaptive_untagged` | writes do not check the occupant's tag, so a late one lands on the next occupant | `adaptive2`, `adaptive3` |
//! | `refusal_any_generation` | a round's refused visit is recorded for the station of whichever txq holds the slot now | `adaptive4` |
//! | `wake_keeps_idle` | a wake of a txq listed for its station's debt alone leaves it marked as having no frames | `adaptive5` |
//! | `idle_first_load` | a return decides that mark from its first load of the word, missing a wake that fails its compare-and-swap | `adaptive5` |
//! | `refusal_counts_idle` | a walked visit's refusal counts whatever the txq holds | `adaptive5` |
//! | `skip_counts_idle` | the lap skip's refusal counts whatever the txq holds | `adaptive6` |
#![cfg(loom)]

// The smallest scheduler the model needs, built here: `loom_common::small` has no
// adaptive switch.
use airtime_sched::{Ac, AqlLimits, Config, Instant, Scheduler, Serving, StationId, Tid, TxqReturn, Weight};

const NOW: Instant = Instant::from_micros(1_000_000);
use loom::sync::Arc;
use loom::thread;

mod loom_common;

/// Configured BE limits: the learnt limit stays in [500, 2000].
const LIMITS: (u32, u32) = (500, 2000);

/// A scheduler with adaptive AQL on, `stations` station slots, one txq slot and the BE
/// limits [`LIMITS`].
fn adaptive(stations: u16) -> Scheduler {
    adaptive_txqs(stations, 1)
}

/// [`adaptive`] with `txqs` txq slots.
fn adaptive_txqs(stations: u16, txqs: u16) -> Scheduler {
    let mut config = Config::default();
    config.max_stations = stations;
    config.max_txqs = txqs;
    config.adaptive_aql = true;
    let sched = Scheduler::new(config).unwrap();
    sched.set_default_limits(Ac::Be, AqlLimits::new(LIMITS.0, LIMITS.1).unwrap());
    sched
}

/// One window of slack for `sta` on BE: two releases of 50 ms that each leave 60 ms in
/// flight, so its learnt limit gives back an eighth (2000 to 1750).
fn one_window_of_slack(sched: &Scheduler, sta: StationId) {
    let keep = sched.charge_us(sta, Ac::Be, 60_000).unwrap();
    for _ in 0..2 {
        let go = sched.charge_us(sta, Ac::Be, 50_000).unwrap();
        sched.release(go).unwrap();
    }
    sched.release(keep).unwrap();
}

#[test]
fn adaptive1_a_refusal_racing_the_emptying_release_is_never_lost() {
    loom_common::model(|| {
        let sched = Arc::new(adaptive(1));
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        // The limit shrinks to 1750, so that it has room to grow.
        one_window_of_slack(&sched, sta);
        let high = |s: &Scheduler| s.station_aql(sta).unwrap().limits[Ac::Be].high_us();
        assert_eq!(high(&sched), 1750);

        // 1800 in flight: over the learnt 1750, so a check now is refused.
        let last = sched.charge_us(sta, Ac::Be, 1800).unwrap();
        let checker = {
            let sched = sched.clone();
            thread::spawn(move || {
                let allowed = sched.airtime_check(sta, Ac::Be).unwrap();
                // Mid-race, whatever the release has done: the applied limits stay in
                // their bounds and ordered.
                let l = sched.station_aql(sta).unwrap().limits[Ac::Be];
                assert!((LIMITS.0..=LIMITS.1).contains(&l.high_us()) && l.low_us() <= l.high_us(), "{l:?}");
                allowed
            })
        };
        let completer = {
            let sched = sched.clone();
            thread::spawn(move || sched.release(last).unwrap())
        };
        let allowed = checker.join().unwrap();
        completer.join().unwrap();

        // One more completion that empties the station: a flag still set grows it now.
        let probe = sched.charge_us(sta, Ac::Be, 100).unwrap();
        sched.release(probe).unwrap();
        let learnt = high(&sched);
        assert!((LIMITS.0..=LIMITS.1).contains(&learnt), "{learnt} out of bounds");
        if !allowed {
            // Refused while the station was held back: it ran dry once since, so the
            // limit grew (1750 + 875, capped at the configured 2000).
            assert_eq!(learnt, LIMITS.1, "the refusal was lost");
        } else {
            // Never refused: running dry is no reason to grow.
            assert_eq!(learnt, 1750, "grew without a refusal");
        }
    });
}

/// A release of a removed station's last charge drains its slot; a concurrent
/// `add_station` may then reuse the slot before that release has taught the learnt word.
/// The late lesson is the old occupant's (its configured limit, its pending airtime, its
/// share of a window) and must not reach the new one: the new station starts at its own
/// configured limit and learns from its own releases only.
#[test]
fn adaptive2_a_late_release_never_reaches_the_slots_next_occupant() {
    loom_common::model(|| {
        let sched = Arc::new(adaptive(1));
        let old = sched.add_station(Weight::DEFAULT).unwrap();
        // The old occupant's own, lower limit, and a release that leaves it no slack:
        // what a late lesson would carry over.
        sched.set_station_limits(old, Ac::Be, AqlLimits::new(LIMITS.0, 1000).unwrap()).unwrap();
        let last = sched.charge_us(old, Ac::Be, 1000).unwrap();
        sched.remove_station(old).unwrap();
        let completer = {
            let sched = sched.clone();
            thread::spawn(move || sched.release(last).unwrap())
        };
        let adder = {
            let sched = sched.clone();
            thread::spawn(move || sched.add_station(Weight::DEFAULT).ok())
        };
        completer.join().unwrap();
        let Some(new) = adder.join().unwrap() else { return };
        let limits = |s: &Scheduler| s.station_aql(new).unwrap().limits[Ac::Be];
        assert_eq!(
            limits(&sched),
            AqlLimits::new(LIMITS.0, LIMITS.1).unwrap(),
            "the old occupant's limit reached the new one"
        );
        // Its own first window (as in adaptive1): 10 ms of slack at each release, so it
        // gives back an eighth. A late lesson of the old occupant's (no slack) would
        // have kept it at 2000.
        one_window_of_slack(&sched, new);
        assert_eq!(limits(&sched).high_us(), 1750, "the old occupant's release reached the new one");
    });
}

/// A check of a removed station that refuses it may set the "held back" flag after the
/// slot has been reused and its next occupant has learnt a limit of its own: that flag
/// is the old occupant's and must not make the next one grow when it runs dry.
#[test]
fn adaptive3_a_late_refusal_never_reaches_the_slots_next_occupant() {
    loom_common::model(|| {
        let sched = Arc::new(adaptive(1));
        let old = sched.add_station(Weight::DEFAULT).unwrap();
        // Over its high limit: a check of it is refused.
        let held = sched.charge_us(old, Ac::Be, 3000).unwrap();
        let checker = {
            let sched = sched.clone();
            thread::spawn(move || {
                let _ = sched.airtime_check(old, Ac::Be);
            })
        };
        let next = {
            let sched = sched.clone();
            thread::spawn(move || {
                sched.remove_station(old).unwrap();
                sched.release(held).unwrap();
                let new = sched.add_station(Weight::DEFAULT).unwrap();
                // The new occupant learns 1750 (one window of slack, as in adaptive1),
                // never refused.
                one_window_of_slack(&sched, new);
                new
            })
        };
        checker.join().unwrap();
        let new = next.join().unwrap();
        let high = |s: &Scheduler| s.station_aql(new).unwrap().limits[Ac::Be].high_us();
        assert_eq!(high(&sched), 1750);
        // It runs dry without ever having been refused: no growth.
        let probe = sched.charge_us(new, Ac::Be, 100).unwrap();
        sched.release(probe).unwrap();
        assert_eq!(high(&sched), 1750, "the old occupant's refusal reached the new one");
    });
}

/// A round's refused check is recorded only for the station of the txq it visited. Txq
/// `a` (station 0, free to send) is listed; station 1 has learnt a BE limit of 1750 us
/// and has 1800 us in flight, so any check of it is refused. The control context
/// removes `a` and adds a txq of station 1 in the same slot, and does not wake it: the
/// queued entry stands for no txq of station 1, so no visit of station 1 happens, and no
/// refusal may be recorded for it (a recorded one grows its limit at its next completion
/// that leaves it nearly dry). After the round, that completion must leave 1750.
#[test]
fn adaptive4_a_round_records_refusals_only_for_the_txq_it_visited() {
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 2_000;
    loom_common::check(builder, || {
        let sched = Arc::new(adaptive(2));
        let free = sched.add_station(Weight::DEFAULT).unwrap();
        // A deficit above what it has in flight: a visit of it finds no debt to top up,
        // only the refused check.
        let held = sched.add_station(Weight::new(4096).unwrap()).unwrap();
        // As in adaptive1: one window of slack shrinks station 1's limit to 1750.
        one_window_of_slack(&sched, held);
        let high = |s: &Scheduler| s.station_aql(held).unwrap().limits[Ac::Be].high_us();
        assert_eq!(high(&sched), 1750);
        let last = sched.charge_us(held, Ac::Be, 1800).unwrap();
        assert!(sched.deficit_us(held, Ac::Be).unwrap() >= 1800);
        let a = sched.add_txq(Some(free), Tid::BE).unwrap();
        sched.wake_txq(a, NOW).unwrap();
        let server = {
            let sched = sched.clone();
            thread::spawn(move || {
                let round = sched.start_round(Ac::Be);
                while let Some(serving) = sched.next_txq(round, NOW) {
                    assert_eq!(serving.txq(), a, "a txq nobody woke was handed out");
                    sched.return_txq(serving, TxqReturn::Empty, NOW);
                }
            })
        };
        let control = {
            let sched = sched.clone();
            thread::spawn(move || {
                sched.remove_txq(a).unwrap();
                if sched.add_txq(Some(held), Tid::BE).is_ok() {
                    REUSED_4.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            })
        };
        server.join().unwrap();
        control.join().unwrap();
        // The completion that leaves station 1 nearly dry: a refusal recorded for it
        // would grow its limit now.
        sched.release(last).unwrap();
        assert_eq!(high(&sched), 1750, "a refusal was recorded for a station no round visited");
    });
    assert!(REUSED_4.load(std::sync::atomic::Ordering::Relaxed) > 0, "no execution reused the slot");
}

/// Executions of adaptive4 in which the slot was reused (the model is not vacuous).
static REUSED_4: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The model's start for adaptive5 and adaptive6: a station whose learnt BE limit is
/// 1750 us, whose txq was woken, served and charged 1800 us (over that limit), and whose
/// airtime then left it deep in debt. Returns the station, its txq, the charge and the
/// serving turn, still held.
fn debt_after_a_turn(sched: &Scheduler) -> (StationId, airtime_sched::TxqId, airtime_sched::Charge, Serving<'_>) {
    let sta = sched.add_station(Weight::DEFAULT).unwrap();
    one_window_of_slack(sched, sta);
    assert_eq!(sched.station_aql(sta).unwrap().limits[Ac::Be].high_us(), 1750);
    let txq = sched.add_txq(Some(sta), Tid::BE).unwrap();
    sched.wake_txq(txq, NOW).unwrap();
    let round = sched.start_round(Ac::Be);
    let mut serving = sched.next_txq(round, NOW).expect("the woken txq is served");
    let last = serving.charge_us(1800).unwrap();
    sched.register_airtime(sta, Ac::Be, 50_000, 0, NOW).unwrap();
    (sta, txq, last, serving)
}

/// The learnt limit `sta` ends with after its last charge's release, which leaves it
/// nearly dry: 2000 if a refusal counted since the last adjustment, else 1750.
fn learnt_after(sched: &Scheduler, sta: StationId, last: airtime_sched::Charge) -> u32 {
    sched.release(last).unwrap();
    sched.station_aql(sta).unwrap().limits[Ac::Be].high_us()
}

/// A round on BE that serves nothing of the station over its limit (`held`), returning
/// anything else it hands out empty.
fn round_refusing(sched: &Scheduler, held: airtime_sched::TxqId) {
    let round = sched.start_round(Ac::Be);
    while let Some(serving) = sched.next_txq(round, NOW) {
        assert_ne!(serving.txq(), held, "a station over its limit was served");
        sched.return_txq(serving, TxqReturn::Empty, NOW);
    }
}

/// A txq that goes back empty while its station pays off a debt stays listed for that
/// debt alone, and a round's refused visit of it keeps back no frame, so adaptive AQL
/// does not count it (without a wake, the station's emptying completion leaves 1750). A
/// wake racing that return (a frame enqueued while the txq is served, or just after)
/// must undo the mark: whichever comes first, the txq has a frame once both are done,
/// and the next refused visit counts, growing the limit at that completion (2000).
#[test]
fn adaptive5_a_wake_racing_an_empty_return_makes_refusals_count_again() {
    let mut builder = loom::model::Builder::new();
    // Two schedulers' worth of set-up in one execution.
    builder.max_branches = 10_000;
    loom_common::check(builder, || {
        for woken in [false, true] {
            let sched = Arc::new(adaptive(1));
            let (sta, txq, last, serving) = debt_after_a_turn(&sched);
            let waker = woken.then(|| {
                let sched = sched.clone();
                thread::spawn(move || {
                    sched.wake_txq(txq, NOW).unwrap();
                    sched.check_invariants().unwrap();
                })
            });
            sched.return_txq(serving, TxqReturn::Empty, NOW);
            sched.check_invariants().unwrap();
            if let Some(waker) = waker {
                waker.join().unwrap();
            }
            round_refusing(&sched, txq);
            sched.check_invariants().unwrap();
            let learnt = learnt_after(&sched, sta, last);
            if woken {
                assert_eq!(learnt, LIMITS.1, "the wake was lost to adaptive AQL: its refusal did not count");
            } else {
                assert_eq!(learnt, 1750, "a visit of a txq listed for its debt alone counted as a refusal");
            }
        }
    });
}

/// adaptive5 through the lap skip: a second station in debt but under its limit makes
/// the round's first lap serve nobody, so the skip's pass over the lap checks both
/// stations. It must count the refusal of the station over its limit as a walked visit
/// does: not while its txq is listed for its debt alone (1750), and, once a wake racing
/// the round has given it a frame, at the latest at the next round's visit (2000).
#[test]
fn adaptive6_the_lap_skip_counts_refusals_as_a_walked_visit_does() {
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 10_000;
    loom_common::check(builder, || {
        for woken in [false, true] {
            let sched = Arc::new(adaptive_txqs(2, 2));
            let (sta, txq, last, serving) = debt_after_a_turn(&sched);
            sched.return_txq(serving, TxqReturn::Empty, NOW);
            let other = sched.add_station(Weight::DEFAULT).unwrap();
            let b = sched.add_txq(Some(other), Tid::BE).unwrap();
            sched.wake_txq(b, NOW).unwrap();
            sched.register_airtime(other, Ac::Be, 50_000, 0, NOW).unwrap();
            let waker = woken.then(|| {
                let sched = sched.clone();
                thread::spawn(move || {
                    sched.wake_txq(txq, NOW).unwrap();
                    sched.check_invariants().unwrap();
                })
            });
            round_refusing(&sched, txq);
            sched.check_invariants().unwrap();
            if let Some(waker) = waker {
                waker.join().unwrap();
                round_refusing(&sched, txq);
            }
            let learnt = learnt_after(&sched, sta, last);
            if woken {
                assert_eq!(learnt, LIMITS.1, "the wake was lost to adaptive AQL: its refusal did not count");
            } else {
                assert_eq!(learnt, 1750, "the lap skip counted a refusal of a txq listed for its debt alone");
            }
        }
    });
}
