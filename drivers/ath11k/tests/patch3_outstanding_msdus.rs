//! Patch 3: the outstanding MSDU count is reported, and bounded by the MSDU table.

mod common;

use airtime_ath11k::hal::RingId;
use airtime_ath11k::sim_hal::SimConfig;
use airtime_ath11k::{Config, RoundEnd, TextBuf};
use common::Bench;

#[test]
fn the_outstanding_msdu_count_equals_the_frames_in_flight() {
    let mut config = Config::default();
    config.aql = false;
    let mut b = Bench::new(config, SimConfig::default());
    let sta = b.station(1, 256);
    let q = b.txq(sta, 0);
    let mut pushed = 0u64;
    for i in 0..50u32 {
        pushed += u64::from(b.send(q, 7, 1000, i).frames);
        b.step(300, 5, i);
        let in_hw = pushed - b.done_len();
        assert_eq!(u64::from(b.radio.outstanding_msdus()), in_hw);
        assert_eq!(u64::from(b.radio.dp_stats().pending_msdus_total()), in_hw);
        let hal = b.radio.hal();
        let sim_view =
            RingId::ALL.iter().map(|r| hal.ring_len(*r)).sum::<u32>() + hal.in_flight() + hal.completions_waiting();
        assert_eq!(u64::from(sim_view), in_hw, "ring + firmware + completion ring");
    }
}

#[test]
fn the_msdu_table_bounds_the_outstanding_count_and_ends_the_round() {
    let mut config = Config::default();
    config.aql = false;
    let mut sim = SimConfig::default();
    sim.msdu_capacity = 10;
    let mut b = Bench::new(config, sim);
    let sta = b.station(1, 256);
    let q = b.txq(sta, 0);
    let r = b.send(q, 30, 1000, 0);
    assert_eq!((r.frames, r.end), (10, Some(RoundEnd::RingFull)));
    assert_eq!(b.radio.dp_stats().pending_msdus, [10, 0, 0]);
    assert_eq!(b.queued(), 20, "the frames past the bound wait in the txq");
}

#[test]
fn the_dp_stats_text_reports_the_pending_msdu_count() {
    let mut b = Bench::default();
    let sta = b.station(1, 256);
    let q = b.txq(sta, 0);
    b.send(q, 3, 500, 1);
    let mut buf = [0u8; 2048];
    let mut t = TextBuf::new(&mut buf);
    b.radio.write_dp_stats(&mut t);
    let text = core::str::from_utf8(t.as_bytes()).unwrap();
    assert!(text.contains("Pending tx MSDUs: ring0 0 ring1 3 ring2 0"), "{text}");
    assert!(text.contains("Pending tx MSDUs total: 3"), "{text}");
}
