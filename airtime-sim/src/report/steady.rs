//! The steady-state check: a figure that differs between the first and the second half
//! of the measured interval had not settled when the run ended (slow start still
//! running, a queue still filling), and its mean describes the run's length, not the
//! arm. Checked, pooled over an arm's runs: every whole-run flow's throughput, and every
//! station's median ping RTT (when all flows run the whole interval).

use crate::metrics::stats::{mean, quantile};
use crate::sim::run::ArmResult;

/// Halves further apart than this (relative to the larger) are unsettled: the report's
/// own tolerance on throughput and RTT targets.
pub const MAX_HALF_DIFFERENCE: f64 = 0.25;
/// Below this the throughput check is noise (a ping-only or idle flow), Mbit/s.
const MIN_THROUGHPUT_MBPS: f64 = 0.5;
/// Below this the ping check is noise: a few airtime slots, ms.
const MIN_PING_MS: f64 = 2.0;
/// Unsettled flows (and stations) named one by one per arm; the rest are counted, so a
/// 1024-station arm does not print a thousand lines.
const MAX_NAMED: usize = 3;

/// Keeps the first [`MAX_NAMED`] of `found` and counts the rest in one more line.
fn capped(found: Vec<String>, name: &str, what: &str, advice: &str) -> Vec<String> {
    let n = found.len();
    let mut out: Vec<String> = found.into_iter().take(MAX_NAMED).collect();
    if n > MAX_NAMED {
        out.push(format!(
            "arm `{name}`: {} more {what} differ by over {:.0} % between the halves of the measured interval; {advice}",
            n - MAX_NAMED,
            MAX_HALF_DIFFERENCE * 100.0
        ));
    }
    out
}

fn unsettled_pair(first: f64, second: f64, floor: f64) -> bool {
    let hi = first.max(second);
    hi >= floor && (first - second).abs() > MAX_HALF_DIFFERENCE * hi
}

/// Warnings, one per figure that had not settled, naming the arm and the figure.
pub fn unsettled(arm: &ArmResult) -> Vec<String> {
    let spec = &arm.scenario.spec;
    let mid = ((spec.warmup_s + spec.duration_s) / 2.0) as f32;
    let name = &spec.name;
    let advice = "the run is too short for it to settle: raise `duration_s` (or `warmup_s`, --duration/--warmup)";
    let mut flows = Vec::new();
    let mut stations = Vec::new();
    let whole = |f: usize| {
        spec.flows
            .get(f)
            .is_some_and(|fs| fs.start_s <= spec.warmup_s && fs.stop_s.is_none_or(|t| t >= spec.duration_s))
    };
    for f in 0..spec.flows.len() {
        if !whole(f) {
            continue;
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for r in &arm.runs {
            let Some(fl) = r.flows.get(f) else { continue };
            for (t, v) in r.sample_times_s.iter().zip(&fl.throughput_series_mbps) {
                if *t <= mid { a.push(f64::from(*v)) } else { b.push(f64::from(*v)) }
            }
        }
        if a.is_empty() || b.is_empty() {
            continue;
        }
        let (a, b) = (mean(&a), mean(&b));
        if unsettled_pair(a, b, MIN_THROUGHPUT_MBPS) {
            flows.push(format!(
                "arm `{name}`: flow {f} throughput is {a:.1} Mbit/s in the first half of the measured interval and \
                 {b:.1} in the second; {advice}"
            ));
        }
    }
    if (0..spec.flows.len()).all(whole) {
        for (s, st) in spec.stations.iter().enumerate() {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for r in &arm.runs {
                for &(t, v) in r.stations.get(s).map_or(&[][..], |x| &x.ping_series[..]) {
                    if t <= mid { a.push(f64::from(v)) } else { b.push(f64::from(v)) }
                }
            }
            if a.len() < 5 || b.len() < 5 {
                continue;
            }
            let (a, b) = (quantile(&mut a, 0.5), quantile(&mut b, 0.5));
            if unsettled_pair(a, b, MIN_PING_MS) {
                stations.push(format!(
                    "arm `{name}`: station {} ping median is {a:.1} ms in the first half of the measured interval \
                     and {b:.1} in the second; {advice}",
                    st.name
                ));
            }
        }
    }
    let mut out = capped(flows, name, "flows' throughputs", advice);
    out.extend(capped(stations, name, "stations' ping medians", advice));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_a_quarter_apart_are_unsettled_above_the_floor() {
        assert!(unsettled_pair(50.0, 80.0, MIN_THROUGHPUT_MBPS));
        assert!(!unsettled_pair(76.0, 80.0, MIN_THROUGHPUT_MBPS));
        assert!(!unsettled_pair(0.1, 0.4, MIN_THROUGHPUT_MBPS), "noise below the floor");
    }

    #[test]
    fn beyond_three_unsettled_flows_the_rest_are_counted() {
        let found: Vec<String> = (0..5).map(|i| format!("flow {i}")).collect();
        let out = capped(found, "a", "flows' throughputs", "raise it");
        assert_eq!(out.len(), 4);
        assert!(out[3].contains("2 more flows' throughputs differ by over 25 %"), "{}", out[3]);
        assert_eq!(capped(vec!["x".into()], "a", "w", "r"), vec!["x".to_string()]);
    }
}
