//! `Config::calibration` against what firmware may send: odd counts and durations, a record without a
//! rate, whether a driver can see the calibration, and what the simulated firmware
//! reports as acknowledged.

mod common;

use airtime_ath11k::hal::{PpduStats, PpduUser};
use airtime_ath11k::sim_hal::SimConfig;
use airtime_ath11k::{CalibrationStats, Config, TextBuf};
use airtime_est::{Bandwidth, CalibratorConfig, HeGi, RATIO_ONE_Q16, Rate};
use airtime_sched::traits::price_from_rate;
use airtime_sched::{Ac, Instant, StationId};
use common::Bench;

fn he(mcs: u8) -> Option<Rate> {
    Rate::he(mcs, 1, Bandwidth::Mhz20, HeGi::Gi0_8).ok()
}

fn bench(warmup: u32) -> (Bench, StationId) {
    let mut c = Config::default();
    let mut cal = CalibratorConfig::default();
    cal.warmup_samples = warmup;
    c.calibration = Some(cal);
    let mut b = Bench::new(c, SimConfig::default());
    let sta = b.station(1, 256);
    (b, sta)
}

fn su(b: &Bench, duration_us: u32, rate: Option<Rate>, msdus: u16, bytes: u32) {
    let mut p = PpduStats::new(duration_us);
    p.push_user(PpduUser::su(1, 0, duration_us, rate).with_msdus(msdus, bytes));
    b.radio.on_ppdu_tx_stats(&p, Instant::from_micros(1));
}

fn ratio(b: &Bench, sta: StationId) -> u32 {
    b.radio.station(sta).unwrap().calibration_ratio_q16()
}

/// Zero or absurd counts, bytes and durations from firmware: each is refused and
/// counted once, nothing is learned, nothing panics.
#[test]
fn absurd_firmware_counts_are_refused_and_counted_once() {
    let (b, sta) = bench(1);
    // No rate ever reported: nothing to price the MSDUs at.
    su(&b, 400, None, 4, 6000);
    let cases: [(u32, u16, u32); 8] = [
        (400, 4, 0),                    // MSDUs without bytes
        (400, 4, 3),                    // fewer bytes than MSDUs (0-byte average)
        (400, 0, 6000),                 // bytes without MSDUs
        (0, 4, 6000),                   // no duration at all (PPDU's nor user's)
        (400, u16::MAX, u32::MAX),      // every field at its maximum
        (400, 1, u32::MAX),             // one 4 GB MSDU
        (u32::MAX, 1, 1500),            // a 71-minute PPDU
        (1, u16::MAX, u16::MAX.into()), // 65535 one-byte MSDUs in 1 us
    ];
    for (duration, msdus, bytes) in cases {
        su(&b, duration, he(4), msdus, bytes);
        assert_eq!(ratio(&b, sta), RATIO_ONE_Q16, "{duration} us, {msdus} MSDUs, {bytes} bytes");
    }
    let s = b.radio.calibration_stats();
    assert_eq!((s.accepted, s.rejected, s.busy, s.stale, s.mu_users), (0, 9, 0, 0, 0), "{s:?}");
    // And a sane one after all of them is the first sample of the average.
    let price = price_from_rate(he(4), 1500, Ac::Be).unwrap();
    su(&b, 8 * price, he(4), 4, 6000);
    assert_eq!(ratio(&b, sta), 2 * RATIO_ONE_Q16);
}

/// A record whose user carries no rate (the C API's `AIRTIME_RATE_NONE`; ath11k
/// skips a user without its rate TLV in `ath11k_update_per_peer_tx_stats`) says
/// nothing of the rate the PPDU went out at. Pricing its MSDUs at the station's
/// previous rate would teach the calibrator the rate change, not the model's error:
/// here the PPDUs take exactly the estimate at the MCS they were sent at (MCS 4), but
/// the station's last reported rate is MCS 7. Each is rejected, counted as rate-less.
#[test]
fn a_user_without_a_rate_is_not_a_sample() {
    let (b, sta) = bench(1);
    // MCS 7 reported once (no MSDU count: not a sample).
    su(&b, 100, he(7), 0, 0);
    let at_mcs4 = price_from_rate(he(4), 1500, Ac::Be).unwrap();
    for _ in 0..16 {
        su(&b, 4 * at_mcs4, None, 4, 6000);
    }
    let s: CalibrationStats = b.radio.calibration_stats();
    assert_eq!(s.accepted, 0, "{s:?}: samples without a rate were averaged in");
    assert_eq!((s.rejected, s.no_rate), (1 + 16, 16), "{s:?}: the MCS 7 record (no MSDUs) and 16 without a rate");
    assert_eq!(ratio(&b, sta), RATIO_ONE_Q16, "the station's price moved by the MCS 7 / MCS 4 ratio");
}

/// A C driver that set `AIRTIME_RADIO_CALIBRATE` must be able to tell whether its
/// `msdus`/`msdu_bytes` are taken or refused: the calibration's sample counters are
/// in the dp-stats debugfs text, and a station's ratio in its `aql` text.
#[test]
fn the_calibration_counters_reach_the_dp_stats_debugfs_text() {
    let (b, sta) = bench(1);
    su(&b, 400, he(4), 0, 0);
    let mut buf = [0u8; 4096];
    let mut t = TextBuf::new(&mut buf);
    b.radio.write_dp_stats(&mut t);
    let text = core::str::from_utf8(t.as_bytes()).unwrap();
    assert!(text.contains("Calibration samples"), "{text}");
    assert!(text.contains("rejected 1 (no rate 0, no TID 0)"), "{text}");
    // A station's ratio in its `aql` text.
    su(&b, 8 * price_from_rate(he(4), 1500, Ac::Be).unwrap(), he(4), 4, 6000);
    let mut buf = [0u8; 4096];
    let mut t = TextBuf::new(&mut buf);
    b.radio.write_station_aql(sta, &mut t).unwrap();
    let text = core::str::from_utf8(t.as_bytes()).unwrap();
    assert!(text.contains("Calibration ratio: 2.000 (Q16 131072)"), "{text}");
}

/// `PpduUser::msdus` is the *acknowledged* MSDUs (the ACK/BA TLV's success count):
/// the simulated firmware must not report not-acked frames there, or a simulated
/// lossy link would calibrate against MSDUs real firmware would not report.
#[test]
fn the_simulated_firmware_reports_only_acknowledged_msdus() {
    let mut c = Config::default();
    c.calibration = Some(CalibratorConfig::default());
    let mut sim = SimConfig::default();
    sim.default_status = airtime_ath11k::hal::TxStatus::NotAcked;
    let mut b = Bench::new(c, sim);
    let sta = b.station(1, 256);
    let q = b.txq(sta, 0);
    let price = price_from_rate(he(4), 1500, Ac::Be).unwrap();
    b.radio.hal().set_peer(1, price, he(4));
    b.send(q, 8, 1500, 0);
    b.step(0, 64, 0);
    b.step(1000, 64, 0);
    let s = b.radio.calibration_stats();
    assert_eq!(s.accepted, 0, "{s:?}: 8 not-acked MSDUs were a sample");
}
