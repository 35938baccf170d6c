//! JSON output: per arm, the summary figures and every run's measurements.

use super::summary::ArmSummary;
use crate::metrics::RunResult;
use serde::Serialize;

#[derive(Serialize)]
struct ArmJson<'a> {
    summary: &'a ArmSummary,
    runs: &'a [RunResult],
}

/// The arms as a JSON document.
pub fn render(arms: &[(ArmSummary, Vec<RunResult>)], extra: &[String]) -> String {
    let list: Vec<ArmJson<'_>> = arms.iter().map(|(s, r)| ArmJson { summary: s, runs: r }).collect();
    let doc = serde_json::json!({ "arms": list, "notes": extra });
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
