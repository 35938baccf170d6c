//! What a [`TxqTable`](crate::TxqTable) needs from the txq words: holds for enqueues in
//! flight, and the stack of removed txqs whose kept queues wait to be handed back.
//!
//! An enqueue that pushes into the intake holds its txq (a count in the word) from its
//! check that the txq is live until its wake, which ends the hold in the same
//! compare-and-swap. A slot is reused only with no hold, so an enqueue can never put a
//! frame in the intake of the slot's next occupant. An enqueue that writes straight
//! into the queue takes no hold: it holds the queue's lock, under which alone a removed
//! txq's queue is handed back, and checks the txq live once it has it (`is_kept_live`).
//!
//! Removal clears LIVE; the context that holds the txq last (the remover, or the server
//! when it returns the txq) pushes the slot on `retired`, and the slot stays `KEPT` (not
//! reusable) until the table pops it and takes its queue (under its queue lock). An
//! enqueue whose wake finds the txq removed still holds it, so it can take back whatever
//! is left in the intake before the slot can be reused.

use super::{SchedError, Scheduler};

/// Why an enqueue may not hold a txq.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HoldRefused {
    /// Removed, never issued, or not kept by a table.
    Gone,
    /// 65535 enqueues already in flight on it.
    Busy,
}
use crate::slots::{TxqSlot, gen_of, txq};
use crate::sync::Ordering;
use crate::{Instant, TxqId};

impl Scheduler {
    /// Holds txq `id` for an enqueue: refused unless it is live (and kept by a table).
    pub(crate) fn hold_txq(&self, id: TxqId) -> Result<(), HoldRefused> {
        let slot = self.txqs.get(id.index()).ok_or(HoldRefused::Gone)?;
        let mut word = slot.word.load(Ordering::Relaxed);
        loop {
            if !kept_live(word, id) {
                return Err(HoldRefused::Gone);
            }
            if word & txq::PRODUCERS == txq::PRODUCERS {
                // 65535 enqueues in flight on one txq: more than any machine has CPUs.
                return Err(HoldRefused::Busy);
            }
            // Acquire: the queue the table put in the cell before LIVE was published.
            match slot.word.compare_exchange_weak(
                word,
                word.wrapping_add(txq::PRODUCER),
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(()),
                Err(seen) => word = seen,
            }
        }
    }

    /// The slot of txq `id` if its word, read Relaxed, says the txq is live and kept by
    /// a table: an enqueue's filter before it tries the queue lock. An id already stale
    /// when the enqueue starts (its txq removed before, in this context's view: coherence
    /// alone makes that removal visible) is refused without touching the lock, which
    /// would otherwise defer the hand-back of its removed txq or cost the slot's next
    /// txq a turn. The check under the lock ([`is_kept_live`](Self::is_kept_live))
    /// decides.
    #[inline]
    pub(crate) fn kept_live_slot(&self, id: TxqId) -> Option<&TxqSlot> {
        self.txqs.get(id.index()).filter(|slot| kept_live(slot.word.load(Ordering::Relaxed), id))
    }

    /// Whether txq `id`, whose slot is `slot`, is live and kept by a table: what an
    /// enqueue that holds the txq's queue lock checks instead of taking a hold. The lock
    /// keeps the slot from changing hands (a removed txq's queue is handed back under
    /// it), so a txq live at the check owns the queue until the unlock, removed or not.
    #[inline]
    pub(crate) fn is_kept_live(slot: &TxqSlot, id: TxqId) -> bool {
        // Acquire: the queue the table put in the cell before LIVE was published.
        // Weakened variant `kept_live_relaxed`, only to prove loom model txq14 catches it.
        let order = if weakened!("kept_live_relaxed") { Ordering::Relaxed } else { Ordering::Acquire };
        kept_live(slot.word.load(order), id)
    }

    /// Ends a hold taken by [`hold_txq`](Self::hold_txq) by waking the txq (after the
    /// enqueue). `Err` if the txq was removed meanwhile: the hold is still on, and the
    /// caller must take back what is left in the intake, then [`unhold_txq`](Self::unhold_txq).
    pub(crate) fn wake_held(&self, id: TxqId, now: Instant) -> Result<(), SchedError> {
        self.wake(id, now, txq::PRODUCER)
    }

    /// Ends a hold on a removed txq.
    pub(crate) fn unhold_txq(&self, index: usize) {
        if let Some(slot) = self.txqs.get(index) {
            // Release: the caller's take-back of the intake comes before the slot can be
            // claimed again (add_txq Acquires the word).
            slot.word.fetch_sub(txq::PRODUCER, Ordering::Release);
        }
    }

    /// Puts a removed kept txq's slot on the stack of queues to hand back. Called once
    /// per removal, by the last context to hold the txq.
    pub(super) fn retire_kept(&self, index: usize) {
        // Weakened variant, only to prove the loom model catches it: the queue of a
        // removed txq is never handed back.
        if weakened!("kept_never_retired") {
            return;
        }
        // An index is on the stack at most once: the slot stays KEPT until popped.
        let _ = self.retired.push(index as u32);
    }

    /// Puts a popped txq back on the stack: its hand-back found the queue locked by an
    /// enqueue that held the txq before its removal, and that enqueue's unlock calls this.
    /// The slot is still `KEPT`, and off the stack since the pop.
    pub(crate) fn retire_kept_again(&self, index: usize) {
        let _ = self.retired.push(index as u32);
    }

    /// Whether a removed kept txq is on the stack (a snapshot: one load).
    #[inline]
    pub(crate) fn has_retired(&self) -> bool {
        self.retired.top().is_some()
    }

    /// Pops a removed kept txq: its slot's index and the id it had. The slot stays
    /// `KEPT` until [`release_kept`](Self::release_kept).
    pub(crate) fn pop_retired(&self) -> Option<(usize, TxqId)> {
        let index = self.retired.pop()? as usize;
        let slot = self.txqs.get(index)?;
        // Acquire: the dequeues of the server that returned it, and the enqueues whose
        // wakes came before the removal.
        let word = slot.word.load(Ordering::Acquire);
        Some((index, slot.id(index, word)))
    }

    /// Lets the slot of a popped txq be reused, once its queue was taken.
    pub(crate) fn release_kept(&self, index: usize) {
        if let Some(slot) = self.txqs.get(index) {
            // Release: the table's take of the queue comes before a new occupant's init.
            slot.word.fetch_and(!txq::KEPT, Ordering::Release);
        }
    }
}

/// Whether a txq word is txq `id`'s, live and kept by a table.
#[inline]
const fn kept_live(word: u64, id: TxqId) -> bool {
    word & (txq::LIVE | txq::KEPT) == txq::LIVE | txq::KEPT && gen_of(word) == id.generation
}
