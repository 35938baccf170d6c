//! The simulated hardware's per-ring lock: a test-and-test-and-set spinlock.
//!
//! The crate is `no_std`, so it has no OS lock. This type exists for one purpose only:
//! to model the per-ring spinlocks of the hardware the simulated HAL stands in for
//! (ath11k's `tcl_ring->lock` around a TCL ring's descriptors, the idr lock
//! `tx_ring->tx_idr_lock` around one ring's MSDU table, and the simulated firmware's
//! own state). Each critical section is a few loads and stores on one ring's queue: no
//! allocation beyond a `VecDeque` push, no call out, and never two of these locks held
//! at once except in [`SimHal::advance`](super::SimHal::advance), which takes the
//! firmware's lock and then one ring's at a time (the only nesting, so no cycle).
//!
//! The adapter itself takes no lock: its data path reaches the HAL only through the
//! `&self` role traits, and a HAL implementation decides how it serialises each ring
//! (the kernel module's C side with its own per-ring spinlocks).

use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicBool, Ordering};

/// A spinlock around one ring's state.
pub(crate) struct RingLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the lock hands out the value to one holder at a time (the `locked` flag,
// taken with Acquire and released with Release), so sharing the lock moves the value
// between threads: `T: Send` is all that is needed, as for `std::sync::Mutex`.
unsafe impl<T: Send> Sync for RingLock<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for RingLock<T> {}

impl<T> RingLock<T> {
    pub(crate) const fn new(value: T) -> RingLock<T> {
        RingLock { locked: AtomicBool::new(false), value: UnsafeCell::new(value) }
    }

    /// Spins until the lock is free, then holds it until the guard drops.
    pub(crate) fn lock(&self) -> RingGuard<'_, T> {
        loop {
            if self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                return RingGuard { lock: self };
            }
            while self.locked.load(Ordering::Relaxed) {
                core::hint::spin_loop();
            }
        }
    }
}

impl<T: core::fmt::Debug> core::fmt::Debug for RingLock<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("RingLock { .. }")
    }
}

/// Holds a [`RingLock`]; releases it on drop.
pub(crate) struct RingGuard<'a, T> {
    lock: &'a RingLock<T>,
}

impl<T> Deref for RingGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while this context holds the lock.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for RingGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes this borrow unique.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for RingGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn two_threads_never_hold_the_lock_at_once() {
        let lock = Arc::new(RingLock::new(0u64));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        let mut g = lock.lock();
                        let v = *g;
                        *g = v + 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*lock.lock(), 40_000);
    }
}
