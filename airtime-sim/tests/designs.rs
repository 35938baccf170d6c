//! The queueing-design comparison on the ath9k-shaped driver: aggregates as ath9k forms
//! them, per-station latency, airtime fairness.

use airtime_sim::metrics::RunResult;
use airtime_sim::scenario::{self, Resolved};
use airtime_sim::sim::run::{Overrides, run_one};

fn arm(name: &str, duration_s: f64) -> Resolved {
    let mut a = scenario::suite::named("designs").unwrap().into_iter().find(|a| a.spec.name == name).unwrap();
    // The warm-up the runs had when `--duration` still shrank it (a quarter, at most 2 s).
    let warmup_s = Some((duration_s / 4.0).min(2.0));
    Overrides { seed: Some(7), duration_s: Some(duration_s), warmup_s, runs: Some(1) }.apply(&mut a).unwrap();
    a
}

fn station<'a>(r: &'a RunResult, name: &str) -> &'a airtime_sim::metrics::StationResult {
    r.stations.iter().find(|s| s.name == name).unwrap()
}

#[test]
fn fast_ht20_mcs15_stations_get_aggregates_near_half_the_block_ack_window_not_two_frames() {
    for name in ["designs-mac80211-rr", "designs-mac80211-atf"] {
        let r = run_one(&arm(name, 6.0), 0).unwrap();
        for fast in ["fast1", "fast2"] {
            // ath_tx_form_aggr: at most 32 subframes (h_baw), 64 KiB within 4 ms.
            let n = station(&r, fast).ampdu_p50;
            assert!((28.0..=32.0).contains(&n), "{name} {fast}: median A-MPDU {n}");
        }
        // HT20 MCS0: 4 ms holds two 1500-byte subframes.
        assert_eq!(station(&r, "slow").ampdu_p50, 2.0, "{name}");
    }
}

#[test]
fn without_airtime_fairness_slow_and_fast_stations_see_different_ping() {
    // Before mac80211's txqs (ath9k's per-TID buffers under a qdisc), the slow station's
    // ping waits behind its own TID buffer, drained two subframes per 4 ms aggregate.
    for name in ["designs-qdisc-pfifo", "designs-qdisc-fq-codel"] {
        let r = run_one(&arm(name, 6.0), 0).unwrap();
        let (f1, f2, slow) = (station(&r, "fast1"), station(&r, "fast2"), station(&r, "slow"));
        let p50 = |s: &airtime_sim::metrics::StationResult| s.ping_p50_ms.expect("answered pings");
        let fast = p50(f1).max(p50(f2));
        assert!(p50(slow) > 3.0 * fast, "{name}: slow {} vs fast {fast} ms", p50(slow));
    }
    // Over mac80211's FQ-CoDel txqs the ping is a sparse flow served first at its txq's
    // turn: the stations differ only by their aggregates' duration (4 ms against 2.7 ms),
    // no longer by their queues.
    let rr = run_one(&arm("designs-mac80211-rr", 6.0), 0).unwrap();
    let (f1, slow) = (station(&rr, "fast1"), station(&rr, "slow"));
    let p50 = |s: &airtime_sim::metrics::StationResult| s.ping_p50_ms.expect("answered pings");
    assert!((p50(slow) - p50(f1)).abs() < 5.0, "slow {} vs fast {} ms", p50(slow), p50(f1));
}

#[test]
fn with_airtime_fairness_the_three_stations_share_the_air_nearly_equally() {
    let atf = run_one(&arm("designs-mac80211-atf", 6.0), 0).unwrap();
    for s in &atf.stations {
        assert!((s.airtime_share_pct - 100.0 / 3.0).abs() < 3.0, "{}: {} %", s.name, s.airtime_share_pct);
    }
    // Round robin gives the slow station more than its third.
    let rr = run_one(&arm("designs-mac80211-rr", 6.0), 0).unwrap();
    assert!(station(&rr, "slow").airtime_share_pct > 38.0, "{}", station(&rr, "slow").airtime_share_pct);
}
