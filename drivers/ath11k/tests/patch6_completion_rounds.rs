//! Patch 6: tx completion starts a round, only for the ACs it reaped.

mod common;

use airtime_ath11k::sim_hal::SimConfig;
use airtime_ath11k::{AcSet, Config, RoundEnd};
use airtime_sched::{Ac, AqlLimits};
use common::Bench;

/// Two stations, one on BE and one on VI, each held back by a small AQL limit.
fn two_acs(config: Config) -> (Bench, airtime_sched::TxqId, airtime_sched::TxqId) {
    let mut sim = SimConfig::default();
    sim.completion_delay_us = 1000;
    let mut b = Bench::new(config, sim);
    let be = b.station(1, 256);
    let vi = b.station(2, 256);
    let limits = AqlLimits::new(2000, 4000).unwrap();
    b.radio.set_station_limits(be, Ac::Be, limits).unwrap();
    b.radio.set_station_limits(vi, Ac::Vi, limits).unwrap();
    let qbe = b.txq(be, 0);
    let qvi = b.txq(vi, 5);
    (b, qbe, qvi)
}

#[test]
fn a_completion_pass_starts_rounds_only_for_the_acs_it_reaped() {
    let (mut b, qbe, qvi) = two_acs(Config::default());
    b.send(qbe, 20, 1500, 0);
    b.step(0, 64, 0); // the firmware takes the BE frames: due at 1000
    b.now = b.now.add_micros(500);
    b.send(qvi, 20, 1500, 0);
    let vi_rounds = b.radio.scheduler().ac_counters(Ac::Vi).rounds_started;
    let be_rounds = b.radio.scheduler().ac_counters(Ac::Be).rounds_started;
    let pass = b.step(500, 64, 0); // t = 1000: only BE completes
    assert_eq!(pass.reaped, [Ac::Be].into_iter().collect::<AcSet>());
    assert_eq!(pass.rounds, pass.reaped);
    assert!(pass.frames_pushed > 0, "the BE txq resumed");
    assert_eq!(b.radio.scheduler().ac_counters(Ac::Vi).rounds_started, vi_rounds);
    assert_eq!(b.radio.scheduler().ac_counters(Ac::Be).rounds_started, be_rounds + 1);
}

#[test]
fn a_pass_that_reaps_nothing_starts_no_round() {
    let (mut b, qbe, _) = two_acs(Config::default());
    b.send(qbe, 5, 1500, 0);
    let rounds = b.radio.scheduler().ac_counters(Ac::Be).rounds_started;
    let pass = b.step(10, 64, 0);
    assert_eq!((pass.work_done, pass.rounds), (0, AcSet::EMPTY));
    assert_eq!(b.radio.scheduler().ac_counters(Ac::Be).rounds_started, rounds);
}

#[test]
fn without_completion_rounds_an_aql_limited_txq_waits_for_its_next_enqueue() {
    let mut config = Config::default();
    config.rounds_on_completion = false;
    let (mut b, qbe, _) = two_acs(config);
    let first = b.send(qbe, 20, 1500, 0).frames;
    b.step(0, 64, 0);
    let pass = b.step(1000, 64, 0);
    assert!(pass.work_done > 0);
    assert_eq!(pass.frames_pushed, 0);
    assert_eq!(b.queued(), u64::from(20 - first), "nothing restarted the txq");
}

#[test]
fn a_completion_of_one_ac_resumes_another_ac_that_a_full_ring_stopped() {
    let mut sim = SimConfig::default();
    sim.msdu_capacity = 8;
    let mut config = Config::default();
    config.aql = false;
    let mut b = Bench::new(config, sim);
    let s = b.station(1, 256);
    let qbe = b.txq(s, 0);
    let qvo = b.txq(s, 6);
    assert_eq!(b.send(qbe, 8, 1500, 0).frames, 8);
    let r = b.send(qvo, 4, 200, 0);
    assert_eq!((r.frames, r.end), (0, Some(RoundEnd::RingFull)));
    assert!(b.radio.blocked_acs().contains(Ac::Vo));
    b.step(0, 64, 0);
    let pass = b.step(1000, 64, 0);
    assert_eq!(pass.reaped, [Ac::Be].into_iter().collect::<AcSet>());
    assert!(pass.rounds.contains(Ac::Vo), "room freed by BE is room for VO");
    assert_eq!(b.txq_len(qvo), 0);
    assert!(!b.radio.blocked_acs().contains(Ac::Vo));
}

#[test]
fn with_resume_off_a_completion_pass_starts_rounds_only_for_reaped_acs_even_when_others_are_blocked() {
    let mut sim = SimConfig::default();
    sim.msdu_capacity = 8;
    let mut config = Config::default();
    config.aql = false;
    config.resume_blocked_acs = false;
    let mut b = Bench::new(config, sim);
    let s = b.station(1, 256);
    let qbe = b.txq(s, 0);
    let qvo = b.txq(s, 6);
    b.send(qbe, 8, 1500, 0);
    b.send(qvo, 4, 200, 0);
    b.step(0, 64, 0);
    let pass = b.step(1000, 64, 0);
    assert_eq!(pass.rounds, [Ac::Be].into_iter().collect::<AcSet>());
    assert_eq!(b.txq_len(qvo), 4, "the series' behaviour: VO waits");
}
