//! The one place atomics and shared cells come from (tokio's pattern).
//!
//! Under `cfg(loom)` every atomic maps to loom's model-checked type, and [`UnsafeCell`]
//! to loom's, which checks that no two accesses race, so the loom models in
//! `tests/loom_*.rs` run the real scheduler code, not a copy. Nothing else in the crate
//! may import from `core::sync` or `core::cell::UnsafeCell` directly, but for counters
//! that are deliberately not modelled (a scheduler's number; test-only tallies that tell
//! a loom model whether any execution reached the path it checks).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, Ordering};

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, Ordering};

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

#[cfg(not(loom))]
pub(crate) use core::hint::spin_loop;
/// A busy-wait hint; under loom, a yield, so that a bounded spin lets the holder run.
#[cfg(loom)]
pub(crate) use loom::hint::spin_loop;

/// `core::cell::UnsafeCell` with loom's access API: the pointer is only lent to a
/// closure, so that under loom each access is checked against the others.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> UnsafeCell<T> {
        UnsafeCell(core::cell::UnsafeCell::new(value))
    }

    /// Lends a pointer for writing; the caller proves exclusive access.
    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }

    /// Lends a pointer for reading; the caller proves no write runs meanwhile.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }
}
