//! Releasing a completion pass's charges at once.
//!
//! A driver reaps tx completions in passes (a NAPI poll with a budget). Releasing each
//! frame's charge on its own costs three atomic read-modify-writes per frame, one of
//! them on the AC's pending counter, which every charge and release of every station on
//! that AC writes: with the wake context charging on another CPU, that line moves
//! between the CPUs twice per frame. [`Scheduler::release_batch`] sums the pass's
//! charges per (station, AC) first, then writes each station's counters once and each
//! AC's counter once per pass. The result is the same as releasing the charges one by
//! one (tested against it); only the number of shared writes differs.

use super::Scheduler;
use super::accounting::sub_saturating;
use crate::sync::Ordering;
use crate::{Ac, Charge, StationId};

/// What a [`Scheduler::release_batch`] call did. Every charge handed in is counted in
/// exactly one of `released` and `unknown_station`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[must_use = "unknown_station and underflows report charges a driver handed back wrongly"]
pub struct BatchRelease {
    /// Charges released.
    pub released: u32,
    /// Charges whose token names no station slot of its generation (forged or garbled
    /// raw values): nothing is released for them, as [`Scheduler::release`] refuses them
    /// with [`ReleaseError::UnknownStation`](super::ReleaseError::UnknownStation).
    pub unknown_station: u32,
    /// Counters found holding less than the batch released from them (each is clamped at
    /// zero, invariant A4, and counted in [`Scheduler::underflows`]); 0 in a correct driver.
    pub underflows: u32,
}

impl BatchRelease {
    /// Whether every charge was released with no clamp: what a correct driver sees.
    #[inline]
    pub fn is_clean(&self) -> bool {
        self.unknown_station == 0 && self.underflows == 0
    }
}

/// Distinct (station, AC) groups summed before they are written. A pass touching more
/// writes them in several flushes (still exact, just more writes); eight covers the
/// stations a 64-frame NAPI budget usually completes for.
const GROUPS: usize = 8;

#[derive(Clone, Copy)]
struct Group {
    station: StationId,
    ac: Ac,
    airtime_us: u32,
    charges: u32,
}

impl Scheduler {
    /// Releases every charge of `charges` (a completion pass's), with the same result as
    /// calling [`release`](Scheduler::release) on each, but with one write per
    /// (station, AC) and per AC instead of three per frame. No allocation; any number of
    /// charges. Per group, the counters are written in the order `release` writes them
    /// (station pending, AC pending, then the outstanding-charge count last), so a slot
    /// reuse that sees no charge outstanding sees nothing pending either.
    pub fn release_batch<I: IntoIterator<Item = Charge>>(&self, charges: I) -> BatchRelease {
        let mut out = BatchRelease::default();
        let mut groups = [Group { station: StationId::from_raw(0), ac: Ac::Be, airtime_us: 0, charges: 0 }; GROUPS];
        let mut used = 0;
        for charge in charges {
            let Charge { station, ac, airtime_us } = charge;
            let hit = groups[..used].iter_mut().find(|g| g.station == station && g.ac == ac);
            match hit {
                // A group's sum stays below 2^32: a counter that could hold it would
                // have wrapped first; if it would not, the group is flushed and restarted.
                Some(g) if g.airtime_us.checked_add(airtime_us).is_some() && g.charges < u32::MAX => {
                    g.airtime_us += airtime_us;
                    g.charges += 1;
                    continue;
                }
                _ => {}
            }
            if used == GROUPS || groups[..used].iter().any(|g| g.station == station && g.ac == ac) {
                self.flush_groups(&groups[..used], &mut out);
                used = 0;
            }
            groups[used] = Group { station, ac, airtime_us, charges: 1 };
            used += 1;
        }
        self.flush_groups(&groups[..used], &mut out);
        out
    }

    fn flush_groups(&self, groups: &[Group], out: &mut BatchRelease) {
        let mut underflows = 0u32;
        // The groups whose token finds its slot; the others release nothing.
        let mut owned = [false; GROUPS];
        for (g, owned) in groups.iter().zip(owned.iter_mut()) {
            *owned = self.stations.get(g.station.index()).is_some_and(|s| s.owns_token(g.station.generation));
            if !*owned {
                out.unknown_station = out.unknown_station.saturating_add(g.charges);
            }
        }
        // Weakened variant, only to prove loom model 7 catches it: the charge counts
        // released before the pending airtime, so a reuse may inherit pending airtime.
        #[cfg(airtime_weakened = "batch_order")]
        self.release_counts(groups, &owned, &mut underflows, out);
        let mut ac_sum = [0u32; Ac::COUNT];
        let mut ac_groups = [0u32; Ac::COUNT];
        // 1. Station pending.
        for (g, _) in groups.iter().zip(owned).filter(|(_, owned)| *owned) {
            let Some(slot) = self.stations.get(g.station.index()) else { continue };
            if !sub_saturating(&slot.ac[g.ac.index()].pending_us, g.airtime_us) {
                underflows += 1;
            }
            let a = g.ac.index();
            ac_groups[a] += 1;
            ac_sum[a] = match ac_sum[a].checked_add(g.airtime_us) {
                Some(sum) => sum,
                // Only garbled tokens can sum past u32::MAX: write what is summed so far.
                None => {
                    if !sub_saturating(&self.acs[a].pending_us, ac_sum[a]) {
                        underflows += 1;
                    }
                    g.airtime_us
                }
            };
        }
        // 2. One write per AC.
        for ac in Ac::ALL {
            let a = ac.index();
            if ac_groups[a] != 0 && !sub_saturating(&self.acs[a].pending_us, ac_sum[a]) {
                underflows += 1;
            }
        }
        // 3. The outstanding-charge counts, last.
        #[cfg(not(airtime_weakened = "batch_order"))]
        self.release_counts(groups, &owned, &mut underflows, out);
        if underflows != 0 {
            // Keep the scheduler's count in step with what this flush found.
            self.underflows.fetch_add(u64::from(underflows), Ordering::Relaxed);
            out.underflows = out.underflows.saturating_add(underflows);
        }
    }

    fn release_counts(&self, groups: &[Group], owned: &[bool; GROUPS], underflows: &mut u32, out: &mut BatchRelease) {
        for (g, _) in groups.iter().zip(owned).filter(|(_, owned)| **owned) {
            // owns_token held for this group, so the slot exists.
            if let Some(slot) = self.stations.get(g.station.index()) {
                if !slot.release_charges(g.charges) {
                    *underflows += 1;
                }
                out.released = out.released.saturating_add(g.charges);
            }
        }
    }
}
