//! The TX_NO_PUSHBACK flag: the firmware picks the transmitter, so weights act
//! through per-station AQL limits scaled by weight/256.

mod common;

use airtime_ath11k::Config;
use airtime_ath11k::hal::PpduStats;
use airtime_ath11k::hal::PpduUser;
use airtime_ath11k::sim_hal::SimConfig;
use airtime_est::{Bandwidth, Rate};
use airtime_sched::{Ac, AqlLimits};
use common::Bench;

fn two_stations(no_pushback: bool) -> (Bench, [airtime_sched::StationId; 2], [airtime_sched::TxqId; 2]) {
    let mut config = Config::default();
    config.tx_no_pushback = no_pushback;
    let mut sim = SimConfig::default();
    sim.completion_delay_us = 3000;
    let mut b = Bench::new(config, sim);
    b.radio.set_default_limits(Ac::Be, AqlLimits::new(500, 1000).unwrap());
    let heavy = b.station(1, 1024);
    let light = b.station(2, 256);
    let rate = Rate::vht(7, 1, Bandwidth::Mhz80, false).unwrap();
    for peer in [1, 2] {
        let mut p = PpduStats::new(10);
        p.push_user(PpduUser::su(peer, 0, 10, Some(rate)));
        b.radio.on_ppdu_tx_stats(&p, b.now);
    }
    let qs = [b.txq(heavy, 0), b.txq(light, 0)];
    (b, [heavy, light], qs)
}

#[test]
fn the_adapter_reports_that_the_firmware_picks_the_transmitter() {
    let b = Bench::default();
    assert!(b.radio.scheduler().config().tx_no_pushback);
}

#[test]
fn with_tx_no_pushback_limits_scale_with_weight() {
    let (mut b, [heavy, light], qs) = two_stations(true);
    let sched = b.radio.scheduler();
    let (h, l) = (sched.effective_limits(heavy, Ac::Be).unwrap(), sched.effective_limits(light, Ac::Be).unwrap());
    assert_eq!((h.low_us(), h.high_us()), (2000, 4000));
    assert_eq!((l.low_us(), l.high_us()), (500, 1000));
    // Saturated: each station keeps its own scaled limit in flight.
    let mut max = [0u32; 2];
    for step in 0..40 {
        for q in qs {
            b.send(q, 20, 1500, step);
        }
        for (i, s) in [heavy, light].into_iter().enumerate() {
            let p = b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap();
            max[i] = max[i].max(p);
        }
        b.step(500, 64, step);
    }
    assert!(max[0] >= 2000 && max[0] <= 4000 + 200, "heavy kept {} us in flight", max[0]);
    assert!(max[1] >= 500 && max[1] <= 1000 + 200, "light kept {} us in flight", max[1]);
    assert!(max[0] >= 3 * max[1]);
}

#[test]
fn without_tx_no_pushback_weights_leave_limits_alone() {
    let (b, [heavy, light], _) = two_stations(false);
    let sched = b.radio.scheduler();
    assert_eq!(sched.effective_limits(heavy, Ac::Be).unwrap(), sched.effective_limits(light, Ac::Be).unwrap());
}
