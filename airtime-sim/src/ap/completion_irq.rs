//! How tx completions reach the host: ath11k's interrupt moderation of the tx
//! completion ring, or a fixed delay.
//!
//! ath11k programs each tx completion ring (`HAL_WBM2SW_RELEASE`, set up in
//! `ath11k_dp_srng_setup`) to raise its interrupt when `HAL_SRNG_INT_BATCH_THRESHOLD_TX`
//! (256) entries are waiting or `HAL_SRNG_INT_TIMER_THRESHOLD_TX` (1000 us) has passed,
//! both from `hal.h`. NAPI then reaps everything written by then. So the BlockAck of a
//! lone PPDU reaches the host a full timer period later, while completions that keep
//! arriving share one interrupt: the turnaround from a BlockAck to the host's next push
//! comes out of the traffic, not out of a constant.
//!
//! Assumption (the driver source gives the thresholds, not the hardware's timer
//! semantics): the timer starts with the first entry written after the host last
//! reaped the ring, as interrupt moderation timers usually do.

use super::hardware::TxStatus;
use crate::engine::Nanos;

/// ath11k's `HAL_SRNG_INT_BATCH_THRESHOLD_TX` (`hal.h`): entries that raise the
/// interrupt at once.
pub const SRNG_TX_BATCH_ENTRIES: usize = 256;
/// ath11k's `HAL_SRNG_INT_TIMER_THRESHOLD_TX` (`hal.h`), in us.
pub const SRNG_TX_TIMER_US: u64 = 1000;

/// How completions reach the host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompletionIrq {
    /// ath11k's moderation of the tx completion ring (batch 256, timer 1000 us).
    Srng,
    /// Each exchange's completions are reaped `tx_completion_delay_us` after it ends.
    /// The default: with the moderation on, the default suite lands fewer of the seed's
    /// figures (see `airtime-sim/docs/mechanisms.md`).
    #[default]
    Fixed,
}

/// The completion ring's entries not yet reaped, and its moderation timer.
#[derive(Debug, Default)]
pub struct ModeratedRing {
    pending: Vec<TxStatus>,
    /// The interrupt the pending entries wait for: when, and its number (an interrupt
    /// raised early by the batch threshold makes the timer's event stale).
    irq: Option<(Nanos, u64)>,
    raised: u64,
}

impl ModeratedRing {
    /// The hardware writes `statuses` at `now`. Returns an interrupt to schedule (its
    /// time and number) when these entries arm the timer or reach the batch threshold.
    pub fn write(&mut self, statuses: Vec<TxStatus>, now: Nanos) -> Option<(Nanos, u64)> {
        self.pending.extend(statuses);
        if self.pending.len() >= SRNG_TX_BATCH_ENTRIES && self.irq.is_none_or(|(at, _)| at > now) {
            return Some(self.arm(now));
        }
        if self.irq.is_none() && !self.pending.is_empty() {
            return Some(self.arm(now + SRNG_TX_TIMER_US * 1_000));
        }
        None
    }

    fn arm(&mut self, at: Nanos) -> (Nanos, u64) {
        self.raised += 1;
        self.irq = Some((at, self.raised));
        (at, self.raised)
    }

    /// Interrupt `number` fires: the host reaps every pending entry, or nothing if a
    /// later interrupt superseded this one.
    pub fn fire(&mut self, number: u64) -> Option<Vec<TxStatus>> {
        if self.irq.is_none_or(|(_, n)| n != number) {
            return None;
        }
        self.irq = None;
        Some(std::mem::take(&mut self.pending))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::FlowTag;

    fn statuses(n: usize) -> Vec<TxStatus> {
        (0..n)
            .map(|_| TxStatus {
                charge: None,
                msdu_id: None,
                ring: 0,
                station: 0,
                flow: FlowTag::Ping(0),
                ac: airtime_sched::Ac::Be,
                from_ap: true,
                len_bytes: 1500,
                mpdu_seq: 0,
            })
            .collect()
    }

    #[test]
    fn a_lone_ppdus_completions_wait_for_the_timer() {
        let mut r = ModeratedRing::default();
        let (at, n) = r.write(statuses(3), 5_000).unwrap();
        assert_eq!(at, 5_000 + 1_000_000);
        // More entries before the timer fires ride on the same interrupt.
        assert_eq!(r.write(statuses(2), 600_000), None);
        assert_eq!(r.fire(n).map(|v| v.len()), Some(5));
        assert!(r.fire(n).is_none(), "nothing is reaped twice");
    }

    #[test]
    fn the_batch_threshold_raises_the_interrupt_at_once_and_the_timer_goes_stale() {
        let mut r = ModeratedRing::default();
        let (_, timer) = r.write(statuses(200), 0).unwrap();
        let (at, batch) = r.write(statuses(60), 300_000).unwrap();
        assert_eq!(at, 300_000);
        assert_eq!(r.fire(batch).map(|v| v.len()), Some(260));
        assert!(r.fire(timer).is_none());
        // The next entry arms a fresh timer.
        assert_eq!(r.write(statuses(1), 400_000).map(|(at, _)| at), Some(1_400_000));
    }
}
