// SPDX-License-Identifier: MIT OR GPL-2.0-only
//! A per-station calibrator of the estimate against measured airtime (not in mac80211).
//!
//! The AQL estimate is a model: it knows nothing of retries, RTS/CTS, contention, or how the
//! hardware really builds its A-MPDUs (mainline's `ieee80211_calc_expected_tx_airtime` reads
//! only the last rate, the length and the access category). Hardware that reports the airtime
//! it used (ath11k's PPDU statistics, for example) lets us measure how far off the model is
//! for a station: the cover letter of the ath11k AQL series v4 ("wifi: ath11k: airtime queue
//! limits, fairness and a driver TXQ scheduler", linux-wireless) reports a ratio near 1.85 on
//! an IPQ8074 (47–51 us charged per MSDU against 91–93 us reported). The [`Calibrator`]
//! keeps an integer exponentially weighted moving average of `measured / charged` and
//! scales later estimates by it.
//!
//! * Fixed point: ratios are Q16 (`65536` = 1.0); the average is kept with 8 more fraction
//!   bits so that small steps are not lost to rounding.
//! * Warm-up: until [`CalibratorConfig::warmup_samples`] samples were accepted, the scale is 1
//!   and estimates pass unchanged. Meanwhile the average is the plain mean of the samples so
//!   far (each weighs `1/n`), so it starts from data rather than from 1.0.
//! * Afterwards each sample weighs `1/2^ewma_shift`.
//! * Outliers: a sample whose own ratio lies outside
//!   `[outlier_low_q16, outlier_high_q16]` is rejected and counted, never averaged.
//! * Bounds: the ratio applied is clamped to `[min_ratio_q16, max_ratio_q16]`.
//!
//! One `Calibrator` per station: the caller owns it (next to the station's other state) and
//! feeds it from its completion path.

use core::fmt;

/// 1.0 in the Q16 fixed point of the calibrator's ratios.
pub const RATIO_ONE_Q16: u32 = 1 << 16;

/// Extra fraction bits of the running average beyond Q16.
const ACC_EXTRA_BITS: u32 = 8;

/// Largest EWMA shift accepted (a sample then weighs 1/65536).
const MAX_EWMA_SHIFT: u8 = 16;

/// Settings of a [`Calibrator`]. Build from [`Default`] and set fields:
///
/// ```
/// let mut config = airtime_est::CalibratorConfig::default();
/// config.warmup_samples = 4;
/// let calibrator = airtime_est::Calibrator::new(config);
/// assert_eq!(calibrator.config().warmup_samples, 4);
/// ```
#[non_exhaustive]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct CalibratorConfig {
    /// Samples to accept before the calibrator scales anything (until then the scale is 1).
    /// Default 16.
    pub warmup_samples: u32,
    /// Once warm, a new sample weighs `1 / 2^ewma_shift` in the average. Default 4 (1/16).
    /// Values above 16 are taken as 16.
    pub ewma_shift: u8,
    /// Lowest ratio applied, Q16. Default 1/4 (16 384). Values below 1 are taken as 1.
    pub min_ratio_q16: u32,
    /// Highest ratio applied, Q16. Default 4 (262 144). Taken as at least `min_ratio_q16`.
    pub max_ratio_q16: u32,
    /// Samples whose own ratio is below this (Q16) are rejected. Default 1/8 (8192).
    pub outlier_low_q16: u32,
    /// Samples whose own ratio is above this (Q16) are rejected. Default 8 (524 288). Taken as
    /// at least `outlier_low_q16`.
    pub outlier_high_q16: u32,
}

impl Default for CalibratorConfig {
    fn default() -> Self {
        CalibratorConfig {
            warmup_samples: 16,
            ewma_shift: 4,
            min_ratio_q16: RATIO_ONE_Q16 / 4,
            max_ratio_q16: RATIO_ONE_Q16 * 4,
            outlier_low_q16: RATIO_ONE_Q16 / 8,
            outlier_high_q16: RATIO_ONE_Q16 * 8,
        }
    }
}

impl CalibratorConfig {
    /// The same settings with every field brought into its documented range.
    fn sanitised(mut self) -> Self {
        self.ewma_shift = self.ewma_shift.min(MAX_EWMA_SHIFT);
        self.min_ratio_q16 = self.min_ratio_q16.max(1);
        self.max_ratio_q16 = self.max_ratio_q16.max(self.min_ratio_q16);
        self.outlier_high_q16 = self.outlier_high_q16.max(self.outlier_low_q16);
        self
    }
}

/// Why [`Calibrator::record`] did not use a sample.
#[non_exhaustive]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SampleRejected {
    /// Nothing was charged (`charged_us == 0`): there is no ratio to take.
    NoCharge,
    /// The sample's own ratio lies outside the outlier bounds.
    Outlier {
        /// The sample's `measured / charged`, Q16, saturated at `u32::MAX`.
        ratio_q16: u32,
    },
}

impl fmt::Display for SampleRejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SampleRejected::NoCharge => f.write_str("no airtime was charged for this sample"),
            SampleRejected::Outlier { ratio_q16 } => {
                write!(f, "measured/charged ratio {ratio_q16}/65536 is outside the outlier bounds")
            }
        }
    }
}

impl core::error::Error for SampleRejected {}

/// `measured / charged` in Q16, saturating; `charged` must not be 0.
///
/// Large inputs are scaled down together first so that `measured << 16` fits a `u64`
/// (no 128-bit division: it would pull `__udivti3` into a kernel module).
fn ratio_q16(charged: u64, measured: u64) -> u64 {
    // excess is at most 17: the shifts are in range.
    let excess = u64::BITS.saturating_sub(measured.leading_zeros()).saturating_sub(47);
    let measured = measured.checked_shr(excess).unwrap_or(0);
    let charged = charged.checked_shr(excess).unwrap_or(0);
    // measured < 2^47 now, so this cannot saturate.
    measured.saturating_mul(1 << 16).checked_div(charged).unwrap_or(u64::MAX)
}

/// Per-station estimate calibrator: an integer EWMA of `measured / charged` airtime.
///
/// ```
/// use airtime_est::{Calibrator, CalibratorConfig};
/// let mut cal = Calibrator::new(CalibratorConfig::default());
/// // Warm-up: the first 16 samples teach, nothing is scaled yet.
/// assert_eq!(cal.scale_us(50), 50);
/// for _ in 0..16 {
///     cal.record(50, 92).unwrap();
/// }
/// assert_eq!(cal.scale_us(50), 92);
/// assert!(cal.record(0, 92).is_err());
/// assert_eq!(cal.rejected(), 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Calibrator {
    config: CalibratorConfig,
    /// Running average of the ratio, Q16 with `ACC_EXTRA_BITS` more fraction bits. Starts at
    /// 1.0. Always within `[outlier_low, outlier_high]`-ish bounds, far below 2^41.
    average: u64,
    samples: u64,
    rejected: u64,
}

impl Default for Calibrator {
    /// A calibrator with the default settings ([`CalibratorConfig::default`]).
    fn default() -> Self {
        Calibrator::new(CalibratorConfig::default())
    }
}

impl Calibrator {
    /// A calibrator with no samples (scale 1). Out-of-range settings are brought into range
    /// as [`CalibratorConfig`] documents.
    pub fn new(config: CalibratorConfig) -> Self {
        Calibrator {
            config: config.sanitised(),
            average: u64::from(RATIO_ONE_Q16) << ACC_EXTRA_BITS,
            samples: 0,
            rejected: 0,
        }
    }

    /// The settings in force (after sanitising).
    pub fn config(&self) -> &CalibratorConfig {
        &self.config
    }

    /// Forgets every sample (for example after a station re-associates), keeping the settings.
    pub fn reset(&mut self) {
        *self = Calibrator::new(self.config);
    }

    /// Feeds one sample: `charged_us`, the sum of the estimates charged for what the hardware
    /// sent (for example the AQL charges of the MSDUs of one PPDU), and `measured_us`, the
    /// airtime the hardware reported for it.
    ///
    /// A rejected sample changes nothing but the rejection count.
    pub fn record(&mut self, charged_us: u64, measured_us: u64) -> Result<(), SampleRejected> {
        if charged_us == 0 {
            self.rejected = self.rejected.saturating_add(1);
            return Err(SampleRejected::NoCharge);
        }
        let ratio = ratio_q16(charged_us, measured_us);
        if ratio < u64::from(self.config.outlier_low_q16) || ratio > u64::from(self.config.outlier_high_q16) {
            self.rejected = self.rejected.saturating_add(1);
            return Err(SampleRejected::Outlier { ratio_q16: u32::try_from(ratio).unwrap_or(u32::MAX) });
        }
        // Here ratio <= outlier_high <= u32::MAX, so the sample fits in 40 bits.
        let sample = ratio << ACC_EXTRA_BITS;
        self.samples = self.samples.saturating_add(1);
        // Weight 1/n while n < 2^shift (the plain mean), then 1/2^shift.
        // The shift is clamped to MAX_EWMA_SHIFT at construction; `checked_shl` keeps
        // a shift-overflow panic path out of overflow-checked (kernel) builds anyway.
        let full = 1u64.checked_shl(u32::from(self.config.ewma_shift)).unwrap_or(u64::MAX);
        let divisor = self.samples.min(full);
        let step = sample.abs_diff(self.average).checked_div(divisor).unwrap_or(0);
        self.average =
            if sample >= self.average { self.average.saturating_add(step) } else { self.average.saturating_sub(step) };
        Ok(())
    }

    /// Whether the warm-up is over, so that [`scale_us`](Self::scale_us) scales.
    pub fn is_warm(&self) -> bool {
        self.samples >= u64::from(self.config.warmup_samples)
    }

    /// The ratio applied to estimates, Q16: 1.0 ([`RATIO_ONE_Q16`]) during the warm-up, then
    /// the average clamped to `[min_ratio_q16, max_ratio_q16]`.
    pub fn ratio_q16(&self) -> u32 {
        if !self.is_warm() {
            return RATIO_ONE_Q16;
        }
        let average = self.average_ratio_q16();
        // Not `clamp`, which has a panic path (min > max); `new` keeps min <= max anyway.
        average.max(self.config.min_ratio_q16).min(self.config.max_ratio_q16)
    }

    /// The running average of the accepted samples' ratios, Q16, unclamped (1.0 before the
    /// first sample). Also meaningful during the warm-up.
    pub fn average_ratio_q16(&self) -> u32 {
        u32::try_from(self.average >> ACC_EXTRA_BITS).unwrap_or(u32::MAX)
    }

    /// An estimate scaled by [`ratio_q16`](Self::ratio_q16), rounded to the nearest us and
    /// saturating at `u32::MAX`.
    pub fn scale_us(&self, estimate_us: u32) -> u32 {
        let scaled = u64::from(estimate_us)
            .saturating_mul(u64::from(self.ratio_q16()))
            .saturating_add(u64::from(RATIO_ONE_Q16 / 2))
            >> 16;
        u32::try_from(scaled).unwrap_or(u32::MAX)
    }

    /// Number of samples accepted.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Number of samples rejected (no charge, or outliers).
    pub fn rejected(&self) -> u64 {
        self.rejected
    }
}

#[cfg(test)]
// Outside this crate the config is `#[non_exhaustive]`: field-setting is how users build it.
#[allow(clippy::field_reassign_with_default)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A small deterministic generator, so the tests need no randomness source.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            self.0 >> 33
        }
    }

    #[test]
    fn converges_to_the_ath11k_ratio_within_one_percent() {
        // The ath11k AQL series' measurement: 47-51 us charged per MSDU, measured near
        // 1.85x, with +-3 % jitter.
        let mut cal = Calibrator::new(CalibratorConfig::default());
        let mut rng = Lcg(42);
        for _ in 0..500 {
            let msdus = 1 + rng.next() % 32;
            let charged: u64 = (0..msdus).map(|_| 47 + rng.next() % 5).sum();
            let jitter = 970 + rng.next() % 61; // 0.970 .. 1.030
            let measured = charged * 1850 * jitter / 1_000_000;
            cal.record(charged, measured).unwrap();
        }
        // Within 1 % of 1.85, in integers: |100 x ratio - 185 x 65536| < 1.85 x 65536.
        let target = 185 * u64::from(RATIO_ONE_Q16);
        let got = 100 * u64::from(cal.ratio_q16());
        assert!(got.abs_diff(target) < target / 100, "ratio {got} vs {target} (x100)");
        assert_eq!(cal.rejected(), 0);
        // 50 us charged now scales to 92.5 +- 1 us.
        assert!(cal.scale_us(50).abs_diff(92) <= 1, "{}", cal.scale_us(50));
    }

    #[test]
    fn warm_up_is_respected() {
        let mut config = CalibratorConfig::default();
        config.warmup_samples = 5;
        let mut cal = Calibrator::new(config);
        for i in 0..5 {
            assert!(!cal.is_warm());
            assert_eq!(cal.ratio_q16(), RATIO_ONE_Q16, "sample {i}");
            assert_eq!(cal.scale_us(100), 100);
            cal.record(100, 200).unwrap();
        }
        // The average learned during the warm-up (the plain mean) is used at once.
        assert!(cal.is_warm());
        assert_eq!(cal.average_ratio_q16(), 2 * RATIO_ONE_Q16);
        assert_eq!(cal.scale_us(100), 200);
    }

    #[test]
    fn rejected_samples_do_not_count_towards_warm_up() {
        let mut config = CalibratorConfig::default();
        config.warmup_samples = 2;
        let mut cal = Calibrator::new(config);
        cal.record(100, 150).unwrap();
        assert_eq!(cal.record(100, 5000), Err(SampleRejected::Outlier { ratio_q16: 50 * 65536 }));
        assert!(!cal.is_warm());
        assert_eq!(cal.samples(), 1);
        assert_eq!(cal.rejected(), 1);
    }

    #[test]
    fn outliers_are_rejected_and_counted() {
        let mut cal = Calibrator::new(CalibratorConfig::default());
        for _ in 0..32 {
            cal.record(50, 92).unwrap();
        }
        let before = cal.ratio_q16();
        assert_eq!(cal.record(0, 92), Err(SampleRejected::NoCharge));
        assert!(matches!(cal.record(50, 0), Err(SampleRejected::Outlier { ratio_q16: 0 })));
        assert!(matches!(cal.record(50, 10_000), Err(SampleRejected::Outlier { .. })));
        assert!(matches!(cal.record(u64::MAX, 1), Err(SampleRejected::Outlier { .. })));
        assert_eq!(cal.record(1, u64::MAX), Err(SampleRejected::Outlier { ratio_q16: u32::MAX }));
        assert_eq!(cal.rejected(), 5);
        assert_eq!(cal.samples(), 32);
        assert_eq!(cal.ratio_q16(), before);
    }

    #[test]
    fn the_applied_ratio_is_bounded() {
        let mut config = CalibratorConfig::default();
        config.warmup_samples = 1;
        config.outlier_high_q16 = u32::MAX;
        config.outlier_low_q16 = 0;
        let mut cal = Calibrator::new(config);
        for _ in 0..100 {
            cal.record(1, 1000).unwrap();
        }
        assert_eq!(cal.average_ratio_q16(), 1000 * RATIO_ONE_Q16);
        assert_eq!(cal.ratio_q16(), 4 * RATIO_ONE_Q16);
        assert_eq!(cal.scale_us(10), 40);
        cal.reset();
        for _ in 0..100 {
            cal.record(1000, 1).unwrap();
        }
        assert_eq!(cal.ratio_q16(), RATIO_ONE_Q16 / 4);
        assert_eq!(cal.scale_us(10), 3); // 2.5 rounds to nearest: 3
    }

    #[test]
    fn nonsense_settings_are_sanitised() {
        let config = CalibratorConfig {
            ewma_shift: 200,
            min_ratio_q16: 0,
            max_ratio_q16: 0,
            outlier_low_q16: 10,
            outlier_high_q16: 5,
            ..CalibratorConfig::default()
        };
        let cal = Calibrator::new(config);
        assert_eq!(cal.config().ewma_shift, 16);
        assert_eq!(cal.config().min_ratio_q16, 1);
        assert_eq!(cal.config().max_ratio_q16, 1);
        assert_eq!(cal.config().outlier_high_q16, 10);
    }

    #[test]
    fn the_ratio_survives_huge_inputs() {
        // Both sides near u64::MAX: the ratio is still 1.85 within rounding.
        let charged = u64::MAX / 2;
        let measured = charged / 100 * 185;
        let r = ratio_q16(charged, measured);
        assert!(r.abs_diff(185 * 65536 / 100) <= 2, "{r}");
    }

    proptest! {
        #[test]
        fn never_overflows(
            samples in proptest::collection::vec((any::<u64>(), any::<u64>()), 0..64),
            extreme in prop_oneof![Just(u64::MAX), Just(u64::from(u32::MAX)), any::<u64>()],
            shift in any::<u8>(),
            warmup in 0u32..4,
            low in any::<u32>(),
            high in any::<u32>(),
            estimate in any::<u32>(),
        ) {
            let config = CalibratorConfig {
                ewma_shift: shift,
                warmup_samples: warmup,
                outlier_low_q16: low,
                outlier_high_q16: high,
                min_ratio_q16: low,
                max_ratio_q16: high,
            };
            let mut cal = Calibrator::new(config);
            let mut calls = 0u64;
            for (c, m) in samples {
                calls += 3;
                let _ = cal.record(c, m);
                let _ = cal.record(extreme, m);
                let _ = cal.record(c, extreme);
                let r = cal.ratio_q16();
                let cfg = cal.config();
                if cal.is_warm() {
                    prop_assert!(r >= cfg.min_ratio_q16 && r <= cfg.max_ratio_q16);
                }
                // The average never leaves the outlier bounds it is built from (or 1.0).
                let avg = cal.average_ratio_q16();
                prop_assert!(avg <= cfg.outlier_high_q16.max(RATIO_ONE_Q16));
                let _ = cal.scale_us(estimate);
                let _ = cal.scale_us(u32::MAX);
            }
            // Every call is either accepted or counted as rejected.
            prop_assert_eq!(cal.samples() + cal.rejected(), calls);
        }

        #[test]
        fn scaling_by_a_planted_constant_ratio_is_exact(
            num in 1u64..1000, den in 1u64..1000, charged in 1u64..1_000_000,
        ) {
            let config = CalibratorConfig {
                warmup_samples: 1,
                outlier_low_q16: 0,
                outlier_high_q16: u32::MAX,
                min_ratio_q16: 1,
                max_ratio_q16: u32::MAX,
                ..CalibratorConfig::default()
            };
            let mut cal = Calibrator::new(config);
            let measured = charged * num / den;
            cal.record(charged, measured).unwrap();
            prop_assert_eq!(u64::from(cal.ratio_q16()), ratio_q16(charged, measured));
        }
    }
}
