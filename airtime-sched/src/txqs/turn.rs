//! A txq's turn: the scheduler's [`Serving`] handle with the txq's queue.

use super::queue_lock::ServerGuard;
use super::table::{Cell, Kept, Retry};
use crate::traits::{Enqueue, Txq};
use crate::{Ac, Instant, Serving, StationId, TxqId, TxqReturn};

/// One context's turn at one txq of a [`TxqTable`](crate::TxqTable): sole access to its
/// queue and retry slot until [`finish`](Self::finish) (or drop, which returns the txq
/// as [`Serving`]'s drop does).
#[must_use = "a txq's turn must be finished with TxqTurn::finish"]
pub struct TxqTurn<'a, Q: Txq> {
    // Declared first, so dropped first: the queue is unlocked before the txq is
    // returned (a removal then hands it back at once).
    lock: ServerGuard<'a>,
    serving: Serving<'a>,
    cell: &'a Cell<Q>,
    /// The round's pre-turn hook skipped it.
    skipped: bool,
}

impl<'a, Q: Txq + Enqueue> TxqTurn<'a, Q> {
    pub(super) fn new(serving: Serving<'a>, cell: &'a Cell<Q>, lock: ServerGuard<'a>) -> TxqTurn<'a, Q> {
        let mut turn = TxqTurn { lock, serving, cell, skipped: false };
        turn.pull_intake();
        turn
    }

    /// The cell's queue and retry slot.
    #[inline]
    fn kept(&mut self) -> &mut Kept<Q> {
        // SAFETY: this turn holds the cell's queue lock (`self.lock`) until it ends,
        // which needs `self`; the borrow is tied to `&mut self`, so it cannot outlive it.
        self.cell.kept.with_mut(|kept| unsafe { &mut *kept })
    }

    #[inline]
    fn kept_ref(&self) -> &Kept<Q> {
        // SAFETY: as in `kept`; a shared borrow of `self` excludes the `&mut` one.
        self.cell.kept.with(|kept| unsafe { &*kept })
    }

    /// Moves the frames enqueued since the last pull into the queue, in arrival order.
    /// Returns how many it moved. The turn pulls when it starts and whenever
    /// [`dequeue`](Self::dequeue) finds the queue empty; the table's ready loop pulls
    /// once more at each turn's end, and a loop of the driver's own should too, before
    /// [`finish`](Self::finish): an enqueue writes straight into the queue only while
    /// the intake is empty (its frames come first), so frames left in the intake would
    /// send every later enqueue there too, until the next turn moved them all on the
    /// serving context. (`finish` does not pull: a pull may drop on the queue's limits,
    /// and the driver takes the drops before it ends the turn.)
    pub fn pull_intake(&mut self) -> usize {
        // No inline hint (the compiler inlines it anyway): hinted, the round loop's code
        // tipped the two-thread end-to-end run at 256 stations with a round after every
        // burst into its slow state (the completion context's rounds take a frame a
        // turn), 33 % fewer frames a second there, for 3 to 9 % more in the other cases
        // (benches/LOG.md, "The intake's pull, not hinted inline").
        // The empty check first: at a turn's end the intake is most often empty.
        if self.cell.inbox.intake.is_empty() {
            return 0;
        }
        self.pull_from_intake()
    }

    /// [`pull_intake`](Self::pull_intake) past its check for an empty intake.
    fn pull_from_intake(&mut self) -> usize {
        if self.kept().queue.is_none() {
            // Not a table txq (added straight to the scheduler): it has no queue, and no
            // enqueue can reach its intake (holds need a kept txq).
            return 0;
        }
        let cell = self.cell;
        let kept = self.kept();
        let Some(queue) = kept.queue.as_mut() else { return 0 };
        let mut moved = 0;
        // Counted off the intake's bound before the queue takes them (a queue that
        // unwinds cannot shrink the bound for good); the emptied nodes stay in the
        // intake's cache for the next enqueues.
        cell.inbox.intake.drain_hinted(
            &mut kept.hints,
            |n| {
                moved = n;
                cell.taken(n);
            },
            |frame, enqueued| queue.enqueue(frame, enqueued),
        );
        moved
    }

    /// Whether a round's pre-turn hook skipped this turn
    /// ([`TurnStart::Skip`](super::TurnStart::Skip)): nothing was dequeued or pushed, and
    /// the ring heard nothing of it. What an `at_turn_end` closure of
    /// [`TxqTable::run_round_hooked`](super::TxqTable::run_round_hooked) asks when it has
    /// work only for served turns (an A-MPDU to close, a turn to count).
    #[inline]
    pub fn skipped(&self) -> bool {
        self.skipped
    }

    /// Marks the turn skipped by the round's pre-turn hook.
    pub(super) fn mark_skipped(&mut self) {
        self.skipped = true;
    }

    /// The txq being served.
    #[inline]
    pub fn txq(&self) -> TxqId {
        self.serving.txq()
    }

    /// Its access category.
    #[inline]
    pub fn ac(&self) -> Ac {
        self.serving.ac()
    }

    /// Its station, as [`Serving::station`] says.
    #[inline]
    pub fn station(&self) -> Option<StationId> {
        self.serving.station()
    }

    /// The scheduler's handle, to read. The turn keeps it: handing out `&mut` would let
    /// safe code swap it for another txq's handle and return it while the turn still
    /// reaches this queue. Charge through the turn's own methods.
    #[inline]
    pub fn serving(&self) -> &Serving<'a> {
        &self.serving
    }

    /// Whether the station may have more airtime charged now
    /// ([`Serving::airtime_check`]).
    #[inline]
    pub fn airtime_check(&self) -> bool {
        self.serving.airtime_check()
    }

    /// Charges a frame dequeued in this turn ([`Serving::charge_us`]).
    #[inline]
    pub fn charge_us(&mut self, airtime_us: u32) -> Result<crate::Charge, crate::ChargeError> {
        self.serving.charge_us(airtime_us)
    }

    /// Records a frame of this turn sent without a charge ([`Serving::send_uncharged`]).
    #[inline]
    pub fn send_uncharged(&mut self) {
        self.serving.send_uncharged();
    }

    /// Prices and charges a frame dequeued in this turn ([`Serving::charge_frame`]).
    #[inline]
    pub fn charge_frame<S: crate::Station + ?Sized>(
        &mut self,
        station: &S,
        frame_len: u32,
    ) -> Result<crate::Charge, crate::ChargeError> {
        self.serving.charge_frame(station, frame_len)
    }

    /// Gives back a charge of this turn whose frame is not sent after all
    /// ([`Serving::give_back`]).
    #[inline]
    pub fn give_back(&mut self, charge: crate::Charge) -> Result<(), crate::ReleaseError> {
        self.serving.give_back(charge)
    }

    /// The txq's queue (`None` for a txq added straight to the scheduler).
    pub fn queue(&mut self) -> Option<&mut Q> {
        self.kept().queue.as_mut()
    }

    /// The next frame of the queue, pulling the intake first if the queue is empty.
    /// Frames in the retry slot are not returned here: see [`take_retry`](Self::take_retry).
    pub fn dequeue(&mut self, now: Instant) -> Result<Option<Q::Frame>, Q::Error> {
        let Some(queue) = self.kept().queue.as_mut() else { return Ok(None) };
        if let Some(frame) = queue.dequeue(now)? {
            return Ok(Some(frame));
        }
        if self.pull_intake() == 0 {
            return Ok(None);
        }
        match self.kept().queue.as_mut() {
            Some(queue) => queue.dequeue(now),
            None => Ok(None),
        }
    }

    /// Takes the frame the ring refused at an earlier turn, with its charge if it kept
    /// one (the table's loop gives a kept frame's charge back, and charges it again when
    /// sent): send it before any other.
    pub fn take_retry(&mut self) -> Option<Retry<Q::Frame>> {
        self.kept().retry.take()
    }

    /// Keeps a frame the ring refused (with a charge, or none: a kept charge counts
    /// against the limits that decide this txq's next turn), to be sent first at the txq's
    /// next turn. `Err` hands it back if the slot already holds one, or if the txq is
    /// not the table's (added straight to the scheduler: nothing would hand the frame
    /// back when it is removed).
    pub fn hold_back(&mut self, retry: Retry<Q::Frame>) -> Result<(), Retry<Q::Frame>> {
        let kept = self.kept();
        if kept.retry.is_some() || kept.queue.is_none() {
            return Err(retry);
        }
        kept.retry = Some(retry);
        Ok(())
    }

    /// Whether [`dequeue`](Self::dequeue) is known to find nothing: the intake is
    /// empty and the queue knows it is ([`Txq::is_known_empty`]). `false` is "not
    /// known". The retry slot aside.
    #[inline]
    pub(crate) fn is_known_drained(&self) -> bool {
        self.kept_ref().queue.as_ref().is_none_or(Txq::is_known_empty) && self.cell.inbox.intake.is_empty()
    }

    /// Whether the txq has frames: in its retry slot, its queue or its intake.
    pub fn is_backlogged(&self) -> bool {
        self.holds_frames() || !self.cell.inbox.intake.is_empty()
    }

    /// Whether the turn can see frames of its own: in the retry slot or the queue.
    #[inline]
    fn holds_frames(&self) -> bool {
        let kept = self.kept_ref();
        kept.retry.is_some() || kept.queue.as_ref().is_some_and(|q| !q.is_empty())
    }

    /// Ends the turn ([`Scheduler::return_txq`](crate::Scheduler::return_txq)). Pull the
    /// intake first ([`pull_intake`](Self::pull_intake)), so that later enqueues write
    /// the queue straight.
    ///
    /// [`TxqReturn::Empty`] for a txq that still holds frames the turn could see (a
    /// frame put back with [`hold_back`](Self::hold_back), frames left in the queue) is
    /// taken as [`TxqReturn::Stalled`]: it stays listed, so those frames are not left
    /// waiting for the next enqueue's wake. (Frames an enqueue put in the intake
    /// meanwhile need no such care: that enqueue's own wake lists the txq.) The outcome
    /// that says what the turn saw is
    /// [`TxqReturn::after_turn`]`(turn.is_backlogged(), sent_any)`.
    ///
    /// A turn from [`TxqTable::may_transmit`](crate::TxqTable::may_transmit) or
    /// [`TxqTable::claim`](crate::TxqTable::claim) beside concurrent rounds: after this,
    /// run a round on the AC if
    /// [`TxqTable::may_have_frames`](crate::TxqTable::may_have_frames) says the txq may
    /// still have frames (the crate docs' [recipe](crate#concurrency)).
    pub fn finish(self, outcome: TxqReturn, now: Instant) {
        let outcome = if outcome == TxqReturn::Empty && self.holds_frames() { TxqReturn::Stalled } else { outcome };
        self.finish_as_seen(outcome, now);
    }

    /// [`finish`](Self::finish) with `outcome` already read from
    /// [`is_backlogged`](Self::is_backlogged) (the table's own loops).
    pub(super) fn finish_as_seen(self, outcome: TxqReturn, now: Instant) {
        let TxqTurn { lock, serving, cell: _, skipped: _ } = self;
        // Unlocked first: once returned, a removed txq may be handed back at once.
        drop(lock);
        serving.finish_table_turn(outcome, now);
    }
}

impl<Q: Txq> core::fmt::Debug for TxqTurn<'_, Q> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TxqTurn").field("serving", &self.serving).finish_non_exhaustive()
    }
}
