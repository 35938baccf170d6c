//! A spinlock like the kernel's `spin_lock_bh`, for the locks the end-to-end workload
//! adds (the baseline's radio-wide `fq->lock`, and the ring lock both implementations
//! share).
//!
//! The kernel's spinlock never sleeps and never gives its CPU away: a waiter spins until
//! the holder, which cannot be preempted while it holds the lock, releases it. A
//! `parking_lot::Mutex` spins only briefly, then calls `sched_yield` a few times, then
//! sleeps on a futex: on an idle machine that costs little, but on a loaded one each
//! yield can hand the CPU to another process for a whole time slice, so the lock taken
//! most often (the baseline's radio-wide one) would be charged for the machine's load
//! rather than for its contention. This lock spins (test and test-and-set, with the CPU's
//! pause hint) and nothing else, as the kernel's does. What it cannot copy is the
//! kernel's preemption-off: a holder preempted by another process keeps its waiter
//! spinning, which the benchmark's pinned threads make rare but not impossible.

use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// A value behind a spinlock.
#[derive(Debug, Default)]
pub struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the lock gives one thread at a time access to the value, so sharing the lock
// moves `T` between threads: `T: Send` suffices, as for `std::sync::Mutex`.
unsafe impl<T: Send> Sync for SpinLock<T> {}
// SAFETY: owning the lock owns the value.
unsafe impl<T: Send> Send for SpinLock<T> {}

impl<T> SpinLock<T> {
    /// An unlocked lock around `value`.
    pub const fn new(value: T) -> Self {
        SpinLock { locked: AtomicBool::new(false), value: UnsafeCell::new(value) }
    }

    /// Takes the lock, spinning until it is free.
    #[inline]
    pub fn lock(&self) -> SpinGuard<'_, T> {
        loop {
            // Acquire: the last holder's writes to the value come before ours.
            if !self.locked.swap(true, Ordering::Acquire) {
                return SpinGuard { lock: self };
            }
            // Wait on a read (the line stays shared) until it looks free.
            while self.locked.load(Ordering::Relaxed) {
                core::hint::spin_loop();
            }
        }
    }

    /// The value, with the lock owned.
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }
}

/// The lock, held; released on drop.
#[derive(Debug)]
pub struct SpinGuard<'a, T> {
    lock: &'a SpinLock<T>,
}

impl<T> Deref for SpinGuard<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock, so no `&mut` to the value exists elsewhere.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for SpinGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock, and `&mut self` makes this borrow unique.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // Release: our writes to the value come before the next holder's Acquire.
        self.lock.locked.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_threads_adding_under_the_lock_lose_no_update() {
        let lock = SpinLock::new(0u64);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..100_000 {
                        *lock.lock() += 1;
                    }
                });
            }
        });
        assert_eq!(lock.into_inner(), 200_000);
    }
}
