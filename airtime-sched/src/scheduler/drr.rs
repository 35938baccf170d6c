//! The weighted deficit round robin step of `ieee80211_next_txq`, and its laps.
//!
//! # Laps
//! When every listed txq has a negative deficit, mainline walks the list again and
//! again, each visit of a station's txq adding the station's weight, until a visit finds
//! an AQL-eligible station non-negative (at weight 1 and a large debt, many laps under
//! the AC lock). Here the first lap is walked; then, from what it left, the number of
//! laps in which nobody would be served is worked out and their top-ups applied at once,
//! and the next lap is walked as mainline walks the one after them. The deficits and
//! the list order are those walked laps leave; a call looks at each listed txq about
//! four times whatever the debt.
//!
//! A station with several txqs on the AC (TIDs 0 and 3 are both BE) is visited, and
//! topped up, once per txq per lap: the skip counts the visits.

use super::{AcState, Scheduler};
use crate::slots::{LiveStation, TopUp, TxqSlot, gen_of, txq};
use crate::sync::Ordering;
use crate::{Ac, StationId};

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    Serve,
    Rotate,
    /// Rotate, after a top-up that paid the debt of a station eligible for AQL: the
    /// next lap serves it.
    RotatePaid,
    /// The txq the caller looked at left the slot before its station's debt was topped
    /// up: nothing written; the entry is to be looked at again.
    Changed,
}

/// Bookkeeping of one lap over the listed txqs.
pub(super) struct Lap {
    /// Entries to visit before the lap is complete: the listed count when the lap
    /// began, read at its first rotation (most calls serve the first entry and never
    /// need it; the list's positions are lines the other context keeps writing). 0
    /// until then.
    pub(super) len: u32,
    /// Entries rotated in this lap.
    seen: u32,
    /// Some visited station passed its AQL check (mainline's `found_eligible`).
    pub(super) eligible: bool,
    /// Some visit that passed its AQL check paid its station's debt with its top-up:
    /// the next lap serves that station, so no lap would serve nobody.
    pub(super) paid: bool,
    /// The lap skip did not run after the first lap, which paid a debt: it runs after
    /// this one if this one is idle too (only a concurrent charge or registration
    /// makes it so).
    pub(super) skip_deferred: bool,
}

impl Lap {
    pub(super) fn new() -> Lap {
        Lap { len: 0, seen: 0, eligible: false, paid: false, skip_deferred: false }
    }

    /// Counts a rotated entry (already back on the list, so the count includes it as it
    /// did when the lap began); true when the lap is complete.
    pub(super) fn visited(&mut self, state: &AcState) -> bool {
        if self.len == 0 {
            self.len = state.list.listed().max(1);
        }
        self.seen = self.seen.saturating_add(1);
        self.seen >= self.len
    }

    /// Starts the next lap.
    pub(super) fn next(&mut self, state: &AcState) {
        *self = Lap { len: state.list.listed().max(1), ..Lap::new() };
    }
}

/// A lap skip's mark on a station (`StationAc::lap_stamp`): bits 34..64 the skip's
/// number, bit 33 "top-ups applied", bits 16..32 the visits met so far in the second
/// pass, bits 0..16 the station's visits in the lap.
mod stamp {
    pub(super) const APPLIED: u64 = 1 << 33;
    const SKIP_SHIFT: u32 = 34;

    #[inline]
    pub(super) const fn of(skip: u64) -> u64 {
        skip << SKIP_SHIFT
    }

    #[inline]
    pub(super) const fn is(word: u64, skip: u64) -> bool {
        word >> SKIP_SHIFT == skip & ((1 << (64 - SKIP_SHIFT)) - 1)
    }

    #[inline]
    pub(super) const fn visits(word: u64) -> u64 {
        word & 0xffff
    }

    #[inline]
    pub(super) const fn met(word: u64) -> u64 {
        (word >> 16) & 0xffff
    }
}

/// Whether `slot` still holds the txq of `generation` (a second look, Acquire, after
/// reading its station: see `TxqSlot::station`).
#[inline]
fn same_generation(slot: &TxqSlot, generation: u32) -> bool {
    gen_of(slot.word.load(Ordering::Acquire)) == generation
}

/// Top-ups a station of effective deficit `d` needs to reach zero at `weight`.
#[inline]
fn needed(d: i64, weight: i64) -> i64 {
    // Rounded up. A deficit is 48 bits wide, so nothing here saturates; the saturating
    // forms only leave no path that can overflow (weight is at least 1 at every caller).
    let weight = weight.max(1);
    if d >= 0 { 0 } else { d.saturating_neg().saturating_add(weight.wrapping_sub(1)).checked_div(weight).unwrap_or(0) }
}

impl Scheduler {
    /// The DRR and AQL step for a station txq, as `ieee80211_next_txq` takes it: the
    /// station AQL check (`ieee80211_txq_airtime_check`; the management TID 16 is never
    /// limited, L4), a top-up by the weight while the effective deficit is negative, and
    /// a rotation to the tail unless both pass.
    ///
    /// `generation` is the txq's, as the caller's look saw it: `sta` was read from the
    /// slot after that look and may be a newcomer's, so a top-up (a lasting write) is
    /// made only once the slot is seen still holding that generation (`TxqSlot::station`
    /// says why that second look suffices). Decisions that write nothing are undone by
    /// the take, which is at the looked-at generation only.
    pub(super) fn deficit_step(&self, sta: StationId, ac: Ac, slot: &TxqSlot, generation: u32, lap: &mut Lap) -> Step {
        let Ok(sslot) = self.station_slot(sta) else {
            // A station removed under its txq: serve nothing more of it, but let the
            // caller drop or serve the entry like a station-less one.
            return Step::Serve;
        };
        // The check records no refusal for adaptive AQL: the station may be a
        // newcomer's, read from the slot after the look (see below).
        let aql_ok = self.visit_eligible(slot, sslot, ac);
        let weight = i64::from(sslot.weight().max(1));
        // Weakened variant `topup_any_generation`, only to prove loom model 24 catches
        // it: the top-up made whichever txq the slot holds now.
        let ours = || weakened!("topup_any_generation") || same_generation(slot, generation);
        match sslot.top_up_debt_if(ac, weight, ours) {
            TopUp::NoDebt => {}
            TopUp::Changed => return Step::Changed,
            TopUp::Paid if aql_ok => {
                lap.eligible = true;
                return Step::RotatePaid;
            }
            _ => {
                lap.eligible |= aql_ok;
                if !aql_ok {
                    self.refused_visit(slot, generation, sslot, ac);
                }
                return Step::Rotate;
            }
        }
        if !aql_ok {
            self.refused_visit(slot, generation, sslot, ac);
            return Step::Rotate;
        }
        lap.eligible = true;
        Step::Serve
    }

    /// A visit's refused AQL check, recorded for adaptive AQL (when on) only if the
    /// slot still holds the visited txq and that txq may have frames: the station's
    /// learnt limit grows for refusals that kept its own frames back, never for a txq
    /// that took their slot, nor for one listed for its debt alone (returned empty and
    /// not woken since, `txq::IDLE`), whose visit keeps nothing back. Out of line:
    /// refusals are rare on the hot path.
    #[inline(never)]
    fn refused_visit(&self, slot: &TxqSlot, generation: u32, sslot: LiveStation<'_>, ac: Ac) {
        if !self.config.adaptive_aql {
            return;
        }
        let word = slot.word.load(Ordering::Acquire);
        // Weakened variant `refusal_any_generation`, only to prove loom model 26 catches
        // it: the refusal recorded for whichever txq the slot holds now.
        let visited = weakened!("refusal_any_generation") || gen_of(word) == generation;
        // A wake racing this visit may clear IDLE just after the load: that refusal is
        // not counted, and a growth it would have caused at the next completion is lost
        // unless a visit of the woken txq is refused before that completion. A take by
        // `may_transmit` racing it the other way counts one refusal of an empty txq.
        // Both are one adjustment of a heuristic, never a charge.
        // Weakened variant `refusal_counts_idle`, only to prove loom model adaptive5
        // catches it: the refusal counted for a txq listed for its debt alone.
        if visited && (weakened!("refusal_counts_idle") || word & txq::IDLE == 0) {
            self.record_refused_check(sslot, ac);
        }
    }

    /// The station check of a lap's visit (the management TID 16 is never limited). It
    /// records no refusal for adaptive AQL: a refused visit goes to `refused_visit`,
    /// which knows whether the visited txq could have been kept back.
    #[inline]
    fn visit_eligible(&self, slot: &TxqSlot, sslot: LiveStation<'_>, ac: Ac) -> bool {
        slot.tid() == 16 || self.station_may_send_as::<false>(sslot, ac, 0)
    }

    /// After a first lap in which nobody was served (every entry rotated, now the first
    /// `len` of the tail part, in lap order): applies at once the top-ups of the laps
    /// that would serve nobody either, as walked laps would leave them.
    ///
    /// Station `s` with `k` visits per lap and `n` top-ups still needed is served at its
    /// `i`-th visit of lap `l` (counting laps from the next one) when `l*k + i - 1 >= n`,
    /// if that visit is AQL-eligible. The first such lap `L` over all visits is the skip:
    /// each station gets `min(n, L*k)` top-ups (a station stops being topped up at zero).
    /// Three read-only passes over the lap; the marks dedupe stations. Under concurrency
    /// the entries may move meanwhile: a top-up never lifts a station past zero, so the
    /// worst is a lap skipped short.
    pub(super) fn skip_idle_laps(&self, state: &AcState, ac: Ac, len: u32) {
        // Relaxed: a number to tell this skip's marks from others'; nothing is published.
        let skip = state.lap_skips.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        let mark = stamp::of(skip);
        // Pass 1: visits per station.
        self.for_each_lap_visit(state, ac, len, |_, _, sslot| {
            let a = &sslot.ac[ac].lap_stamp;
            let w = a.load(Ordering::Relaxed);
            // Both fields are 16 bits wide in a u64: no overflow, clamped when stored.
            let visits = if stamp::is(w, skip) { stamp::visits(w).wrapping_add(1) } else { 1 };
            a.store(mark | visits.min(0xffff), Ordering::Relaxed);
        });
        // Pass 2: the first lap in which an eligible visit finds its station at zero.
        let mut skip_laps = i64::MAX;
        self.for_each_lap_visit(state, ac, len, |slot, generation, sslot| {
            let a = &sslot.ac[ac].lap_stamp;
            let w = a.load(Ordering::Relaxed);
            if !stamp::is(w, skip) {
                return;
            }
            let i = stamp::met(w).wrapping_add(1);
            a.store((w & !(0xffff << 16)) | (i.min(0xffff) << 16), Ordering::Relaxed);
            if !self.visit_eligible(slot, sslot, ac) {
                // Counted as a walked visit's refusal is. Weakened variant
                // `skip_counts_idle`, only to prove loom model adaptive6 catches it:
                // counted whatever the txq holds.
                if weakened!("skip_counts_idle") {
                    self.record_refused_check(sslot, ac);
                } else {
                    self.refused_visit(slot, generation, sslot, ac);
                }
                return;
            }
            let k = i64::try_from(stamp::visits(w).max(1)).unwrap_or(1);
            let n = needed(sslot.effective_deficit(ac), i64::from(sslot.weight().max(1)));
            let i = i64::try_from(i).unwrap_or(1);
            // ceil((n - i + 1) / k), at least 0; k >= 1.
            let over = n.saturating_sub(i).saturating_add(1).max(0);
            let laps = over.saturating_add(k.wrapping_sub(1)).checked_div(k).unwrap_or(over);
            skip_laps = skip_laps.min(laps);
        });
        // Weakened variant `boost_rest_skipped`, only to prove loom model 15 catches it:
        // the skipped laps' top-ups never applied.
        if skip_laps == 0 || skip_laps == i64::MAX || weakened!("boost_rest_skipped") {
            return;
        }
        // Pass 3: the skipped laps' top-ups, once per station.
        self.for_each_lap_visit(state, ac, len, |_, _, sslot| {
            let a = &sslot.ac[ac].lap_stamp;
            let w = a.load(Ordering::Relaxed);
            if !stamp::is(w, skip) || w & stamp::APPLIED != 0 {
                return;
            }
            a.store(w | stamp::APPLIED, Ordering::Relaxed);
            let weight = i64::from(sslot.weight().max(1));
            let k = i64::try_from(stamp::visits(w).max(1)).unwrap_or(1);
            let top_ups = needed(sslot.effective_deficit(ac), weight).min(skip_laps.saturating_mul(k));
            // Weakened variant `weight_reread`, only to prove loom model 12 catches it: the
            // credit priced at a weight read again, not the one the count was made with.
            let credit = if weakened!("weight_reread") { i64::from(sslot.weight().max(1)) } else { weight };
            if top_ups > 0 {
                sslot.top_up(ac, top_ups.saturating_mul(credit));
            }
        });
    }

    /// Calls `f` with the slot, the txq's generation and its station for each of the
    /// first `len` entries of the tail part that stand for a live station txq on `ac`
    /// (dead entries are not part of the lap).
    fn for_each_lap_visit(&self, state: &AcState, ac: Ac, len: u32, mut f: impl FnMut(&TxqSlot, u32, LiveStation<'_>)) {
        let mut remaining = len;
        state.list.peek_tail(|index| {
            if remaining == 0 {
                return false;
            }
            let Some(slot) = self.txqs.get(index as usize) else { return true };
            let word = slot.word.load(Ordering::Acquire);
            if word & txq::LIVE == 0 || word & txq::ORPHAN != 0 || txq::ac(word) != ac {
                return true;
            }
            remaining = remaining.wrapping_sub(1); // not 0, checked above
            let station = slot.station();
            // The station is this txq's only if the slot still holds it after the read
            // (`TxqSlot::station`): the third pass tops it up.
            if !same_generation(slot, gen_of(word)) {
                return true;
            }
            if let Some(sslot) = station.and_then(|sta| self.station_slot(sta).ok()) {
                f(slot, gen_of(word), sslot);
            }
            true
        });
    }
}
