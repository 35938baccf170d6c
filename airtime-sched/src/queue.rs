//! A bounded lock-free multi-producer multi-consumer FIFO of `u32` entries
//! (Dmitry Vyukov's sequence-numbered ring).
//!
//! The scheduler keeps, per AC, two of these: the *front* queue (txqs that just became
//! backlogged, or were returned after making progress: mac80211's head insertion) and
//! the *back* queue (txqs rotated for a negative deficit or a full AQL budget: its tail
//! insertion). A txq has at most one entry in all queues at any time (its state word's
//! `QUEUED` bit guards the push), so a queue sized to the txq capacity never fills.
//!
//! # Invariants
//! Each cell's `seq` is `pos` when the cell is free for the push at position `pos`, and
//! `pos + 1` when it holds the value pushed at `pos`. `head`/`tail` only grow (wrapping).

use crate::sync::{AtomicU32, AtomicU64, Ordering};
use alloc::boxed::Box;
use alloc::vec::Vec;

struct Cell {
    seq: AtomicU64,
    value: AtomicU32,
}

pub(crate) struct MpmcQueue {
    cells: Box<[Cell]>,
    mask: u64,
    /// Next position to push.
    tail: AtomicU64,
    /// Next position to pop.
    head: AtomicU64,
}

impl MpmcQueue {
    /// A queue holding at least `capacity` entries (rounded up to a power of two).
    pub(crate) fn new(capacity: usize) -> MpmcQueue {
        let cap = capacity.max(2).next_power_of_two();
        let cells: Vec<Cell> =
            (0..cap as u64).map(|i| Cell { seq: AtomicU64::new(i), value: AtomicU32::new(0) }).collect();
        MpmcQueue {
            cells: cells.into_boxed_slice(),
            mask: cap as u64 - 1,
            tail: AtomicU64::new(0),
            head: AtomicU64::new(0),
        }
    }

    #[inline]
    fn cell(&self, pos: u64) -> &Cell {
        // The mask keeps the index below the (power-of-two) length.
        &self.cells[(pos & self.mask) as usize]
    }

    /// Appends `value`; `Err(value)` if the queue is full.
    pub(crate) fn push(&self, value: u32) -> Result<(), u32> {
        let mut pos = self.tail.load(Ordering::Relaxed);
        loop {
            let cell = self.cell(pos);
            // Acquire: pairs with the Release store of a pop that freed this cell, so our
            // value store cannot be overtaken by that pop's read of the old value.
            let seq = cell.seq.load(Ordering::Acquire);
            let diff = seq.wrapping_sub(pos) as i64;
            if diff == 0 {
                match self.tail.compare_exchange_weak(pos, pos.wrapping_add(1), Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => {
                        cell.value.store(value, Ordering::Relaxed);
                        // Release: publishes the value to the pop that Acquires this seq.
                        cell.seq.store(pos.wrapping_add(1), Ordering::Release);
                        return Ok(());
                    }
                    Err(now) => pos = now,
                }
            } else if diff < 0 {
                return Err(value);
            } else {
                pos = self.tail.load(Ordering::Relaxed);
            }
        }
    }

    /// Takes the oldest entry, `None` if the queue is empty.
    pub(crate) fn pop(&self) -> Option<u32> {
        let mut pos = self.head.load(Ordering::Relaxed);
        loop {
            let cell = self.cell(pos);
            // Acquire: pairs with the push's Release store, so the value is visible.
            let seq = cell.seq.load(Ordering::Acquire);
            let diff = seq.wrapping_sub(pos.wrapping_add(1)) as i64;
            if diff == 0 {
                match self.head.compare_exchange_weak(pos, pos.wrapping_add(1), Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => {
                        let value = cell.value.load(Ordering::Relaxed);
                        // Release: hands the cell back to the push one lap later.
                        cell.seq.store(pos.wrapping_add(self.mask).wrapping_add(1), Ordering::Release);
                        return Some(value);
                    }
                    Err(now) => pos = now,
                }
            } else if diff < 0 {
                return None;
            } else {
                pos = self.head.load(Ordering::Relaxed);
            }
        }
    }

    /// Entries currently queued (a snapshot; exact when no push or pop runs).
    pub(crate) fn len(&self) -> u64 {
        let tail = self.tail.load(Ordering::Relaxed);
        let head = self.head.load(Ordering::Relaxed);
        tail.wrapping_sub(head).min(self.mask + 1)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn fifo_order_and_capacity() {
        let q = MpmcQueue::new(3);
        assert_eq!(q.pop(), None);
        for v in 1..=4 {
            q.push(v).unwrap();
        }
        assert_eq!(q.push(5), Err(5), "a queue of capacity 4 refuses a fifth entry");
        assert_eq!(q.len(), 4);
        for v in 1..=4 {
            assert_eq!(q.pop(), Some(v));
        }
        assert_eq!(q.pop(), None);
        // Wrap around many laps.
        for v in 0..1000 {
            q.push(v).unwrap();
            assert_eq!(q.pop(), Some(v));
        }
    }

    #[test]
    fn concurrent_push_pop_loses_and_duplicates_nothing() {
        extern crate std;
        use std::sync::Arc;
        let q = Arc::new(MpmcQueue::new(64));
        let per = 20_000u32;
        let producers: Vec<_> = (0..2)
            .map(|t| {
                let q = q.clone();
                std::thread::spawn(move || {
                    for i in 0..per {
                        let v = t * per + i;
                        while q.push(v).is_err() {
                            std::thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        let mut seen = alloc::vec![false; (2 * per) as usize];
        let mut got = 0;
        while got < 2 * per {
            if let Some(v) = q.pop() {
                assert!(!seen[v as usize], "duplicate {v}");
                seen[v as usize] = true;
                got += 1;
            }
        }
        for p in producers {
            p.join().unwrap();
        }
        assert!(seen.iter().all(|&s| s));
    }
}

impl MpmcQueue {
    /// The queued entries in order. `&mut self` proves no push or pop runs.
    pub(crate) fn entries(&mut self) -> impl Iterator<Item = u32> + '_ {
        let head = self.head.load(Ordering::Relaxed);
        let len = self.len();
        (0..len).map(move |i| self.cell(head.wrapping_add(i)).value.load(Ordering::Relaxed))
    }
}
