//! Shared helpers for the airtime-sched integration tests (public API only).

#![allow(dead_code)]

pub mod fixtures;
pub mod reference_model;

use airtime_sched::{Ac, Config, Instant, Round, Scheduler, StationId, Tid, TxqId, TxqReturn, Weight};

/// A time well past the epoch, so that "active within 100 ms" is decided by the test's
/// own wakes and not by the initial `last_active` of 0.
pub const T0: Instant = Instant::from_micros(10_000_000);

/// A scheduler with the default configuration.
pub fn sched() -> Scheduler {
    Scheduler::new(Config::default()).expect("default config is valid")
}

/// A scheduler with a configuration edited from the default.
pub fn sched_with(edit: impl FnOnce(&mut Config)) -> Scheduler {
    let mut config = Config::default();
    edit(&mut config);
    Scheduler::new(config).expect("edited config is valid")
}

/// A weight (panics on 0: test input only).
pub fn w(weight: u16) -> Weight {
    Weight::new(weight).expect("non-zero test weight")
}

/// The data TID of `ac` used throughout the tests.
pub fn tid_of(ac: Ac) -> Tid {
    let n = match ac {
        Ac::Vo => 6,
        Ac::Vi => 4,
        Ac::Be => 0,
        Ac::Bk => 1,
    };
    Tid::new(n).expect("valid tid")
}

/// A station with one txq on `ac`.
pub fn station_with_txq(s: &Scheduler, weight: u16, ac: Ac) -> (StationId, TxqId) {
    let sta = s.add_station(w(weight)).expect("station slot");
    let txq = s.add_txq(Some(sta), tid_of(ac)).expect("txq slot");
    (sta, txq)
}

/// Asks `round` for one txq; returns it with `outcome` if any.
pub fn serve_once(s: &Scheduler, round: Round, outcome: TxqReturn, now: Instant) -> Option<TxqId> {
    let serving = s.next_txq(round, now)?;
    let id = serving.txq();
    s.return_txq(serving, outcome, now);
    Some(id)
}

/// Releases every charge in `charges`, asserting each release is clean.
pub fn release_all(s: &Scheduler, charges: &mut Vec<airtime_sched::Charge>) {
    for c in charges.drain(..) {
        s.release(c).expect("clean release");
    }
}
