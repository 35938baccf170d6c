//! JSON output: the simulator's name and version; per arm the resolved scenario (every
//! key with its default filled in), the summary figures (with 95 % CIs, Jain indices,
//! per-station figures and steady-state warnings) and every run's measurements: its
//! seed, per flow its direction, protocol, access category, RTT quantiles (the CDF) and time series
//! (throughput, cwnd, smoothed RTT), per station its figures, ping samples and AQL
//! pending series.

use super::summary::ArmSummary;
use crate::metrics::RunResult;
use crate::scenario::Scenario;
use crate::sim::run::ArmResult;
use serde::Serialize;

#[derive(Serialize)]
struct ArmJson<'a> {
    scenario: &'a Scenario,
    summary: &'a ArmSummary,
    runs: &'a [RunResult],
}

/// The arms (`summaries[i]` summarises `arms[i]`) as a JSON document.
pub fn render(summaries: &[ArmSummary], arms: &[ArmResult], extra: &[String]) -> String {
    let list: Vec<ArmJson<'_>> = summaries
        .iter()
        .zip(arms)
        .map(|(s, a)| ArmJson { scenario: &a.scenario.spec, summary: s, runs: &a.runs })
        .collect();
    let doc = serde_json::json!({
        "simulator": { "name": env!("CARGO_PKG_NAME"), "version": env!("CARGO_PKG_VERSION") },
        "arms": list,
        "notes": extra,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
