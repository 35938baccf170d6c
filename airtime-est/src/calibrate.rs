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
//! learns the ratio of the airtime measured to the airtime charged and scales later
//! estimates by it.
//!
//! How, and what to feed it: see [`Calibrator`].
//!
//! One `Calibrator` per station: the caller owns it (next to the station's other state) and
//! feeds it from its completion path.

use core::fmt;

/// 1.0 in the Q16 fixed point of the calibrator's ratios.
pub const RATIO_ONE_Q16: u32 = 1 << 16;

/// Significant bits of the larger of the two sums after every sample: room for the decayed
/// sums plus one aligned sample (each below 2^62) without overflowing a `u64`.
const MANTISSA_BITS: u32 = 62;

/// Largest EWMA shift accepted (a sample then decays by 1/65536 per later sample).
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
    /// At every accepted sample, the sums of the earlier ones decay by `1 / 2^ewma_shift`
    /// (warm-up included): the ratio follows about the last `2^ewma_shift` samples,
    /// weighted by their charge. Default 4 (1/16). Values above 16 are taken as 16.
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

/// Number of significant bits (0 for 0).
fn bit_length(x: u64) -> u32 {
    u64::BITS.saturating_sub(x.leading_zeros())
}

/// `x x 2^-exp`, for a result known to fit (the caller keeps `bit_length(x) - exp` at most
/// [`MANTISSA_BITS`]); 0 if the shift is 64 or more.
fn scaled(x: u64, exp: i32) -> u64 {
    if exp >= 0 {
        x.checked_shr(exp.unsigned_abs()).unwrap_or(0)
    } else {
        x.checked_shl(exp.unsigned_abs()).unwrap_or(0)
    }
}

/// Per-station estimate calibrator: the ratio of exponentially decayed sums of measured and
/// charged airtime.
///
/// * What is averaged: the ratio of two exponentially decayed sums, `Σ measured / Σ charged`,
///   not an average of per-sample ratios. AQL limits airtime, so a sample counts in proportion
///   to the airtime it charged: 10 us frames measured at 40 us and 2000 us A-MPDUs measured at
///   2000 us, in equal numbers, give 2040 / 2010 = 1.015, not the mean of their ratios, 2.5,
///   which would charge the station's big PPDUs 2.5 times their air.
/// * Decay: at each accepted sample both sums are multiplied by `1 - 1/2^ewma_shift`, then the
///   sample is added; a sample's weight is its charge times that factor once per later sample.
///   The same from the first sample on, warm-up included: there is no initial value to wash
///   out, so the ratio is the data's from the first sample (it is not a plain mean of the
///   warm-up when there are more than about `2^ewma_shift` warm-up samples: older ones have
///   decayed).
/// * Warm-up: until [`CalibratorConfig::warmup_samples`] samples were accepted, the scale is 1
///   and estimates pass unchanged.
/// * Outliers: a sample whose own ratio lies outside
///   `[outlier_low_q16, outlier_high_q16]` is rejected and counted, never summed.
/// * Bounds: the ratio applied is clamped to `[min_ratio_q16, max_ratio_q16]`.
/// * Fixed point: ratios are Q16 (`65536` = 1.0). The sums are kept as 62-bit mantissas with a
///   shared binary exponent, so neither a tiny nor a huge (up to `u64::MAX`) sample overflows
///   or vanishes, and a small change is never lost to rounding, whatever `ewma_shift`.
///
/// **Feed it unscaled estimates.** `charged_us` must be what the model estimated, before
/// [`scale_us`](Self::scale_us): fed charges already scaled by its own ratio, each sample says
/// `measured / (ratio x estimate)`, and the ratio settles where `ratio^2` is the true ratio
/// (charging `scale_us(1000)` for air that takes 1.85 x 1000 us settles at 1.3603).
///
/// # Example
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
///
/// // Samples count by the airtime they charged: a small frame measured at 4x its estimate
/// // does not make a big A-MPDU measured at its estimate cost 2.5x.
/// cal.reset();
/// for _ in 0..200 {
///     cal.record(10, 40).unwrap();
///     cal.record(2000, 2000).unwrap();
/// }
/// // About 2040 us measured per 2010 us charged (1.015), the latest sample weighing most.
/// assert!((2025..=2035).contains(&cal.scale_us(2000)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Calibrator {
    config: CalibratorConfig,
    /// Decayed sum of the accepted samples' `charged_us`, in units of `2^exp` us.
    charged: u64,
    /// Decayed sum of the accepted samples' `measured_us`, in the same units.
    measured: u64,
    /// The binary exponent of both sums. After every sample the larger sum has exactly
    /// [`MANTISSA_BITS`] bits, so `exp` stays within about -62 (1 us) and 20 (`u64::MAX`
    /// x 2^16): far from `i32`'s bounds.
    exp: i32,
    /// `measured / charged` of the sums, Q16, within the outlier bounds; 1.0 before the first
    /// sample.
    average_q16: u32,
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
            charged: 0,
            measured: 0,
            exp: 0,
            average_q16: RATIO_ONE_Q16,
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

    /// Feeds one sample: `charged_us`, the sum of the **unscaled** estimates charged for what
    /// the hardware sent (for example the AQL estimates of the MSDUs of one PPDU, as the
    /// model gave them), and `measured_us`, the airtime the hardware reported for it.
    ///
    /// `charged_us` must not have been through [`scale_us`](Self::scale_us) (or any other
    /// scaling by this calibrator's ratio): the calibrator would then learn
    /// `measured / (ratio x estimate)`, a feedback loop that settles at the square root of
    /// the true ratio. A driver that charges AQL the scaled estimate keeps the unscaled one
    /// (or recomputes it from the rate and length) for this call.
    ///
    /// The sample is rejected if nothing was charged or its own ratio is an outlier;
    /// otherwise both sums decay by `1/2^ewma_shift` and the sample is added, so that it
    /// weighs in proportion to `charged_us`. Any `u64` inputs are accepted: the sums are
    /// rescaled, never overflowed. A rejected sample changes nothing but the rejection count.
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
        self.samples = self.samples.saturating_add(1);
        self.accumulate(charged_us, measured_us);
        // Every sample's ratio lies within the outlier bounds, so their weighted ratio does
        // too; the clamp only absorbs rounding (and keeps the value in a u32).
        let low = u64::from(self.config.outlier_low_q16);
        let high = u64::from(self.config.outlier_high_q16);
        let average = ratio_q16(self.charged, self.measured).max(low).min(high);
        self.average_q16 = u32::try_from(average).unwrap_or(u32::MAX);
        Ok(())
    }

    /// Decays both sums and adds one sample (`charged > 0`), keeping the larger sum at
    /// [`MANTISSA_BITS`] bits.
    fn accumulate(&mut self, charged: u64, measured: u64) {
        // Decay. The shift is at most MAX_EWMA_SHIFT; `checked_shr` keeps a shift-overflow
        // panic path out of overflow-checked (kernel) builds anyway. Shift 0: only the new
        // sample is left.
        let shift = u32::from(self.config.ewma_shift);
        self.charged = self.charged.saturating_sub(self.charged.checked_shr(shift).unwrap_or(0));
        self.measured = self.measured.saturating_sub(self.measured.checked_shr(shift).unwrap_or(0));

        // The smallest exponent at which the sample fits MANTISSA_BITS bits (-61..=2).
        let bits = bit_length(charged.max(measured));
        let need = i32::try_from(bits).unwrap_or(i32::MAX).saturating_sub(MANTISSA_BITS as i32);
        if self.charged == 0 && self.measured == 0 {
            // Nothing to align with (the first sample, or all decayed): take the sample's scale.
            self.exp = need;
        } else if need > self.exp {
            // A sample larger than the sums' scale: coarsen the sums first.
            let up = need.saturating_sub(self.exp);
            self.charged = scaled(self.charged, up);
            self.measured = scaled(self.measured, up);
            self.exp = need;
        }
        // Both terms are below 2^MANTISSA_BITS here, so the sums stay below 2^63.
        self.charged = self.charged.saturating_add(scaled(charged, self.exp));
        self.measured = self.measured.saturating_add(scaled(measured, self.exp));

        // Normalise: the larger sum gets exactly MANTISSA_BITS bits again, so that a small
        // sample after a large one is still added at full precision and the decay of the
        // next sample (at most a 1/2^16 step) is exact to 2^-45 or better.
        let top = bit_length(self.charged.max(self.measured));
        if top > 0 {
            let d = i32::try_from(top).unwrap_or(i32::MAX).saturating_sub(MANTISSA_BITS as i32);
            self.charged = scaled(self.charged, d);
            self.measured = scaled(self.measured, d);
            self.exp = self.exp.saturating_add(d);
        }
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
        // Not `clamp`, which has a panic path (min > max); `new` keeps min <= max anyway.
        self.average_q16.max(self.config.min_ratio_q16).min(self.config.max_ratio_q16)
    }

    /// The learned ratio `Σ measured / Σ charged` of the decayed sums, Q16, not clamped to
    /// `[min_ratio_q16, max_ratio_q16]` (it lies within the outlier bounds, as every accepted
    /// sample does); 1.0 before the first sample. Also meaningful during the warm-up.
    pub fn average_ratio_q16(&self) -> u32 {
        self.average_q16
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
        // The ratio learned during the warm-up is used at once.
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

    /// Q16 of `num / den`, rounded down.
    fn q16(num: u64, den: u64) -> u32 {
        u32::try_from(num * u64::from(RATIO_ONE_Q16) / den).unwrap()
    }

    #[test]
    fn samples_weigh_by_their_charge_not_equally() {
        // Small frames whose model is 4x low, and big A-MPDUs whose model is exact, one after
        // the other: the airtime ratio is 2040 / 2010 = 1.0149. The mean of the per-sample
        // ratios (what the calibrator used to average) is 2.5; it reported 2.452.
        let mut cal = Calibrator::default();
        for _ in 0..200 {
            cal.record(10, 40).unwrap();
            cal.record(2000, 2000).unwrap();
        }
        let truth = q16(2040, 2010);
        // The decay weighs the latest sample a little more (here the big one: 1.0140);
        // 0.2 % of the truth at most.
        assert!(cal.average_ratio_q16().abs_diff(truth) <= truth / 500, "{} vs {truth}", cal.average_ratio_q16());
        assert_eq!(cal.scale_us(2000), 2028);
        // Either order of the pair settles within the same bound.
        cal.record(10, 40).unwrap();
        assert!(cal.average_ratio_q16().abs_diff(truth) <= truth / 500, "{}", cal.average_ratio_q16());
    }

    #[test]
    fn no_dead_zone_at_the_largest_shift() {
        // At ewma_shift 16 each sample moves the ratio by under 1/65536 of the difference;
        // the old Q16+8 average truncated such steps to 0 and never moved off 1.0.
        let mut config = CalibratorConfig::default();
        config.ewma_shift = 16;
        config.warmup_samples = 1;
        let mut cal = Calibrator::new(config);
        // 2^20 samples: the sums reach their steady state (the first weighs e^-16).
        for _ in 0..1 << 20 {
            cal.record(1000, 1000).unwrap();
        }
        assert_eq!(cal.average_ratio_q16(), RATIO_ONE_Q16);
        // A change of 0.3 %: after 2^16 samples it has moved 1 - 1/e of the way...
        for _ in 0..65_536 {
            cal.record(1000, 1003).unwrap();
        }
        let target = q16(1003, 1000); // 65 732
        let moved = cal.average_ratio_q16() - RATIO_ONE_Q16;
        let expect = (target - RATIO_ONE_Q16) * 632 / 1000; // 1 - 1/e = 0.632
        assert!(moved.abs_diff(expect) <= 2, "moved {moved}, expected about {expect}");
        // ... and after 2^20 it is there.
        for _ in 0..(1 << 20) - 65_536 {
            cal.record(1000, 1003).unwrap();
        }
        assert!(cal.average_ratio_q16().abs_diff(target) <= 1, "{} vs {target}", cal.average_ratio_q16());
    }

    #[test]
    fn a_warm_up_longer_than_the_window_is_decayed_too() {
        // 64 warm-up samples at ewma_shift 4 (a window of about 16): 32 at 3.0, then 32 at
        // 1.0. The plain mean would be 2.0; the decayed sums weigh the first 32 by
        // (15/16)^32 = 0.1267 relative to the last: (3 x 0.1267 + 1) / 1.1267 = 1.2249.
        let mut config = CalibratorConfig::default();
        config.warmup_samples = 64;
        let mut cal = Calibrator::new(config);
        for i in 0..64 {
            assert!(!cal.is_warm());
            cal.record(100, if i < 32 { 300 } else { 100 }).unwrap();
        }
        assert!(cal.is_warm());
        let expect = q16(12_249, 10_000);
        assert!(cal.average_ratio_q16().abs_diff(expect) <= 10, "{} vs {expect}", cal.average_ratio_q16());
        assert_eq!(cal.ratio_q16(), cal.average_ratio_q16());
    }

    #[test]
    fn feeding_back_scaled_charges_learns_the_square_root() {
        // What `record`'s documentation warns of: a driver that charges scale_us(estimate) and
        // feeds that charge back. The air takes 1.85 x the 1000 us estimate.
        let mut wrong = Calibrator::default();
        let mut right = Calibrator::default();
        for _ in 0..2000 {
            let _ = wrong.record(u64::from(wrong.scale_us(1000)), 1850);
            right.record(1000, 1850).unwrap();
        }
        // sqrt(1.85) = 1.3601: 1.3603 with the rounding of the charges.
        assert!(wrong.ratio_q16().abs_diff(q16(13_603, 10_000)) <= 8, "{}", wrong.ratio_q16());
        assert_eq!(right.ratio_q16(), q16(1850, 1000));
    }

    #[test]
    fn a_huge_sample_neither_overflows_nor_spoils_later_precision() {
        let mut config = CalibratorConfig::default();
        config.warmup_samples = 1;
        config.outlier_high_q16 = u32::MAX;
        let mut cal = Calibrator::new(config);
        cal.record(u64::MAX, u64::MAX).unwrap();
        assert_eq!(cal.average_ratio_q16(), RATIO_ONE_Q16);
        cal.record(u64::MAX / 4, u64::MAX / 2).unwrap();
        assert!(cal.average_ratio_q16() > RATIO_ONE_Q16);
        // Small samples afterwards: the huge ones decay away and 1.5 is learned exactly.
        for _ in 0..2000 {
            cal.record(2, 3).unwrap();
        }
        assert_eq!(cal.average_ratio_q16(), q16(3, 2));
        // One microsecond each way, then the largest charge at a ratio of 1.
        cal.reset();
        cal.record(1, 1).unwrap();
        cal.record(u64::MAX, u64::MAX).unwrap();
        assert_eq!(cal.average_ratio_q16(), RATIO_ONE_Q16);
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
        fn the_ratio_lies_between_the_samples_ratios(
            samples in proptest::collection::vec((1u64..1 << 40, 0u64..1 << 40), 1..64),
            shift in 0u8..=16,
        ) {
            let config = CalibratorConfig {
                ewma_shift: shift,
                warmup_samples: 0,
                outlier_low_q16: 0,
                outlier_high_q16: u32::MAX,
                min_ratio_q16: 1,
                max_ratio_q16: u32::MAX,
            };
            let mut cal = Calibrator::new(config);
            let (mut lo, mut hi) = (u64::MAX, 0);
            for (c, m) in samples {
                if cal.record(c, m).is_ok() {
                    let r = ratio_q16(c, m);
                    lo = lo.min(r);
                    hi = hi.max(r);
                    // Q16 rounding of each ratio, and of the sums' ratio: one unit either way.
                    let avg = u64::from(cal.average_ratio_q16());
                    prop_assert!(avg + 1 >= lo && avg <= hi + 1, "{} not in [{}, {}]", avg, lo, hi);
                }
            }
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
