//! Rounds, txq selection and return: mac80211's `ieee80211_txq_schedule_start`,
//! `ieee80211_next_txq`, `ieee80211_return_txq`, `__ieee80211_schedule_txq` and
//! `ieee80211_txq_may_transmit`, lock-free.
//!
//! # Ordering model
//! mac80211 keeps one list per AC with head and tail insertion. Here each AC has two
//! FIFO queues: *front* (head insertion: newly backlogged txqs and txqs returned after
//! progress) served before *back* (tail insertion: txqs rotated for a negative deficit
//! or a full AQL budget). Among front entries the order is first come, first served
//! where mainline's head insertion is last come, first served; the DRR arithmetic
//! (top-up by the weight, effective deficit = deficit - pending) is mainline's.
//!
//! # Laps
//! When every listed txq has a negative deficit, mainline walks the list again and
//! again, adding one weight per lap, until one turns non-negative (reference E6: many
//! laps under the AC lock at weight 1). Here the first lap computes how many laps that
//! takes and the second lap applies them at once — to the txqs before the one it
//! serves as it meets them, and to the rest of the lap right after — with the same
//! deficits walked laps would leave, so a call looks at each listed txq at most about
//! twice.
//!
//! # The end of a round
//! A txq already served in the current round ends the round when `next_txq` meets it
//! (S4); it goes back to the tail of the front queue, so among front entries the order
//! rotates from round to round. The PHY limit's `n` (`listed`) counts queue entries,
//! including those of txqs removed or taken through `may_transmit` until `next_txq`
//! meets and drops them; mainline counts list members, which those are not.

use super::round::Round;
use super::serving::{Serving, TxqReturn};
use super::{AcState, SchedError, Scheduler};
use crate::config::RoundPolicy;
use crate::slots::{TxqSlot, gen_of, txq};
use crate::sync::Ordering;
use crate::{Ac, Instant, TxqId};

/// The round word's "open" bit; the other 63 bits are the round number, which never
/// wraps (at a round a nanosecond it would take 292 years).
const OPEN: u64 = 1 << 63;
/// Laps one `next_txq` call may take before it gives up for this round (a bound that
/// only concurrent changes can reach: the second lap normally serves).
const MAX_LAPS: u32 = 3;

#[inline]
pub(crate) const fn round_number(word: u64) -> u64 {
    word & !OPEN
}

#[inline]
pub(crate) const fn round_open(word: u64) -> bool {
    word & OPEN != 0
}

impl Scheduler {
    /// Tells the scheduler a txq has frames (`__ieee80211_schedule_txq` with force; call
    /// it after every enqueue, from any context). A txq that is neither queued nor being
    /// served is queued at the front; one being served is marked so that its server
    /// requeues it on return, so no wake is lost (invariant S1).
    pub fn wake_txq(&self, id: TxqId, now: Instant) -> Result<(), SchedError> {
        let slot = self.txqs.get(id.index()).ok_or(SchedError::UnknownTxq)?;
        let mut word = slot.word.load(Ordering::Acquire);
        loop {
            if word & txq::LIVE == 0 || gen_of(word) != id.generation {
                return Err(SchedError::UnknownTxq);
            }
            let new = if word & txq::SERVING != 0 {
                // The weakened variant drops a wake that arrives during service (the
                // classic lost wake-up), only to prove the loom model catches it.
                if cfg!(airtime_weakened = "wake_serving") { word } else { word | txq::WOKEN }
            } else if word & txq::QUEUED == 0 {
                word | txq::QUEUED
            } else {
                break;
            };
            if new == word {
                break;
            }
            // AcqRel: the Release half orders the caller's enqueue before the flag a
            // server Acquires; the Acquire half pairs with the server's return.
            match slot.word.compare_exchange_weak(word, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    if new & txq::QUEUED != 0 && word & txq::QUEUED == 0 {
                        self.push(self.ac_of(slot), id, true);
                    }
                    break;
                }
                Err(now) => word = now,
            }
        }
        if let Some(sslot) = slot.station().and_then(|sta| self.station_slot(sta).ok()) {
            self.mark_active(sslot, self.ac_of(slot), now);
        }
        Ok(())
    }

    /// Starts a round on `ac` (`ieee80211_txq_schedule_start`): if the AC's pending
    /// airtime is under its PHY limit the round opens with a new number (never 0, never
    /// reused: S5); otherwise the AC closes and [`next_txq`](Self::next_txq) returns
    /// nothing until a later start opens it (L3).
    ///
    /// The returned [`Round`] is this context's: pass it to every `next_txq` of the
    /// round. Another context may start its own round on the same AC meanwhile; each
    /// round still ends (S4), because a txq handed out in this round *or any later one*
    /// ends it (mainline forbids two rounds on an AC at once, so it only needs "this
    /// round").
    pub fn start_round(&self, ac: Ac) -> Round {
        let state = &self.acs[ac.index()];
        let open = !self.aql_enabled() || self.ac_under_phy_limit(ac);
        let policy = self.config.round_policy;
        // AcqRel: publishes the new number to next_txq calls that Acquire it.
        let previous = state.round.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
            let n = round_number(w);
            Some(match (open, policy) {
                (true, _) => {
                    let mut next = n.wrapping_add(1) & !OPEN;
                    if next == 0 {
                        next = 1;
                    }
                    OPEN | next
                }
                (false, RoundPolicy::ResetOnClose) => 0,
                (false, _) => n,
            })
        });
        state.counters.count_round(open);
        // fetch_update with a closure that always returns Some cannot fail.
        let previous = previous.unwrap_or_else(|w| w);
        let number = if open {
            let next = round_number(previous).wrapping_add(1) & !OPEN;
            if next == 0 { 1 } else { next }
        } else {
            0
        };
        Round { ac, number }
    }

    /// Whether `ac`'s pending airtime is under its PHY limit. The limit is at least the
    /// default high limit whatever the number of listed txqs (`aql::phy_limit_us`), so
    /// below that the queues' positions, which the other context keeps writing, are not
    /// read.
    #[inline]
    fn ac_under_phy_limit(&self, ac: Ac) -> bool {
        let pending = self.ac_pending_us(ac);
        let defaults = self.default_limits(ac);
        pending < defaults.high_us()
            || crate::aql::phy_limit_us(self.acs[ac.index()].listed(), defaults).is_none_or(|limit| pending < limit)
    }

    /// Whether a round is open on `ac`, and the number of the latest round started on it.
    pub fn round(&self, ac: Ac) -> (bool, u64) {
        let w = self.acs[ac.index()].round.load(Ordering::Acquire);
        (round_open(w), round_number(w))
    }

    /// The next txq to serve in `round` (`ieee80211_next_txq`), or `None` when the AC is
    /// closed, nothing eligible is listed, or the txq at the front was already handed
    /// out in this round or a later one (which ends the round, S4). The returned handle
    /// gives the caller sole service of the txq (S3) until it is returned.
    pub fn next_txq(&self, round: Round, _now: Instant) -> Option<Serving<'_>> {
        let ac = round.ac;
        let state = &self.acs[ac.index()];
        // Another context's start may have closed the AC since: L3 holds for every round.
        if !round.is_open() || !round_open(state.round.load(Ordering::Acquire)) {
            return None;
        }
        let number = round.number;
        let mut lap = Lap::new();
        let mut laps = 0;
        loop {
            let raw = match state.front.pop() {
                Some(raw) => raw,
                None => state.back.pop()?,
            };
            let id = TxqId::from_raw(raw);
            let Some(slot) = self.txqs.get(id.index()) else {
                lap.dropped();
                continue;
            };
            if !self.entry_is_servable(slot) {
                lap.dropped();
                continue;
            }
            if let Some(sta) = slot.station() {
                match self.deficit_step(sta, ac, slot, &mut lap) {
                    Step::Serve => {
                        if lap.boost > 0 {
                            self.finish_boosted_lap(state, ac, &lap);
                        }
                    }
                    Step::Rotate => {
                        self.requeue(state, id, false);
                        if lap.visited(state) {
                            laps += 1;
                            if !lap.eligible || laps >= MAX_LAPS {
                                return None;
                            }
                            lap.next(state);
                        }
                        continue;
                    }
                }
            }
            if self.served_since(slot.round.load(Ordering::Relaxed), number) {
                // Already served in this round: the round ends here (mainline returns NULL
                // at the head) and the txq goes back to the front queue for the next one.
                self.requeue(state, id, true);
                state.counters.count_skipped();
                return None;
            }
            if let Some(serving) = self.take_for_service(slot, id, ac) {
                slot.round.store(number, Ordering::Relaxed);
                return Some(serving);
            }
            lap.dropped();
        }
    }

    /// Returns a txq after serving it (`ieee80211_return_txq`). `outcome` says what the
    /// server saw: still backlogged after progress (front: it keeps its turn), stalled
    /// (frames it could not move now, e.g. a full ring: back, so it cannot pin the front,
    /// S7 and reference B4), or empty (dropped from the lists unless a wake arrived
    /// meanwhile or its station is still paying off debt within the active window).
    ///
    /// The txq goes back to the scheduler the handle came from, whichever scheduler this
    /// is called on: a handle cannot release another scheduler's txq.
    pub fn return_txq(&self, serving: Serving<'_>, outcome: TxqReturn, now: Instant) {
        let (sched, id, ac) = serving.into_parts();
        sched.finish_service(id, ac, outcome, now);
    }

    /// May this txq transmit now (`ieee80211_txq_may_transmit`, reference 3.7), for
    /// drivers whose firmware asks for frames of a given station and TID (pull mode)?
    /// Allowed: station-less txqs; txqs whose station's effective deficit (deficit minus
    /// pending, unlike mainline's raw deficit for the target, E5) is not negative.
    /// Refused: a negative deficit (topped up by the weight, as mainline does), and,
    /// by default, an AC over its PHY limit (`Config::over_limit`; mainline allows).
    /// An allowed txq is held like one from `next_txq` and must be returned.
    pub fn may_transmit(&self, id: TxqId, _now: Instant) -> Result<Option<Serving<'_>>, SchedError> {
        let slot = self.txq_slot(id)?;
        let ac = self.ac_of(slot);
        let over = self.aql_enabled() && !self.ac_under_phy_limit(ac);
        if over && self.config.over_limit == crate::config::OverLimitPolicy::Refuse {
            // As a round would (L3), station-less txqs included.
            return Ok(None);
        }
        if let (false, Some(sta)) = (over, slot.station()) {
            let sslot = self.station_slot(sta)?;
            if sslot.effective_deficit(ac) < 0 {
                sslot.top_up(ac, i64::from(sslot.weight()));
                return Ok(None);
            }
        }
        let mut word = slot.word.load(Ordering::Acquire);
        loop {
            if word & txq::LIVE == 0 || gen_of(word) != id.generation {
                return Err(SchedError::UnknownTxq);
            }
            if word & txq::SERVING != 0 {
                // Another context serves it: S3 forbids a second server.
                return Ok(None);
            }
            match slot.word.compare_exchange_weak(word, word | txq::SERVING, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(Some(Serving::new(self, id, ac))),
                Err(now) => word = now,
            }
        }
    }

    /// Whether a txq stamped `stamp` was handed out in round `number` or a later one.
    /// With [`RoundPolicy::ResetOnClose`] numbers restart at 1, so only equality means
    /// "this round" (mainline's test, kept exactly for that policy).
    #[inline]
    fn served_since(&self, stamp: u64, number: u64) -> bool {
        match self.config.round_policy {
            RoundPolicy::ResetOnClose => stamp == number,
            _ => stamp >= number,
        }
    }

    /// The AC of a txq slot.
    #[inline]
    pub(crate) fn ac_of(&self, slot: &TxqSlot) -> Ac {
        crate::Tid::new(slot.tid()).map_or(Ac::Be, crate::Tid::ac)
    }

    /// Pushes an entry for `id` (whose QUEUED bit the caller set) onto a queue of `ac`.
    fn push(&self, ac: Ac, id: TxqId, front: bool) {
        self.requeue(&self.acs[ac.index()], id, front);
    }

    fn requeue(&self, state: &AcState, id: TxqId, front: bool) {
        let queue = if front { &state.front } else { &state.back };
        // Each txq has at most one entry and each queue has at least max_txqs cells, so a
        // refused push never means "full": the pop one lap back has claimed this cell but
        // not yet released it (Vyukov's queue), which it does two instructions later. Wait
        // for it; dropping the entry would leave the txq QUEUED with no entry, never to be
        // served again (S1).
        while queue.push(id.to_raw()).is_err() {
            crate::sync::spin_loop();
        }
    }

    /// Looks at a popped entry's txq. Removed txqs and txqs already held through
    /// `may_transmit` drop their entry here (clearing QUEUED); false means skip it.
    fn entry_is_servable(&self, slot: &TxqSlot) -> bool {
        let mut word = slot.word.load(Ordering::Acquire);
        loop {
            if word & txq::LIVE != 0 && word & txq::SERVING == 0 {
                return true;
            }
            match slot.word.compare_exchange_weak(word, word & !txq::QUEUED, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return false,
                Err(now) => word = now,
            }
        }
    }

    /// QUEUED -> SERVING for a popped entry. None if it was removed or taken meanwhile
    /// (its entry is dropped then).
    fn take_for_service(&self, slot: &TxqSlot, id: TxqId, ac: Ac) -> Option<Serving<'_>> {
        let mut word = slot.word.load(Ordering::Acquire);
        loop {
            let new = if word & txq::LIVE != 0 && word & txq::SERVING == 0 {
                (word & !(txq::QUEUED | txq::WOKEN)) | txq::SERVING
            } else {
                word & !txq::QUEUED
            };
            // AcqRel: Acquire sees the enqueues published by wakes; Release orders our
            // round stamp after the take for the next server.
            match slot.word.compare_exchange_weak(word, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    return (new & txq::SERVING != 0 && word & txq::SERVING == 0).then(|| Serving::new(self, id, ac));
                }
                Err(now) => word = now,
            }
        }
    }

    /// Walked laps would have topped up the entries after the served one too, `lap.boost`
    /// times (each only while negative): give them that credit now, keeping their order
    /// at the back. (In a boosted lap every entry is in the back queue.)
    fn finish_boosted_lap(&self, state: &AcState, ac: Ac, lap: &Lap) {
        let remaining = lap.len.saturating_sub(lap.seen + 1); // the served entry was visited
        for _ in 0..remaining {
            let Some(raw) = state.back.pop() else { return };
            let id = TxqId::from_raw(raw);
            let Some(slot) = self.txqs.get(id.index()) else { continue };
            if !self.entry_is_servable(slot) {
                continue;
            }
            if let Some(sslot) = slot.station().and_then(|sta| self.station_slot(sta).ok()) {
                let weight = i64::from(sslot.weight().max(1));
                let d = sslot.effective_deficit(ac);
                if d < 0 {
                    sslot.top_up(ac, ((-d + weight - 1) / weight).min(lap.boost) * weight);
                }
            }
            self.requeue(state, id, false);
        }
    }

    /// The DRR and AQL step for a station txq (reference 3.4 step 5).
    fn deficit_step(&self, sta: crate::StationId, ac: Ac, slot: &TxqSlot, lap: &mut Lap) -> Step {
        let Ok(sslot) = self.station_slot(sta) else {
            // A station removed under its txq: serve nothing more of it, but let the
            // caller drop or serve the entry like a station-less one.
            return Step::Serve;
        };
        // The management (TID 16) txq is never AQL-limited (reference 3.5 item 4, L4).
        let aql_ok = slot.tid() == 16 || self.station_may_send(sslot, ac, 0);
        lap.eligible |= aql_ok;
        let weight = i64::from(sslot.weight().max(1));
        let mut d = sslot.effective_deficit(ac);
        if d < 0 && lap.boost > 0 {
            // Laps the first pass proved nobody is served in: apply them at once, but
            // never lift a station past zero with them (mainline stops topping up there).
            let needed = (-d + weight - 1) / weight;
            let extra = needed.min(lap.boost) * weight;
            sslot.top_up(ac, extra);
            d += extra;
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

    pub(crate) fn finish_service(&self, id: TxqId, ac: Ac, outcome: TxqReturn, now: Instant) {
        let Some(slot) = self.txqs.get(id.index()) else { return };
        let station = slot.station().and_then(|s| self.station_slot(s).ok());
        let has_frames = !matches!(outcome, TxqReturn::Empty);
        if let Some(sslot) = station.filter(|_| has_frames) {
            self.mark_active(sslot, ac, now);
        }
        let keep_active =
            !has_frames && station.is_some_and(|s| s.effective_deficit(ac) < 0 && self.is_active(s, ac, now));
        let mut word = slot.word.load(Ordering::Acquire);
        loop {
            let woken = word & txq::WOKEN != 0;
            let live = word & txq::LIVE != 0 && gen_of(word) == id.generation;
            let requeue = live && word & txq::QUEUED == 0 && (has_frames || woken || keep_active);
            let mut new = word & !(txq::SERVING | txq::WOKEN);
            if requeue {
                new |= txq::QUEUED;
            }
            // AcqRel: Release publishes the server's dequeues to the next server;
            // Acquire sees a wake's WOKEN flag and the enqueue before it.
            match slot.word.compare_exchange_weak(word, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    if requeue {
                        // A wake makes an empty txq newly backlogged (front); a stalled one
                        // stays at the back even if woken, or it would pin the front (S7).
                        let front = match outcome {
                            TxqReturn::Backlogged => true,
                            TxqReturn::Stalled => false,
                            TxqReturn::Empty => woken,
                        };
                        self.requeue(&self.acs[ac.index()], id, front);
                    }
                    return;
                }
                Err(now) => word = now,
            }
        }
    }
}

enum Step {
    Serve,
    Rotate,
}

/// Bookkeeping of one lap over the listed txqs.
struct Lap {
    /// Entries to visit before the lap is complete: the listed count when the lap
    /// began, worked out at its first rotation (most calls serve the first entry and
    /// never need it; the queues' positions are lines the other context keeps writing).
    /// 0 until then.
    len: u32,
    /// Entries popped and dropped (not requeued) before the length was read.
    dropped: u32,
    seen: u32,
    /// Some visited station passed its AQL check (mainline's `found_eligible`).
    eligible: bool,
    /// Fewest further laps any AQL-eligible station needs.
    min_laps: i64,
    /// Laps to apply at once in this lap.
    boost: i64,
}

impl Lap {
    fn new() -> Lap {
        Lap { len: 0, dropped: 0, seen: 0, eligible: false, min_laps: i64::MAX, boost: 0 }
    }

    /// Counts a rotated entry (already requeued, so the count includes it as it did
    /// when the lap began); true when the lap is complete.
    fn visited(&mut self, state: &AcState) -> bool {
        if self.len == 0 {
            self.len = state.listed().saturating_add(self.dropped).max(1);
        }
        self.seen += 1;
        self.seen >= self.len
    }

    /// Counts an entry popped and not requeued, while the length is still unread.
    fn dropped(&mut self) {
        if self.len == 0 {
            self.dropped += 1;
        }
    }

    /// Starts the next lap (the rare path: its length is read now, as
    /// `finish_boosted_lap` needs it even when the lap's first entry is served).
    fn next(&mut self, state: &AcState) {
        let boost = if self.min_laps == i64::MAX { 0 } else { (self.min_laps - 1).max(0) };
        *self = Lap { boost, len: state.listed().max(1), ..Lap::new() };
    }
}
