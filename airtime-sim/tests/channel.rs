//! The channel: frame errors cost airtime as the standard's retries do, and a rate drop
//! reaches AQL's price within one rate-control interval.

use airtime_sim::metrics::RunResult;
use airtime_sim::scenario;
use airtime_sim::sim::run::run_one;
use airtime_sim::wifi::link::LinkResult;
use airtime_sim::wifi::minstrel::STATS_INTERVAL_NS;

/// One VHT80 MCS9 station on the series design, a saturating UDP download, no ping;
/// `station` adds lines to the station.
fn run(station: &str, duration_s: f64) -> RunResult {
    run_on("ath11k_series", station, duration_s)
}

/// [`run`] on `design`.
fn run_on(design: &str, station: &str, duration_s: f64) -> RunResult {
    let text = format!(
        "name = \"ch\"\nduration_s = {duration_s:.1}\nwarmup_s = 1.0\nruns = 1\nseed = 5\n[ap]\ndesign = \"{design}\"\n\
         [ping]\nrate_hz = 0.0\n[[stations]]\nname = \"a\"\nrate = \"vht80-1ss-mcs9-sgi\"\n{station}\n\
         [[flows]]\nstation = \"a\"\nprotocol = \"udp\"\nrate_mbps = 600.0\n"
    );
    let sc = scenario::parse(&text, "ch.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(sc.warnings.is_empty(), "{:?}", sc.warnings);
    run_one(&sc, 0).unwrap()
}

fn link(r: &RunResult) -> &LinkResult {
    r.stations[0].link.as_ref().expect("the station has a link")
}

#[test]
fn a_subframe_error_rate_p_costs_at_least_one_over_one_minus_p_the_airtime_the_estimator_prices_up_to_sampling_noise() {
    // A schedule that keeps the rate gives the clean station a measured link too.
    let clean = run("rate_schedule = [[0.0, \"vht80-1ss-mcs9-sgi\"]]", 3.0);
    let (c, p) = (link(&clean), 0.2);
    let lossy = run(&format!("frame_error_rate = {p}"), 3.0);
    let l = link(&lossy);
    assert_eq!(c.subframes_sent, c.subframes_acked);
    // Every attempt is a subframe of a PPDU: attempts per delivered frame grow by
    // 1/(1-p), and airtime per priced airtime by that and a little more: after a loss the
    // BlockAck window lets an A-MPDU carry its resent frames and only the new ones that
    // fit within WinStart + 63 (802.11-2020 10.25.6), so some aggregates are shorter and
    // their preamble, SIFS and BlockAck weigh more (1.31 in this run).
    // The losses are random draws: the attempts per frame of one 3 s run lie within
    // `noise` of 1/(1-p), and the airtime ratio, which they set from below, is held to
    // the same floor: 1/(1-p) less that sampling noise.
    let noise = 0.02;
    let attempts = l.subframes_sent as f64 / l.subframes_acked as f64;
    assert!((attempts - 1.0 / (1.0 - p)).abs() < noise, "attempts per frame {attempts}");
    let ratio = l.spent_over_priced() / c.spent_over_priced();
    assert!(
        ratio > 1.0 / (1.0 - p) - noise && ratio < 1.4,
        "airtime per priced airtime {ratio} (clean {})",
        c.spent_over_priced()
    );
    assert!((c.spent_over_priced() - 1.0).abs() < 0.05, "clean {}", c.spent_over_priced());
    assert_eq!(l.retry_drops, 0, "at p = 0.2 no frame reaches 30 attempts");
    // The receiver's reorder buffer keeps the stream whole: what is lost is airtime.
    let f = &lossy.flows[0];
    assert!(
        f.throughput_mbps > 0.7 * clean.flows[0].throughput_mbps,
        "{} vs {}",
        f.throughput_mbps,
        clean.flows[0].throughput_mbps
    );
}

/// The reported rate series of a Minstrel-HT station whose channel drops to `to` at 2 s,
/// its rate just before the drop, and when (after the drop) it first reports `at_most`
/// Mbit/s or less.
fn drop_to(to: &str, at_most: f32) -> (Vec<(f32, f32)>, f32, f64) {
    let r = run(&format!("rate_control = \"minstrel_ht\"\nrate_schedule = [[2.0, \"{to}\"]]"), 3.0);
    let series = link(&r).reported_rate_series.clone();
    let before = series.iter().rfind(|&&(t, _)| t < 2.0).expect("a rate before the drop").1;
    let t = series.iter().find(|&&(t, m)| t >= 2.0 && m <= at_most).map_or(f64::INFINITY, |&(t, _)| f64::from(t));
    (series, before, t - 2.0)
}

#[test]
fn a_one_step_rate_drop_raises_the_airtime_price_within_one_rate_control_interval() {
    // mac80211's update_interval is 100 ms; Minstrel-HT folds its statistics every half.
    let (series, before, lag_s) = drop_to("vht80-1ss-mcs8-sgi", 390.0);
    assert!(before > 400.0, "Minstrel settled on MCS9 (433 Mbit/s) before the drop: {series:?}");
    assert!(lag_s <= 2.0 * STATS_INTERVAL_NS as f64 / 1e9, "price followed after {lag_s} s: {series:?}");
    let after = series.iter().rfind(|&&(t, _)| t < 3.0).unwrap().1;
    assert!(after <= 390.0, "and stays there: {series:?}");
    use airtime_est::{Bandwidth, Rate};
    let price =
        |mcs| airtime_est::expected_tx_airtime_us(Rate::vht(mcs, 1, Bandwidth::Mhz80, true).unwrap(), 1542, true);
    assert!(price(8) > price(9), "{} vs {}", price(8), price(9));
}

#[test]
fn a_deep_rate_drop_reaches_the_price_as_the_probability_average_decays() {
    // From MCS9 to MCS4 the best rate moves once 0.75^k x 433 < 0.9 x 195, k >= 4 folds;
    // the rates in between fail on the way down, and one no longer tried keeps its old
    // probability, so the price lags the air by several folds (the lag AQL lives with).
    let (series, _, lag_s) = drop_to("vht80-1ss-mcs4-sgi", 195.0);
    let folds = lag_s / (STATS_INTERVAL_NS as f64 / 1e9);
    assert!((3.0..=12.0).contains(&folds), "followed after {lag_s} s ({folds} folds): {series:?}");
    assert!(series.last().unwrap().1 <= 195.0, "and stays there: {series:?}");
}

#[test]
fn a_lossy_link_at_a_fixed_rate_keeps_the_stations_reported_rate() {
    let r = run("frame_error_rate = 0.1\nreported_rate = \"vht80-1ss-mcs6-lgi\"", 2.0);
    let series = &link(&r).reported_rate_series;
    assert_eq!(series.len(), 1, "{series:?}");
    assert!((series[0].1 - 263.25).abs() < 0.1, "VHT80 MCS6 LGI: {series:?}");
}

#[test]
fn bad_channel_values_are_refused_with_their_key() {
    let base =
        "name = \"ch\"\n[ap]\ndesign = \"ath11k_series\"\n[[stations]]\nname = \"a\"\nrate = \"vht80-1ss-mcs9-sgi\"\n";
    for (lines, want) in [
        ("frame_error_rate = 0.95", "`stations[0].frame_error_rate`: 0.95 is not a probability"),
        ("frame_error_rate = -0.1", "`stations[0].frame_error_rate`"),
        ("walk_away = [1.0, 2.0, 9]", "`stations[0].walk_away`: MCS 9 is not below"),
        ("walk_away = [2.0, 1.0, 3]", "`stations[0].walk_away`: [2, 1, ..] is not a span"),
        ("rate_control = \"minstrel_ht\"\nreported_rate = \"vht80-1ss-mcs6-lgi\"", "`stations[0].reported_rate`"),
        ("rate_schedule = [[1.0, \"he80-1ss-mcs3\"]]", "keep the station's family"),
        ("rate_schedule = [[-1.0, \"vht80-1ss-mcs3\"]]", "time -1 is not >= 0"),
        ("rate_schedule = [[1.0, \"vht80-1ss-mcs3\"]]\nwalk_away = [1.0, 2.0, 3]", "not both"),
    ] {
        let e = scenario::parse(&format!("{base}{lines}\n"), "ch.toml").unwrap_err().to_string();
        assert!(e.contains(want), "{lines}:\n got  {e}\n want {want}");
    }
    let ht = "name = \"ch\"\n[ap]\ndesign = \"ath11k_series\"\n[[stations]]\nname = \"a\"\nrate = \"ht20-mcs15\"\n";
    let e = scenario::parse(&format!("{ht}walk_away = [1.0, 2.0, 3]\n"), "ch.toml").unwrap_err().to_string();
    assert!(e.contains("within its streams (from MCS 8)"), "{e}");
}

/// A saturated TCP download marked `dscp` to one VHT80 MCS9 station on `design`, whose
/// station lines are `station`.
fn marked_download(design: &str, dscp: u8, station: &str) -> f64 {
    let text = format!(
        "name = \"ac\"\nduration_s = 3.0\nwarmup_s = 1.0\nruns = 1\nseed = 5\n[ap]\ndesign = \"{design}\"\n\
         [[stations]]\nname = \"a\"\nrate = \"vht80-1ss-mcs9-sgi\"\n{station}\n\
         [[flows]]\nstation = \"a\"\nhystart = false\ndscp = {dscp}\n"
    );
    let sc = scenario::parse(&text, "ac.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    run_one(&sc, 0).unwrap().flows[0].throughput_mbps
}

#[test]
fn a_download_in_any_access_category_runs_over_a_lossy_or_rate_controlled_link() {
    // The AP's VI/VO/BK EDCA functions pick the link's rate as its BE one does; before,
    // they did not, the exchange went out with no rate chosen, and its frames never
    // completed, so the download stopped for good. On the host-aggregating designs the
    // lost subframes went back to a firmware queue those designs never read.
    for design in ["ath11k_series", "mac80211_aql", "qdisc_fq_codel"] {
        for station in [
            "frame_error_rate = 0.2",
            "rate_schedule = [[0.0, \"vht80-1ss-mcs9-sgi\"]]",
            "rate_control = \"minstrel_ht\"",
        ] {
            let be = marked_download(design, 0, station);
            for dscp in [46, 34, 8] {
                let t = marked_download(design, dscp, station);
                eprintln!("{design}, {station}: DSCP {dscp} {t:.0} Mbit/s, BE {be:.0}");
                assert!(t > 0.6 * be, "{design}, {station}: DSCP {dscp} {t} Mbit/s against BE {be}");
            }
        }
    }
}

#[test]
fn after_a_loss_no_ampdu_carries_a_sequence_number_past_the_block_ack_window() {
    // At p = 0.2 nearly every 64-frame A-MPDU loses some; without the window across
    // A-MPDUs the next ones carried new frames past the holes and the station's reorder
    // buffer held well over a window. With it, the buffer holds at most 63 (the window
    // less the hole), and the stream still flows.
    let lossy = run("frame_error_rate = 0.2", 3.0);
    let l = link(&lossy);
    assert!(l.reorder_held_max > 0 && l.reorder_held_max < 64, "held at most {}", l.reorder_held_max);
    assert!(lossy.flows[0].throughput_mbps > 150.0, "{} Mbit/s", lossy.flows[0].throughput_mbps);
}

#[test]
fn on_a_host_aggregating_design_a_loss_is_resent_in_aggregates_that_keep_to_the_block_ack_window() {
    // ath9k resends the subframes a BlockAck missed from its TID's retry queue, in the
    // next aggregates with new frames, and numbers no new frame past the window. Before,
    // they went back to the hardware queue as a PPDU of their own: the A-MPDUs fell to
    // one subframe (median) and a download got about 50 Mbit/s.
    for design in ["mac80211_aql", "qdisc_pfifo"] {
        let lossy = run_on(design, "frame_error_rate = 0.2", 3.0);
        let l = link(&lossy);
        assert!(l.reorder_held_max > 0 && l.reorder_held_max < 64, "{design}: held at most {}", l.reorder_held_max);
        assert_eq!(l.retry_drops, 0, "{design}: at p = 0.2 no frame reaches 30 attempts");
        let attempts = l.subframes_sent as f64 / l.subframes_acked as f64;
        assert!((attempts - 1.0 / 0.8).abs() < 0.02, "{design}: attempts per frame {attempts}");
        assert!(lossy.stations[0].ampdu_p50 > 4.0, "{design}: A-MPDU median {}", lossy.stations[0].ampdu_p50);
        assert!(lossy.flows[0].throughput_mbps > 150.0, "{design}: {} Mbit/s", lossy.flows[0].throughput_mbps);
    }
}
