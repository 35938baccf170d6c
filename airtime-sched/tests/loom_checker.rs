//! The model checker itself: the two interleavings loom 0.7.3 misses, which the patch
//! in `tools/loom/` makes it explore. Every loom model of this crate rests on them: a
//! "look, then claim" (a load, then a compare-and-swap of the same word) is how most of
//! the lock-free core takes anything. These fail on loom 0.7.3 without the patch, so
//! CI proves the models ran on the patched checker.
//!
//! Run: `RUSTFLAGS="--cfg loom" tools/loom/cargo-loom test --release -p airtime-sched
//! --test loom_checker`.
#![cfg(loom)]

use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, AtomicUsize};
use loom::thread;
use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};

/// Every value `run` returns over every execution loom explores.
fn outcomes<T: Ord + Send + 'static>(run: impl Fn() -> T + Send + Sync + 'static) -> BTreeSet<T> {
    let seen = std::sync::Arc::new(Mutex::new(BTreeSet::new()));
    let into = seen.clone();
    loom::model(move || {
        let value = run();
        into.lock().expect("not poisoned").insert(value);
    });
    let seen = std::mem::take(&mut *seen.lock().expect("not poisoned"));
    seen
}

/// One thread reads a flag; another reads it, then sets it. The first may read it
/// either way. loom 0.7.3 sees only `false`: the setter's store finds the setter's own
/// load as the word's last access and no race with the first thread's load
/// (tokio-rs/loom#392).
fn read_beside_load_then_store(setter_loads_first: bool) -> BTreeSet<bool> {
    outcomes(move || {
        let flag = Arc::new(AtomicBool::new(false));
        let setter_flag = flag.clone();
        let setter = thread::spawn(move || {
            if setter_loads_first {
                let _ = setter_flag.load(Relaxed);
            }
            setter_flag.store(true, Relaxed);
        });
        let seen = flag.load(Relaxed);
        setter.join().expect("setter");
        seen
    })
}

#[test]
fn a_load_before_a_store_does_not_hide_a_racing_load() {
    let all = BTreeSet::from([false, true]);
    assert_eq!(read_beside_load_then_store(false), all, "store alone");
    assert_eq!(read_beside_load_then_store(true), all, "load, then store (loom#392)");
}

/// A writer sets `key`, sets and clears `value`, then clears `key`; a reader reads
/// `value` then `key`. A load the writer adds between its last two stores changes
/// nothing the reader can see, but on loom 0.7.3 it hides the reader's `(1, 0)` (it
/// read `value` inside the window, `key` after it) (tokio-rs/loom#166).
fn reader_outcomes(writer_reloads_key: bool) -> BTreeSet<(usize, usize)> {
    outcomes(move || {
        let key = Arc::new(AtomicUsize::new(0));
        let value = Arc::new(AtomicUsize::new(0));
        let (writer_key, writer_value) = (key.clone(), value.clone());
        let writer = thread::spawn(move || {
            writer_key.store(1, SeqCst);
            writer_value.store(1, SeqCst);
            writer_value.store(0, SeqCst);
            if writer_reloads_key {
                let _ = writer_key.load(SeqCst);
            }
            writer_key.store(0, SeqCst);
        });
        let reader = thread::spawn(move || (value.load(SeqCst), key.load(SeqCst)));
        writer.join().expect("writer");
        reader.join().expect("reader")
    })
}

#[test]
fn a_redundant_load_does_not_hide_an_interleaving() {
    let all = BTreeSet::from([(0, 0), (0, 1), (1, 0), (1, 1)]);
    assert_eq!(reader_outcomes(false), all, "without the load");
    assert_eq!(reader_outcomes(true), all, "with the load (loom#166)");
}
