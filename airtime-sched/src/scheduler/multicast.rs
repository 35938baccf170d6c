//! Multicast AQL: frames of station-less txqs (broadcast and multicast;
//! `aql_mc_pending_airtime` in mac80211's multicast AQL patches, v3 of 2026, and
//! `aql_bc_pending_airtime` in their versions before May 2026) are charged against a budget of their
//! own per AC instead of
//! going to the hardware unbounded. Power-save buffering holds them until a DTIM beacon,
//! at the lowest basic rate, so left uncharged they can fill the hardware queues; charged
//! to the AC's pending airtime they would eat the unicast stations' PHY budget. So they
//! have their own counter, with a limit of half a beacon interval by default.
//!
//! The ready loops charge a station-less frame here only when the driver prices it
//! ([`StationTable::multicast_airtime_us`](crate::driver_loop::StationTable::multicast_airtime_us));
//! a driver's own turn loop calls [`TxqTurn::charge_us`](crate::TxqTurn::charge_us) (or
//! [`Serving::charge_us`](super::Serving::charge_us) for a txq it serves through the
//! scheduler) on the station-less turn. These charges are not in the unicast counters or
//! [`Scheduler::total_pending_us`]: a driver checking that nothing is in flight reads
//! [`Scheduler::multicast_pending_us`] too (or [`Scheduler::phy_aql_pending`], which has
//! both).
//!
//! Where this differs from those patches: the budget is per AC (they keep one counter
//! for the radio), so a VO multicast stream does not wait behind bulk BE multicast; and
//! a station-less txq over its budget is handed out and refused by its
//! [`Serving::airtime_check`](super::Serving::airtime_check) (then returned stalled, to
//! the tail) rather than rotated inside `next_txq`.

use super::{ChargeError, SchedError, Scheduler};
use crate::charge::quantise_us;
use crate::sync::Ordering;
use crate::{Ac, Charge, TxqId};

impl Scheduler {
    /// Charges `airtime_us` (quantised as every charge is) of a multicast frame on `ac`
    /// to the AC's multicast budget. Counted whether or not the AQL checks are on.
    pub fn charge_multicast_us(&self, ac: Ac, airtime_us: u32) -> Result<Charge, ChargeError> {
        let us = quantise_us(airtime_us);
        let counter = &self.acs[ac].multicast_pending_us;
        // Relaxed: a counter read by the checks and statistics, as the AC counters are.
        counter
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |p| p.checked_add(u64::from(us)))
            .map_err(|_| ChargeError::PendingOverflow)?;
        Ok(Charge::multicast(ac, us, self.radio))
    }

    /// Takes a released multicast charge off its AC's budget; what the counter lacks
    /// (a raw token released twice) is clamped at 0 and reported.
    pub(super) fn release_multicast(&self, ac: Ac, airtime_us: u32) -> Result<(), super::ReleaseError> {
        let counter = &self.acs[ac].multicast_pending_us;
        let mut short = false;
        let _ = counter.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |p| {
            short = p < u64::from(airtime_us);
            Some(p.saturating_sub(u64::from(airtime_us)))
        });
        if short {
            self.underflows.fetch_add(1, Ordering::Relaxed);
            return Err(super::ReleaseError::Underflow);
        }
        Ok(())
    }

    /// Multicast airtime in flight on `ac`, in us.
    pub fn multicast_pending_us(&self, ac: Ac) -> u32 {
        super::saturate(self.acs[ac].multicast_pending_us.load(Ordering::Relaxed))
    }

    /// Sets `ac`'s multicast budget (the multicast AQL patches' `aql_txq_limit` write
    /// `mcast <us>`).
    pub fn set_multicast_limit_us(&self, ac: Ac, limit_us: u32) {
        self.acs[ac].multicast_limit_us.store(limit_us, Ordering::Relaxed);
    }

    /// `ac`'s multicast budget, in us.
    pub fn multicast_limit_us(&self, ac: Ac) -> u32 {
        self.acs[ac].multicast_limit_us.load(Ordering::Relaxed)
    }

    /// Whether a multicast frame may be charged on `ac` now, counting `held_us` charged
    /// by the caller and not yet visible. Always true while AQL is off.
    pub(crate) fn multicast_may_send(&self, ac: Ac, held_us: u64) -> bool {
        let state = &self.acs[ac];
        !self.aql_enabled()
            || state.multicast_pending_us.load(Ordering::Relaxed).saturating_add(held_us)
                < u64::from(state.multicast_limit_us.load(Ordering::Relaxed))
    }

    /// The airtime in flight that limits txq `id` (`ieee80211_txq_aql_pending`), in us,
    /// for a driver that bounds its own buffering by it: its station's pending airtime
    /// on its AC (shared by the station's TIDs of that AC), the AC's multicast airtime
    /// for a station-less txq, 0 for a management txq (never limited).
    pub fn txq_aql_pending_us(&self, id: TxqId) -> Result<u32, SchedError> {
        let txq = self.txq_parts(id)?;
        if txq.tid == 16 {
            return Ok(0);
        }
        match txq.station {
            None => Ok(self.multicast_pending_us(txq.ac)),
            Some(sta) => Ok(self.station_slot(sta)?.pending_us(txq.ac)),
        }
    }
}
