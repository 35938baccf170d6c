//! A bounded single-producer single-consumer ring of `u64`, standing in for the hardware
//! ring between the wake context (which pushes charged frames) and the completion
//! context (which reaps them) in the two-thread benchmark. Built from atomics only, so
//! both schedulers pay the same small hand-off cost.
//!
//! Each side's position sits on its own lines beside its cached copy of the other
//! side's, so a push or pop reads the other side's line only when its copy says the
//! ring is full or empty (as hardware rings cache the other end's pointer). With both
//! positions on one line, every push and pop moved that line between the CPUs: a cost
//! the benchmark charged equally to both schedulers, which pulled their ratio toward 1.

use crate::padded::Padded;
use std::sync::atomic::{AtomicU64, Ordering};

/// One side's position and its last-seen copy of the other side's.
#[derive(Debug, Default)]
struct End {
    /// This side's next position (written by this side only).
    pos: AtomicU64,
    /// The other side's position when this side last read it (this side's only).
    seen: AtomicU64,
}

/// The ring. One thread may push, one other thread may pop.
#[derive(Debug)]
pub struct Spsc {
    slots: Box<[AtomicU64]>,
    mask: u64,
    /// The consumer's end: next position to pop; last tail seen.
    head: Padded<End>,
    /// The producer's end: next position to push; last head seen.
    tail: Padded<End>,
}

impl Spsc {
    /// A ring holding `capacity` (rounded up to a power of two) entries.
    pub fn new(capacity: usize) -> Spsc {
        let cap = capacity.max(2).next_power_of_two();
        Spsc {
            slots: (0..cap).map(|_| AtomicU64::new(0)).collect(),
            mask: cap as u64 - 1,
            head: Padded::default(),
            tail: Padded::default(),
        }
    }

    /// Appends `value`; `Err(value)` when full. Producer only.
    #[inline]
    pub fn push(&self, value: u64) -> Result<(), u64> {
        if self.push_all(&[value]) { Ok(()) } else { Err(value) }
    }

    /// Appends all of `values` and makes them visible together (as hardware reports a
    /// PPDU's completions together), or nothing and false if there is no room for all.
    /// Producer only.
    pub fn push_all(&self, values: &[u64]) -> bool {
        let n = values.len() as u64;
        if n > self.mask + 1 {
            return false;
        }
        let tail = self.tail.pos.load(Ordering::Relaxed);
        if tail.wrapping_add(n).wrapping_sub(self.tail.seen.load(Ordering::Relaxed)) > self.mask + 1 {
            // Acquire: the consumer's Release of `head` freed the slots we will reuse.
            let head = self.head.pos.load(Ordering::Acquire);
            self.tail.seen.store(head, Ordering::Relaxed);
            if tail.wrapping_add(n).wrapping_sub(head) > self.mask + 1 {
                return false;
            }
        }
        for (k, &v) in values.iter().enumerate() {
            self.slots[(tail.wrapping_add(k as u64) & self.mask) as usize].store(v, Ordering::Relaxed);
        }
        // Release: publishes the slots' values to the consumer's Acquire of `tail`.
        self.tail.pos.store(tail.wrapping_add(n), Ordering::Release);
        true
    }

    /// Takes the oldest entry. Consumer only.
    #[inline]
    pub fn pop(&self) -> Option<u64> {
        let head = self.head.pos.load(Ordering::Relaxed);
        if head == self.head.seen.load(Ordering::Relaxed) {
            // Acquire: pairs with the producer's Release of `tail`.
            let tail = self.tail.pos.load(Ordering::Acquire);
            self.head.seen.store(tail, Ordering::Relaxed);
            if head == tail {
                return None;
            }
        }
        let value = self.slots[(head & self.mask) as usize].load(Ordering::Relaxed);
        // Release: the slot may be overwritten only after we have read it.
        self.head.pos.store(head.wrapping_add(1), Ordering::Release);
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
        assert!(!r.push_all(&[9]), "no room: nothing is pushed");
        assert_eq!((r.pop(), r.pop()), (Some(0), Some(1)));
        assert!(!r.push_all(&[4, 5, 6]), "room for two, not three");
        assert!(r.push_all(&[4, 5]));
        assert_eq!((r.pop(), r.pop(), r.pop(), r.pop(), r.pop()), (Some(2), Some(3), Some(4), Some(5), None));
        assert!(!r.push_all(&[0; 5]), "more than the ring holds");

        let r = Spsc::new(64);
        std::thread::scope(|s| {
            s.spawn(|| {
                for v in (0..100_000u64).step_by(4) {
                    if v % 8 == 0 {
                        while !r.push_all(&[v, v + 1, v + 2, v + 3]) {
                            std::hint::spin_loop();
                        }
                        continue;
                    }
                    for k in v..v + 4 {
                        while r.push(k).is_err() {
                            std::hint::spin_loop();
                        }
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
