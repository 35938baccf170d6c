//! Patch 2: AQL is on; a station's pending airtime stays within its limit plus one frame.

mod common;

use airtime_ath11k::Config;
use airtime_ath11k::sim_hal::SimConfig;
use airtime_sched::traits::price_from_rate;
use airtime_sched::{Ac, AqlLimits, Charge};
use common::Bench;
use proptest::prelude::*;

#[test]
fn aql_is_on_by_default() {
    let b = Bench::default();
    assert!(b.radio.scheduler().aql_enabled());
    assert!(b.radio.config().aql);
}

#[test]
fn without_aql_the_hardware_queue_takes_the_whole_backlog() {
    let mut config = Config::default();
    config.aql = false;
    let mut b = Bench::new(config, SimConfig::default());
    let sta = b.station(1, 256);
    let q = b.txq(sta, 0);
    let r = b.send(q, 200, 1500, 0);
    assert_eq!(r.frames, 200, "stock ath11k: every queued byte sits in the rings");
    assert!(b.radio.scheduler().station_pending_us(sta, Ac::Be).unwrap() > 12_000);
}

#[test]
fn with_aql_the_backlog_stays_in_the_txq() {
    let mut b = Bench::default();
    let sta = b.station(1, 256);
    let q = b.txq(sta, 0);
    let r = b.send(q, 200, 1500, 0);
    assert!(r.frames < 200);
    assert_eq!(b.queued(), u64::from(200 - r.frames));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn per_station_pending_never_exceeds_its_limit_plus_one_frame(
        low in 100u32..6000,
        extra in 0u32..10_000,
        lens in proptest::collection::vec(60u32..2400, 1..60),
        steps in 1usize..30,
        rx_rate in any::<bool>(),
    ) {
        let mut sim = SimConfig::default();
        sim.completion_delay_us = 2000;
        let mut config = Config::default();
        config.tx_no_pushback = false;
        let mut b = Bench::new(config, sim);
        let limits = AqlLimits::new(low, low + extra).unwrap();
        let stas: Vec<_> = (0..2u16).map(|p| b.station(p, 256)).collect();
        let txqs: Vec<_> = stas.iter().map(|s| b.txq(*s, 0)).collect();
        for s in &stas {
            b.radio.set_station_limits(*s, Ac::Be, limits).unwrap();
        }
        let rate = airtime_est::Rate::vht(0, 1, airtime_est::Bandwidth::Mhz20, false).unwrap();
        if rx_rate {
            let rx = airtime_ath11k::hal::RxPpdu { peer_id: 0, rx_duration_us: 10, rate: Some(rate) };
            b.radio.on_rx_ppdu(&rx, b.now).unwrap();
        }
        // The largest charge one frame can carry: station 0 may be priced at MCS0,
        // station 1 has no rate (the unknown-rate charge).
        let one_frame = lens
            .iter()
            .map(|l| price_from_rate(Some(rate), *l, Ac::Be).unwrap_or(0))
            .chain([b.radio.config().sched.unknown_rate_charge_us])
            .max()
            .unwrap()
            .clamp(4, Charge::MAX_US);
        for step in 0..steps {
            for (i, q) in txqs.iter().enumerate() {
                for len in &lens {
                    b.enqueue(*q, 1, *len);
                }
                b.radio.wake_tx_queue(*q, i as u32, b.now).unwrap();
            }
            for s in &stas {
                let pending = b.radio.scheduler().station_pending_us(*s, Ac::Be).unwrap();
                prop_assert!(pending <= limits.high_us() + one_frame,
                    "step {}: pending {} over {} + one frame of {}", step, pending, limits.high_us(), one_frame);
            }
            b.step(700, 64, step as u32);
        }
    }
}

#[test]
fn a_saturated_station_keeps_about_its_high_limit_in_flight() {
    // The seed: "the station's aql file reads 12024 us at the median against the
    // 12000 us default high limit".
    let mut sim = SimConfig::default();
    sim.completion_delay_us = 4000;
    let mut b = Bench::new(Config::default(), sim);
    let s = b.station(1, 256);
    let rate = airtime_est::Rate::vht(9, 1, airtime_est::Bandwidth::Mhz80, false).unwrap();
    let mut p = airtime_ath11k::hal::PpduStats::new(50);
    p.push_user(airtime_ath11k::hal::PpduUser::su(1, 0, 50, Some(rate)));
    b.radio.on_ppdu_tx_stats(&p, b.now);
    let one_frame = price_from_rate(Some(rate), 1500, Ac::Be).unwrap();
    let q = b.txq(s, 0);
    let mut samples = Vec::new();
    for step in 0..200u32 {
        b.enqueue(q, 40, 1500);
        b.radio.wake_tx_queue(q, step, b.now).unwrap();
        b.step(250, 64, step);
        if step >= 50 {
            samples.push(b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap());
        }
    }
    samples.sort_unstable();
    let median = samples[samples.len() / 2];
    assert!(median + one_frame >= 12_000 && median <= 12_000 + one_frame, "median {median} us, frame {one_frame} us");
    println!(
        "median pending {median} us, one frame {one_frame} us, range {:?}",
        (samples[0], samples[samples.len() - 1])
    );
    let now = b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap();
    let mut text = String::new();
    b.radio.write_station_aql(s, &mut text).unwrap();
    assert!(text.contains(&format!("BE\t\t{now} us")), "the aql file reads it: {text}");
}
