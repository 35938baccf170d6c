//! The core's [`Ring`] over the TCL rings: a view of the ring the sending CPU picks,
//! for one round on one AC.

use super::tables::StationSlots;
use crate::hal::{FrameOf, Hal, Msdu, RingId, TclDesc};
use crate::stats::DpStats;
use airtime_sched::traits::{Frame, PushError, Ring, RingError, RingErrorKind};
use airtime_sched::{Ac, Charge};

/// One round's view of the TCL rings.
pub(crate) struct TclRingView<'a, H> {
    pub(crate) hal: &'a mut H,
    pub(crate) stations: &'a StationSlots,
    pub(crate) counters: &'a mut DpStats,
    /// The sending CPU's ring.
    pub(crate) ring: RingId,
    /// Try the other rings when it has no room (`tcl_ring_retry`).
    pub(crate) retry: bool,
    pub(crate) ac: Ac,
}

/// Whether `ring` can take one more frame: a free descriptor and a free MSDU id.
pub(crate) fn ring_has_room<H: Hal>(hal: &H, ring: RingId) -> bool {
    hal.tcl_free(ring) > 0 && hal.msdu_outstanding(ring) < hal.msdu_capacity(ring)
}

impl<H: Hal> TclRingView<'_, H> {
    /// The ring a push goes to now: the CPU's ring, or with `retry` the first of the
    /// following rings with room.
    fn pick(&self) -> Option<RingId> {
        let mut ring = self.ring;
        let tries = if self.retry { RingId::ALL.len() } else { 1 };
        for _ in 0..tries {
            if ring_has_room(&*self.hal, ring) {
                return Some(ring);
            }
            ring = ring.next();
        }
        None
    }
}

fn slot(v: &mut [u64], ring: RingId) -> Option<&mut u64> {
    v.get_mut(ring.index())
}

fn bump(v: &mut [u64], ring: RingId) {
    if let Some(c) = slot(v, ring) {
        *c = c.saturating_add(1);
    }
}

impl<H: Hal> Ring for TclRingView<'_, H>
where
    FrameOf<H>: Frame,
{
    type Frame = FrameOf<H>;
    type Error = RingErrorKind;

    fn has_room(&self, _ac: Ac) -> bool {
        self.pick().is_some()
    }

    /// ath11k's `ath11k_dp_tx` order: allocate the MSDU id, then write the
    /// descriptor; on a refusal take the entry back and hand frame and charge back.
    fn push(&mut self, frame: FrameOf<H>, charge: Option<Charge>) -> Result<(), PushError<FrameOf<H>, RingErrorKind>> {
        let Some(ring) = self.pick() else {
            bump(&mut self.counters.ring_full, self.ring);
            return Err(PushError { frame, charge, error: RingErrorKind::Full });
        };
        let len_bytes = frame.len_bytes();
        let peer_id = charge.as_ref().and_then(|c| self.stations.get(c.station())).map(|r| r.peer_id());
        let msdu_id = match self.hal.msdu_insert(ring, Msdu::new(frame, charge, self.ac)) {
            Ok(id) => id,
            Err(msdu) => {
                bump(&mut self.counters.msdu_table_full, ring);
                let (frame, charge, _) = msdu.into_parts();
                return Err(PushError { frame, charge, error: RingErrorKind::Full });
            }
        };
        let desc = TclDesc { msdu_id, len_bytes, ac: self.ac, peer_id };
        match self.hal.tcl_enqueue(ring, desc) {
            Ok(()) => {
                bump(&mut self.counters.enqueued, ring);
                Ok(())
            }
            Err(e) => {
                let kind = e.kind();
                match kind {
                    RingErrorKind::Full => bump(&mut self.counters.ring_full, ring),
                    RingErrorKind::OutOfMemory => bump(&mut self.counters.out_of_memory, ring),
                    _ => bump(&mut self.counters.other_failures, ring),
                }
                match self.hal.msdu_take(ring, msdu_id) {
                    Some(msdu) => {
                        let (frame, charge, _) = msdu.into_parts();
                        Err(PushError { frame, charge, error: kind })
                    }
                    None => {
                        // The HAL lost its own entry: the frame is its to free now.
                        self.counters.msdu_table_errors = self.counters.msdu_table_errors.saturating_add(1);
                        Ok(())
                    }
                }
            }
        }
    }
}
