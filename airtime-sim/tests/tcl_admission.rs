//! How descriptors move from the TCL rings into the firmware's per-station queues
//! (`ap.hardware.tcl_admission`): frames waiting in their ring, admitted from the ring
//! heads (the seed's explanation of its ping), against each descriptor joining its
//! station's queue as it is written (`ath11k_dp_tx`'s comment). Each test pins what one
//! choice explains and the other cannot.

use airtime_sim::metrics::RunResult;
use airtime_sim::scenario;
use airtime_sim::sim::run::run_one;

/// Runs `body` (stations and flows) on `design` with `admission`, one run of
/// `duration_s` seconds after a 2 s warm-up.
fn run(design: &str, admission: &str, duration_s: f64, body: &str) -> RunResult {
    let text = format!(
        "name = \"tcl\"\nduration_s = {duration_s:.1}\nwarmup_s = 2.0\nruns = 1\nseed = 3\n[ap]\ndesign = \"{design}\"\n\
         [ap.hardware]\ntcl_admission = \"{admission}\"\n{body}"
    );
    let sc = scenario::parse(&text, "tcl.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(sc.warnings.is_empty(), "{:?}", sc.warnings);
    run_one(&sc, 0).unwrap()
}

/// One HE station and four identical TCP downloads; flow `f` runs on CPU `f % 3`, so
/// flows 0 and 3 share ring 0 while flows 1 and 2 have a ring each.
const FOUR_FLOWS: &str = "[[stations]]\nname = \"he\"\nrate = \"he80-2ss-mcs11\"\n\
    [[flows]]\nstation = \"he\"\n[[flows]]\nstation = \"he\"\n[[flows]]\nstation = \"he\"\n[[flows]]\nstation = \"he\"\n";

fn rtts(r: &RunResult) -> Vec<f64> {
    r.flows.iter().map(|f| f.tcp_rtt_mean_ms).collect()
}

fn jain(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    sum * sum / (xs.len() as f64 * xs.iter().map(|x| x * x).sum::<f64>())
}

#[test]
fn admitted_as_written_identical_flows_to_one_station_see_the_same_delay_and_share() {
    let r = run("ath11k_series", "direct", 10.0, FOUR_FLOWS);
    let rtt = rtts(&r);
    let (lo, hi) = rtt.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    // One queue per (station, TID) in the firmware: every flow waits behind the same
    // frames, whichever ring its CPU writes.
    assert!(hi / lo < 1.1, "per-flow mean RTT {rtt:?}");
    let mbps: Vec<f64> = r.flows.iter().map(|f| f.throughput_mbps).collect();
    assert!(jain(&mbps) > 0.98, "per-flow Mbit/s {mbps:?}");
}

#[test]
fn admitted_from_the_ring_heads_flows_sharing_a_ring_wait_longer_than_flows_alone_in_theirs() {
    let r = run("ath11k_series", "ring_heads", 10.0, FOUR_FLOWS);
    let rtt = rtts(&r);
    // Each ring gets one admission in turn, so the two flows of ring 0 queue behind each
    // other there while flows 1 and 2 have a ring's turn each.
    let shared = (rtt[0] + rtt[3]) / 2.0;
    let alone = (rtt[1] + rtt[2]) / 2.0;
    assert!(shared > 1.4 * alone, "per-flow mean RTT {rtt:?}");
}

/// A VHT MCS0 station and an HE MCS11 station, each with a download from CPU 0 (one
/// ring for both), on the stock driver.
const SLOW_AND_FAST_ON_ONE_RING: &str = "[[stations]]\nname = \"slow\"\nrate = \"vht80-1ss-mcs0\"\n\
    [[stations]]\nname = \"fast\"\nrate = \"he80-2ss-mcs11\"\n\
    [[flows]]\nstation = \"slow\"\ncpu = 0\n[[flows]]\nstation = \"fast\"\ncpu = 0\n";

#[test]
fn a_ring_blocked_at_a_slow_stations_head_holds_back_a_fast_station_only_when_frames_wait_in_rings() {
    let heads = run("stock", "ring_heads", 8.0, SLOW_AND_FAST_ON_ONE_RING);
    let direct = run("stock", "direct", 8.0, SLOW_AND_FAST_ON_ONE_RING);
    let fast = |r: &RunResult| r.flows[1].throughput_mbps;
    // Ring heads: the slow station's firmware queue is full most of the time, and the
    // fast station's frames wait behind its frames in the shared ring.
    assert!(
        fast(&direct) > 5.0 * fast(&heads),
        "fast station: {} Mbit/s direct, {} ring heads",
        fast(&direct),
        fast(&heads)
    );
}

/// The stock VHT80 arm of the default suite: one station, a forwarded download that
/// fills the ring of its CPU, the ping from another CPU.
const STOCK_VHT80: &str = "[[stations]]\nname = \"sta\"\nrate = \"vht80-1ss-mcs3-sgi\"\n\
    [[flows]]\nstation = \"sta\"\nhystart = false\n";

#[test]
fn the_seeds_stock_ping_needs_frames_to_wait_in_the_rings() {
    let heads = run("stock", "ring_heads", 8.0, STOCK_VHT80);
    let direct = run("stock", "direct", 8.0, STOCK_VHT80);
    let ping = |r: &RunResult| r.stations[0].ping_p50_ms.expect("answered pings");
    // The seed: 8-11 ms beside a ~220 ms download queue to the same station and TID.
    assert!(ping(&heads) < 20.0, "ring heads: ping {} ms", ping(&heads));
    // Admitted as written, the ping joins the station's firmware queue behind the
    // download's frames.
    assert!(ping(&direct) > 100.0, "direct: ping {} ms", ping(&direct));
    // The two differ in where frames wait, not in how many: the download is the same.
    let mbps = |r: &RunResult| r.flows[0].throughput_mbps;
    assert!((mbps(&heads) / mbps(&direct) - 1.0).abs() < 0.05, "{} vs {}", mbps(&heads), mbps(&direct));
}
