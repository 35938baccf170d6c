//! Per-station calibration of the AQL estimate against the airtime PPDU stats measure
//! (not in the series; [`Config::calibration`](crate::Config::calibration)).
//!
//! The estimate AQL charges is a model of the air (`airtime_est`); ath11k's HTT PPDU
//! stats say what a PPDU really took. The series' cover letter measured the model at
//! about 1/1.85 of the air on an IPQ8074 (47–51 us charged per MSDU against 91–93 us
//! reported), so AQL let nearly twice the airtime it meant into the hardware. Each SU
//! PPDU record gives a sample: what the adapter would have charged for the MSDUs the
//! user had acknowledged in it (their count and bytes, priced at the PPDU's rate
//! without any scale) against the PPDU's duration. A per-station
//! [`Calibrator`] averages `measured / charged`, and the station's next frames are
//! priced at the estimate times that ratio.
//!
//! # Concurrency and progress
//! The ratio the wake path reads is one atomic word, so pricing never waits. The
//! calibrator's own state needs `&mut`: it sits behind a try-flag. PPDU stats arrive
//! in one context on ath11k (the HTT message handler, softirq), so the flag is
//! normally free; a sample that finds it taken (two completion contexts at once on
//! another HAL, or a test) is counted as skipped and dropped. Every call returns after
//! a bounded number of steps (wait-free): nobody spins on the flag. A sample is a
//! statistic, not a charge: dropping one loses no airtime and leaks no pending charge.
//!
//! # Slot reuse
//! A new occupant of a station slot must not inherit its predecessor's ratio. The
//! published ratio is tagged with the generation of the station it was learned for,
//! (set when a station is published) and read as 1 by any other occupant; the
//! calibrator remembers whose samples it holds and starts over at the first sample of
//! another station. A late sample of the old occupant (a PPDU record that looked the
//! record up before the removal) finds another tag and is dropped; so is one that
//! finds the record empty (its id `NONE`, whose generation bits, 2^32 - 1, a live
//! station may share: the record checks its id, not the tag, for that case).

use airtime_est::{Calibrator, CalibratorConfig, RATIO_ONE_Q16, SampleRejected};
use airtime_sched::StationId;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The generation of a station id (bits 32..64 of its raw handle), which tells the
/// occupants of one slot apart.
fn generation(id: StationId) -> u64 {
    id.to_raw() >> 32
}

/// A ratio tagged with the generation it belongs to.
fn tagged(id: StationId, ratio_q16: u32) -> u64 {
    generation(id) << 32 | u64::from(ratio_q16)
}

/// What became of one sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sample {
    /// Averaged in.
    Accepted,
    /// Refused by the calibrator (nothing charged, or an outlier).
    Rejected(SampleRejected),
    /// Another context held the calibrator: dropped.
    Busy,
    /// The station no longer holds the slot (a late record): dropped.
    Stale,
}

/// The calibration state of one station slot.
pub(crate) struct StationCalibration {
    /// The ratio applied to the estimate, Q16, tagged with its station's generation.
    ratio: AtomicU64,
    /// Held while one context feeds the calibrator; never waited on.
    busy: AtomicBool,
    /// The raw id of the station whose samples the calibrator holds (`u64::MAX`: none),
    /// and the calibrator. Only the holder of `busy` touches it.
    state: UnsafeCell<(u64, Calibrator)>,
}

// SAFETY: `state` is reached only by the context that took `busy` (Acquire) and
// released it (Release), one at a time, as a lock would hand it over; the rest are
// atomics. The state is plain data (`Send`).
unsafe impl Sync for StationCalibration {}

// The `Sync` above hands the calibrator from one context to another: it must be `Send`.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<Calibrator>();
};

impl StationCalibration {
    pub(crate) fn new(config: CalibratorConfig) -> StationCalibration {
        StationCalibration {
            ratio: AtomicU64::new(u64::from(RATIO_ONE_Q16)),
            busy: AtomicBool::new(false),
            state: UnsafeCell::new((u64::MAX, Calibrator::new(config))),
        }
    }

    /// The ratio to apply to the estimates of station `id`, Q16: 1.0 unless samples of
    /// this very station set it.
    pub(crate) fn ratio_q16(&self, id: StationId) -> u32 {
        let w = self.ratio.load(Ordering::Relaxed);
        if w >> 32 == generation(id) { (w & 0xffff_ffff) as u32 } else { RATIO_ONE_Q16 }
    }

    /// Station `id` takes the slot: its ratio starts at 1.0 (the calibrator itself
    /// starts over at its first sample).
    pub(crate) fn reset(&self, id: StationId) {
        self.ratio.store(tagged(id, RATIO_ONE_Q16), Ordering::Relaxed);
    }

    /// One sample of station `id`: `charged_us` estimated, `measured_us` reported.
    pub(crate) fn record(&self, id: StationId, charged_us: u64, measured_us: u64) -> Sample {
        if self.busy.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            return Sample::Busy;
        }
        let out = self.record_held(id, charged_us, measured_us);
        self.busy.store(false, Ordering::Release);
        out
    }

    /// [`record`](Self::record) with `busy` held.
    fn record_held(&self, id: StationId, charged_us: u64, measured_us: u64) -> Sample {
        // The slot's occupant is tagged at publication, before its id is visible: a
        // sample of any other station is late (its station was removed) and dropped.
        let seen = self.ratio.load(Ordering::Relaxed);
        if seen >> 32 != generation(id) {
            return Sample::Stale;
        }
        // SAFETY: the caller holds `busy`, so this is the only reference.
        let (owner, cal) = unsafe { &mut *self.state.get() };
        if *owner != id.to_raw() {
            cal.reset();
            *owner = id.to_raw();
        }
        match cal.record(charged_us, measured_us) {
            Ok(()) => {
                // Only over the word seen: if the slot was reused meanwhile, the new
                // occupant keeps its 1.0 (and the calibrator starts over at its first
                // sample, `owner` being the old id).
                let _ = self.ratio.compare_exchange(
                    seen,
                    tagged(id, cal.ratio_q16()),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
                Sample::Accepted
            }
            Err(e) => Sample::Rejected(e),
        }
    }
}

impl core::fmt::Debug for StationCalibration {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StationCalibration").field("ratio", &self.ratio.load(Ordering::Relaxed)).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warm_config() -> CalibratorConfig {
        let mut c = CalibratorConfig::default();
        c.warmup_samples = 1;
        c
    }

    #[test]
    fn a_ratio_is_read_only_by_its_own_station() {
        let c = StationCalibration::new(warm_config());
        let old = StationId::from_raw(3 | 7 << 32);
        let new = StationId::from_raw(3 | 8 << 32);
        c.reset(old);
        assert_eq!(c.record(old, 100, 200), Sample::Accepted);
        assert_eq!(c.ratio_q16(old), 2 * RATIO_ONE_Q16);
        assert_eq!(c.ratio_q16(new), RATIO_ONE_Q16, "the next occupant starts at 1");
        c.reset(new);
        // A late sample of the old occupant does not reach the new one.
        assert_eq!(c.record(old, 100, 300), Sample::Stale);
        assert_eq!(c.ratio_q16(new), RATIO_ONE_Q16);
        // The new one's first sample starts a fresh average (not 2 or 3 mixed in).
        assert_eq!(c.record(new, 100, 150), Sample::Accepted);
        assert_eq!(c.ratio_q16(new), RATIO_ONE_Q16 * 3 / 2);
    }

    #[test]
    fn a_taken_flag_skips_the_sample() {
        let c = StationCalibration::new(warm_config());
        let id = StationId::from_raw(1);
        c.reset(id);
        c.busy.store(true, Ordering::Relaxed);
        assert_eq!(c.record(id, 100, 200), Sample::Busy);
        c.busy.store(false, Ordering::Relaxed);
        assert_eq!(c.record(id, 0, 200), Sample::Rejected(SampleRejected::NoCharge));
        assert_eq!(c.ratio_q16(id), RATIO_ONE_Q16);
    }
}
