//! A txq's place on its AC's list, kept by its word: mainline's
//! `__ieee80211_schedule_txq` (wake and return), the entries `next_txq` pops, and the
//! lazy removal of entries whose txq left.
//!
//! The txq word's per-AC `QUEUED` bit says the slot has an entry on that AC's list;
//! whether the entry stands for the live txq is decided when a pop meets it, with one
//! compare-and-swap on the word, so it can never be lost between the word and the list:
//! a txq is listed, held by one context, or being served (S1).

use super::{AcState, Scheduler};
use crate::slots::{TxqSlot, gen_of, txq};
use crate::sync::Ordering;
use crate::{Ac, TxqId};

/// Where an entry goes on its list (mainline's `list_add` or `list_add_tail`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Place {
    Head,
    Tail,
}

impl Scheduler {
    /// Tells the scheduler a txq has frames (`__ieee80211_schedule_txq` with force; call
    /// it after every enqueue, from any context). A txq that is neither listed nor being
    /// served is listed as mainline lists it: a station txq at the head (it keeps its
    /// turn until its deficit runs out), a station-less one at the tail. One being
    /// served is marked so that its server lists it on return, so no wake is lost (S1).
    #[inline]
    pub fn wake_txq(&self, id: TxqId, now: crate::Instant) -> Result<(), super::SchedError> {
        self.wake(id, now, 0)
    }

    /// [`wake_txq`](Self::wake_txq) for an enqueue that holds the txq
    /// (`held = txq::PRODUCER`): the wake also ends the hold, in the same step. If the
    /// txq was removed, the hold is kept and the caller must take back what it enqueued
    /// before ending it (`TxqTable::enqueue`).
    #[inline]
    pub(super) fn wake(&self, id: TxqId, now: crate::Instant, held: u64) -> Result<(), super::SchedError> {
        let slot = self.txqs.get(id.index()).ok_or(super::SchedError::UnknownTxq)?;
        let mut word = slot.word.load(Ordering::Acquire);
        debug_assert!(held == 0 || word & txq::PRODUCERS != 0, "a hold ended that was never taken");
        if listed_unheld(word, id) {
            // The common wake, of a txq listed already and not being served: the loop's
            // first turn, inline, without the loop's Relaxed reads of the place and the
            // station, which only a wake that lists the txq uses (Relaxed loads whose
            // values go unused order nothing). An enqueue's wake (`held`) ends its hold
            // here, as the loop would.
            if weakened!("wake_plain_load") && held == 0 {
                return Ok(());
            }
            // The loop's read-modify-write (see there), of a word it leaves as it is but
            // for the hold.
            // `held` is 0 or the one producer count this enqueue added: no borrow.
            match slot.word.compare_exchange_weak(word, word.wrapping_sub(held), Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(()),
                Err(seen) => word = seen,
            }
        }
        self.wake_from(id, now, held, slot, word)
    }

    /// [`wake`](Self::wake) from `word`, the slot's word as last read. Out of line: it
    /// lists the txq, marks a served one woken, or clears the mark of one listed for its
    /// debt alone (`txq::IDLE`), which the common wake does not.
    #[inline(never)]
    fn wake_from(
        &self,
        id: TxqId,
        now: crate::Instant,
        held: u64,
        slot: &TxqSlot,
        mut word: u64,
    ) -> Result<(), super::SchedError> {
        let (ac, station) = loop {
            if word & txq::LIVE == 0 || gen_of(word) != id.generation {
                return Err(super::SchedError::UnknownTxq);
            }
            // The AC and the place are read while the word is LIVE with this generation:
            // after the CAS below the txq may be removed and its slot taken.
            let ac = txq::ac(word);
            let place = self.wake_place(slot);
            let station = slot.station();
            let queued = txq::queued(ac);
            let new = if word & txq::SERVING != 0 {
                // The weakened variant drops a wake that arrives during service (the
                // classic lost wake-up), only to prove the loom model catches it.
                if weakened!("wake_serving") { word } else { word | txq::WOKEN }
            } else if word & queued == 0 {
                word | queued
            } else {
                // Listed already; an orphaned entry now stands for this txq.
                word & !txq::ORPHAN
            };
            // Whatever the branch, the txq has a frame now: not listed for its debt alone.
            // Weakened variant `wake_keeps_idle`, only to prove loom model adaptive5
            // catches it: the mark left, so the txq's refused visits never count.
            let new = if weakened!("wake_keeps_idle") { new } else { new & !txq::IDLE };
            // Weakened variant: the "already listed" path as a plain load, only to prove
            // the loom model catches the lost wake it allows (store buffering below).
            if weakened!("wake_plain_load") && new == word && held == 0 {
                break (ac, None);
            }
            let new = new.wrapping_sub(held); // as above: our own producer count
            // A read-modify-write even when nothing changes: the caller's enqueue may be
            // a plain Release store, and a load here could be ordered before it, see
            // QUEUED, and return while the server that clears QUEUED next misses the
            // frame (store buffering). AcqRel: the Release half orders the enqueue before
            // the word a server Acquires when it takes the txq; the Acquire half pairs
            // with the server's return.
            match slot.word.compare_exchange_weak(word, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    // Mainline stamps the station active only when the wake lists the txq
                    // (or would, for one being served, which mainline keeps off its list).
                    let listed_now = if word & queued == 0 && new & queued != 0 {
                        self.list(ac, id.index(), place);
                        true
                    } else if word & txq::ORPHAN != 0 && new & txq::ORPHAN == 0 {
                        self.acs[ac].list.add_dead(-1);
                        true
                    } else {
                        new.wrapping_add(held) != word && word & txq::SERVING != 0
                    };
                    break (ac, station.filter(|_| listed_now));
                }
                Err(seen) => word = seen,
            }
        };
        if let Some(sslot) = station.and_then(|sta| self.station_slot(sta).ok()) {
            self.mark_active(sslot, ac, now);
        }
        Ok(())
    }

    /// Whether txq `id`'s word says it may have frames: listed for a wake (not for its
    /// station's debt alone, and not on an entry a previous occupant left), being served,
    /// or held by an enqueue in flight. `false` means it has none,
    /// since a txq with frames is always listed or being served (S1), an enqueue racing
    /// the read aside. Acquire: the word as the last return or wake left it.
    pub(crate) fn txq_may_have_frames(&self, id: TxqId) -> Result<bool, super::SchedError> {
        let slot = self.txqs.get(id.index()).ok_or(super::SchedError::UnknownTxq)?;
        let word = slot.word.load(Ordering::Acquire);
        if word & txq::LIVE == 0 || gen_of(word) != id.generation {
            return Err(super::SchedError::UnknownTxq);
        }
        let listed = word & txq::queued(txq::ac(word)) != 0 && word & (txq::IDLE | txq::ORPHAN) == 0;
        // Weakened variant `have_frames_listed_only`, only to prove loom model txq15
        // catches it: a txq being served taken for one without frames.
        // (WOKEN is set only with SERVING.)
        let held = if weakened!("have_frames_listed_only") { txq::PRODUCERS } else { txq::SERVING | txq::PRODUCERS };
        Ok(listed || word & held != 0)
    }

    /// Where a wake lists a txq: mainline inserts at the head only station txqs, and only
    /// while airtime fairness charges something.
    #[inline]
    pub(super) fn wake_place(&self, slot: &TxqSlot) -> Place {
        let fairness = self.airtime_flags.load(Ordering::Relaxed) != 0;
        if slot.station().is_some() && fairness { Place::Head } else { Place::Tail }
    }

    /// Puts an entry for slot `index` (whose QUEUED bit for `ac` the caller set) on
    /// `ac`'s list.
    #[inline]
    pub(super) fn list(&self, ac: Ac, index: usize, place: Place) {
        self.list_on(&self.acs[ac], index as u32, place);
    }

    #[inline]
    pub(super) fn list_on(&self, state: &AcState, index: u32, place: Place) {
        match place {
            Place::Head => state.list.push_head(index),
            Place::Tail => state.list.push_tail(index),
        }
    }

    /// Whether an entry of slot `index` on `ac`'s list stands for a listed txq (read
    /// only; `claim_entry` decides for an entry taken off the list).
    pub(super) fn entry_stands(&self, ac: Ac, index: u32) -> bool {
        self.txqs.get(index as usize).is_some_and(|slot| {
            let word = slot.word.load(Ordering::Acquire);
            word & txq::LIVE != 0 && word & txq::ORPHAN == 0 && txq::ac(word) == ac
        })
    }

    /// Looks at an entry popped from `ac`'s list, taking nothing. `Some` with the slot
    /// and its word, still QUEUED, if the txq the entry stands for may be served;
    /// otherwise the entry is dropped (its QUEUED bit cleared) and `None`: its txq was
    /// removed, its slot holds a txq that was not woken (orphan) or lives on another AC,
    /// or it is held through `may_transmit`.
    #[inline]
    pub(super) fn look(&self, ac: Ac, index: u32) -> Option<(&TxqSlot, u64)> {
        let slot = self.txqs.get(index as usize)?;
        self.look_again(ac, slot).map(|word| (slot, word))
    }

    /// [`look`](Self::look) at the slot of an entry the caller holds: its servable word,
    /// or `None` with the entry dropped.
    #[inline]
    pub(super) fn look_again(&self, ac: Ac, slot: &TxqSlot) -> Option<u64> {
        let word = slot.word.load(Ordering::Acquire);
        if servable(word, ac) {
            return Some(word);
        }
        match self.claim_from(ac, slot, word, None) {
            Claim::Seen(word) => Some(word),
            _ => None,
        }
    }

    /// Takes the txq whose servable word a [`look`](Self::look) returned as `seen`, after
    /// the caller checked its station: from QUEUED to SERVING in one step, and only that
    /// txq. If the slot was reused since the look and its new occupant woken, the
    /// newcomer is returned untaken (`Seen`): it must pass its own checks before it is
    /// served, not ride on its predecessor's. `Gone` when the entry no longer stands
    /// for a servable txq (removed, or taken meanwhile); the entry is dropped.
    ///
    /// The compare-and-swap is from `seen` itself, so the common take costs no second
    /// load; any change of the word since the look goes to the out-of-line loop, which
    /// takes at `seen`'s generation only.
    #[inline]
    pub(super) fn take_seen(&self, ac: Ac, slot: &TxqSlot, seen: u64) -> Claim {
        let new = (seen & !(txq::queued(ac) | txq::WOKEN | txq::IDLE)) | txq::SERVING;
        // Ordering: as in `claim_from`.
        match slot.word.compare_exchange_weak(seen, new, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => Claim::Taken(seen),
            Err(now) => self.claim_from(ac, slot, now, Some(gen_of(seen))),
        }
    }

    /// The claim of an entry from `word`, the slot's word as last read: with `take`,
    /// takes a servable txq of that generation (`Taken`); a servable txq otherwise is `Seen` with its word; an entry that stands for
    /// no servable txq is dropped (`Gone`).
    #[inline(never)]
    fn claim_from(&self, ac: Ac, slot: &TxqSlot, mut word: u64, take: Option<u32>) -> Claim {
        let queued = txq::queued(ac);
        loop {
            let live_here = word & txq::LIVE != 0 && txq::ac(word) == ac;
            let stands = live_here && word & txq::ORPHAN == 0;
            let servable = stands && word & txq::SERVING == 0;
            if servable && !takes(take, word) {
                return Claim::Seen(word);
            }
            let new = if servable {
                (word & !(queued | txq::WOKEN | txq::IDLE)) | txq::SERVING
            } else if live_here {
                word & !(queued | txq::ORPHAN)
            } else {
                word & !queued
            };
            // AcqRel: Acquire sees the enqueues a wake published with the word; Release
            // orders the caller's round stamp after the take for the next server.
            match slot.word.compare_exchange_weak(word, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) if servable => return Claim::Taken(word),
                Ok(_) => {
                    if !stands {
                        self.acs[ac].list.add_dead(-1);
                    }
                    return Claim::Gone;
                }
                Err(seen) => word = seen,
            }
        }
    }
}

/// What a claim of an entry found (`take_seen`, `claim_from`).
pub(super) enum Claim {
    /// The txq looked at, now held by the caller: its word before the take.
    Taken(u64),
    /// A servable txq, not taken: its word.
    Seen(u64),
    /// No servable txq; the entry was dropped.
    Gone,
}

/// Whether a txq word is txq `id`'s, listed on its AC with an entry that stands for it
/// (not orphaned), not listed for its debt alone (IDLE) and not being served: the wake
/// that meets it changes nothing but an enqueue's hold (`wake_from`'s loop computes the
/// same word back, less the hold, and neither lists the txq nor marks its station).
#[inline]
fn listed_unheld(word: u64, id: TxqId) -> bool {
    let queued = txq::queued(txq::ac(word));
    let idle = if weakened!("wake_keeps_idle") { 0 } else { txq::IDLE };
    word & (txq::LIVE | txq::SERVING | txq::ORPHAN | idle | queued) == txq::LIVE | queued
        && gen_of(word) == id.generation
}

/// Whether a claim asked to take at `take`'s generation takes the servable txq `word`
/// names: only the occupant the caller checked, never one that took the slot since.
#[inline]
fn takes(take: Option<u32>, word: u64) -> bool {
    match take {
        // Weakened variant, only to prove loom model 22 catches it: the take at any
        // generation, so a new occupant is served on its predecessor's checks.
        Some(_) if weakened!("take_any_generation") => true,
        Some(generation) => generation == gen_of(word),
        None => false,
    }
}

/// Whether a txq word's entry on `ac`'s list stands for a txq that may be served now:
/// live on `ac`, not orphaned, not held (`claim_from`'s test).
#[inline]
const fn servable(word: u64, ac: Ac) -> bool {
    word & (txq::LIVE | txq::ORPHAN | txq::SERVING) == txq::LIVE && word & txq::AC_MASK == txq::ac_bits(ac)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// `listed_unheld` holds exactly for the words of a live txq of the wake's
    /// generation, not being served, that `wake_from`'s loop (with no hold) computes back
    /// unchanged, listing nothing and counting no orphan.
    #[test]
    fn listed_unheld_is_the_wake_that_changes_nothing() {
        let id = TxqId { index: 3, generation: 7 };
        for flags in 0..(1u64 << 14) {
            for generation in [6u64, 7] {
                let word = flags | (generation << 32);
                let live = word & txq::LIVE != 0 && gen_of(word) == id.generation;
                let queued = txq::queued(txq::ac(word));
                let new = if word & txq::SERVING != 0 {
                    word | txq::WOKEN
                } else if word & queued == 0 {
                    word | queued
                } else {
                    word & !txq::ORPHAN
                } & !txq::IDLE;
                let lists = word & queued == 0 && new & queued != 0;
                let unorphans = word & txq::ORPHAN != 0 && new & txq::ORPHAN == 0;
                let marks = new != word && word & txq::SERVING != 0;
                let nothing = live && new == word && !lists && !unorphans && !marks && word & txq::SERVING == 0;
                assert_eq!(listed_unheld(word, id), nothing, "word {word:#x}");
            }
        }
    }

    /// The fast path's test is `claim_from`'s, for every flag combination and AC pair.
    #[test]
    fn servable_is_claim_froms_test() {
        for flags in 0..64u64 {
            for &on in &Ac::ALL {
                let word = flags | txq::ac_bits(on) | txq::queued(on) | (7 << 32);
                for &ac in &Ac::ALL {
                    let live_here = word & txq::LIVE != 0 && txq::ac(word) == ac;
                    let long = live_here && word & txq::ORPHAN == 0 && word & txq::SERVING == 0;
                    assert_eq!(servable(word, ac), long, "word {word:#x} on {ac:?}");
                }
            }
        }
    }
}
