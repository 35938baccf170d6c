//! The table of txqs the crate owns for a radio: a lock-free intake per txq for any
//! context to enqueue into, and the queue itself, behind a per-txq lock that nobody
//! waits on (its server's, or an enqueue's that finds it free).

use super::intake::{Batch, Chain, Intake, NodeHints};
use super::queue_lock::QueueLock;
use super::turn::TxqTurn;
use crate::cache_line::CacheLines;
use crate::scheduler::HoldRefused;
use crate::slots::txq;
use crate::sync::{AtomicU32, Ordering, UnsafeCell};
use crate::traits::{Enqueue, Txq};
use crate::{Charge, Instant, Round, SchedError, Scheduler, StationId, Tid, TxqId};
use alloc::boxed::Box;
use core::fmt;
use core::mem::ManuallyDrop;

/// A frame the ring refused, kept in its txq and sent first at the txq's next turn
/// (ath11k's patch 8 frees it instead; mt76 keeps it in the queue).
#[derive(Debug)]
pub struct Retry<F> {
    /// The frame.
    pub frame: F,
    /// Its charge, if it kept one (`None`: kept uncharged, charged when it is sent; the
    /// table's own loop always gives a kept frame's charge back).
    pub charge: Option<Charge>,
}

/// What only the holder of the txq's queue lock may touch: its queue, its retry slot, and what its
/// drains of the intake cached (for the next drain's prefetch).
pub(super) struct Kept<Q: Txq> {
    pub(super) queue: Option<Q>,
    pub(super) retry: Option<Retry<Q::Frame>>,
    pub(super) hints: NodeHints<Q::Frame>,
}

impl<Q: Txq> Kept<Q> {
    /// A slot's state with `queue`, nothing retried, and no node cached yet.
    pub(super) const fn new(queue: Option<Q>) -> Kept<Q> {
        Kept { queue, retry: None, hints: NodeHints::new() }
    }
}

/// What a txq's enqueuers write: its intake, the intake's count, and the queue's lock.
/// In declaration order (`repr(C)`): the count and the lock first, so that they share
/// the first line with what every enqueue and drain touch (the intake's top, its own
/// node and its flag), and the intake's node cache, touched only with a backlog, last.
#[repr(C)]
pub(super) struct Inbox<F> {
    /// Frames in the intake (pushed, not yet taken), for the intake's bound.
    pub(super) len: AtomicU32,
    /// Who may touch the cell's `kept` (see [`QueueLock`]).
    pub(super) queue_lock: QueueLock,
    pub(super) intake: Intake<F>,
}

/// One txq's inbox and queue, each on lines of its own: enqueuers write the inbox (its
/// intake, its lock) while the server writes the queue, which an enqueue writes only
/// when the server is not at it.
pub(super) struct Cell<Q: Txq> {
    pub(super) inbox: CacheLines<Inbox<Q::Frame>>,
    /// Accessed only under the inbox's queue lock (the txq's server, an enqueue writing
    /// straight into the queue, or the hand-back of a removed txq), or by the adder
    /// before LIVE (INIT: no context can hold the txq yet; an enqueue with a stale id
    /// may take the lock, but touches nothing behind it, as its txq is not live).
    pub(super) kept: CacheLines<UnsafeCell<Kept<Q>>>,
}

impl<Q: Txq> Cell<Q> {
    /// Counts `n` frames taken from the intake.
    pub(super) fn taken(&self, n: usize) {
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        if n != 0 {
            // Relaxed: a bound, not a publication (the intake's own atomics order the frames).
            self.inbox.len.fetch_sub(n, Ordering::Relaxed);
        }
    }

    fn take_intake(&self) -> Batch<Q::Frame> {
        let batch = self.inbox.intake.take_all();
        self.taken(batch.taken_len());
        batch
    }
}

/// What an enqueue's writes straight into the queue did with its burst.
enum Direct<F> {
    /// The txq is not live (never issued, removed, or its slot reused): nothing taken.
    Gone,
    /// Every frame is in the queue: this many.
    Done(u32),
    /// This many are in the queue; the rest goes through the intake: the frame the
    /// writes stopped at (if they started), then what the burst still yields.
    Rest(u32, Option<F>),
}

/// The wake for the frames an enqueue wrote straight into the queue, if a panic (in the
/// caller's iterator, or in the queue's enqueue) unwinds through the writes.
struct DirectWake<'a> {
    sched: &'a Scheduler,
    id: TxqId,
    now: Instant,
    queued: bool,
}

impl DirectWake<'_> {
    #[cold]
    #[inline(never)]
    fn wake(&self) {
        // Removed meanwhile: the frames come back with the txq.
        let _ = self.sched.wake_txq(self.id, self.now);
    }
}

impl Drop for DirectWake<'_> {
    #[inline]
    fn drop(&mut self) {
        if self.queued {
            self.wake();
        }
    }
}

/// A burst's frames for the intake, pushed however the burst ends: a panic in the
/// caller's iterator then leaves the frames it already gave (and counted against the
/// intake's bound) queued, rather than dropped with the bound's count kept.
struct PushedChain<'a, F>(ManuallyDrop<Chain<'a, F>>);

impl<F> Drop for PushedChain<'_, F> {
    fn drop(&mut self) {
        // SAFETY: taken once, here, and never used again.
        unsafe { ManuallyDrop::take(&mut self.0) }.push();
    }
}

/// An enqueue's hold on its txq ([`Scheduler::hold_txq`]), which keeps the slot from
/// being reused under it while the enqueue pushes into its intake (writes straight into
/// the queue need none: see `enqueue_direct`). [`end`](Self::end) ends it on every return. If a panic (in the
/// caller's iterator, or in the queue's `enqueue`) unwinds through the enqueue, the drop
/// ends it the same way: if the burst queued frames before the panic, the txq is woken
/// for them, or, removed meanwhile, they are taken back and dropped with the panic.
/// Either way the slot is never left held for good.
struct EnqueueHold<'t, Q: Enqueue> {
    table: &'t TxqTable<Q>,
    cell: &'t Cell<Q>,
    id: TxqId,
    now: Instant,
    /// Weakened variant `enqueue_unheld`: no hold was taken.
    unheld: bool,
    /// Whether the burst has queued a frame (into the queue, or into a chain that is
    /// pushed however the burst ends): set before a panic can unwind past it.
    queued: bool,
}

impl<Q: Enqueue> EnqueueHold<'_, Q> {
    /// Wakes the txq if the burst queued anything, else lets go. `Err` with what its
    /// intake still holds if the txq was removed meanwhile.
    fn end(self) -> Result<(), Batch<Q::Frame>> {
        ManuallyDrop::new(self).release()
    }

    fn release(&self) -> Result<(), Batch<Q::Frame>> {
        let sched = &self.table.sched;
        // Nothing queued: a removal's intake is the hand-back's (frames other enqueues
        // pushed before it), not this enqueue's to take.
        if !self.queued {
            if !self.unheld {
                sched.unhold_txq(self.id.index());
            }
            return Ok(());
        }
        let woken = if self.unheld { sched.wake_txq(self.id, self.now) } else { sched.wake_held(self.id, self.now) };
        if woken.is_ok() {
            return Ok(());
        }
        // Removed meanwhile, and still held: nothing can be pushed here for a later
        // occupant yet, so whatever is in the intake is the removed txq's; this
        // enqueue's frames may be in it after the hand-back took the rest, so it takes
        // them back.
        let back = if weakened!("intake_no_takeback") { Batch::empty() } else { self.cell.take_intake() };
        if !self.unheld {
            sched.unhold_txq(self.id.index());
        }
        Err(back)
    }
}

impl<Q: Enqueue> Drop for EnqueueHold<'_, Q> {
    fn drop(&mut self) {
        // Only on unwinding (`end` forgets the hold): the frames of a txq removed
        // meanwhile are dropped with the panic's.
        drop(self.release());
    }
}

/// Frames a txq's intake holds at most before enqueues are refused
/// ([`EnqueueError::Full`]): FQ-CoDel's default packet limit. A txq nobody serves (its
/// AC closed, its station asleep) holds at most its queue's own limit (enqueues write
/// into the queue only while it has room, [`Enqueue::has_room_for`]) and this many more.
pub const INTAKE_LIMIT: u32 = 8192;

/// The txqs of one radio, owned by the crate, with its [`Scheduler`].
///
/// Holding a txq's turn ([`TxqTurn`], from [`next_txq`](Self::next_txq) or
/// [`may_transmit`](Self::may_transmit)) is the only way to take frames from its queue:
/// the scheduler hands a txq to one context at a time. Any context enqueues at any time
/// with [`enqueue`](Self::enqueue), without waiting: straight into the queue when no
/// other context holds it and it has room ([`Enqueue::has_room_for`]; FQ-CoDel's enqueue
/// then runs on the enqueuing context, as mainline's does) and nothing waits in its
/// intake, else into the txq's lock-free intake, which the server moves into the queue
/// when its turn starts (and the ready loop's turns also when they end). Mainline takes the
/// radio-wide `fq->lock` for both; here each txq has its own lock, which an enqueue only
/// tries, and which a server waits for boundedly (one enqueue's burst): a turn whose
/// enqueuer was preempted holding it is returned `Stalled`, still listed.
///
/// Removing a txq never loses a frame: its queue, retry slot and intake come back from
/// [`take_removed`](Self::take_removed) once no context holds it, and an enqueue that
/// races the removal gets its frame back ([`EnqueueError::Removed`]). The slot is
/// reused only after that.
///
/// Serve a table's txqs through the table only. Txqs added straight to the scheduler
/// ([`Scheduler::add_txq`]) have no queue here: their turns through the table are empty,
/// and return them so. A table's txq served through the scheduler
/// ([`Scheduler::next_txq`]) cannot reach its queue; returned `Empty`, it stays listed
/// for the table's next turn to decide ([`Scheduler::return_txq`]).
///
/// Each frame that goes through the intake rides in an intake node: the intake's own
/// (one per txq, on its cache lines) when it is free, which it is whenever the server
/// keeps up; else one the server emptied and kept (up to 16 per txq). So a txq
/// allocates nothing while at most 17 of its frames wait in the intake at once; an
/// enqueue that finds no node free allocates one from the global allocator (in a
/// kernel, an atomic allocation, refused with [`EnqueueError::NoMemory`] if it fails).
/// An intake holds at most [`INTAKE_LIMIT`] frames. Each txq's cell keeps what its
/// enqueuers write (the intake) and what its server writes (the queue) on cache lines
/// of their own.
pub struct TxqTable<Q: Txq> {
    sched: Scheduler,
    cells: Box<[Cell<Q>]>,
}

// SAFETY: frames and queues move between threads through the table (Send); a queue is
// reached only under its txq's queue lock (see `Cell::kept`), so `&TxqTable` gives no
// shared access to one `Q` from two threads.
unsafe impl<Q: Txq + Send> Sync for TxqTable<Q> where Q::Frame: Send {}

// The table shares its scheduler between threads: it must be Sync itself.
const _: () = {
    const fn sync<T: Sync>() {}
    sync::<Scheduler>()
};

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
    /// The txq's intake already holds [`INTAKE_LIMIT`] frames nobody has taken (its
    /// server is not running): the frame was not taken.
    Full(F),
    /// The txq was removed while the frame was being enqueued: the frame the burst
    /// stopped at, if any, and, if the enqueue went through the txq's intake, the frames
    /// left in it are handed back to the caller (possibly none). They may include frames of other enqueues to
    /// the same txq that returned `Ok` (their frames were in the intake, not yet taken),
    /// and need not include this one: the txq's queue may have taken it first, and then
    /// it comes back with [`RemovedTxq`] (or was even sent). Every frame ends in exactly
    /// one of those places.
    Removed(ReturnedFrames<F>),
}

impl<F> EnqueueError<F> {
    /// Every frame the error hands back, whatever the reason: what a driver that only
    /// frees (or counts) refused frames writes instead of a `match`.
    pub fn into_frames(self) -> ReturnedFrames<F> {
        match self {
            EnqueueError::UnknownTxq(f) | EnqueueError::NoMemory(f) | EnqueueError::Busy(f) | EnqueueError::Full(f) => {
                ReturnedFrames { first: Some(f), batch: Batch::empty() }
            }
            EnqueueError::Removed(back) => back,
        }
    }
}

impl<F> fmt::Debug for EnqueueError<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EnqueueError::UnknownTxq(_) => "UnknownTxq",
            EnqueueError::NoMemory(_) => "NoMemory",
            EnqueueError::Busy(_) => "Busy",
            EnqueueError::Full(_) => "Full",
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
            EnqueueError::Full(_) => "the txq's intake is full",
            EnqueueError::Removed(_) => "the txq was removed during the enqueue",
        })
    }
}

/// Frames handed back from a txq's intake, oldest first (after the caller's own frame
/// that a burst could not queue, if any).
pub struct ReturnedFrames<F> {
    first: Option<F>,
    batch: Batch<F>,
}

impl<F> ReturnedFrames<F> {
    pub(super) fn new(batch: Batch<F>) -> ReturnedFrames<F> {
        ReturnedFrames { first: None, batch }
    }
}

impl<F> Iterator for ReturnedFrames<F> {
    type Item = F;
    fn next(&mut self) -> Option<F> {
        self.first.take().or_else(|| self.batch.next().map(|(frame, _)| frame))
    }
}

impl<F> fmt::Debug for ReturnedFrames<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReturnedFrames").field("empty", &(self.first.is_none() && self.batch.is_empty())).finish()
    }
}

/// A removed txq's frames, handed back by [`TxqTable::take_removed`]: nothing of it is
/// anywhere else. The driver frees or reroutes the frames, and gives the retry frame's
/// charge back with [`Scheduler::give_back`] if it kept one (the table's own loops keep
/// none; a hand-written turn's [`TxqTurn::hold_back`] may): the frame was never sent, so
/// it is no completion, and [`Scheduler::release`] (which does the same accounting)
/// would tell adaptive AQL that a frame left the hardware.
#[must_use = "the frames of a removed txq must be freed or rerouted, and a retry charge given back"]
pub struct RemovedTxq<Q: Txq> {
    /// The txq's id, no longer valid.
    pub id: TxqId,
    /// Its queue, with the frames it still held.
    pub queue: Q,
    /// The frame its retry slot held, and that frame's charge.
    pub retry: Option<Retry<Q::Frame>>,
    /// Frames of enqueues that came before the removal and that the queue had not taken
    /// yet (later ones hand theirs back to their callers).
    pub intake: ReturnedFrames<Q::Frame>,
}

impl<Q: Txq> fmt::Debug for RemovedTxq<Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemovedTxq").field("id", &self.id).field("retry", &self.retry.is_some()).finish_non_exhaustive()
    }
}

/// [`TxqTable::try_new`] found no memory for the table's cells: the scheduler comes
/// back unchanged.
pub struct TableAllocError {
    /// The scheduler the table would have owned.
    pub sched: Scheduler,
}

impl fmt::Debug for TableAllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TableAllocError")
    }
}

impl fmt::Display for TableAllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no memory for the txq table")
    }
}

impl<Q: Txq + Enqueue> TxqTable<Q> {
    /// A table for every txq slot of `sched`, which it owns from now on. Aborts (the
    /// allocator's `handle_alloc_error`) when memory is short: a driver that must not,
    /// a kernel's, uses [`try_new`](Self::try_new).
    pub fn new(sched: Scheduler) -> TxqTable<Q> {
        match Self::try_new(sched) {
            Ok(table) => table,
            Err(_) => alloc::alloc::handle_alloc_error(core::alloc::Layout::new::<Cell<Q>>()),
        }
    }

    /// [`new`](Self::new) without aborting: the cells are reserved with `try_reserve_exact`
    /// (one allocation of `max_txqs` cells, the only one; an intake allocates nothing
    /// until a frame is enqueued), and when memory is short the scheduler comes back in
    /// the error.
    // The scheduler comes back by value: boxing the error would allocate just when
    // memory is short, and the `Ok` side (the table, which holds it) is as large.
    #[allow(clippy::result_large_err)]
    pub fn try_new(sched: Scheduler) -> Result<TxqTable<Q>, TableAllocError> {
        let n = usize::from(sched.config().max_txqs);
        let cells = crate::try_alloc::boxed_slice(n, |_| Cell {
            inbox: CacheLines(Inbox { intake: Intake::new(), len: AtomicU32::new(0), queue_lock: QueueLock::new() }),
            kept: CacheLines(UnsafeCell::new(Kept::new(None))),
        });
        match cells {
            Some(cells) => Ok(TxqTable { sched, cells }),
            None => Err(TableAllocError { sched }),
        }
    }

    /// The txqs registered now, by slot order: a snapshot, exact while no control
    /// operation runs (a txq added or removed meanwhile may or may not be listed).
    /// Removed txqs whose frames [`take_removed`](Self::take_removed) has not handed back
    /// yet are not listed. Any context, no lock; O(`max_txqs`).
    pub fn txq_ids(&self) -> impl Iterator<Item = TxqId> + '_ {
        self.sched.txqs.iter().enumerate().filter_map(|(index, slot)| {
            let word = slot.word.load(Ordering::Acquire);
            (word & txq::LIVE != 0).then(|| slot.id(index, word))
        })
    }

    /// The txqs registered now for `station` (`None`: the station-less ones), as
    /// [`txq_ids`](Self::txq_ids) lists them.
    pub fn station_txq_ids(&self, station: Option<StationId>) -> impl Iterator<Item = TxqId> + '_ {
        self.txq_ids().filter(move |&id| matches!(self.sched.txq_info(id), Ok((s, _)) if s == station))
    }

    /// The radio's scheduler: stations, weights, limits, rounds, charges and releases.
    #[inline]
    pub fn scheduler(&self) -> &Scheduler {
        &self.sched
    }

    /// The scheduler's exact invariant check
    /// ([`Scheduler::check_invariants_quiescent`]), with the table at rest (no turn can
    /// be out while it is borrowed mutably), then the table's own: no txq is held by an
    /// enqueue or has its queue locked, and each intake's count is the frames in it
    /// ([`InvariantViolation::TableCellNotAtRest`](crate::InvariantViolation::TableCellNotAtRest)).
    /// [`Scheduler::check_invariants`] checks what holds at every instant, from any
    /// context.
    pub fn check_invariants(&mut self) -> Result<(), crate::InvariantViolation> {
        self.sched.check_invariants_quiescent()?;
        for (index, cell) in self.cells.iter().enumerate() {
            let held = self.sched.txqs.get(index).is_some_and(|s| s.word.load(Ordering::Acquire) & txq::PRODUCERS != 0);
            let counted = cell.inbox.len.load(Ordering::Acquire) as usize;
            // SAFETY: the table is borrowed mutably: no enqueue or turn runs.
            let frames = unsafe { cell.inbox.intake.len_at_rest(counted) };
            if held || !cell.inbox.queue_lock.is_at_rest() || counted != frames {
                return Err(crate::InvariantViolation::TableCellNotAtRest(index as u16));
            }
        }
        Ok(())
    }

    /// Registers a txq for `station` (or a station-less one) on `tid` with its `queue`,
    /// as [`Scheduler::add_txq`] does. The queue is in place before any context can
    /// enqueue to the txq or serve it. A removed txq's slot is free only once its
    /// frames were handed back ([`take_removed`](Self::take_removed)), so a table whose
    /// every free-able slot waits for that (or for a turn that still holds its removed
    /// txq) refuses with [`SchedError::TxqsDraining`], not `TxqsFull`: finish the turn
    /// or call `take_removed`, then try again.
    pub fn add_txq(&self, station: Option<StationId>, tid: Tid, queue: Q) -> Result<TxqId, AddTxqError<Q>> {
        self.add_txq_with(station, tid, queue, |_| ())
    }

    /// [`add_txq`](Self::add_txq), running `before_live` with the txq's id before any
    /// other context can see it (enqueue to it, serve it, remove it): where a driver
    /// records what it keeps by slot for the txq, so that a removal racing the add (of
    /// its station, on another context) always finds the record. It runs even if the
    /// add then fails because the station was removed meanwhile (the txq comes back
    /// through [`take_removed`](Self::take_removed) then, as a removed one does). It
    /// runs while the slot is claimed and not yet live: it must not block or panic (a
    /// hook that unwinds leaves the slot claimed for good).
    pub fn add_txq_with(
        &self,
        station: Option<StationId>,
        tid: Tid,
        queue: Q,
        before_live: impl FnOnce(TxqId),
    ) -> Result<TxqId, AddTxqError<Q>> {
        let mut queue = Some(queue);
        let added = self.sched.add_txq_with(station, tid, txq::KEPT, |id| {
            if let Some(cell) = self.cells.get(id.index()) {
                // SAFETY: the slot is claimed INIT by this call and was reusable, so its
                // last queue was taken back: nobody else touches the cell.
                cell.kept.with_mut(|kept| unsafe { *kept = Kept::new(queue.take()) });
            }
            before_live(id);
        });
        match added {
            // The scheduler and the table have the same slots, so the queue is in place;
            // were it not, the txq could never be served: undo it, hand the queue back.
            Ok(id) if queue.is_some() => {
                let _ = self.sched.remove_txq(id);
                Err(AddTxqError { error: SchedError::TxqsFull, queue })
            }
            Ok(id) => Ok(id),
            Err(error) => Err(AddTxqError { error, queue }),
        }
    }

    /// Removes a txq, as [`Scheduler::remove_txq`] does. Its frames come back from
    /// [`take_removed`](Self::take_removed), at once if no context holds the txq, else
    /// when its server returns it (or an enqueue that was writing into its queue when
    /// the removal came is done; an enqueue that starts after this returns is refused
    /// without touching the queue).
    pub fn remove_txq(&self, id: TxqId) -> Result<(), SchedError> {
        self.sched.remove_txq(id)
    }

    /// Removes a station and its txqs, as [`Scheduler::remove_station`] does (the
    /// [`DepartingStation`](crate::DepartingStation) says when its frames in flight have
    /// completed); their queued frames come back from [`take_removed`](Self::take_removed).
    pub fn remove_station(&self, id: StationId) -> Result<crate::DepartingStation, SchedError> {
        self.sched.remove_station(id)
    }

    /// Hands back one removed txq whose frames no context holds any more, if any: call
    /// it after removals and from time to time (a txq removed while served comes back
    /// once its server returns it, one whose queue an enqueue was writing once that
    /// enqueue is done). Its slot can take a new txq afterwards.
    pub fn take_removed(&self) -> Option<RemovedTxq<Q>> {
        self.take_removed_with(|removed| removed)
    }

    /// Whether a removed txq waits for [`take_removed`](Self::take_removed): one load,
    /// cheap enough for a hot path. An enqueue that was writing a removed txq's queue
    /// puts it there as it returns, so its caller sees `true` after it (until some
    /// context takes it): what a driver checks after each enqueue, so that those frames
    /// do not wait for an unrelated call. A snapshot otherwise, as any.
    #[inline]
    pub fn has_removed(&self) -> bool {
        self.sched.has_retired()
    }

    /// [`take_removed`](Self::take_removed), running `hand_back` on the txq before its
    /// slot can take a new one: what a driver keeps by slot
    /// ([`TxqId::index`](crate::TxqId::index)) and resets there cannot meet the slot's
    /// next txq, and a "handed back" mark the driver clears at the end of `hand_back`
    /// means it returned. The slot is freed even if `hand_back` unwinds. Returns what
    /// `hand_back` returned, `None` when no removed txq is ready.
    pub fn take_removed_with<R>(&self, hand_back: impl FnOnce(RemovedTxq<Q>) -> R) -> Option<R> {
        loop {
            let (index, id) = self.sched.pop_retired()?;
            let Some(cell) = self.cells.get(index) else { continue };
            if !cell.inbox.queue_lock.handback() {
                // An enqueue that held the txq before its removal is writing its queue:
                // its unlock puts the txq back on the stack for a later call.
                continue;
            }
            // SAFETY: popped from the retired stack (removed, served by nobody, and not
            // reusable until `release_kept` below) and its queue lock held for the
            // hand-back, so this context alone holds the cell.
            let kept = cell.kept.with_mut(|kept| unsafe { core::mem::replace(&mut *kept, Kept::new(None)) });
            cell.inbox.queue_lock.end_handback();
            // Every KEPT slot has its queue (`add_txq`): the `else` is unreachable, and
            // keeps the slot held rather than lose what its intake holds.
            let Some(queue) = kept.queue else { continue };
            // Enqueues whose wakes came before the removal; later ones take theirs back.
            let intake = ReturnedFrames::new(cell.take_intake());
            // The slot may stay empty for good: its cached nodes go back to the allocator.
            cell.inbox.intake.free_cache();
            let _free_after = ReleaseKept { sched: &self.sched, index };
            return Some(hand_back(RemovedTxq { id, queue, retry: kept.retry, intake }));
        }
    }

    /// Queues `frame` for txq `id`, enqueued at `now`, from any context, without waiting
    /// on a lock, and wakes the txq ([`Scheduler::wake_txq`]). The frame is in the queue
    /// at once, or reaches it at a turn of the txq (see the type's docs).
    pub fn enqueue(&self, id: TxqId, frame: Q::Frame, now: Instant) -> Result<(), EnqueueError<Q::Frame>> {
        self.enqueue_burst(id, &mut core::iter::once(frame), now).map(|_| ())
    }

    /// Queues the frames of `frames` for txq `id` as one burst (a GSO batch, the frames
    /// of one `xmit_more` run): one lock of the queue (or one hold and one push into the
    /// intake), one wake — what [`enqueue`](Self::enqueue) pays per frame. `Ok(n)`: all
    /// `n` frames are queued. On `Err`, the frames before the one the error hands back
    /// are queued, and those after it are still in `frames`. [`EnqueueError::Removed`]
    /// hands back the frame the burst stopped at, if it stopped early, with whatever the
    /// intake held if the burst went through it (other enqueues' frames too); every other
    /// frame `frames` yielded comes back with the removed txq (or was sent), as that
    /// variant says. `frames` runs while the
    /// txq's queue may be locked: an iterator that blocks makes the txq's server give up
    /// its turn meanwhile. An iterator (or a queue's `enqueue`) that panics unwinds
    /// through the enqueue with nothing held: the frames queued before the panic are
    /// woken for, as on a return, or, if the txq was removed meanwhile, dropped.
    pub fn enqueue_burst(
        &self,
        id: TxqId,
        frames: &mut impl Iterator<Item = Q::Frame>,
        now: Instant,
    ) -> Result<u32, EnqueueError<Q::Frame>> {
        let Some(cell) = self.cells.get(id.index()) else {
            return match frames.next() {
                Some(frame) => Err(EnqueueError::UnknownTxq(frame)),
                None => Ok(0),
            };
        };
        // Straight into the queue while nobody else holds it, under its lock alone (see
        // `enqueue_direct`); what the queue has no room for, and the rest of the burst
        // after that, through the intake, under a hold.
        let (direct, stopped_at) = match self.enqueue_direct(cell, id, frames, now) {
            Direct::Gone => {
                return match frames.next() {
                    Some(frame) => Err(EnqueueError::UnknownTxq(frame)),
                    None => Ok(0),
                };
            }
            Direct::Done(queued) => {
                return if self.woken_for_direct(id, queued, now) {
                    Ok(queued)
                } else {
                    // Removed since: the frames come back with it.
                    Err(EnqueueError::Removed(ReturnedFrames { first: None, batch: Batch::empty() }))
                };
            }
            Direct::Rest(queued, stopped_at) => (queued, stopped_at),
        };
        // Weakened variant, only to prove the loom model catches it: no hold, so the
        // slot can be reused between the check and the push.
        let unheld = weakened!("enqueue_unheld");
        let held = if unheld {
            self.sched.txq_slot(id).map(|_| ()).map_err(|_| HoldRefused::Gone)
        } else {
            self.sched.hold_txq(id)
        };
        if let Err(refused) = held {
            let Some(frame) = stopped_at.or_else(|| frames.next()) else {
                // Nothing for the intake (the frames written straight in stopped only at
                // the burst's end, or there were none).
                return Ok(direct);
            };
            return Err(match refused {
                HoldRefused::Gone if direct == 0 => EnqueueError::UnknownTxq(frame),
                // Removed after the writes straight into its queue: they come back with it.
                HoldRefused::Gone => {
                    EnqueueError::Removed(ReturnedFrames { first: Some(frame), batch: Batch::empty() })
                }
                HoldRefused::Busy if self.woken_for_direct(id, direct, now) => EnqueueError::Busy(frame),
                HoldRefused::Busy => {
                    EnqueueError::Removed(ReturnedFrames { first: Some(frame), batch: Batch::empty() })
                }
            });
        }
        // Ends the hold on every path, a panic in `frames` or the queue's enqueue too;
        // its wake is also the one for the frames written straight into the queue.
        let mut hold = EnqueueHold { table: self, cell, id, now, unheld, queued: direct != 0 };
        let mut queued = direct;
        // The frame that ended the burst early, and whether for room (else memory).
        let mut refused: Option<(Q::Frame, bool)> = None;
        {
            let mut chain = PushedChain(ManuallyDrop::new(Chain::new(&cell.inbox.intake)));
            for frame in stopped_at.into_iter().chain(frames.by_ref()) {
                // Relaxed: a bound; two enqueues racing for the last place may both fail,
                // never both pass it.
                if cell.inbox.len.fetch_add(1, Ordering::Relaxed) >= INTAKE_LIMIT {
                    cell.inbox.len.fetch_sub(1, Ordering::Relaxed);
                    refused = Some((frame, true));
                    break;
                }
                if let Err(frame) = chain.0.add(frame, now) {
                    cell.inbox.len.fetch_sub(1, Ordering::Relaxed);
                    refused = Some((frame, false));
                    break;
                }
                // Pushed however the burst ends.
                hold.queued = true;
            }
            queued = queued.saturating_add(u32::try_from(chain.0.len()).unwrap_or(u32::MAX));
        }
        let refusal = |(frame, full): (Q::Frame, bool)| {
            if full { EnqueueError::Full(frame) } else { EnqueueError::NoMemory(frame) }
        };
        match hold.end() {
            Ok(()) => refused.map_or(Ok(queued), |r| Err(refusal(r))),
            // Removed meanwhile: the frame the burst could not queue comes back first.
            Err(back) => {
                Err(EnqueueError::Removed(ReturnedFrames { first: refused.map(|(frame, _)| frame), batch: back }))
            }
        }
    }

    /// An enqueue's writes straight into the queue ([`Enqueue::DIRECT_ENQUEUE`]): the
    /// frames `frames` yields while the queue lock is free, the intake empty (its
    /// frames came first: the queue takes them at the server's turn), no server waits,
    /// and the queue has room for each without a drop ([`Enqueue::has_room_for`]).
    ///
    /// No hold is taken: the queue lock keeps the slot from changing hands, since a
    /// removed txq's queue is handed back under that lock (`take_removed`) and the slot
    /// is reused only after. So the txq checked live once the lock is taken owns the
    /// queue until the unlock, even if it is removed meanwhile (its frames then come
    /// back with it). A stale id may take the lock of a slot being reused; it touches
    /// nothing behind it, as its check fails.
    ///
    /// The caller wakes the txq for what this queued (after the unlock, and only then:
    /// the wake is not taken before the frames are in); a panic in the caller's iterator
    /// or the queue's enqueue wakes it on the way out.
    #[inline(always)]
    fn enqueue_direct(
        &self,
        cell: &Cell<Q>,
        id: TxqId,
        frames: &mut impl Iterator<Item = Q::Frame>,
        now: Instant,
    ) -> Direct<Q::Frame> {
        let overtake = weakened!("direct_overtakes_intake");
        // Checked before the lock too, so that a backlogged intake costs no lock.
        if !Q::DIRECT_ENQUEUE || (!cell.inbox.intake.is_empty() && !overtake) {
            return Direct::Rest(0, None);
        }
        // An id stale already is refused before it touches the lock (see
        // `kept_live_slot`). Weakened variant `direct_unfiltered`, only to prove loom
        // models txq12 and txq13 catch it: no filter.
        let slot = if weakened!("direct_unfiltered") {
            self.sched.txqs.get(id.index())
        } else {
            self.sched.kept_live_slot(id)
        };
        let Some(slot) = slot else { return Direct::Gone };
        // Weakened variant, only to prove loom model txq1 catches it: the txq checked
        // before its queue lock is taken, so the slot can change hands in between and
        // the frame land in the next occupant's queue.
        let checked_unlocked = weakened!("direct_checked_unlocked");
        if checked_unlocked && !Scheduler::is_kept_live(slot, id) {
            return Direct::Gone;
        }
        // Declared before the lock, so dropped after it: an unwinding wake follows the unlock.
        let mut unwinding = DirectWake { sched: &self.sched, id, now, queued: false };
        let lock = &cell.inbox.queue_lock;
        let Some(_held) = lock.try_enqueuer(&self.sched, id.index()) else { return Direct::Rest(0, None) };
        if !checked_unlocked && !Scheduler::is_kept_live(slot, id) {
            return Direct::Gone;
        }
        if !cell.inbox.intake.is_empty() && !overtake {
            return Direct::Rest(0, None);
        }
        // SAFETY: the queue lock is held (`_held`, dropped after this borrow, which ends
        // with the function), and the cell is the live txq `id`'s. The borrow leaves
        // `with_mut`'s closure (as a turn's does), so loom checks the access where it is
        // taken, under the lock; nothing between it and the writes orders anything.
        let Some(queue) = cell.kept.with_mut(|kept| unsafe { &mut *kept }).queue.as_mut() else {
            return Direct::Rest(0, None);
        };
        let mut queued = 0u32;
        let mut written = Direct::Done(0);
        for frame in frames.by_ref() {
            // A server waiting for the queue gets it after this frame at most.
            if !queue.has_room_for(&frame) || (queued != 0 && lock.server_waits()) {
                written = Direct::Rest(queued, Some(frame));
                break;
            }
            unwinding.queued = true;
            queue.enqueue(frame, now);
            queued = queued.saturating_add(1);
        }
        if let Direct::Done(n) = &mut written {
            *n = queued;
        }
        // Returned: the caller wakes.
        unwinding.queued = false;
        written
    }

    /// Wakes txq `id` for `queued` frames written straight into its queue (none: no
    /// wake); `false` if it was removed since (the frames come back with it).
    #[inline]
    fn woken_for_direct(&self, id: TxqId, queued: u32, now: Instant) -> bool {
        queued == 0 || self.sched.wake_txq(id, now).is_ok()
    }

    /// Whether txq `id` may have frames (in its queue, its retry slot or its intake),
    /// without taking its turn: `false` means it has none, so a driver can clear a dozing station's TIM
    /// bit (mac80211 asks `txq_has_queue` for it) or skip a flush; `true` may be stale,
    /// as when a turn is serving the txq or its last wake's frames have been sent since.
    /// Read from the txq's word, its intake and its queue lock, no lock taken. An
    /// enqueue that races the call may not be counted: its wake follows it, as every
    /// enqueue's does, and the driver learns of the frame there. A driver that clears a
    /// TIM bit on `false` must order that against its wake path setting the bit (as
    /// mac80211 does under its `tim_lock`), or a racing enqueue's bit can be cleared
    /// after it was set. Any context.
    pub fn may_have_frames(&self, id: TxqId) -> Result<bool, SchedError> {
        let cell = self.cells.get(id.index()).ok_or(SchedError::UnknownTxq)?;
        // An enqueue that has taken its hold or the lock before these reads shows in the
        // intake, the lock or the word, but for the moment between its unlock and its
        // wake; one that starts meanwhile may be missed too: the race the docs allow.
        let pending = !cell.inbox.intake.is_empty() || !cell.inbox.queue_lock.is_at_rest();
        Ok(self.sched.txq_may_have_frames(id)? || pending)
    }

    /// The next txq of `round` with its queue ([`Scheduler::next_txq`]); the frames
    /// enqueued since its last turn are moved into the queue first. A txq whose queue
    /// an enqueue holds for longer than the server's bounded wait (the enqueuer was
    /// preempted) is returned `Stalled`, still listed, and the round goes on.
    pub fn next_txq(&self, round: Round, now: Instant) -> Option<TxqTurn<'_, Q>> {
        self.next_txq_noting(round, now, &mut false, &mut false)
    }

    /// [`next_txq`](Self::next_txq), setting `passed_over` if it passed a txq over
    /// because an enqueue held its queue, and `visited` once it took an entry off the
    /// AC's list ([`Scheduler::next_txq`]'s, which a concurrent round could then miss).
    pub(super) fn next_txq_noting(
        &self,
        round: Round,
        now: Instant,
        passed_over: &mut bool,
        visited: &mut bool,
    ) -> Option<TxqTurn<'_, Q>> {
        loop {
            let serving = self.sched.next_txq_visiting(round, now, visited)?;
            match self.turn(serving) {
                Ok(turn) => return Some(turn),
                // Handed out in this round: the round ends when it meets it again.
                Err(serving) => {
                    *passed_over = true;
                    serving.finish_table_turn(crate::TxqReturn::Stalled, now);
                }
            }
        }
    }

    /// Takes txq `id`'s turn outside any round, whatever its station's AQL budget and
    /// deficit: where a driver reaches a txq's retry frame and queue for a power-save
    /// flush (its station dozed: [`TxqTurn::take_retry`] first, then
    /// [`TxqTurn::dequeue`] into the driver's power-save buffer) or inspects them.
    /// Refused, with nothing held, for one of two reasons:
    /// [`Refusal::Served`](crate::Refusal::Served) while another context serves it (S3:
    /// one server at a time; try after that turn, or use
    /// [`run_round_hooked`](Self::run_round_hooked)'s pre-turn hook, which holds the turn
    /// the round got), or [`Refusal::QueueBusy`](crate::Refusal::QueueBusy) while a
    /// preempted enqueue holds its queue (the txq is left listed: try again later).
    /// Neither is counted in [`AcCounters::pull_refusals`](crate::AcCounters::pull_refusals),
    /// which counts pull-mode asks. Finish a granted turn as any turn: `Empty` once
    /// flushed (it leaves its AC's list until its next wake; `Empty` with frames left
    /// is taken as `Stalled`), `Stalled` to leave it listed. A removed txq's retry
    /// frame comes back with it instead ([`take_removed`](Self::take_removed)).
    ///
    /// Beside concurrent rounds, a claimed turn is a turn taken outside a round: as
    /// after [`may_transmit`](Self::may_transmit), once the call returned (and the turn,
    /// if any, was returned), run a round on the AC if
    /// [`may_have_frames`](Self::may_have_frames) says the txq may still have frames
    /// (`Err(UnknownTxq)`: removed, no round owed); the crate docs'
    /// [recipe](crate#concurrency) says why.
    ///
    /// Neither this nor [`enqueue`](Self::enqueue) ever waits for another context (a
    /// bounded spin at most), so a driver may call them holding its own power-save lock
    /// while its pre-turn hook, which runs holding a turn, takes that lock. Frames
    /// enqueued while the station dozes queue behind those it flushed, and enqueues
    /// append: a driver that flushes into its own buffer keeps order by sending the
    /// buffer before re-enqueueing anything, or by buffering the dozing station's new
    /// frames too. A driver that leaves them in the txq instead skips the station's
    /// turns ([`TurnStart::Skip`](super::TurnStart::Skip)) and keeps order for free.
    pub fn claim(&self, id: TxqId) -> Result<crate::MayTransmit<TxqTurn<'_, Q>>, SchedError> {
        use crate::{MayTransmit, Refusal};
        Ok(match self.sched.claim_txq(id)? {
            None => MayTransmit::Refused(Refusal::Served),
            Some(serving) => match self.turn_or_stall(serving, Instant::ZERO) {
                Some(turn) => MayTransmit::Granted(turn),
                None => MayTransmit::Refused(Refusal::QueueBusy),
            },
        })
    }

    /// Asks whether txq `id` may send now ([`Scheduler::may_transmit`], pull mode: its
    /// checks, the AC's PHY limit and the station's effective deficit, and what a
    /// pull-mode driver does about a [`Refusal::Deficit`](crate::Refusal::Deficit)),
    /// with its queue. Refused also with [`Refusal::QueueBusy`](crate::Refusal::QueueBusy)
    /// while an enqueue holds its queue for longer than the bounded wait (the enqueuer
    /// was preempted; the txq is left listed). Every refusal is counted
    /// ([`AcCounters::pull_refusals`](crate::AcCounters::pull_refusals)).
    /// [`TxqTurn::serve`] sends from a granted turn as a round would (its ring, its
    /// budget, the station's AQL limit checked before each frame) and returns it.
    ///
    /// Beside concurrent rounds (the crate docs'
    /// [recipe](crate#concurrency)): once this returned, and the turn if granted was
    /// served and returned, run a round on the AC if
    /// [`may_have_frames`](Self::may_have_frames) says the txq may still have frames,
    /// whatever this returned (a refusal may have held the txq a moment). `Err(UnknownTxq)`
    /// from either call means the txq was removed: its frames come back from
    /// [`take_removed`](Self::take_removed), and no round is owed for it. Several
    /// records of one fetch indication on one AC need one round (if any of their txqs
    /// may still have frames), after the last record's turn returned: a round started
    /// then sees every txq those turns listed.
    pub fn may_transmit(&self, id: TxqId, now: Instant) -> Result<crate::MayTransmit<TxqTurn<'_, Q>>, SchedError> {
        use crate::{MayTransmit, Refusal};
        Ok(match self.sched.may_transmit(id, now)? {
            MayTransmit::Granted(serving) => {
                let ac = serving.ac();
                match self.turn_or_stall(serving, now) {
                    Some(turn) => MayTransmit::Granted(turn),
                    None => {
                        self.sched.acs[ac].counters.count_refusal(Refusal::QueueBusy);
                        MayTransmit::Refused(Refusal::QueueBusy)
                    }
                }
            }
            MayTransmit::Refused(why) => MayTransmit::Refused(why),
        })
    }

    /// [`turn`](Self::turn), or the txq returned `Stalled` (still listed).
    fn turn_or_stall<'a>(&'a self, serving: crate::Serving<'a>, now: Instant) -> Option<TxqTurn<'a, Q>> {
        self.turn(serving).map_err(|serving| serving.finish_table_turn(crate::TxqReturn::Stalled, now)).ok()
    }

    /// The turn of the txq `serving` hands out, once its queue lock is taken; the handle
    /// back if an enqueue kept the lock throughout the server's bounded wait.
    fn turn<'a>(&'a self, serving: crate::Serving<'a>) -> Result<TxqTurn<'a, Q>, crate::Serving<'a>> {
        let index = serving.txq().index();
        // Unreachable `None`: the scheduler and the table have the same slots, and the
        // table never hands its scheduler out by value. The txq stays listed.
        let Some(cell) = self.cells.get(index) else { return Err(serving) };
        match cell.inbox.queue_lock.server() {
            Some(lock) => Ok(TxqTurn::new(serving, cell, lock)),
            None => Err(serving),
        }
    }
}

impl<Q: Txq> fmt::Debug for TxqTable<Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TxqTable").field("sched", &self.sched).field("txqs", &self.cells.len()).finish()
    }
}

/// Frees a handed-back txq's slot when dropped: after the driver's hand-back, or while
/// it unwinds.
struct ReleaseKept<'a> {
    sched: &'a Scheduler,
    index: usize,
}

impl Drop for ReleaseKept<'_> {
    fn drop(&mut self) {
        self.sched.release_kept(self.index);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::fq_codel::{FqCodelConfig, FqCodelTxq, FqFrame};
    use crate::{Config, Frame, TxqReturn, Weight};

    #[derive(Debug)]
    struct Pkt;
    impl Frame for Pkt {
        fn len_bytes(&self) -> u32 {
            100
        }
    }
    impl FqFrame for Pkt {
        fn flow_hash(&self) -> u32 {
            1
        }
    }

    const NOW: Instant = Instant::from_micros(1);

    fn one_txq(packet_limit: u32) -> (TxqTable<FqCodelTxq<Pkt>>, TxqId) {
        let config = Config::builder().max_stations(4).unwrap().max_txqs(4).unwrap().build();
        let t = TxqTable::new(Scheduler::new(config).unwrap());
        let sta = t.scheduler().add_station(Weight::DEFAULT).unwrap();
        let fq = FqCodelConfig { packet_limit, ..FqCodelConfig::default() };
        let q = t.add_txq(Some(sta), Tid::BE, FqCodelTxq::new(fq).unwrap()).unwrap();
        (t, q)
    }

    fn txq_word(t: &TxqTable<FqCodelTxq<Pkt>>, q: TxqId) -> u64 {
        t.sched.txqs[q.index()].word.load(Ordering::Acquire)
    }

    #[test]
    fn may_have_frames_is_false_only_for_a_txq_with_none() {
        let (t, q) = one_txq(1024);
        let sta = t.scheduler().txq_info(q).unwrap().0.unwrap();
        let be = crate::Ac::Be;
        assert_eq!(t.may_have_frames(q), Ok(false), "a new txq");
        t.enqueue(q, Pkt, NOW).unwrap();
        assert_eq!(t.may_have_frames(q), Ok(true), "a frame queued");
        // Served: true until the turn returns it, whatever the turn took.
        let mut turn = t.claim(q).unwrap().granted().unwrap();
        assert!(turn.dequeue(NOW).unwrap().is_some());
        assert_eq!(t.may_have_frames(q), Ok(true), "being served");
        // The ring refused it: kept in the retry slot, the txq returned stalled.
        assert!(turn.hold_back(Retry { frame: Pkt, charge: None }).is_ok());
        turn.finish(TxqReturn::Stalled, NOW);
        assert_eq!(t.may_have_frames(q), Ok(true), "a frame in the retry slot");
        let mut turn = t.claim(q).unwrap().granted().unwrap();
        assert!(turn.take_retry().is_some());
        turn.finish(TxqReturn::Empty, NOW);
        assert_eq!(t.may_have_frames(q), Ok(false), "sent, returned empty");
        // Listed for its station's debt alone: listed, and still no frame.
        t.enqueue(q, Pkt, NOW).unwrap();
        let mut turn = t.claim(q).unwrap().granted().unwrap();
        assert!(turn.dequeue(NOW).unwrap().is_some());
        t.scheduler().register_airtime(sta, be, 100_000, 0, NOW).unwrap();
        turn.finish(TxqReturn::Empty, NOW);
        assert_ne!(txq_word(&t, q) & txq::queued(be), 0, "kept listed for its debt");
        assert_eq!(t.may_have_frames(q), Ok(false), "listed for its debt alone");
        // A frame in the intake while an enqueue holds the queue (a preempted one, say).
        let lock = t.cells[q.index()].inbox.queue_lock.try_enqueuer(&t.sched, q.index()).unwrap();
        assert_eq!(t.may_have_frames(q), Ok(true), "an enqueue holds the queue");
        t.enqueue(q, Pkt, NOW).unwrap();
        drop(lock);
        assert!(!t.cells[q.index()].inbox.intake.is_empty(), "the frame went through the intake");
        assert_eq!(t.may_have_frames(q), Ok(true), "a frame in the intake");
        t.remove_txq(q).unwrap();
        assert_eq!(t.may_have_frames(q), Err(SchedError::UnknownTxq), "removed");
    }

    #[test]
    fn a_turn_finished_empty_with_frames_left_stays_listed() {
        // A pull-mode turn whose frame the firmware refused: kept back, the queue empty,
        // and the turn finished `Empty`, as a driver testing only the queue would.
        let (t, q) = one_txq(1024);
        t.enqueue(q, Pkt, NOW).unwrap();
        let mut turn = t.may_transmit(q, NOW).unwrap().granted().unwrap();
        let frame = turn.dequeue(NOW).unwrap().unwrap();
        assert!(turn.hold_back(Retry { frame, charge: None }).is_ok());
        assert!(turn.queue().unwrap().is_empty() && turn.is_backlogged());
        turn.finish(TxqReturn::Empty, NOW);
        assert_eq!(t.may_have_frames(q), Ok(true), "its frame is in the retry slot");
        // The next round reaches it without another enqueue's wake.
        let round = t.scheduler().start_round(crate::Ac::Be);
        let mut turn = t.next_txq(round, NOW).expect("listed: the round serves it");
        assert!(turn.take_retry().is_some());
        turn.finish(TxqReturn::Empty, NOW);
        assert_eq!(t.may_have_frames(q), Ok(false), "sent: now it is empty");
        // Frames left in the queue count too.
        t.enqueue_burst(q, &mut [Pkt, Pkt].into_iter(), NOW).unwrap();
        let mut turn = t.claim(q).unwrap().granted().unwrap();
        assert!(turn.dequeue(NOW).unwrap().is_some());
        turn.finish(TxqReturn::Empty, NOW);
        assert_eq!(t.may_have_frames(q), Ok(true), "one frame left in the queue");
        let round = t.scheduler().start_round(crate::Ac::Be);
        assert!(t.next_txq(round, NOW).is_some(), "and the round reaches it");
    }

    #[test]
    fn an_enqueue_straight_into_the_queue_takes_no_hold_and_wakes_the_txq() {
        let (mut t, q) = one_txq(1024);
        assert!(matches!(t.enqueue_burst(q, &mut [Pkt, Pkt].into_iter(), NOW), Ok(2)));
        let word = txq_word(&t, q);
        assert_eq!(word & txq::PRODUCERS, 0, "no hold taken, none left");
        assert_ne!(word & txq::queued(crate::Ac::Be), 0, "woken: listed");
        assert!(t.cells[q.index()].inbox.intake.is_empty(), "both went straight into the queue");
        assert_eq!(t.check_invariants(), Ok(()));
        // A stale id takes the lock, finds its txq gone, and touches nothing.
        t.remove_txq(q).unwrap();
        let removed = t.take_removed().expect("nobody holds it");
        assert_eq!(removed.queue.backlog_packets(), 2, "the frames came back with the txq");
        assert!(matches!(t.enqueue(q, Pkt, NOW), Err(EnqueueError::UnknownTxq(Pkt))));
        assert_eq!(t.check_invariants(), Ok(()), "the stale enqueue left the lock at rest");
    }

    #[test]
    fn a_burst_refused_a_hold_after_writing_straight_in_still_wakes_for_what_it_wrote() {
        // Room in the queue for one frame: the second goes to the intake, which needs a
        // hold, and every hold is taken.
        let (t, q) = one_txq(1);
        let word = &t.sched.txqs[q.index()].word;
        // 65535 holds, at once.
        word.fetch_add(txq::PRODUCERS, Ordering::AcqRel);
        assert!(t.sched.hold_txq(q).is_err(), "every hold taken");
        assert!(matches!(t.enqueue_burst(q, &mut [Pkt, Pkt].into_iter(), NOW), Err(EnqueueError::Busy(Pkt))));
        assert_ne!(txq_word(&t, q) & txq::queued(crate::Ac::Be), 0, "woken for the frame it queued");
        let mut turn = t.claim(q).unwrap().granted().unwrap();
        assert!(turn.dequeue(NOW).unwrap().is_some(), "the first frame is in the queue");
        assert!(turn.dequeue(NOW).unwrap().is_none(), "and only it");
        turn.finish(TxqReturn::Empty, NOW);
        word.fetch_sub(txq::PRODUCERS, Ordering::AcqRel);
    }

    #[test]
    fn the_table_check_finds_a_hold_a_count_or_a_lock_left_behind() {
        // A small table: the check walks every slot, and Miri runs this too.
        let config = Config::builder().max_stations(4).unwrap().max_txqs(4).unwrap().build();
        let mut t = TxqTable::new(Scheduler::new(config).unwrap());
        let sta = t.scheduler().add_station(Weight::DEFAULT).unwrap();
        let q = t.add_txq(Some(sta), Tid::BE, FqCodelTxq::new(FqCodelConfig::default()).unwrap()).unwrap();
        // A frame in the queue, three in the intake (a turn holds the queue meanwhile):
        // the intake's own node and two allocated ones.
        t.enqueue(q, Pkt, NOW).unwrap();
        let turn = t.claim(q).unwrap().granted().unwrap();
        assert!(matches!(t.enqueue_burst(q, &mut [Pkt, Pkt, Pkt].into_iter(), NOW), Ok(3)));
        turn.finish(TxqReturn::Backlogged, NOW);
        assert_eq!(t.check_invariants(), Ok(()), "frames in the queue and the intake, at rest");
        let stale = Err(crate::InvariantViolation::TableCellNotAtRest(q.index() as u16));
        // An enqueue's hold never ended.
        t.sched.hold_txq(q).unwrap();
        assert_eq!(t.check_invariants(), stale);
        t.sched.unhold_txq(q.index());
        // The intake's bound counting a frame it does not hold.
        t.cells[q.index()].inbox.len.fetch_add(1, Ordering::Relaxed);
        assert_eq!(t.check_invariants(), stale);
        t.cells[q.index()].inbox.len.fetch_sub(1, Ordering::Relaxed);
        // The count one short of the frames.
        t.cells[q.index()].inbox.len.fetch_sub(1, Ordering::Relaxed);
        assert_eq!(t.check_invariants(), stale);
        t.cells[q.index()].inbox.len.fetch_add(1, Ordering::Relaxed);
        // Served: at rest again.
        let mut turn = t.claim(q).unwrap().granted().unwrap();
        for _ in 0..4 {
            assert!(turn.dequeue(NOW).unwrap().is_some());
        }
        turn.finish(TxqReturn::Empty, NOW);
        assert_eq!(t.check_invariants(), Ok(()));
        // The queue left locked (last: nothing unlocks it).
        core::mem::forget(t.cells[q.index()].inbox.queue_lock.try_enqueuer(&t.sched, q.index()).unwrap());
        assert_eq!(t.check_invariants(), stale);
    }
}
