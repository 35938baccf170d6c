//! AQL accounting (charge at dequeue, release at completion) and the airtime
//! registered from hardware reports (deficit charges).

use super::{ChargeError, ReleaseError, SchedError, Scheduler};
use crate::charge::quantise_us;
use crate::slots::{self, tagged};
use crate::slots::{ChargeRefused, LiveStation};
use crate::sync::Ordering;
use crate::traits::{Station, StationError};
use crate::{Ac, Charge, Instant, StationId};

impl Scheduler {
    /// Charges `airtime_us` (rounded to a multiple of 4 in `[4, Charge::MAX_US]`) to a
    /// station's pending airtime on `ac` (`ieee80211_sta_update_pending_airtime` with
    /// `completed = false`). The charge is counted whether or not the AQL checks are on.
    pub fn charge_us(&self, station: StationId, ac: Ac, airtime_us: u32) -> Result<Charge, ChargeError> {
        let charge = self.charge_station(station, ac, airtime_us)?;
        self.add_ac_pending(ac, i64::from(charge.airtime_us));
        Ok(charge)
    }

    /// The station's half of a charge: its AQL word. The caller adds the airtime to the
    /// AC's counter, now ([`charge_us`](Self::charge_us)) or when its held txq is
    /// returned ([`Serving::charge_us`](super::Serving::charge_us)).
    #[inline]
    pub(super) fn charge_station(&self, station: StationId, ac: Ac, airtime_us: u32) -> Result<Charge, ChargeError> {
        let slot = self.stations.get(station.index()).ok_or(ChargeError::UnknownStation)?;
        let us = quantise_us(airtime_us);
        slot.charge(station, ac, us).map_err(|refused| match refused {
            ChargeRefused::NotLive if slot.is_retired(station) => ChargeError::StationRemoved,
            ChargeRefused::NotLive => ChargeError::UnknownStation,
            ChargeRefused::Overflow => ChargeError::PendingOverflow,
        })?;
        Ok(Charge { station, ac, airtime_us: us, full_generation: true, radio: self.radio })
    }

    /// Records that the driver sends one frame on `ac` without a charge (a
    /// station-less txq's frame, or a frame whose charge failed and that it sends
    /// anyway): AQL does not count it, so the decision is counted instead, in
    /// [`AcCounters::uncharged_frames`](super::AcCounters::uncharged_frames). A context
    /// holding the frame's txq calls [`Serving::send_uncharged`](super::Serving::send_uncharged).
    pub fn send_uncharged(&self, ac: Ac) {
        self.acs[ac].counters.count_uncharged();
    }

    /// The airtime [`charge_frame`](Self::charge_frame) charges for a frame.
    pub(super) fn frame_airtime_us<S: Station + ?Sized>(&self, station: &S, ac: Ac, frame_len: u32) -> u32 {
        match station.expected_airtime_us(frame_len, ac) {
            Ok(us) if us > 0 => us,
            Ok(_) => self.config.unknown_rate_charge_us,
            Err(e) => {
                let _ = e.kind();
                self.config.unknown_rate_charge_us
            }
        }
    }

    /// Prices a frame with the station's [`Station::expected_airtime_us`] and charges
    /// it. A station that cannot price it (no rate report yet) is charged
    /// `Config::unknown_rate_charge_us` rather than nothing (mainline: nothing, E1).
    pub fn charge_frame<S: Station + ?Sized>(
        &self,
        station: &S,
        ac: Ac,
        frame_len: u32,
    ) -> Result<Charge, ChargeError> {
        self.charge_us(station.station_id(), ac, self.frame_airtime_us(station, ac, frame_len))
    }

    /// Releases a charge when its frame leaves the hardware, whatever its status
    /// (acked, dropped, expired, freed: invariant A5). The station's slot keeps the
    /// charged station until all of its charges are released, even after
    /// [`remove_station`](Scheduler::remove_station), so a genuine token always finds
    /// it. A token that names no such slot (a forged or garbled raw value) releases
    /// nothing: it cannot be told apart from another station's charge, and releasing the
    /// AC counter for it would break conservation (A1). A station holding less than the
    /// token carries (a token released twice through `Charge::from_raw`) is clamped at
    /// zero, the AC's counter loses what the station lost, and the release reports
    /// [`ReleaseError::Underflow`].
    #[inline]
    pub fn release(&self, charge: Charge) -> Result<(), ReleaseError> {
        self.release_charge(charge, true, None)
    }

    /// Gives back the charge of a frame that was not sent after all: one the ring
    /// refused ([`Refused`](crate::driver_loop::Refused)) that the driver drops, or keeps
    /// to charge again when it pushes it. The same as [`release`](Self::release), errors
    /// included, except that it is no completion: adaptive AQL
    /// ([`Config::adaptive_aql`](crate::Config::adaptive_aql)) learns nothing from it, as
    /// it would from a frame that left the hardware. While a txq is held, give back
    /// through its handle ([`Serving::give_back`](super::Serving::give_back)).
    pub fn give_back(&self, charge: Charge) -> Result<(), ReleaseError> {
        self.release_charge(charge, false, None)
    }

    /// The one protocol of [`release`](Self::release) and [`give_back`](Self::give_back)
    /// (a completion or not). `unflushed` is a held txq's handle's sum of charges not yet
    /// added to the AC's counter (`Serving::give_back`): the AC's counter plus that sum
    /// is what the AC has pending, whichever of the two holds this charge, so the sum
    /// gives up what it can first, and the counter, which other contexts read, the rest.
    #[inline]
    pub(super) fn release_charge(
        &self,
        charge: Charge,
        completion: bool,
        unflushed: Option<&mut u64>,
    ) -> Result<(), ReleaseError> {
        if !self.made(&charge) {
            return Err(ReleaseError::OtherRadio);
        }
        // A release is a completion pass of one charge: the same protocol, in one place.
        if charge.is_multicast() {
            return self.release_multicast(charge.ac, charge.airtime_us);
        }
        let Charge { station, ac, airtime_us, full_generation, .. } = charge;
        let removed = self
            .release_station_part(station, full_generation, ac, airtime_us, completion)
            .ok_or(ReleaseError::UnknownStation)?;
        let from_sum = match unflushed {
            Some(sum) => {
                let own = (*sum).min(u64::from(removed));
                // Weakened variant, only to prove loom model txq10 catches it: all of it
                // taken from the sum, as if no flush could have moved it to the counter.
                let own = if weakened!("give_back_own_only") { u64::from(removed) } else { own };
                *sum = sum.saturating_sub(own);
                own
            }
            None => 0,
        };
        // from_sum <= removed: the part is in [0, removed].
        self.release_ac_part(ac, i64::from(removed).saturating_sub(i64::try_from(from_sum).unwrap_or(i64::MAX)));
        if removed < airtime_us {
            self.underflows.fetch_add(1, Ordering::Relaxed);
            Err(ReleaseError::Underflow)
        } else {
            Ok(())
        }
    }

    /// Whether `charge` may be released here: this scheduler made it, or it came back
    /// through [`Charge::from_raw`], which cannot say.
    #[inline]
    pub(crate) fn made(&self, charge: &Charge) -> bool {
        charge.radio == self.radio || charge.radio == 0
    }

    /// Registers airtime the hardware measured for a station on `ac`
    /// (`ieee80211_sta_register_airtime`): always added to the tx/rx
    /// statistics; charged to the deficit (per the airtime flags) only if the station
    /// was active on `ac` within the active window, so idle stations pile up no debt.
    ///
    /// Airtime reported for a station already removed (frames it sent before leaving)
    /// is added to the AC's [`AcCounters::departed_tx_us`](super::AcCounters::departed_tx_us)
    /// and `departed_rx_us`, and the call succeeds; a handle never issued, or whose slot
    /// is out of range, is refused ([`SchedError::UnknownStation`]).
    pub fn register_airtime(
        &self,
        station: StationId,
        ac: Ac,
        tx_us: u32,
        rx_us: u32,
        now: Instant,
    ) -> Result<(), SchedError> {
        // Every write below checks the generation in the word it writes, so airtime
        // reported for a station removed meanwhile never lands on the slot's next
        // occupant (loom model ctl1).
        let slot = match self.station_slot(station) {
            Ok(slot) => slot,
            Err(e) => return self.register_departed_airtime(station, ac, tx_us, rx_us, e),
        };
        slot.add_airtime(ac, tx_us, rx_us);
        if self.is_active(slot, ac, now) {
            let flags = self.airtime_flags();
            // Two u32s: at most 2^33, in i64 and negated without overflow.
            let charge = (if flags.charge_tx { i64::from(tx_us) } else { 0 }).wrapping_add(if flags.charge_rx {
                i64::from(rx_us)
            } else {
                0
            });
            if charge != 0 {
                slot.top_up(ac, charge.wrapping_neg());
            }
        }
        Ok(())
    }

    /// [`register_airtime`](Self::register_airtime) for a station that is not live:
    /// reported after its removal (a completion of a frame sent before it), the airtime
    /// goes to the AC, as the station has no statistics any more. Out of line: rare.
    #[cold]
    #[inline(never)]
    fn register_departed_airtime(
        &self,
        station: StationId,
        ac: Ac,
        tx_us: u32,
        rx_us: u32,
        e: SchedError,
    ) -> Result<(), SchedError> {
        // Weakened variant, only to prove loom model ctl8 catches it: airtime that
        // arrives after its station's removal is refused, and lost.
        if weakened!("departed_refused") {
            return Err(e);
        }
        if !self.stations.get(station.index()).is_some_and(|s| s.has_departed(station)) {
            return Err(e);
        }
        self.acs[ac].counters.count_departed(tx_us, rx_us);
        Ok(())
    }

    /// The station AQL check (`ieee80211_txq_airtime_check`): whether
    /// the station may have more airtime charged on `ac`. Always true while AQL is off.
    /// A context that holds the station's txq should ask the handle
    /// ([`Serving::airtime_check`](super::Serving::airtime_check)), which also counts the
    /// charges made through it that the AC's counter does not have yet.
    pub fn airtime_check(&self, station: StationId, ac: Ac) -> Result<bool, SchedError> {
        let slot = self.station_slot(station)?;
        Ok(self.station_may_send(slot, ac, 0))
    }

    /// Pending airtime of a station on `ac`, in us.
    pub fn station_pending_us(&self, station: StationId, ac: Ac) -> Result<u32, SchedError> {
        Ok(self.station_slot(station)?.pending_us(ac))
    }

    /// A station's DRR deficit on `ac` as stored (not minus pending), in us.
    pub fn deficit_us(&self, station: StationId, ac: Ac) -> Result<i64, SchedError> {
        Ok(self.station_slot(station)?.deficit_us(ac))
    }

    /// Resets a station's airtime statistics and sets each deficit back to its weight
    /// (any write to mac80211's station `airtime` file). The slot is held meanwhile, so
    /// a reset of a station being removed never reaches the slot's next occupant.
    pub fn reset_airtime(&self, station: StationId) -> Result<(), SchedError> {
        self.control_write(station, |slot| {
            let generation = station.generation;
            let w = tagged::from_signed(i64::from(slot.weight()));
            for a in &slot.ac {
                // A data-path write racing the reset lands before or after it, whole (the
                // tag cannot change while the slot is held).
                slots::reset(&a.tx_airtime, tagged::word(generation, 0));
                slots::reset(&a.rx_airtime, tagged::word(generation, 0));
                slots::reset(&a.deficit, tagged::word(generation, w));
            }
        })
    }

    /// Releases that found less pending airtime than they carried (0 in a correct driver).
    pub fn underflows(&self) -> u64 {
        self.underflows.load(Ordering::Relaxed)
    }

    /// The station check, counting `own_us` more in the PHY total: the charges the
    /// calling context made through the txq it holds, which the AC counters do not have
    /// yet.
    #[inline]
    pub(crate) fn station_may_send(&self, slot: LiveStation<'_>, ac: Ac, own_us: u64) -> bool {
        self.station_may_send_as::<true>(slot, ac, own_us)
    }

    /// [`station_may_send`](Self::station_may_send); with `RECORD` false a refusal is
    /// not recorded for adaptive AQL (a round's visit, whose station may have been read
    /// from a slot reused since: it records the refusal itself once it knows the
    /// station was the visited txq's, see `deficit_step`).
    #[inline]
    pub(crate) fn station_may_send_as<const RECORD: bool>(&self, slot: LiveStation<'_>, ac: Ac, own_us: u64) -> bool {
        if !self.aql_enabled() {
            return true;
        }
        let pending = slot.pending_us(ac);
        if self.adjusted_limits {
            return self.station_may_send_adjusted::<RECORD>(slot, ac, own_us, pending);
        }
        let limits = slot.limits(ac);
        // Under the low limit the PHY total does not matter: skip reading the four AC
        // counters, which the other context keeps writing (`aql::station_may_send`).
        pending < limits.low_us() || self.station_may_send_over_low::<RECORD>(slot, ac, own_us, pending, limits)
    }

    /// Records a refused station check for adaptive AQL, when it is on.
    #[inline(never)]
    pub(crate) fn record_refused_check(&self, slot: LiveStation<'_>, ac: Ac) {
        if self.config.adaptive_aql {
            super::adaptive_aql::record_refusal(&slot.ac[ac].adaptive, slot.generation());
        }
    }

    /// [`station_may_send`](Self::station_may_send) with limits TX_NO_PUSHBACK or
    /// adaptive AQL adjusts. Out of line, as the adjustment is.
    #[inline(never)]
    fn station_may_send_adjusted<const RECORD: bool>(
        &self,
        slot: LiveStation<'_>,
        ac: Ac,
        own_us: u64,
        pending: u32,
    ) -> bool {
        let limits = self.adjusted_limits_of(&slot, ac);
        pending < limits.low_us() || self.station_may_send_over_low::<RECORD>(slot, ac, own_us, pending, limits)
    }

    /// [`station_may_send`](Self::station_may_send) for a station at or over its low
    /// limit: the PHY total against the threshold. Out of line, so that the check under
    /// the low limit, the common case, needs no registers saved.
    #[inline(never)]
    fn station_may_send_over_low<const RECORD: bool>(
        &self,
        slot: LiveStation<'_>,
        ac: Ac,
        own_us: u64,
        pending: u32,
        limits: crate::AqlLimits,
    ) -> bool {
        // Weakened variant, only to prove loom model 17 catches it: the threshold
        // compared with this AC's pending airtime alone, not the PHY total over all ACs.
        let total = if weakened!("threshold_own_ac") {
            u32::try_from(self.acs[ac].pending_us.load(Ordering::Relaxed).saturating_add(own_us as i64).max(0))
                .unwrap_or(u32::MAX)
        } else {
            u32::try_from(self.total_pending_counting_us(Some((ac, own_us)))).unwrap_or(u32::MAX)
        };
        crate::aql::station_may_send(pending, limits, total, self.aql_threshold_us()) || {
            if RECORD {
                self.record_refused_check(slot, ac);
            }
            false
        }
    }

    #[inline]
    pub(crate) fn is_active(&self, slot: LiveStation<'_>, ac: Ac, now: Instant) -> bool {
        slot.since_active_us(ac, now.micros()) < self.config.active_window_us
    }

    #[inline]
    pub(crate) fn mark_active(&self, slot: LiveStation<'_>, ac: Ac, now: Instant) {
        // A load, and a compare-and-swap once the stamp is a grain old
        // (`Config::active_stamp_grain_us`): this runs at each wake that lists a txq and
        // each return with frames, on the line of the station's AQL word, which the
        // completion context writes at every release; a load leaves that line shared.
        // Two contexts racing may leave the older of two times less than a grain apart. The
        // compare-and-swap checks the stamp's generation, so a wake of a station removed
        // meanwhile never marks the slot's next occupant active (loom model ctl3).
        slot.stamp_active(ac, now.micros(), self.config.active_stamp_grain_us());
    }
}
