//! A minimal spinlock for `no_std`: the stand-in for the kernel's `spin_lock_bh` on the
//! few structures mt76 itself locks (the token table's `token_lock`, a DMA queue's
//! `q->lock` in the simulated HAL, a station's WTBL snapshot).
//!
//! Critical sections are a few loads and stores, so a waiter spins for a bounded time
//! unless the holder is preempted (in the kernel the caller of a process-context entry
//! point must have bottom halves disabled, as `spin_lock_bh` would: this lock cannot
//! disable them itself, and a softirq spinning on it over the holder it interrupted
//! would deadlock the CPU; in tests a preempted holder only slows the waiter down). The one section
//! that calls out, the WTBL poll's reads and clear of a station's counters (which can
//! busy-wait on the hardware), is only ever tried: a second poll skips the station.

use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use core::sync::atomic::{AtomicBool, Ordering};

/// A test-and-test-and-set spinlock around a `T`.
pub struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the lock hands out `&mut T` to one holder at a time, so sharing the lock
// moves `T` between threads: `T: Send` is all it needs (as for `std::sync::Mutex`).
unsafe impl<T: Send> Sync for SpinLock<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for SpinLock<T> {}

impl<T> SpinLock<T> {
    /// A lock around `value`.
    pub const fn new(value: T) -> SpinLock<T> {
        SpinLock { locked: AtomicBool::new(false), value: UnsafeCell::new(value) }
    }

    /// Takes the lock, spinning while another context holds it.
    pub fn lock(&self) -> SpinGuard<'_, T> {
        loop {
            // Acquire: the last holder's writes come before ours.
            if self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                return SpinGuard { lock: self };
            }
            while self.locked.load(Ordering::Relaxed) {
                core::hint::spin_loop();
            }
        }
    }

    /// Takes the lock if no other context holds it.
    pub fn try_lock(&self) -> Option<SpinGuard<'_, T>> {
        // Acquire: the last holder's writes come before ours.
        self.locked.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).ok()?;
        Some(SpinGuard { lock: self })
    }
}

impl<T: core::fmt::Debug> core::fmt::Debug for SpinLock<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SpinLock").finish_non_exhaustive()
    }
}

/// The holder's access; the lock is released when it is dropped.
pub struct SpinGuard<'a, T> {
    lock: &'a SpinLock<T>,
}

impl<T> Deref for SpinGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while this context holds the lock.
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for SpinGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as above, and `&mut self` makes this the only reference.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    fn drop(&mut self) {
        // Release: our writes come before the next holder's Acquire.
        self.lock.locked.store(false, Ordering::Release);
    }
}
