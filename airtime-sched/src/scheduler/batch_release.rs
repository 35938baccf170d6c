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
//! then the AC's counter. A reuse of the slot waits for the station's word to reach
//! zero; the AC's counter is a sum that holds at quiescence (A1), whichever comes first.

use super::Scheduler;
use crate::sync::{AtomicU32, Ordering};
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
    /// Clamps at zero (invariant A4), each also counted in [`Scheduler::underflows`]: one
    /// per (station, AC) sum that found less pending than it carried, and one per AC
    /// counter that did so while none of its stations' sums had; 0 in a correct driver.
    /// A single release counts at most one.
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

/// What releasing a sum of one station's charges on one AC did to the station.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StationRelease {
    /// The token names no slot of its generation: nothing released.
    Unknown,
    /// Released; `clamped` if the station held less than the sum.
    Released { clamped: bool },
}

impl Scheduler {
    /// Releases every charge of `charges` (a completion pass's), with the same result as
    /// calling [`release`](Scheduler::release) on each, but with one write per
    /// (station, AC) and per AC instead of two per frame. No allocation; any number of
    /// charges.
    pub fn release_batch<I: IntoIterator<Item = Charge>>(&self, charges: I) -> BatchRelease {
        let mut out = BatchRelease::default();
        let mut groups = [Group { station: StationId::from_raw(0), ac: Ac::Be, airtime_us: 0, charges: 0 }; GROUPS];
        let mut used = 0;
        for charge in charges {
            let Charge { station, ac, airtime_us } = charge;
            let hit = groups[..used].iter_mut().find(|g| g.station == station && g.ac == ac);
            match hit {
                // A group's sum stays below 2^32 (a station's word cannot hold more); if
                // it would not, the group is flushed and restarted.
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
        let mut ac_sum = [0u32; Ac::COUNT];
        let mut ac_clamped = [false; Ac::COUNT];
        // 1. Each station's word, once per group.
        for g in groups {
            let a = g.ac.index();
            match self.release_station_part(g.station, g.ac, g.airtime_us) {
                StationRelease::Unknown => out.unknown_station = out.unknown_station.saturating_add(g.charges),
                StationRelease::Released { clamped } => {
                    out.released = out.released.saturating_add(g.charges);
                    underflows += u32::from(clamped);
                    ac_clamped[a] |= clamped;
                    ac_sum[a] = match ac_sum[a].checked_add(g.airtime_us) {
                        Some(sum) => sum,
                        // Only garbled tokens can sum past u32::MAX: write what is summed so far.
                        None => {
                            underflows += u32::from(self.release_ac_part(g.ac, ac_sum[a], ac_clamped[a]));
                            g.airtime_us
                        }
                    };
                }
            }
        }
        // 2. One write per AC (a zero sum subtracts nothing and is skipped).
        for ac in Ac::ALL {
            let a = ac.index();
            if ac_sum[a] != 0 {
                underflows += u32::from(self.release_ac_part(ac, ac_sum[a], ac_clamped[a]));
            }
        }
        if underflows != 0 {
            // Keep the scheduler's count in step with what this flush found.
            self.underflows.fetch_add(u64::from(underflows), Ordering::Relaxed);
            out.underflows = out.underflows.saturating_add(underflows);
        }
    }

    /// Releases `airtime_us` of `station`'s charges on `ac` from its AQL word.
    #[inline]
    pub(super) fn release_station_part(&self, station: StationId, ac: Ac, airtime_us: u32) -> StationRelease {
        let slot = self.stations.get(station.index()).filter(|s| s.owns_token(station.generation));
        match slot.and_then(|s| s.release(station.generation, ac, airtime_us)) {
            Some(exact) => StationRelease::Released { clamped: !exact },
            None => StationRelease::Unknown,
        }
    }

    /// Releases `airtime_us` from `ac`'s counter. True if it clamped and no station's
    /// clamp (`station_clamped`) already accounts for it: a new underflow to count.
    #[inline]
    pub(super) fn release_ac_part(&self, ac: Ac, airtime_us: u32, station_clamped: bool) -> bool {
        !sub_saturating(&self.acs[ac.index()].pending_us, airtime_us) && !station_clamped
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
