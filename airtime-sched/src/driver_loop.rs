//! The ready driver loop: one round on one AC, moving frames from txqs into a
//! [`Ring`] — the loop a simple driver uses instead of writing its own (mac80211's
//! `ieee80211_handle_wake_tx_queue`, plus the ring check it lacks, B12).
//!
//! Before each txq is taken, and before each frame is dequeued, the ring must have
//! room. For each txq the round hands out: check the ring has room *before* dequeuing (so
//! the frame that meets a shortage stays queued, as ath10k and mt76 do), end the turn if
//! the queue knows it is empty ([`Txq::is_known_empty`]), check the station's AQL
//! budget, charge the frame at the queue's head (priced at [`Txq::peek_len`]), dequeue
//! (re-priced if the queue's AQM handed out another frame), push; then the ring's
//! [`Ring::end_turn`]. Charging before the dequeue lets a station removed mid-turn end
//! its txq's turn with the frame still queued: a station txq's frame never reaches the
//! ring uncharged. The round ends when the ring is full or refuses a frame; a refused
//! frame and its charge come back in the report, never lost. Txqs are returned by what
//! happened: backlogged after progress (front), stalled without progress (back: a txq
//! that cannot progress never pins the front, S7, B4), or empty.

use crate::traits::{Frame, PushError, Ring, RingError, RingErrorKind, Station, Txq, TxqError, TxqErrorKind};
use crate::{Ac, Charge, Instant, Scheduler, StationId, TxqId, TxqReturn};

/// The driver's txqs, by handle, for [`run_round`] (a driver that keeps its txqs
/// itself); not the crate's [`TxqTable`](crate::TxqTable), which owns them.
pub trait TxqTable {
    /// The txq type.
    type Txq: Txq;
    /// The txq registered as `id`, if the driver still has it.
    fn txq_mut(&mut self, id: TxqId) -> Option<&mut Self::Txq>;
}

/// The driver's stations, by handle: how the ready loops
/// ([`run_round`], [`TxqTable::run_round`](crate::TxqTable::run_round)) price a frame.
/// Also re-exported at the crate's root.
///
/// The loops ask it once per frame (the table's) or per turn (`run_round`), while
/// other contexts may add and remove stations,
/// so `station` should be a read that takes no lock for long: a fixed array indexed by
/// [`StationId::index`] whose entries say which id they hold (an atomic id beside the
/// entry, or an RCU-protected pointer in a kernel driver) fits; a table behind a mutex
/// would have to be held for a whole round. An entry found for another id is `None`,
/// and so is a station removed meanwhile: its frame is kept, not sent uncharged.
pub trait StationTable {
    /// The station type.
    type Station: Station;
    /// The station registered as `id`, if the driver still has it.
    fn station(&self, id: StationId) -> Option<&Self::Station>;

    /// The airtime of a `frame_len`-byte multicast frame on `ac`, in us, charged to the
    /// AC's multicast budget ([`Scheduler::charge_multicast_us`]); `None` (the default)
    /// sends station-less frames uncharged, as mainline does (the multicast AQL patches are not merged).
    /// Mainline prices them at the interface's lowest basic rate: e.g.
    /// `price_from_rate(Rate::legacy_ofdm(60).ok(), frame_len, ac).ok()` for 6 Mbit/s.
    fn multicast_airtime_us(&self, frame_len: u32, ac: Ac) -> Option<u32> {
        let _ = (frame_len, ac);
        None
    }
}

/// Why a round ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RoundEnd {
    /// The AC was over its PHY limit at round start: nothing was served (L3).
    Closed,
    /// The scheduler had nothing more to hand out in this round ([`TxqTurn::serve`](crate::TxqTurn::serve):
    /// the turn ended for its txq alone, drained, or its station over its AQL limit).
    Exhausted,
    /// The ring had no room before a dequeue (nothing was dequeued for it).
    RingFull,
    /// The ring refused a dequeued frame; it is in [`RoundReport::refused`] (or, in
    /// [`TxqTable::run_round`](crate::TxqTable::run_round) and
    /// [`TxqTurn::serve`](crate::TxqTurn::serve), in its txq's retry slot).
    Refused(RingErrorKind),
    /// A txq's turn ended on its [`TurnBudget`](crate::txqs::TurnBudget) with frames
    /// left, and the round then met it again at the head (a round serves a txq once):
    /// start another round to go on ([`TxqTable::run_round`](crate::TxqTable::run_round)
    /// only; [`TxqTurn::serve`](crate::TxqTurn::serve) reports it when the budget ended
    /// its one turn with frames left).
    TurnBudget,
    /// A txq was passed over, still listed, because an enqueue held its queue
    /// throughout the server's bounded wait (the enqueuer was preempted), and nothing
    /// else was left to serve: start another round soon, as after `TurnBudget` (that
    /// enqueue, if it is refused, calls for none) ([`TxqTable::run_round`](crate::TxqTable::run_round)
    /// only).
    QueueBusy,
}

/// A frame the ring refused, handed back with its charge (still to be released or
/// pushed again) so that nothing is lost.
#[derive(Debug)]
pub struct Refused<F> {
    /// The frame.
    pub frame: F,
    /// Its charge (`None` if the frame was uncharged): pushed again with the frame, or
    /// given back ([`Scheduler::give_back`]) if the frame is dropped or waits (a charge
    /// kept with a waiting frame counts against the limits that decide when its txq
    /// sends again).
    pub charge: Option<Charge>,
    /// The txq it came from.
    pub txq: TxqId,
    /// Why the ring refused it.
    pub kind: RingErrorKind,
}

/// What one call of a ready loop did: its round, and the rounds it ran after it when
/// another context's round may have missed a txq it held (counts summed, `end` the
/// last round's; see [`overlapped`](Self::overlapped)).
#[derive(Debug)]
#[must_use = "a refused frame in the report still holds its charge"]
pub struct RoundReport<F> {
    /// Frames pushed into the ring.
    pub frames: u32,
    /// Txqs served: handed out by the scheduler, less those a pre-turn hook skipped
    /// ([`TxqTable::run_round_hooked`](crate::TxqTable::run_round_hooked)).
    pub txqs_served: u32,
    /// Frames the ring refused that wait in their txq's retry slot, their charges
    /// given back until they are sent ([`TxqTable::run_round`](crate::TxqTable::run_round)
    /// and [`TxqTurn::serve`](crate::TxqTurn::serve) only).
    pub held_back: u32,
    /// Frames of station txqs kept back, unsent and uncharged, because no charge could
    /// be made: the station has no entry in the [`StationTable`] (nothing is dequeued
    /// from the txq: the frame at its head stays queued and it returns stalled), or its charge was
    /// refused (its station removed while the txq was served: here the frame was not
    /// dequeued yet, in [`TxqTable::run_round`](crate::TxqTable::run_round) it waits in
    /// the txq's retry slot), and the turn ends. No loop of this crate sends a station
    /// txq's frame uncharged: a departing station's drain
    /// ([`DepartingStation::is_drained`](crate::DepartingStation::is_drained)) sees
    /// every frame of it in flight.
    pub unpriced: u32,
    /// Why the round ended.
    pub end: RoundEnd,
    /// The frame the ring refused, if it refused one: from [`run_round`] only. The
    /// table's loops ([`TxqTable::run_round`](crate::TxqTable::run_round),
    /// [`TxqTurn::serve`](crate::TxqTurn::serve)) keep a refused frame in its txq's retry
    /// slot (counted in `held_back`, its charge given back) and report `None`; `Some`
    /// from them would mean that slot was already full, which they rule out.
    pub refused: Option<Refused<F>>,
    /// Another context started a round on the AC while this call's last round had an
    /// entry off the AC's list (a txq it held and returned, or one its `next_txq` only
    /// looked at and put back), and the call may run no more rounds: it had run all it
    /// may (its own and two more) with the AC's round number still moving, or its
    /// round ended on a refused frame (`refused`), which goes back to the caller
    /// first. That other round may not have seen the txq: unless the caller knows
    /// another round will run (frames in flight whose completions run one), it must ask
    /// for a round on the AC again, as after a [`RoundGate`](crate::RoundGate)'s
    /// `Deferred`. False otherwise: always for a call whose rounds found the list empty,
    /// for one context's rounds alone (and so under a `RoundGate`), and for
    /// [`TxqTurn::serve`](crate::TxqTurn::serve)'s report (one turn, no round: its caller
    /// follows the recipe for turns taken outside a round instead, in the crate docs'
    /// [Concurrency](crate#concurrency) section).
    pub overlapped: bool,
}

impl<F> RoundReport<F> {
    /// Adds one round's counts to a call's (its `end` is the call's now); `refused` and
    /// `overlapped` are the caller's to set.
    #[inline(always)]
    pub(crate) fn add_round(&mut self, round: &RoundReport<F>) {
        self.frames = self.frames.saturating_add(round.frames);
        self.txqs_served = self.txqs_served.saturating_add(round.txqs_served);
        self.held_back = self.held_back.saturating_add(round.held_back);
        self.unpriced = self.unpriced.saturating_add(round.unpriced);
        self.end = round.end;
        self.overlapped = false;
    }

    /// A report of a round that has done nothing yet.
    pub(crate) fn empty() -> RoundReport<F> {
        RoundReport {
            frames: 0,
            txqs_served: 0,
            held_back: 0,
            unpriced: 0,
            end: RoundEnd::Exhausted,
            refused: None,
            overlapped: false,
        }
    }
}

/// Rounds one ready-loop call ([`run_round`], [`TxqTable::run_round`](crate::TxqTable::run_round))
/// runs at most: its own, and up to two more when another context started a round on
/// the AC while this one held a txq it returned ([`Scheduler::round_started_since`]).
pub(crate) const MAX_ROUNDS_PER_CALL: u32 = 3;

/// What a round did to its AC's list, for the re-check after it
/// ([`Scheduler::round_started_since`]): whether it took any entry off the list. Each
/// `next_txq` takes the entry it looks at off the list, to hand it out, pass it over
/// (an enqueue holds its queue), or rotate it to the tail (its station over its AQL
/// limit or in deficit, or a dead entry dropped from the front), and a round another
/// context runs meanwhile finds the list without it. A round that found the list empty
/// hid nothing: it needs no re-check, and so never reports `overlapped`. What it
/// returned is kept only for the weakened variants that prove the loom models catch a
/// narrower re-check.
#[derive(Clone, Copy, Default)]
pub(crate) struct ListVisits {
    visited: bool,
    returned: bool,
    returned_with_frames: bool,
}

impl ListVisits {
    /// The flag `next_txq` sets once it took an entry off the list.
    #[inline(always)]
    pub(crate) fn visited(&mut self) -> &mut bool {
        &mut self.visited
    }

    /// The round returned a txq (`with_frames`: listed by its return whatever came
    /// meanwhile), or passed one over.
    #[inline(always)]
    pub(crate) fn returned(&mut self, with_frames: bool) {
        self.returned = true;
        self.returned_with_frames |= with_frames;
    }

    /// Whether a round started since this one may have missed an entry it held.
    #[inline(always)]
    pub(crate) fn recheck(self) -> bool {
        // Weakened variants, only to prove the loom models catch them:
        // `recheck_after_returns_only` (txq22, txq23: a round that only rotated an entry
        // is not followed) and `recheck_listed_with_frames` (txq19: nor one that
        // returned an empty txq a wake listed meanwhile).
        if weakened!("recheck_after_returns_only") {
            self.returned
        } else if weakened!("recheck_listed_with_frames") {
            self.returned_with_frames
        } else {
            self.visited
        }
    }
}

/// Runs one round on `ac`: see the [module documentation](self).
///
/// Two contexts may run it on one AC at once (each with its own view of the driver's
/// txqs, e.g. a per-txq lock taken in [`TxqTable::txq_mut`]: the scheduler hands a txq
/// to one round at a time). A txq one round holds, or looks at, is off the AC's list,
/// so the other context's round cannot serve it, and that round may have been the one
/// meant to follow the completion that made it servable again; so, after a round that
/// visited the list, this call runs another if a round was started on the AC since
/// ([`Scheduler::round_started_since`]), at most two more, and then reports
/// [`RoundReport::overlapped`] if the number still moved. A round that ends on a
/// refused frame returns it at once, with `overlapped` set if a round started since.
/// One context's rounds alone never run more than one.
pub fn run_round<T, S, R>(
    sched: &Scheduler,
    ac: Ac,
    now: Instant,
    txqs: &mut T,
    stations: &S,
    ring: &mut R,
) -> RoundReport<<T::Txq as Txq>::Frame>
where
    T: TxqTable + ?Sized,
    S: StationTable + ?Sized,
    R: Ring<Frame = <T::Txq as Txq>::Frame> + ?Sized,
{
    rounds_with_recheck(sched, || round_once(sched, ac, now, txqs, stations, ring))
}

/// Runs `one_round` (a round of one of the ready loops: its report, the round, and
/// what it did to the AC's list) once, then again while another context may have
/// missed a txq it held, at most [`MAX_ROUNDS_PER_CALL`] rounds in all; the reports
/// summed.
#[inline(always)]
pub(crate) fn rounds_with_recheck<F>(
    sched: &Scheduler,
    mut one_round: impl FnMut() -> (RoundReport<F>, crate::Round, ListVisits),
) -> RoundReport<F> {
    let mut total = RoundReport::empty();
    let mut rounds_left = MAX_ROUNDS_PER_CALL;
    loop {
        rounds_left = rounds_left.saturating_sub(1);
        let (report, round, visits) = one_round();
        total.add_round(&report);
        // Liveness of concurrent rounds. An entry this round took off its AC's list
        // was missing from it meanwhile, so a round another context ran then could
        // not serve it: a txq held and returned listed (with frames: backlogged,
        // stalled by a full ring or its station's AQL limit, skipped, passed over; or
        // empty but woken while held, which its return lists too), and an entry
        // `next_txq` only looked at and rotated to the tail (its station over its AQL
        // limit or in deficit) or dropped from the front and put back. That other
        // round may have been the one meant to follow the event that makes the txq
        // servable again (the completion that released the station's charges or
        // freed the ring, the station's wake from power save): with nothing else in
        // flight, nobody would run another, and its frames would wait for the next
        // enqueue. S1 (it is listed) holds; what is lost is the round. So after a
        // round that took any entry off the list (`ListVisits`: only the return
        // knows whether it listed the txq, as a wake may come until its final
        // compare-and-swap; a round that found the list empty hid nothing),
        // the round word is read with a read-modify-write
        // (`Scheduler::round_started_since`), after all of this round's returns:
        //
        // * Another context's start comes before that read in the word's order (all
        //   its writes are read-modify-writes, totally ordered): the number moved,
        //   and this context runs one more round, which sees the txq listed. A start
        //   before this round's own is no start "since": its number is below ours.
        // * It comes after: it reads this read's write or a later one of its release
        //   sequence, so the returns happen before that start and its round's visit
        //   of the list finds the txq listed (or its later state): it is that
        //   round's to serve, nothing is missed.
        //
        // Numbers are never reused (S5; ResetOnClose excepted, see
        // `round_started_since`), so "moved" cannot read as "not moved" (no ABA). A
        // closed start leaves the number and visits no list. The next round is a
        // new one with its own number, so the txq, stamped with this round's, may be
        // served once in it (S4 is per round); a txq the other context's round
        // served since ends ours as usual. Under a `RoundGate` one runner runs the
        // AC's rounds, so the number moves only by its own starts: the read answers
        // "no start", and the gated path pays one uncontended read-modify-write per
        // round that took an entry off the list, and never a round more.
        //
        // Bounded: if the number still moves after the last round allowed, say so
        // (`RoundReport::overlapped`): the caller must ask for a round again, as
        // after a `RoundGate`'s `Deferred`.
        let started_since = visits.recheck() && sched.round_started_since(round);
        if report.refused.is_some() {
            // The caller must take the refused frame and its charge first (the table's
            // loop keeps it in the txq's retry slot and never gets here), and knows
            // when the ring has room again; but the room may have come while the txq
            // was held, and the round that completion ran may have missed it: then the
            // caller must ask for another round.
            total.refused = report.refused;
            total.overlapped = started_since;
            return total;
        }
        if !started_since {
            return total;
        }
        if rounds_left == 0 {
            total.overlapped = true;
            return total;
        }
    }
}

/// One round of [`run_round`]: its report, the round, and what it did to the list.
fn round_once<T, S, R>(
    sched: &Scheduler,
    ac: Ac,
    now: Instant,
    txqs: &mut T,
    stations: &S,
    ring: &mut R,
) -> (RoundReport<<T::Txq as Txq>::Frame>, crate::Round, ListVisits)
where
    T: TxqTable + ?Sized,
    S: StationTable + ?Sized,
    R: Ring<Frame = <T::Txq as Txq>::Frame> + ?Sized,
{
    let mut report = RoundReport::empty();
    let round = sched.start_round(ac);
    if !round.is_open() {
        report.end = RoundEnd::Closed;
        return (report, round, ListVisits::default());
    }
    let mut visits = ListVisits::default();
    loop {
        // Room first, before a txq is taken: a txq taken only to find the ring full
        // would lose its turn (it returns stalled, to the back) and the next completion
        // would serve whoever is behind it, which turns airtime fairness into frame
        // fairness whenever the ring is the bottleneck.
        if !ring.has_room(ac) {
            report.end = RoundEnd::RingFull;
            return (report, round, visits);
        }
        let Some(mut serving) = sched.next_txq_visiting(round, now, visits.visited()) else { break };
        report.txqs_served = report.txqs_served.saturating_add(1);
        let id = serving.txq();
        let Some(txq) = txqs.txq_mut(id) else {
            // The driver dropped this txq: nothing to serve; let it leave the lists.
            sched.return_txq(serving, TxqReturn::Empty, now);
            visits.returned(false);
            continue;
        };
        // A station txq whose station the driver's table does not have cannot be priced:
        // nothing is dequeued from it (sending it uncharged would switch AQL off for the
        // txq, as nothing would ever fill its budget), and the frame at its head counts
        // as kept back. `None`: a station-less txq.
        let station = serving.station();
        let entry = match station.map(|sta| stations.station(sta)) {
            Some(None) => {
                report.unpriced = report.unpriced.saturating_add(1);
                let outcome = TxqReturn::after_turn(!txq.is_empty(), false);
                sched.return_txq(serving, outcome, now);
                visits.returned(outcome != TxqReturn::Empty);
                continue;
            }
            Some(Some(station)) => Some(station),
            None => None,
        };
        let mut progressed = false;
        let mut stop = None;
        ring.start_turn(id, station, ac);
        loop {
            if !ring.has_room(ac) {
                stop = Some(RoundEnd::RingFull);
                break;
            }
            // As in `TxqTable::run_round`: a queue known drained ends the turn before
            // the AQL check (which would mark the station limited for adaptive AQL
            // with nothing held back) and an empty dequeue.
            if txq.is_known_empty() || !serving.airtime_check() {
                break;
            }
            // Charged before it is dequeued, priced at the head's length: a station
            // removed meanwhile refuses the charge while the frame is still queued, so no
            // frame of a station txq reaches the ring uncharged (a departing station's
            // drain must see every frame of it in flight), and nothing is dequeued that
            // could not be sent.
            let Some(head_len) = txq.peek_len() else { break };
            let Ok(charge) = charge_for(&mut serving, entry, stations, head_len, ac) else {
                // Its station was removed (or its charge refused): the frame stays queued,
                // to be purged with the txq.
                report.unpriced = report.unpriced.saturating_add(1);
                break;
            };
            let frame = match txq.dequeue(now) {
                Ok(Some(frame)) => frame,
                // Nothing came out (an AQM dropped the rest, or the queue stopped for a
                // BlockAck setup, keeping its frames): the charge goes back.
                nothing => {
                    debug_assert!(
                        nothing
                            .as_ref()
                            .err()
                            .is_none_or(|e| matches!(e.kind(), TxqErrorKind::Stopped | TxqErrorKind::Other))
                    );
                    if let Some(c) = charge {
                        let _ = serving.give_back(c);
                    }
                    break;
                }
            };
            // The AQM may have dropped the head and handed out another frame: priced at its
            // own length, unless its station left in between (then the head's charge, a
            // valid one, goes with it).
            let len = frame.len_bytes();
            let charge = match charge {
                Some(c) if len != head_len => match charge_for(&mut serving, entry, stations, len, ac) {
                    Ok(Some(exact)) => {
                        let _ = serving.give_back(c);
                        Some(exact)
                    }
                    _ => Some(c),
                },
                charge => charge,
            };
            let uncharged = charge.is_none();
            match ring.push(frame, charge) {
                Ok(()) => {
                    if uncharged {
                        // Only a station-less frame the driver does not price, counted by
                        // the scheduler: an uncharged frame always shows.
                        serving.send_uncharged();
                    }
                    report.frames = report.frames.saturating_add(1);
                    progressed = true;
                }
                Err(PushError { frame, charge, error }) => {
                    let kind = error.kind();
                    report.refused = Some(Refused { frame, charge, txq: id, kind });
                    stop = Some(RoundEnd::Refused(kind));
                    break;
                }
            }
        }
        ring.end_turn(id, ac);
        // A txq with a refused frame in the report is backlogged from the driver's
        // point of view: it must not be dropped from the lists.
        let backlogged = !txq.is_empty() || report.refused.is_some();
        let outcome = TxqReturn::after_turn(backlogged, progressed);
        sched.return_txq(serving, outcome, now);
        visits.returned(outcome != TxqReturn::Empty);
        if let Some(end) = stop {
            report.end = end;
            return (report, round, visits);
        }
    }
    (report, round, visits)
}

/// The charge of a `frame_len`-byte frame of the txq `serving` holds: to its station
/// (`entry`, the driver's), refused once the station was removed; or, for a station-less
/// txq (`None`), to the AC's multicast budget if the driver prices multicast (`Ok(None)`:
/// sent uncharged, as mainline does).
fn charge_for<S: StationTable + ?Sized>(
    serving: &mut crate::Serving<'_>,
    entry: Option<&S::Station>,
    stations: &S,
    frame_len: u32,
    ac: Ac,
) -> Result<Option<Charge>, crate::ChargeError> {
    match entry {
        Some(station) => serving.charge_frame(station, frame_len).map(Some),
        None => Ok(stations.multicast_airtime_us(frame_len, ac).and_then(|us| serving.charge_us(us).ok())),
    }
}

impl<Q: Txq> TxqTable for [Option<Q>] {
    type Txq = Q;
    fn txq_mut(&mut self, id: TxqId) -> Option<&mut Q> {
        self.get_mut(id.index())?.as_mut()
    }
}

impl<S: Station> StationTable for [Option<S>] {
    type Station = S;
    fn station(&self, id: StationId) -> Option<&S> {
        self.get(id.index())?.as_ref().filter(|s| s.station_id() == id)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::traits::StationErrorKind;
    use crate::{Config, Tid, Weight};
    use alloc::collections::VecDeque;
    use alloc::vec;
    use alloc::vec::Vec;

    #[derive(Debug, PartialEq)]
    struct F(u32);
    impl Frame for F {
        fn len_bytes(&self) -> u32 {
            1500
        }
    }

    #[derive(Default)]
    struct Q(VecDeque<F>);
    impl Txq for Q {
        type Frame = F;
        type Error = core::convert::Infallible;
        fn dequeue(&mut self, _: Instant) -> Result<Option<F>, Self::Error> {
            Ok(self.0.pop_front())
        }
        fn peek_len(&self) -> Option<u32> {
            self.0.front().map(|f| f.len_bytes())
        }
    }

    struct Sta(StationId);
    impl Station for Sta {
        type Error = StationErrorKind;
        fn station_id(&self) -> StationId {
            self.0
        }
        fn last_tx_rate(&self) -> Option<airtime_est::Rate> {
            None
        }
        fn expected_airtime_us(&self, _: u32, _: Ac) -> Result<u32, StationErrorKind> {
            Ok(100)
        }
    }

    /// A ring of `room` slots that refuses the push numbered `refuse_at` with OOM.
    struct ToyRing {
        room: usize,
        refuse_at: Option<u32>,
        pushes: u32,
        held: Vec<(F, Option<Charge>)>,
    }
    impl Ring for ToyRing {
        type Frame = F;
        type Error = RingErrorKind;
        fn has_room(&self, _: Ac) -> bool {
            self.held.len() < self.room
        }
        fn push(&mut self, frame: F, charge: Option<Charge>) -> Result<(), PushError<F, RingErrorKind>> {
            self.pushes += 1;
            if self.refuse_at == Some(self.pushes) {
                return Err(PushError { frame, charge, error: RingErrorKind::OutOfMemory });
            }
            self.held.push((frame, charge));
            Ok(())
        }
    }

    fn setup(frames: u32) -> (Scheduler, Vec<Option<Q>>, Vec<Option<Sta>>, TxqId) {
        // Under Miri a table the size of the vectors below: the interpreter's cost grows
        // with the slots.
        let mut config = Config::default();
        if cfg!(miri) {
            (config.max_stations, config.max_txqs) = (4, 4);
        }
        let sched = Scheduler::new(config).unwrap();
        let sta = sched.add_station(Weight::DEFAULT).unwrap();
        let id = sched.add_txq(Some(sta), Tid::BE).unwrap();
        let mut txqs: Vec<Option<Q>> = (0..4).map(|_| None).collect();
        txqs[id.index()] = Some(Q((0..frames).map(F).collect()));
        let mut stas: Vec<Option<Sta>> = (0..4).map(|_| None).collect();
        stas[sta.index()] = Some(Sta(sta));
        sched.wake_txq(id, Instant::ZERO).unwrap();
        (sched, txqs, stas, id)
    }

    #[test]
    fn a_full_ring_ends_the_round_without_dequeuing_and_the_txq_resumes_later() {
        let (mut sched, mut txqs, stas, id) = setup(10);
        let mut ring = ToyRing { room: 4, refuse_at: None, pushes: 0, held: vec![] };
        let r = run_round(&sched, Ac::Be, Instant::ZERO, &mut txqs[..], &stas[..], &mut ring);
        assert_eq!((r.frames, r.end), (4, RoundEnd::RingFull));
        assert_eq!(txqs[id.index()].as_ref().unwrap().0.len(), 6, "nothing dequeued past the shortage");
        assert_eq!(sched.ac_pending_us(Ac::Be), 400);
        // Completion frees the ring; the next round serves the rest.
        for (_, c) in ring.held.drain(..) {
            sched.release(c.unwrap()).unwrap();
        }
        ring.room = 100;
        let r = run_round(&sched, Ac::Be, Instant::ZERO, &mut txqs[..], &stas[..], &mut ring);
        assert_eq!((r.frames, r.end), (6, RoundEnd::Exhausted));
        for (_, c) in ring.held.drain(..) {
            sched.release(c.unwrap()).unwrap();
        }
        sched.check_invariants().unwrap();
        assert_eq!(sched.total_pending_us(), 0);
    }

    #[test]
    fn a_refused_frame_comes_back_with_its_charge() {
        let (mut sched, mut txqs, stas, id) = setup(5);
        let mut ring = ToyRing { room: 100, refuse_at: Some(3), pushes: 0, held: vec![] };
        let r = run_round(&sched, Ac::Be, Instant::ZERO, &mut txqs[..], &stas[..], &mut ring);
        assert_eq!(r.frames, 2);
        assert_eq!(r.end, RoundEnd::Refused(RingErrorKind::OutOfMemory));
        let refused = r.refused.expect("the refused frame is handed back");
        assert_eq!((refused.frame, refused.txq), (F(2), id));
        assert_eq!(sched.ac_pending_us(Ac::Be), 300, "the refused frame's charge is still pending");
        sched.release(refused.charge.unwrap()).unwrap();
        for (_, c) in ring.held.drain(..) {
            sched.release(c.unwrap()).unwrap();
        }
        assert_eq!(sched.total_pending_us(), 0);
        sched.check_invariants().unwrap();
        // The txq kept its remaining frames and stays scheduled.
        assert_eq!(txqs[id.index()].as_ref().unwrap().0.len(), 2);
        let r = run_round(&sched, Ac::Be, Instant::ZERO, &mut txqs[..], &stas[..], &mut ring);
        assert_eq!(r.frames, 2);
    }
}
