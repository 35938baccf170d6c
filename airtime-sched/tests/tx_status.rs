//! The tx-status helper: per-frame completion (release, airtime from rate and tries,
//! registration, calibration) and the PPDU form.

use airtime_est::{Bandwidth, Calibrator, CalibratorConfig, Rate, expected_tx_airtime_us, rx_airtime_us};
use airtime_sched::{Ac, Config, FrameStatus, Instant, Scheduler, Weight};

mod common;
use common::sched;

const NOW: Instant = Instant::from_micros(1000);

fn vht9() -> Rate {
    Rate::vht(9, 1, Bandwidth::Mhz80, true).unwrap()
}

#[test]
fn a_frame_status_prices_each_try_as_the_standard_does() {
    let single = FrameStatus { len_bytes: 1500, rate: Some(vht9()), tries: 3, aggregated: false };
    assert_eq!(single.airtime_us(0), 3 * rx_airtime_us(vht9(), 1500));
    let aggregated = FrameStatus { aggregated: true, ..single };
    assert_eq!(aggregated.airtime_us(0), 3 * expected_tx_airtime_us(vht9(), 1500, true));
    let zero_tries = FrameStatus { tries: 0, ..aggregated };
    assert_eq!(zero_tries.airtime_us(0), expected_tx_airtime_us(vht9(), 1500, true), "0 tries is 1");
    let no_rate = FrameStatus { rate: None, ..single };
    assert_eq!(no_rate.airtime_us(44), 44, "without a rate the charge stands for the airtime");
}

#[test]
fn complete_frame_releases_registers_what_the_retries_cost_and_teaches_the_calibrator() {
    let s = sched();
    let sta = s.add_station(Weight::DEFAULT).unwrap();
    let mut cal = Calibrator::new(CalibratorConfig::default());
    let status = FrameStatus { len_bytes: 1500, rate: Some(vht9()), tries: 2, aggregated: true };
    let used = status.airtime_us(0);
    for _ in 0..16 {
        let charge = s.charge_us(sta, Ac::Be, 28).unwrap();
        let done = s.complete_frame(charge, &status, NOW, Some(&mut cal));
        assert_eq!(done.released, Ok(()));
        assert_eq!(done.registered, Ok(()));
        assert_eq!(done.calibrated, Some(Ok(())));
        assert_eq!(done.airtime_us, used);
    }
    assert_eq!(s.total_pending_us(), 0);
    let airtime = s.station_airtime(sta).unwrap();
    assert_eq!(airtime.tx_us, 16 * u64::from(used));
    // Warm now: the calibrator scales the 28 us estimate to what two tries cost.
    assert!(cal.is_warm());
    assert_eq!(cal.scale_us(28), used);
}

#[test]
fn a_removed_stations_frames_still_complete_and_their_airtime_is_accounted() {
    let s = sched();
    let sta = s.add_station(Weight::DEFAULT).unwrap();
    let charge = s.charge_us(sta, Ac::Vi, 100).unwrap();
    s.remove_station(sta).unwrap();
    let status = FrameStatus { len_bytes: 200, rate: None, tries: 1, aggregated: false };
    let done = s.complete_frame(charge, &status, NOW, None);
    assert_eq!(done.released, Ok(()));
    assert_eq!(done.registered, Ok(()), "airtime after removal is accounted, not lost");
    assert_eq!(s.ac_counters(Ac::Vi).departed_tx_us, u64::from(done.airtime_us));
    assert_eq!(done.calibrated, None);
    assert_eq!(s.total_pending_us(), 0);
}

#[test]
fn complete_ppdu_releases_in_one_pass_registers_the_duration_and_calibrates_on_the_sum() {
    let s = sched();
    let (a, b) = (s.add_station(Weight::DEFAULT).unwrap(), s.add_station(Weight::DEFAULT).unwrap());
    let charges: Vec<_> = (0..10).map(|_| s.charge_us(a, Ac::Be, 48).unwrap()).collect();
    let stray = s.charge_us(b, Ac::Be, 100).unwrap();
    let mut config = CalibratorConfig::default();
    config.warmup_samples = 1;
    let mut cal = Calibrator::new(config);
    let done = s.complete_ppdu(a, Ac::Be, charges.into_iter().chain([stray]), 920, NOW, Some(&mut cal));
    assert!(done.released.is_clean());
    assert_eq!(done.released.released, 11);
    assert_eq!((done.charged_us, done.foreign), (480, 1));
    assert_eq!(done.registered, Ok(()));
    assert_eq!(done.calibrated, Some(Ok(())));
    assert_eq!(s.total_pending_us(), 0);
    assert_eq!(s.station_airtime(a).unwrap().tx_us, 920);
    assert_eq!(s.station_airtime(b).unwrap().tx_us, 0);
    // The seed's ratio: 48 us charged per MSDU against about 92 used.
    assert_eq!(cal.scale_us(48), 92);
}

#[test]
fn multicast_frames_complete_without_a_station() {
    let s = sched();
    let charge = s.charge_multicast_us(Ac::Be, 2000).unwrap();
    let status = FrameStatus { len_bytes: 1500, rate: Rate::legacy_ofdm(60).ok(), tries: 1, aggregated: false };
    let done = s.complete_frame(charge, &status, NOW, None);
    assert_eq!((done.released, done.registered), (Ok(()), Ok(())));
    assert_eq!(s.multicast_pending_us(Ac::Be), 0);
}

#[test]
fn the_last_station_slot_never_takes_the_multicast_mark() {
    let mut config = Config::default();
    config.max_stations = Config::MAX_STATIONS;
    let s = Scheduler::new(config).unwrap();
    // Fill every slot, then churn the last one through more than 16 generations.
    let ids: Vec<_> = (0..Config::MAX_STATIONS).map(|_| s.add_station(Weight::DEFAULT).unwrap()).collect();
    let mut last = *ids.last().unwrap();
    assert_eq!(last.index(), 4095);
    for _ in 0..40 {
        let c = s.charge_us(last, Ac::Be, 8).unwrap();
        let raw = airtime_sched::Charge::from_raw(c.into_raw()).unwrap();
        assert!(!raw.is_multicast(), "slot 4095 generation {:?}", last);
        s.release(raw).unwrap();
        s.remove_station(last).unwrap();
        last = s.add_station(Weight::DEFAULT).unwrap();
        assert_eq!(last.index(), 4095, "the only free slot");
    }
}

#[test]
fn release_with_status_calibrates_without_registering_twice() {
    let s = sched();
    let sta = s.add_station(Weight::DEFAULT).unwrap();
    let mut cal = Calibrator::new(CalibratorConfig::default());
    let charge = s.charge_us(sta, Ac::Be, 28).unwrap();
    let status = FrameStatus { len_bytes: 1500, rate: Some(vht9()), tries: 1, aggregated: true };
    let done = s.release_with_status(charge, &status, Some(&mut cal));
    assert_eq!((done.released, done.registered, done.calibrated), (Ok(()), Ok(()), Some(Ok(()))));
    assert_eq!(s.station_airtime(sta).unwrap().tx_us, 0, "the driver's counters register it");
    assert_eq!(s.total_pending_us(), 0);
}

/// A frame of another radio completed here: its charge is refused, and nothing of it
/// lands on this radio (found by the `txq_table` fuzz target: the station with the same
/// handle here was registered the other radio's airtime), nor in the calibrator.
#[test]
fn another_radios_frame_registers_nothing_and_teaches_nothing() {
    let (mine, theirs) = (sched(), sched());
    let sta = mine.add_station(Weight::DEFAULT).unwrap();
    let same = theirs.add_station(Weight::DEFAULT).unwrap();
    assert_eq!(sta, same, "the same handle on both radios");
    let mut cal = Calibrator::new(CalibratorConfig::default());
    let status = FrameStatus { len_bytes: 1500, rate: Some(vht9()), tries: 2, aggregated: true };
    let charge = theirs.charge_us(same, Ac::Be, 28).unwrap();
    let done = mine.complete_frame(charge, &status, NOW, Some(&mut cal));
    assert_eq!(done.released, Err(airtime_sched::ReleaseError::OtherRadio));
    assert_eq!((done.registered, done.calibrated), (Ok(()), None));
    assert_eq!(mine.station_airtime(sta).unwrap().tx_us, 0, "nothing registered on this radio");
    assert_eq!(theirs.total_pending_us(), 28, "still pending where it was charged");
    // In a PPDU: counted apart, and not part of the station's sample.
    let charges = [theirs.charge_us(same, Ac::Be, 28).unwrap(), mine.charge_us(sta, Ac::Be, 28).unwrap()];
    let done = mine.complete_ppdu(sta, Ac::Be, charges, 60, NOW, None);
    assert_eq!((done.released.released, done.released.other_radio, done.charged_us, done.foreign), (1, 1, 28, 1));
}
