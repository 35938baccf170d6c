//! The invariant checkers shared by unit tests, the proptest model, fuzz targets and
//! loom models: [`Scheduler::check_invariants`] on a live, shared scheduler (what a
//! debugfs check runs), and [`Scheduler::check_invariants_quiescent`], which takes
//! `&mut self` to prove that no operation runs and no txq is held, so every invariant
//! must hold exactly.

use super::Scheduler;
use crate::slots::{aql, sta, tagged, txq};
use crate::sync::Ordering;
use crate::{Ac, TxqId};
use core::fmt;

/// An invariant of `INVARIANTS.md` (A1–A6, S1–S8, L1–L4) that does not hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvariantViolation {
    /// A1: an AC's pending airtime differs from the sum over its stations.
    PendingNotConserved {
        /// The AC.
        ac: Ac,
        /// The AC counter (signed: it may only dip below the sum while a txq is held).
        ac_pending_us: i64,
        /// The sum of station counters.
        stations_sum_us: u64,
    },
    /// S2: a txq slot has more than one entry on one AC's list.
    QueuedTwice(TxqId),
    /// S1/S2: a txq slot's QUEUED bit for an AC disagrees with that AC's list, or its
    /// ORPHAN bit with its entry.
    QueuedBitMismatch(TxqId),
    /// S3: a txq is marked as served while no one can hold it.
    HeldWhileQuiescent(TxqId),
    /// The listed count of an AC (entries less dead ones) differs from the entries on
    /// its list that stand for a live txq.
    ListedCount {
        /// The AC.
        ac: Ac,
        /// The counter.
        listed: u32,
        /// Entries found standing for a live txq.
        entries: u32,
    },
    /// S5: a round is open with number 0.
    OpenRoundZero(Ac),
    /// A txq word holds bits no operation writes together: woken while not served,
    /// being set up while live, or listed for its station's debt alone while not live and
    /// listed on its AC, or while served, woken or orphaned.
    TxqWordMismatch(TxqId),
    /// A station's limits are inverted or its weight is 0.
    BadStationConfig(u16),
    /// A station slot's AQL word disagrees with the slot: open while the slot has no
    /// live occupant, closed while it has, or counting for another generation.
    AqlWordMismatch(u16),
    /// A station slot is held by a control write while no operation runs, or one of its
    /// per-occupant words (deficit, airtime counters, activity stamp) counts for another
    /// generation than the slot's.
    StationWordMismatch(u16),
    /// A [`TxqTable`](crate::TxqTable) txq slot is not at rest while no operation runs:
    /// an enqueue's hold on it was never ended, its queue is still locked, or its
    /// intake's count (the intake's bound) differs from the frames in it.
    TableCellNotAtRest(u16),
}

impl fmt::Display for InvariantViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invariant violated: {self:?}")
    }
}

impl core::error::Error for InvariantViolation {}

impl Scheduler {
    /// Checks what must hold at every instant, so it may run while other contexts
    /// operate on the scheduler (a debugfs read): no open round is numbered 0 (S5);
    /// every station slot has valid limits and a nonzero weight; a live or removed
    /// station's AQL words count for its generation; every txq word is a combination of
    /// bits the operations write (an orphaned entry only for a live txq listed on its
    /// AC, woken only while served, never both being set up and live, listed for its
    /// debt alone only while live, listed, and neither served, woken nor orphaned). Each
    /// of these reads one word, or rereads the word it depends on and skips a slot that
    /// changed meanwhile. Cost O(capacity).
    ///
    /// What is exact only between operations (pending airtime conserved, A1; each
    /// list's entries matching the QUEUED bits and the listed count, S1, S2; no txq held,
    /// S3; no control write in flight; the per-occupant words retagged) is checked by
    /// [`check_invariants_quiescent`](Self::check_invariants_quiescent).
    pub fn check_invariants(&self) -> Result<(), InvariantViolation> {
        for ac in Ac::ALL {
            // Acquire: a round word is read whole; nothing else is read through it.
            let round = self.acs[ac].round.load(Ordering::Acquire);
            if super::rounds::round_open(round) && super::rounds::round_number(round) == 0 {
                return Err(InvariantViolation::OpenRoundZero(ac));
            }
        }
        for (index, slot) in self.txqs.iter().enumerate() {
            let word = slot.word.load(Ordering::Acquire);
            let id = slot.id(index, word);
            let orphan_ok =
                word & txq::ORPHAN == 0 || (word & txq::LIVE != 0 && word & txq::queued(txq::ac(word)) != 0);
            if !orphan_ok {
                return Err(InvariantViolation::QueuedBitMismatch(id));
            }
            let woken_unserved = word & txq::WOKEN != 0 && word & txq::SERVING == 0;
            if woken_unserved || idle_misplaced(word) || word & (txq::INIT | txq::LIVE) == txq::INIT | txq::LIVE {
                return Err(InvariantViolation::TxqWordMismatch(id));
            }
        }
        for (index, slot) in self.stations.iter().enumerate() {
            // Limits and weight are single words written only with valid values.
            let bad_limits = Ac::ALL.iter().any(|&ac| {
                let l = slot.limits(ac);
                l.low_us() > l.high_us()
            });
            if bad_limits || slot.weight() == 0 {
                return Err(InvariantViolation::BadStationConfig(index as u16));
            }
            // Acquire: a LIVE or RETIRED word of generation g was published after the AQL
            // words were opened for g (add_station's Release), so they count for g or a
            // later occupant; and an AQL word read for a later occupant was opened by a
            // Release after that occupant's claim of the slot word, so the reread below
            // sees the claim and the slot is skipped.
            let before = slot.word.load(Ordering::Acquire);
            let state = sta::state(before);
            if state != sta::LIVE && state != sta::RETIRED {
                continue;
            }
            let generation = sta::generation(before);
            // Acquire: pairs with the Release of `open` (every later write of the word is
            // a read-modify-write in its release sequence), and keeps the reread after.
            let tags_ok =
                slot.ac.iter().all(|a| aql::generation(a.aql.load(Ordering::Acquire)) == aql::tag(generation));
            let after = slot.word.load(Ordering::Acquire);
            // Weakened variant, only to prove loom model ctl9 catches it: no reread, so a
            // slot reused between the two reads is reported.
            let unchanged =
                weakened!("check_no_reread") || (sta::state(after) == state && sta::generation(after) == generation);
            if unchanged && !tags_ok {
                return Err(InvariantViolation::AqlWordMismatch(index as u16));
            }
        }
        Ok(())
    }

    /// Checks every invariant, including those exact only between operations: `&mut
    /// self` proves that no other context operates and no txq is held. Covers what
    /// [`check_invariants`](Self::check_invariants) checks, in its exact form (nothing
    /// held, every AQL word matching its slot), so it does not run it again: the loom
    /// models call this after every step. Cost O(capacity); it allocates nothing (its
    /// table was allocated with the scheduler).
    pub fn check_invariants_quiescent(&mut self) -> Result<(), InvariantViolation> {
        // seen[slot] has bit `ac` set for the slot's entry on `ac`'s list.
        let seen = &mut self.quiescent_seen;
        seen.fill(0);
        for ac in Ac::ALL {
            let dead = self.acs[ac].list.dead_at_rest();
            let mut total = 0i64;
            let mut standing = 0u32;
            for index in self.acs[ac].list.entries_at_rest() {
                total = total.saturating_add(1);
                let Some(mask) = seen.get_mut(index as usize) else {
                    return Err(InvariantViolation::QueuedBitMismatch(TxqId::from_raw(u64::from(index))));
                };
                let Some(slot) = self.txqs.get(index as usize) else {
                    return Err(InvariantViolation::QueuedBitMismatch(TxqId::from_raw(u64::from(index))));
                };
                let word = slot.word.load(Ordering::Relaxed);
                let id = slot.id(index as usize, word);
                if *mask & (1 << ac.index()) != 0 {
                    return Err(InvariantViolation::QueuedTwice(id));
                }
                *mask |= 1 << ac.index();
                if word & txq::queued(ac) == 0 {
                    return Err(InvariantViolation::QueuedBitMismatch(id));
                }
                if word & txq::LIVE != 0 && txq::ac(word) == ac && word & txq::ORPHAN == 0 {
                    standing = standing.saturating_add(1);
                }
            }
            let state = &self.acs[ac];
            let listed = state.listed();
            if listed != standing || total.saturating_sub(dead) != i64::from(standing) {
                return Err(InvariantViolation::ListedCount { ac, listed, entries: standing });
            }
            let round = state.round.load(Ordering::Relaxed);
            if super::rounds::round_open(round) && super::rounds::round_number(round) == 0 {
                return Err(InvariantViolation::OpenRoundZero(ac));
            }
            let sum: u64 = self.stations.iter().map(|s| u64::from(s.pending_us(ac))).sum();
            let ac_pending_us = state.pending_us.load(Ordering::Relaxed);
            if i64::try_from(sum).ok() != Some(ac_pending_us) {
                return Err(InvariantViolation::PendingNotConserved { ac, ac_pending_us, stations_sum_us: sum });
            }
        }
        for (index, slot) in self.txqs.iter().enumerate() {
            let word = slot.word.load(Ordering::Relaxed);
            let id = slot.id(index, word);
            if word & (txq::SERVING | txq::WOKEN | txq::INIT) != 0 {
                return Err(InvariantViolation::HeldWhileQuiescent(id));
            }
            if idle_misplaced(word) {
                return Err(InvariantViolation::TxqWordMismatch(id));
            }
            let bits = Ac::ALL.iter().fold(0u8, |m, &ac| m | (u8::from(word & txq::queued(ac) != 0) << ac.index()));
            let orphan_ok =
                word & txq::ORPHAN == 0 || (word & txq::LIVE != 0 && word & txq::queued(txq::ac(word)) != 0);
            if seen.get(index) != Some(&bits) || !orphan_ok {
                return Err(InvariantViolation::QueuedBitMismatch(id));
            }
        }
        for (index, slot) in self.stations.iter().enumerate() {
            let word = slot.word.load(Ordering::Relaxed);
            let mismatch = slot.ac.iter().any(|a| {
                let w = a.aql.load(Ordering::Relaxed);
                let ours = aql::generation(w) == aql::tag(sta::generation(word));
                match sta::state(word) {
                    sta::LIVE => !aql::is_open(w) || !ours,
                    sta::RETIRED => aql::is_open(w) || !ours,
                    // FREE (INIT cannot be seen between operations).
                    _ => aql::is_open(w) || aql::pending_us(w) != 0,
                }
            });
            if mismatch {
                return Err(InvariantViolation::AqlWordMismatch(index as u16));
            }
            let generation = sta::generation(word);
            let tagged_for_it = slot.ac.iter().all(|a| {
                [&a.deficit, &a.last_active, &a.tx_airtime, &a.rx_airtime]
                    .iter()
                    .all(|w| tagged::is_for(w.load(Ordering::Relaxed), generation))
            });
            if sta::guards(word) != 0 || !tagged_for_it {
                return Err(InvariantViolation::StationWordMismatch(index as u16));
            }
            if sta::state(word) != sta::LIVE {
                continue;
            }
            let bad_limits = Ac::ALL.iter().any(|&ac| {
                let l = slot.limits(ac);
                l.low_us() > l.high_us()
            });
            if bad_limits || slot.weight() == 0 {
                return Err(InvariantViolation::BadStationConfig(index as u16));
            }
        }
        Ok(())
    }
}

/// Whether a txq word marks a txq listed for its debt alone (`txq::IDLE`) where no
/// operation leaves the mark: the txq not live, not listed on its AC, or served, woken
/// or orphaned.
fn idle_misplaced(word: u64) -> bool {
    word & txq::IDLE != 0
        && (word & txq::LIVE == 0
            || word & txq::queued(txq::ac(word)) == 0
            || word & (txq::SERVING | txq::WOKEN | txq::ORPHAN) != 0)
}
