//! CSV output: one row per arm, run and station, with the flow figures of the flows to
//! or from that station summed (throughput) or of its first flow (RTT).

use crate::metrics::RunResult;
use std::fmt::Write;

/// The header row.
pub const HEADER: &str = "arm,run,seed,station,throughput_mbps,tcp_rtt_mean_ms,tcp_rtt_max_ms,ping_p50_ms,ping_p99_ms,\
aql_pending_p50_us,airtime_share_pct,ampdu_p50,skipped_selections,closed_rounds,ring_drops,txq_drops,collisions";

/// The rows of `arms`.
pub fn render(arms: &[(String, Vec<RunResult>)]) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    for (name, runs) in arms {
        for r in runs {
            for (s, st) in r.stations.iter().enumerate() {
                let flows: Vec<_> = r.flows.iter().filter(|f| usize::from(f.station) == s).collect();
                let tput: f64 = flows.iter().map(|f| f.throughput_mbps).sum();
                let (mean, max) = flows.first().map_or((0.0, 0.0), |f| (f.tcp_rtt_mean_ms, f.tcp_rtt_max_ms));
                let _ = writeln!(
                    out,
                    "{name},{},{},{},{tput:.3},{mean:.3},{max:.3},{:.3},{:.3},{:.0},{:.2},{:.1},{},{},{},{},{}",
                    r.run,
                    r.seed,
                    st.name,
                    st.ping_p50_ms,
                    st.ping_p99_ms,
                    st.aql_pending_p50_us,
                    st.airtime_share_pct,
                    st.ampdu_p50,
                    r.skipped_selections,
                    r.closed_rounds,
                    r.ring_drops,
                    r.txq_drops,
                    r.collisions
                );
            }
        }
    }
    out
}
