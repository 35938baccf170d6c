//! The data path's counters as atomics: the wake context, the completion context and
//! control operations count at once, without a lock. [`DpStats`] is their snapshot.

use crate::hal::{DP_TCL_NUM_RING_MAX, RingId, TxStatus};
use crate::stats::{CalibrationStats, DpStats};
use core::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};

use super::AcSet;
use airtime_sched::Ac;

/// One event counter. Relaxed: counters order nothing; a snapshot taken while both
/// contexts run is a moment's approximation, one taken at rest is exact.
#[derive(Debug, Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    #[inline]
    pub(crate) fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    #[inline]
    pub(crate) fn bump(&self) {
        self.add(1);
    }

    #[inline]
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// A counter per TCL ring.
#[derive(Debug, Default)]
pub(crate) struct PerRing([Counter; DP_TCL_NUM_RING_MAX]);

impl PerRing {
    pub(crate) fn bump(&self, ring: RingId) {
        if let Some(c) = self.0.get(ring.index()) {
            c.bump();
        }
    }

    fn get(&self) -> [u64; DP_TCL_NUM_RING_MAX] {
        [self.0[0].get(), self.0[1].get(), self.0[2].get()]
    }
}

/// What [`DpStats`] reports, counted as it happens.
#[derive(Debug, Default)]
pub(crate) struct DpCounters {
    pub(crate) enqueued: PerRing,
    pub(crate) ring_full: PerRing,
    pub(crate) msdu_table_full: PerRing,
    pub(crate) out_of_memory: PerRing,
    pub(crate) other_failures: PerRing,
    pub(crate) completions: [Counter; TxStatus::COUNT],
    pub(crate) unknown_msdu: Counter,
    pub(crate) release_errors: Counter,
    pub(crate) uncharged: Counter,
    pub(crate) held_for_retry: Counter,
    pub(crate) flushed: Counter,
    pub(crate) msdu_table_errors: Counter,
    pub(crate) unknown_peer_reports: Counter,
    pub(crate) rounds_handed_off: Counter,
    pub(crate) rounds_deferred: Counter,
    pub(crate) calibration: CalibrationCounters,
}

/// What [`CalibrationStats`] reports, counted as it happens.
#[derive(Debug, Default)]
pub(crate) struct CalibrationCounters {
    pub(crate) accepted: Counter,
    pub(crate) rejected: Counter,
    pub(crate) busy: Counter,
    pub(crate) stale: Counter,
    pub(crate) mu_users: Counter,
    pub(crate) no_rate: Counter,
    pub(crate) no_tid: Counter,
}

impl CalibrationCounters {
    pub(crate) fn snapshot(&self) -> CalibrationStats {
        CalibrationStats {
            accepted: self.accepted.get(),
            rejected: self.rejected.get(),
            busy: self.busy.get(),
            stale: self.stale.get(),
            mu_users: self.mu_users.get(),
            no_rate: self.no_rate.get(),
            no_tid: self.no_tid.get(),
        }
    }
}

impl DpCounters {
    pub(crate) fn completed(&self, status: TxStatus) {
        if let Some(c) = self.completions.get(status.index()) {
            c.bump();
        }
    }

    /// The counters now (pending MSDUs and held frames are the caller's to fill in).
    pub(crate) fn snapshot(&self) -> DpStats {
        let mut completions = [0u64; TxStatus::COUNT];
        for (out, c) in completions.iter_mut().zip(&self.completions) {
            *out = c.get();
        }
        DpStats {
            enqueued: self.enqueued.get(),
            ring_full: self.ring_full.get(),
            msdu_table_full: self.msdu_table_full.get(),
            out_of_memory: self.out_of_memory.get(),
            other_failures: self.other_failures.get(),
            completions,
            unknown_msdu: self.unknown_msdu.get(),
            release_errors: self.release_errors.get(),
            uncharged: self.uncharged.get(),
            held_for_retry: self.held_for_retry.get(),
            flushed: self.flushed.get(),
            msdu_table_errors: self.msdu_table_errors.get(),
            unknown_peer_reports: self.unknown_peer_reports.get(),
            rounds_handed_off: self.rounds_handed_off.get(),
            rounds_deferred: self.rounds_deferred.get(),
            ..DpStats::default()
        }
    }
}

/// An [`AcSet`] in one atomic byte, set and cleared by any context: the ACs a round
/// found the ring full for (cleared by the completion pass that resumes them), the ACs
/// whose follow-up rounds are asked for.
#[derive(Debug, Default)]
pub(crate) struct AtomicAcSet(AtomicU8);

impl AtomicAcSet {
    pub(crate) fn insert(&self, ac: Ac) {
        self.0.fetch_or(1 << ac.index(), Ordering::AcqRel);
    }

    /// Removes `ac`; whether it was in the set.
    pub(crate) fn take(&self, ac: Ac) -> bool {
        let bit = 1 << ac.index();
        // A load first: most calls find it clear, and need no write to the shared line.
        self.0.load(Ordering::Acquire) & bit != 0 && self.0.fetch_and(!bit, Ordering::AcqRel) & bit != 0
    }

    /// Empties the set; what it held.
    pub(crate) fn take_all(&self) -> AcSet {
        let bits = self.0.swap(0, Ordering::AcqRel);
        Ac::ALL.into_iter().filter(|ac| bits & (1 << ac.index()) != 0).collect()
    }

    pub(crate) fn contains(&self, ac: Ac) -> bool {
        self.0.load(Ordering::Acquire) & (1 << ac.index()) != 0
    }

    pub(crate) fn load(&self) -> AcSet {
        let bits = self.0.load(Ordering::Acquire);
        Ac::ALL.into_iter().filter(|ac| bits & (1 << ac.index()) != 0).collect()
    }
}

/// Frames waiting in retry slots, per AC (a gauge: up when a ring refuses a frame that
/// its txq then keeps, down when the frame goes out or comes back with its txq).
#[derive(Debug, Default)]
pub(crate) struct HeldGauge([AtomicU32; Ac::COUNT]);

impl HeldGauge {
    pub(crate) fn up(&self, ac: Ac) {
        if let Some(g) = self.0.get(ac.index()) {
            g.fetch_add(1, Ordering::AcqRel);
        }
    }

    pub(crate) fn down(&self, ac: Ac) {
        if let Some(g) = self.0.get(ac.index()) {
            // Never below zero, even if a caller miscounted.
            let mut v = g.load(Ordering::Acquire);
            while let Some(less) = v.checked_sub(1) {
                match g.compare_exchange_weak(v, less, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => break,
                    Err(seen) => v = seen,
                }
            }
        }
    }

    pub(crate) fn of(&self, ac: Ac) -> u32 {
        self.0.get(ac.index()).map_or(0, |g| g.load(Ordering::Acquire))
    }

    pub(crate) fn total(&self) -> u32 {
        Ac::ALL.iter().fold(0u32, |n, ac| n.saturating_add(self.of(*ac)))
    }
}
