//! Releasing charges: one at a time ([`Scheduler::release`]) or a completion pass's at
//! once ([`Scheduler::release_batch`]), by one protocol.
//!
//! A driver reaps tx completions in passes (a NAPI poll with a budget). Releasing each
//! frame's charge on its own costs two atomic read-modify-writes per frame, one of them
//! on the AC's pending counter, which every charge and release of every station on that
//! AC writes: with the wake context charging on another CPU, that line moves between
//! the CPUs twice per frame. [`Scheduler::release_batch`] sums the pass's charges per
//! (station, AC) first, then writes each station's AQL word once and each AC's counter
//! once per pass. The result is the same as releasing the charges one by one (tested
//! against it); only the number of shared writes differs.
//!
//! The protocol, for one (station, AC) and a sum of its charges: the station's AQL word
//! first (generation checked and subtracted in one compare-and-swap, clamped at zero),
//! then the AC's counter, by exactly what the station's word gave up, so the AC counter
//! stays the sum of its stations' (A1) even when a token is released twice. A reuse of
//! the slot waits for the station's word to empty; the AC's counter is a sum that holds
//! between operations, whichever comes first.

use super::Scheduler;
use crate::sync::Ordering;
use crate::{Ac, Charge, PerAc, StationId};

/// What a [`Scheduler::release_batch`] call did. Every charge handed in is counted in
/// exactly one of `released`, `unknown_station` and `other_radio`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[must_use = "unknown_station and underflows report charges a driver handed back wrongly"]
pub struct BatchRelease {
    /// Charges released.
    pub released: u32,
    /// Charges whose token names no station slot of its generation (forged or garbled
    /// raw values): nothing is released for them, as [`Scheduler::release`] refuses them
    /// with [`ReleaseError::UnknownStation`](super::ReleaseError::UnknownStation).
    pub unknown_station: u32,
    /// Clamps at zero (invariant A4), each also counted in [`Scheduler::underflows`]: one
    /// per (station, AC) sum that found less pending than it carried (a charge released
    /// twice); 0 in a correct driver.
    pub underflows: u32,
    /// Charges made by another scheduler (another radio's): nothing is released for
    /// them, as [`Scheduler::release`] refuses them with
    /// [`ReleaseError::OtherRadio`](super::ReleaseError::OtherRadio); their airtime stays
    /// pending on the scheduler that charged them.
    pub other_radio: u32,
}

impl BatchRelease {
    /// Whether every charge was released with no clamp: what a correct driver sees.
    #[inline]
    pub fn is_clean(&self) -> bool {
        self.unknown_station == 0 && self.underflows == 0 && self.other_radio == 0
    }
}

/// Distinct (station, AC) groups summed before they are written. A pass touching more
/// writes them in several flushes (still exact, just more writes); eight covers the
/// stations a 64-frame NAPI budget usually completes for.
const GROUPS: usize = 8;

#[derive(Clone, Copy)]
struct Group {
    station: StationId,
    /// Whether the tokens carried the whole generation (see `Charge`).
    full_generation: bool,
    ac: Ac,
    airtime_us: u32,
    charges: u32,
}

impl Group {
    fn holds(&self, charge: &Charge) -> bool {
        self.station == charge.station && self.ac == charge.ac && self.full_generation == charge.full_generation
    }
}

impl Scheduler {
    /// Releases every charge of `charges` (a completion pass's), with the same result as
    /// calling [`release`](Scheduler::release) on each, but with one write per
    /// (station, AC) and per AC instead of two per frame. No allocation; any number of
    /// charges.
    pub fn release_batch<I: IntoIterator<Item = Charge>>(&self, charges: I) -> BatchRelease {
        let mut out = BatchRelease::default();
        let mut groups =
            [Group { station: StationId::from_raw(0), full_generation: true, ac: Ac::Be, airtime_us: 0, charges: 0 };
                GROUPS];
        let mut used = 0;
        for charge in charges {
            if !self.made(&charge) {
                out.other_radio = out.other_radio.saturating_add(1);
                continue;
            }
            if charge.is_multicast() {
                // Multicast charges are few (station-less txqs): released one by one.
                match self.release_multicast(charge.ac, charge.airtime_us) {
                    Ok(()) => out.released = out.released.saturating_add(1),
                    Err(_) => {
                        out.released = out.released.saturating_add(1);
                        out.underflows = out.underflows.saturating_add(1);
                    }
                }
                continue;
            }
            // The groups in use, and the free ones (`used` never passes GROUPS).
            let (live, free) = groups.split_at_mut(used.min(GROUPS));
            match live.iter_mut().find(|g| g.holds(&charge)) {
                // A group's sum stays below 2^32 (a station's word cannot hold more); if
                // it would not, the group is flushed and restarted.
                Some(g) if g.airtime_us.checked_add(charge.airtime_us).is_some() && g.charges < u32::MAX => {
                    // Both checked just above.
                    g.airtime_us = g.airtime_us.wrapping_add(charge.airtime_us);
                    g.charges = g.charges.wrapping_add(1);
                    continue;
                }
                // A new group, if there is room for one.
                None => {
                    if let Some(new) = free.first_mut() {
                        *new = group_of(&charge);
                        used = used.wrapping_add(1); // was below GROUPS (a group was free)
                        continue;
                    }
                }
                // This group's sum would wrap.
                Some(_) => {}
            }
            // No room for a new group, or a sum would wrap: write what is summed and
            // start anew.
            self.flush_groups(groups.split_at(used.min(GROUPS)).0, &mut out);
            groups[0] = group_of(&charge);
            used = 1;
        }
        self.flush_groups(groups.split_at(used.min(GROUPS)).0, &mut out);
        out
    }

    fn flush_groups(&self, groups: &[Group], out: &mut BatchRelease) {
        let mut underflows = 0u32;
        // Eight groups of under 2^32 us each: no sum can wrap 63 bits.
        let mut ac_sum = PerAc([0i64; Ac::COUNT]);
        // 1. Each station's word, once per group.
        for g in groups {
            match self.release_station_part(g.station, g.full_generation, g.ac, g.airtime_us, true) {
                None => out.unknown_station = out.unknown_station.saturating_add(g.charges),
                Some(removed) => {
                    out.released = out.released.saturating_add(g.charges);
                    underflows = underflows.wrapping_add(u32::from(removed < g.airtime_us));
                    ac_sum[g.ac] = ac_sum[g.ac].wrapping_add(i64::from(removed));
                }
            }
        }
        // 2. One write per AC (a zero sum subtracts nothing and is skipped).
        for ac in Ac::ALL {
            self.release_ac_part(ac, ac_sum[ac]);
        }
        if underflows != 0 {
            // Keep the scheduler's count in step with what this flush found.
            self.underflows.fetch_add(u64::from(underflows), Ordering::Relaxed);
            out.underflows = out.underflows.saturating_add(underflows);
        }
    }

    /// Releases up to `airtime_us` of `station`'s charges on `ac` from its AQL word:
    /// `None` if the token names no slot of its generation, else the amount released.
    /// A `completion` (the frames left the hardware) is what adaptive AQL learns from; a
    /// give-back (frames never sent) is not.
    #[inline]
    pub(super) fn release_station_part(
        &self,
        station: StationId,
        full: bool,
        ac: Ac,
        airtime_us: u32,
        completion: bool,
    ) -> Option<u32> {
        let slot = self.stations.get(station.index()).filter(|s| s.owns_token(station.generation, full))?;
        if completion && self.config.adaptive_aql {
            self.release_adaptive(slot, station, full, ac, airtime_us)
        } else {
            slot.release(station.generation, full, ac, airtime_us)
        }
    }

    /// [`release_station_part`](Self::release_station_part) with adaptive AQL on: the
    /// release, then what it left taught to the station's learnt limit. Out of line, so
    /// that the release path with it off stays as it was.
    #[inline(never)]
    fn release_adaptive(
        &self,
        slot: &crate::slots::StationSlot,
        station: StationId,
        full: bool,
        ac: Ac,
        airtime_us: u32,
    ) -> Option<u32> {
        let (removed, pending_after_us, occupant) = slot.release_seen(station.generation, full, ac, airtime_us)?;
        let ceiling_us = self.configured_limits_of(slot, ac).high_us();
        super::adaptive_aql::record_release(
            &slot.ac[ac].adaptive,
            occupant,
            pending_after_us,
            removed,
            self.config.adaptive_aql_floor_us,
            ceiling_us,
        );
        Some(removed)
    }

    /// Releases `airtime_us` (what the stations' words gave up) from `ac`'s counter.
    /// No clamp: the counter is the stations' sum once every held txq is returned (A1),
    /// and may dip below it, even below 0, while one holds charges not yet added.
    #[inline]
    pub(super) fn release_ac_part(&self, ac: Ac, airtime_us: i64) {
        if airtime_us == 0 {
            return;
        }
        // Weakened variant, only to prove loom model 9 catches it: the counter clamped at
        // zero, as it was before held txqs could owe it charges; a release that overtakes
        // the return then loses airtime for good.
        if weakened!("ac_clamp") {
            let counter = &self.acs[ac].pending_us;
            let _ = counter
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| Some(v.saturating_sub(airtime_us).max(0)));
            return;
        }
        // The parts are sums of at most eight u32s: far from i64::MIN.
        self.add_ac_pending(ac, airtime_us.wrapping_neg());
    }
}

/// The group a charge starts.
fn group_of(charge: &Charge) -> Group {
    Group {
        station: charge.station,
        full_generation: charge.full_generation,
        ac: charge.ac,
        airtime_us: charge.airtime_us,
        charges: 1,
    }
}
