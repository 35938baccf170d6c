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
    notes.extend(super::link::lines(arms));
    notes
}
