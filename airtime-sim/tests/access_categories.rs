//! Access categories at the stations: a voice-marked stream gets its own EDCA function
//! and queue, so it is not stuck behind its station's bulk upload nor behind the
//! access point's best-effort download.

use airtime_sim::metrics::RunResult;
use airtime_sim::scenario;
use airtime_sim::sim::run::run_one;

/// A saturated BE download to `laptop`; `phone` uploads in bulk (BE) and sends a
/// voice-sized UDP stream (50 packets of 200 bytes a second) marked `dscp`.
fn run(dscp: u8) -> RunResult {
    let text = format!(
        "name = \"ac\"\nduration_s = 6.0\nwarmup_s = 1.0\nruns = 1\nseed = 9\n[ap]\ndesign = \"ath11k_series\"\n\
         [[stations]]\nname = \"laptop\"\nrate = \"vht80-1ss-mcs9-sgi\"\n\
         [[stations]]\nname = \"phone\"\nrate = \"vht80-1ss-mcs4-sgi\"\n\
         [[flows]]\nstation = \"laptop\"\nhystart = false\n\
         [[flows]]\nstation = \"phone\"\ndirection = \"upload\"\nhystart = false\n\
         [[flows]]\nstation = \"phone\"\nprotocol = \"udp\"\ndirection = \"upload\"\nrate_mbps = 0.08\n\
         packet_bytes = 200\ndscp = {dscp}\n"
    );
    let sc = scenario::parse(&text, "ac.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    run_one(&sc, 0).unwrap()
}

#[test]
fn a_voice_stream_beside_saturated_best_effort_gets_far_lower_latency_when_marked_ef() {
    let be = run(0);
    let vo = run(46);
    let (b, v) = (&be.flows[2], &vo.flows[2]);
    eprintln!(
        "voice as BE: mean {:.2} ms max {:.2} ms; as VO: mean {:.2} ms max {:.2} ms; download {:.0} / {:.0} Mbit/s",
        b.udp_delay_mean_ms,
        b.udp_delay_max_ms,
        v.udp_delay_mean_ms,
        v.udp_delay_max_ms,
        be.flows[0].throughput_mbps,
        vo.flows[0].throughput_mbps
    );
    assert!(
        v.udp_delay_mean_ms * 4.0 < b.udp_delay_mean_ms,
        "VO {} ms vs BE {} ms",
        v.udp_delay_mean_ms,
        b.udp_delay_mean_ms
    );
    assert!(v.udp_delay_mean_ms < 5.0, "VO {} ms", v.udp_delay_mean_ms);
    assert_eq!(v.udp_lost, 0);
    // The bulk flows still run.
    assert!(vo.flows[0].throughput_mbps > 50.0 && vo.flows[1].throughput_mbps > 20.0);
}

#[test]
fn a_marked_download_is_refused_since_the_access_points_downlink_is_best_effort_only() {
    let text = "name = \"ac\"\n[ap]\ndesign = \"ath11k_series\"\n[[stations]]\nname = \"a\"\nrate = \"ht20-mcs7\"\n\
                [[flows]]\nstation = \"a\"\ndscp = 46\n";
    let e = scenario::parse(text, "ac.toml").unwrap_err().to_string();
    assert!(e.contains("`flows[0].dscp`: 46 maps to access category VO"), "{e}");
}

#[test]
fn the_channel_access_category_and_flent_scenarios_parse_and_rrul_is_refused_by_name() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/");
    for f in [
        "voice-uplink-beside-be.toml",
        "flent-rrul-be.toml",
        "flent-rtt-fair-var-up.toml",
        "lossy-link-retries.toml",
        "walk-away-minstrel.toml",
    ] {
        let r = scenario::load(std::path::Path::new(&format!("{dir}{f}"))).unwrap_or_else(|e| panic!("{e}"));
        assert!(r.warnings.is_empty(), "{f}: {:?}", r.warnings);
    }
    let rrul = std::fs::read_to_string(format!("{dir}flent-rrul-be.toml")).unwrap().replace("\"rrul_be\"", "\"rrul\"");
    let e = scenario::parse(&rrul, "rrul.toml").unwrap_err().to_string();
    assert!(e.contains("`flows[5].dscp`: 8 maps to access category BK"), "{e}");
}
