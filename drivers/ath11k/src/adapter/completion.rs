//! The tx completion handler: every status releases the charge (patch 1), a pass
//! starts rounds only for the ACs it reaped (patch 6), and stops at the NAPI budget
//! (patch 9).

use super::{AcSet, Ath11k};
use crate::hal::{FrameOf, Hal, TxCompletion};
use airtime_sched::traits::Frame;
use airtime_sched::{Ac, Instant, Txq};

/// What one completion pass did (a NAPI poll's result and more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompletionPass {
    /// Completion descriptors processed: never more than the budget. A NAPI poll
    /// returns this; equal to the budget means "poll me again".
    pub work_done: u32,
    /// The ACs of the frames reaped.
    pub reaped: AcSet,
    /// The ACs a round was started on after reaping.
    pub rounds: AcSet,
    /// Frames those rounds pushed.
    pub frames_pushed: u32,
}

impl CompletionPass {
    /// Whether the pass stopped at its budget (more completions may be waiting).
    pub fn budget_exhausted(&self, budget: u32) -> bool {
        self.work_done >= budget
    }
}

impl<H, T> Ath11k<H, T>
where
    H: Hal,
    T: Txq<Frame = FrameOf<H>>,
    FrameOf<H>: Frame,
{
    /// The tx completion NAPI poll: processes at most `budget` completion descriptors
    /// (patch 9; the rest wait for the next call), releases each frame's charge
    /// whatever its status (patch 1) and hands the frame to the [`StatusSink`](crate::hal::StatusSink),
    /// then starts one round from `cpu` for each AC it reaped (patch 6) — so a round
    /// runs once per budget of completions.
    pub fn poll_tx_completions(&mut self, budget: u32, cpu: u32, now: Instant) -> CompletionPass {
        let mut pass = CompletionPass { work_done: 0, reaped: AcSet::EMPTY, rounds: AcSet::EMPTY, frames_pushed: 0 };
        while pass.work_done < budget {
            let Some(c) = self.hal.reap_tx_completion() else { break };
            pass.work_done += 1;
            if let Some(ac) = self.complete_msdu(c) {
                pass.reaped.insert(ac);
            }
        }
        self.finish_pass(&mut pass, cpu, now);
        pass
    }

    /// The same pass over completion descriptors the caller read itself (the C API's
    /// array): processes at most `budget` of `completions`, in order, then starts
    /// the rounds. `work_done` says how many were taken; the caller keeps the rest
    /// for its next call.
    pub fn complete_tx_batch(
        &mut self,
        completions: &[TxCompletion],
        budget: u32,
        cpu: u32,
        now: Instant,
    ) -> CompletionPass {
        let mut pass = CompletionPass { work_done: 0, reaped: AcSet::EMPTY, rounds: AcSet::EMPTY, frames_pushed: 0 };
        for c in completions.iter().take(budget as usize) {
            pass.work_done += 1;
            if let Some(ac) = self.complete_msdu(*c) {
                pass.reaped.insert(ac);
            }
        }
        self.finish_pass(&mut pass, cpu, now);
        pass
    }

    /// Starts the rounds of a pass: the reaped ACs (patch 6), and the blocked ones if
    /// configured.
    fn finish_pass(&mut self, pass: &mut CompletionPass, cpu: u32, now: Instant) {
        if self.config.rounds_on_completion && !pass.reaped.is_empty() {
            let mut acs = pass.reaped;
            if self.config.resume_blocked_acs {
                acs = acs.union(self.blocked);
            }
            for ac in acs.iter() {
                let r = self.run_round(ac, cpu, now);
                pass.rounds.insert(ac);
                pass.frames_pushed = pass.frames_pushed.saturating_add(r.frames);
            }
        }
    }

    /// Processes one completion descriptor: takes the MSDU out of its ring's table,
    /// releases its charge, counts the status and hands the frame back. Returns the
    /// frame's AC, or `None` for an id with no outstanding entry (counted, ignored).
    /// The building block of [`poll_tx_completions`](Self::poll_tx_completions) for a
    /// caller that reads the completion ring itself.
    pub fn complete_msdu(&mut self, c: TxCompletion) -> Option<Ac> {
        let Some(msdu) = self.hal.msdu_take(c.ring, c.msdu_id) else {
            self.counters.unknown_msdu = self.counters.unknown_msdu.saturating_add(1);
            return None;
        };
        let (frame, charge, ac) = msdu.into_parts();
        if let Some(charge) = charge
            && self.sched.release(charge).is_err()
        {
            self.counters.release_errors = self.counters.release_errors.saturating_add(1);
        }
        if let Some(n) = self.counters.completions.get_mut(c.status.index()) {
            *n = n.saturating_add(1);
        }
        self.hal.tx_status(frame, c.status);
        Some(ac)
    }
}
