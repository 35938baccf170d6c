//! The tx completion handler: every status releases the charge (patch 1), a pass
//! starts rounds only for the ACs it reaped (patch 6), and stops at the NAPI budget
//! (patch 9). A pass releases its charges together ([`Scheduler::release_batch`]),
//! so the station and AC counters the transmit path also writes are written once per
//! station per pass, not once per frame.
//!
//! [`Scheduler::release_batch`]: airtime_sched::Scheduler::release_batch

use super::{AcSet, Ath11k};
use crate::hal::{FrameOf, Hal, TxCompletion};
use airtime_sched::traits::Frame;
use airtime_sched::{Ac, Charge, Enqueue, Instant, Txq};

/// Charges a pass holds before it releases them (raw, 4 bytes each, so the buffer
/// stays small on a kernel stack).
const PASS_CHARGES: usize = 32;

/// The charges of a completion pass not yet released.
struct PassCharges {
    raw: [u32; PASS_CHARGES],
    len: usize,
}

impl PassCharges {
    const fn new() -> Self {
        PassCharges { raw: [0; PASS_CHARGES], len: 0 }
    }

    /// Holds `charge`; gives it back when the pass is full.
    fn push(&mut self, charge: u32) -> Result<(), u32> {
        let free = self.raw.get_mut(self.len).ok_or(charge)?;
        *free = charge;
        // Below PASS_CHARGES (a slot was free): no wrap.
        self.len = self.len.wrapping_add(1);
        Ok(())
    }

    /// The charges held.
    fn held(&self) -> &[u32] {
        // `len` never passes the buffer's length (`push`).
        self.raw.get(..self.len).unwrap_or(&self.raw)
    }
}

/// What one completion pass did (a NAPI poll's result and more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompletionPass {
    /// Completion descriptors processed: never more than the budget. A NAPI poll
    /// returns this; equal to the budget means "poll me again".
    pub work_done: u32,
    /// The ACs of the frames reaped.
    pub reaped: AcSet,
    /// The ACs a round was asked for after reaping (with [`Rounds::Gated`], run by this
    /// pass or by the context running that AC's rounds).
    ///
    /// [`Rounds::Gated`]: crate::Rounds::Gated
    pub rounds: AcSet,
    /// Frames the rounds this pass ran pushed.
    pub frames_pushed: u32,
    /// The ACs whose rounds this pass left deferred ([`RoundOutcome::deferred`]: gated,
    /// it spent its budget of rounds while other contexts asked for more; either way,
    /// follow-up rounds out of their bound). A NAPI poll stays scheduled (returns its
    /// budget) while this is not empty: its next call runs a round on every AC whose
    /// requests wait ([`Ath11k::rounds_waiting`]), reaped or not.
    ///
    /// [`RoundOutcome::deferred`]: crate::RoundOutcome::deferred
    pub deferred: AcSet,
}

impl CompletionPass {
    /// A pass that has done nothing yet.
    const fn empty() -> CompletionPass {
        CompletionPass {
            work_done: 0,
            reaped: AcSet::EMPTY,
            rounds: AcSet::EMPTY,
            frames_pushed: 0,
            deferred: AcSet::EMPTY,
        }
    }

    /// Whether the pass stopped at its budget (more completions may be waiting).
    pub fn budget_exhausted(&self, budget: u32) -> bool {
        self.work_done >= budget
    }
}

impl<H, T> Ath11k<H, T>
where
    H: Hal,
    T: Txq<Frame = FrameOf<H>> + Enqueue,
    FrameOf<H>: Frame,
{
    /// The tx completion NAPI poll: processes at most `budget` completion descriptors
    /// (patch 9; the rest wait for the next call), releases each frame's charge
    /// whatever its status (patch 1) and hands the frame to the [`StatusSink`](crate::hal::StatusSink),
    /// then starts one round from `cpu` for each AC it reaped (patch 6) — so a round
    /// runs once per budget of completions.
    ///
    /// Completion context (the tx completion NAPI poll, softirq); one call at a time
    /// per completion ring, while the wake context runs its rounds on other CPUs.
    pub fn poll_tx_completions(&self, budget: u32, cpu: u32, now: Instant) -> CompletionPass {
        // `take` stops asking once the budget is spent, so no descriptor is reaped and lost.
        self.complete_tx_iter(core::iter::from_fn(|| self.hal.reap_tx_completion()), budget, cpu, now)
    }

    /// The same pass over completion descriptors the caller read itself (the C API's
    /// array): processes at most `budget` of `completions`, in order, then starts
    /// the rounds. `work_done` says how many were taken; the caller keeps the rest
    /// for its next call.
    ///
    /// It keeps nothing of the pass in the radio, so passes over different
    /// completion rings (ath11k has one WBM ring per NAPI, each carrying every
    /// radio's frames) may run at once on one radio.
    pub fn complete_tx_batch(
        &self,
        completions: &[TxCompletion],
        budget: u32,
        cpu: u32,
        now: Instant,
    ) -> CompletionPass {
        self.complete_tx_iter(completions.iter().copied(), budget, cpu, now)
    }

    /// [`complete_tx_batch`](Self::complete_tx_batch) over descriptors as an iterator
    /// yields them (read in place from the caller's array, with no copy).
    pub fn complete_tx_iter(
        &self,
        completions: impl IntoIterator<Item = TxCompletion>,
        budget: u32,
        cpu: u32,
        now: Instant,
    ) -> CompletionPass {
        self.complete_tx_iter_with(completions, budget, cpu, now, |frame, c| self.hal.tx_completed(frame, c))
    }

    /// [`complete_tx_iter`](Self::complete_tx_iter), handing each frame a completion
    /// finished to `status` instead of the HAL's
    /// [`tx_completed`](crate::hal::StatusSink::tx_completed), with its completion: for
    /// a caller whose status path needs this pass's own data (the C API's
    /// `tx_status_at` gets the pointer its caller passed with the array, and the
    /// entry's index as the completion's tag). Called once per frame, in the
    /// completions' order, before the frame's charge is released with the pass's
    /// others; not for an id with no outstanding entry.
    pub fn complete_tx_iter_with(
        &self,
        completions: impl IntoIterator<Item = TxCompletion>,
        budget: u32,
        cpu: u32,
        now: Instant,
        mut status: impl FnMut(FrameOf<H>, &TxCompletion),
    ) -> CompletionPass {
        let mut pass = CompletionPass::empty();
        let mut charges = PassCharges::new();
        for c in completions.into_iter().take(budget as usize) {
            pass.work_done = pass.work_done.saturating_add(1);
            if let Some(ac) = self.complete_msdu_in_pass(c, &mut charges, &mut status) {
                pass.reaped.insert(ac);
            }
        }
        self.release_pass_charges(&mut charges);
        self.finish_pass(&mut pass, cpu, now);
        pass
    }

    /// Starts the rounds of a pass: the reaped ACs (patch 6), the blocked ones if
    /// configured, and, gated, those whose requests wait for a runner (so that a poll
    /// kept scheduled for them serves them even if it reaps nothing).
    fn finish_pass(&self, pass: &mut CompletionPass, cpu: u32, now: Instant) {
        // The reaps above freed the rings; a round that read a ring full marks its AC
        // blocked and then reads the ring again. SeqCst fences on both sides (here
        // between the reaps and the read of `blocked`, there between the insert and
        // the re-read, `one_round`): one of the two reads sees the other side's write,
        // so either this pass resumes the AC or that round runs again. Without it, a
        // pass that reaped only another AC's frames could read `blocked` before the
        // insert while that round read the ring full before the reaps: nothing in
        // flight, nobody runs the AC's round.
        core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
        let waiting = self.rounds_waiting();
        if self.config.rounds_on_completion && !(pass.reaped.is_empty() && waiting.is_empty()) {
            let mut acs = pass.reaped.union(waiting);
            if self.config.resume_blocked_acs && !pass.reaped.is_empty() {
                // Taken, not read: the pass resumes them, and a round here that finds
                // the ring full again marks its AC again. Rounds never clear it, so
                // none erases another's mark made just before.
                acs = acs.union(self.blocked.take_all());
            }
            let run = self.run_rounds(acs, cpu, now);
            pass.rounds = acs;
            pass.frames_pushed = run.frames;
            pass.deferred = run.deferred;
        }
    }

    /// Processes one completion descriptor: takes the MSDU out of its ring's table,
    /// releases its charge, counts the status and hands the frame back. Returns the
    /// frame's AC, or `None` for an id with no outstanding entry (counted, ignored).
    /// The building block of [`poll_tx_completions`](Self::poll_tx_completions) for a
    /// caller that reads the completion ring itself. It does none of what the pass does
    /// after its completions (the SeqCst fence against a round that read the ring full,
    /// the blocked ACs' resume, the waiting rounds): a caller that uses it runs rounds on
    /// every blocked AC afterwards, not only on those it completed frames of, or a round
    /// that read the ring full just before these completions freed it is left with no
    /// one to run it again.
    ///
    /// An MSDU id is the hardware's, reused once freed (ath11k's `idr_alloc` takes the
    /// lowest free id): a duplicated completion that arrives after its id was reused
    /// completes the newer frame, as in ath11k. The HAL must not report one twice.
    pub fn complete_msdu(&self, c: TxCompletion) -> Option<Ac> {
        let mut charges = PassCharges::new();
        let ac = self.complete_msdu_in_pass(c, &mut charges, &mut |frame, c| self.hal.tx_completed(frame, c));
        self.release_pass_charges(&mut charges);
        ac
    }

    /// [`complete_msdu`](Self::complete_msdu) within a pass: the charge joins the
    /// pass's, released when the buffer is full or the pass ends. The frame is handed
    /// back at once, to `status`: its charge token, not the frame, is what the release
    /// needs.
    fn complete_msdu_in_pass(
        &self,
        c: TxCompletion,
        charges: &mut PassCharges,
        status: &mut impl FnMut(FrameOf<H>, &TxCompletion),
    ) -> Option<Ac> {
        let Some(msdu) = self.hal.msdu_take(c.ring, c.msdu_id) else {
            self.counters.unknown_msdu.bump();
            return None;
        };
        let (frame, charge, ac) = msdu.into_parts();
        if let Some(charge) = charge.map(Charge::into_raw) {
            if let Err(charge) = charges.push(charge) {
                // The pass is full: its charges go back, and this one starts the next.
                self.release_pass_charges(charges);
                if let Err(charge) = charges.push(charge) {
                    // Unreachable (just emptied); released alone rather than lost.
                    self.release_raw(&[charge]);
                }
            }
        }
        self.counters.completed(c.status);
        status(frame, &c);
        Some(ac)
    }

    /// Releases the pass's charges held so far; a token the scheduler refuses or a
    /// release that clamps counts as a release error, as a single release would.
    fn release_pass_charges(&self, charges: &mut PassCharges) {
        self.release_raw(charges.held());
        charges.len = 0;
    }

    /// Releases charge tokens in one batch, counting what the scheduler refuses.
    fn release_raw(&self, held: &[u32]) {
        let done = self.txqs.scheduler().release_batch(held.iter().filter_map(|&raw| Charge::from_raw(raw)));
        // Every held token was made by `Charge::into_raw` from a charge (units >= 1), so
        // `from_raw` drops none; the batch counts each charge once (released,
        // unknown_station or other_radio), so `refused` is other_radio, never below 0.
        // Saturating: a miscount there is no panic.
        let refused = (held.len() as u64)
            .saturating_sub(u64::from(done.released))
            .saturating_sub(u64::from(done.unknown_station));
        let errors = u64::from(done.unknown_station).saturating_add(u64::from(done.underflows)).saturating_add(refused);
        self.counters.release_errors.add(errors);
    }
}
