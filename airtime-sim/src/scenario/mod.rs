//! Scenario files: one arm of an experiment in TOML (see `airtime-sim/scenarios/`).
//!
//! A scenario names its stations (rate, weight), its flows (station, direction, where
//! the sender runs), the AP's queueing design and its knobs, the wired link, the ping,
//! the duration, the number of runs and the seed, and optionally the seed document's
//! measured figures for the same arm (`[seed_figures]`) so the report can print them
//! beside ours. Unknown keys are refused, and every error names the key and the line.

pub mod rate;
pub mod suite;

use crate::ap::ApConfig;
use crate::net::tcp::CongestionControl;
use airtime_est::Rate;
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// A station.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StationSpec {
    /// Its name, used by flows.
    pub name: String,
    /// The rate its transmissions take on the air, e.g. `vht80-1ss-mcs9-sgi`.
    pub rate: Spanned<String>,
    /// The rate the driver reports to mac80211, which AQL prices frames at (default:
    /// `rate`). Rate control reports its best rate while retries and probes at lower
    /// rates make the real airtime longer: the seed measured a charge of 47-51 us per
    /// MSDU against 91 us of hardware airtime.
    #[serde(default)]
    pub reported_rate: Option<Spanned<String>>,
    /// Airtime weight (mac80211 default 256).
    #[serde(default = "default_weight")]
    pub weight: u16,
}

fn default_weight() -> u16 {
    256
}

/// Direction of a flow, seen from the station.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// To the station.
    Download,
    /// From the station.
    Upload,
}

/// Where the wired-side end of a flow runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Endpoint {
    /// The wired host behind the AP (the download is forwarded).
    Wired,
    /// The AP itself (TCP small queues pace it).
    Ap,
}

/// A bulk TCP flow.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// The station's name.
    pub station: Spanned<String>,
    /// Direction.
    #[serde(default = "default_direction")]
    pub direction: Direction,
    /// The other end.
    #[serde(default = "default_endpoint")]
    pub endpoint: Endpoint,
    /// Congestion control.
    #[serde(default = "default_cc")]
    pub cc: CongestionControl,
    /// The AP CPU that handles its packets (picks the TCL ring); default: flow index.
    #[serde(default)]
    pub cpu: Option<u8>,
    /// The TCP implementation.
    #[serde(default)]
    pub stack: Stack,
    /// Receive window cap in bytes (Linux: 6 MiB `tcp_rmem` at its default scaling
    /// ratio, about 3.8 MB). Linux-like stack only.
    #[serde(default = "default_rwnd")]
    pub rwnd_bytes: u64,
    /// HyStart, Linux's delay-based exit from slow start (default on, as in Linux).
    /// Linux-like stack only.
    #[serde(default = "default_true")]
    pub hystart: bool,
}

fn default_true() -> bool {
    true
}

/// Which TCP runs a flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stack {
    /// The compact Linux-like TCP of `net::linux_tcp` (CUBIC, HyStart, SACK recovery).
    #[default]
    Linux,
    /// smoltcp 0.14 (CUBIC or Reno; no SACK recovery, 1 s minimum RTO).
    Smoltcp,
}

fn default_rwnd() -> u64 {
    3_800_000
}

fn default_direction() -> Direction {
    Direction::Download
}
fn default_endpoint() -> Endpoint {
    Endpoint::Wired
}
fn default_cc() -> CongestionControl {
    CongestionControl::Cubic
}

/// The wired link between the wired host and the AP.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct WiredSpec {
    /// Rate, in Mbit/s.
    pub rate_mbps: f64,
    /// One-way delay, in us.
    pub delay_us: u64,
}

impl Default for WiredSpec {
    fn default() -> Self {
        WiredSpec { rate_mbps: 1000.0, delay_us: 250 }
    }
}

/// The ping from the wired host to every station.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PingSpec {
    /// Pings per second per station (0: none).
    pub rate_hz: f64,
}

impl Default for PingSpec {
    fn default() -> Self {
        PingSpec { rate_hz: 20.0 }
    }
}

/// A closed range of a seed figure (a single value is written `[v, v]`).
pub type Range = [f64; 2];

/// The seed document's figures for this arm.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SeedFigures {
    /// Where they come from.
    #[serde(default)]
    pub source: String,
    /// Download rate of flow 0, Mbit/s.
    pub throughput_mbps: Option<Range>,
    /// Mean TCP RTT of flow 0, ms.
    pub tcp_rtt_mean_ms: Option<Range>,
    /// Max TCP RTT of flow 0, ms.
    pub tcp_rtt_max_ms: Option<Range>,
    /// Ping RTT, ms.
    pub ping_ms: Option<Range>,
    /// Median AQL pending of station 0 (BE), us.
    pub aql_pending_us: Option<Range>,
    /// Airtime share of `share_station`, per cent.
    pub airtime_share_pct: Option<Range>,
    /// The station whose share is given.
    pub share_station: Option<String>,
    /// Skipped selections per run.
    pub skipped_selections: Option<Range>,
    /// Figures we calibrated a model constant on (by their key names); all others
    /// are predictions.
    #[serde(default)]
    pub calibrated: Vec<String>,
    /// What the model lacks where a prediction misses, printed under the arm.
    #[serde(default)]
    pub note: Option<String>,
}

/// One scenario (one arm).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short identifier.
    pub name: String,
    /// What the arm is, for tables.
    #[serde(default)]
    pub title: String,
    /// Table section.
    #[serde(default)]
    pub group: String,
    /// Simulated seconds per run.
    #[serde(default = "default_duration")]
    pub duration_s: f64,
    /// Seconds at the start left out of the figures.
    #[serde(default = "default_warmup")]
    pub warmup_s: f64,
    /// Runs (each with its own seed).
    #[serde(default = "default_runs")]
    pub runs: u32,
    /// Seed of the first run.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Wired link.
    #[serde(default)]
    pub wired: WiredSpec,
    /// The access point.
    pub ap: ApConfig,
    /// Stations.
    pub stations: Vec<StationSpec>,
    /// Flows.
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// Ping.
    #[serde(default)]
    pub ping: PingSpec,
    /// The seed document's figures.
    #[serde(default)]
    pub seed_figures: Option<SeedFigures>,
}

fn default_duration() -> f64 {
    20.0
}
fn default_warmup() -> f64 {
    2.0
}
fn default_runs() -> u32 {
    3
}
fn default_seed() -> u64 {
    1
}

/// A scenario checked and resolved: rates parsed, station names bound.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The scenario as written.
    pub spec: Scenario,
    /// Station rates on the air, in order.
    pub rates: Vec<Rate>,
    /// Station rates as reported to mac80211 (AQL's pricing), in order.
    pub reported_rates: Vec<Rate>,
    /// Each flow's station number.
    pub flow_station: Vec<u16>,
}

/// A scenario file that could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError(pub String);

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ScenarioError {}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parses and checks a scenario; `origin` names the file in errors.
pub fn parse(text: &str, origin: &str) -> Result<Resolved, ScenarioError> {
    let spec: Scenario = toml::from_str(text).map_err(|e| ScenarioError(format!("{origin}: {e}")))?;
    let at = |span: std::ops::Range<usize>, key: &str, msg: String| {
        ScenarioError(format!("{origin}: line {}: `{key}`: {msg}", line_of(text, span.start)))
    };
    if spec.stations.is_empty() {
        return Err(ScenarioError(format!("{origin}: `stations`: at least one station is needed")));
    }
    if !(spec.duration_s > 0.0 && spec.duration_s.is_finite()) || spec.warmup_s < 0.0 {
        return Err(ScenarioError(format!("{origin}: `duration_s` must be > 0 and `warmup_s` >= 0")));
    }
    if spec.warmup_s >= spec.duration_s {
        return Err(ScenarioError(format!("{origin}: `warmup_s` must be below `duration_s`")));
    }
    if spec.wired.rate_mbps <= 0.0 {
        return Err(ScenarioError(format!("{origin}: `wired.rate_mbps` must be > 0")));
    }
    let mut rates = Vec::new();
    let mut reported_rates = Vec::new();
    for s in &spec.stations {
        if s.weight == 0 {
            return Err(at(s.rate.span(), "weight", "0 is not a valid airtime weight (1..=65535)".into()));
        }
        let r = rate::parse_rate(s.rate.get_ref()).map_err(|e| at(s.rate.span(), "rate", e))?;
        rates.push(r);
        reported_rates.push(match &s.reported_rate {
            Some(rr) => rate::parse_rate(rr.get_ref()).map_err(|e| at(rr.span(), "reported_rate", e))?,
            None => r,
        });
    }
    let mut flow_station = Vec::new();
    for f in &spec.flows {
        let name = f.station.get_ref();
        let idx = spec
            .stations
            .iter()
            .position(|s| &s.name == name)
            .ok_or_else(|| at(f.station.span(), "station", format!("no station named `{name}`")))?;
        if f.endpoint == Endpoint::Ap && f.direction == Direction::Upload {
            return Err(at(f.station.span(), "endpoint", "an upload to the AP itself is not modelled".into()));
        }
        flow_station.push(idx as u16);
    }
    if let Some([low, high]) = spec.ap.aql_be_us
        && low > high
    {
        return Err(ScenarioError(format!("{origin}: `ap.aql_be_us`: low {low} is above high {high}")));
    }
    if let Some(sf) = &spec.seed_figures
        && let Some(name) = &sf.share_station
        && !spec.stations.iter().any(|s| &s.name == name)
    {
        return Err(ScenarioError(format!("{origin}: `seed_figures.share_station`: no station `{name}`")));
    }
    Ok(Resolved { spec, rates, reported_rates, flow_station })
}

/// Reads and checks a scenario file.
pub fn load(path: &std::path::Path) -> Result<Resolved, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError(format!("{}: {e}", path.display())))?;
    parse(&text, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
name = "t"
[ap]
design = "stock"
[[stations]]
name = "a"
rate = "vht80-1ss-mcs9-sgi"
[[flows]]
station = "a"
"#;

    #[test]
    fn a_minimal_scenario_gets_the_defaults() {
        let r = parse(MINIMAL, "t.toml").unwrap();
        assert_eq!(r.spec.runs, 3);
        assert_eq!(r.flow_station, vec![0]);
        assert_eq!(r.spec.ping.rate_hz, 20.0);
    }

    #[test]
    fn an_unknown_key_is_refused_with_its_name_and_line() {
        let bad = MINIMAL.replace("design = \"stock\"", "design = \"stock\"\nqueue_depth = 3");
        let e = parse(&bad, "t.toml").unwrap_err().0;
        assert!(e.contains("queue_depth") && e.contains("line 5"), "{e}");
    }

    #[test]
    fn an_unknown_station_is_refused_with_its_line() {
        let bad = MINIMAL.replace("station = \"a\"", "station = \"b\"");
        let e = parse(&bad, "t.toml").unwrap_err().0;
        assert!(e.contains("line 9") && e.contains("`b`"), "{e}");
    }

    #[test]
    fn a_bad_rate_is_refused_with_its_line() {
        let bad = MINIMAL.replace("vht80-1ss-mcs9-sgi", "vht80-1ss-mcs12");
        let e = parse(&bad, "t.toml").unwrap_err().0;
        assert!(e.contains("line 7") && e.contains("rate"), "{e}");
    }
}
