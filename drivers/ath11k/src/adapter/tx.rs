//! The transmit side: enqueue from any context, and the driver-owned scheduling round
//! (patch 5), ended when the ring has no room (patch 8, with the room checked before
//! dequeue). A frame the ring refuses after dequeue stays in its txq's retry slot (the
//! core's table keeps one per txq), its charge given back while it waits, and goes first
//! at the txq's next turn, charged again then.

use super::ring::TclRingView;
use super::{AcSet, Ath11k, Ath11kError, Rounds};
use crate::hal::{FrameOf, Hal, RingId, TxStatus};
use airtime_sched::driver_loop::RoundEnd;
use airtime_sched::traits::Frame;
use airtime_sched::txqs::EnqueueError;
use airtime_sched::{Ac, Enqueue, GateOutcome, Instant, Txq, TxqId};

/// What rounds over a set of ACs did ([`Ath11k::run_rounds`], [`Ath11k::run_waiting_rounds`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RoundsRun {
    /// Frames pushed into the rings.
    pub frames: u32,
    /// The ACs whose rounds were deferred ([`RoundOutcome::deferred`]): gated, their
    /// budget spent with requests pending; either way, follow-up rounds out of bound.
    pub deferred: AcSet,
}

/// What one call for a driver round did: the round, or with
/// [`Rounds::Gated`](super::Rounds::Gated) the rounds this context ran (none if it
/// handed its request to the context running the AC's rounds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RoundOutcome {
    /// The AC served.
    pub ac: Ac,
    /// Rounds run by this call: 1 with [`Rounds::Concurrent`](super::Rounds::Concurrent),
    /// more when a round read the ring full and it had room again once the AC was
    /// marked blocked (a completion freed it meanwhile; at most 2 more);
    /// gated, 0 when another context was running the AC's rounds (it serves this
    /// request), else 1 and one more each time a round ended with requests made during
    /// it (a burst of requests costs one round), at most the budget. Rounds run for
    /// others use this call's `cpu` and `now`.
    pub rounds: u32,
    /// Frames pushed into the rings by those rounds (kept frames sent again included).
    pub frames: u32,
    /// Txqs the scheduler handed out in those rounds.
    pub txqs_served: u32,
    /// Why the last of those rounds ended (`None` if none ran).
    pub end: Option<RoundEnd>,
    /// Whether a frame the ring refused waits in a retry slot of a txq on this AC
    /// after the call (its own or an earlier round's).
    pub holding: bool,
    /// Gated: this call spent its budget of rounds while other contexts still asked for
    /// more. Their requests wait until a context asks for a round on this AC again:
    /// ask again later (see [`Rounds::Gated`](super::Rounds::Gated)). Either way: a
    /// round must follow that nobody runs yet (the follow-up rounds for another
    /// context's overlapping round, or for a ring freed after it was read full, ran
    /// out of their bound; [`Ath11k::rounds_waiting`] names the AC until a round runs).
    pub deferred: bool,
}

/// Rounds [`Ath11k::run_round`] runs at most after its own because the ring had room
/// again once the AC was marked blocked (a completion freed it meanwhile).
const RING_RECHECKS: u32 = 2;

impl<H, T> Ath11k<H, T>
where
    H: Hal,
    T: Txq<Frame = FrameOf<H>> + Enqueue,
    FrameOf<H>: Frame,
{
    /// Queues `frame` for txq `id` from any context, without waiting on a lock
    /// (straight into the txq's queue when no other context holds it, else into its
    /// lock-free intake, from which it reaches the queue at the txq's next turn), and
    /// marks the txq backlogged. Call [`wake_tx_queue`](Self::wake_tx_queue) after it
    /// (mac80211's order: the frame is in the txq before the wake).
    ///
    /// On refusal every frame comes back in the error (the txq is unknown, no memory
    /// for the intake node, or the txq was removed during the call: then the frames
    /// other late enqueues left in its intake come back too). Nothing is dropped.
    pub fn enqueue(&self, id: TxqId, frame: FrameOf<H>, now: Instant) -> Result<(), EnqueueError<FrameOf<H>>> {
        self.txqs.enqueue(id, frame, now)
    }

    /// mac80211's `wake_tx_queue` (patch 5): marks the txq backlogged and runs the
    /// driver's round on its AC, pushing into the ring of `cpu` (`cpu % 3`). Call it
    /// after [`enqueue`](Self::enqueue). Wake context (process or softirq); may run
    /// while the completion context runs a round on the same AC.
    pub fn wake_tx_queue(&self, txq: TxqId, cpu: u32, now: Instant) -> Result<RoundOutcome, Ath11kError> {
        let (_, tid) = self.txqs.scheduler().txq_info(txq)?;
        self.txqs.scheduler().wake_txq(txq, now)?;
        Ok(self.run_round(tid.ac(), cpu, now))
    }

    /// One driver round on `ac` from `cpu` through the core's
    /// [`TxqTable::run_round`](airtime_sched::TxqTable::run_round): for each txq the
    /// scheduler hands out, its kept frame first, then its queue, while the ring has
    /// room (checked before each dequeue, patch 8), the station's AQL budget allows and
    /// the turn budget ([`Config::turn_budget`](super::Config::turn_budget)) lasts. A
    /// frame the ring refuses after dequeue stays in its txq's retry slot, uncharged
    /// until it is sent. Any context. With [`Rounds::Concurrent`] two may run rounds on
    /// one AC at once; with [`Rounds::Gated`] a call that finds another context running
    /// the AC's rounds hands its request to it and returns with no round run.
    pub fn run_round(&self, ac: Ac, cpu: u32, now: Instant) -> RoundOutcome {
        let mut out =
            RoundOutcome { ac, rounds: 0, frames: 0, txqs_served: 0, end: None, holding: false, deferred: false };
        // A round asked for by an earlier call that could not run it (`one_round`'s
        // bounds): this one is it. Cleared before the round starts, so the round
        // happens after whatever the context that set it did before (its returns).
        self.rerun.take(ac);
        match self.config.rounds {
            Rounds::Concurrent => self.one_round(ac, cpu, now, &mut out),
            Rounds::Gated { max_rounds } => {
                // A runner's round that unwinds (a HAL callback's panic in a std build)
                // opens the gate on its way out (`RoundGate::run`).
                match self.gate.run(ac, max_rounds.get(), || self.one_round(ac, cpu, now, &mut out)) {
                    GateOutcome::Ran { .. } => {}
                    GateOutcome::HandedOff => self.counters.rounds_handed_off.bump(),
                    GateOutcome::Deferred { .. } => {
                        self.counters.rounds_deferred.bump();
                        out.deferred = true;
                    }
                }
            }
        }
        out.holding = self.held.of(ac) > 0;
        if self.rerun.contains(ac) {
            out.deferred = true;
        }
        out
    }

    /// ACs on which requests for rounds wait with no context running them: gated
    /// ([`Rounds::Gated`]), the last runner spent its budget and nobody has asked for a
    /// round there since. Poll it (from a timer, or at the end of a completion pass)
    /// when the callers of [`run_round`](Self::run_round) cannot act on
    /// [`RoundOutcome::deferred`] themselves, and run [`run_waiting_rounds`](Self::run_waiting_rounds).
    /// With either [`Rounds`], also the ACs on which a round ran out of its bounded
    /// follow-up rounds (another context's rounds kept starting while it had entries
    /// off the AC's list, [`RoundReport::overlapped`], or the ring kept being freed
    /// after it read it full): a round there may have missed a txq, and none may
    /// follow unless asked for.
    ///
    /// [`RoundReport::overlapped`]: airtime_sched::driver_loop::RoundReport::overlapped
    pub fn rounds_waiting(&self) -> AcSet {
        let rerun = self.rerun.load();
        if self.config.rounds == Rounds::Concurrent {
            return rerun;
        }
        Ac::ALL.into_iter().filter(|&ac| self.gate.is_waiting(ac)).collect::<AcSet>().union(rerun)
    }

    /// Runs a round (through the gate) on each AC of [`rounds_waiting`](Self::rounds_waiting),
    /// from `cpu`. The first round each call runs serves the requests that waited; the
    /// ACs whose rounds are deferred again are still waiting after it.
    pub fn run_waiting_rounds(&self, cpu: u32, now: Instant) -> RoundsRun {
        self.run_rounds(self.rounds_waiting(), cpu, now)
    }

    /// One round on `ac`, added to `out`, and the rounds that must follow it: one more
    /// (at most [`RING_RECHECKS`] more) each time the round ends on a ring it found full
    /// (read full, or refusing a push as full) that has room again once the AC is marked
    /// blocked (see below). The core's
    /// own follow-up rounds (another context's round overlapped a txq it held) run
    /// inside its `run_round`.
    fn one_round(&self, ac: Ac, cpu: u32, now: Instant, out: &mut RoundOutcome) {
        let mut rechecks = RING_RECHECKS;
        loop {
            let (end, room) = self.round_once(ac, cpu, now, out);
            match end {
                // Read full, or full at the push: another context's push took the last
                // descriptor or MSDU id between this round's check and its push. Either
                // way the ring is full, and a pass that frees it may miss the mark.
                RoundEnd::RingFull | RoundEnd::Refused(airtime_sched::RingErrorKind::Full) => {}
                // A ring that refused a push for another reason (no memory, a fault)
                // would read as having room again: re-reading it would only retry into
                // the fault. The next completion pass retries the AC; with nothing in
                // flight, the driver's timer does (`run_rounds`).
                RoundEnd::Refused(_) => {
                    self.blocked.insert(ac);
                    return;
                }
                _ => return,
            }
            // The round found the ring full. A completion pass that
            // freed the ring after that read, and reaped no frame of this AC, resumes
            // the AC only if it sees it in `blocked`; it may read `blocked` before the
            // insert below. So, Dekker's pattern with the pass (`finish_pass`):
            //   here:  insert into `blocked`; fence(SeqCst); read the ring's room
            //   pass:  reap (free the ring);  fence(SeqCst); read `blocked`
            // The two fences are ordered in SeqCst's single total order: whichever
            // comes second, its read sees the other side's write. If this read misses
            // the reap (the ring still reads full), the pass's read sees the insert
            // and it runs a round on the AC; if the pass's read misses the insert,
            // this read sees the room it freed, and one more round runs here. Both
            // may: a round more, nothing lost.
            self.blocked.insert(ac);
            core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
            if !room() {
                return;
            }
            if rechecks == 0 {
                // Bounded: the ring keeps being freed and filled. Ask for a round.
                self.ask_rerun(ac, out);
                return;
            }
            rechecks = rechecks.saturating_sub(1);
        }
    }

    /// Records that a round on `ac` must follow, with nobody running it yet
    /// ([`rounds_waiting`](Self::rounds_waiting), [`RoundOutcome::deferred`]).
    fn ask_rerun(&self, ac: Ac, out: &mut RoundOutcome) {
        self.rerun.insert(ac);
        self.counters.rounds_deferred.bump();
        out.deferred = true;
    }

    /// The core's round on `ac` from `cpu`'s ring, added to `out`: how it ended, and a
    /// reader of the ring's room for `ac` now.
    fn round_once(&self, ac: Ac, cpu: u32, now: Instant, out: &mut RoundOutcome) -> (RoundEnd, impl Fn() -> bool + '_) {
        let mut view = TclRingView {
            hal: &self.hal,
            stations: &self.stations,
            counters: &self.counters,
            marks: &self.txq_marks,
            held: &self.held,
            ring: RingId::for_cpu_of(cpu, self.config.max_tx_ring),
            rings: self.config.max_tx_ring,
            retry: self.config.tcl_ring_retry,
            ac,
            turn_pushed: 0,
            turn_refused: false,
        };
        let report = self.txqs.run_round(ac, now, &self.stations, &mut view, self.config.turn_budget);
        self.counters.uncharged.add(u64::from(report.unpriced));
        if let Some(r) = report.refused {
            // The core hands a refused frame back only if its txq's retry slot was
            // taken, which its loop rules out. Should it happen, the frame is not kept:
            // undo the retry bookkeeping, give its charge back and hand it back to the
            // stack, counted.
            self.held.down(ac);
            if let Some(mark) = self.txq_marks.get(r.txq.index()) {
                mark.holding.store(0, core::sync::atomic::Ordering::Release);
            }
            self.finish_unsent(r.frame, r.charge, TxStatus::Removed);
        }
        // No round removes `ac` from `blocked`: a round that did not end on the ring
        // would erase another context's round's insert made just before, whose AC the
        // next completion pass must resume. Only that pass clears it (`finish_pass`).
        if report.overlapped {
            // Another context's rounds kept starting while the core's rounds had
            // entries off the AC's list, past its bound: one of those rounds may have
            // missed a txq. Ask for another.
            self.ask_rerun(ac, out);
        }
        out.rounds = out.rounds.saturating_add(1);
        out.frames = out.frames.saturating_add(report.frames);
        out.txqs_served = out.txqs_served.saturating_add(report.txqs_served);
        out.end = Some(report.end);
        (report.end, move || airtime_sched::Ring::has_room(&view, ac))
    }

    /// Runs a round on each AC of `acs` from `cpu` (mt76's and ath10k's "schedule all
    /// ACs"; also the kernel module's way to retry kept frames from a timer).
    pub fn run_rounds(&self, acs: AcSet, cpu: u32, now: Instant) -> RoundsRun {
        let mut run = RoundsRun::default();
        for ac in acs.iter() {
            let round = self.run_round(ac, cpu, now);
            run.frames = run.frames.saturating_add(round.frames);
            if round.deferred {
                run.deferred.insert(ac);
            }
        }
        run
    }
}
