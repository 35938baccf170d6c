//! Not in the series: `Config::mu_charging` decides what each user of an MU PPDU from
//! the simulated firmware is charged, and how its next frames are priced for AQL.

mod common;

use airtime_ath11k::sim_hal::SimConfig;
use airtime_ath11k::{Config, MuCharging};
use airtime_est::{Bandwidth, HeGi, Rate};
use airtime_sched::{Ac, StationId, TxqId};
use common::Bench;

/// Three stations in one MU PPDU from the simulated firmware: 4, 2 and 1 frames of
/// 100, 150 and 300 us each (own durations 400, 300 and 300 us; the PPDU 400 us,
/// 242-tone RUs of an 80 MHz channel). Returns the bench and the stations.
fn one_mu_ppdu(policy: MuCharging) -> (Bench, [StationId; 3], Vec<TxqId>) {
    let mut config = Config::default();
    config.mu_charging = policy;
    let mut sim = SimConfig::default();
    sim.mu_max_users = 4;
    let mut b = Bench::new(config, sim);
    let rate = Rate::he(9, 2, Bandwidth::Mhz80, HeGi::Gi0_8).ok();
    let stas = [b.station(1, 256), b.station(2, 256), b.station(3, 256)];
    let mut txqs = Vec::new();
    for ((peer, airtime), n) in [(1u16, 100u32), (2, 150), (3, 300)].into_iter().zip([4u32, 2, 1]) {
        b.radio.hal().set_peer(peer, airtime, rate);
        let q = b.txq(stas[usize::from(peer) - 1], 0);
        b.send(q, n, 1500, 0);
        txqs.push(q);
    }
    b.step(0, 64, 0);
    b.step(1000, 64, 0);
    (b, stas, txqs)
}

fn tx_us(b: &Bench, s: StationId) -> u64 {
    b.radio.scheduler().station_airtime(s).unwrap().tx_us_per_ac[Ac::Be]
}

#[test]
fn whole_ppdu_charges_every_user_the_ppdu() {
    let (b, stas, _) = one_mu_ppdu(MuCharging::WholePpdu);
    assert_eq!(stas.map(|s| tx_us(&b, s)), [400, 400, 400]);
    assert_eq!(b.radio.hal().counters().ppdus, 1);
}

#[test]
fn ru_share_splits_the_ppdu_by_tones_and_adds_up_to_it() {
    let (b, stas, _) = one_mu_ppdu(MuCharging::RuShare);
    let charged = stas.map(|s| tx_us(&b, s));
    assert_eq!(charged.iter().sum::<u64>(), 400);
    assert!(charged.iter().all(|&c| (133..=134).contains(&c)), "{charged:?}");
}

#[test]
fn own_duration_charges_each_user_its_own_frames() {
    let (b, stas, _) = one_mu_ppdu(MuCharging::OwnDuration);
    assert_eq!(stas.map(|s| tx_us(&b, s)), [400, 300, 300]);
}

#[test]
fn a_share_based_policy_prices_the_next_frames_at_the_share() {
    // The same frame, priced after the MU PPDU under each policy.
    let price = |policy| {
        let (mut b, stas, txqs) = one_mu_ppdu(policy);
        let q = txqs[1];
        let before = b.radio.scheduler().station_pending_us(stas[1], Ac::Be).unwrap();
        b.send(q, 1, 1500, 0);
        b.radio.scheduler().station_pending_us(stas[1], Ac::Be).unwrap() - before
    };
    let whole = price(MuCharging::WholePpdu);
    // Three users on 242-tone RUs: a third of the PPDU, on 234 of 980 data
    // subcarriers, is 980 / 702 of the whole-channel airtime.
    let share = price(MuCharging::RuShare);
    let own = price(MuCharging::OwnDuration);
    // Charges are kept in 4 us units (mac80211's `ieee80211_info_set_tx_time_est`).
    let near = |got: u32, want: u32| got <= want && got + 4 > want;
    assert!(whole > 0);
    assert!(near(share, (whole * (980 * 256 / 702)).div_ceil(256)), "{whole} {share}");
    assert!(near(own, (whole * (980 * 256 / 234)).div_ceil(256)), "{whole} {own}");
}
