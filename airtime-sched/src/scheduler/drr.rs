//! The weighted deficit round robin step of `ieee80211_next_txq`, and its laps.
//!
//! # Laps
//! When every listed txq has a negative deficit, mainline walks the list again and
//! again, adding one weight per lap, until one turns non-negative (at weight 1 and a
//! large debt that is many laps under the AC lock). Here the first lap works out how
//! many laps that takes and the second lap applies them at once — to the txqs before
//! the one it serves as it meets them, and to the rest of the lap right after, in
//! place — leaving the same deficits and the same list order that walked laps would,
//! so a call looks at each listed txq at most about twice.

use super::{AcState, Scheduler};
use crate::slots::{TxqSlot, txq};
use crate::sync::Ordering;
use crate::{Ac, StationId};

pub(super) enum Step {
    Serve,
    Rotate,
}

/// Bookkeeping of one lap over the listed txqs.
pub(super) struct Lap {
    /// Entries to visit before the lap is complete: the listed count when the lap
    /// began, read at its first rotation (most calls serve the first entry and never
    /// need it; the list's positions are lines the other context keeps writing). 0
    /// until then.
    len: u32,
    /// Entries rotated in this lap.
    seen: u32,
    /// Some visited station passed its AQL check (mainline's `found_eligible`).
    pub(super) eligible: bool,
    /// Fewest further laps any AQL-eligible station needs.
    min_laps: i64,
    /// Laps to apply at once in this lap (0 once applied to the whole lap).
    pub(super) boost: i64,
}

impl Lap {
    pub(super) fn new() -> Lap {
        Lap { len: 0, seen: 0, eligible: false, min_laps: i64::MAX, boost: 0 }
    }

    /// Counts a rotated entry (already back on the list, so the count includes it as it
    /// did when the lap began); true when the lap is complete.
    pub(super) fn visited(&mut self, state: &AcState) -> bool {
        if self.len == 0 {
            self.len = state.list.listed().max(1);
        }
        self.seen += 1;
        self.seen >= self.len
    }

    /// Starts the next lap (the rare path: its length is read now, as
    /// `finish_boosted_lap` needs it even when the lap's first entry is served).
    pub(super) fn next(&mut self, state: &AcState) {
        let boost = if self.min_laps == i64::MAX { 0 } else { (self.min_laps - 1).max(0) };
        *self = Lap { boost, len: state.list.listed().max(1), ..Lap::new() };
    }
}

/// Top-ups that lift a deficit `d` toward zero, at most `laps` of them, at `weight`.
#[inline]
fn boost_us(d: i64, weight: i64, laps: i64) -> i64 {
    if d >= 0 {
        return 0;
    }
    let needed = (-d + weight - 1) / weight;
    needed.min(laps) * weight
}

impl Scheduler {
    /// The DRR and AQL step for a station txq (`ieee80211_next_txq`'s deficit and
    /// `ieee80211_txq_airtime_check` test).
    pub(super) fn deficit_step(&self, sta: StationId, ac: Ac, slot: &TxqSlot, lap: &mut Lap) -> Step {
        let Ok(sslot) = self.station_slot(sta) else {
            // A station removed under its txq: serve nothing more of it, but let the
            // caller drop or serve the entry like a station-less one.
            return Step::Serve;
        };
        // The management (TID 16) txq is never AQL-limited (mainline, L4).
        let aql_ok = slot.tid() == 16 || self.station_may_send(sslot, ac, 0);
        lap.eligible |= aql_ok;
        let weight = i64::from(sslot.weight().max(1));
        let mut d = sslot.effective_deficit(ac);
        if lap.boost > 0 {
            // Laps the first pass proved nobody is served in: apply them at once, but
            // never lift a station past zero with them (mainline stops topping up there).
            let extra = boost_us(d, weight, lap.boost);
            if extra > 0 {
                sslot.top_up(ac, extra);
                d += extra;
            }
        }
        if d < 0 {
            if aql_ok {
                // Laps until this station is served: it is topped now, then once a lap.
                let laps = (-d + weight - 1) / weight;
                lap.min_laps = lap.min_laps.min(laps);
            }
            sslot.top_up(ac, weight);
            return Step::Rotate;
        }
        if !aql_ok {
            return Step::Rotate;
        }
        Step::Serve
    }

    /// Walked laps would have topped up the entries after the served one too,
    /// `lap.boost` times each while negative, and left them where they are, at the head
    /// of the list: give them that credit now, in place. (In a boosted lap every entry
    /// has been rotated once, so they are the first entries of the tail part.) The boost
    /// is then spent: the rest of this call walks without it.
    pub(super) fn finish_boosted_lap(&self, state: &AcState, ac: Ac, lap: &mut Lap) {
        let mut remaining = lap.len.saturating_sub(lap.seen + 1); // the served entry was visited
        let boost = core::mem::take(&mut lap.boost);
        state.list.peek_tail(|index| {
            if remaining == 0 {
                return false;
            }
            let Some(slot) = self.txqs.get(index as usize) else { return true };
            let word = slot.word.load(Ordering::Acquire);
            if word & txq::LIVE == 0 || word & txq::ORPHAN != 0 || self.ac_of(slot) != ac {
                return true; // a dead entry: not part of the lap
            }
            remaining -= 1;
            if let Some(sslot) = slot.station().and_then(|sta| self.station_slot(sta).ok()) {
                let weight = i64::from(sslot.weight().max(1));
                let extra = boost_us(sslot.effective_deficit(ac), weight, boost);
                if extra > 0 {
                    sslot.top_up(ac, extra);
                }
            }
            true
        });
    }
}
