//! Patch 7: received airtime is charged to the station's BE deficit.

mod common;

use airtime_ath11k::hal::RxPpdu;
use airtime_ath11k::sim_hal::SimConfig;
use airtime_ath11k::{Ath11kError, Config};
use airtime_est::{Bandwidth, Rate};
use airtime_sched::Ac;
use common::Bench;

#[test]
fn rx_airtime_lands_on_be() {
    let mut b = Bench::default();
    let s = b.station(7, 256);
    let qbe = b.txq(s, 0);
    let qvi = b.txq(s, 5);
    b.send(qbe, 1, 100, 0); // active on BE and VI: deficits can be charged
    b.send(qvi, 1, 100, 0);
    let before = Ac::ALL.map(|ac| b.radio.scheduler().deficit_us(s, ac).unwrap());
    b.radio.hal().inject_rx(RxPpdu { peer_id: 7, rx_duration_us: 640, rate: None });
    b.radio.poll_airtime_reports(8, b.now);
    let after = Ac::ALL.map(|ac| b.radio.scheduler().deficit_us(s, ac).unwrap());
    for ac in Ac::ALL {
        let expect = if ac == Ac::Be { before[ac.index()] - 640 } else { before[ac.index()] };
        assert_eq!(after[ac.index()], expect, "{ac:?}");
    }
    let a = b.radio.scheduler().station_airtime(s).unwrap();
    assert_eq!((a.rx_us, a.tx_us), (640, 0));
}

#[test]
fn the_rx_rate_prices_frames_until_a_tx_rate_is_reported() {
    let mut b = Bench::default();
    let s = b.station(7, 256);
    let rate = Rate::he(11, 2, Bandwidth::Mhz80, airtime_est::HeGi::Gi0_8).unwrap();
    b.radio.on_rx_ppdu(&RxPpdu { peer_id: 7, rx_duration_us: 50, rate: Some(rate) }, b.now).unwrap();
    assert_eq!(airtime_sched::Station::last_tx_rate(b.radio.station(s).unwrap()), Some(rate));
}

#[test]
fn rx_status_for_an_unknown_peer_is_refused_and_counted() {
    let b = Bench::default();
    let r = b.radio.on_rx_ppdu(&RxPpdu { peer_id: 3, rx_duration_us: 50, rate: None }, b.now);
    assert_eq!(r, Err(Ath11kError::UnknownPeer(3)));
    assert_eq!(b.radio.dp_stats().unknown_peer_reports, 1);
}

#[test]
fn with_rx_airtime_off_nothing_is_registered() {
    let mut config = Config::default();
    config.rx_airtime = false;
    let mut b = Bench::new(config, SimConfig::default());
    let s = b.station(7, 256);
    b.radio.on_rx_ppdu(&RxPpdu { peer_id: 7, rx_duration_us: 50, rate: None }, b.now).unwrap();
    assert_eq!(b.radio.scheduler().station_airtime(s).unwrap().rx_us, 0);
}
