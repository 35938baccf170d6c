//! Constant-bit-rate UDP streams: they get their rate when the air has room, lose what a
//! link cannot carry, and send only between their start and stop times.

use airtime_sim::metrics::FlowResult;
use airtime_sim::scenario::{self, Resolved};
use airtime_sim::sim::run::run_one;

/// A scenario on the series design: `stations` (name, rate) and `flows` as TOML tables.
fn scenario(duration_s: f64, stations: &[(&str, &str)], flows: &[&str]) -> Resolved {
    let mut text = format!(
        "name = \"udp\"\nduration_s = {duration_s:.1}\nwarmup_s = 1.0\nruns = 1\nseed = 3\n[ap]\ndesign = \"ath11k_adapter\"\n"
    );
    for (name, rate) in stations {
        text.push_str(&format!("[[stations]]\nname = \"{name}\"\nrate = \"{rate}\"\n"));
    }
    for f in flows {
        text.push_str(&format!("[[flows]]\n{f}\n"));
    }
    let r = scenario::parse(&text, "udp.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    r
}

fn loss_pct(f: &FlowResult) -> f64 {
    100.0 * f.udp_lost as f64 / f.udp_sent.max(1) as f64
}

#[test]
fn a_cbr_stream_gets_its_rate_beside_a_bulk_download_when_the_air_has_room() {
    let sc = scenario(
        4.0,
        &[("sta", "vht80-1ss-mcs9-sgi")],
        &[
            "station = \"sta\"\nhystart = false",
            "station = \"sta\"\nprotocol = \"udp\"\nrate_mbps = 20.0\npacket_bytes = 1344",
            "station = \"sta\"\nprotocol = \"udp\"\ndirection = \"upload\"\nrate_mbps = 2.0\npacket_bytes = 200",
        ],
    );
    let r = run_one(&sc, 0).unwrap();
    let (tcp, down, up) = (&r.flows[0], &r.flows[1], &r.flows[2]);
    assert!(!tcp.udp && down.udp && up.udp);
    assert!((down.throughput_mbps - 20.0).abs() < 0.4, "down {} Mbit/s", down.throughput_mbps);
    assert!((up.throughput_mbps - 2.0).abs() < 0.04, "up {} Mbit/s", up.throughput_mbps);
    assert!(loss_pct(down) < 0.5 && loss_pct(up) < 0.5, "loss {} / {} %", loss_pct(down), loss_pct(up));
    assert!(tcp.throughput_mbps > 100.0, "the download takes the rest: {} Mbit/s", tcp.throughput_mbps);
}

#[test]
fn a_cbr_stream_faster_than_its_link_gets_the_link_and_loses_the_rest() {
    // HT20 MCS0 is 6.5 Mbit/s on the air; A-MPDUs of 1344-byte packets carry a little less.
    let sc = scenario(
        4.0,
        &[("slow", "ht20-mcs0")],
        &["station = \"slow\"\nprotocol = \"udp\"\nrate_mbps = 20.0\npacket_bytes = 1344"],
    );
    let f = &run_one(&sc, 0).unwrap().flows[0];
    assert!(f.throughput_mbps > 5.0 && f.throughput_mbps < 6.5, "{} Mbit/s", f.throughput_mbps);
    assert!(loss_pct(f) > 100.0 * (1.0 - 6.5 / 20.0), "loss {} %", loss_pct(f));
    assert!(f.ap_drops > 0, "the AP's queue dropped the excess");
    // The same stream upward: the station's own queue holds the excess (the model gives
    // stations an unbounded FIFO), so it arrives late, not at all, but never faster.
    let up = scenario(
        4.0,
        &[("slow", "ht20-mcs0")],
        &["station = \"slow\"\nprotocol = \"udp\"\ndirection = \"upload\"\nrate_mbps = 20.0\npacket_bytes = 1344"],
    );
    let f = &run_one(&up, 0).unwrap().flows[0];
    assert!(f.throughput_mbps > 5.0 && f.throughput_mbps < 6.5, "up {} Mbit/s", f.throughput_mbps);
}

#[test]
fn flows_send_only_between_their_start_and_stop_times() {
    let sc = scenario(
        4.0,
        &[("sta", "vht80-1ss-mcs9-sgi")],
        &[
            "station = \"sta\"\nprotocol = \"udp\"\nrate_mbps = 10.0\npacket_bytes = 1250\nstart_s = 1.5\nstop_s = 2.5",
            "station = \"sta\"\nhystart = false\nstop_s = 2.0",
            "station = \"sta\"\nhystart = false\nstart_s = 2.0",
        ],
    );
    let r = run_one(&sc, 0).unwrap();
    let udp = &r.flows[0];
    // 10 Mbit/s of 1250-byte packets for one second: 1000 packets, all after the warm-up.
    assert_eq!(udp.udp_sent, 1000);
    assert!((udp.throughput_mbps - 10.0).abs() < 0.2, "{} Mbit/s over its second", udp.throughput_mbps);
    // Two TCP downloads, one stopping at 2 s and one starting then, each measured over
    // its own time after the warm-up (1 s and 2 s). Had the first kept sending after its
    // stop, the bytes it delivered later would put it above the PHY rate (433 Mbit/s)
    // over its one second; had the second started early, it would share the first second.
    let (early, late) = (&r.flows[1], &r.flows[2]);
    assert!(early.throughput_mbps > 250.0 && early.throughput_mbps < 433.0, "early {}", early.throughput_mbps);
    assert!(late.throughput_mbps > 250.0, "late {}", late.throughput_mbps);
}

#[test]
fn the_udp_scenario_file_parses_without_warnings_and_its_streams_run() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/udp-video-beside-tcp.toml");
    let mut sc = scenario::load(std::path::Path::new(path)).unwrap();
    assert!(sc.warnings.is_empty(), "{:?}", sc.warnings);
    sc.spec.duration_s = 8.0;
    let r = run_one(&sc, 0).unwrap();
    // Flow 1 (20 Mbit/s to `sta`) runs from 4 s; flow 3 (20 Mbit/s to `slow`) from 6 s.
    assert!((r.flows[1].throughput_mbps - 20.0).abs() < 0.5, "{}", r.flows[1].throughput_mbps);
    assert!(r.flows[3].throughput_mbps < 6.5 && loss_pct(&r.flows[3]) > 50.0, "{:?}", r.flows[3]);
}
