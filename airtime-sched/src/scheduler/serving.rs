//! The handle a context holds while it serves a txq.

use super::{ChargeError, Scheduler};
use crate::traits::Station;
use crate::{Ac, Charge, Instant, TxqId};

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

impl TxqReturn {
    /// What a turn that saw its txq `backlogged` (frames left anywhere it keeps them)
    /// after `progressed` (sent at least one frame) returns: empty without frames,
    /// backlogged at the head after progress, stalled at the tail without (a full
    /// ring, a skipped turn, a station over its AQL limit).
    #[inline]
    pub const fn after_turn(backlogged: bool, progressed: bool) -> TxqReturn {
        match (backlogged, progressed) {
            (false, _) => TxqReturn::Empty,
            (true, true) => TxqReturn::Backlogged,
            (true, false) => TxqReturn::Stalled,
        }
    }
}

/// Sole service of one txq (invariant S3), from [`Scheduler::next_txq`] or
/// [`Scheduler::may_transmit`] until [`Scheduler::return_txq`].
///
/// Dropping the handle without returning it returns the txq as
/// [`TxqReturn::Stalled`] at time 0: it stays scheduled (no backlog is lost, S1)
/// without pinning the front. Return it explicitly to say what you saw.
///
/// Frames dequeued from the txq are best charged through the handle
/// ([`charge_us`](Self::charge_us), [`charge_frame`](Self::charge_frame)): the station's
/// pending airtime counts them at once, as [`Scheduler::charge_us`] does, but the AC's
/// pending counter, which every charge and release on the AC writes, gets their sum when
/// the txq is returned, or sooner once the sum reaches [`Serving::FLUSH_US`], instead of
/// once per frame. This context's own checks ([`airtime_check`](Self::airtime_check))
/// count them meanwhile, so one context decides exactly as if each frame had gone to the
/// AC at once. Another context's view of the AC (its round start, its checks, the
/// statistics) lags by less than `FLUSH_US`: those charges, less whatever of them has
/// completed already, are not in it yet. (Mainline cannot run two rounds on an AC at
/// once, so it never has that second view.) A context holding two handles at once is two
/// views too: each handle's check counts its own charges, not the other's. A handle
/// leaked with `mem::forget` loses its sum, and the txq stays held: `check_invariants`
/// reports both.
#[must_use = "a served txq must be returned with Scheduler::return_txq"]
#[derive(Debug)]
pub struct Serving<'a> {
    sched: &'a Scheduler,
    txq: TxqId,
    ac: Ac,
    live: bool,
    /// Airtime charged through this handle and not yet added to the AC's counter, in us.
    own_us: u64,
    /// The txq's station, read once: it is fixed while the txq lives, and the slot
    /// cannot take another txq while this handle holds it.
    station: Option<crate::StationId>,
    /// The txq is the management (TID 16) txq, which AQL never limits.
    mgmt: bool,
}

impl<'a> Serving<'a> {
    /// The most airtime charged through a handle that the AC's counter may lack, in us:
    /// a sum that reaches it is added at once. About 70 VHT80 aggregated 1500-byte frames
    /// (one completion budget), and under the default AQL low limit (5000 us), so another
    /// context's view of the AC is never off by more than one station's low limit.
    pub const FLUSH_US: u64 = 2048;

    pub(crate) fn new(sched: &'a Scheduler, txq: TxqId, ac: Ac, slot: &crate::slots::TxqSlot) -> Serving<'a> {
        Serving { sched, txq, ac, live: true, own_us: 0, station: slot.station(), mgmt: slot.tid() == 16 }
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

    /// Its station: `None` for a station-less txq, and once the station was removed
    /// (then [`station_removed`](Self::station_removed) is true), which may happen while
    /// the txq is held.
    pub fn station(&self) -> Option<crate::StationId> {
        self.station_and_removed().0
    }

    /// Whether the txq's station was removed (while or before it was held): nothing
    /// more should be dequeued from it, its frames are to be purged, and a charge
    /// through the handle fails with [`ChargeError::StationRemoved`].
    pub fn station_removed(&self) -> bool {
        self.station_and_removed().1
    }

    /// [`station`](Self::station) and [`station_removed`](Self::station_removed) from one
    /// look at the station's slot (a turn's loop asks both at its start).
    #[inline]
    pub(crate) fn station_and_removed(&self) -> (Option<crate::StationId>, bool) {
        match self.station {
            Some(sta) if self.sched.station_slot(sta).is_err() => (None, true),
            station => (station, false),
        }
    }

    /// Whether one more frame may be dequeued and charged now: the station's AQL check
    /// (`ieee80211_txq_airtime_check`, run before each dequeue), counting the charges
    /// made through this handle. False once the station was removed; a station-less txq
    /// asks its AC's multicast budget; the management txq is never limited.
    ///
    /// The check comes before the dequeue, as mainline's does, so a station may end one
    /// frame's charge over its limit; with two of its txqs on one AC (two TIDs) served
    /// by two contexts at once, each passes its own check and the overshoot is one frame
    /// per context serving the station at that moment, never more.
    #[inline]
    pub fn airtime_check(&self) -> bool {
        match self.station.map(|sta| self.sched.station_slot(sta)) {
            None => self.sched.multicast_may_send(self.ac, 0),
            Some(Err(_)) => false,
            Some(Ok(_)) if self.mgmt => true,
            Some(Ok(slot)) => self.sched.station_may_send(slot, self.ac, self.own_us),
        }
    }

    /// Records that one frame of this txq is sent without a charge: a station-less
    /// txq's frame (mainline does not charge multicast), or a frame already dequeued
    /// whose charge failed and that the driver sends anyway. Counted in
    /// [`AcCounters::uncharged_frames`](super::AcCounters::uncharged_frames), so that
    /// an uncharged frame is always a decision that shows, never a silent table miss.
    /// A removed station's frame sent this way is in flight where its drain cannot see
    /// it ([`ChargeError::StationRemoved`]): charge before dequeuing, as
    /// [`driver_loop::run_round`](crate::driver_loop::run_round) does, or keep the frame
    /// back, as [`TxqTable::run_round`](crate::TxqTable::run_round) does.
    pub fn send_uncharged(&mut self) {
        self.sched.send_uncharged(self.ac);
    }

    /// Charges `airtime_us` of a frame dequeued from this txq to its station on its AC,
    /// as [`Scheduler::charge_us`] does, with the AC's counter written later (see the
    /// type's documentation). A station-less txq's frame is charged to the AC's
    /// multicast budget ([`Scheduler::charge_multicast_us`]). Fails with
    /// [`ChargeError::StationRemoved`] once the station was removed; nothing is charged
    /// then.
    #[inline]
    pub fn charge_us(&mut self, airtime_us: u32) -> Result<Charge, ChargeError> {
        let Some(station) = self.station else { return self.sched.charge_multicast_us(self.ac, airtime_us) };
        // The txq's station was live when the txq was added: a refusal means it left.
        let charge = self.sched.charge_station(station, self.ac, airtime_us).map_err(|e| match e {
            ChargeError::UnknownStation => ChargeError::StationRemoved,
            e => e,
        })?;
        self.own_us = self.own_us.saturating_add(u64::from(charge.airtime_us));
        if self.own_us >= Self::FLUSH_US {
            self.flush();
        }
        Ok(charge)
    }

    /// Prices a frame dequeued from this txq with its station (`station`, which must be
    /// the txq's: [`ChargeError::OtherStation`] otherwise) and charges it, as
    /// [`Scheduler::charge_frame`] does, with the AC's counter written later.
    ///
    /// A driver that looks the station up in its own table and misses it should not
    /// send the frame uncharged silently: drop it, or record it with
    /// [`send_uncharged`](Self::send_uncharged).
    pub fn charge_frame<S: Station + ?Sized>(&mut self, station: &S, frame_len: u32) -> Result<Charge, ChargeError> {
        if self.station != Some(station.station_id()) {
            return Err(ChargeError::OtherStation);
        }
        let us = self.sched.frame_airtime_us(station, self.ac, frame_len);
        self.charge_us(us)
    }

    /// Gives back a charge of a frame of this txq that is not sent after all (the queue
    /// handed out nothing, or another frame; the ring refused it and the frame waits for
    /// a later turn), made through this handle or kept with its frame since an earlier
    /// turn: [`Scheduler::give_back`], with the AC's counter written only for what this
    /// handle's unflushed sum does not cover.
    pub fn give_back(&mut self, charge: Charge) -> Result<(), super::ReleaseError> {
        // The handle's sum is of its own AC: another AC's charge has none to draw on.
        let unflushed = (charge.ac == self.ac).then_some(&mut self.own_us);
        self.sched.release_charge(charge, false, unflushed)
    }

    /// Adds the airtime charged through this handle to the AC's counter.
    fn flush(&mut self) {
        let own = core::mem::take(&mut self.own_us);
        // Weakened variant, only to prove loom model 11 catches it: the sum is dropped when
        // the station was removed meanwhile, though its retired slot still holds those
        // charges, so their releases take from the AC counter what never reached it.
        if weakened!("flush_live_only") && self.station().is_none_or(|sta| self.sched.station_slot(sta).is_err()) {
            return;
        }
        if own != 0 {
            self.sched.add_ac_pending(self.ac, i64::try_from(own).unwrap_or(i64::MAX));
        }
    }

    /// Returns the txq; the same as [`Scheduler::return_txq`].
    pub fn finish(self, outcome: TxqReturn, now: Instant) {
        let sched = self.sched;
        sched.return_txq(self, outcome, now);
    }

    /// Returns the txq from a [`TxqTable`](crate::TxqTable) turn, which saw the intake
    /// as well as the queue, so its `Empty` is taken as said (see
    /// [`Scheduler::return_txq`]).
    pub(crate) fn finish_table_turn(self, outcome: TxqReturn, now: Instant) {
        let (sched, id, ac) = self.into_parts();
        sched.finish_service(id, ac, outcome, now, true);
    }

    /// Ends the service: the charges made through it go to the AC's counter before the
    /// txq can be listed again. The scheduler returned is the handle's own.
    pub(crate) fn into_parts(mut self) -> (&'a Scheduler, TxqId, Ac) {
        self.flush();
        self.live = false;
        (self.sched, self.txq, self.ac)
    }
}

impl Drop for Serving<'_> {
    fn drop(&mut self) {
        if self.live {
            // Weakened variant, only to prove loom model 20 catches it: the charges made
            // through a dropped handle never reach the AC counter.
            if !weakened!("drop_no_flush") {
                self.flush();
            }
            // Weakened variant, only to prove loom model 20 catches it: a dropped handle
            // returns its txq as empty, so the frames it left are scheduled only if a wake
            // arrived during the service.
            let outcome = if weakened!("drop_unscheduled") { TxqReturn::Empty } else { TxqReturn::Stalled };
            self.sched.finish_service(self.txq, self.ac, outcome, Instant::ZERO, false);
        }
    }
}
