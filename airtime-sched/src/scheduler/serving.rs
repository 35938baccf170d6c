//! The handle a context holds while it serves a txq.

use super::Scheduler;
use crate::{Ac, Instant, TxqId};

/// What the server saw when it returns a txq.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TxqReturn {
    /// Frames remain and the server made progress: the txq keeps its turn at the front
    /// (mainline's head insertion with frames).
    Backlogged,
    /// Frames remain but the server could not move them now (ring full, AQL limit):
    /// the txq goes to the back so it cannot pin the front (invariant S7, bug B4).
    Stalled,
    /// The txq is empty.
    Empty,
}

/// Sole service of one txq (invariant S3), from [`Scheduler::next_txq`] or
/// [`Scheduler::may_transmit`] until [`Scheduler::return_txq`].
///
/// Dropping the handle without returning it returns the txq as
/// [`TxqReturn::Stalled`] at time 0: it stays scheduled (no backlog is lost, S1)
/// without pinning the front. Return it explicitly to say what you saw.
#[must_use = "a served txq must be returned with Scheduler::return_txq"]
#[derive(Debug)]
pub struct Serving<'a> {
    sched: &'a Scheduler,
    txq: TxqId,
    ac: Ac,
    live: bool,
}

impl<'a> Serving<'a> {
    pub(crate) fn new(sched: &'a Scheduler, txq: TxqId, ac: Ac) -> Serving<'a> {
        Serving { sched, txq, ac, live: true }
    }

    /// The txq being served.
    #[inline]
    pub fn txq(&self) -> TxqId {
        self.txq
    }

    /// Its access category.
    #[inline]
    pub fn ac(&self) -> Ac {
        self.ac
    }

    /// Its station, if any (`None` for station-less txqs, or if the station was removed).
    pub fn station(&self) -> Option<crate::StationId> {
        self.sched.txqs.get(self.txq.index()).and_then(|s| s.station())
    }

    /// Whether the station may have more airtime charged now (the AQL check a driver
    /// runs before each dequeue, reference 3.8 step 1). Always true without a station.
    pub fn airtime_check(&self) -> bool {
        let mgmt = self.sched.txqs.get(self.txq.index()).is_some_and(|s| s.tid() == 16);
        match self.station() {
            Some(sta) if !mgmt => self.sched.airtime_check(sta, self.ac).unwrap_or(true),
            _ => true,
        }
    }

    /// Returns the txq; the same as [`Scheduler::return_txq`].
    pub fn finish(self, outcome: TxqReturn, now: Instant) {
        let sched = self.sched;
        sched.return_txq(self, outcome, now);
    }

    pub(crate) fn into_parts(mut self) -> (TxqId, Ac) {
        self.live = false;
        (self.txq, self.ac)
    }
}

impl Drop for Serving<'_> {
    fn drop(&mut self) {
        if self.live {
            self.sched.finish_service(self.txq, self.ac, TxqReturn::Stalled, Instant::ZERO);
        }
    }
}
