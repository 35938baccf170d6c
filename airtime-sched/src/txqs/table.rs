//! The table of txqs the crate owns for a radio: a lock-free intake per txq for any
//! context to enqueue into, and the queue itself, which only the txq's server touches.

use super::intake::{Batch, Intake};
use super::turn::TxqTurn;
use crate::scheduler::HoldRefused;
use crate::slots::txq;
use crate::sync::UnsafeCell;
use crate::traits::{Enqueue, Txq};
use crate::{Charge, Instant, Round, SchedError, Scheduler, StationId, Tid, TxqId};
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;

/// A frame the ring refused after it was charged, kept in its txq and sent first at the
/// txq's next turn (ath11k's patch 8 frees it instead; mt76 keeps it in the queue).
#[derive(Debug)]
pub struct Retry<F> {
    /// The frame.
    pub frame: F,
    /// Its charge, still outstanding (`None`: it was sent uncharged).
    pub charge: Option<Charge>,
}

/// What only the txq's holder may touch: its queue and its retry slot.
pub(super) struct Kept<Q: Txq> {
    pub(super) queue: Option<Q>,
    pub(super) retry: Option<Retry<Q::Frame>>,
}

pub(super) struct Cell<Q: Txq> {
    pub(super) intake: Intake<Q::Frame>,
    /// Accessed only by the context that holds the txq: its server (SERVING), the
    /// adder before LIVE (INIT), or whoever takes it back after removal (KEPT, popped
    /// from the scheduler's retired stack). Those exclude each other by the txq word.
    pub(super) kept: UnsafeCell<Kept<Q>>,
}

/// The txqs of one radio, owned by the crate, with its [`Scheduler`].
///
/// Holding a txq's turn ([`TxqTurn`], from [`next_txq`](Self::next_txq) or
/// [`may_transmit`](Self::may_transmit)) is the only way to reach its queue: the
/// scheduler hands a txq to one context at a time, so the queue needs no lock. Any
/// context enqueues at any time with [`enqueue`](Self::enqueue), into the txq's
/// lock-free intake, which the server moves into the queue at its turn (mainline takes
/// the radio-wide `fq->lock` for both).
///
/// Removing a txq never loses a frame: its queue, retry slot and intake come back from
/// [`take_removed`](Self::take_removed) once no context holds it, and an enqueue that
/// races the removal gets its frame back ([`EnqueueError::Removed`]). The slot is
/// reused only after that.
///
/// Txqs added straight to the scheduler ([`Scheduler::add_txq`]) have no queue here:
/// their turns through the table are empty.
pub struct TxqTable<Q: Txq> {
    sched: Scheduler,
    cells: Box<[Cell<Q>]>,
}

// SAFETY: frames and queues move between threads through the table (Send); a queue is
// reached only by the context holding its txq (see `Cell::kept`), so `&TxqTable` gives
// no shared access to one `Q` from two threads.
unsafe impl<Q: Txq + Send> Sync for TxqTable<Q> where Q::Frame: Send {}

/// Why [`TxqTable::add_txq`] failed.
pub struct AddTxqError<Q> {
    /// What the scheduler said.
    pub error: SchedError,
    /// The queue, handed back; `None` only if the station was removed while the txq was
    /// being added: the queue then comes back from [`TxqTable::take_removed`].
    pub queue: Option<Q>,
}

impl<Q> fmt::Debug for AddTxqError<Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AddTxqError").field("error", &self.error).field("queue", &self.queue.is_some()).finish()
    }
}

/// Why [`TxqTable::enqueue`] did not queue a frame. Every variant hands frames back.
pub enum EnqueueError<F> {
    /// The txq is unknown or removed: the frame was not taken.
    UnknownTxq(F),
    /// No memory for the intake's node: the frame was not taken.
    NoMemory(F),
    /// 65535 enqueues are already in flight on this txq: the frame was not taken.
    Busy(F),
    /// The txq was removed while the frame was being enqueued: these frames, left in its
    /// intake by this and other late enqueues (this frame among them, unless the removed
    /// txq's queue took it), are handed back to the caller.
    Removed(ReturnedFrames<F>),
}

impl<F> fmt::Debug for EnqueueError<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EnqueueError::UnknownTxq(_) => "UnknownTxq",
            EnqueueError::NoMemory(_) => "NoMemory",
            EnqueueError::Busy(_) => "Busy",
            EnqueueError::Removed(_) => "Removed",
        })
    }
}

impl<F> fmt::Display for EnqueueError<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EnqueueError::UnknownTxq(_) => "unknown or removed txq",
            EnqueueError::NoMemory(_) => "no memory for the frame's intake node",
            EnqueueError::Busy(_) => "too many enqueues in flight on the txq",
            EnqueueError::Removed(_) => "the txq was removed during the enqueue",
        })
    }
}

/// Frames handed back from a txq's intake, oldest first.
pub struct ReturnedFrames<F>(pub(super) Batch<F>);

impl<F> Iterator for ReturnedFrames<F> {
    type Item = F;
    fn next(&mut self) -> Option<F> {
        self.0.next().map(|(frame, _)| frame)
    }
}

impl<F> fmt::Debug for ReturnedFrames<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReturnedFrames").field("empty", &self.0.is_empty()).finish()
    }
}

/// A removed txq's frames, handed back by [`TxqTable::take_removed`]: nothing of it is
/// anywhere else. The driver frees or reroutes the frames and releases the retry
/// frame's charge.
#[must_use = "the frames of a removed txq must be freed or rerouted, and a retry charge released"]
pub struct RemovedTxq<Q: Txq> {
    /// The txq's id, no longer valid.
    pub id: TxqId,
    /// Its queue, with the frames it still held.
    pub queue: Q,
    /// The frame its retry slot held, and that frame's charge.
    pub retry: Option<Retry<Q::Frame>>,
    /// Frames enqueued before the removal that the queue had not taken yet.
    pub intake: ReturnedFrames<Q::Frame>,
}

impl<Q: Txq> fmt::Debug for RemovedTxq<Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemovedTxq").field("id", &self.id).field("retry", &self.retry.is_some()).finish_non_exhaustive()
    }
}

impl<Q: Txq + Enqueue> TxqTable<Q> {
    /// A table for every txq slot of `sched`, which it owns from now on.
    pub fn new(sched: Scheduler) -> TxqTable<Q> {
        let cells: Vec<Cell<Q>> = (0..usize::from(sched.config().max_txqs))
            .map(|_| Cell { intake: Intake::new(), kept: UnsafeCell::new(Kept { queue: None, retry: None }) })
            .collect();
        TxqTable { sched, cells: cells.into_boxed_slice() }
    }

    /// The radio's scheduler: stations, weights, limits, rounds, charges and releases.
    #[inline]
    pub fn scheduler(&self) -> &Scheduler {
        &self.sched
    }

    /// The scheduler, for what needs it alone (no turn can be out while the table is
    /// borrowed mutably).
    #[inline]
    pub fn scheduler_mut(&mut self) -> &mut Scheduler {
        &mut self.sched
    }

    /// Registers a txq for `station` (or a station-less one) on `tid` with its `queue`,
    /// as [`Scheduler::add_txq`] does. The queue is in place before any context can
    /// enqueue to the txq or serve it.
    pub fn add_txq(&self, station: Option<StationId>, tid: Tid, queue: Q) -> Result<TxqId, AddTxqError<Q>> {
        let mut queue = Some(queue);
        let added = self.sched.add_txq_with(station, tid, txq::KEPT, |index| {
            if let Some(cell) = self.cells.get(index) {
                // SAFETY: the slot is claimed INIT by this call and was reusable, so its
                // last queue was taken back: nobody else touches the cell.
                cell.kept.with_mut(|kept| unsafe { *kept = Kept { queue: queue.take(), retry: None } });
            }
        });
        added.map_err(|error| AddTxqError { error, queue })
    }

    /// Removes a txq, as [`Scheduler::remove_txq`] does. Its frames come back from
    /// [`take_removed`](Self::take_removed), at once if no context holds the txq, else
    /// when its server returns it.
    pub fn remove_txq(&self, id: TxqId) -> Result<(), SchedError> {
        self.sched.remove_txq(id)
    }

    /// Removes a station and its txqs, as [`Scheduler::remove_station`] does; their
    /// frames come back from [`take_removed`](Self::take_removed).
    pub fn remove_station(&self, id: StationId) -> Result<(), SchedError> {
        self.sched.remove_station(id)
    }

    /// Hands back one removed txq whose frames no context holds any more, if any: call
    /// it after removals and from time to time (a txq removed while served comes back
    /// once its server returns it). Its slot can take a new txq afterwards.
    pub fn take_removed(&self) -> Option<RemovedTxq<Q>> {
        loop {
            let (index, id) = self.sched.pop_retired()?;
            let Some(cell) = self.cells.get(index) else { continue };
            // SAFETY: popped from the retired stack: removed, served by nobody, and not
            // reusable until `release_kept` below, so this context alone holds the cell.
            let kept =
                cell.kept.with_mut(|kept| unsafe { core::mem::replace(&mut *kept, Kept { queue: None, retry: None }) });
            // Enqueues whose wakes came before the removal; later ones take theirs back.
            let intake = ReturnedFrames(cell.intake.take_all());
            self.sched.release_kept(index);
            if let Some(queue) = kept.queue {
                return Some(RemovedTxq { id, queue, retry: kept.retry, intake });
            }
        }
    }

    /// Queues `frame` for txq `id`, enqueued at `now`, from any context, without a lock,
    /// and wakes the txq ([`Scheduler::wake_txq`]). The frame reaches the queue at the
    /// txq's next turn.
    pub fn enqueue(&self, id: TxqId, frame: Q::Frame, now: Instant) -> Result<(), EnqueueError<Q::Frame>> {
        let Some(cell) = self.cells.get(id.index()) else { return Err(EnqueueError::UnknownTxq(frame)) };
        // Weakened variant, only to prove the loom model catches it: no hold, so the
        // slot can be reused between the check and the push.
        if cfg!(airtime_weakened = "enqueue_unheld") {
            if self.sched.txq_slot(id).is_err() {
                return Err(EnqueueError::UnknownTxq(frame));
            }
            if let Err(frame) = cell.intake.push(frame, now) {
                return Err(EnqueueError::NoMemory(frame));
            }
            return match self.sched.wake_txq(id, now) {
                Ok(()) => Ok(()),
                Err(_) => Err(EnqueueError::Removed(ReturnedFrames(cell.intake.take_all()))),
            };
        }
        match self.sched.hold_txq(id) {
            Ok(()) => {}
            Err(HoldRefused::Gone) => return Err(EnqueueError::UnknownTxq(frame)),
            Err(HoldRefused::Busy) => return Err(EnqueueError::Busy(frame)),
        }
        if let Err(frame) = cell.intake.push(frame, now) {
            self.sched.unhold_txq(id.index());
            return Err(EnqueueError::NoMemory(frame));
        }
        match self.sched.wake_held(id, now) {
            Ok(()) => Ok(()),
            Err(_) => {
                // Removed meanwhile, and still held: nothing can be pushed here for a
                // later occupant yet, so whatever is in the intake is the removed txq's.
                let back =
                    if cfg!(airtime_weakened = "intake_no_takeback") { Batch::empty() } else { cell.intake.take_all() };
                self.sched.unhold_txq(id.index());
                Err(EnqueueError::Removed(ReturnedFrames(back)))
            }
        }
    }

    /// The next txq of `round` with its queue ([`Scheduler::next_txq`]); the frames
    /// enqueued since its last turn are moved into the queue first.
    pub fn next_txq(&self, round: Round, now: Instant) -> Option<TxqTurn<'_, Q>> {
        let serving = self.sched.next_txq(round, now)?;
        Some(self.turn(serving))
    }

    /// Asks whether txq `id` may send now ([`Scheduler::may_transmit`], pull mode), with
    /// its queue.
    pub fn may_transmit(&self, id: TxqId, now: Instant) -> Result<Option<TxqTurn<'_, Q>>, SchedError> {
        Ok(self.sched.may_transmit(id, now)?.map(|serving| self.turn(serving)))
    }

    fn turn<'a>(&'a self, serving: crate::Serving<'a>) -> TxqTurn<'a, Q> {
        // In range: the scheduler and the table have the same number of slots.
        let cell = &self.cells[serving.txq().index() % self.cells.len()];
        TxqTurn::new(serving, cell)
    }
}

impl<Q: Txq> fmt::Debug for TxqTable<Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TxqTable").field("sched", &self.sched).field("txqs", &self.cells.len()).finish()
    }
}
