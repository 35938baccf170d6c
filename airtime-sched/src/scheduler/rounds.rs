//! Rounds, txq selection and return: mac80211's `ieee80211_txq_schedule_start`,
//! `ieee80211_next_txq`, `ieee80211_return_txq` and `ieee80211_txq_may_transmit`,
//! lock-free.
//!
//! # Ordering model
//! Mainline's: one list per AC ([`crate::list`]), station txqs inserted at the head when
//! they become backlogged or are returned after progress, station-less txqs and
//! rotations at the tail, taken from the head. The DRR arithmetic (top-up by the weight,
//! effective deficit = deficit - pending) is mainline's; laps of top-ups are applied at
//! once ([`drr`](super::drr)). One deliberate difference: a txq returned
//! [`TxqReturn::Stalled`] goes to the tail, where mainline's head insertion would end
//! every later round at it (S7).
//!
//! # The end of a round
//! A txq already handed out in the current round, or in a later round another context
//! started, ends the round when `next_txq` meets it (S4); it stays at the head, as in
//! mainline.

use super::drr::{Lap, Step};
use super::listing::{Claim, Place};
use super::round::Round;
use super::serving::{Serving, TxqReturn};
use super::{SchedError, Scheduler};
use crate::config::RoundPolicy;
use crate::slots::{gen_of, occupant_load, occupant_store, txq};
use crate::sync::Ordering;
use crate::{Ac, Instant, TxqId};

/// The round word's "open" bit; the other 63 bits are the round number, which never
/// wraps (at a round a nanosecond it would take 292 years).
const OPEN: u64 = 1 << 63;
/// Laps one `next_txq` call may walk before it gives up for this round (a bound that
/// only concurrent changes can reach: after the skip, the next lap serves; loom model
/// 29 reaches it with two completions landing between laps).
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
        let state = &self.acs[ac];
        let open = !self.aql_enabled() || self.ac_under_phy_limit(ac);
        let policy = self.config.round_policy;
        // Weakened variant, only to prove loom model 1 catches it: the number read and
        // written in two steps, so two contexts starting rounds at once can take one.
        let previous: Result<u64, u64> = if weakened!("round_load_store") {
            let w = state.round.load(Ordering::Acquire);
            let n = round_number(w).wrapping_add(1) & !OPEN;
            state.round.store(if open { OPEN | n.max(1) } else { w }, Ordering::Release);
            Ok(w)
        } else {
            // AcqRel: publishes the new number to next_txq calls that Acquire it.
            state.round.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
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
            })
        };
        state.counters.count_round(open);
        // fetch_update with a closure that always returns Some cannot fail.
        let previous = previous.unwrap_or_else(|w| w);
        let number = if open {
            let next = round_number(previous).wrapping_add(1) & !OPEN;
            if next == 0 { 1 } else { next }
        } else {
            0
        };
        Round::new(ac, number, self.radio)
    }

    /// Whether `ac`'s pending airtime is under its PHY limit. The limit is at least the
    /// default high limit whatever the number of listed txqs (`aql::phy_limit_us`), so
    /// below that the queues' positions, which the other context keeps writing, are not
    /// read.
    #[inline]
    fn ac_under_phy_limit(&self, ac: Ac) -> bool {
        let pending = self.ac_pending_us(ac);
        let defaults = self.default_limits(ac);
        pending < defaults.high_us() || self.under_listed_phy_limit(ac, pending, defaults)
    }

    /// The rest of [`ac_under_phy_limit`](Self::ac_under_phy_limit), over the default
    /// high limit: the limit for the txqs listed. Out of line, so that a start under the
    /// high limit needs no registers saved for the list's count.
    #[inline(never)]
    fn under_listed_phy_limit(&self, ac: Ac, pending: u32, defaults: crate::AqlLimits) -> bool {
        crate::aql::phy_limit_us(self.acs[ac].listed(), defaults).is_none_or(|limit| pending < limit)
    }

    /// Whether a round was started on `round`'s AC since `round` was (its number moved):
    /// what a context that runs rounds concurrently with others asks after its round
    /// returned its last txq, to learn whether it must run another. A txq a round holds,
    /// or an entry its `next_txq` only looks at and rotates, is off its AC's list, so a
    /// round another context started meanwhile could not serve it, and that round may have been the one meant to follow the completion that made
    /// it servable again (it released the station's AQL charges, or freed the ring):
    /// with nothing else in flight, nobody would run another. So: `true`, run one more
    /// round (it sees the txq listed); `false`, any later start's round sees it. Bound
    /// the extra rounds (the ready loops run two at most, then report
    /// [`RoundReport::overlapped`](crate::driver_loop::RoundReport::overlapped)) so that
    /// a context cannot be kept there by others' starts. Rounds run under a
    /// [`RoundGate`](crate::RoundGate), or by one context alone, never need it: it
    /// answers `false` then.
    ///
    /// It reads the round word with a read-modify-write: every write to that word is one
    /// (`start_round`'s), and the read-modify-writes of one word are totally ordered, so
    /// either a start comes before this read in that order (its number is seen), or
    /// after it: then that start reads what this one wrote (or a later write of the same
    /// release sequence) and everything this context did before it — the txqs its
    /// round returned, listed — happens before that start's round visits the list. A
    /// plain load would give neither: it may read an older number while the start that
    /// wrote a newer one has not yet seen the returns (store buffering). Call it after
    /// the last return of the round. A closed start leaves the number as it is (but see
    /// `ResetOnClose` below): its round visits no list, so there is nothing it could
    /// have missed.
    ///
    /// `false` for a closed round (it held no txq) and for another scheduler's round
    /// (told apart by the scheduler's 16-bit number, which repeats only after 65 535
    /// more schedulers were created, as for charges). With [`RoundPolicy::ResetOnClose`] a closed start
    /// writes 0, which this reads as a start (one harmless extra round), and a close and
    /// enough later starts can bring the number back to `round`'s (ABA): this answers
    /// "no start" then. That policy exists only to reproduce mainline's measurement.
    #[inline]
    pub fn round_started_since(&self, round: Round) -> bool {
        // Weakened variant `no_overlap_recheck`, only to prove loom model txq17 catches
        // it: no start is ever seen, so a round that missed a txq held here is not
        // followed by another.
        if weakened!("no_overlap_recheck") || !round.is_open() || round.radio() != self.radio {
            return false;
        }
        // AcqRel: Release publishes this context's returns to a start that reads it,
        // Acquire pairs with the start's Release (as `next_txq`'s load does).
        round_number(self.acs[round.ac()].round.fetch_add(0, Ordering::AcqRel)) != round.number
    }

    /// Whether a round is open on `ac`, and the number of the latest round started on it.
    pub fn round(&self, ac: Ac) -> (bool, u64) {
        let w = self.acs[ac].round.load(Ordering::Acquire);
        (round_open(w), round_number(w))
    }

    /// The next txq to serve in `round` (`ieee80211_next_txq`), or `None` when the AC is
    /// closed, nothing eligible is listed, the txq at the front was already handed
    /// out in this round or a later one (which ends the round, S4), or `round` was
    /// started on another scheduler (another radio's: nothing is read or stamped here,
    /// so its numbers cannot end this scheduler's rounds early or late). The returned handle
    /// gives the caller sole service of the txq (S3) until it is returned.
    ///
    /// The txq handed out is the one whose station passed the deficit and AQL checks:
    /// if another context removes it and a new txq takes its slot (and its entry, by a
    /// wake) meanwhile, the newcomer is checked on its own before it is served, and no
    /// top-up meant for one lands on the other's station.
    ///
    /// `now` is not read: a station's activity is stamped when its txq is woken and
    /// when it is returned ([`return_txq`](Self::return_txq)), not when it is handed out.
    ///
    /// It takes each entry it looks at off the list until it hands it out or puts it
    /// back (rotated to the tail, or at the head), so a round another context runs
    /// meanwhile can miss that txq: see [`round_started_since`](Self::round_started_since).
    #[inline]
    pub fn next_txq(&self, round: Round, now: Instant) -> Option<Serving<'_>> {
        self.next_txq_visiting(round, now, &mut false)
    }

    /// [`next_txq`](Self::next_txq), setting `visited` once it took an entry off the
    /// list (what a ready loop's re-check needs to know: a round that took none cannot
    /// have hidden a txq from another context's round). Left to the compiler to inline
    /// or not: hinted inline, it was inlined into the table's round loop, which then
    /// called the deficit step out of line (21 instructions a frame more).
    pub(crate) fn next_txq_visiting(&self, round: Round, _now: Instant, visited: &mut bool) -> Option<Serving<'_>> {
        let ac = round.ac();
        let state = &self.acs[ac];
        // Another context's start may have closed the AC since: L3 holds for every round.
        // Weakened variant `l3_round_only`, only to prove loom model 14 catches it: the
        // round's own flag alone, missing a close by another context's start.
        if !round.is_open()
            || round.radio() != self.radio
            || (!weakened!("l3_round_only") && !round_open(state.round.load(Ordering::Acquire)))
        {
            return None;
        }
        let number = round.number;
        let mut lap = Lap::new();
        let mut laps = 0;
        'entries: loop {
            let index = state.list.pop()?;
            *visited = true;
            let Some((slot, mut seen)) = self.look(ac, index) else { continue };
            loop {
                // Not a let chain: the kernel's rustc (1.85) is the crate's floor.
                let mut step = match slot.station() {
                    Some(sta) => self.deficit_step(sta, ac, slot, gen_of(seen), &mut lap),
                    None => Step::Serve,
                };
                // Acquire, paired with the take's Release store below: a stamp of a
                // newcomer's take comes with the newcomer's claim of the word.
                if step == Step::Serve && self.served_since(slot.round.load(occupant_load()), number) {
                    // The stamp may be a newcomer's, if the slot changed hands since the
                    // look: then the entry is the newcomer's, to be looked at again.
                    // Weakened variant `round_stamp_any_generation`, only to prove loom
                    // model 25 catches it: the stamp taken as the looked-at txq's.
                    if weakened!("round_stamp_any_generation")
                        || gen_of(slot.word.load(Ordering::Acquire)) == gen_of(seen)
                    {
                        // Already served in this round: the round ends here, and the txq
                        // stays at the head for the next one (mainline returns NULL
                        // without moving it).
                        self.list_on(state, index, Place::Head);
                        state.counters.count_skipped();
                        return None;
                    }
                    // Weakened variant `stamp_changed_skips_look`, only to prove loom
                    // model 28 catches it on this path: the entry left behind.
                    if weakened!("stamp_changed_skips_look") {
                        continue 'entries;
                    }
                    step = Step::Changed;
                }
                match step {
                    // The take is of the txq checked above, as the look saw it.
                    Step::Serve => match self.take_seen(ac, slot, seen) {
                        Claim::Taken(word) => {
                            // Release: see the stamp's load above.
                            slot.round.store(number, occupant_store());
                            return Some(Serving::new(self, slot.id(index as usize, word), ac, slot));
                        }
                        // The slot was reused and its new occupant woken since the look:
                        // the entry stands for it now, and it gets its own checks.
                        Claim::Seen(word) => seen = word,
                        // Removed or taken meanwhile: the entry is gone; look at the next.
                        Claim::Gone => continue 'entries,
                    },
                    // Weakened variant `changed_skips_look`, only to prove loom models 27
                    // (a changed entry met by the deficit step) and 28 (by the stamp
                    // check) catch it: the entry left behind, neither looked at again nor
                    // put back, so the newcomer's wake is lost.
                    Step::Changed if weakened!("changed_skips_look") => continue 'entries,
                    // A newcomer took the slot (and its entry, if woken) since the look:
                    // look at the entry again, as the newcomer's.
                    Step::Changed => match self.look_again(ac, slot) {
                        Some(word) => seen = word,
                        None => continue 'entries,
                    },
                    rotate => {
                        if self.rotate(state, ac, index, &mut lap, &mut laps, rotate == Step::RotatePaid) {
                            return None;
                        }
                        continue 'entries;
                    }
                }
            }
        }
    }

    /// Returns a txq after serving it (`ieee80211_return_txq`). `outcome` says what the
    /// server saw: still backlogged after progress (front: it keeps its turn), stalled
    /// (frames it could not move now, e.g. a full ring: back, so it cannot pin the front,
    /// S7 and B4), or empty (dropped from the lists unless a wake arrived
    /// meanwhile or its station is still paying off debt within the active window).
    ///
    /// The txq goes back to the scheduler the handle came from, whichever scheduler this
    /// is called on: a handle cannot release another scheduler's txq.
    ///
    /// A [`TxqTable`](crate::TxqTable)'s txq returned `Empty` here (served through the
    /// scheduler rather than a table turn, which cannot see the frames waiting in its
    /// intake) goes back as `Stalled`: it stays listed, and the table's next turn of it
    /// decides.
    pub fn return_txq(&self, serving: Serving<'_>, outcome: TxqReturn, now: Instant) {
        let (sched, id, ac) = serving.into_parts();
        sched.finish_service(id, ac, outcome, now, false);
    }

    /// May this txq transmit now (`ieee80211_txq_may_transmit`), for drivers whose
    /// firmware asks for frames of a given station and TID (pull mode)? Granted, the
    /// txq is held like one from `next_txq` and must be returned; refused, the answer
    /// says why ([`Refusal`](super::Refusal)), and the refusal is counted
    /// ([`AcCounters::pull_refusals`](super::AcCounters::pull_refusals)). `now` is not
    /// read, as in `next_txq`.
    ///
    /// What it checks, in this order (and nothing else):
    /// * the AC's PHY limit: while the AC's pending airtime is over it, every txq of
    ///   the AC is refused, station-less ones included
    ///   ([`Refusal::OverPhyLimit`](super::Refusal::OverPhyLimit);
    ///   [`Config::over_limit`](crate::Config::over_limit) chooses mainline's answer
    ///   instead, which allows);
    /// * whether another context holds the txq ([`Refusal::Served`](super::Refusal::Served),
    ///   S3), before the deficit, so that an ask for a txq it sees held does not top a
    ///   deficit up (and again when the txq is claimed, after the deficit's check);
    /// * the station's *effective* deficit, its deficit minus its airtime in flight on
    ///   the AC: negative, the deficit is topped up by the station's weight and the txq
    ///   refused ([`Refusal::Deficit`](super::Refusal::Deficit)); station-less txqs
    ///   skip this check.
    ///
    /// It does **not** check the station's AQL limit: the turn's server does, before
    /// each frame ([`Serving::airtime_check`](super::Serving::airtime_check); the table's
    /// [`TxqTurn::serve`](crate::TxqTurn::serve) does it for the driver), as a round's
    /// server does.
    ///
    /// **The effective deficit in pull mode.** Mainline's `ieee80211_txq_may_transmit`
    /// refuses only when the asked station's stored deficit is negative, not counting
    /// the airtime it has in flight (its rounds, `ieee80211_next_txq`, subtract it); this
    /// crate subtracts it here too, so that pull-mode turns and rounds judge a station
    /// alike. The consequence for a firmware that pulls: a station with more airtime
    /// in flight than its deficit (any station the firmware keeps busy) is refused until
    /// its completions bring the pending airtime down, or until repeated asks have
    /// topped its deficit up, one weight per refusal (in the crate's `pull_mode_driver`
    /// example, eight busy stations, about two records in five that name a live txq
    /// are refused this way). A refused
    /// record is not lost work: the txq stays listed, and the host's push rounds (which
    /// the completions run) serve it when its station's turn comes; so a pull-mode
    /// driver answers a refused record with nothing, and makes sure a round follows
    /// (the crate docs' recipe for a turn taken outside a round runs one whenever the
    /// txq may still have frames). A driver whose firmware must get frames for every
    /// record it sends, fairness aside, serves the record through
    /// [`TxqTable::claim`](crate::TxqTable::claim) instead (no deficit or PHY-limit
    /// check; the turn's AQL check still applies), and accepts that those frames are
    /// outside the weighted shares until their airtime is charged at completion.
    ///
    /// **Beside concurrent rounds**, a turn taken here has no round to re-check (see
    /// the crate docs, [Concurrency](crate#concurrency)): after the call returns,
    /// whatever it returned (a refusal may have held the txq a moment), the driver
    /// runs a round on the AC if the txq may still have frames, asked then. A
    /// firmware's fetch indication with several records on one AC needs one such
    /// round, run after the last record's turn has returned: a wake that landed during
    /// any of those turns has listed its txq by the time that turn returned, so a
    /// round started after the last return sees every one of them (the same argument
    /// as for one turn).
    pub fn may_transmit(&self, id: TxqId, _now: Instant) -> Result<super::MayTransmit<Serving<'_>>, SchedError> {
        use super::{MayTransmit, Refusal};
        // Read while the slot held `id`: a top-up must not land on the station of a txq
        // that took the slot meanwhile.
        let super::registry::TxqParts { ac, station, held, .. } = self.txq_parts(id)?;
        let refuse = |why: Refusal| {
            self.acs[ac].counters.count_refusal(why);
            Ok(MayTransmit::Refused(why))
        };
        let over = self.aql_enabled() && !self.ac_under_phy_limit(ac);
        if over && self.config.over_limit == crate::config::OverLimitPolicy::Refuse {
            // As a round would (L3), station-less txqs included.
            return refuse(Refusal::OverPhyLimit);
        }
        // Before the deficit: an ask for a txq it sees held must not top the deficit
        // up, which would credit the station for a turn it does not get (another
        // context's turn serves it now; mainline's `ieee80211_next_txq` takes the txq it
        // hands out off the schedule, and `ieee80211_txq_may_transmit` tops up only a
        // scheduled txq's station). The claim below checks again. Weakened variant
        // `served_after_topup`, only to prove loom model txq26 catches it: the check
        // made after the top-up.
        if held && !weakened!("served_after_topup") {
            return refuse(Refusal::Served);
        }
        if let (false, Some(sta)) = (over, station) {
            let sslot = self.station_slot(sta)?;
            if sslot.top_up_debt(ac, i64::from(sslot.weight().max(1))) != crate::slots::TopUp::NoDebt {
                return refuse(if held { Refusal::Served } else { Refusal::Deficit });
            }
        }
        match self.claim_txq(id)? {
            Some(serving) => Ok(MayTransmit::Granted(serving)),
            None => refuse(Refusal::Served),
        }
    }

    /// Hands txq `id` to the caller whatever its station's deficit and AQL budget
    /// (`may_transmit`'s claim without its checks): `Ok(None)` if another context
    /// serves it now (S3). The claimed txq must be returned as any other.
    pub(crate) fn claim_txq(&self, id: TxqId) -> Result<Option<Serving<'_>>, SchedError> {
        let (slot, ac) = self.txq_slot_ac(id)?;
        let mut word = slot.word.load(Ordering::Acquire);
        loop {
            if word & txq::LIVE == 0 || gen_of(word) != id.generation {
                return Err(SchedError::UnknownTxq);
            }
            // Weakened variant `may_transmit_serving`, only to prove loom model 18 catches
            // it: a second server allowed.
            if word & txq::SERVING != 0 && !weakened!("may_transmit_serving") {
                // Another context serves it: S3 forbids a second server.
                return Ok(None);
            }
            // Mainline unlinks the txq it allows; a lock-free list cannot unlink from the
            // middle, so a listed txq's entry is orphaned instead: it stands for nothing
            // (not counted in the PHY limit's n, dropped when a round meets it) until the
            // return lists the txq again, in that place (`finish_service`).
            let queued = txq::queued(ac);
            let orphan = if word & queued != 0 { txq::ORPHAN } else { 0 };
            match slot.word.compare_exchange_weak(
                word,
                (word | txq::SERVING | orphan) & !txq::IDLE,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    if orphan != 0 && word & txq::ORPHAN == 0 {
                        self.acs[ac].list.add_dead(1);
                    }
                    return Ok(Some(Serving::new(self, id, ac, slot)));
                }
                Err(now) => word = now,
            }
        }
    }

    /// Puts a rotated entry back at the tail and, at the end of a lap, drops the dead
    /// entries ahead of the next and skips idle laps; true when the call gives up for
    /// this round. Out of line: most calls serve the first entry, and its register
    /// pressure would otherwise burden that path.
    #[inline(never)]
    fn rotate(&self, state: &super::AcState, ac: Ac, index: u32, lap: &mut Lap, laps: &mut u32, paid: bool) -> bool {
        self.list_on(state, index, Place::Tail);
        lap.paid |= paid;
        if !lap.visited(state) {
            return false;
        }
        // Mainline's walk meets the head of the lap again; entries left by txqs no
        // longer listed are not on its list, so none may stay ahead of it here either.
        self.drop_dead_front(state, ac);
        *laps = laps.saturating_add(1);
        if !lap.eligible || *laps >= MAX_LAPS {
            // Weakened variant, only to prove loom model 29 catches it: the walk that
            // gives up takes an entry off the list again (with one txq listed, the one
            // it just put back), so that txq is lost.
            if weakened!("max_laps_unlisted") && *laps >= MAX_LAPS {
                let _ = state.list.pop();
            }
            return true;
        }
        // Nobody served in a whole lap: skip the laps that would serve nobody either
        // (E6), then walk the next one. When a visit eligible for AQL paid its station's
        // debt, the next lap serves that station and there is no lap to skip, unless a
        // charge or a registration from another context puts it back in debt meanwhile:
        // then the second lap is idle too, and the skip runs after it instead.
        let skip = if *laps == 1 { !lap.paid } else { lap.skip_deferred };
        let defer = *laps == 1 && lap.paid;
        if skip {
            self.skip_idle_laps(state, ac, lap.len);
        }
        lap.next(state);
        lap.skip_deferred = defer;
        false
    }

    /// Drops the entries at the head of `ac`'s list that stand for no listed txq, up to
    /// the first that does, which stays where it is.
    fn drop_dead_front(&self, state: &super::AcState, ac: Ac) {
        while let Some(index) = state.list.front() {
            if self.entry_stands(ac, index) {
                return;
            }
            let Some(popped) = state.list.pop() else { return };
            if self.look(ac, popped).is_some() {
                // Another context changed the list meanwhile: put back what it left.
                self.list_on(state, popped, Place::Head);
                return;
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

    /// `table_turn`: the return of a [`TxqTable`](crate::TxqTable) turn, which saw the
    /// intake too; any other return of a table's txq as `Empty` is taken as `Stalled`
    /// (see [`return_txq`](Self::return_txq)), decided from the word the return swaps.
    pub(crate) fn finish_service(&self, id: TxqId, ac: Ac, outcome: TxqReturn, now: Instant, table_turn: bool) {
        let Some(slot) = self.txqs.get(id.index()) else { return };
        let station = slot.station().and_then(|s| self.station_slot(s).ok());
        let has_frames = !matches!(outcome, TxqReturn::Empty);
        if let Some(sslot) = station.filter(|_| has_frames) {
            self.mark_active(sslot, ac, now);
        }
        let keep_active =
            !has_frames && station.is_some_and(|s| s.effective_deficit(ac) < 0 && self.is_active(s, ac, now));
        let queued = txq::queued(ac);
        // Read while this context holds the txq: once SERVING is cleared below, a removed
        // txq's slot may be taken by another.
        let place_if_woken = self.wake_place(slot);
        let mut word = slot.word.load(Ordering::Acquire);
        // Weakened variant `idle_first_load`, only to prove loom model adaptive5 catches
        // it: the debt-alone mark decided from the first load, missing a wake that fails
        // the compare-and-swap below.
        let first_woken = word & txq::WOKEN != 0;
        loop {
            let woken = word & txq::WOKEN != 0;
            let live = word & txq::LIVE != 0 && gen_of(word) == id.generation;
            // A table's txq returned empty by a server that could not see its intake.
            let unseen = !table_turn && !has_frames && word & txq::KEPT != 0;
            let wanted = live && (has_frames || unseen || woken || keep_active);
            let mut new = word & !(txq::SERVING | txq::WOKEN | txq::IDLE);
            if wanted {
                // Listed now, or an entry from before (left while `may_transmit` held the
                // txq, or orphaned) stands for it and keeps its place.
                new = (new | queued) & !txq::ORPHAN;
                let woken = if weakened!("idle_first_load") { first_woken } else { woken };
                if !(has_frames || unseen || woken) {
                    // Listed for the debt alone: its visits keep back no frame.
                    new |= txq::IDLE;
                }
            }
            // AcqRel: Release publishes the server's dequeues to the next server;
            // Acquire sees a wake's WOKEN flag and the enqueue before it.
            match slot.word.compare_exchange_weak(word, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    if word & queued == 0 && new & queued != 0 {
                        // Mainline's `__ieee80211_schedule_txq`: has_queue (frames, or a
                        // wake while served) lists a station txq at the head; a stalled
                        // one goes to the tail so it cannot pin the head (S7), and so do
                        // station-less txqs and idle ones kept for their debt.
                        let place = match outcome {
                            TxqReturn::Backlogged => place_if_woken,
                            TxqReturn::Stalled => Place::Tail,
                            TxqReturn::Empty if woken => place_if_woken,
                            // Unseen frames wait at the tail, as a stalled txq's do.
                            TxqReturn::Empty => Place::Tail,
                        };
                        self.list(ac, id.index(), place);
                    } else if word & txq::ORPHAN != 0 && new & txq::ORPHAN == 0 {
                        self.acs[ac].list.add_dead(-1);
                    }
                    // Removed while served: this context was the last to hold it, so the
                    // kept queue goes back to its table now.
                    if word & txq::KEPT != 0 && word & txq::LIVE == 0 && !weakened!("retire_serving") {
                        self.retire_kept(id.index());
                    }
                    return;
                }
                Err(seen) => word = seen,
            }
        }
    }
}
