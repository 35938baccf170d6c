//! Bad input never panics: stale, forged and out-of-range handles get typed errors from
//! every public method, invalid configuration values cannot be built, a full scheduler
//! says so, and garbage charge tokens are refused or clamped.

mod common;

use airtime_sched::{
    Ac, AqlLimits, Charge, ChargeError, Config, ConfigError, Instant, InvalidTid, MayTransmit, Refusal, ReleaseError,
    SchedError, Scheduler, Station, StationErrorKind, StationId, Tid, TxqId, TxqReturn, Weight,
};
use common::*;
use proptest::prelude::*;

const UNKNOWN_STA: Result<(), SchedError> = Err(SchedError::UnknownStation);

/// Calls every station-taking method with `id`; returns how many succeeded (all or none).
/// Not `register_airtime`, which accepts the airtime of a departed station (counted per
/// AC: `airtime_reported_after_removal_is_counted_per_ac`).
fn every_station_method(s: &Scheduler, id: StationId) -> usize {
    let results = [
        s.set_weight(id, w(300)).map(drop),
        s.weight(id).map(drop),
        s.set_station_limits(id, Ac::Be, AqlLimits::DEFAULT).map(drop),
        s.station_limits(id, Ac::Vi).map(drop),
        s.effective_limits(id, Ac::Vo).map(drop),
        s.airtime_check(id, Ac::Bk).map(drop),
        s.station_pending_us(id, Ac::Be).map(drop),
        s.deficit_us(id, Ac::Be).map(drop),
        s.reset_airtime(id).map(drop),
        s.station_aql(id).map(drop),
        s.station_airtime(id).map(drop),
        s.add_txq(Some(id), Tid::BE).and_then(|t| s.remove_txq(t)),
    ];
    for r in &results {
        if let Err(e) = r {
            assert_eq!(*e, SchedError::UnknownStation, "a typed error");
        }
    }
    let ok = results.iter().filter(|r| r.is_ok()).count();
    match s.charge_us(id, Ac::Be, 100) {
        Ok(c) => s.release(c).unwrap(),
        Err(e) => assert!(matches!(e, ChargeError::UnknownStation | ChargeError::StationRemoved), "{e:?}"),
    }
    ok
}

/// Calls every txq-taking method with `id`; returns how many succeeded.
fn every_txq_method(s: &Scheduler, id: TxqId, now: Instant) -> usize {
    let mut ok = 0;
    match s.wake_txq(id, now) {
        Ok(()) => ok += 1,
        Err(e) => assert_eq!(e, SchedError::UnknownTxq),
    }
    match s.txq_info(id) {
        Ok(_) => ok += 1,
        Err(e) => assert_eq!(e, SchedError::UnknownTxq),
    }
    match s.may_transmit(id, now) {
        Ok(MayTransmit::Granted(serving)) => {
            ok += 1;
            s.return_txq(serving, TxqReturn::Empty, now);
        }
        Ok(MayTransmit::Refused(_)) => ok += 1,
        Err(e) => assert_eq!(e, SchedError::UnknownTxq),
    }
    ok
}

#[test]
fn stale_station_handles_are_refused_by_every_method() {
    // One slot, so that the next station takes the removed one's slot.
    let mut s = sched_with(|c| c.max_stations = 1);
    let sta = s.add_station(w(256)).unwrap();
    assert_eq!(every_station_method(&s, sta), 12, "a live handle works everywhere");
    s.remove_station(sta).unwrap();
    assert_eq!(every_station_method(&s, sta), 0);
    assert_eq!(s.remove_station(sta).err(), UNKNOWN_STA.err(), "removing twice");
    // A new occupant of the same slot does not answer to the old handle.
    let next = s.add_station(w(256)).unwrap();
    assert_eq!(next.index(), sta.index());
    assert_eq!(every_station_method(&s, sta), 0);
    assert_eq!(every_station_method(&s, next), 12);
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn out_of_range_and_forged_station_handles_are_refused() {
    let mut s = sched_with(|c| c.max_stations = 2);
    s.add_station(w(256)).unwrap();
    for raw in
        [0, 2, 3, 0xffff, 0x0001_0005, 0xffff_ffff, 0x0002_0000, 0x0000_0fff, 2 << 32, u64::MAX, 0xffff_ffff_0000_0000]
    {
        let id = StationId::from_raw(raw);
        assert_eq!(every_station_method(&s, id), 0, "raw {raw:#x}");
        assert_eq!(s.remove_station(id).err(), UNKNOWN_STA.err());
    }
    s.check_invariants_quiescent().unwrap();
    assert_eq!(s.total_pending_us(), 0);
}

#[test]
fn stale_and_forged_txq_handles_are_refused_by_every_method() {
    let mut s = sched();
    let (sta, txq) = station_with_txq(&s, 256, Ac::Be);
    assert_eq!(every_txq_method(&s, txq, T0), 3);
    s.remove_txq(txq).unwrap();
    assert_eq!(every_txq_method(&s, txq, T0), 0);
    assert_eq!(s.remove_txq(txq), Err(SchedError::UnknownTxq), "removing twice");
    for raw in [0, 1, 0xffff, 0xffff_ffff, 0x0005_0000, 1023, 1024, 0x0001_0400, 2 << 32, u64::MAX, 0x0001_0000_0400] {
        let id = TxqId::from_raw(raw);
        assert_eq!(every_txq_method(&s, id, T0), 0, "raw {raw:#x}");
        assert_eq!(s.remove_txq(id), Err(SchedError::UnknownTxq));
    }
    // A txq removed with its station.
    let other = s.add_txq(Some(sta), Tid::new(5).unwrap()).unwrap();
    s.remove_station(sta).unwrap();
    assert_eq!(every_txq_method(&s, other, T0), 0);
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn removing_a_txq_while_it_is_listed_or_served_loses_nothing() {
    let mut s = sched();
    let (_, listed) = station_with_txq(&s, 256, Ac::Be);
    let (_, served) = station_with_txq(&s, 256, Ac::Be);
    s.wake_txq(listed, T0).unwrap();
    s.wake_txq(served, T0).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    let serving = s.next_txq(round, T0).unwrap();
    assert_eq!(serving.txq(), served, "the txq woken last is at the head (mainline's list_add)");
    s.remove_txq(served).unwrap();
    s.remove_txq(listed).unwrap(); // listed, not served
    s.return_txq(serving, TxqReturn::Backlogged, T0); // returned after removal: dropped
    s.check_invariants_quiescent().unwrap();
    assert!(s.next_txq(round, T0).is_none(), "removed txqs are not handed out");
    s.check_invariants_quiescent().unwrap();
    assert_eq!(s.phy_limit_us(Ac::Be), None, "their entries are gone");
}

#[test]
fn invalid_configuration_values_cannot_be_built() {
    assert_eq!(Weight::new(0), Err(ConfigError::ZeroWeight));
    assert_eq!(AqlLimits::new(2, 1), Err(ConfigError::InvertedLimits { low_us: 2, high_us: 1 }));
    assert_eq!(SchedError::from(ConfigError::ZeroWeight), SchedError::Config(ConfigError::ZeroWeight));
    assert_eq!(Tid::new(17), Err(InvalidTid(17)));
    assert_eq!(Tid::new(255), Err(InvalidTid(255)));
    for edit in [
        (|c: &mut Config| c.max_stations = 0) as fn(&mut Config),
        |c| c.max_stations = Config::MAX_STATIONS + 1,
        |c| c.max_stations = u16::MAX,
        |c| c.max_txqs = 0,
    ] {
        let mut config = Config::default();
        edit(&mut config);
        assert_eq!(Scheduler::new(config).unwrap_err(), ConfigError::Capacity);
    }
    // The extremes that are valid work.
    let mut config = Config::default();
    config.max_stations = Config::MAX_STATIONS;
    config.max_txqs = 1;
    let s = Scheduler::new(config).unwrap();
    let sta = s.add_station(Weight::new(u16::MAX).unwrap()).unwrap();
    s.set_station_limits(sta, Ac::Be, AqlLimits::new(u32::MAX, u32::MAX).unwrap()).unwrap();
    s.set_station_limits(sta, Ac::Vo, AqlLimits::new(0, 0).unwrap()).unwrap();
    assert!(!s.airtime_check(sta, Ac::Vo).unwrap(), "limits of 0 allow nothing");
}

#[test]
fn a_full_scheduler_returns_typed_errors() {
    let mut s = sched_with(|c| {
        c.max_stations = 2;
        c.max_txqs = 3;
    });
    let a = s.add_station(w(256)).unwrap();
    let _b = s.add_station(w(256)).unwrap();
    assert_eq!(s.add_station(w(256)), Err(SchedError::StationsFull));
    for _ in 0..3 {
        s.add_txq(Some(a), Tid::BE).unwrap();
    }
    assert_eq!(s.add_txq(Some(a), Tid::BE), Err(SchedError::TxqsFull));
    assert_eq!(s.add_txq(None, Tid::BE), Err(SchedError::TxqsFull));
    s.check_invariants_quiescent().unwrap();
    // Removing the station frees its txqs' slots.
    s.remove_station(a).unwrap();
    assert!(s.add_station(w(256)).is_ok());
    assert!(s.add_txq(None, Tid::BE).is_ok());
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn garbage_charge_tokens_are_refused_or_clamped() {
    let mut s = sched();
    let sta = s.add_station(w(256)).unwrap();
    assert_eq!(Charge::from_raw(0), None);
    assert_eq!(Charge::from_raw(0xffff_c000), None, "zero units");
    let held = s.charge_us(sta, Ac::Be, 1000).unwrap();
    // Tokens for AC BE (bits 14..16 = 2) naming a free slot, an out-of-range slot, or the
    // live slot with the wrong generation: refused, and nothing is released (documented:
    // a forged token cannot be told apart from another station's charge).
    for raw in [0x0001_8001, 0x1fff_bfff, 0xffff_bfff, 0x2000_8001] {
        let token = Charge::from_raw(raw).expect("non-zero units");
        assert_eq!(token.ac(), Ac::Be);
        assert_eq!(token.airtime_us() % 4, 0);
        assert_eq!(s.release(token), Err(ReleaseError::UnknownStation), "{raw:#x}");
        assert_eq!(s.ac_pending_us(Ac::Be), 1000, "{raw:#x}: the AC counter is untouched");
        assert_eq!(s.station_pending_us(sta, Ac::Be).unwrap(), 1000, "{raw:#x}: the station is untouched");
        s.check_invariants_quiescent().unwrap();
    }
    assert_eq!(s.underflows(), 0);
    // Slot 4095 with generation 0 is a multicast token: with no multicast airtime in
    // flight it finds nothing to release, is clamped, and is counted.
    let multicast = Charge::from_raw(0x0fff_bfff).unwrap();
    assert!(multicast.is_multicast());
    assert_eq!(s.release(multicast), Err(ReleaseError::Underflow));
    assert_eq!(s.multicast_pending_us(Ac::Be), 0);
    assert_eq!(s.ac_pending_us(Ac::Be), 1000, "the unicast counter is untouched");
    assert_eq!(s.underflows(), 1);
    // A token naming the live station (slot 0, generation 1) with too much: both counters
    // clamp together, the underflow is counted, conservation holds.
    let forged = Charge::from_raw(0x1000_8000 | (4000 / 4)).unwrap();
    assert_eq!(forged.station(), Some(sta));
    assert_eq!(s.release(forged), Err(ReleaseError::Underflow));
    assert_eq!(s.station_pending_us(sta, Ac::Be).unwrap(), 0);
    assert_eq!(s.ac_pending_us(Ac::Be), 0);
    assert_eq!(s.underflows(), 2);
    s.check_invariants_quiescent().unwrap();
    // The genuine token now finds nothing to release; whatever it reports, nothing wraps.
    assert!(s.release(held).is_err(), "the genuine token now finds nothing");
    assert_eq!(s.total_pending_us(), 0);
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn a_token_of_a_removed_station_releases_the_ac_counter_and_the_retired_slot() {
    let mut s = sched();
    let sta = s.add_station(w(256)).unwrap();
    let c = s.charge_us(sta, Ac::Vi, 4000).unwrap();
    s.remove_station(sta).unwrap();
    assert_eq!(s.ac_pending_us(Ac::Vi), 4000, "in flight after removal");
    assert_eq!(s.charge_us(sta, Ac::Vi, 4000).unwrap_err(), ChargeError::StationRemoved);
    assert_eq!(s.release(c), Ok(()));
    assert_eq!(s.ac_pending_us(Ac::Vi), 0);
    assert_eq!(s.total_pending_us(), 0);
    assert_eq!(s.underflows(), 0);
    s.check_invariants_quiescent().unwrap();
}

struct StaleStation(StationId);

impl Station for StaleStation {
    type Error = StationErrorKind;
    fn station_id(&self) -> StationId {
        self.0
    }
    fn last_tx_rate(&self) -> Option<airtime_est::Rate> {
        None
    }
    fn expected_airtime_us(&self, frame_len: u32, ac: Ac) -> Result<u32, StationErrorKind> {
        airtime_sched::price_from_rate(self.last_tx_rate(), frame_len, ac)
    }
}

#[test]
fn charge_frame_for_a_stale_station_counts_nothing() {
    let mut s = sched();
    let sta = s.add_station(w(256)).unwrap();
    s.remove_station(sta).unwrap();
    assert_eq!(s.charge_frame(&StaleStation(sta), Ac::Be, 1500), Err(ChargeError::StationRemoved));
    assert_eq!(
        s.charge_frame(&StaleStation(StationId::from_raw(u64::MAX)), Ac::Be, 1500).map(drop),
        Err(ChargeError::UnknownStation)
    );
    assert_eq!(s.total_pending_us(), 0);
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn extreme_times_and_airtimes_do_not_panic() {
    let mut s = sched();
    let (sta, txq) = station_with_txq(&s, 1, Ac::Be);
    for now in [Instant::ZERO, Instant::from_micros(u64::MAX), Instant::from_millis(u64::MAX), Instant::ZERO] {
        s.wake_txq(txq, now).unwrap();
        s.register_airtime(sta, Ac::Be, u32::MAX, u32::MAX, now).unwrap();
        let round = s.start_round(Ac::Be);
        assert!(round.is_open());
        if let Some(serving) = s.next_txq(round, now) {
            s.return_txq(serving, TxqReturn::Stalled, now);
        }
    }
    s.set_aql_threshold_us(0);
    s.set_aql_threshold_us(u32::MAX);
    let c = s.charge_us(sta, Ac::Be, u32::MAX).unwrap();
    assert_eq!(c.airtime_us(), Charge::MAX_US);
    s.release(c).unwrap();
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn l3_may_transmit_refuses_a_station_less_txq_while_the_ac_is_over_its_limit() {
    let mut s = sched();
    let (sta, a) = station_with_txq(&s, 256, Ac::Be);
    let mcast = s.add_txq(None, Tid::BE).unwrap();
    s.wake_txq(a, T0).unwrap();
    let c = s.charge_us(sta, Ac::Be, 20_000).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(!round.is_open());
    assert!(s.next_txq(round, T0).is_none(), "a round serves nothing");
    let allowed = match s.may_transmit(mcast, T0).unwrap() {
        MayTransmit::Granted(p) => {
            s.return_txq(p, TxqReturn::Empty, T0);
            true
        }
        MayTransmit::Refused(why) => {
            assert_eq!(why, Refusal::OverPhyLimit);
            false
        }
    };
    assert!(!allowed, "pull mode serves nothing either");
    assert_eq!(s.ac_counters(Ac::Be).pull_refusals.over_phy_limit, 1, "counted by reason");
    s.release(c).unwrap();
    s.check_invariants_quiescent().unwrap();
}

#[derive(Clone, Debug)]
enum Call {
    Station(u8, u32),
    Txq(u8, u32),
    Release(u32),
    Round(u8),
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![
        (0u8..16, any::<u32>()).prop_map(|(m, raw)| Call::Station(m, raw)),
        (0u8..6, any::<u32>()).prop_map(|(m, raw)| Call::Txq(m, raw)),
        any::<u32>().prop_map(Call::Release),
        (0u8..4).prop_map(Call::Round),
    ]
}

/// A raw handle from 32 random bits: the low half the index, the high half the
/// generation.
fn raw_id(raw: u32) -> u64 {
    u64::from(raw & 0xffff) | (u64::from(raw >> 16) << 32)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Random raw ids into every method: typed errors or success, never a panic, and the
    /// invariants hold afterwards. Raw values near the live handles are mixed in so that
    /// some calls hit live slots.
    #[test]
    fn random_raw_ids_into_every_method_never_panic(calls in proptest::collection::vec(call(), 1..120)) {
        let mut s = sched_with(|c| { c.max_stations = 8; c.max_txqs = 16; });
        let live_sta: Vec<StationId> = (0..4).map(|_| s.add_station(w(256)).unwrap()).collect();
        let live_txq: Vec<TxqId> = live_sta.iter().map(|&st| s.add_txq(Some(st), Tid::BE).unwrap()).collect();
        let now = T0;
        let mut held = Vec::new();
        // Whether a forged token hit a live station (it then clamps that station's counters:
        // a genuine token of it may find less than it carries later).
        let mut forged = false;
        let check = |s: &mut Scheduler| s.check_invariants_quiescent().map_err(|e| TestCaseError::fail(format!("{e}")));
        for c in &calls {
            match *c {
                Call::Station(m, raw) => {
                    // Low raw values name real slots (index in the low half, generation 1).
                    let id = if raw % 3 == 0 {
                        StationId::from_raw(raw_id(((raw >> 8) % 8) | (1 << 16)))
                    } else {
                        StationId::from_raw(raw_id(raw))
                    };
                    let ac = Ac::ALL[(raw % 4) as usize];
                    let r: Result<(), SchedError> = match m {
                        0 => s.set_weight(id, Weight::new((raw as u16).max(1)).unwrap()),
                        1 => s.weight(id).map(drop),
                        2 => s.set_station_limits(id, ac, AqlLimits::new(raw >> 20, raw >> 12).unwrap()),
                        3 => s.station_limits(id, ac).map(drop),
                        4 => s.effective_limits(id, ac).map(drop),
                        5 => s.register_airtime(id, ac, raw, raw >> 3, now),
                        6 => s.airtime_check(id, ac).map(drop),
                        7 => s.station_pending_us(id, ac).map(drop),
                        8 => s.deficit_us(id, ac).map(drop),
                        9 => s.reset_airtime(id),
                        10 => s.station_aql(id).map(drop),
                        11 => s.station_airtime(id).map(drop),
                        12 => s.add_txq(Some(id), Tid::new((raw % 17) as u8).unwrap()).map(drop),
                        13 => s.remove_station(id).map(drop),
                        14 => match s.charge_us(id, ac, raw) {
                            Ok(c) => { held.push(c); Ok(()) }
                            Err(ChargeError::UnknownStation | ChargeError::StationRemoved) => Err(SchedError::UnknownStation),
                            Err(e) => panic!("unexpected {e:?}"),
                        },
                        _ => s.add_station(Weight::new((raw as u16).max(1)).unwrap()).map(drop),
                    };
                    if let Err(e) = r {
                        let typed = matches!(e, SchedError::UnknownStation | SchedError::StationsFull | SchedError::StationsDraining | SchedError::TxqsFull);
                        prop_assert!(typed, "{:?}", e);
                    }
                }
                Call::Txq(m, raw) => {
                    let id = if raw % 3 == 0 {
                        TxqId::from_raw(raw_id(((raw >> 8) % 16) | (1 << 16)))
                    } else {
                        TxqId::from_raw(raw_id(raw))
                    };
                    let r: Result<(), SchedError> = match m {
                        0 => s.wake_txq(id, now),
                        1 => s.txq_info(id).map(drop),
                        2 => s.remove_txq(id),
                        3 => s.may_transmit(id, now).map(|p| {
                            if let Some(p) = p.granted() {
                                s.return_txq(p, TxqReturn::Stalled, now)
                            }
                        }),
                        4 => s.add_txq(None, Tid::new((raw % 17) as u8).unwrap()).map(drop),
                        _ => live_txq.get((raw % 4) as usize).map_or(Ok(()), |&t| s.wake_txq(t, now).or(Ok(()))),
                    };
                    if let Err(e) = r {
                        let typed = matches!(e, SchedError::UnknownTxq | SchedError::UnknownStation | SchedError::TxqsFull);
                        prop_assert!(typed, "{:?}", e);
                    }
                }
                Call::Release(raw) => {
                    if raw % 2 == 0 && !held.is_empty() {
                        let c = held.swap_remove((raw as usize / 2) % held.len());
                        // A genuine token: clean unless garbage released its amount earlier.
                        let clean = s.release(c).is_ok();
                        prop_assert!(clean || forged);
                    } else if let Some(c) = Charge::from_raw(raw) {
                        let before = s.total_pending_us();
                        match s.release(c) {
                            Err(ReleaseError::UnknownStation) => {
                                prop_assert_eq!(s.total_pending_us(), before, "nothing released")
                            }
                            _ => forged = true,
                        }
                    }
                }
                Call::Round(ac) => {
                    let ac = Ac::ALL[usize::from(ac)];
                    let round = s.start_round(ac);
                    while let Some(serving) = s.next_txq(round, now) {
                        s.return_txq(serving, TxqReturn::Empty, now);
                    }
                }
            }
            check(&mut s)?;
        }
        for c in held {
            let clean = s.release(c).is_ok();
            prop_assert!(clean || forged);
        }
        check(&mut s)?;
        prop_assert_eq!(s.total_pending_us(), s.phy_aql_pending().pending_us.iter().sum::<u32>());
        if !forged {
            prop_assert_eq!(s.total_pending_us(), 0, "every genuine charge released: nothing pending");
            prop_assert_eq!(s.underflows(), 0);
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "65 541 charges take minutes in the interpreter; safe integer code only")]
fn a_charge_that_would_overflow_a_station_is_refused_and_the_ac_counter_never_wraps() {
    let mut s = sched();
    let (one, two) = (s.add_station(w(256)).unwrap(), s.add_station(w(256)).unwrap());
    s.set_aql_enabled(false);
    // Charges of the largest size until one would carry the station's counter past
    // u32::MAX us: that one is refused with a typed error and counts nothing.
    let mut held = Vec::new();
    let refused = loop {
        match s.charge_us(one, Ac::Bk, Charge::MAX_US) {
            Ok(c) => held.push(c),
            Err(e) => break e,
        }
    };
    assert_eq!(refused, ChargeError::PendingOverflow);
    let pending = u64::from(s.station_pending_us(one, Ac::Bk).unwrap());
    assert_eq!(pending, held.len() as u64 * u64::from(Charge::MAX_US), "nothing counted for the refusal");
    assert!(pending + u64::from(Charge::MAX_US) > u64::from(u32::MAX));
    // A second station takes the AC past u32::MAX: the AC counter is 64 bits, so the
    // sum stays exact (A1) and the u32 readers saturate instead of wrapping.
    for _ in 0..4 {
        held.push(s.charge_us(two, Ac::Bk, Charge::MAX_US).unwrap());
    }
    assert_eq!(s.ac_pending_us(Ac::Bk), u32::MAX);
    assert_eq!(s.total_pending_us(), u32::MAX);
    s.check_invariants_quiescent().unwrap();
    assert!(s.release_batch(held).is_clean());
    assert_eq!(s.total_pending_us(), 0);
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn a_double_release_takes_from_the_ac_only_what_its_station_had() {
    for batch in [false, true] {
        let mut s = sched();
        let (one, two) = (s.add_station(w(256)).unwrap(), s.add_station(w(256)).unwrap());
        let a = s.charge_us(one, Ac::Be, 100).unwrap().into_raw();
        let b = s.charge_us(two, Ac::Be, 100).unwrap();
        s.release(Charge::from_raw(a).unwrap()).unwrap();
        // The second release of `a` finds nothing on its station: the AC keeps b's 100.
        let again = Charge::from_raw(a).unwrap();
        if batch {
            let done = s.release_batch([again]);
            assert_eq!((done.released, done.underflows), (1, 1), "{done:?}");
        } else {
            assert_eq!(s.release(again), Err(ReleaseError::Underflow));
        }
        assert_eq!(s.ac_pending_us(Ac::Be), 100, "batch={batch}: the other station's airtime stays counted");
        s.check_invariants_quiescent().unwrap();
        assert_eq!(s.release(b), Ok(()), "batch={batch}: the genuine release is exact");
        assert_eq!((s.total_pending_us(), s.underflows()), (0, 1));
        s.check_invariants_quiescent().unwrap();
    }
}

#[test]
fn a_token_that_never_left_rust_is_checked_against_the_whole_generation() {
    let mut config = common::config();
    config.max_stations = 1;
    let s = Scheduler::new(config).unwrap();
    let sta = s.add_station(w(256)).unwrap();
    let a = s.charge_us(sta, Ac::Be, 100).unwrap().into_raw();
    let b = s.charge_us(sta, Ac::Be, 100).unwrap();
    // A double release of `a` empties the station while b is still out, so the slot
    // can be reused: sixteen occupants later the raw form's four bits match again.
    s.release(Charge::from_raw(a).unwrap()).unwrap();
    s.release(Charge::from_raw(a).unwrap()).unwrap();
    let mut id = sta;
    for _ in 0..16 {
        s.remove_station(id).unwrap();
        id = s.add_station(w(256)).unwrap();
    }
    assert_eq!(id.index(), sta.index());
    let held = s.charge_us(id, Ac::Be, 300).unwrap();
    // b carries the whole generation: it cannot take the newcomer's airtime.
    assert_eq!(s.release(b), Err(ReleaseError::UnknownStation));
    assert_eq!(s.station_pending_us(id, Ac::Be).unwrap(), 300);
    s.release(held).unwrap();
    assert_eq!(s.total_pending_us(), 0);
}
