//! CSV output: one row per arm, run, station and flow (a station without a flow has one
//! row with the flow columns empty). Every row echoes the simulator's version, the arm's
//! design, run length and warm-up, and the run's seed, so a row read on its own says
//! what produced it; the flow columns carry the flow's direction, protocol and access
//! category.

use crate::scenario::keys::design_key;
use crate::sim::run::ArmResult;
use std::fmt::Write;

/// The header row.
pub const HEADER: &str = "sim_version,arm,design,duration_s,warmup_s,run,seed,station,flow,direction,protocol,ac,\
flow_throughput_mbps,tcp_rtt_mean_ms,tcp_rtt_max_ms,station_throughput_mbps,ping_p50_ms,ping_p99_ms,\
aql_pending_p50_us,airtime_share_pct,ampdu_p50,skipped_selections,closed_rounds,ring_drops,txq_drops,collisions,retry_drops";

/// Quotes a field that holds a comma, a quote or a line break (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

/// The rows of `arms`.
pub fn render(arms: &[ArmResult]) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    let version = env!("CARGO_PKG_VERSION");
    for a in arms {
        let spec = &a.scenario.spec;
        let head = format!(
            "{version},{},{},{},{}",
            field(&spec.name),
            design_key(spec.ap.design),
            spec.duration_s,
            spec.warmup_s
        );
        for r in &a.runs {
            for (s, st) in r.stations.iter().enumerate() {
                let station = format!(
                    "{:.3},{},{},{:.0},{:.2},{:.1},{},{},{},{},{},{}",
                    st.throughput_mbps,
                    // Empty where no ping was answered.
                    st.ping_p50_ms.map_or(String::new(), |v| format!("{v:.3}")),
                    st.ping_p99_ms.map_or(String::new(), |v| format!("{v:.3}")),
                    st.aql_pending_p50_us,
                    st.airtime_share_pct,
                    st.ampdu_p50,
                    r.skipped_selections,
                    r.closed_rounds,
                    r.ring_drops,
                    r.txq_drops,
                    r.collisions,
                    r.retry_drops
                );
                let flows: Vec<_> = r.flows.iter().enumerate().filter(|(_, f)| usize::from(f.station) == s).collect();
                let lead = format!("{head},{},{},{}", r.run, r.seed, field(&st.name));
                if flows.is_empty() {
                    let _ = writeln!(out, "{lead},,,,,,,,{station}");
                }
                for (i, f) in flows {
                    let _ = writeln!(
                        out,
                        "{lead},{i},{},{},{},{:.3},{:.3},{:.3},{station}",
                        f.direction, f.protocol, f.ac, f.throughput_mbps, f.tcp_rtt_mean_ms, f.tcp_rtt_max_ms
                    );
                }
            }
        }
    }
    out
}
