//! The lines under the table for stations with a lossy or changing link
//! ([`crate::wifi::link`]): the airtime the AP spent against the estimator's price, the
//! subframe loss, the retry drops and the rate control's work.

use crate::sim::run::ArmResult;
use crate::wifi::link::LinkResult;

/// Lines for the report: per arm and station with a link, the airtime spent against the
/// estimator's price, the subframe loss and the retry drops (means over runs).
pub fn lines(arms: &[ArmResult]) -> Vec<String> {
    let mut out = Vec::new();
    for a in arms {
        let Some(first) = a.runs.first() else { continue };
        for (s, st) in first.stations.iter().enumerate() {
            let links: Vec<&LinkResult> = a.runs.iter().filter_map(|r| r.stations.get(s)?.link.as_ref()).collect();
            if links.is_empty() {
                continue;
            }
            let n = links.len() as f64;
            let avg = |f: &dyn Fn(&LinkResult) -> f64| links.iter().map(|l| f(l)).sum::<f64>() / n;
            let spent = avg(&|l| l.spent_airtime_ms);
            let priced = avg(&|l| l.priced_airtime_ms);
            let loss = avg(&|l| 100.0 * (1.0 - l.subframes_acked as f64 / l.subframes_sent.max(1) as f64));
            out.push(format!(
                "link {} / {}: AP airtime spent {spent:.0} ms against {priced:.0} ms priced by the estimator \
                 ({:.2}x); subframes lost {loss:.1} %, dropped at the retry limit {:.0}, rate-control updates {:.0}",
                a.scenario.spec.name,
                st.name,
                if priced > 0.0 { spent / priced } else { 0.0 },
                avg(&|l| l.retry_drops as f64),
                avg(&|l| l.rate_control_updates as f64),
            ));
        }
    }
    out
}
