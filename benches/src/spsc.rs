//! A bounded single-producer single-consumer ring of `u64`, standing in for the hardware
//! ring between the wake context (which pushes charged frames) and the completion
//! context (which reaps them) in the two-thread benchmark. Built from atomics only, so
//! both schedulers pay the same small, uncontended hand-off cost.

use std::sync::atomic::{AtomicU64, Ordering};

/// The ring. One thread may push, one other thread may pop.
#[derive(Debug)]
pub struct Spsc {
    slots: Box<[AtomicU64]>,
    mask: u64,
    /// Next position to pop (written by the consumer only).
    head: AtomicU64,
    /// Next position to push (written by the producer only).
    tail: AtomicU64,
}

impl Spsc {
    /// A ring holding `capacity` (rounded up to a power of two) entries.
    pub fn new(capacity: usize) -> Spsc {
        let cap = capacity.max(2).next_power_of_two();
        Spsc {
            slots: (0..cap).map(|_| AtomicU64::new(0)).collect(),
            mask: cap as u64 - 1,
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
        }
    }

    /// Appends `value`; `Err(value)` when full. Producer only.
    #[inline]
    pub fn push(&self, value: u64) -> Result<(), u64> {
        let tail = self.tail.load(Ordering::Relaxed);
        // Acquire: the consumer's Release of `head` freed the slot we are about to reuse.
        if tail.wrapping_sub(self.head.load(Ordering::Acquire)) > self.mask {
            return Err(value);
        }
        self.slots[(tail & self.mask) as usize].store(value, Ordering::Relaxed);
        // Release: publishes the slot's value to the consumer's Acquire of `tail`.
        self.tail.store(tail.wrapping_add(1), Ordering::Release);
        Ok(())
    }

    /// Takes the oldest entry. Consumer only.
    #[inline]
    pub fn pop(&self) -> Option<u64> {
        let head = self.head.load(Ordering::Relaxed);
        // Acquire: pairs with the producer's Release of `tail`.
        if head == self.tail.load(Ordering::Acquire) {
            return None;
        }
        let value = self.slots[(head & self.mask) as usize].load(Ordering::Relaxed);
        // Release: the slot may be overwritten only after we have read it.
        self.head.store(head.wrapping_add(1), Ordering::Release);
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_is_fifo_refuses_when_full_and_hands_values_across_threads_in_order() {
        let r = Spsc::new(3);
        for v in 0..4 {
            r.push(v).unwrap();
        }
        assert_eq!(r.push(9), Err(9));
        assert_eq!((r.pop(), r.pop()), (Some(0), Some(1)));

        let r = Spsc::new(64);
        std::thread::scope(|s| {
            s.spawn(|| {
                for v in 0..100_000u64 {
                    while r.push(v).is_err() {
                        std::hint::spin_loop();
                    }
                }
            });
            let mut next = 0;
            while next < 100_000 {
                if let Some(v) = r.pop() {
                    assert_eq!(v, next);
                    next += 1;
                }
            }
        });
    }
}
