//! The text table: per arm, our figures (mean and the range over runs) beside the seed's,
//! with C for a figure that depends on a choice fitted to the seed, P for a prediction, and whether the
//! prediction meets its target; ± is the t-based 95 % confidence interval of the mean
//! over runs. Under each arm, its stations' figures and any figure that had not settled.

use super::summary::{ArmSummary, Figure};
use std::fmt::Write;

fn fmt_v(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `v`, or "—" when absent (a ping percentile of a run that had no answered ping).
fn fmt_opt(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_string(), fmt_v)
}

fn range(lo: f64, hi: f64) -> String {
    if (hi - lo).abs() < 1e-9 { fmt_v(lo) } else { format!("{}-{}", fmt_v(lo), fmt_v(hi)) }
}

fn ours(f: &Figure) -> String {
    if f.ours.is_empty() {
        return "—".to_string();
    }
    let lo = f.ours.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = f.ours.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    match f.ci95_half_width {
        Some(ci) if f.ours.len() > 1 => format!("{} ±{} ({})", fmt_v(f.mean()), fmt_v(ci), range(lo, hi)),
        _ => fmt_v(f.mean()),
    }
}

/// The per-station lines of an arm: means over runs (throughput with its 95 % CI).
fn stations(out: &mut String, a: &ArmSummary) {
    let _ = writeln!(
        out,
        "    {:<18} {:>16} {:>12} {:>12} {:>12} {:>11} {:>10} {:>10} {:>11}",
        "station",
        "Mbit/s",
        "ping p50 ms",
        "ping p99 ms",
        "ping loss %",
        "A-MPDU p50",
        "AP down %",
        "air d+u %",
        "AQL p50 us"
    );
    for st in &a.stations {
        let tput = match st.throughput_ci95_mbps {
            Some(ci) => format!("{} ±{}", fmt_v(st.throughput_mbps), fmt_v(ci)),
            None => fmt_v(st.throughput_mbps),
        };
        let _ = writeln!(
            out,
            "    {:<18} {:>16} {:>12} {:>12} {:>12} {:>11} {:>10} {:>10} {:>11}",
            st.name,
            tput,
            fmt_opt(st.ping_p50_ms),
            fmt_opt(st.ping_p99_ms),
            fmt_v(st.ping_loss_pct),
            fmt_v(st.ampdu_p50),
            fmt_v(st.airtime_share_pct),
            fmt_v(st.down_up_airtime_pct),
            fmt_v(st.aql_pending_p50_us)
        );
    }
}

fn verdict(f: &Figure) -> &'static str {
    match (f.seed.is_some(), f.calibrated, f.within_target) {
        (false, _, _) => "",
        (true, true, Some(true)) => "C  ok",
        (true, true, Some(false)) => "C  MISS",
        (true, true, None) => "C",
        (true, false, Some(true)) => "P  ok",
        (true, false, Some(false)) => "P  MISS",
        (true, false, None) => "P",
    }
}

/// The table for `arms`; `extra` lines (suite-level figures) follow it.
pub fn render(arms: &[ArmSummary], extra: &[String]) -> String {
    let mut out = String::new();
    let mut group = None;
    let _ =
        writeln!(out, "{:<34} {:<20} {:>28} {:>14}  C/P  target", "arm", "figure", "ours: mean ±95% CI (runs)", "seed");
    for a in arms {
        if group != Some(&a.group) {
            let _ = writeln!(out, "\n== {} ==", if a.group.is_empty() { &a.name } else { &a.group });
            group = Some(&a.group);
        }
        let title = if a.title.is_empty() { &a.name } else { &a.title };
        for (i, f) in a.figures.iter().enumerate() {
            let name = if i == 0 { title.as_str() } else { "" };
            let seed = f.seed.map_or(String::new(), |[lo, hi]| range(lo, hi));
            let _ = writeln!(out, "{:<34} {:<20} {:>28} {:>14}  {}", name, f.label, ours(f), seed, verdict(f));
        }
        stations(&mut out, a);
        for w in &a.warnings {
            let _ = writeln!(out, "    warning: {w}");
        }
        if let Some(note) = &a.note {
            let mut line = String::from("    note:");
            for word in note.split_whitespace() {
                if line.len() + word.len() > 110 {
                    let _ = writeln!(out, "{line}");
                    line = String::from("         ");
                }
                line.push(' ');
                line.push_str(word);
            }
            let _ = writeln!(out, "{line}");
        }
    }
    if !extra.is_empty() {
        let _ = writeln!(out);
        for l in extra {
            let _ = writeln!(out, "{l}");
        }
    }
    out
}
