//! The hardware descriptor ring a driver pushes frames into.

use crate::{Ac, Charge, StationId, TxqId};
use core::fmt::{self, Debug};

/// Error kinds a [`Ring`] can report when it refuses a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RingErrorKind {
    /// No descriptor free (-ENOSPC).
    Full,
    /// Out of memory or a DMA mapping failure (-ENOMEM).
    OutOfMemory,
    /// No more frames of *this* txq now, though other txqs' frames still fit: its
    /// BlockAck window is exhausted, or the firmware's per-TID queue is full (ath9k's
    /// aggregation stops at the window's edge the same way). In
    /// [`TxqTable::run_round`](crate::TxqTable::run_round) the frame goes to the txq's
    /// retry slot, the txq's turn ends (returned stalled, to the tail: it cannot move
    /// until completions open its window) and the round goes on with the next txq. A
    /// driver that knows the window is closed before the turn starts skips the txq in its
    /// pre-turn hook instead ([`TurnStart::Skip`](crate::txqs::TurnStart::Skip)): nothing
    /// is dequeued or charged then. [`driver_loop::run_round`](crate::driver_loop::run_round),
    /// which has no retry slot, ends the round on it as on any refusal.
    TxqFull,
    /// Anything else.
    Other,
}

/// An error a [`Ring`] reports.
pub trait RingError: Debug {
    /// The generic kind of this error.
    fn kind(&self) -> RingErrorKind;
}

impl RingError for RingErrorKind {
    fn kind(&self) -> RingErrorKind {
        *self
    }
}

/// A refused push: the frame and its charge come back to the caller, untouched, with
/// the reason. Nothing is lost (invariant: a refused push loses no frame and no charge).
#[must_use = "a refused frame still holds its charge; release it or push it again"]
pub struct PushError<F, E> {
    /// The frame that was not taken.
    pub frame: F,
    /// Its charge, still to be released (`None` for an uncharged frame, e.g. multicast).
    pub charge: Option<Charge>,
    /// Why.
    pub error: E,
}

impl<F, E: Debug> Debug for PushError<F, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PushError").field("charge", &self.charge).field("error", &self.error).finish_non_exhaustive()
    }
}

/// A hardware transmit ring.
///
/// What the hardware does with the frames it holds is configuration, not asked here:
/// firmware that picks the next transmitter itself (ath11k) is
/// [`Config::tx_no_pushback`](crate::Config::tx_no_pushback), set when the scheduler is
/// built, before any ring exists.
pub trait Ring {
    /// The frame type the ring takes.
    type Frame;
    /// The error type of a refused push.
    type Error: RingError;

    /// Whether one more frame of `ac` would fit now. Checked *before* a frame is
    /// dequeued, so the frame that meets a shortage stays in its txq (ath10k's and
    /// mt76's order; the seed's patch 8 frees it instead).
    fn has_room(&self, ac: Ac) -> bool;

    /// Hands a frame and its charge to the hardware, which keeps the charge until the
    /// frame completes (then the driver releases it). A station-less (multicast) txq's
    /// frame carries a charge of its AC's multicast budget when the driver prices
    /// multicast frames, and none otherwise. On refusal both come back.
    ///
    /// A push that unwinds (std builds) takes the charge down with it: its airtime stays
    /// pending for good, and a removed station charged with it never drains. The ready
    /// loops lose nothing else: the queue is unlocked and the turn returned, its txq
    /// listed with the rest of its frames (at the tail, where a stalled txq goes) and
    /// the round gate reopened; only [`end_turn`](Self::end_turn) and the turn-end hook
    /// are skipped for that turn, and requests handed to a gated round wait for the next
    /// runner. Only the ring can keep the charge: one that may panic releases the charge
    /// it holds on the way out, or aborts.
    fn push(&mut self, frame: Self::Frame, charge: Option<Charge>) -> Result<(), PushError<Self::Frame, Self::Error>>;

    /// The turn of txq `txq`, of `station` (`None`: a station-less txq, or one whose
    /// station was removed before the turn, which then pushes nothing), starts: every
    /// push until the matching [`end_turn`](Self::end_turn) is of that txq, and each
    /// charged one is charged to `station`. Where a driver looks up, once per turn
    /// rather than per frame, what its descriptors need (mt76's wcid, ath11k's peer, a
    /// station-less txq's multicast index, which an uncharged frame's
    /// [`push`](Self::push) cannot tell) and opens the A-MPDU it builds from the turn's
    /// frames.
    ///
    /// `station` is the one the turn holds, read when the txq was handed out: use it
    /// rather than a look-up by `txq`, which fails once another context removes the txq
    /// (its frames may still be sent in this turn, as a txq's removal does not stop its
    /// server) and may then name the slot's next txq. The station's own removal during
    /// the turn ends the turn's charges; frames charged before it are still pushed and
    /// their completions accounted to the departed station, whose hardware index stays
    /// reserved until it drains
    /// ([`DepartingStation`](crate::DepartingStation)).
    ///
    /// The ready loops call it for each turn they serve, before its first push, and
    /// pair it with `end_turn` (unless a callback unwinds in between); never for a turn
    /// they do not serve (see `end_turn`). A turn may push nothing (its queue drained,
    /// its station over its AQL limit). Does nothing by default.
    #[inline]
    fn start_turn(&mut self, txq: TxqId, station: Option<StationId>, ac: Ac) {
        let _ = (txq, station, ac);
    }

    /// The turn of txq `txq` ended: where a host-aggregating driver closes the A-MPDU it
    /// built from that txq's frames and rings the doorbell. Every push between
    /// [`start_turn`](Self::start_turn) and this call is of the one txq both name. The
    /// ready loops call it after each turn they serve, whether it pushed or not; not for
    /// a txq a pre-turn hook skips ([`TurnStart::Skip`](crate::txqs::TurnStart::Skip)),
    /// nor, in [`driver_loop::run_round`](crate::driver_loop::run_round), for one whose
    /// txq or station the driver's tables lack (nothing is dequeued from it). Does
    /// nothing by default.
    #[inline]
    fn end_turn(&mut self, txq: TxqId, ac: Ac) {
        let _ = (txq, ac);
    }
}

impl<R: Ring + ?Sized> Ring for &mut R {
    type Frame = R::Frame;
    type Error = R::Error;

    fn has_room(&self, ac: Ac) -> bool {
        (**self).has_room(ac)
    }

    fn push(&mut self, frame: Self::Frame, charge: Option<Charge>) -> Result<(), PushError<Self::Frame, Self::Error>> {
        (**self).push(frame, charge)
    }

    #[inline]
    fn start_turn(&mut self, txq: TxqId, station: Option<StationId>, ac: Ac) {
        (**self).start_turn(txq, station, ac)
    }

    #[inline]
    fn end_turn(&mut self, txq: TxqId, ac: Ac) {
        (**self).end_turn(txq, ac)
    }
}
