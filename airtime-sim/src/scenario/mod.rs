//! Scenario files: one arm of an experiment in TOML (see `airtime-sim/scenarios/`).
//!
//! A scenario names its stations (rate, weight), its flows (station, direction, where
//! the sender runs), the AP's queueing design and its knobs, the wired link, the ping,
//! the duration, the number of runs and the seed, and optionally the seed document's
//! measured figures for the same arm (`[seed_figures]`) so the report can print them
//! beside ours.
//!
//! Every key is defined once, in [`keys::KEYS`]: its type, unit, default, what it
//! models and which configurations use it. [`parse`] walks the file against that table
//! and refuses an unknown key; after deserialising, a key the configuration does not use
//! is refused ([`ScenarioErrorKind::NoEffect`]) or, where harmless, reported in
//! [`Resolved::warnings`], never ignored in silence. Every error is a
//! [`ScenarioError`] naming the file and, where there is one, the key and its line.

pub mod keys;
pub mod limits;
pub mod link;
pub mod preset;
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
    /// The channel's best rate from a time on: `[[time_s, "rate"], ...]` (see
    /// [`link`]).
    #[serde(default)]
    pub rate_schedule: Vec<(f64, String)>,
    /// A walk away: `[from_s, to_s, to_mcs]`, one MCS step down at a time.
    #[serde(default)]
    pub walk_away: Option<(f64, f64, u8)>,
    /// Probability that a subframe at or below the channel's rate is lost.
    #[serde(default)]
    pub frame_error_rate: f64,
    /// How the station's transmitter (and the AP's, towards it) picks its rate.
    #[serde(default)]
    pub rate_control: crate::wifi::link::RateControl,
    /// What queues the station's own packets before its driver sends them.
    #[serde(default)]
    pub queue: crate::wifi::station_txq::StationQueue,
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

/// The transport of a flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// A bulk TCP transfer.
    #[default]
    Tcp,
    /// A UDP stream at a constant bit rate.
    Udp,
}

/// A flow: a bulk TCP transfer or a constant-bit-rate UDP stream.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// The station's name.
    pub station: Spanned<String>,
    /// The transport.
    #[serde(default)]
    pub protocol: Protocol,
    /// UDP: the sending rate, in Mbit/s of IPv4 packets.
    #[serde(default)]
    pub rate_mbps: Option<f64>,
    /// UDP: the IPv4 length of each packet, in bytes.
    #[serde(default = "default_packet_bytes")]
    pub packet_bytes: u32,
    /// The DSCP marking (0..=63), which picks the access category.
    #[serde(default)]
    pub dscp: u8,
    /// When the flow starts sending, in s.
    #[serde(default)]
    pub start_s: f64,
    /// When it stops sending new data, in s (default: the end of the run).
    #[serde(default)]
    pub stop_s: Option<f64>,
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

fn default_packet_bytes() -> u32 {
    1500
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
    /// Interval of the time series (AQL pending, cwnd, throughput, ping RTT), ms.
    #[serde(default = "default_sample_interval_ms")]
    pub sample_interval_ms: f64,
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
    /// A Flent test that brings its flows (see [`preset`]).
    #[serde(default)]
    pub preset: Option<preset::Preset>,
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
fn default_sample_interval_ms() -> f64 {
    100.0
}

/// The shortest UDP packet a flow may send: IPv4 and UDP headers.
pub const UDP_MIN_BYTES: u32 = 28;
/// The longest: the Ethernet MTU.
pub const UDP_MAX_BYTES: u32 = 1500;
/// The fastest UDP stream, in Mbit/s (100 Gbit/s: packets stay nanoseconds apart).
pub const UDP_MAX_MBPS: f64 = 100_000.0;

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
    /// Keys the file sets that its configuration does not use, harmlessly.
    pub warnings: Vec<ScenarioWarning>,
    /// Each station's lossy or changing link, `None` for an ideal one.
    pub links: Vec<Option<link::LinkSpec>>,
}

/// What was wrong with a scenario file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScenarioErrorKind {
    /// The file could not be read.
    Io,
    /// Not valid TOML.
    Syntax,
    /// A key the scenario format does not have.
    UnknownKey,
    /// A value of the wrong type or out of range, or a missing required key.
    BadValue,
    /// A key the chosen configuration does not use, set to something else than its
    /// default.
    NoEffect,
    /// A suite name or directory that does not exist.
    NoSuite,
}

/// A scenario file that could not be used; it names the file and, where there is one,
/// the key and its line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file (or suite) it is about.
    pub file: String,
    /// The line of the key, where known.
    pub line: Option<usize>,
    /// The key, as the file writes it (`flows[1].cc`), where there is one.
    pub key: Option<String>,
    /// What kind of error.
    pub kind: ScenarioErrorKind,
    /// What is wrong.
    pub message: String,
}

impl ScenarioError {
    fn new(file: &str, kind: ScenarioErrorKind, message: impl Into<String>) -> ScenarioError {
        ScenarioError { file: file.into(), line: None, key: None, kind, message: message.into() }
    }

    fn at(mut self, key: impl Into<String>, line: Option<usize>) -> ScenarioError {
        self.key = Some(key.into());
        self.line = line;
        self
    }
}

fn locate(f: &mut std::fmt::Formatter<'_>, file: &str, line: Option<usize>, key: Option<&str>) -> std::fmt::Result {
    f.write_str(file)?;
    if let Some(l) = line {
        write!(f, ": line {l}")?;
    }
    if let Some(k) = key {
        write!(f, ": `{k}`")?;
    }
    Ok(())
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        locate(f, &self.file, self.line, self.key.as_deref())?;
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// A key the file sets that its configuration does not use, where that is harmless (it
/// equals the default, or it describes the world rather than a mechanism).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioWarning {
    /// The file.
    pub file: String,
    /// The key's line.
    pub line: usize,
    /// The key, as the file writes it (`stations[0].weight`).
    pub key: String,
    /// Why it does nothing.
    pub message: String,
}

impl std::fmt::Display for ScenarioWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        locate(f, &self.file, Some(self.line), Some(&self.key))?;
        write!(f, ": {}", self.message)
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes().iter().take(offset).filter(|b| **b == b'\n').count() + 1
}

/// A key the file sets: its definition, its name in the file, its entry in an array of
/// tables, its line and its value.
struct Present {
    def: &'static keys::KeyDef,
    name: String,
    entry: Option<usize>,
    line: usize,
    value: Option<toml::Value>,
}

/// Walks the file's tables against the key table: refuses unknown keys, records the
/// keys set.
/// Where each line of a file starts, so a key's line is a binary search, not a scan
/// (a 1024-station file has thousands of keys).
fn line_starts(text: &str) -> Vec<usize> {
    core::iter::once(0).chain(text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1)).collect()
}

fn walk(
    table: &toml::de::DeTable<'_>,
    prefix: &str,
    shown: &str,
    entry: Option<usize>,
    ctx: (&[usize], &str),
    out: &mut Vec<Present>,
) -> Result<(), ScenarioError> {
    use serde::de::IntoDeserializer;
    let (starts, origin) = ctx;
    for (k, v) in table {
        let path = format!("{prefix}{}", k.get_ref());
        let name = format!("{shown}{}", k.get_ref());
        // The line whose start is the last at or before the key.
        let line = starts.partition_point(|&s| s <= k.span().start);
        let Some(def) = keys::find(&path).or_else(|| keys::find(&format!("{path}[]"))) else {
            let here = keys::children(prefix).iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ");
            return Err(ScenarioError::new(
                origin,
                ScenarioErrorKind::UnknownKey,
                format!("unknown key; expected one of {here}"),
            )
            .at(name, Some(line)));
        };
        match (def.kind, v.get_ref()) {
            (keys::Kind::Table, toml::de::DeValue::Table(t)) => {
                walk(t, &format!("{path}."), &format!("{name}."), entry, ctx, out)?;
            }
            (keys::Kind::ArrayOfTables, toml::de::DeValue::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    if let toml::de::DeValue::Table(t) = item.get_ref() {
                        walk(t, &format!("{path}[]."), &format!("{name}[{i}]."), Some(i), ctx, out)?;
                    }
                }
            }
            (keys::Kind::Value(_), _) => {
                let value = <toml::Value as serde::Deserialize>::deserialize(v.clone().into_deserializer()).ok();
                out.push(Present { def, name, entry, line, value });
            }
            // A table where a value belongs, or the reverse: deserialising says so.
            _ => {}
        }
    }
    Ok(())
}

/// Whether a value equals a TOML literal (integers and floats compare as numbers).
fn equals_literal(value: &toml::Value, literal: &str) -> bool {
    fn same(a: &toml::Value, b: &toml::Value) -> bool {
        use toml::Value::{Array, Float, Integer};
        match (a, b) {
            (Integer(x), Float(y)) | (Float(y), Integer(x)) => (*x as f64) == *y,
            (Array(x), Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
            _ => a == b,
        }
    }
    toml::from_str::<toml::Table>(&format!("v = {literal}"))
        .ok()
        .and_then(|t| t.get("v").cloned())
        .is_some_and(|d| same(value, &d))
}

/// Parses a scenario without resolving it: syntax, unknown keys, types. Returns the keys
/// the file sets.
fn deserialise(text: &str, origin: &str) -> Result<(Scenario, Vec<Present>), ScenarioError> {
    let doc = toml::de::DeTable::parse(text).map_err(|e| {
        ScenarioError::new(origin, ScenarioErrorKind::Syntax, e.message().to_string()).at_span(text, e.span())
    })?;
    let mut present = Vec::new();
    walk(doc.get_ref(), "", "", None, (&line_starts(text), origin), &mut present)?;
    let spec: Scenario = toml::from_str(text).map_err(|e| {
        ScenarioError::new(origin, ScenarioErrorKind::BadValue, e.message().to_string()).at_span(text, e.span())
    })?;
    Ok((spec, present))
}

impl ScenarioError {
    fn at_span(mut self, text: &str, span: Option<std::ops::Range<usize>>) -> ScenarioError {
        self.line = span.map(|s| line_of(text, s.start));
        self
    }
}

/// Parses and checks a scenario; `origin` names the file in errors.
pub fn parse(text: &str, origin: &str) -> Result<Resolved, ScenarioError> {
    use ScenarioErrorKind::{BadValue, NoEffect};
    let (mut spec, present) = deserialise(text, origin)?;
    let set = |k: &str| present.iter().any(|p| p.def.path == k);
    let given = preset::Given { duration: set("duration_s"), warmup: set("warmup_s"), ping: set("ping.rate_hz") };
    preset::expand(&mut spec, given).map_err(|m| {
        let line = present.iter().find(|p| p.def.path == "preset").map(|p| p.line);
        ScenarioError::new(origin, BadValue, m).at("preset", line)
    })?;
    let bad = |key: &str, msg: String| ScenarioError::new(origin, BadValue, msg).at(key, None);
    let at = |span: std::ops::Range<usize>, key: &str, msg: String| {
        ScenarioError::new(origin, BadValue, msg).at(key, Some(line_of(text, span.start)))
    };
    if spec.stations.is_empty() {
        return Err(bad("stations", "at least one station is needed".into()));
    }
    limits::duration_s(spec.duration_s).map_err(|e| bad("duration_s", e))?;
    limits::warmup_s(spec.warmup_s, spec.duration_s).map_err(|e| bad("warmup_s", e))?;
    limits::runs(spec.runs).map_err(|e| bad("runs", e))?;
    limits::sample_interval_ms(spec.sample_interval_ms).map_err(|e| bad("sample_interval_ms", e))?;
    let line_of_key = |k: &str| present.iter().find(|p| p.def.path == k).map(|p| p.line);
    limits::ping_rate_hz(spec.ping.rate_hz)
        .map_err(|e| ScenarioError::new(origin, BadValue, e).at("ping.rate_hz", line_of_key("ping.rate_hz")))?;
    if !(spec.wired.rate_mbps > 0.0 && spec.wired.rate_mbps.is_finite()) {
        return Err(bad("wired.rate_mbps", "must be > 0".into()));
    }
    let mut rates = Vec::new();
    let mut reported_rates = Vec::new();
    for (i, s) in spec.stations.iter().enumerate() {
        if s.weight == 0 {
            return Err(at(
                s.rate.span(),
                &format!("stations[{i}].weight"),
                "0 is not a valid airtime weight (1..=65535)".into(),
            ));
        }
        let r = rate::parse_rate(s.rate.get_ref()).map_err(|e| at(s.rate.span(), &format!("stations[{i}].rate"), e))?;
        rates.push(r);
        reported_rates.push(match &s.reported_rate {
            Some(rr) => {
                rate::parse_rate(rr.get_ref()).map_err(|e| at(rr.span(), &format!("stations[{i}].reported_rate"), e))?
            }
            None => r,
        });
    }
    let mut flow_station = Vec::new();
    for (i, f) in spec.flows.iter().enumerate() {
        let name = f.station.get_ref();
        let idx = spec.stations.iter().position(|s| &s.name == name).ok_or_else(|| {
            at(f.station.span(), &format!("flows[{i}].station"), format!("no station named `{name}`"))
        })?;
        let key = |k: &str| format!("flows[{i}].{k}");
        if f.protocol == Protocol::Udp {
            match f.rate_mbps {
                Some(r) if r > 0.0 && r <= UDP_MAX_MBPS => {}
                Some(r) => {
                    return Err(at(
                        f.station.span(),
                        &key("rate_mbps"),
                        format!("{r:?} is not a rate above 0 and at most {UDP_MAX_MBPS}"),
                    ));
                }
                None => return Err(at(f.station.span(), &key("rate_mbps"), "a UDP flow needs its rate".into())),
            }
            if !(UDP_MIN_BYTES..=UDP_MAX_BYTES).contains(&f.packet_bytes) {
                return Err(at(
                    f.station.span(),
                    &key("packet_bytes"),
                    format!("{} is not an IPv4 length from {UDP_MIN_BYTES} to {UDP_MAX_BYTES}", f.packet_bytes),
                ));
            }
            if f.endpoint == Endpoint::Ap {
                return Err(at(
                    f.station.span(),
                    &key("endpoint"),
                    "a UDP sender on the AP itself is not modelled (its socket's backpressure)".into(),
                ));
            }
        }
        match crate::net::udp::ac_of_dscp(f.dscp) {
            None => return Err(at(f.station.span(), &key("dscp"), format!("{} is not a DSCP (0..=63)", f.dscp))),
            Some(airtime_sched::Ac::Be) => {}
            Some(_) if f.direction == Direction::Upload => {}
            Some(ac) => {
                if let Some(why) = no_downlink_acs(&spec.ap) {
                    return Err(at(
                        f.station.span(),
                        &key("dscp"),
                        format!(
                            "{} maps to access category {}, which the access point's downlink does not have \
                             with {why} (its downlink is best effort only there, and a marked download is \
                             refused rather than sent as BE; without it every design has every access \
                             category; a marked upload runs)",
                            f.dscp,
                            ac.name()
                        ),
                    ));
                }
            }
        }
        let stop = f.stop_s.unwrap_or(f64::INFINITY);
        if !(f.start_s >= 0.0 && f.start_s.is_finite()) || stop <= f.start_s || stop.is_nan() {
            return Err(at(f.station.span(), &key("start_s"), "`start_s` must be >= 0 and below `stop_s`".into()));
        }
        if f.start_s >= spec.duration_s {
            return Err(at(
                f.station.span(),
                &key("start_s"),
                format!(
                    "{} s is not before the end of the {} s run: the flow would never start",
                    f.start_s, spec.duration_s
                ),
            ));
        }
        if let Some(cpu) = f.cpu
            && cpu >= spec.ap.hardware.rings
            && keys::ATH11K_DESIGNS.contains(&spec.ap.design)
        {
            return Err(at(
                f.station.span(),
                &key("cpu"),
                format!(
                    "CPU {cpu} has no TCL ring: `ap.hardware.rings` is {}, so 0..{}",
                    spec.ap.hardware.rings, spec.ap.hardware.rings
                ),
            ));
        }
        if f.endpoint == Endpoint::Ap && f.direction == Direction::Upload {
            return Err(at(
                f.station.span(),
                &format!("flows[{i}].endpoint"),
                "an upload to the AP itself is not modelled".into(),
            ));
        }
        flow_station.push(idx as u16);
    }
    let hw = &spec.ap.hardware;
    let hw_bad = |k: &str, msg: String| ScenarioError::new(origin, BadValue, msg).at(k, line_of_key(k));
    if hw.rings == 0 {
        return Err(hw_bad("ap.hardware.rings", "0 rings cannot carry a frame; give at least 1".into()));
    }
    if hw.msdu_budget == 0 {
        return Err(hw_bad(
            "ap.hardware.msdu_budget",
            "a radio that holds 0 frames cannot send; give at least 1".into(),
        ));
    }
    if !(hw.max_ppdu_us > 0.0 && hw.max_ppdu_us <= crate::wifi::phy::MAX_PPDU_US) {
        return Err(hw_bad(
            "ap.hardware.max_ppdu_us",
            format!(
                "{} is not a PPDU time; give µs above 0 and at most {} (802.11's aPPDUMaxTime)",
                hw.max_ppdu_us,
                crate::wifi::phy::MAX_PPDU_US
            ),
        ));
    }
    for (path, limits) in [
        ("ap.aql_bk_us", spec.ap.aql_bk_us),
        ("ap.aql_be_us", spec.ap.aql_be_us),
        ("ap.aql_vi_us", spec.ap.aql_vi_us),
        ("ap.aql_vo_us", spec.ap.aql_vo_us),
    ] {
        if let Some([low, high]) = limits
            && low > high
        {
            return Err(bad(path, format!("low {low} is above high {high}")));
        }
        if let Some([_, 0]) = limits {
            return Err(hw_bad(path, "a high limit of 0 µs lets no frame out; give a limit above 0".into()));
        }
    }
    if let Some(sf) = &spec.seed_figures {
        if let Some(name) = &sf.share_station
            && !spec.stations.iter().any(|s| &s.name == name)
        {
            return Err(bad("seed_figures.share_station", format!("no station `{name}`")));
        }
        for c in &sf.calibrated {
            let given = match c.as_str() {
                "throughput_mbps" => sf.throughput_mbps.is_some(),
                "tcp_rtt_mean_ms" => sf.tcp_rtt_mean_ms.is_some(),
                "tcp_rtt_max_ms" => sf.tcp_rtt_max_ms.is_some(),
                "ping_ms" => sf.ping_ms.is_some(),
                "aql_pending_us" => sf.aql_pending_us.is_some(),
                "airtime_share_pct" => sf.airtime_share_pct.is_some(),
                "skipped_selections" => sf.skipped_selections.is_some(),
                _ => {
                    return Err(bad(
                        "seed_figures.calibrated",
                        format!("`{c}` is not a seed figure; use one of {}", keys::FIGURE_KEYS.join(", ")),
                    ));
                }
            };
            if !given {
                return Err(bad("seed_figures.calibrated", format!("`{c}` names a figure this table does not give")));
            }
        }
    }
    let mut warnings = Vec::new();
    for p in &present {
        let Some(why) = p.def.used_by.unused_because(&spec, p.entry) else { continue };
        let is_default = p.def.default.literal().zip(p.value.as_ref()).is_some_and(|(lit, v)| equals_literal(v, lit));
        match (p.def.unused, is_default) {
            (keys::Unused::RefuseUnlessDefault, false) => {
                return Err(ScenarioError::new(
                    origin,
                    NoEffect,
                    format!("has no effect here ({why}); remove it or change the configuration"),
                )
                .at(p.name.clone(), Some(p.line)));
            }
            (_, true) => warnings.push(ScenarioWarning {
                file: origin.into(),
                line: p.line,
                key: p.name.clone(),
                message: format!("is the default and has no effect here ({why})"),
            }),
            (keys::Unused::Warn, false) => warnings.push(ScenarioWarning {
                file: origin.into(),
                line: p.line,
                key: p.name.clone(),
                message: format!("has no effect here ({why})"),
            }),
        }
    }
    let links = link::resolve(&spec, &rates, text, origin)?;
    Ok(Resolved { spec, rates, reported_rates, flow_station, warnings, links })
}

/// Reads and checks a scenario file.
pub fn load(path: &std::path::Path) -> Result<Resolved, ScenarioError> {
    let file = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| ScenarioError::new(&file, ScenarioErrorKind::Io, e.to_string()))?;
    parse(&text, &file)
}

/// Why the access point's downlink has no access category but BE under `ap`, or
/// `None` where it has every one ([`crate::ap::Ap::downlink_acs`]).
fn no_downlink_acs(ap: &crate::ap::ApConfig) -> Option<String> {
    if ap.hardware.ofdma {
        return Some("`ap.hardware.ofdma` (the model's MU PPDUs group BE frames only)".into());
    }
    None
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
        let e = parse(&bad, "t.toml").unwrap_err().to_string();
        assert!(e.contains("queue_depth") && e.contains("line 5"), "{e}");
    }

    #[test]
    fn hardware_flow_and_aql_values_that_cannot_run_are_refused_at_parse_time() {
        // Each was silently changed (rings 0 ran 1, a CPU past the rings ran modulo
        // them) or ran into a stall or a run-time error.
        let cases: [(&str, &str, &str, &str); 7] = [
            ("", "rings = 0", "", "ap.hardware.rings"),
            ("", "msdu_budget = 0", "", "ap.hardware.msdu_budget"),
            ("", "max_ppdu_us = 0.0", "", "ap.hardware.max_ppdu_us"),
            ("", "max_ppdu_us = 20000.0", "", "ap.hardware.max_ppdu_us"),
            ("aql_be_us = [0, 0]", "", "", "ap.aql_be_us"),
            ("", "rings = 3", "cpu = 3", "flows[0].cpu"),
            ("", "", "start_s = 3.0", "flows[0].start_s"),
        ];
        for (ap, hw, flow, key) in cases {
            let text = with("ath11k_series", ap, hw, "", flow, "").replace("[ap]", "duration_s = 3.0\n[ap]");
            let e = parse(&text, "t.toml").unwrap_err();
            assert_eq!((e.kind, e.key.as_deref()), (ScenarioErrorKind::BadValue, Some(key)), "{e}");
            assert!(e.line.is_some(), "{e}");
        }
        let ok = with("ath11k_series", "", "rings = 3\nmax_ppdu_us = 5484.0", "", "cpu = 2", "");
        assert!(parse(&ok, "t.toml").is_ok());
    }

    #[test]
    fn a_ping_rate_that_cannot_run_is_refused_with_its_line() {
        // 1e10 Hz rounded the interval to 0 ns and hung the run at its first instant;
        // negative or NaN meant no ping, silently.
        for hz in ["1e10", "-5.0", "nan", "inf", "1000.5"] {
            let bad = format!("{MINIMAL}[ping]\nrate_hz = {hz}\n");
            let e = parse(&bad, "t.toml").unwrap_err();
            assert_eq!(
                (e.kind, e.key.as_deref(), e.line),
                (ScenarioErrorKind::BadValue, Some("ping.rate_hz"), Some(11)),
                "{hz}: {e}"
            );
        }
        let ok = format!("{MINIMAL}[ping]\nrate_hz = 1000.0\n");
        assert_eq!(parse(&ok, "t.toml").unwrap().spec.ping.rate_hz, 1000.0);
    }

    #[test]
    fn an_unknown_station_is_refused_with_its_line() {
        let bad = MINIMAL.replace("station = \"a\"", "station = \"b\"");
        let e = parse(&bad, "t.toml").unwrap_err().to_string();
        assert!(e.contains("line 9") && e.contains("`b`"), "{e}");
    }

    #[test]
    fn a_bad_rate_is_refused_with_its_line() {
        let bad = MINIMAL.replace("vht80-1ss-mcs9-sgi", "vht80-1ss-mcs12");
        let e = parse(&bad, "t.toml").unwrap_err().to_string();
        assert!(e.contains("line 7") && e.contains("rate"), "{e}");
    }

    /// A scenario with `design`, and lines added to its `[ap]`, `[ap.hardware]`, station,
    /// flow and `[seed_figures]`.
    fn with(design: &str, ap: &str, hw: &str, sta: &str, flow: &str, seed: &str) -> String {
        format!(
            "name = \"t\"\n[ap]\ndesign = \"{design}\"\n{ap}\n[ap.hardware]\n{hw}\n[[stations]]\nname = \"a\"\n\
             rate = \"vht80-1ss-mcs9-sgi\"\n{sta}\n[[flows]]\nstation = \"a\"\n{flow}\n[seed_figures]\n{seed}\n"
        )
    }

    enum Want {
        Refused(&'static str),
        Warned(&'static str),
    }

    /// For every key that some configuration does not use: a file that sets it where it
    /// does nothing, and the error or warning that must name it.
    fn unused_key_cases() -> Vec<(&'static str, String, Want)> {
        use Want::{Refused, Warned};
        vec![
            (
                "ap.aql_be_us",
                with("stock", "aql_be_us = [500, 1000]", "", "", "", ""),
                Refused(
                    "t.toml: line 4: `ap.aql_be_us`: has no effect here (design `stock` has no Airtime Queue Limits; \
                     only `ath11k_series`, `ath11k_adapter`, `mac80211_aql` use it); remove it or change the \
                     configuration",
                ),
            ),
            (
                "ap.aql_be_us",
                with("mac80211_atf", "aql_be_us = [5000, 12000]", "", "", "", ""),
                Warned(
                    "t.toml: line 4: `ap.aql_be_us`: is the default and has no effect here (design `mac80211_atf` \
                     has no Airtime Queue Limits; only `ath11k_series`, `ath11k_adapter`, `mac80211_aql` use it)",
                ),
            ),
            (
                "ap.aql_vo_us",
                with("stock", "aql_vo_us = [500, 1000]", "", "", "", ""),
                Refused("`ap.aql_vo_us`: has no effect here (design `stock` has no Airtime Queue Limits; only"),
            ),
            (
                "ap.aql_vi_us",
                with("mac80211_rr", "aql_vi_us = [500, 1000]", "", "", "", ""),
                Refused("`ap.aql_vi_us`: has no effect here (design `mac80211_rr` has no Airtime Queue Limits; only"),
            ),
            (
                "ap.aql_bk_us",
                with("ath11k_series", "aql_bk_us = [500, 1000]", "ofdma = true", "", "", ""),
                Refused("`ap.aql_bk_us`: has no effect here (`ap.hardware.ofdma`: the MU path's downlink is best"),
            ),
            (
                "ap.aql_bk_us",
                with("mac80211_atf", "aql_bk_us = [5000, 12000]", "", "", "", ""),
                Warned("`ap.aql_bk_us`: is the default and has no effect here (design `mac80211_atf` has no Airtime"),
            ),
            (
                "ap.tx_no_pushback",
                with("stock", "tx_no_pushback = true", "", "", "", ""),
                Refused("`ap.tx_no_pushback`: has no effect here (design `stock` has no Airtime Queue Limits"),
            ),
            (
                "ap.tx_no_pushback",
                with("mac80211_rr", "tx_no_pushback = false", "", "", "", ""),
                Warned("`ap.tx_no_pushback`: is the default and has no effect here (design `mac80211_rr` has no"),
            ),
            (
                "ap.aql_adaptive",
                with("stock", "aql_adaptive = true", "", "", "", ""),
                Refused("`ap.aql_adaptive`: has no effect here (design `stock` has no Airtime Queue Limits"),
            ),
            (
                "ap.aql_adaptive",
                with("qdisc_fq_codel", "aql_adaptive = false", "", "", "", ""),
                Warned("`ap.aql_adaptive`: is the default and has no effect here (design `qdisc_fq_codel` has no"),
            ),
            (
                "ap.round_policy",
                with("qdisc_pfifo", "round_policy = \"reset_on_close\"", "", "", "", ""),
                Refused(
                    "`ap.round_policy`: has no effect here (design `qdisc_pfifo` has no mac80211 txqs (a qdisc sits \
                     in front of the driver)",
                ),
            ),
            (
                "ap.codel_target_us",
                with("qdisc_fq_codel", "codel_target_us = 5000", "", "", "", ""),
                Refused("`ap.codel_target_us`: has no effect here (design `qdisc_fq_codel` has no mac80211 txqs"),
            ),
            (
                "ap.codel_target_us",
                with("qdisc_fq_codel", "codel_target_us = 20000", "", "", "", ""),
                Warned("`ap.codel_target_us`: is the default and has no effect here"),
            ),
            (
                "ap.hardware.ppdu_stats_delay_us",
                with("mac80211_rr", "", "ppdu_stats_delay_us = 200", "", "", ""),
                Refused(
                    "line 6: `ap.hardware.ppdu_stats_delay_us`: has no effect here (design `mac80211_rr` registers \
                     no airtime;",
                ),
            ),
            (
                "ap.hardware.tx_completion_irq",
                with("mac80211_atf", "", "tx_completion_irq = \"srng\"", "", "", ""),
                Refused(
                    "`ap.hardware.tx_completion_irq`: has no effect here (design `mac80211_atf` is not ath11k (its \
                     completions arrive after a fixed delay)",
                ),
            ),
            (
                "ap.hardware.tx_completion_delay_us",
                with("ath11k_series", "", "tx_completion_irq = \"srng\"\ntx_completion_delay_us = 800", "", "", ""),
                Refused(
                    "`ap.hardware.tx_completion_delay_us`: has no effect here (completions follow the tx completion \
                     ring's interrupt moderation (`tx_completion_irq = \"srng\"`))",
                ),
            ),
            (
                "ap.hardware.rings",
                with("mac80211_rr", "", "rings = 1", "", "", ""),
                Refused(
                    "`ap.hardware.rings`: has no effect here (design `mac80211_rr` forms its aggregates in the \
                     driver (ath9k: two in the hardware queue, 4 ms, half the BlockAck window); only `stock`, \
                     `ath11k_series`, `ath11k_adapter` use it)",
                ),
            ),
            (
                "flows[].cpu",
                with("mac80211_rr", "", "", "", "cpu = 0", ""),
                Refused("`flows[0].cpu`: has no effect here (design `mac80211_rr` forms its aggregates in the driver"),
            ),
            (
                "ap.hardware.ring_entries",
                with("qdisc_pfifo", "", "ring_entries = 128", "", "", ""),
                Refused("`ap.hardware.ring_entries`: has no effect here (design `qdisc_pfifo` forms its aggregates"),
            ),
            (
                "ap.hardware.msdu_budget",
                with("mac80211_aql", "", "msdu_budget = 1000", "", "", ""),
                Refused("`ap.hardware.msdu_budget`: has no effect here (design `mac80211_aql` forms its aggregates"),
            ),
            (
                "ap.hardware.fw_queue_aggregates",
                with("mac80211_atf", "", "fw_queue_aggregates = 1", "", "", ""),
                Warned(
                    "`ap.hardware.fw_queue_aggregates`: is the default and has no effect here (design `mac80211_atf`",
                ),
            ),
            (
                "ap.hardware.fw_queue_aggregates",
                with("stock", "", "tcl_admission = \"direct\"\nfw_queue_aggregates = 2", "", "", ""),
                Refused(
                    "`ap.hardware.fw_queue_aggregates`: has no effect here (descriptors go to the firmware's queues as \
                     they are written",
                ),
            ),
            (
                "ap.hardware.tcl_admission",
                with("mac80211_rr", "", "tcl_admission = \"direct\"", "", "", ""),
                Refused("`ap.hardware.tcl_admission`: has no effect here (design `mac80211_rr` forms its aggregates"),
            ),
            (
                "ap.hardware.max_ppdu_us",
                with("mac80211_aql", "", "max_ppdu_us = 4000.0", "", "", ""),
                Refused("`ap.hardware.max_ppdu_us`: has no effect here (design `mac80211_aql` forms its aggregates"),
            ),
            (
                "ap.hardware.napi_budget",
                with("stock", "", "napi_budget = 8", "", "", ""),
                Refused(
                    "`ap.hardware.napi_budget`: has no effect here (design `stock` runs no driver round on completion",
                ),
            ),
            (
                "ap.hardware.ofdma",
                with("mac80211_aql", "", "ofdma = true", "", "", ""),
                Refused(
                    "`ap.hardware.ofdma`: has no effect here (design `mac80211_aql` is an 802.11n driver (no OFDMA)",
                ),
            ),
            (
                "ap.hardware.ofdma_max_users",
                with("ath11k_adapter", "", "ofdma_max_users = 2", "", "", ""),
                Refused("`ap.hardware.ofdma_max_users`: has no effect here (`ap.hardware.ofdma` is false"),
            ),
            (
                "ap.mu_charging",
                with("ath11k_adapter", "mu_charging = \"ru_share\"", "", "", "", ""),
                Refused("`ap.mu_charging`: has no effect here (`ap.hardware.ofdma` is false: no MU PPDU is sent"),
            ),
            (
                "ap.mu_charging",
                with("ath11k_adapter", "mu_charging = \"whole_ppdu\"", "", "", "", ""),
                Warned("`ap.mu_charging`: is the default and has no effect here"),
            ),
            (
                "ap.calibrate",
                with("ath11k_series", "calibrate = true", "", "", "", ""),
                Refused(
                    "`ap.calibrate`: has no effect here (design `ath11k_series` is not the ath11k adapter, whose PPDU \
                     stats feed the calibration; only `ath11k_adapter` use it)",
                ),
            ),
            (
                "ap.calibrate",
                with("mac80211_aql", "calibrate = false", "", "", "", ""),
                Warned("`ap.calibrate`: is the default and has no effect here (design `mac80211_aql` is not the"),
            ),
            (
                "stations[].reported_rate",
                with("stock", "", "", "reported_rate = \"vht80-1ss-mcs6-lgi\"", "", ""),
                Warned(
                    "line 10: `stations[0].reported_rate`: has no effect here (design `stock` prices no frames (no \
                     AQL); only `ath11k_series`, `ath11k_adapter`, `mac80211_aql` use it)",
                ),
            ),
            (
                "stations[].weight",
                with("stock", "", "", "weight = 1024", "", ""),
                Refused(
                    "`stations[0].weight`: has no effect here (design `stock` registers no airtime, so its deficit \
                     round robin never weighs stations; only `ath11k_series`, `ath11k_adapter`, `mac80211_atf`, \
                     `mac80211_aql` use it)",
                ),
            ),
            (
                "stations[].weight",
                with("mac80211_rr", "", "", "weight = 256", "", ""),
                Warned("`stations[0].weight`: is the default and has no effect here (design `mac80211_rr`"),
            ),
            (
                "flows[].cc",
                with("stock", "", "", "", "cc = \"reno\"", ""),
                Refused(
                    "line 13: `flows[0].cc`: has no effect here (the flow runs on stack `linux`: the Linux-like TCP \
                     always runs CUBIC); remove it or change the configuration",
                ),
            ),
            (
                "flows[].cc",
                with("stock", "", "", "", "cc = \"cubic\"", ""),
                Warned("`flows[0].cc`: is the default and has no effect here (the flow runs on stack `linux`"),
            ),
            (
                "flows[].rwnd_bytes",
                with("stock", "", "", "", "stack = \"smoltcp\"\nrwnd_bytes = 100000", ""),
                Refused(
                    "line 14: `flows[0].rwnd_bytes`: has no effect here (the flow runs on stack `smoltcp`: smoltcp's \
                     window is its socket buffer)",
                ),
            ),
            (
                "flows[].hystart",
                with("stock", "", "", "", "stack = \"smoltcp\"\nhystart = false", ""),
                Refused(
                    "`flows[0].hystart`: has no effect here (the flow runs on stack `smoltcp`: smoltcp has no HyStart)",
                ),
            ),
            (
                "flows[].stack",
                with("stock", "", "", "", "protocol = \"udp\"\nrate_mbps = 5.0\nstack = \"smoltcp\"", ""),
                Refused("line 15: `flows[0].stack`: has no effect here (the flow is UDP: it has no TCP stack)"),
            ),
            (
                "flows[].rate_mbps",
                with("stock", "", "", "", "rate_mbps = 5.0", ""),
                Refused(
                    "`flows[0].rate_mbps`: has no effect here (the flow is TCP: its rate is what congestion control \
                     finds)",
                ),
            ),
            (
                "flows[].packet_bytes",
                with("stock", "", "", "", "packet_bytes = 1200", ""),
                Refused("`flows[0].packet_bytes`: has no effect here (the flow is TCP: TCP sends full-sized segments"),
            ),
            (
                "flows[].packet_bytes",
                with("stock", "", "", "", "packet_bytes = 1500", ""),
                Warned("`flows[0].packet_bytes`: is the default and has no effect here (the flow is TCP"),
            ),
            (
                "flows[].start_s",
                with("stock", "", "", "", "stack = \"smoltcp\"\nstart_s = 1.0", ""),
                Refused(
                    "`flows[0].start_s`: has no effect here (the flow runs on stack `smoltcp`: smoltcp flows start at \
                     once and run to the end)",
                ),
            ),
            (
                "flows[].stop_s",
                with("stock", "", "", "", "stack = \"smoltcp\"\nstop_s = 1.0", ""),
                Refused("`flows[0].stop_s`: has no effect here (the flow runs on stack `smoltcp`"),
            ),
            (
                "flows[].hystart",
                with("stock", "", "", "", "protocol = \"udp\"\nrate_mbps = 5.0\nhystart = true", ""),
                Warned("`flows[0].hystart`: is the default and has no effect here (the flow is UDP)"),
            ),
            (
                "seed_figures.share_station",
                with("stock", "", "", "", "", "share_station = \"a\""),
                Warned(
                    "line 15: `seed_figures.share_station`: has no effect here (`seed_figures.airtime_share_pct` is \
                     not set)",
                ),
            ),
        ]
    }

    #[test]
    fn every_key_that_does_nothing_in_a_configuration_is_refused_or_warned_about_by_name() {
        for (key, text, want) in unused_key_cases() {
            let got = parse(&text, "t.toml");
            match want {
                Want::Refused(msg) => {
                    let e = got.expect_err(key);
                    assert_eq!(e.kind, ScenarioErrorKind::NoEffect, "{key}: {e}");
                    assert!(e.to_string().contains(msg), "{key}:\n got  {e}\n want {msg}");
                }
                Want::Warned(msg) => {
                    let r = got.unwrap_or_else(|e| panic!("{key}: {e}"));
                    assert_eq!(r.warnings.len(), 1, "{key}: {:?}", r.warnings);
                    let w = r.warnings[0].to_string();
                    assert!(w.contains(msg), "{key}:\n got  {w}\n want {msg}");
                }
            }
        }
    }

    #[test]
    fn every_key_some_configuration_does_not_use_has_a_case_above() {
        let cases = unused_key_cases();
        for k in keys::KEYS.iter().filter(|k| !matches!(k.used_by, keys::UsedBy::All)) {
            assert!(cases.iter().any(|(key, _, _)| *key == k.path), "no unused-key case for `{}`", k.path);
        }
    }

    #[test]
    fn the_same_keys_where_they_are_used_pass_without_a_warning() {
        let text = with(
            "ath11k_series",
            "aql_be_us = [500, 1000]\naql_vo_us = [1000, 2000]\ntx_no_pushback = true\nround_policy = \"reset_on_close\"\ncodel_target_us = 5000",
            "ppdu_stats_delay_us = 200\nnapi_budget = 8",
            "reported_rate = \"vht80-1ss-mcs6-lgi\"\nweight = 1024",
            "stack = \"smoltcp\"\ncc = \"reno\"",
            "airtime_share_pct = [50.0, 60.0]\nshare_station = \"a\"",
        );
        let r = parse(&text, "t.toml").unwrap();
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        let linux = with("stock", "", "", "", "rwnd_bytes = 100000\nhystart = false", "");
        assert!(parse(&linux, "t.toml").unwrap().warnings.is_empty());
    }

    #[test]
    fn a_calibrated_figure_must_be_a_seed_figure_the_table_gives() {
        let typo = with("stock", "", "", "", "", "throughput_mbps = [1.0, 2.0]\ncalibrated = [\"throughput\"]");
        let e = parse(&typo, "t.toml").unwrap_err().to_string();
        assert!(e.contains("`seed_figures.calibrated`: `throughput` is not a seed figure; use one of"), "{e}");
        let absent = with("stock", "", "", "", "", "calibrated = [\"ping_ms\"]");
        let e = parse(&absent, "t.toml").unwrap_err().to_string();
        assert!(e.contains("`ping_ms` names a figure this table does not give"), "{e}");
    }

    #[test]
    fn errors_are_typed_and_name_the_file() {
        let e = parse("name = ", "x.toml").unwrap_err();
        assert_eq!((e.kind, e.file.as_str()), (ScenarioErrorKind::Syntax, "x.toml"));
        let e = parse(&MINIMAL.replace("\"stock\"", "\"nonsense\""), "x.toml").unwrap_err();
        assert_eq!((e.kind, e.line), (ScenarioErrorKind::BadValue, Some(4)), "{e}");
        let e = parse(&MINIMAL.replace("[ap]", "[ap]\nfoo = 1"), "x.toml").unwrap_err();
        assert_eq!((e.kind, e.key.as_deref()), (ScenarioErrorKind::UnknownKey, Some("ap.foo")), "{e}");
    }

    #[test]
    fn bad_udp_values_are_refused_with_their_key_never_run() {
        for (flow, want) in [
            ("protocol = \"udp\"", "`flows[0].rate_mbps`: a UDP flow needs its rate"),
            ("protocol = \"udp\"\nrate_mbps = 0.0", "`flows[0].rate_mbps`: 0.0 is not a rate above 0"),
            ("protocol = \"udp\"\nrate_mbps = 1e300", "`flows[0].rate_mbps`: 1e300 is not a rate"),
            ("protocol = \"udp\"\nrate_mbps = 1.0\npacket_bytes = 20", "`flows[0].packet_bytes`: 20 is not an IPv4"),
            ("protocol = \"udp\"\nrate_mbps = 1.0\nendpoint = \"ap\"", "`flows[0].endpoint`: a UDP sender on the AP"),
            ("dscp = 64", "`flows[0].dscp`: 64 is not a DSCP"),
            ("start_s = 2.0\nstop_s = 1.0", "`flows[0].start_s`: `start_s` must be >= 0 and below `stop_s`"),
            ("start_s = -1.0", "`flows[0].start_s`"),
        ] {
            let e = parse(&with("stock", "", "", "", flow, ""), "t.toml").unwrap_err().to_string();
            assert!(e.contains(want), "{flow}:\n got  {e}\n want {want}");
        }
    }

    #[test]
    fn a_marked_download_runs_on_every_design_and_is_refused_by_name_with_the_best_effort_mu_path() {
        for design in [
            "stock",
            "ath11k_series",
            "ath11k_adapter",
            "mac80211_rr",
            "mac80211_atf",
            "mac80211_aql",
            "qdisc_pfifo",
            "qdisc_fq_codel",
        ] {
            parse(&with(design, "", "", "", "dscp = 46", ""), "t.toml").unwrap();
        }
        for design in ["stock", "ath11k_series"] {
            let e = parse(&with(design, "", "ofdma = true", "", "dscp = 46", ""), "t.toml").unwrap_err().to_string();
            assert!(
                e.contains("`flows[0].dscp`: 46 maps to access category VO") && e.contains("ap.hardware.ofdma"),
                "{e}"
            );
        }
        // A marked upload runs with OFDMA (its ACKs come down as BE there).
        let upload = with("ath11k_series", "", "ofdma = true", "", "dscp = 46\ndirection = \"upload\"", "");
        parse(&upload, "t.toml").unwrap();
    }
}
