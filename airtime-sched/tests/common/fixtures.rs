//! Test doubles the way a driver's own tests would write them: a FIFO txq that remembers
//! when each frame was enqueued, and stations priced at a fixed airtime per frame.

use airtime_sched::driver_loop::StationTable;
use airtime_sched::traits::{PushError, RingErrorKind, StationErrorKind};
use airtime_sched::{Ac, Charge, Enqueue, Frame, Instant, Ring, Station, StationId, Txq};
use std::collections::VecDeque;

/// A FIFO txq of `P` frames, each with the time it was enqueued at.
pub struct Fifo<P>(pub VecDeque<(P, Instant)>);

impl<P> Default for Fifo<P> {
    fn default() -> Self {
        Fifo(VecDeque::new())
    }
}

impl<P> Fifo<P> {
    /// The queued frames, oldest first.
    pub fn frames(&self) -> impl Iterator<Item = &P> {
        self.0.iter().map(|(p, _)| p)
    }

    /// How many frames are queued.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no frame is queued.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<P: Frame> Txq for Fifo<P> {
    type Frame = P;
    type Error = core::convert::Infallible;
    fn dequeue(&mut self, _: Instant) -> Result<Option<P>, Self::Error> {
        Ok(self.0.pop_front().map(|(p, _)| p))
    }
    fn peek_len(&self) -> Option<u32> {
        self.0.front().map(|(p, _)| p.len_bytes())
    }
    fn is_known_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<P: Frame> Enqueue for Fifo<P> {
    fn enqueue(&mut self, frame: P, enqueued: Instant) {
        self.0.push_back((frame, enqueued));
    }
}

/// What [`Peer`] prices every frame at, in us.
pub const PEER_PRICE_US: u32 = 100;

/// A station that prices every frame at [`PEER_PRICE_US`] and has no rate.
pub struct Peer(pub StationId);

impl Station for Peer {
    type Error = StationErrorKind;
    fn station_id(&self) -> StationId {
        self.0
    }
    fn last_tx_rate(&self) -> Option<airtime_est::Rate> {
        None
    }
    fn expected_airtime_us(&self, _: u32, _: Ac) -> Result<u32, StationErrorKind> {
        Ok(PEER_PRICE_US)
    }
}

/// A station table of [`Peer`]s, looked up by id.
pub struct Peers(pub Vec<Peer>);

impl StationTable for Peers {
    type Station = Peer;
    fn station(&self, id: StationId) -> Option<&Peer> {
        self.0.iter().find(|p| p.0 == id)
    }
}

/// A ring with room for everything: what the rounds pushed, with their charges.
pub struct OpenRing<P>(pub Vec<(P, Option<Charge>)>);

impl<P> Default for OpenRing<P> {
    fn default() -> Self {
        OpenRing(Vec::new())
    }
}

impl<P: Frame> Ring for OpenRing<P> {
    type Frame = P;
    type Error = RingErrorKind;
    fn has_room(&self, _: Ac) -> bool {
        true
    }
    fn push(&mut self, frame: P, charge: Option<Charge>) -> Result<(), PushError<P, RingErrorKind>> {
        self.0.push((frame, charge));
        Ok(())
    }
}
