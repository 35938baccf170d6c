//! An AC's list of txqs waiting for service: mainline's `active_txqs[ac]`, lock-free.
//!
//! Mainline keeps one list per AC. It inserts at the *head* (a station txq that became
//! backlogged, or was returned with frames, keeps its turn) or at the *tail* (station-
//! less txqs, rotations for a negative deficit or a full AQL budget, idle stations kept
//! for their debt), and takes only from the head. So the list is always the head
//! insertions, newest first, followed by the tail insertions, oldest first: a LIFO
//! stack followed by a FIFO queue. That is what an [`AcList`] is: a [`HeadStack`] and a
//! [`TailRing`], so that a round walks txqs in mainline's order.
//!
//! Both are lock-free in the strict sense: every push and pop is one successful
//! compare-and-swap on shared state, helped along where another thread's step is
//! half done, so a thread preempted anywhere delays no other thread's operation; it
//! delays only the one entry it has popped and not yet pushed back or served.
//!
//! Mainline also removes txqs from the middle of its list (a txq purged or handed out
//! by `ieee80211_txq_may_transmit`). Here removal is lazy: the entry stays and is
//! dropped when a pop meets it; until then the AC counts it as *dead*, so the per-AC
//! PHY limit's txq count ([`AcList::listed`]) leaves it out, as mainline's list walk
//! would.

mod ring;
mod stack;

use crate::sync::{AtomicI64, Ordering};
use ring::TailRing;
pub(crate) use stack::HeadStack;

/// One AC's list of txq slot indices (see the module documentation).
pub(crate) struct AcList {
    head: HeadStack,
    tail: TailRing,
    /// Entries in the list that stand for no listed txq (their txq was removed, or its
    /// slot taken by a new txq that was not woken). Signed: a pop may drop a dead entry
    /// before its removal has counted it.
    dead: AtomicI64,
}

impl AcList {
    /// A list for slot indices `0..slots`; `None` when memory is short.
    pub(crate) fn try_new(slots: usize) -> Option<AcList> {
        Some(AcList { head: HeadStack::try_new(slots)?, tail: TailRing::try_new(slots)?, dead: AtomicI64::new(0) })
    }

    /// Inserts slot `index` at the head (`list_add`).
    pub(crate) fn push_head(&self, index: u32) {
        // Refused only for an index out of range, which no caller passes (slot indices
        // come from the table the list was sized for).
        let _ = self.head.push(index);
    }

    /// Inserts slot `index` at the tail (`list_add_tail`).
    pub(crate) fn push_tail(&self, index: u32) {
        if let Err(index) = self.tail.push(index) {
            // The ring has a cell per slot and a slot is listed at most once, so it
            // cannot be full; if it ever were, the head still takes the entry (the stack
            // cannot fill) rather than lose a txq whose QUEUED bit is set (S1).
            self.push_head(index);
        }
    }

    /// The entry at the head of the list, without taking it (exact when no other
    /// operation runs).
    pub(crate) fn front(&self) -> Option<u32> {
        self.head.top().or_else(|| self.tail.front())
    }

    /// Takes the entry at the head of the list.
    #[inline]
    pub(crate) fn pop(&self) -> Option<u32> {
        self.head.pop().or_else(|| self.tail.pop())
    }

    /// Txqs listed: entries less dead ones (mainline's list length, the per-AC PHY
    /// limit's `n`). Exact between operations. While other contexts run, it is the count
    /// at one instant: the stack's word (with its tag, which every push and pop changes)
    /// is read on both sides of the ring's count, and only a pair that did not move is
    /// used, so an entry moving between the two parts is not counted twice. If the stack
    /// moves on every one of four tries, the smaller of the last two stack counts is
    /// used, which may be off by the entries that moved meanwhile; it never wraps.
    pub(crate) fn listed(&self) -> u32 {
        // Weakened variant, only to prove the loom model catches it: one read of each
        // part, which counts an entry moving from the stack to the ring twice.
        let entries = if weakened!("listed_torn") {
            i64::from(stack::count_of(self.head.len_word())).saturating_add(self.tail.len() as i64)
        } else {
            self.entries()
        };
        // Relaxed: a count; the entries it describes are read through the txq words.
        let live = entries.saturating_sub(self.dead.load(Ordering::Relaxed).max(0));
        u32::try_from(live.max(0)).unwrap_or(u32::MAX)
    }

    /// Entries on the list (dead ones included), read as `listed` explains.
    fn entries(&self) -> i64 {
        let mut before = self.head.len_word();
        let mut entries = 0;
        for attempt in 0..4 {
            let ring = self.tail.len();
            let after = self.head.len_word();
            if after == before || attempt == 3 {
                let stack = stack::count_of(before).min(stack::count_of(after));
                // A u32 and a length bounded by the ring's capacity.
                entries = i64::from(stack).saturating_add(i64::try_from(ring).unwrap_or(i64::MAX));
                break;
            }
            before = after;
        }
        entries
    }

    /// Counts an entry as dead (its txq left the list while the entry stays).
    #[inline]
    pub(crate) fn add_dead(&self, delta: i64) {
        // Relaxed: a count read by `listed`; the txq word orders the entry itself.
        self.dead.fetch_add(delta, Ordering::Relaxed);
    }

    /// Calls `f` with the entries of the tail part from its oldest, without taking them,
    /// until `f` returns false (see [`TailRing::peek_front`]).
    pub(crate) fn peek_tail(&self, f: impl FnMut(u32) -> bool) {
        self.tail.peek_front(f);
    }

    /// Every entry, head first. `&mut self` proves no other operation runs.
    pub(crate) fn entries_at_rest(&mut self) -> impl Iterator<Item = u32> + '_ {
        self.head.entries().chain(self.tail.entries())
    }

    /// The dead count, exact at rest.
    pub(crate) fn dead_at_rest(&mut self) -> i64 {
        self.dead.load(Ordering::Relaxed)
    }
}
