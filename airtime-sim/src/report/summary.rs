//! From runs to figures: each figure of an arm with our per-run values, the seed's range,
//! whether a model constant was calibrated on it, and whether it meets its target
//! (throughput and RTT within ±25 % of the seed's range, airtime shares within ±5
//! points).

use crate::metrics::stats::{ci95_half_width, jain_index, mean};
use crate::metrics::{RunResult, StationResult};
use crate::scenario::{Direction, Protocol, Range, Resolved};
use crate::sim::run::ArmResult;
use serde::Serialize;

/// How a figure is judged against the seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Tolerance {
    /// Within ±25 % of the seed's range.
    Relative25,
    /// Within ±5 percentage points.
    Points5,
    /// Reported, no target.
    None,
}

/// One figure of one arm.
#[derive(Clone, Debug, Serialize)]
pub struct Figure {
    /// Key, as in `[seed_figures]`.
    pub key: &'static str,
    /// Label with unit.
    pub label: String,
    /// Our value per run, over the runs that have one (a ping median needs an answered
    /// ping): empty when none has.
    pub ours: Vec<f64>,
    /// The seed's range.
    pub seed: Option<Range>,
    /// Calibrated (C): the figure depends on a choice fitted to the seed (listed in
    /// `[seed_figures] calibrated`; README: "Fitted choices"); otherwise predicted (P).
    pub calibrated: bool,
    /// How it is judged.
    pub tolerance: Tolerance,
    /// Whether our mean meets the target (None without a seed figure or a target).
    pub within_target: Option<bool>,
    /// Half-width of the t-based 95 % confidence interval of the mean over runs (None
    /// with one run).
    pub ci95_half_width: Option<f64>,
}

impl Figure {
    /// Mean of our runs.
    pub fn mean(&self) -> f64 {
        mean(&self.ours)
    }
}

/// Whether `v` meets the target for the seed's `range`.
pub fn within(v: f64, range: Range, tol: Tolerance) -> Option<bool> {
    let [lo, hi] = range;
    match tol {
        Tolerance::Relative25 => Some(v >= lo * 0.75 && v <= hi * 1.25),
        Tolerance::Points5 => Some(v >= lo - 5.0 && v <= hi + 5.0),
        Tolerance::None => None,
    }
}

/// The figures of one arm.
#[derive(Clone, Debug, Serialize)]
pub struct ArmSummary {
    /// Arm name.
    pub name: String,
    /// Title.
    pub title: String,
    /// Table group.
    pub group: String,
    /// Figures.
    pub figures: Vec<Figure>,
    /// Packets simulated per wall-clock second over the arm's runs.
    pub packets_per_wall_s: f64,
    /// The scenario's note on what the model lacks, if any.
    pub note: Option<String>,
    /// Per station, its figures (means over runs).
    pub stations: Vec<StationSummary>,
    /// Figures that had not settled within the measured interval
    /// ([`super::steady::unsettled`]).
    pub warnings: Vec<String>,
}

/// One station's figures in an arm, means over runs.
#[derive(Clone, Debug, Serialize)]
pub struct StationSummary {
    /// Its name.
    pub name: String,
    /// Throughput of its flows, Mbit/s.
    pub throughput_mbps: f64,
    /// 95 % CI half-width of that throughput over runs.
    pub throughput_ci95_mbps: Option<f64>,
    /// Ping RTT median, ms: the mean over the runs with an answered ping; `None` (JSON
    /// `null`) when no run had one.
    pub ping_p50_ms: Option<f64>,
    /// Ping RTT 99th percentile, ms, as `ping_p50_ms`.
    pub ping_p99_ms: Option<f64>,
    /// Pings sent and not answered, per cent of those sent (mean over runs).
    pub ping_loss_pct: f64,
    /// Median A-MPDU size, frames.
    pub ampdu_p50: f64,
    /// Share of the AP's downlink airtime, per cent (its uplink not counted).
    pub airtime_share_pct: f64,
    /// Its successful exchanges both ways (the AP's to it and its own), per cent of the
    /// measured time.
    pub down_up_airtime_pct: f64,
    /// Median BE AQL pending, us.
    pub aql_pending_p50_us: f64,
}

/// The stations whose fairness the arm's Jain indices measure: those with a flow (a
/// station without traffic claims no airtime), or all when no station has one.
fn fairness_stations(sc: &Resolved) -> Vec<usize> {
    let mut with_flow: Vec<usize> = sc.flow_station.iter().map(|&s| usize::from(s)).collect();
    with_flow.sort_unstable();
    with_flow.dedup();
    if with_flow.is_empty() { (0..sc.spec.stations.len()).collect() } else { with_flow }
}

/// Jain's index per run of `get` over `stations`; `None` if any run has nothing to share.
fn jain_per_run(arm: &ArmResult, stations: &[usize], get: fn(&StationResult) -> f64) -> Option<Vec<f64>> {
    arm.runs
        .iter()
        .map(|r| jain_index(&stations.iter().filter_map(|&s| r.stations.get(s).map(get)).collect::<Vec<_>>()))
        .collect()
}

fn station_summaries(arm: &ArmResult) -> Vec<StationSummary> {
    let runs = &arm.runs;
    let names = arm.scenario.spec.stations.iter().map(|s| s.name.clone());
    names
        .enumerate()
        .map(|(s, name)| {
            let of = |get: fn(&StationResult) -> f64| -> Vec<f64> {
                runs.iter().filter_map(|r| r.stations.get(s).map(get)).collect()
            };
            let tput = of(|st| st.throughput_mbps);
            StationSummary {
                name,
                throughput_mbps: mean(&tput),
                throughput_ci95_mbps: ci95_half_width(&tput),
                ping_p50_ms: mean_of_present(runs.iter().filter_map(|r| r.stations.get(s)?.ping_p50_ms)),
                ping_p99_ms: mean_of_present(runs.iter().filter_map(|r| r.stations.get(s)?.ping_p99_ms)),
                ping_loss_pct: mean(&of(|st| st.ping_loss_pct)),
                ampdu_p50: mean(&of(|st| st.ampdu_p50)),
                airtime_share_pct: mean(&of(|st| st.airtime_share_pct)),
                down_up_airtime_pct: mean(&of(|st| st.downlink_airtime_pct + st.uplink_airtime_pct)),
                aql_pending_p50_us: mean(&of(|st| st.aql_pending_p50_us)),
            }
        })
        .collect()
}

/// The mean of the values present; `None` when there is none.
fn mean_of_present(v: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = v.collect();
    (!v.is_empty()).then(|| mean(&v))
}

fn share_station(sc: &Resolved) -> usize {
    sc.spec
        .seed_figures
        .as_ref()
        .and_then(|f| f.share_station.as_ref())
        .and_then(|n| sc.spec.stations.iter().position(|s| &s.name == n))
        .unwrap_or(0)
}

/// Summarises an arm.
pub fn summarise(arm: &ArmResult) -> ArmSummary {
    let sc = &arm.scenario;
    let sf = sc.spec.seed_figures.clone().unwrap_or_default();
    let share = share_station(sc);
    type Get = fn(&RunResult, usize) -> f64;
    let rows: [(&'static str, &'static str, Option<Range>, Tolerance, Get); 9] = [
        ("throughput_mbps", "Mbit/s, flow 0", sf.throughput_mbps, Tolerance::Relative25, |r, _| {
            r.flows.first().map_or(0.0, |f| f.throughput_mbps)
        }),
        ("tcp_rtt_mean_ms", "TCP srtt mean ms", sf.tcp_rtt_mean_ms, Tolerance::Relative25, |r, _| {
            r.flows.first().map_or(0.0, |f| f.tcp_srtt_mean_ms)
        }),
        ("tcp_rtt_max_ms", "TCP srtt max ms", sf.tcp_rtt_max_ms, Tolerance::Relative25, |r, _| {
            r.flows.first().map_or(0.0, |f| f.tcp_srtt_max_ms)
        }),
        ("tcp_seg_rtt_mean_ms", "per-segment RTT mean", None, Tolerance::None, |r, _| {
            r.flows.first().map_or(0.0, |f| f.tcp_rtt_mean_ms)
        }),
        ("tcp_seg_rtt_max_ms", "per-segment RTT max", None, Tolerance::None, |r, _| {
            r.flows.first().map_or(0.0, |f| f.tcp_rtt_max_ms)
        }),
        ("ping_ms", "ping median ms", sf.ping_ms, Tolerance::Relative25, |r, _| {
            // A run without an answered ping has no median: NaN here, left out below.
            r.stations.first().and_then(|s| s.ping_p50_ms).unwrap_or(f64::NAN)
        }),
        ("aql_pending_us", "aql pending p50 us", sf.aql_pending_us, Tolerance::Relative25, |r, _| {
            r.stations.first().map_or(0.0, |s| s.aql_pending_p50_us)
        }),
        ("airtime_share_pct", "AP downlink share %", sf.airtime_share_pct, Tolerance::Points5, |r, s| {
            r.stations.get(s).map_or(0.0, |s| s.airtime_share_pct)
        }),
        ("skipped_selections", "skipped selections", sf.skipped_selections, Tolerance::None, |r, _| {
            r.skipped_selections as f64
        }),
    ];
    let mut figures = Vec::new();
    for (key, label, seed, tolerance, get) in rows {
        // Runs without the figure (a ping median where no ping was answered) are left out.
        let ours: Vec<f64> = arm.runs.iter().map(|r| get(r, share)).filter(|v| !v.is_nan()).collect();
        // Figures without a seed value are shown only where they say something.
        let always = matches!(
            key,
            "throughput_mbps"
                | "tcp_rtt_mean_ms"
                | "tcp_rtt_max_ms"
                | "tcp_seg_rtt_mean_ms"
                | "tcp_seg_rtt_max_ms"
                | "ping_ms"
        );
        let shows = always
            || seed.is_some()
            || (key == "airtime_share_pct" && sc.spec.stations.len() > 1)
            || (key == "aql_pending_us" && ours.iter().any(|v| *v > 0.0));
        let flow0_udp = sc.spec.flows.first().is_some_and(|f| f.protocol == Protocol::Udp);
        let no_tcp = (sc.spec.flows.is_empty() && (key.starts_with("tcp") || key == "throughput_mbps"))
            || (flow0_udp && key.starts_with("tcp"));
        if !shows || no_tcp {
            continue;
        }
        // No value in any run (every ping lost) misses a seed figure.
        let within_target =
            seed.and_then(|s| if ours.is_empty() { Some(false) } else { within(mean(&ours), s, tolerance) });
        let ping = key == "ping_ms";
        figures.push(Figure {
            key,
            label: label.to_string(),
            ours,
            seed,
            calibrated: sf.calibrated.iter().any(|c| c == key),
            tolerance,
            within_target,
            ci95_half_width: None,
        });
        // Beside the ping median: the share of pings lost, where any was.
        let loss: Vec<f64> = arm.runs.iter().map(|r| r.stations.first().map_or(0.0, |s| s.ping_loss_pct)).collect();
        if ping && loss.iter().any(|l| *l > 0.0) {
            figures.push(Figure {
                key: "ping_loss_pct",
                label: "ping loss %".to_string(),
                ours: loss,
                seed: None,
                calibrated: false,
                tolerance: Tolerance::None,
                within_target: None,
                ci95_half_width: None,
            });
        }
    }
    // Further flows: their rate; every UDP flow: its loss and one-way delay (no seed
    // figures).
    for (j, fs) in sc.spec.flows.iter().enumerate() {
        let udp = fs.protocol == Protocol::Udp;
        let dir = match fs.direction {
            Direction::Download => "to",
            Direction::Upload => "from",
        };
        let get = |f: fn(&crate::metrics::FlowResult) -> f64| -> Vec<f64> {
            arm.runs.iter().map(|r| r.flows.get(j).map_or(0.0, f)).collect()
        };
        let mut rows: Vec<(&'static str, String, Vec<f64>)> = Vec::new();
        if j > 0 {
            let label = if udp {
                format!("Mbit/s, UDP {dir} {}", fs.station.get_ref())
            } else {
                format!("Mbit/s to {}", fs.station.get_ref())
            };
            rows.push(("throughput_mbps", label, get(|f| f.throughput_mbps)));
        }
        if udp {
            let station = fs.station.get_ref();
            rows.push((
                "udp_loss_pct",
                format!("UDP loss %, flow {j} {dir} {station}"),
                get(|f| if f.udp_sent > 0 { 100.0 * f.udp_lost as f64 / f.udp_sent as f64 } else { 0.0 }),
            ));
            rows.push(("udp_delay_mean_ms", format!("UDP delay mean ms, flow {j}"), get(|f| f.udp_delay_mean_ms)));
        }
        for (key, label, ours) in rows {
            figures.push(Figure {
                key,
                label,
                ours,
                seed: None,
                calibrated: false,
                tolerance: Tolerance::None,
                within_target: None,
                ci95_half_width: None,
            });
        }
    }
    // Fairness between the stations with traffic, where there are several.
    let fair = fairness_stations(sc);
    if fair.len() > 1 {
        type Of = fn(&StationResult) -> f64;
        let indices: [(&'static str, &str, Of); 2] = [
            // Each station's air both ways: the AP's downlink share alone would call a
            // downloader beside an uploader unfair however the air is split.
            ("jain_airtime", "Jain index, air d+u", |s| s.downlink_airtime_pct + s.uplink_airtime_pct),
            ("jain_throughput", "Jain index, Mbit/s", |s| s.throughput_mbps),
        ];
        for (key, label, get) in indices {
            let Some(ours) = jain_per_run(arm, &fair, get) else { continue };
            figures.push(Figure {
                key,
                label: label.to_string(),
                ours,
                seed: None,
                calibrated: false,
                tolerance: Tolerance::None,
                within_target: None,
                ci95_half_width: None,
            });
        }
    }
    for f in &mut figures {
        f.ci95_half_width = ci95_half_width(&f.ours);
    }
    let packets: u64 = arm.runs.iter().map(|r| r.packets).sum();
    let wall: f64 = arm.runs.iter().map(|r| r.wall_s).sum();
    ArmSummary {
        name: sc.spec.name.clone(),
        title: sc.spec.title.clone(),
        group: sc.spec.group.clone(),
        figures,
        packets_per_wall_s: if wall > 0.0 { packets as f64 / wall } else { 0.0 },
        note: sf.note.clone(),
        stations: station_summaries(arm),
        warnings: super::steady::unsettled(arm),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_25_percent_or_5_points_around_the_seed_range() {
        assert_eq!(within(76.0, [101.0, 101.0], Tolerance::Relative25), Some(true));
        assert_eq!(within(75.0, [101.0, 101.0], Tolerance::Relative25), Some(false));
        assert_eq!(within(82.0, [74.0, 77.0], Tolerance::Points5), Some(true));
        assert_eq!(within(83.0, [74.0, 77.0], Tolerance::Points5), Some(false));
        assert_eq!(within(1.0, [2.0, 2.0], Tolerance::None), None);
    }
}
