//! The adapter's calibration of the AQL estimate against PPDU stats (`ap.calibrate`), at
//! short durations (the full arms are `scenarios/calibration/`; `docs/mechanisms.md` has
//! their numbers). At VHT80 the model's air per MSDU is about twice the estimate, as the
//! series' cover letter measured (1.85); calibrated, the charge meets the air.

use airtime_sim::ap::ath11k_adapter::EstimateVsAir;
use airtime_sim::scenario::{self, Resolved};
use airtime_sim::sim::run::{Overrides, run_one};

fn arm(file: &str) -> Resolved {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/calibration").join(file);
    let mut a = scenario::load(&path).unwrap();
    Overrides { seed: Some(7), duration_s: Some(3.0), warmup_s: Some(0.75), runs: Some(1) }.apply(&mut a).unwrap();
    a
}

fn estimate_vs_air(file: &str) -> EstimateVsAir {
    run_one(&arm(file), 0).unwrap().estimate_vs_air.expect("ap.calibrate is set: the run reports it")
}

#[test]
fn uncalibrated_the_air_is_about_twice_the_charge_and_calibrated_they_meet() {
    let off = estimate_vs_air("calibration-vht80-series-default-off.toml");
    let ratio_off = off.air_us_per_msdu() / off.charged_us_per_msdu();
    assert!(!off.calibrated && (1.7..2.3).contains(&ratio_off), "{off:?}: {ratio_off}");
    assert_eq!(off.mean_ratio_q16, 65536, "off: nothing learned");
    let on = estimate_vs_air("calibration-vht80-series-default-on.toml");
    let ratio_on = on.air_us_per_msdu() / on.charged_us_per_msdu();
    assert!(on.calibrated && (0.95..1.08).contains(&ratio_on), "{on:?}: {ratio_on}");
    let learned = f64::from(on.mean_ratio_q16) / 65536.0;
    assert!((learned - ratio_off).abs() < 0.2, "learned {learned}, measured off {ratio_off}");
}

#[test]
fn without_the_key_nothing_is_reported() {
    let mut a = arm("calibration-vht80-series-default-off.toml");
    a.spec.ap.calibrate = None;
    assert!(run_one(&a, 0).unwrap().estimate_vs_air.is_none());
}
