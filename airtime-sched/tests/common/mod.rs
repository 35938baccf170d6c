//! Shared helpers for the airtime-sched integration tests (public API only).

#![allow(dead_code)]

pub mod fixtures;
pub mod reference_model;

use airtime_sched::{Ac, Config, Instant, Round, Scheduler, StationId, Tid, TxqId, TxqReturn, Weight};

/// A time well past the epoch, so that "active within 100 ms" is decided by the test's
/// own wakes and not by the initial `last_active` of 0.
pub const T0: Instant = Instant::from_micros(10_000_000);

/// The default configuration, on a smaller table under Miri: the interpreter spends about
/// 2 s building the default's 1024 txq slots and 2 s on each `check_invariants` walk over
/// them, which the tests do a dozen times each. Nothing the tests check depends on the
/// table's size beyond the few stations and txqs each adds; those that test capacity
/// set it themselves.
pub fn config() -> Config {
    let mut config = Config::default();
    if cfg!(miri) {
        config.max_stations = 32;
        config.max_txqs = 128;
    }
    config
}

/// A scheduler with the default configuration (see [`config`]).
pub fn sched() -> Scheduler {
    Scheduler::new(config()).expect("default config is valid")
}

/// A scheduler with a configuration edited from the default (see [`config`]).
pub fn sched_with(edit: impl FnOnce(&mut Config)) -> Scheduler {
    let mut config = config();
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
