//! The ready loop over a [`TxqTable`]: one round on one AC, from the txqs' queues into
//! a ring, with a per-turn budget, each txq's retry slot, and the ring told when each
//! turn ends. `&self` throughout: the wake context and the completion context may run
//! it at once on the same AC, each with its own ring (or a ring that locks itself, as
//! ath11k has one lock per TCL ring).

use super::table::{Retry, TxqTable};
use crate::driver_loop::{ListVisits, Refused, RoundEnd, RoundReport, StationTable};
use crate::traits::{Enqueue, Frame, PushError, Ring, RingError, RingErrorKind, Txq};
use crate::{Ac, Instant, Round, TxqReturn};

/// How much one txq may send in one turn before the loop moves on, so that a slow
/// station cannot hold the ring for a long burst while others wait (mt76 bounds its
/// bursts the same way). A txq stopped by its budget keeps its frames and, with
/// deficit left, its place at the head: the round then ends (a round serves a txq
/// once, as mainline's does), and the next round starts with it. A pre-turn hook may
/// give a txq its own budget ([`TurnStart::ServeWithin`]).
///
/// A turn sends at least one frame whatever the bounds (when the station's AQL budget
/// and the ring allow one), so no bound, 0 included, can stall a txq. The bounds
/// combine (the first one reached ends the turn): e.g. a pull-mode driver answering an
/// ath10k fetch record's `max_num_msdus` and `max_num_bytes` serves it within
/// `TurnBudget { frames: msdus, bytes, ..TurnBudget::UNLIMITED }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TurnBudget {
    /// Frames per turn (at least one is sent).
    pub frames: u32,
    /// Airtime charged per turn, in us: the turn ends once its charges reach it.
    pub airtime_us: u32,
    /// Bytes per turn ([`Frame::len_bytes`] summed): the turn ends once the frames it
    /// sent reach it (the frame that reaches it is sent, as for `airtime_us`).
    pub bytes: u32,
}

impl TurnBudget {
    /// No bound: a turn lasts while the station's AQL budget and the ring allow.
    pub const UNLIMITED: TurnBudget = TurnBudget { frames: u32::MAX, airtime_us: u32::MAX, bytes: u32::MAX };

    /// At most `frames` frames per turn.
    pub const fn frames(frames: u32) -> TurnBudget {
        TurnBudget { frames, ..TurnBudget::UNLIMITED }
    }

    /// At most `airtime_us` of charged airtime per turn (the frame that reaches it is
    /// sent).
    pub const fn airtime_us(airtime_us: u32) -> TurnBudget {
        TurnBudget { airtime_us, ..TurnBudget::UNLIMITED }
    }

    /// At most `bytes` bytes per turn (the frame that reaches it is sent).
    pub const fn bytes(bytes: u32) -> TurnBudget {
        TurnBudget { bytes, ..TurnBudget::UNLIMITED }
    }

    /// Whether a turn that sent `frames` frames of `bytes` bytes, charged `airtime_us`,
    /// is within every bound (a turn that sent nothing always is).
    #[inline(always)]
    fn allows(&self, frames: u32, airtime_us: u64, bytes: u64) -> bool {
        frames == 0
            || (frames < self.frames && airtime_us < u64::from(self.airtime_us) && bytes < u64::from(self.bytes))
    }
}

impl Default for TurnBudget {
    fn default() -> TurnBudget {
        TurnBudget::UNLIMITED
    }
}

/// What a driver's pre-turn hook ([`TxqTable::run_round_hooked`]) says about the txq
/// the scheduler just handed out, before anything is dequeued from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TurnStart {
    /// Serve it as usual, within the round's [`TurnBudget`].
    Serve,
    /// Serve it within this budget instead of the round's: a driver that bounds some
    /// txqs' turns differently (a tighter airtime bound for a station on a slow rate, a
    /// voice txq's short bursts, a larger A-MPDU for a station that negotiated one). As
    /// with any budget, the turn sends at least one frame.
    ServeWithin(TurnBudget),
    /// Send nothing from it in this round (its station is in power save, say): its
    /// frames stay in the txq (its intake moved into its queue, whose limits may drop
    /// there, as at any turn), nothing is charged, and it is returned stalled, so
    /// it stays listed at the tail of its AC and is offered again in the next round
    /// (returned empty instead if it holds no frame, as any empty turn is). The
    /// round's `at_turn_end` still runs on it, so the queue's drops are taken.
    /// A round that comes back to it ends there, as a round does at any txq it already
    /// handed out, so a dozing station's listed txqs cost a hook call a round and add
    /// to [`AcCounters::skipped_selections`](crate::AcCounters::skipped_selections)
    /// (not only the round-numbering bug counts there, then). A driver that buffers a
    /// dozing station's frames itself moves them out instead
    /// ([`TxqTable::claim`](crate::TxqTable::claim), its txqs returned empty).
    Skip,
}

impl<Q: Txq + Enqueue> TxqTable<Q> {
    /// Runs one round on `ac`: for each txq the scheduler hands out, while the ring has
    /// room, the turn's budget lasts and the station's AQL budget allows — the frame in
    /// the retry slot first, then frames from the queue, each charged to its station
    /// (priced by `stations`) and pushed. A frame the ring refuses goes to its txq's
    /// retry slot, its charge released (it is charged again when sent, so a kept frame
    /// never holds its own txq over a limit), and the round ends ([`RoundEnd::Refused`]),
    /// unless the ring refused it for that txq alone ([`RingErrorKind::TxqFull`]: only
    /// the turn ends, the txq returned stalled); a
    /// station txq's frame that cannot be charged (its station gone from `stations` or
    /// from the scheduler) is kept there uncharged and the txq's turn ends: it is
    /// charged when sent, or handed back with the txq when the station's removal
    /// removes it. No frame goes to the ring uncharged except station-less (multicast)
    /// ones, as in mainline. After each turn the ring's [`Ring::end_turn`] runs.
    pub fn run_round<S, R>(
        &self,
        ac: Ac,
        now: Instant,
        stations: &S,
        ring: &mut R,
        budget: TurnBudget,
    ) -> RoundReport<Q::Frame>
    where
        S: StationTable + ?Sized,
        R: Ring<Frame = Q::Frame> + ?Sized,
    {
        self.run_round_with(ac, now, stations, ring, budget, |_| ())
    }

    /// [`run_round`](Self::run_round), with `at_turn_end` run on each txq's turn before
    /// it is returned: where the driver takes what the queue kept for it (FQ-CoDel's
    /// dropped frames, [`FqCodelTxq::drain_drops`](crate::FqCodelTxq::drain_drops)) or
    /// reads its statistics, while it alone holds the txq.
    pub fn run_round_with<S, R>(
        &self,
        ac: Ac,
        now: Instant,
        stations: &S,
        ring: &mut R,
        budget: TurnBudget,
        at_turn_end: impl FnMut(&mut super::TxqTurn<'_, Q>),
    ) -> RoundReport<Q::Frame>
    where
        S: StationTable + ?Sized,
        R: Ring<Frame = Q::Frame> + ?Sized,
    {
        self.run_round_hooked(ac, now, stations, ring, budget, |_| TurnStart::Serve, at_turn_end)
    }

    /// [`run_round_with`](Self::run_round_with), with `before_turn` asked first at each
    /// txq the scheduler hands out, while the round holds it: [`TurnStart::Skip`] sends
    /// nothing from it (a station in power save: mac80211 does not schedule a sleeping
    /// station's txqs), [`TurnStart::ServeWithin`] serves it within a budget of its own
    /// instead of `round_budget`. The hook holds the turn, so it may also take what a power-save
    /// flush needs from it ([`TxqTurn::take_retry`](super::TxqTurn::take_retry), the
    /// queue) before skipping. A skipped txq is not counted in
    /// [`RoundReport::txqs_served`], and the ring hears nothing of it (no
    /// [`Ring::start_turn`], no [`Ring::end_turn`]).
    ///
    /// `at_turn_end` runs for every turn the round holds, skipped or served: a turn pulls
    /// the txq's intake into its queue when it starts, and the round pulls once more
    /// just before `at_turn_end` (what enqueues pushed while the turn held the queue:
    /// left in the intake, it would send every later enqueue there too), so a queue that
    /// drops on its limits there (FQ-CoDel) has drops to take even from a turn that
    /// sends nothing, and a sleeping station's would otherwise pile up until it wakes.
    /// For a skipped turn it runs right after the hook, and
    /// [`TxqTurn::skipped`](super::TxqTurn::skipped) says so; for a served one, after
    /// [`Ring::end_turn`]. Either way the txq is still held.
    ///
    /// Why a hook rather than an "asleep" flag the table keeps: power save is the
    /// driver's state (mac80211's `WLAN_STA_PS_STA`, the firmware's PS indications),
    /// read at the moment of the turn; a flag copied into the table could only be as
    /// fresh as its last update, and would be one more word to keep per station.
    #[allow(clippy::too_many_arguments)]
    pub fn run_round_hooked<S, R>(
        &self,
        ac: Ac,
        now: Instant,
        stations: &S,
        ring: &mut R,
        round_budget: TurnBudget,
        mut before_turn: impl FnMut(&mut super::TxqTurn<'_, Q>) -> TurnStart,
        mut at_turn_end: impl FnMut(&mut super::TxqTurn<'_, Q>),
    ) -> RoundReport<Q::Frame>
    where
        S: StationTable + ?Sized,
        R: Ring<Frame = Q::Frame> + ?Sized,
    {
        // The re-check after each round, and why: `driver_loop::rounds_with_recheck`.
        crate::driver_loop::rounds_with_recheck(self.scheduler(), || {
            self.round_once(ac, now, stations, ring, round_budget, &mut before_turn, &mut at_turn_end)
        })
    }

    /// One round of [`run_round_hooked`](Self::run_round_hooked): its report, the round,
    /// and what it did to the AC's list (whether a concurrent round could have missed an
    /// entry this one held).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn round_once<S, R>(
        &self,
        ac: Ac,
        now: Instant,
        stations: &S,
        ring: &mut R,
        round_budget: TurnBudget,
        before_turn: &mut impl FnMut(&mut super::TxqTurn<'_, Q>) -> TurnStart,
        at_turn_end: &mut impl FnMut(&mut super::TxqTurn<'_, Q>),
    ) -> (RoundReport<Q::Frame>, Round, ListVisits)
    where
        S: StationTable + ?Sized,
        R: Ring<Frame = Q::Frame> + ?Sized,
    {
        let mut report = RoundReport::empty();
        let round = self.scheduler().start_round(ac);
        let mut visits = ListVisits::default();
        if !round.is_open() {
            report.end = RoundEnd::Closed;
            return (report, round, visits);
        }
        // The last turn ended on its budget with frames left.
        let mut budget_left_frames = false;
        // A txq was passed over: an enqueue held its queue.
        let mut passed_over = false;
        loop {
            // Room first, before a txq is taken (see `driver_loop::run_round`).
            if !ring.has_room(ac) {
                report.end = RoundEnd::RingFull;
                return (report, round, visits);
            }
            let Some(mut turn) = self.next_txq_noting(round, now, &mut passed_over, visits.visited()) else {
                if passed_over {
                    visits.returned(true);
                }
                if budget_left_frames {
                    report.end = RoundEnd::TurnBudget;
                } else if passed_over {
                    report.end = RoundEnd::QueueBusy;
                }
                break;
            };
            let budget = match before_turn(&mut turn) {
                TurnStart::Serve => round_budget,
                TurnStart::ServeWithin(own) => own,
                TurnStart::Skip => {
                    // The turn pulled the txq's intake into its queue (at its start, and
                    // here what came during the hook), where the queue's limits may have
                    // dropped: the turn's end takes those as a served turn's does, or
                    // they would wait for the station's wake.
                    turn.mark_skipped();
                    turn.pull_intake();
                    at_turn_end(&mut turn);
                    // Kept listed at the tail while it has frames; one without (the hook
                    // flushed them, or a wake's frame was sent before) leaves the list as
                    // any empty turn does, so that a dozing station's empty txqs are not
                    // visited every round and say so (`may_have_frames`). The round goes
                    // on with the next txq.
                    let outcome = TxqReturn::after_turn(turn.is_backlogged(), false);
                    turn.finish_as_seen(outcome, now);
                    visits.returned(true);
                    continue;
                }
            };
            let (stop, left, outcome) = turn.serve_within(ac, now, stations, ring, budget, &mut report, at_turn_end);
            turn.finish_as_seen(outcome, now);
            visits.returned(outcome != TxqReturn::Empty);
            budget_left_frames = left;
            if let Some(end) = stop {
                report.end = end;
                return (report, round, visits);
            }
        }
        (report, round, visits)
    }
}

impl<'a, Q: Txq + Enqueue> super::TxqTurn<'a, Q> {
    /// Serves this turn as a round serves each of its turns, and returns the txq: the
    /// frame in the retry slot first, then frames from the queue while the ring has room,
    /// `budget` lasts and the station's AQL budget allows, each charged (priced by
    /// `stations`; a station-less frame by its
    /// [`multicast_airtime_us`](StationTable::multicast_airtime_us)) and pushed, a frame
    /// the ring refuses kept in the retry slot with its charge given back, the ring's
    /// [`Ring::start_turn`] and [`Ring::end_turn`] around it, the intake pulled, then
    /// `at_turn_end`, and the txq returned with what the turn saw
    /// ([`TxqReturn::after_turn`]). For a turn the driver holds already: a pull-mode
    /// driver's [`TxqTable::may_transmit`] (its firmware asks for a txq's frames), or a
    /// [`TxqTable::claim`]. What a driver would otherwise write around
    /// [`dequeue`](Self::dequeue) by hand.
    ///
    /// The report is a round's of this one turn: `txqs_served` is 1 (a removed station's
    /// txq is served too, and sends nothing), and `end` is [`RoundEnd::RingFull`] or
    /// [`RoundEnd::Refused`] when the ring stopped the turn (`Refused(TxqFull)` when it
    /// refused a frame for this txq alone), [`RoundEnd::TurnBudget`] when `budget` did
    /// with frames left, else [`RoundEnd::Exhausted`]: the txq drained, or its station
    /// over its AQL limit, unpriced or removed (the txq stays listed while it has frames).
    /// For a pull-mode turn `TurnBudget` is the firmware's budget met, not a round
    /// left unfinished: the txq kept its place, and a round or the firmware's next
    /// fetch serves it. `overlapped` is always false (one turn, no round to re-check).
    /// `refused` is always `None`: a frame the ring refuses waits in the txq's retry
    /// slot (counted in `held_back`), its charge given back.
    ///
    /// A turn from [`TxqTable::may_transmit`] or [`TxqTable::claim`] beside concurrent
    /// rounds is a turn taken outside a round: once this returned, run a round on the AC
    /// if [`TxqTable::may_have_frames`] says the txq may still have frames (the crate
    /// docs' [recipe](crate#concurrency)); `Err(UnknownTxq)` there means it was removed,
    /// and no round is owed. Not "if the report says frames were left": a wake that
    /// landed during the turn lists the txq at its return.
    pub fn serve<S, R>(
        self,
        now: Instant,
        stations: &S,
        ring: &mut R,
        budget: TurnBudget,
        mut at_turn_end: impl FnMut(&mut super::TxqTurn<'_, Q>),
    ) -> RoundReport<Q::Frame>
    where
        S: StationTable + ?Sized,
        R: Ring<Frame = Q::Frame> + ?Sized,
    {
        let mut report = RoundReport::empty();
        let ac = self.ac();
        let mut turn = self;
        let (stop, budget_left, outcome) =
            turn.serve_within(ac, now, stations, ring, budget, &mut report, &mut at_turn_end);
        turn.finish_as_seen(outcome, now);
        report.end = match stop {
            Some(end) => end,
            None if budget_left => RoundEnd::TurnBudget,
            // Held back with the turn going on: the ring refused it for this txq alone.
            None if report.held_back != 0 => RoundEnd::Refused(RingErrorKind::TxqFull),
            None => RoundEnd::Exhausted,
        };
        report
    }

    /// One served turn of a round on `ac` (the round's body, and [`serve`](Self::serve)'s):
    /// counts it in `report` and sends within `budget`. Returns why the round must stop,
    /// if it must, whether the turn ended on its budget with frames left (the txq keeps
    /// its place at the head), and the outcome to return the txq with.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn serve_within<S, R>(
        &mut self,
        ac: Ac,
        now: Instant,
        stations: &S,
        ring: &mut R,
        budget: TurnBudget,
        report: &mut RoundReport<Q::Frame>,
        at_turn_end: &mut impl FnMut(&mut super::TxqTurn<'_, Q>),
    ) -> (Option<RoundEnd>, bool, TxqReturn)
    where
        S: StationTable + ?Sized,
        R: Ring<Frame = Q::Frame> + ?Sized,
    {
        let turn = self;
        report.txqs_served = report.txqs_served.saturating_add(1);
        let id = turn.txq();
        // `None` for a station-less txq; a removed station's txq sends nothing more
        // (its frames come back with it from `take_removed`).
        let (station, gone) = turn.serving().station_and_removed();
        ring.start_turn(id, station, ac);
        let (mut frames, mut airtime_us, mut bytes) = (0u32, 0u64, 0u64);
        let mut progressed = false;
        let mut stop = None;
        // The ring took no more of this txq (`RingErrorKind::TxqFull`).
        let mut txq_full = false;
        // The first frame of a turn is always allowed: a zero bound would otherwise
        // stall the txq for good (every turn ends before it sends anything).
        while !gone && budget.allows(frames, airtime_us, bytes) {
            if !ring.has_room(ac) {
                stop = Some(RoundEnd::RingFull);
                break;
            }
            let (frame, charge) = match turn.take_retry() {
                // Kept uncharged: it is charged now, so the AQL check comes first.
                Some(Retry { frame, charge: None }) if !turn.airtime_check() => {
                    // The slot was just emptied: putting it back cannot fail.
                    let _ = turn.hold_back(Retry { frame, charge: None });
                    break;
                }
                Some(Retry { frame, charge }) => (frame, charge),
                None => {
                    // A turn whose queue is known drained ends before the AQL
                    // check and a dequeue that would find nothing: most turns end
                    // here, the pass after their last frame (or at once, for a txq
                    // listed for its debt or for a wake whose frame is gone).
                    if turn.is_known_drained() || !turn.airtime_check() {
                        break;
                    }
                    match turn.dequeue(now) {
                        Ok(Some(frame)) => (frame, None),
                        // Empty, or stopped (BlockAck setup): its frames stay queued.
                        Ok(None) | Err(_) => break,
                    }
                }
            };
            // A station txq's frame is sent charged: a fresh one, or a kept one that
            // could not be charged before.
            let charge = match (station, charge) {
                (Some(sta), None) => {
                    let charged = match stations.station(sta) {
                        Some(st) => turn.charge_frame(st, frame.len_bytes()).ok(),
                        None => None,
                    };
                    if charged.is_none() {
                        report.unpriced = report.unpriced.saturating_add(1);
                        if let Err(back) = turn.hold_back(Retry { frame, charge: None }) {
                            // Unreachable: the slot was emptied above. Hand it back.
                            report.refused = Some(Refused {
                                frame: back.frame,
                                charge: None,
                                txq: id,
                                kind: crate::RingErrorKind::Other,
                            });
                        }
                        break;
                    }
                    charged
                }
                // A station-less frame: charged to the multicast budget if the
                // driver prices multicast, else sent uncharged (mainline's old way).
                (None, None) => {
                    stations.multicast_airtime_us(frame.len_bytes(), ac).and_then(|us| turn.charge_us(us).ok())
                }
                (_, charge) => charge,
            };
            // Both bounded by the budget the loop checks: at most one frame (and one
            // charge) past it.
            airtime_us = airtime_us.wrapping_add(charge.as_ref().map_or(0, |c| u64::from(c.airtime_us())));
            let uncharged = charge.is_none();
            let len = u64::from(frame.len_bytes());
            match ring.push(frame, charge) {
                Ok(()) => {
                    if uncharged {
                        // Only a station-less frame the driver does not price.
                        turn.send_uncharged();
                    }
                    frames = frames.wrapping_add(1);
                    // Bounded as the airtime is: at most one frame past the budget.
                    bytes = bytes.wrapping_add(len);
                    progressed = true;
                }
                Err(PushError { frame, charge, error }) => {
                    let kind = error.kind();
                    report.held_back = report.held_back.saturating_add(1);
                    // The kept frame gives its charge back: kept, it would count
                    // against the very AQL and PHY limits that decide whether its txq
                    // gets the turn that sends it (a charge above the station's limit
                    // would never leave). It is charged again when sent.
                    if let Some(charge) = charge {
                        let _ = turn.give_back(charge);
                    }
                    if let Err(back) = turn.hold_back(Retry { frame, charge: None }) {
                        // Unreachable, as above.
                        report.refused = Some(Refused { frame: back.frame, charge: None, txq: id, kind });
                        stop = Some(RoundEnd::Refused(kind));
                    } else if kind == RingErrorKind::TxqFull {
                        // This txq's turn ends, the round does not.
                        txq_full = true;
                    } else {
                        stop = Some(RoundEnd::Refused(kind));
                    }
                    break;
                }
            }
        }
        // Added once a turn (a round's count saturates; a turn's is bounded).
        report.frames = report.frames.saturating_add(frames);
        let budget_spent =
            frames >= budget.frames || airtime_us >= u64::from(budget.airtime_us) || bytes >= u64::from(budget.bytes);
        ring.end_turn(id, ac);
        // What enqueues pushed into the intake while the turn held the queue, into the
        // queue now: an intake left holding frames sends every later enqueue into it
        // too (they queue behind), and this context would pull them all at the next
        // turn; emptied, later enqueues may write the queue on their own context
        // again. Before `at_turn_end`, so that it sees any limit drop the pull makes.
        turn.pull_intake();
        at_turn_end(turn);
        // A txq the ring took no more of goes to the tail, progress or not: it cannot
        // move until completions open its window, and at the head it would end every
        // round there.
        let outcome = TxqReturn::after_turn(turn.is_backlogged(), progressed && !txq_full);
        // Only a txq that keeps its place at the head with frames left ends a later
        // round on its budget; one that sent nothing (a zero bound met by a refused
        // check) went to the tail.
        let budget_left_frames = budget_spent && stop.is_none() && outcome == TxqReturn::Backlogged;
        (stop, budget_left_frames, outcome)
    }
}
