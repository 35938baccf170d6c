//! The end-to-end workload's hardware ring: one bounded ring of descriptors per AC that
//! both contexts push into and the completion context reaps, built as a Wi-Fi NIC's
//! source ring and its completion ring are.
//!
//! * **Pushes** take the ring's producer lock: two contexts that run rounds may push at
//!   once, as ath11k's `tcl_ring->lock` serialises the CPUs that write one TCL ring and
//!   mt76's `q->lock` those that fill one tx queue. A push writes its descriptor and then
//!   publishes the ring's producer position (the head pointer a driver writes to the
//!   hardware).
//! * **Reaps** never take that lock. Completions come back on another ring (ath11k's WBM
//!   completion ring, read under its own `srng->lock` by the NAPI poll alone; mt76's tx
//!   cleanup, under `q->cleanup_lock`): the reaper holds a consumer lock of its own,
//!   which only the completion context takes, reads every descriptor up to the producer
//!   position and publishes its consumer position once per pass.
//!
//! The producer's lock, its position and the consumer's side each sit on lines of their
//! own. A room check (once per frame) reads the consumer's line only when the
//! producer's copy of its position says the ring is full, as drivers cache the other
//! end's pointer; a push reads it once; an idle poll of the reaper writes nothing.
//!
//! Before this ring, the workload's ring took one lock for both: a reap held it while it
//! copied up to a whole NAPI budget of descriptors out (lines the other CPU had just
//! written), and a round's push waited behind it. No driver shares a lock that way (the
//! nearest, ath11k's `tx_idr_lock`, is held for one buffer id at a time on each side),
//! and `perf` found a round at 256 stations spending most of its own time (outside the
//! scheduler's calls) waiting there, in both implementations, which pulled their ratio
//! toward 1. See `benches/LOG.md`, "A ring built like a NIC's".

use crate::padded::Padded;
use crate::spinlock::SpinLock;
use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The producer's lock, with its copy of the consumer's position for room checks.
#[derive(Debug, Default)]
struct Producer {
    /// Serialises the pushers.
    lock: SpinLock<()>,
    /// The consumer's position as a room check last read it. Relaxed, and only a hint:
    /// a stale copy understates the room, and is then read again; a push reads the
    /// position itself.
    seen_reaped: AtomicUsize,
}

/// The consumer's position and its lock, written together once per pass that reaps.
#[derive(Debug, Default)]
struct Consumer {
    /// Serialises the reapers.
    lock: SpinLock<()>,
    /// The next position to reap (written under the lock).
    reaped: AtomicUsize,
}

/// A bounded ring of `T` with many producers (behind the producer lock) and one
/// consumer at a time (behind the consumer lock).
pub struct TxRing<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    mask: usize,
    /// Descriptors a room check allows in flight ([`has_room`](Self::has_room)); the
    /// slots beyond it are slack for a push racing a positive check.
    room: usize,
    /// The next position to push (written under the producer lock). On a line of its
    /// own: the reaper polls it, and a poll must not pull the lock's line away from
    /// the pusher, whose next push would wait for it.
    pushed: Padded<AtomicUsize>,
    producer: Padded<Producer>,
    consumer: Padded<Consumer>,
}

// SAFETY: a slot is written only by the producer that holds the producer lock, for a
// position the consumer has released (its Release store of its position, Acquired by the
// producer), and read only by the consumer that holds the consumer lock, for a position
// the producer has published (its Release store, Acquired by the consumer): each slot
// has one owner at a time, and values move between threads, so `T: Send` suffices.
unsafe impl<T: Send> Sync for TxRing<T> {}
// SAFETY: owning the ring owns its values.
unsafe impl<T: Send> Send for TxRing<T> {}

impl<T> TxRing<T> {
    /// An empty ring whose room check allows `room` descriptors in flight, with as many
    /// again as slack (capacity `2 * room`, rounded up to a power of two).
    pub fn new(room: usize) -> TxRing<T> {
        let capacity = room.max(1).saturating_mul(2).next_power_of_two();
        TxRing {
            slots: (0..capacity).map(|_| UnsafeCell::new(MaybeUninit::uninit())).collect(),
            mask: capacity - 1,
            room,
            pushed: Padded::default(),
            producer: Padded::default(),
            consumer: Padded::default(),
        }
    }

    /// Whether fewer than `room` descriptors are in flight as this context sees them,
    /// without a lock (as a driver compares the ring's head and tail pointers). With `P`
    /// contexts that each check before every push, at most `room + P - 1` are ever in
    /// flight, which the slack holds for `P <= room + 1`.
    #[inline]
    pub fn has_room(&self) -> bool {
        let pos = self.pushed.load(Ordering::Relaxed);
        let seen = self.producer.seen_reaped.load(Ordering::Relaxed);
        if pos.wrapping_sub(seen) < self.room {
            return true;
        }
        let reaped = self.consumer.reaped.load(Ordering::Relaxed);
        if reaped != seen {
            // Only when it moved: a ring sitting at its room would otherwise have both
            // contexts writing the lock's line on every check.
            self.producer.seen_reaped.store(reaped, Ordering::Relaxed);
        }
        pos.wrapping_sub(reaped) < self.room
    }

    /// Descriptors pushed and not yet reaped (a snapshot).
    pub fn len(&self) -> usize {
        // The consumer's position first, and Acquire: the producer's position read after
        // it is then at least the one the reap saw, so the difference cannot go negative
        // (loom found it could with both Relaxed, on a weakly ordered machine).
        let reaped = self.consumer.reaped.load(Ordering::Acquire);
        self.pushed.load(Ordering::Relaxed).wrapping_sub(reaped)
    }

    /// Whether no descriptor is in use (a snapshot).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pushes `value`. Room is checked before ([`has_room`](Self::has_room)), and the
    /// slack takes the pushes racing a check, so a push never meets a full ring in the
    /// workload; one that did would spin until a reap frees a slot, which deadlocks if
    /// the reaping context is the one pushing, or is waiting for this push's lock.
    #[inline]
    pub fn push(&self, value: T) {
        let _held = self.producer.lock.lock();
        let pos = self.pushed.load(Ordering::Relaxed);
        // Acquire: the reaper read the slot out before it released its position. Once
        // per push, on a line the reaper writes once per pass.
        while pos.wrapping_sub(self.consumer.reaped.load(Ordering::Acquire)) > self.mask {
            core::hint::spin_loop();
        }
        // SAFETY: the slot is free (the reaper is past it) and the producer lock makes
        // it this context's alone until the position is published.
        unsafe { (*self.slots[pos & self.mask].get()).write(value) };
        // Release: the descriptor before the position the reaper Acquires.
        self.pushed.store(pos.wrapping_add(1), Ordering::Release);
    }

    /// Moves up to `budget` descriptors, oldest first, into `out`; how many.
    #[inline]
    pub fn reap(&self, out: &mut Vec<T>, budget: usize) -> usize {
        // An idle poll writes nothing: a store here would pull the line away from the
        // pusher, which reads the consumer's position on every push.
        if self.pushed.load(Ordering::Relaxed) == self.consumer.reaped.load(Ordering::Relaxed) {
            return 0;
        }
        let _held = self.consumer.lock.lock();
        let from = self.consumer.reaped.load(Ordering::Relaxed);
        // Acquire: the descriptors written before the position was published.
        let n = self.pushed.load(Ordering::Acquire).wrapping_sub(from).min(budget);
        out.reserve(n);
        for k in 0..n {
            // SAFETY: published (Acquired above) and not yet reaped; the consumer lock
            // makes it ours alone to read out.
            out.push(unsafe { (*self.slots[from.wrapping_add(k) & self.mask].get()).assume_init_read() });
        }
        // Release: the slots were read out before a producer reuses them.
        self.consumer.reaped.store(from.wrapping_add(n), Ordering::Release);
        n
    }
}

impl<T> Drop for TxRing<T> {
    fn drop(&mut self) {
        let (from, to) = (*self.consumer.0.reaped.get_mut(), *self.pushed.0.get_mut());
        let mut pos = from;
        while pos != to {
            // SAFETY: published and not reaped; `&mut self` excludes every other access.
            unsafe { self.slots[pos & self.mask].get_mut().assume_init_drop() };
            pos = pos.wrapping_add(1);
        }
    }
}

impl<T> core::fmt::Debug for TxRing<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TxRing").field("len", &self.len()).field("room", &self.room).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn descriptors_come_back_in_order_across_wrap_arounds() {
        let ring = TxRing::new(4);
        let mut out = Vec::new();
        let mut next = 0u32;
        for lap in 0..20 {
            while ring.has_room() {
                ring.push(next);
                next += 1;
            }
            assert_eq!(ring.len(), 4, "lap {lap}: the room check stops at the room");
            // The slack takes a push past the room check.
            ring.push(next);
            next += 1;
            assert_eq!(ring.reap(&mut out, 3), 3);
        }
        while ring.reap(&mut out, 64) > 0 {}
        assert!(ring.is_empty());
        assert_eq!(out, (0..next).collect::<Vec<_>>());
    }

    #[test]
    fn dropping_the_ring_drops_what_it_holds_once() {
        let value = Arc::new(());
        let ring = TxRing::new(8);
        for _ in 0..6 {
            ring.push(value.clone());
        }
        let mut out = Vec::new();
        assert_eq!(ring.reap(&mut out, 2), 2);
        drop(ring);
        assert_eq!(Arc::strong_count(&value), 3, "two reaped, four dropped with the ring");
    }

    #[test]
    fn two_producers_and_a_reaper_lose_and_duplicate_nothing() {
        const PER: u32 = if cfg!(miri) { 300 } else { 100_000 };
        let ring = TxRing::new(16);
        let mut seen = vec![false; 2 * PER as usize];
        std::thread::scope(|s| {
            for p in 0..2u32 {
                let ring = &ring;
                s.spawn(move || {
                    for k in 0..PER {
                        while !ring.has_room() {
                            std::hint::spin_loop();
                        }
                        ring.push(p * PER + k);
                    }
                });
            }
            let mut out = Vec::new();
            let mut last = [None::<u32>; 2];
            let mut got = 0;
            while got < 2 * PER {
                out.clear();
                got += ring.reap(&mut out, 64) as u32;
                for &v in &out {
                    let p = (v / PER) as usize;
                    assert!(last[p].is_none_or(|l| l < v), "each producer's order is kept");
                    last[p] = Some(v);
                    assert!(!std::mem::replace(&mut seen[v as usize], true), "{v} reaped twice");
                }
            }
        });
        assert!(seen.iter().all(|&s| s), "every descriptor reaped");
    }
}
