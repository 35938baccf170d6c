//! The loom model runner every model of this crate goes through (the crate's own and
//! its `tests/loom_*.rs`): `loom::model`, failing a search that collapsed to one
//! execution.
//!
//! A model of two or more threads always has more than one interleaving to explore;
//! a search that saw one means loom found no race to permute, the shape of loom 0.7.3's
//! blind spot for a load then a write (tokio-rs/loom#392), which made a first form of
//! `loom_txqs`' txq26 pass whatever the code did. The models run on loom patched against
//! it (`tools/loom/`); this guard stays for any blind spot the patch does not cover.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// `loom::model(f)`, failing if loom explored a single execution; prints the count.
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
    let executions = Arc::new(AtomicUsize::new(0));
    let count = executions.clone();
    builder.check(move || {
        count.fetch_add(1, Relaxed);
        f()
    });
    let n = executions.load(Relaxed);
    // Shown with `--nocapture`: how much of the search a change adds or removes.
    std::eprintln!("loom explored {n} executions");
    assert!(n > 1, "the model explored {n} execution: loom saw no race to permute (see airtime_sched::loom_model)");
}
