//! The transmit side: the driver-owned scheduling round (patch 5), ended when the ring
//! has no room (patch 8, with the room checked before dequeue), and the retry slot
//! that keeps a refused frame.

use super::ring::TclRingView;
use super::{Ath11k, Ath11kError, Held};
use crate::hal::{FrameOf, Hal, RingId};
use airtime_sched::driver_loop::{self, RoundEnd};
use airtime_sched::traits::{Frame, PushError, Ring};
use airtime_sched::{Ac, Instant, Txq, TxqId};

/// What one driver round did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RoundOutcome {
    /// The AC served.
    pub ac: Ac,
    /// Frames pushed into the rings (the held frame included).
    pub frames: u32,
    /// Txqs the scheduler handed out.
    pub txqs_served: u32,
    /// Why the round ended; `RingFull` or `Refused` also when the held frame could not
    /// be pushed (then no txq was served).
    pub end: RoundEnd,
    /// Whether a refused frame waits in the AC's retry slot after the round.
    pub holding: bool,
}

impl<H, T> Ath11k<H, T>
where
    H: Hal,
    T: Txq<Frame = FrameOf<H>>,
    FrameOf<H>: Frame,
{
    /// mac80211's `wake_tx_queue` (patch 5): marks the txq backlogged and runs the
    /// driver's round on its AC, pushing into the ring of `cpu` (`cpu % 3`). Call it
    /// after enqueueing into the txq ([`Ath11k::txq_mut`]).
    pub fn wake_tx_queue(&mut self, txq: TxqId, cpu: u32, now: Instant) -> Result<RoundOutcome, Ath11kError> {
        let ac = self.txqs.get(txq).ok_or(Ath11kError::UnknownTxq)?.ac;
        self.sched.wake_txq(txq, now)?;
        Ok(self.run_round(ac, cpu, now))
    }

    /// One driver round on `ac` from `cpu`: the frame held in the AC's retry slot
    /// first, then [`driver_loop::run_round`] over the txqs, which checks ring room
    /// before each dequeue and ends the round when there is none (patch 8). A frame
    /// the ring refuses after dequeue goes to the retry slot with its charge.
    pub fn run_round(&mut self, ac: Ac, cpu: u32, now: Instant) -> RoundOutcome {
        let mut out = RoundOutcome { ac, frames: 0, txqs_served: 0, end: RoundEnd::Exhausted, holding: false };
        let mut view = TclRingView {
            hal: &mut self.hal,
            stations: &self.stations,
            counters: &mut self.counters,
            ring: RingId::for_cpu(cpu),
            retry: self.config.tcl_ring_retry,
            ac,
        };
        // Always in range (one slot per AC); an empty match arm keeps this panic-free.
        let Some(slot) = self.held.get_mut(ac.index()) else { return out };
        if let Some(held) = slot.take() {
            let end = if view.has_room(ac) {
                match view.push(held.frame, held.charge) {
                    Ok(()) => {
                        out.frames = 1;
                        None
                    }
                    Err(PushError { frame, charge, error }) => {
                        *slot = Some(Held { frame, charge, txq: held.txq });
                        Some(RoundEnd::Refused(error))
                    }
                }
            } else {
                *slot = Some(held);
                Some(RoundEnd::RingFull)
            };
            if let Some(end) = end {
                out.end = end;
                out.holding = true;
                self.blocked.insert(ac);
                return out;
            }
        }
        let report = driver_loop::run_round(&self.sched, ac, now, &mut self.txqs, &self.stations, &mut view);
        out.frames = out.frames.saturating_add(report.frames);
        out.txqs_served = report.txqs_served;
        out.end = report.end;
        self.counters.uncharged = self.counters.uncharged.saturating_add(u64::from(report.uncharged));
        if let Some(r) = report.refused {
            // The slot is empty: it was emptied above or the function returned.
            self.counters.held_for_retry = self.counters.held_for_retry.saturating_add(1);
            *slot = Some(Held { frame: r.frame, charge: r.charge, txq: r.txq });
        }
        out.holding = slot.is_some();
        match out.end {
            RoundEnd::RingFull | RoundEnd::Refused(_) => self.blocked.insert(ac),
            _ => self.blocked.remove(ac),
        }
        out
    }

    /// Runs a round on each AC of `acs` from `cpu` (mt76's and ath10k's "schedule all
    /// ACs"; also the kernel module's way to retry held frames from a timer).
    pub fn run_rounds(&mut self, acs: super::AcSet, cpu: u32, now: Instant) -> u32 {
        acs.iter().map(|ac| self.run_round(ac, cpu, now).frames).fold(0u32, u32::saturating_add)
    }
}
