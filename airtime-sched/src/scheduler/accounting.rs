//! AQL accounting (charge at dequeue, release at completion) and the airtime
//! registered from hardware reports (deficit charges).

use super::{ChargeError, ReleaseError, SchedError, Scheduler};
use crate::charge::{gen_matches, quantise_us};
use crate::slots::{StationSlot, gen_of, sta};
use crate::sync::{AtomicU32, Ordering};
use crate::traits::{Station, StationError};
use crate::{Ac, Charge, Instant, StationId};

impl Scheduler {
    /// Charges `airtime_us` (rounded to a multiple of 4 in `[4, Charge::MAX_US]`) to a
    /// station's pending airtime on `ac` (`ieee80211_sta_update_pending_airtime` with
    /// `completed = false`). The charge is counted whether or not the AQL checks are on.
    pub fn charge_us(&self, station: StationId, ac: Ac, airtime_us: u32) -> Result<Charge, ChargeError> {
        let slot = self.stations.get(station.index()).ok_or(ChargeError::UnknownStation)?;
        let us = quantise_us(airtime_us);
        let pending = &slot.ac[ac.index()].pending_us;
        // SeqCst add, then SeqCst check of the slot word: with add_station's SeqCst
        // claim-then-check, a charge racing a slot reuse either sees the slot gone (and
        // undoes itself) or is seen by the reuse (which backs off). See slots.rs.
        pending.fetch_add(us, Ordering::SeqCst);
        if !slot.is_live_seqcst(station) {
            sub_saturating(pending, us);
            return Err(ChargeError::UnknownStation);
        }
        // Relaxed: counters whose only reader is the AQL check and statistics.
        self.acs[ac.index()].pending_us.fetch_add(us, Ordering::Relaxed);
        Ok(Charge { station, ac, airtime_us: us })
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
        let us = match station.expected_airtime_us(frame_len, ac) {
            Ok(us) if us > 0 => us,
            Ok(_) => self.config.unknown_rate_charge_us,
            Err(e) => {
                let _ = e.kind();
                self.config.unknown_rate_charge_us
            }
        };
        self.charge_us(station.station_id(), ac, us)
    }

    /// Releases a charge when its frame leaves the hardware, whatever its status
    /// (acked, dropped, expired, freed: invariant A5). The AC counter is always
    /// released; the station's too while its slot still holds the charged station,
    /// which it does until all of that station's charges are released, even after
    /// [`remove_station`](Scheduler::remove_station).
    pub fn release(&self, charge: Charge) -> Result<(), ReleaseError> {
        let Charge { station, ac, airtime_us } = charge;
        let mut result = Ok(());
        if !sub_saturating(&self.acs[ac.index()].pending_us, airtime_us) {
            result = Err(ReleaseError::Underflow);
        }
        let slot = self.stations.get(station.index());
        let owns = slot.is_some_and(|slot| {
            let word = slot.word.load(Ordering::Acquire);
            let state = word & sta::STATE_MASK;
            (state == sta::LIVE || state == sta::RETIRED) && gen_matches(station.generation, gen_of(word))
        });
        match slot {
            Some(slot) if owns => {
                if !sub_saturating(&slot.ac[ac.index()].pending_us, airtime_us) {
                    result = Err(ReleaseError::Underflow);
                }
            }
            _ => result = Err(ReleaseError::UnknownStation),
        }
        if result == Err(ReleaseError::Underflow) {
            self.underflows.fetch_add(1, Ordering::Relaxed);
        }
        result
    }

    /// Registers airtime the hardware measured for a station on `ac`
    /// (`ieee80211_sta_register_airtime`, reference 3.10): always added to the tx/rx
    /// statistics; charged to the deficit (per the airtime flags) only if the station
    /// was active on `ac` within the active window, so idle stations pile up no debt.
    pub fn register_airtime(
        &self,
        station: StationId,
        ac: Ac,
        tx_us: u32,
        rx_us: u32,
        now: Instant,
    ) -> Result<(), SchedError> {
        let slot = self.station_slot(station)?;
        let a = &slot.ac[ac.index()];
        a.tx_airtime_us.fetch_add(u64::from(tx_us), Ordering::Relaxed);
        a.rx_airtime_us.fetch_add(u64::from(rx_us), Ordering::Relaxed);
        if self.is_active(slot, ac, now) {
            let flags = self.airtime_flags();
            let charge =
                if flags.charge_tx { i64::from(tx_us) } else { 0 } + if flags.charge_rx { i64::from(rx_us) } else { 0 };
            if charge != 0 {
                a.deficit_us.fetch_sub(charge, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// The station AQL check (`ieee80211_txq_airtime_check`, reference 3.5): whether
    /// the station may have more airtime charged on `ac`. Always true while AQL is off.
    pub fn airtime_check(&self, station: StationId, ac: Ac) -> Result<bool, SchedError> {
        let slot = self.station_slot(station)?;
        Ok(self.station_may_send(slot, ac))
    }

    /// Pending airtime of a station on `ac`, in us.
    pub fn station_pending_us(&self, station: StationId, ac: Ac) -> Result<u32, SchedError> {
        Ok(self.station_slot(station)?.ac[ac.index()].pending_us.load(Ordering::Relaxed))
    }

    /// A station's DRR deficit on `ac` as stored (not minus pending), in us.
    pub fn deficit_us(&self, station: StationId, ac: Ac) -> Result<i64, SchedError> {
        Ok(self.station_slot(station)?.ac[ac.index()].deficit_us.load(Ordering::Relaxed))
    }

    /// Resets a station's airtime statistics and sets each deficit back to its weight
    /// (any write to mac80211's station `airtime` file).
    pub fn reset_airtime(&self, station: StationId) -> Result<(), SchedError> {
        let slot = self.station_slot(station)?;
        let w = i64::from(slot.weight());
        for a in &slot.ac {
            a.tx_airtime_us.store(0, Ordering::Relaxed);
            a.rx_airtime_us.store(0, Ordering::Relaxed);
            a.deficit_us.store(w, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Releases leaked underflow counts seen so far (should be 0 in a correct driver).
    pub fn underflows(&self) -> u64 {
        self.underflows.load(Ordering::Relaxed)
    }

    #[inline]
    pub(crate) fn station_may_send(&self, slot: &StationSlot, ac: Ac) -> bool {
        if !self.aql_enabled() {
            return true;
        }
        let pending = slot.ac[ac.index()].pending_us.load(Ordering::Relaxed);
        crate::aql::station_may_send(
            pending,
            self.effective_limits_of(slot, ac),
            self.total_pending_us(),
            self.aql_threshold_us(),
        )
    }

    #[inline]
    pub(crate) fn is_active(&self, slot: &StationSlot, ac: Ac, now: Instant) -> bool {
        let last = slot.ac[ac.index()].last_active_us.load(Ordering::Relaxed);
        now.micros().saturating_sub(last) < self.config.active_window_us
    }

    #[inline]
    pub(crate) fn mark_active(&self, slot: &StationSlot, ac: Ac, now: Instant) {
        // fetch_max: two contexts passing slightly different `now` never move it back.
        slot.ac[ac.index()].last_active_us.fetch_max(now.micros(), Ordering::Relaxed);
    }
}

impl StationSlot {
    #[inline]
    pub(crate) fn is_live_seqcst(&self, id: StationId) -> bool {
        self.word.load(Ordering::SeqCst) == crate::slots::with_gen(id.generation, sta::LIVE)
    }
}

/// Subtracts `amount` from `counter`, clamping at 0 (invariant A4); false if it had to clamp.
#[inline]
fn sub_saturating(counter: &AtomicU32, amount: u32) -> bool {
    let prev = counter.fetch_sub(amount, Ordering::Relaxed);
    if prev >= amount {
        return true;
    }
    // It wrapped: add back what was not there. Concurrent charges may have arrived in
    // between; adding exactly the shortfall restores the clamped value either way.
    counter.fetch_add(amount - prev, Ordering::Relaxed);
    false
}
