//! Suite-level lines under the table: the round fix's throughput ratio against the
//! seed's, the count of seed figures in target, and the legend.

use super::summary::ArmSummary;
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

/// The round fix's throughput ratio on the AP-generated download, ours and the seed's,
/// and whether ours is within 25 % of it; `None` unless both arms ran.
fn roundfix_ratio(arms: &[ArmResult]) -> Option<(f64, f64, bool)> {
    let (bug, fixed) = (throughput(arms, "roundfix-ap-bug")?, throughput(arms, "roundfix-ap-fixed")?);
    let seed = mean(&SEED_ROUNDFIX_FIXED_MBPS) / mean(&SEED_ROUNDFIX_BUG_MBPS);
    let ours = if bug > 0.0 { fixed / bug } else { f64::INFINITY };
    Some((ours, seed, ours >= seed * 0.75 && ours <= seed * 1.25))
}

/// Whether the round fix's throughput ratio is calibrated: it is when either of its two
/// arms' throughput is (a choice fitted to the seed moves it).
fn roundfix_ratio_calibrated(arms: &[ArmResult]) -> bool {
    arms.iter().filter(|a| matches!(a.scenario.spec.name.as_str(), "roundfix-ap-bug" | "roundfix-ap-fixed")).any(|a| {
        a.scenario.spec.seed_figures.as_ref().is_some_and(|sf| sf.calibrated.iter().any(|c| c == "throughput_mbps"))
    })
}

/// How many of the seed's figures with a target the run landed, calibrated and predicted
/// apart, and which it missed; `None` when no figure has a target.
pub fn targets_line(summaries: &[ArmSummary], arms: &[ArmResult]) -> Option<String> {
    let mut counts = [[0usize; 2]; 2]; // [calibrated][within target]
    let mut missed = Vec::new();
    for a in summaries {
        for f in &a.figures {
            let Some(ok) = f.within_target else { continue };
            counts[usize::from(f.calibrated)][usize::from(ok)] += 1;
            if !ok {
                missed.push(format!("{} ({})", a.name, f.label));
            }
        }
    }
    if let Some((_, _, ok)) = roundfix_ratio(arms) {
        counts[usize::from(roundfix_ratio_calibrated(arms))][usize::from(ok)] += 1;
        if !ok {
            missed.push("round fix throughput ratio".to_string());
        }
    }
    let of = |c: [usize; 2]| (c[1], c[0] + c[1]);
    let ((cal_ok, cal), (pred_ok, pred)) = (of(counts[1]), of(counts[0]));
    if cal + pred == 0 {
        return None;
    }
    let mut line = format!(
        "In target: {} of {} seed figures (calibrated {cal_ok} of {cal}, predicted {pred_ok} of {pred})",
        cal_ok + pred_ok,
        cal + pred
    );
    if !missed.is_empty() {
        line.push_str(&format!(". Missed, each with its arm's note: {}", missed.join("; ")));
    }
    Some(line)
}

/// Notes for the arms that ran.
pub fn suite_notes(arms: &[ArmResult]) -> Vec<String> {
    let mut notes = vec![
        "C (calibrated): the figure depends on a choice fitted to the seed (a choice's alternative moves it by \
         more than 10 %, 5 points for a share, or across its target; airtime-sim/README.md, \"Fitted choices\"); \
         P (predicted): no fitted choice moves it that far. Targets: throughput and RTT within 25 % of the seed's \
         range, airtime shares within 5 points."
            .to_string(),
    ];
    if let Some((ours, seed, ok)) = roundfix_ratio(arms) {
        notes.push(format!(
            "round fix, download generated on the AP: throughput with/without = {ours:.2} (seed {seed:.2}) {} {}",
            if roundfix_ratio_calibrated(arms) { "C" } else { "P" },
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
