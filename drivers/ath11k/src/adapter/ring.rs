//! The core's [`Ring`] over the TCL rings: a view of the ring the sending CPU picks,
//! for one round on one AC, in one context. Two contexts each build their own view;
//! the HAL serialises each hardware ring (one lock per TCL ring, as ath11k has).

use super::TxqMark;
use super::counters::{DpCounters, HeldGauge};
use super::tables::StationSlots;
use crate::hal::{FrameOf, Hal, Msdu, RingId, TclDesc};
use airtime_sched::traits::{Frame, PushError, Ring, RingError, RingErrorKind};
use airtime_sched::{Ac, Charge, TxqId};
use core::sync::atomic::Ordering;

/// One round's view of the TCL rings, from one context.
pub(crate) struct TclRingView<'a, H> {
    pub(crate) hal: &'a H,
    pub(crate) stations: &'a StationSlots,
    pub(crate) counters: &'a DpCounters,
    pub(crate) marks: &'a [TxqMark],
    pub(crate) held: &'a HeldGauge,
    /// The sending CPU's ring.
    pub(crate) ring: RingId,
    /// The rings the hardware has (`max_tx_ring`).
    pub(crate) rings: u8,
    /// Try the other rings when it has no room (`tcl_ring_retry`).
    pub(crate) retry: bool,
    pub(crate) ac: Ac,
    /// Frames pushed in the current txq's turn.
    pub(crate) turn_pushed: u32,
    /// Whether the ring refused a frame in the current turn (the txq keeps it).
    pub(crate) turn_refused: bool,
}

/// Whether `ring` can take one more frame: a free descriptor and a free MSDU id. A
/// hint when two contexts push at once: the enqueue itself decides.
pub(crate) fn ring_has_room<H: Hal>(hal: &H, ring: RingId) -> bool {
    hal.tcl_free(ring) > 0 && hal.msdu_outstanding(ring) < hal.msdu_capacity(ring)
}

impl<'a, H: Hal> TclRingView<'a, H> {
    /// The ring a push goes to now: the CPU's ring, or with `retry` the first of the
    /// following rings with room.
    fn pick(&self) -> Option<RingId> {
        let mut ring = self.ring;
        let tries = if self.retry { self.rings } else { 1 };
        for _ in 0..tries {
            if ring_has_room(self.hal, ring) {
                return Some(ring);
            }
            ring = ring.next_of(self.rings);
        }
        None
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
    /// descriptor; on a refusal take the entry back and hand the frame back.
    ///
    /// A refused frame comes back with its charge, which the core's loop gives back
    /// (`TxqTurn::give_back`: no completion, so adaptive AQL learns nothing from it) and
    /// charges again when it sends the frame from the txq's retry slot. A frame waiting
    /// in a retry slot is not in flight, and a charge kept with it would count against
    /// the very AQL and PHY limits that gate its txq's next turn: a station whose kept
    /// charges reach its limit would never be served again.
    fn push(&mut self, frame: FrameOf<H>, charge: Option<Charge>) -> Result<(), PushError<FrameOf<H>, RingErrorKind>> {
        match self.push_inner(frame, charge) {
            Ok(()) => {
                self.turn_pushed = self.turn_pushed.saturating_add(1);
                Ok(())
            }
            Err(refused) => {
                self.turn_refused = true;
                Err(refused)
            }
        }
    }

    /// The retry slot's bookkeeping: the core's loop sends a txq's kept frame first in
    /// its turn, so a turn that pushed anything sent it; a turn the ring refused left
    /// a frame kept.
    fn end_turn(&mut self, txq: TxqId, ac: Ac) {
        if let Some(mark) = self.marks.get(txq.index()).map(|m| &m.holding) {
            if self.turn_pushed > 0 && mark.swap(0, Ordering::AcqRel) != 0 {
                self.held.down(ac);
            }
            // An AC index is below 4: `1 + index` cannot wrap.
            if self.turn_refused && mark.swap((ac.index() as u8).wrapping_add(1), Ordering::AcqRel) == 0 {
                self.held.up(ac);
                self.counters.held_for_retry.bump();
            }
        }
        self.turn_pushed = 0;
        self.turn_refused = false;
    }
}

impl<H: Hal> TclRingView<'_, H>
where
    FrameOf<H>: Frame,
{
    fn push_inner(
        &mut self,
        frame: FrameOf<H>,
        charge: Option<Charge>,
    ) -> Result<(), PushError<FrameOf<H>, RingErrorKind>> {
        let Some(ring) = self.pick() else {
            self.counters.ring_full.bump(self.ring);
            return Err(PushError { frame, charge, error: RingErrorKind::Full });
        };
        let len_bytes = frame.len_bytes();
        let frame_addr = self.hal.frame_addr(&frame);
        let peer_id =
            charge.as_ref().and_then(Charge::station).and_then(|sta| self.stations.get(sta)).map(|r| r.peer_id());
        let msdu_id = match self.hal.msdu_insert(ring, Msdu::new(frame, charge, self.ac)) {
            Ok(id) => id,
            Err(msdu) => {
                self.counters.msdu_table_full.bump(ring);
                let (frame, charge, _) = msdu.into_parts();
                return Err(PushError { frame, charge, error: RingErrorKind::Full });
            }
        };
        let desc = TclDesc { frame_addr, msdu_id, len_bytes, ac: self.ac, peer_id };
        match self.hal.tcl_enqueue(ring, desc) {
            Ok(()) => {
                self.counters.enqueued.bump(ring);
                Ok(())
            }
            Err(e) => {
                let kind = e.kind();
                match kind {
                    RingErrorKind::Full => self.counters.ring_full.bump(ring),
                    RingErrorKind::OutOfMemory => self.counters.out_of_memory.bump(ring),
                    _ => self.counters.other_failures.bump(ring),
                }
                match self.hal.msdu_take(ring, msdu_id) {
                    Some(msdu) => {
                        let (frame, charge, _) = msdu.into_parts();
                        Err(PushError { frame, charge, error: kind })
                    }
                    None => {
                        // The HAL lost its own entry: the frame is its to free now.
                        self.counters.msdu_table_errors.bump();
                        Ok(())
                    }
                }
            }
        }
    }
}
