//! Loom model of adaptive AQL's per-(station, AC) word, which two contexts write: the
//! station check sets its "held back" flag when the limit refuses the station (the wake
//! or completion context), and each release rewrites the word (the completion context).
//! A refusal racing the release that empties the station must not be lost: either that
//! release grows the limit, or the flag survives for the next one.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 RUST_BACKTRACE=0 cargo test --release
//! -p airtime-sched --test loom_adaptive`.
//!
//! | variant | what it undoes | caught by |
//! |---|---|---|
//! | `adaptive_store` | a release writes the word with a load and a store, not a compare-and-swap | `adaptive1` |
#![cfg(loom)]

// The smallest scheduler the model needs, built here: `loom_common::small` has no
// adaptive switch.
use airtime_sched::{Ac, AqlLimits, Config, Scheduler, Weight};
use loom::sync::Arc;
use loom::thread;

/// Configured BE limits: the learnt limit stays in [500, 2000].
const LIMITS: (u32, u32) = (500, 2000);

#[test]
fn adaptive1_a_refusal_racing_the_emptying_release_is_never_lost() {
    loom::model(|| {
        let mut config = Config::default();
        config.max_stations = 1;
        config.max_txqs = 1;
        config.adaptive_aql = true;
        let sched = Arc::new(Scheduler::new(config).unwrap());
        sched.set_default_limits(Ac::Be, AqlLimits::new(LIMITS.0, LIMITS.1).unwrap());
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        // One window of slack (two releases of 50 ms that each leave 60 ms behind): the
        // limit shrinks by an eighth, to 1750, so that it has room to grow.
        let keep = sched.charge_us(sta, Ac::Be, 60_000).unwrap();
        for _ in 0..2 {
            let go = sched.charge_us(sta, Ac::Be, 50_000).unwrap();
            sched.release(go).unwrap();
        }
        sched.release(keep).unwrap();
        let high = |s: &Scheduler| s.station_aql(sta).unwrap().limits[Ac::Be.index()].high_us();
        assert_eq!(high(&sched), 1750);

        // 1800 in flight: over the learnt 1750, so a check now is refused.
        let last = sched.charge_us(sta, Ac::Be, 1800).unwrap();
        let checker = {
            let sched = sched.clone();
            thread::spawn(move || sched.airtime_check(sta, Ac::Be).unwrap())
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
        }
    });
}
