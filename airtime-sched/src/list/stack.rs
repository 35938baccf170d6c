//! The head part of an AC's list: a lock-free LIFO stack of txq slot indices
//! (Treiber's stack, with the links in an array indexed by slot).
//!
//! # Invariants
//! * An index is in the stack at most once (the txq word's per-AC `QUEUED` bit guards
//!   every push), so `links[i]` belongs to the one entry of slot `i` while it is here.
//! * `top` holds the top index, the entry count and a tag that every push and pop
//!   changes, in one word: a pop whose snapshot of `top` is stale (the top was popped
//!   and pushed again meanwhile, with another link) fails its compare-and-swap instead
//!   of installing a stale link (ABA). The tag is 32 bits: a stale snapshot passes only
//!   after exactly 2^32 further pushes and pops during one preemption.

use crate::sync::{AtomicU32, AtomicU64, Ordering};
use alloc::boxed::Box;

/// No entry (`top` of an empty stack; the link of the bottom entry).
const NIL: u32 = 0xffff;

#[inline]
const fn pack(index: u32, count: u32, tag: u32) -> u64 {
    ((tag as u64) << 32) | (((count & 0xffff) as u64) << 16) | (index & 0xffff) as u64
}

#[inline]
const fn index_of(word: u64) -> u32 {
    (word & 0xffff) as u32
}

#[inline]
pub(super) const fn count_of(word: u64) -> u32 {
    ((word >> 16) & 0xffff) as u32
}

#[inline]
const fn tag_of(word: u64) -> u32 {
    (word >> 32) as u32
}

pub(crate) struct HeadStack {
    top: AtomicU64,
    links: Box<[AtomicU32]>,
}

impl HeadStack {
    /// A stack for slot indices `0..slots` (at most 65535 slots: `NIL` is the 65536th);
    /// `None` when memory is short.
    pub(crate) fn try_new(slots: usize) -> Option<HeadStack> {
        let links = crate::try_alloc::boxed_slice(slots, |_| AtomicU32::new(NIL))?;
        Some(HeadStack { top: AtomicU64::new(pack(NIL, 0, 0)), links })
    }

    /// [`try_new`](Self::try_new), for tests.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn new(slots: usize) -> HeadStack {
        HeadStack::try_new(slots).expect("memory for a test stack")
    }

    /// Pushes slot `index` on top. One compare-and-swap: a push preempted before it hides
    /// nothing and holds nothing. `Err(index)` only for an index out of range.
    pub(crate) fn push(&self, index: u32) -> Result<(), u32> {
        let Some(link) = self.links.get(index as usize) else { return Err(index) };
        let mut top = self.top.load(Ordering::Relaxed);
        loop {
            link.store(index_of(top), Ordering::Relaxed);
            let new = pack(index, count_of(top).wrapping_add(1), tag_of(top).wrapping_add(1));
            // Release: a pop that Acquires this top sees the link stored above.
            match self.top.compare_exchange_weak(top, new, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return Ok(()),
                Err(seen) => top = seen,
            }
        }
    }

    /// Pops the top entry, `None` if the stack is empty.
    pub(crate) fn pop(&self) -> Option<u32> {
        // Acquire: pairs with the push's Release, so the top's link is visible.
        let mut top = self.top.load(Ordering::Acquire);
        loop {
            let index = index_of(top);
            let link = self.links.get(index as usize)?;
            let below = link.load(Ordering::Relaxed);
            let new = pack(below, count_of(top).saturating_sub(1), tag_of(top).wrapping_add(1));
            // Acquire on failure: the next try reads the link of the new top.
            match self.top.compare_exchange_weak(top, new, Ordering::Acquire, Ordering::Acquire) {
                Ok(_) => return Some(index),
                Err(seen) => top = seen,
            }
        }
    }

    /// The top entry, without taking it.
    pub(crate) fn top(&self) -> Option<u32> {
        let index = index_of(self.top.load(Ordering::Acquire));
        (index != NIL).then_some(index)
    }

    /// Entries in the stack, exact at the instant of the load.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn len(&self) -> u32 {
        count_of(self.len_word())
    }

    /// The top word, whose [`count_of`] is the number of entries: a reader that loads it
    /// twice knows no push or pop ran in between if the two are equal (the tag moves).
    #[inline]
    pub(super) fn len_word(&self) -> u64 {
        // Acquire: orders the ring reads that follow after this load.
        self.top.load(Ordering::Acquire)
    }

    /// The entries from the top down. `&mut self` proves no push or pop runs.
    pub(crate) fn entries(&mut self) -> impl Iterator<Item = u32> + '_ {
        let mut next = index_of(self.top.load(Ordering::Relaxed));
        let mut left = count_of(self.top.load(Ordering::Relaxed));
        core::iter::from_fn(move || {
            if next == NIL || left == 0 {
                return None;
            }
            left = left.wrapping_sub(1); // left > 0 above
            let index = next;
            next = self.links.get(index as usize).map_or(NIL, |l| l.load(Ordering::Relaxed));
            Some(index)
        })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn last_pushed_is_first_popped() {
        let s = HeadStack::new(4);
        assert_eq!(s.pop(), None);
        for i in 0..4 {
            s.push(i).unwrap();
        }
        assert_eq!(s.len(), 4);
        assert_eq!(s.push(4), Err(4), "an index past the slots is refused, not stored");
        for i in (0..4).rev() {
            assert_eq!(s.pop(), Some(i));
        }
        assert_eq!((s.pop(), s.len()), (None, 0));
    }

    #[test]
    fn a_popped_entry_pushed_again_gets_a_new_link() {
        let mut s = HeadStack::new(3);
        s.push(0).unwrap();
        s.push(1).unwrap();
        assert_eq!(s.pop(), Some(1));
        s.push(2).unwrap();
        s.push(1).unwrap();
        assert_eq!(s.entries().collect::<Vec<_>>(), [1, 2, 0]);
    }

    #[test]
    fn concurrent_pushes_and_pops_lose_and_duplicate_nothing() {
        extern crate std;
        use std::sync::Arc;
        use std::sync::atomic::AtomicBool;
        // Each thread owns half the indices and cycles them through the shared stack;
        // every index it pops must be one that was pushed and not yet popped.
        let s = Arc::new(HeadStack::new(64));
        let in_stack: Arc<Vec<AtomicBool>> = Arc::new((0..64).map(|_| AtomicBool::new(false)).collect());
        let threads: Vec<_> = (0..2u32)
            .map(|t| {
                let (s, in_stack) = (s.clone(), in_stack.clone());
                std::thread::spawn(move || {
                    let mine: Vec<u32> = (0..32).map(|i| i * 2 + t).collect();
                    let rounds = if cfg!(miri) { 20 } else { 2000 };
                    for round in 0..rounds {
                        for &i in mine.iter().skip(round % 3) {
                            if !in_stack[i as usize].swap(true, Ordering::SeqCst) {
                                s.push(i).unwrap();
                            }
                        }
                        for _ in 0..20 {
                            if let Some(i) = s.pop() {
                                assert!(in_stack[i as usize].swap(false, Ordering::SeqCst), "{i} popped twice");
                            }
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut s = Arc::try_unwrap(s).unwrap_or_else(|_| panic!("joined"));
        let left: Vec<u32> = s.entries().collect();
        assert_eq!(left.len() as u32, s.len());
        for (i, flag) in in_stack.iter().enumerate() {
            assert_eq!(flag.load(Ordering::SeqCst), left.contains(&(i as u32)), "index {i}");
        }
    }
}
