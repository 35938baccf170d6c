//! What a run measures, per flow and per station, and the summaries the report prints.

pub mod airtime;
pub mod series;
pub mod stats;

use serde::Serialize;

/// Figures of one flow in one run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowResult {
    /// Station number.
    pub station: u16,
    /// Whether it is a UDP stream (else TCP).
    pub udp: bool,
    /// `download` (to the station) or `upload` (from it).
    pub direction: &'static str,
    /// `tcp` or `udp`.
    pub protocol: &'static str,
    /// The access category of its marking (`BK`, `BE`, `VI`, `VO`): its DSCP's, which
    /// its packets take at the station and, where the design has them, at the access
    /// point (a TCP flow's ACKs too).
    pub ac: &'static str,
    /// Goodput after warm-up, over the flow's active time, Mbit/s (TCP: payload; UDP:
    /// IPv4 packets).
    pub throughput_mbps: f64,
    /// UDP: packets sent after the warm-up.
    pub udp_sent: u64,
    /// UDP: of those, packets that never arrived (dropped, or still queued at the end).
    pub udp_lost: u64,
    /// UDP: mean one-way delay, ms.
    pub udp_delay_mean_ms: f64,
    /// UDP: largest one-way delay, ms.
    pub udp_delay_max_ms: f64,
    /// Mean TCP RTT per acknowledged segment, ms.
    pub tcp_rtt_mean_ms: f64,
    /// Max TCP RTT per acknowledged segment, ms.
    pub tcp_rtt_max_ms: f64,
    /// Mean of the sender's smoothed RTT (as `tcp_info` reports it), sampled at each
    /// ACK, ms (Linux-like stack; the per-segment mean otherwise).
    pub tcp_srtt_mean_ms: f64,
    /// Max of the smoothed RTT, ms.
    pub tcp_srtt_max_ms: f64,
    /// Packets of this flow the AP dropped.
    pub ap_drops: u64,
    /// Segments the sender retransmitted (Linux-like stack).
    pub retransmissions: u64,
    /// Retransmission timeouts (Linux-like stack).
    pub timeouts: u64,
    /// Of those, timeouts found spurious by their timestamps and undone.
    pub timeouts_undone: u64,
    /// (time s, RTT ms) samples, thinned for plots.
    #[serde(skip)]
    pub rtt_series: Vec<(f32, f32)>,
    /// The per-segment RTT samples after warm-up, sorted, thinned to at most 1000
    /// evenly spaced order statistics (quantiles), ms: the CDF.
    pub rtt_cdf: Vec<f32>,
    /// Per sample of [`RunResult::sample_times_s`]: throughput over the interval, Mbit/s.
    pub throughput_series_mbps: Vec<f32>,
    /// Per sample: congestion window, segments (null without the Linux-like TCP).
    pub cwnd_series_segments: Vec<f32>,
    /// Per sample: smoothed RTT, ms (null before the first measurement).
    pub srtt_series_ms: Vec<f32>,
}

/// Figures of one station in one run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StationResult {
    /// Its name.
    pub name: String,
    /// Throughput of its flows (both directions), Mbit/s.
    pub throughput_mbps: f64,
    /// Ping RTT median, ms; `None` (JSON `null`) when no ping was answered.
    pub ping_p50_ms: Option<f64>,
    /// Ping RTT 99th percentile, ms; `None` (JSON `null`) when no ping was answered.
    pub ping_p99_ms: Option<f64>,
    /// Pings sent and not answered, per cent of those sent.
    pub ping_loss_pct: f64,
    /// Median BE AQL pending, us (the `aql` file, sampled every ms).
    pub aql_pending_p50_us: f64,
    /// Share of the AP's downlink airtime, per cent.
    pub airtime_share_pct: f64,
    /// The AP's successful exchanges with it, per cent of the measured time.
    pub downlink_airtime_pct: f64,
    /// Its own successful exchanges (data and TCP ACKs), per cent of the measured time.
    pub uplink_airtime_pct: f64,
    /// Median A-MPDU size of the AP's transmissions to it, frames.
    pub ampdu_p50: f64,
    /// Every ping answered after the warm-up: (time s, RTT ms).
    pub ping_series: Vec<(f32, f32)>,
    /// Per sample of [`RunResult::sample_times_s`]: BE AQL pending, us.
    pub aql_pending_series_us: Vec<f32>,
    /// A lossy or changing link's figures (`wifi::link`); none for an ideal link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<crate::wifi::link::LinkResult>,
}

/// A figure per access category.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PerAc {
    /// Background.
    pub bk: u64,
    /// Best effort.
    pub be: u64,
    /// Video.
    pub vi: u64,
    /// Voice.
    pub vo: u64,
}

impl PerAc {
    /// From an array in mac80211's order (`Ac::index`: VO, VI, BE, BK).
    pub fn from_mac80211_order(v: [u64; 4]) -> PerAc {
        PerAc { vo: v[0], vi: v[1], be: v[2], bk: v[3] }
    }
}

/// Everything one run measured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunResult {
    /// Run number.
    pub run: u32,
    /// Seed used.
    pub seed: u64,
    /// Times of the time-series samples (`sample_interval_ms` apart over the measured
    /// interval), s.
    pub sample_times_s: Vec<f32>,
    /// Flows.
    pub flows: Vec<FlowResult>,
    /// Stations.
    pub stations: Vec<StationResult>,
    /// Skipped selections on BE (a round ended at an already-served txq).
    pub skipped_selections: u64,
    /// Round starts that found BE over its PHY limit.
    pub closed_rounds: u64,
    /// Frames dropped at a full ring.
    pub ring_drops: u64,
    /// Frames dropped by FQ-CoDel.
    pub txq_drops: u64,
    /// Collisions on the medium.
    pub collisions: u64,
    /// Frames dropped at the retry limit (30 attempts, ath9k's `ATH_MAX_SW_RETRIES`),
    /// both directions: lost subframes and collided exchanges alike.
    pub retry_drops: u64,
    /// Transmit airtime the AP registered with its scheduler over the whole run, per
    /// access category and summed over stations, in us (the scheduler's
    /// `StationAirtime::tx_us_per_ac`; zero on designs that register none).
    pub registered_tx_us: PerAc,
    /// Where the air went: downlink, uplink, collided, idle.
    pub airtime: airtime::AirtimeBreakdown,
    /// Packets that crossed a link or the air.
    pub packets: u64,
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds the run took.
    pub wall_s: f64,
    /// The AQL estimate against the air (the adapter design, with `ap.calibrate` set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate_vs_air: Option<crate::ap::ath11k_adapter::EstimateVsAir>,
}
