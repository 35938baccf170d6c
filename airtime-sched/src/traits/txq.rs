//! The software queue the scheduler pulls frames from.

use crate::Instant;
use core::fmt::Debug;

/// A frame as the scheduler sees it: only its length matters for pricing.
pub trait Frame {
    /// Length in bytes as it will be transmitted (the length AQL prices; mac80211 uses
    /// `skb->len` at dequeue, in `ieee80211_tx_dequeue`).
    fn len_bytes(&self) -> u32;
}

impl<F: Frame + ?Sized> Frame for &F {
    fn len_bytes(&self) -> u32 {
        (**self).len_bytes()
    }
}

/// Error kinds a [`Txq`] can report, for generic code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TxqErrorKind {
    /// The queue may not be dequeued from right now (e.g. a BlockAck session is being
    /// set up: mac80211's `IEEE80211_TXQ_STOP`); its frames stay queued.
    Stopped,
    /// Anything else.
    Other,
}

/// An error a [`Txq`] reports.
pub trait TxqError: Debug {
    /// The generic kind of this error.
    fn kind(&self) -> TxqErrorKind;
}

impl TxqError for core::convert::Infallible {
    fn kind(&self) -> TxqErrorKind {
        match *self {}
    }
}

/// One (station, TID) software queue: the scheduler's unit of service.
///
/// Implementations keep frame order within a flow and never lose a frame they accepted
/// except through drops they count themselves (CoDel, limits).
pub trait Txq {
    /// The frame type.
    type Frame: Frame;
    /// The error type.
    type Error: TxqError;

    /// Takes the next frame, `Ok(None)` if there is none right now. `now` drives AQM
    /// (CoDel's sojourn time).
    fn dequeue(&mut self, now: Instant) -> Result<Option<Self::Frame>, Self::Error>;

    /// Length of the frame `dequeue` would most likely return next, `None` if empty.
    /// An AQM may still drop that frame at dequeue.
    /// [`driver_loop::run_round`](crate::driver_loop::run_round) prices and charges each
    /// frame at it before the dequeue (and re-prices a frame of another length), and
    /// ends the txq's turn on `None`: it never dequeues from an empty queue, so a queue
    /// must be left by its last frame's dequeue as a dequeue that then found it empty
    /// would leave it (see [`is_known_empty`](Self::is_known_empty)).
    fn peek_len(&self) -> Option<u32>;

    /// Whether the queue holds no frame. Must be false whenever
    /// [`dequeue`](Self::dequeue) could return one (an AQM may still drop it): a txq
    /// returned empty leaves its AC's list until its next wake.
    fn is_empty(&self) -> bool {
        self.peek_len().is_none()
    }

    /// Whether the queue is known to hold no frame, answered without calling out (a
    /// field read). The ready round loops ask it before each frame and end the txq's
    /// turn on `true`, sparing the station's AQL check and a dequeue that would find
    /// nothing; `false` means only "not known", and the table's loop dequeues until
    /// `Ok(None)` (the simple loop until [`peek_len`](Self::peek_len) says `None`). By
    /// default `false`, so a queue whose [`is_empty`](Self::is_empty) is
    /// costly (a driver's, asked through a callback) is not asked once per frame; one
    /// whose `is_empty` is a field read returns it here, as
    /// [`FqCodelTxq`](crate::FqCodelTxq) does. Like `is_empty`, it must be false
    /// whenever `dequeue` could return a frame; a wrong `true` loses nothing (the turn's
    /// return asks `is_empty`, so the txq stays listed) but sends nothing from the
    /// queue while it lasts. A queue that answers `true` must be left by its last
    /// frame's dequeue as a dequeue that then found it empty would leave it (its AQM's
    /// per-flow state), since no such call comes. A wrapper should forward it (one that
    /// does not takes that call at the end of every turn of the table's loop). The loops:
    /// [`TxqTable::run_round`](crate::TxqTable::run_round) (a txq's retry frame goes
    /// first, without asking) and [`driver_loop::run_round`](crate::driver_loop::run_round).
    fn is_known_empty(&self) -> bool {
        false
    }
}

impl<T: Txq + ?Sized> Txq for &mut T {
    type Frame = T::Frame;
    type Error = T::Error;

    fn dequeue(&mut self, now: Instant) -> Result<Option<Self::Frame>, Self::Error> {
        (**self).dequeue(now)
    }

    fn peek_len(&self) -> Option<u32> {
        (**self).peek_len()
    }

    fn is_empty(&self) -> bool {
        (**self).is_empty()
    }

    fn is_known_empty(&self) -> bool {
        (**self).is_known_empty()
    }
}

/// A [`Txq`] frames can be put into: what a [`TxqTable`](crate::TxqTable) needs to move
/// the frames of its lock-free intake into the queue when the txq's server takes them.
pub trait Enqueue: Txq {
    /// Queues `frame`, enqueued by the driver at `enqueued` (an AQM's sojourn time starts
    /// there, not when the server moved it). Frames the queue drops to keep its limits
    /// are its own to count and hand back (as [`FqCodelTxq`](crate::FqCodelTxq) does).
    fn enqueue(&mut self, frame: Self::Frame, enqueued: Instant);

    /// Whether an enqueue through a [`TxqTable`](crate::TxqTable) may write straight
    /// into this queue, on the enqueuing context, when no other context holds it (as
    /// mainline's `ieee80211_txq_enqueue` runs FQ-CoDel's enqueue on the transmit path):
    /// the server's turn then only dequeues. `false` (the default): every frame goes
    /// through the txq's lock-free intake, and the server's turn moves it into the
    /// queue; enqueues then never take the txq's queue lock, so a server never waits
    /// for one. [`FqCodelTxq`](crate::FqCodelTxq) opts in.
    const DIRECT_ENQUEUE: bool = false;

    /// Whether [`enqueue`](Self::enqueue) would keep `frame` and every frame already
    /// queued, dropping nothing to keep its limits; asked only with
    /// [`DIRECT_ENQUEUE`](Self::DIRECT_ENQUEUE). An enqueue writes straight into the
    /// queue only while this is true; otherwise the frame waits in the txq's intake and
    /// the server's turn moves it into the queue, where any limit drop is made: so a
    /// txq nobody serves (its station asleep) makes no limit drop on the enqueuing
    /// context, and its intake's bound refuses what does not fit. By default `false`.
    /// [`FqCodelTxq`](crate::FqCodelTxq) answers from its packet and memory limits.
    fn has_room_for(&self, frame: &Self::Frame) -> bool {
        let _ = frame;
        false
    }
}
