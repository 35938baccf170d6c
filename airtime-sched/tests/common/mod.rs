//! Shared helpers for the airtime-sched integration tests (public API only).

#![allow(dead_code)]

pub mod fixtures;
pub mod reference_model;

use airtime_sched::{Ac, Config, ConfigBuilder, Instant, Round, Scheduler, StationId, Tid, TxqId, TxqReturn, Weight};

/// A time well past the epoch, so that "active within 100 ms" is decided by the test's
/// own wakes and not by the initial `last_active` of 0.
pub const T0: Instant = Instant::from_micros(10_000_000);

/// The table [`config`] has under Miri: 8 stations and 16 txqs ([`MIRI_TXQS`]). The
/// interpreter's cost of a scheduler and a txq table grows with their slots: building,
/// checking and dropping a table of 32 stations and 128 txqs took about 15 s per test
/// (most of `txq_table.rs`'s 355 s), of 8 and 16 about 1.5 s. Every test passes natively
/// on this table (checked with it forced on; on 4 stations and 8 txqs one ran out of
/// slots). The AC rings, sized by `max_txqs`, wrap sooner on it.
pub const MIRI_STATIONS: u16 = 8;
/// See [`MIRI_STATIONS`].
pub const MIRI_TXQS: u16 = 16;

/// The default configuration, on a smaller table under Miri (see [`MIRI_TXQS`]).
/// Nothing the tests check depends on the table's size beyond the few stations and txqs
/// each adds; those that test capacity set it themselves.
pub fn config() -> Config {
    let mut config = Config::default();
    if cfg!(miri) {
        config.max_stations = MIRI_STATIONS;
        config.max_txqs = MIRI_TXQS;
    }
    config
}

/// `Config::builder()` on [`config`]'s table: the default's natively, the smaller one
/// under Miri.
pub fn builder() -> ConfigBuilder {
    let builder = Config::builder();
    if cfg!(miri) {
        builder.max_stations(MIRI_STATIONS.into()).and_then(|b| b.max_txqs(MIRI_TXQS.into())).expect("a valid table")
    } else {
        builder
    }
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
