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

/// `loom::model`, failing a model whose search collapsed to a single execution.
///
/// loom 0.7's DPOR remembers one last access per atomic, so a load can hide an earlier
/// load of another thread from a later write (tokio-rs/loom#392): a thread that loads
/// then writes a word another thread only loaded is never run ahead of that load, and
/// a model whose only race is of that shape explores one interleaving and passes
/// whatever the code does (a first form of `loom_txqs`' txq26 did). A model of two or
/// more threads always has more than one execution to explore; one means that blind
/// spot, so it fails here instead of passing.
pub fn model<F>(f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    check(loom::model::Builder::new(), f)
}

/// [`model`] with a configured builder.
pub fn check<F>(builder: loom::model::Builder, f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let executions = std::sync::Arc::new(AtomicUsize::new(0));
    let count = executions.clone();
    builder.check(move || {
        count.fetch_add(1, Relaxed);
        f()
    });
    let n = executions.load(Relaxed);
    assert!(n > 1, "the model explored {n} execution: loom saw no race to permute (see loom_common::model)");
}
