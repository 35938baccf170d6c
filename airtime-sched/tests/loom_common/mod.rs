//! Shared by the loom test files (`loom_models.rs`, `loom_list.rs`, `loom_control.rs`):
//! the fixed time and the smallest scheduler a model needs.

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
