//! Shared by the loom test files: the fixed time, the smallest scheduler a model needs,
//! and the model runner that fails a search collapsed to one execution.
#![allow(dead_code, reason = "each loom test file uses part of it")]

use airtime_sched::{Config, Instant, Scheduler};

/// The time every model passes in (the scheduler never reads a clock).
pub const NOW: Instant = Instant::ZERO;

/// A scheduler with room for `stations` stations and `txqs` txqs: the smallest state
/// that still shows a model's race keeps loom's search short.
pub fn small(stations: u16, txqs: u16) -> Scheduler {
    let mut config = Config::default();
    config.max_stations = stations;
    config.max_txqs = txqs;
    Scheduler::new(config).expect("valid config")
}

/// `loom::model`, failing a search collapsed to one execution (see
/// `airtime_sched::loom_model`, which the crate's own models use too).
pub use airtime_sched::loom_model::{check, model};
