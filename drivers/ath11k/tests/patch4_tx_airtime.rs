//! Patch 4: tx airtime is registered from PPDU stats; each MU user is charged the
//! whole PPDU.

mod common;

use airtime_ath11k::Config;
use airtime_ath11k::hal::{PpduStats, PpduUser};
use airtime_ath11k::sim_hal::SimConfig;
use airtime_est::{Bandwidth, Rate};
use airtime_sched::Ac;
use common::Bench;

fn user(peer_id: u16, tid: u8, tx_duration_us: u32) -> PpduUser {
    PpduUser::su(peer_id, tid, tx_duration_us, None)
}

#[test]
fn an_mu_ppdu_charges_every_user_the_whole_duration() {
    let mut b = Bench::default();
    let stas: Vec<_> = (10..14u16).map(|p| b.station(p, 256)).collect();
    let mut p = PpduStats::new(1200);
    for (i, peer) in (10..14u16).enumerate() {
        assert!(p.push_user(user(peer, 0, 300 + i as u32)));
    }
    let out = b.radio.on_ppdu_tx_stats(&p, b.now);
    assert_eq!((out.users_charged, out.unknown_peers), (4, 0));
    for s in stas {
        let a = b.radio.scheduler().station_airtime(s).unwrap();
        assert_eq!(a.tx_us_per_ac[Ac::Be], 1200);
    }
}

#[test]
fn the_simulated_firmware_reports_mu_ppdus_that_charge_every_user_the_whole_duration() {
    let mut sim = SimConfig::default();
    sim.mu_max_users = 4;
    let mut b = Bench::new(Config::default(), sim);
    let a = b.station(1, 256);
    let c = b.station(2, 256);
    b.radio.hal().set_peer(1, 100, None);
    b.radio.hal().set_peer(2, 250, None);
    let qa = b.txq(a, 0);
    let qc = b.txq(c, 0);
    b.send(qa, 4, 1500, 0);
    b.send(qc, 2, 1500, 0);
    b.step(0, 64, 0);
    b.step(1000, 64, 0);
    // One PPDU with both users; 4 x 100 us against 2 x 250 us: 500 us each.
    for s in [a, c] {
        assert_eq!(b.radio.scheduler().station_airtime(s).unwrap().tx_us, 500);
    }
}

#[test]
fn tx_airtime_lands_on_the_ac_of_the_users_tid_and_lowers_the_deficit() {
    let mut b = Bench::default();
    let s = b.station(3, 256);
    let q = b.txq(s, 5); // VI: marks the station active on VI
    b.send(q, 1, 1500, 0);
    let before = b.radio.scheduler().deficit_us(s, Ac::Vi).unwrap();
    let mut p = PpduStats::new(0);
    p.push_user(user(3, 5, 777));
    b.radio.on_ppdu_tx_stats(&p, b.now);
    let a = b.radio.scheduler().station_airtime(s).unwrap();
    assert_eq!(a.tx_us_per_ac[Ac::Vi], 777, "no PPDU duration: the user's own");
    assert_eq!(b.radio.scheduler().deficit_us(s, Ac::Vi).unwrap(), before - 777);
}

#[test]
fn ppdu_stats_set_the_rate_that_prices_the_next_frames() {
    let mut b = Bench::default();
    let s = b.station(4, 256);
    let q = b.txq(s, 0);
    b.send(q, 1, 1500, 0);
    let unknown = b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap();
    assert_eq!(unknown, b.radio.config().sched.unknown_rate_charge_us & !3);
    let rate = Rate::vht(9, 2, Bandwidth::Mhz80, true).unwrap();
    let mut p = PpduStats::new(100);
    p.push_user(PpduUser::su(4, 0, 100, Some(rate)));
    b.radio.on_ppdu_tx_stats(&p, b.now);
    assert_eq!(b.radio.station(s).unwrap().last_tx_rate(), Some(rate));
    b.send(q, 1, 1500, 0);
    let fast = b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap() - unknown;
    assert!(fast < unknown / 4, "VHT80 MCS9 2ss prices a frame at {fast} us");
}

#[test]
fn a_ppdu_user_with_an_unknown_peer_is_skipped_and_counted() {
    let b = Bench::default();
    let mut p = PpduStats::new(100);
    p.push_user(user(99, 0, 100));
    let out = b.radio.on_ppdu_tx_stats(&p, b.now);
    assert_eq!((out.users_charged, out.unknown_peers), (0, 1));
    assert_eq!(b.radio.dp_stats().unknown_peer_reports, 1);
}

#[test]
fn a_ppdu_user_naming_no_tid_is_charged_to_be_and_never_calibrates() {
    let mut config = Config::default();
    config.calibration = Some(Default::default());
    let mut b = Bench::new(config, SimConfig::default());
    let s = b.station(5, 256);
    let rate = Rate::vht(9, 2, Bandwidth::Mhz80, true).unwrap();
    for tid in [16u8, 17, 255] {
        let mut p = PpduStats::new(0);
        p.push_user(PpduUser::su(5, tid, 100, Some(rate)).with_msdus(4, 6000));
        let out = b.radio.on_ppdu_tx_stats(&p, b.now);
        assert_eq!((out.users_charged, out.users_without_tid, out.unknown_peers), (1, 1, 0), "TID {tid}");
    }
    assert_eq!(b.radio.station(s).unwrap().last_tx_rate(), Some(rate));
    let a = b.radio.scheduler().station_airtime(s).unwrap();
    // Their airtime was spent on the air: charged, on BE, as mac80211 puts TID 16.
    assert_eq!((a.tx_us_per_ac[Ac::Be], a.tx_us), (300, 300));
    let c = b.radio.calibration_stats();
    assert_eq!((c.accepted, c.rejected, c.no_tid), (0, 3, 3), "{c:?}");
}

#[test]
fn with_tx_airtime_off_nothing_is_registered() {
    let mut config = Config::default();
    config.tx_airtime = false;
    let mut b = Bench::new(config, SimConfig::default());
    let s = b.station(1, 256);
    let mut p = PpduStats::new(100);
    p.push_user(user(1, 0, 100));
    assert_eq!(b.radio.on_ppdu_tx_stats(&p, b.now).users_charged, 0);
    assert_eq!(b.radio.scheduler().station_airtime(s).unwrap().tx_us, 0);
}
