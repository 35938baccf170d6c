//! Suite-level lines under the table: the round fix's throughput ratio against the
//! seed's, and the legend.

use crate::metrics::stats::mean;
use crate::sim::run::ArmResult;

/// The seed's AP-generated download without the round fix (three runs), Mbit/s.
pub const SEED_ROUNDFIX_BUG_MBPS: [f64; 3] = [35.6, 44.4, 42.8];
/// The same with the fix, Mbit/s.
pub const SEED_ROUNDFIX_FIXED_MBPS: [f64; 3] = [94.7, 94.6, 95.0];

fn throughput(arms: &[ArmResult], name: &str) -> Option<f64> {
    let a = arms.iter().find(|a| a.scenario.spec.name == name)?;
    Some(mean(&a.runs.iter().map(|r| r.flows.first().map_or(0.0, |f| f.throughput_mbps)).collect::<Vec<_>>()))
}

/// Notes for the arms that ran.
pub fn suite_notes(arms: &[ArmResult]) -> Vec<String> {
    let mut notes = vec![
        "C: a model constant was calibrated on this figure; P: a prediction. Targets: throughput and RTT within \
         25 % of the seed's range, airtime shares within 5 points."
            .to_string(),
    ];
    if let (Some(bug), Some(fixed)) = (throughput(arms, "roundfix-ap-bug"), throughput(arms, "roundfix-ap-fixed")) {
        let seed = mean(&SEED_ROUNDFIX_FIXED_MBPS) / mean(&SEED_ROUNDFIX_BUG_MBPS);
        let ours = if bug > 0.0 { fixed / bug } else { f64::INFINITY };
        let ok = ours >= seed * 0.75 && ours <= seed * 1.25;
        notes.push(format!(
            "round fix, download generated on the AP: throughput with/without = {ours:.2} (seed {seed:.2}) P {}",
            if ok { "ok" } else { "MISS" }
        ));
    }
    notes.extend(super::designs::designs_notes(arms));
    notes.extend(estimate_vs_air_lines(arms));
    notes.extend(super::link::lines(arms));
    notes
}

/// For the arms that set `ap.calibrate`: what AQL charged per MSDU against what an MSDU
/// took on the air, and what station 0's median pending airtime was on the air (means
/// over runs).
fn estimate_vs_air_lines(arms: &[ArmResult]) -> Vec<String> {
    let mut out = Vec::new();
    for arm in arms {
        let e: Vec<_> = arm.runs.iter().filter_map(|r| r.estimate_vs_air).collect();
        let Some(first) = e.first() else { continue };
        if out.is_empty() {
            out.push(String::new());
            out.push("AQL estimate against the air (ap.calibrate set; means over runs):".to_string());
        }
        let charged = mean(&e.iter().map(|x| x.charged_us_per_msdu()).collect::<Vec<_>>());
        let air = mean(&e.iter().map(|x| x.air_us_per_msdu()).collect::<Vec<_>>());
        let learned = mean(&e.iter().map(|x| f64::from(x.mean_ratio_q16) / 65536.0).collect::<Vec<_>>());
        let pending = mean(
            &arm.runs.iter().map(|r| r.stations.first().map_or(0.0, |s| s.aql_pending_p50_us)).collect::<Vec<_>>(),
        );
        let ratio = if charged > 0.0 { air / charged } else { 0.0 };
        out.push(format!(
            "  {:<38} calibration {:<3}: charged {charged:.1} us/MSDU, air {air:.1} us/MSDU, air/charged {ratio:.2} \
             (learned {learned:.2}); AQL pending p50 {pending:.0} us = {:.0} us of air",
            arm.scenario.spec.name,
            if first.calibrated { "on" } else { "off" },
            pending * ratio,
        ));
    }
    out
}
