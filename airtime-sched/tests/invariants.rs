//! One test per invariant of `INVARIANTS.md` (A1–A6, S1–S8, L1–L4), each through the
//! public API, each ending with `check_invariants`. Where an invariant is about a mainline
//! mechanism this crate replaced, the test pins our equivalent and says so.

mod common;

use airtime_sched::{
    Ac, AirtimeFlags, AqlLimits, Charge, Instant, OverLimitPolicy, PushError, ReleaseError, Ring, RingErrorKind,
    Station, StationErrorKind, StationId, Tid, TxqReturn, Weight,
};
use airtime_sched::{MayTransmit, Refusal};
use common::*;

// ---------------------------------------------------------------- accounting (A1–A6)

#[test]
fn a1_pending_is_conserved_and_returns_to_zero() {
    let mut s = sched();
    let a = s.add_station(w(256)).unwrap();
    let b = s.add_station(w(512)).unwrap();
    let plan = [(a, Ac::Be, 1000), (a, Ac::Be, 2000), (a, Ac::Vo, 300), (b, Ac::Be, 5004), (b, Ac::Bk, 16)];
    let mut charges: Vec<Charge> = plan.iter().map(|&(sta, ac, us)| s.charge_us(sta, ac, us).unwrap()).collect();

    assert_eq!(s.station_pending_us(a, Ac::Be).unwrap(), 3000);
    assert_eq!(s.station_pending_us(a, Ac::Vo).unwrap(), 300);
    assert_eq!(s.station_pending_us(b, Ac::Be).unwrap(), 5004);
    assert_eq!(s.station_pending_us(b, Ac::Bk).unwrap(), 16);
    assert_eq!(s.ac_pending_us(Ac::Be), 8004);
    assert_eq!(s.ac_pending_us(Ac::Vo), 300);
    assert_eq!(s.ac_pending_us(Ac::Vi), 0);
    assert_eq!(s.ac_pending_us(Ac::Bk), 16);
    assert_eq!(s.total_pending_us(), 8320);
    let file = s.phy_aql_pending();
    assert_eq!(file.total_us, file.pending_us.iter().sum::<u32>());
    s.check_invariants_quiescent().unwrap();

    // Release in a different order than charged: the sums follow exactly.
    let late: Vec<Charge> = charges.drain(..2).collect();
    release_all(&s, &mut charges);
    assert_eq!(s.station_pending_us(a, Ac::Be).unwrap(), 3000);
    assert_eq!(s.total_pending_us(), 3000);
    s.check_invariants_quiescent().unwrap();
    for c in late {
        s.release(c).unwrap();
    }
    for ac in Ac::ALL {
        assert_eq!(s.ac_pending_us(ac), 0);
        assert_eq!(s.station_pending_us(a, ac).unwrap(), 0);
        assert_eq!(s.station_pending_us(b, ac).unwrap(), 0);
    }
    assert_eq!(s.total_pending_us(), 0);
    assert_eq!(s.underflows(), 0);
    s.check_invariants_quiescent().unwrap();
}

/// Mainline keeps the charge in a 10-bit skb field and relies on convention to release it
/// once (A2). Here it is a non-`Clone` token: the amount released is the amount charged,
/// whatever changed in between, and a forged second release is detected and clamped.
#[test]
fn a2_a_token_releases_exactly_what_was_charged_and_a_second_release_is_refused() {
    let mut s = sched();
    let sta = s.add_station(w(256)).unwrap();
    let c = s.charge_us(sta, Ac::Be, 1234).unwrap();
    assert_eq!(c.airtime_us(), 1232);
    assert_eq!((c.station(), c.ac()), (Some(sta), Ac::Be));
    // Changing what pricing depends on does not change what is released.
    s.set_weight(sta, w(4000)).unwrap();
    s.set_station_limits(sta, Ac::Be, AqlLimits::new(10, 20).unwrap()).unwrap();
    let other = s.charge_us(sta, Ac::Be, 400).unwrap();
    s.release(c).unwrap();
    assert_eq!(s.station_pending_us(sta, Ac::Be).unwrap(), 400);

    // Through the compact u32 form the same amount comes back.
    let raw = other.into_raw();
    assert_ne!(raw, 0);
    let back = Charge::from_raw(raw).unwrap();
    assert_eq!(back.airtime_us(), 400);
    s.release(back).unwrap();
    assert_eq!(s.total_pending_us(), 0);

    // Releasing the stored raw value a second time is the caller's bug: reported, and
    // nothing wraps.
    let again = Charge::from_raw(raw).unwrap();
    assert!(s.release(again).is_err());
    assert_eq!(s.station_pending_us(sta, Ac::Be).unwrap(), 0);
    assert_eq!(s.ac_pending_us(Ac::Be), 0);
    s.check_invariants_quiescent().unwrap();
}

/// The `Charge::from_raw` contract: a value released twice is detected and reported
/// (`ReleaseError`). With another charge of the station still out, the second release
/// takes part of that charge's pending airtime and succeeds; the other charge's genuine
/// release then finds less than it carries, is reported as an underflow, and clamps
/// every counter at zero: nothing stays pending (no pinned station, B3).
#[test]
fn a2_a_double_release_through_raw_is_reported_and_leaks_nothing() {
    let mut s = sched();
    let sta = s.add_station(w(256)).unwrap();
    let first = s.charge_us(sta, Ac::Be, 400).unwrap().into_raw();
    let second = s.charge_us(sta, Ac::Be, 1000).unwrap();
    s.release(Charge::from_raw(first).unwrap()).unwrap();
    let again = s.release(Charge::from_raw(first).unwrap());
    let last = s.release(second);
    assert!(again.is_err() || last.is_err(), "the double release is reported somewhere");
    assert_eq!(s.station_pending_us(sta, Ac::Be).unwrap(), 0, "nothing left pending");
    assert_eq!(s.ac_pending_us(Ac::Be), 0, "nothing left pending");
    s.check_invariants_quiescent().unwrap();
}

/// After the leak above, the station is removed and its slot reused: the new station
/// must start with nothing pending (`add_station` reuses a slot only when its AQL words
/// are closed and hold nothing).
#[test]
fn a1_a_new_station_never_inherits_pending_airtime() {
    let mut s = sched_with(|c| c.max_stations = 1);
    let sta = s.add_station(w(256)).unwrap();
    let first = s.charge_us(sta, Ac::Be, 400).unwrap().into_raw();
    let second = s.charge_us(sta, Ac::Be, 1000).unwrap();
    s.release(Charge::from_raw(first).unwrap()).unwrap();
    let _ = s.release(Charge::from_raw(first).unwrap());
    let _ = s.release(second);
    s.remove_station(sta).unwrap();
    let next = s.add_station(w(256)).unwrap();
    assert_eq!(next.index(), sta.index(), "the same slot");
    assert_eq!(s.station_pending_us(next, Ac::Be).unwrap(), 0, "a new station starts with nothing pending");
    assert!(s.airtime_check(next, Ac::Be).unwrap());
    s.check_invariants_quiescent().unwrap();
}

struct PricedStation {
    id: StationId,
    price: Result<u32, StationErrorKind>,
}

impl Station for PricedStation {
    type Error = StationErrorKind;
    fn station_id(&self) -> StationId {
        self.id
    }
    fn last_tx_rate(&self) -> Option<airtime_est::Rate> {
        None
    }
    fn expected_airtime_us(&self, _frame_len: u32, _ac: Ac) -> Result<u32, StationErrorKind> {
        self.price
    }
}

/// A3 with our wider range: every charge is a multiple of 4 in [4, Charge::MAX_US] (mainline
/// clamps at 4092, E2), and a frame with no price is charged the configured conservative
/// default instead of nothing (E1).
#[test]
fn a3_charges_are_multiples_of_four_within_range() {
    let mut s = sched();
    let sta = s.add_station(w(256)).unwrap();
    let mut charges = Vec::new();
    let mut expected_sum = 0u32;
    for (estimate, expect) in [
        (0, 4),
        (1, 4),
        (3, 4),
        (4, 4),
        (5, 4),
        (29, 28),
        (4095, 4092),
        (5000, 5000),
        (65_535, 65_532),
        (u32::MAX, 65_532),
    ] {
        let c = s.charge_us(sta, Ac::Bk, estimate).unwrap();
        assert_eq!(c.airtime_us(), expect, "estimate {estimate}");
        assert_eq!(c.airtime_us() % 4, 0);
        assert!((4..=Charge::MAX_US).contains(&c.airtime_us()));
        expected_sum += expect;
        charges.push(c);
    }
    assert_eq!(s.station_pending_us(sta, Ac::Bk).unwrap(), expected_sum);

    let unknown = s.config().unknown_rate_charge_us;
    for price in [Err(StationErrorKind::NoRate), Err(StationErrorKind::Other), Ok(0)] {
        let c = s.charge_frame(&PricedStation { id: sta, price }, Ac::Be, 1500).unwrap();
        assert_eq!(c.airtime_us(), unknown & !3, "{price:?} is charged the unknown-rate default");
        charges.push(c);
    }
    let c = s.charge_frame(&PricedStation { id: sta, price: Ok(1911) }, Ac::Be, 1500).unwrap();
    assert_eq!(c.airtime_us(), 1908);
    charges.push(c);
    s.check_invariants_quiescent().unwrap();
    release_all(&s, &mut charges);
    assert_eq!(s.total_pending_us(), 0);
}

#[test]
fn a4_a_release_clamps_counters_at_zero() {
    let mut s = sched();
    let sta = s.add_station(w(256)).unwrap();
    let small = s.charge_us(sta, Ac::Be, 100).unwrap();
    // Forge a token for the same station and AC carrying 1000 us instead of 100.
    let raw = small.into_raw();
    let forged = Charge::from_raw((raw & !0x3fff) | (1000 / 4)).unwrap();
    assert_eq!(forged.airtime_us(), 1000);
    assert_eq!(s.release(forged), Err(ReleaseError::Underflow));
    assert_eq!(s.station_pending_us(sta, Ac::Be).unwrap(), 0, "clamped, not wrapped");
    assert_eq!(s.ac_pending_us(Ac::Be), 0, "clamped, not wrapped");
    assert_eq!(s.total_pending_us(), 0);
    assert_eq!(s.underflows(), 1);
    s.check_invariants_quiescent().unwrap();
    // Counting goes on exactly from zero.
    let c = s.charge_us(sta, Ac::Be, 800).unwrap();
    assert_eq!(s.ac_pending_us(Ac::Be), 800);
    s.release(c).unwrap();
    assert_eq!(s.ac_pending_us(Ac::Be), 0);
    s.check_invariants_quiescent().unwrap();
}

/// A ring with `room` descriptors; a push beyond that is refused and handed back.
struct TestRing {
    room: usize,
    held: Vec<(u32, Option<Charge>)>,
}

impl Ring for TestRing {
    type Frame = u32;
    type Error = RingErrorKind;
    fn has_room(&self, _ac: Ac) -> bool {
        self.held.len() < self.room
    }
    fn push(&mut self, frame: u32, charge: Option<Charge>) -> Result<(), PushError<u32, RingErrorKind>> {
        if self.held.len() >= self.room {
            return Err(PushError { frame, charge, error: RingErrorKind::Full });
        }
        self.held.push((frame, charge));
        Ok(())
    }
}

/// A5: every charged frame leaves through exactly one release, including the frame a full
/// ring refuses (it comes back with its charge, nothing is lost).
#[test]
fn a5_every_exit_releases_including_a_refused_push() {
    let mut s = sched();
    let sta = s.add_station(w(256)).unwrap();
    let mut ring = TestRing { room: 3, held: Vec::new() };
    let mut refused = Vec::new();
    for frame in 0..5u32 {
        let charge = s.charge_us(sta, Ac::Be, 1000).unwrap();
        if let Err(PushError { frame, charge, error }) = ring.push(frame, Some(charge)) {
            assert_eq!(error, RingErrorKind::Full);
            refused.push((frame, charge));
        }
    }
    assert_eq!(ring.held.len(), 3);
    assert_eq!(refused.iter().map(|(f, _)| *f).collect::<Vec<_>>(), vec![3, 4], "refused frames come back");
    assert_eq!(s.station_pending_us(sta, Ac::Be).unwrap(), 5000);
    // Refused frames are freed (their exit), completed frames complete (theirs).
    for (_, c) in refused.drain(..).chain(ring.held.drain(..)) {
        s.release(c.expect("every frame here carries a charge")).unwrap();
    }
    assert_eq!(s.total_pending_us(), 0);
    s.check_invariants_quiescent().unwrap();
}

/// A6 in mainline is about finding the charged station at release (by pointer or by
/// 802.11 address). Here the token names the station slot and generation: a release after
/// the station was removed still reaches that slot, and the slot is not reused before all
/// its charges are back, so no later station is credited.
#[test]
fn a6_a_release_after_station_removal_reaches_the_charged_station() {
    let mut s = sched_with(|c| c.max_stations = 1);
    let sta = s.add_station(w(256)).unwrap();
    let c1 = s.charge_us(sta, Ac::Be, 2000).unwrap();
    let c2 = s.charge_us(sta, Ac::Vi, 600).unwrap().into_raw();
    s.remove_station(sta).unwrap();
    assert!(s.station_pending_us(sta, Ac::Be).is_err(), "the handle is refused once removed");
    assert_eq!(s.add_station(w(256)), Err(airtime_sched::SchedError::StationsDraining), "slot held by charges");
    s.check_invariants_quiescent().unwrap();

    s.release(c1).unwrap();
    assert_eq!(s.ac_pending_us(Ac::Be), 0);
    assert_eq!(s.add_station(w(256)), Err(airtime_sched::SchedError::StationsDraining), "one charge still out");
    s.release(Charge::from_raw(c2).unwrap()).unwrap();
    assert_eq!(s.total_pending_us(), 0);
    s.check_invariants_quiescent().unwrap();

    let next = s.add_station(w(256)).unwrap();
    assert_ne!(next, sta, "a new generation");
    for ac in Ac::ALL {
        assert_eq!(s.station_pending_us(next, ac).unwrap(), 0);
    }
    s.check_invariants_quiescent().unwrap();
}

// ---------------------------------------------------------------- scheduling (S1–S8)

#[test]
fn s1_a_wake_during_service_is_not_lost() {
    let mut s = sched();
    let (_, a) = station_with_txq(&s, 256, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    let serving = s.next_txq(round, T0).unwrap();
    // A frame arrives while the server holds the txq; the server then sees it empty.
    s.wake_txq(a, T0).unwrap();
    s.return_txq(serving, TxqReturn::Empty, T0);
    s.check_invariants_quiescent().unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    assert_eq!(serve_once(&s, round, TxqReturn::Empty, T0), Some(a), "the woken txq is still listed");
    // Returned empty with nothing new: no longer listed (its deficit is not negative).
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    assert_eq!(serve_once(&s, round, TxqReturn::Empty, T0), None);
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn s1_a_txq_returned_with_frames_stays_listed_whatever_the_outcome() {
    let mut s = sched();
    let (_, a) = station_with_txq(&s, 256, Ac::Be);
    for outcome in [TxqReturn::Backlogged, TxqReturn::Stalled] {
        s.wake_txq(a, T0).unwrap();
        let round = s.start_round(Ac::Be);
        assert!(round.is_open());
        assert_eq!(serve_once(&s, round, outcome, T0), Some(a));
        s.check_invariants_quiescent().unwrap();
        let round = s.start_round(Ac::Be);
        assert!(round.is_open());
        assert_eq!(serve_once(&s, round, TxqReturn::Empty, T0), Some(a), "{outcome:?} kept it listed");
    }
    // A dropped Serving handle counts as Stalled: the backlog is not lost either.
    s.wake_txq(a, T0).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    drop(s.next_txq(round, T0).unwrap());
    s.check_invariants_quiescent().unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    assert_eq!(serve_once(&s, round, TxqReturn::Empty, T0), Some(a));
}

#[test]
fn s2_a_txq_is_listed_at_most_once() {
    let mut s = sched();
    let (_, a) = station_with_txq(&s, 256, Ac::Be);
    for _ in 0..5 {
        s.wake_txq(a, T0).unwrap();
    }
    assert_eq!(s.phy_limit_us(Ac::Be), Some(12_000), "n = 1 listed txq");
    s.check_invariants_quiescent().unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    assert_eq!(serve_once(&s, round, TxqReturn::Empty, T0), Some(a));
    assert_eq!(serve_once(&s, round, TxqReturn::Empty, T0), None, "no second entry");
    assert_eq!(s.phy_limit_us(Ac::Be), None, "nothing listed");
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn s3_a_served_txq_has_one_server_at_a_time() {
    let mut s = sched();
    let (_, a) = station_with_txq(&s, 256, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    let serving = s.next_txq(round, T0).unwrap();
    assert_eq!(serving.txq(), a);
    s.wake_txq(a, T0).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    assert!(s.next_txq(round, T0).is_none(), "a wake while held does not list it again");
    assert_eq!(s.may_transmit(a, T0).unwrap().refusal(), Some(Refusal::Served), "may_transmit refuses a second server");
    s.return_txq(serving, TxqReturn::Backlogged, T0);
    s.check_invariants_quiescent().unwrap();
    let pulled = s.may_transmit(a, T0).unwrap().granted().expect("free again");
    assert_eq!(s.may_transmit(a, T0).unwrap().refusal(), Some(Refusal::Served));
    assert_eq!(s.ac_counters(Ac::Be).pull_refusals.served, 2, "both refusals counted");
    s.return_txq(pulled, TxqReturn::Empty, T0);
    s.check_invariants_quiescent().unwrap();
}

/// An ask for a txq another context holds is refused before the deficit is looked
/// at, so a station in debt is not topped up for a turn it does not get.
#[test]
fn s3_an_ask_for_a_held_txq_leaves_the_deficit_alone() {
    let mut s = sched();
    let (sta, a) = station_with_txq(&s, 256, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    let round = s.start_round(Ac::Be);
    let serving = s.next_txq(round, T0).unwrap();
    s.register_airtime(sta, Ac::Be, 5_000, 0, T0).unwrap();
    let debt = s.deficit_us(sta, Ac::Be).unwrap();
    assert!(debt < 0, "in debt: {debt}");
    for _ in 0..3 {
        assert_eq!(s.may_transmit(a, T0).unwrap().refusal(), Some(Refusal::Served));
        assert_eq!(s.deficit_us(sta, Ac::Be).unwrap(), debt, "a refused ask for a held txq topped its deficit up");
    }
    assert_eq!(s.ac_counters(Ac::Be).pull_refusals.deficit, 0);
    s.return_txq(serving, TxqReturn::Backlogged, T0);
    // Free again: the debt refuses the ask, and tops it up by the weight.
    assert_eq!(s.may_transmit(a, T0).unwrap().refusal(), Some(Refusal::Deficit));
    assert_eq!(s.deficit_us(sta, Ac::Be).unwrap(), debt + 256);
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn s4_a_txq_is_handed_out_at_most_once_per_round() {
    let mut s = sched();
    let (_, a) = station_with_txq(&s, 256, Ac::Be);
    let (_, b) = station_with_txq(&s, 256, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    s.wake_txq(b, T0).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    let mut served = Vec::new();
    while let Some(id) = serve_once(&s, round, TxqReturn::Backlogged, T0) {
        served.push(id);
        assert!(served.len() <= 2, "served {served:?} in one round");
    }
    // B, woken last, is at the head (mainline's list_add); returned with frames it goes
    // back to the head, keeps its turn, and ends the round when met again.
    assert_eq!(served, vec![b]);
    assert_eq!(s.ac_counters(Ac::Be).skipped_selections, 1, "the round ended at a txq it had served");
    s.check_invariants_quiescent().unwrap();
    // Returned stalled (to the tail), each is handed out once in every round, and the
    // round ends when it meets the first of them again.
    for r in 2..6 {
        let round = s.start_round(Ac::Be);
        assert!(round.is_open());
        let mut served = Vec::new();
        while let Some(id) = serve_once(&s, round, TxqReturn::Stalled, T0) {
            served.push(id);
            assert!(served.len() <= 2, "round {r}: served {served:?}");
        }
        served.sort();
        assert_eq!(served, vec![a, b], "round {r}");
        assert_eq!(s.ac_counters(Ac::Be).skipped_selections, r);
    }
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn s5_closing_an_ac_never_reuses_a_round_number() {
    let mut s = sched();
    let (sta, a) = station_with_txq(&s, 256, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    let mut last = 0u64;
    let mut held = Vec::new();
    for step in 0..20 {
        let close = step % 3 == 1;
        if close {
            held.push(s.charge_us(sta, Ac::Be, 20_000).unwrap());
        }
        let round = s.start_round(Ac::Be);
        let open = round.is_open();
        let (flag, number) = s.round(Ac::Be);
        assert_eq!(open, flag);
        assert_eq!(open, !close, "step {step}");
        if open {
            assert!(number > last, "step {step}: open round {number} after {last}");
            assert_ne!(number, 0);
            last = number;
        } else {
            assert_eq!(number, last, "closing keeps the number");
        }
        release_all(&s, &mut held);
        s.check_invariants_quiescent().unwrap();
    }
    let c = s.ac_counters(Ac::Be);
    assert_eq!((c.rounds_started, c.closed_rounds), (13, 7));
}

#[test]
fn s6_next_txq_terminates_at_weight_one_with_a_huge_debt() {
    let mut s = sched();
    let (sta, a) = station_with_txq(&s, 1, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    s.register_airtime(sta, Ac::Be, u32::MAX, 0, T0).unwrap();
    let debt = 1 - i64::from(u32::MAX);
    assert_eq!(s.deficit_us(sta, Ac::Be).unwrap(), debt);
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    // Walking this one lap at a time would take 4.3e9 laps; the boost applies them at once.
    assert_eq!(serve_once(&s, round, TxqReturn::Empty, T0), Some(a));
    assert_eq!(s.deficit_us(sta, Ac::Be).unwrap(), 0, "lifted exactly to zero, as walked laps would");
    s.check_invariants_quiescent().unwrap();
}

/// Applying the laps at once has the same result as walking them (mainline), for the
/// served station and for the stations behind it in the lap, which walked laps would
/// have topped up once per lap too: both reach 0 here.
#[test]
fn s6_boosted_laps_credit_every_station_like_walked_laps() {
    let mut s = sched();
    let (sta, a) = station_with_txq(&s, 1, Ac::Be);
    let (stb, b) = station_with_txq(&s, 1, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    s.wake_txq(b, T0).unwrap();
    s.register_airtime(sta, Ac::Be, 1001, 0, T0).unwrap();
    s.register_airtime(stb, Ac::Be, 1001, 0, T0).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    assert_eq!(serve_once(&s, round, TxqReturn::Backlogged, T0), Some(b));
    // Walked: 1000 laps, each topping both up by 1; B (woken last, at the head) is met
    // first in lap 1001 and served.
    assert_eq!(s.deficit_us(stb, Ac::Be).unwrap(), 0);
    assert_eq!(s.deficit_us(sta, Ac::Be).unwrap(), 0, "A was topped up in every walked lap too");
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn s6_a_lap_without_an_aql_eligible_station_returns_none() {
    let mut s = sched();
    let (sta, a) = station_with_txq(&s, 256, Ac::Be);
    let (stb, b) = station_with_txq(&s, 256, Ac::Be);
    let held = [s.charge_us(sta, Ac::Be, 12_000).unwrap(), s.charge_us(stb, Ac::Be, 12_000).unwrap()];
    s.wake_txq(a, T0).unwrap();
    s.wake_txq(b, T0).unwrap();
    s.set_aql_enabled(false);
    let round = s.start_round(Ac::Be);
    assert!(round.is_open(), "the round opens with AQL off");
    s.set_aql_enabled(true);
    let before = [s.deficit_us(sta, Ac::Be).unwrap(), s.deficit_us(stb, Ac::Be).unwrap()];
    assert!(s.next_txq(round, T0).is_none());
    let after = [s.deficit_us(sta, Ac::Be).unwrap(), s.deficit_us(stb, Ac::Be).unwrap()];
    assert_eq!(after, [before[0] + 256, before[1] + 256], "exactly one lap of top-ups");
    s.check_invariants_quiescent().unwrap();
    for c in held {
        s.release(c).unwrap();
    }
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn s7_a_stalled_txq_does_not_pin_the_front() {
    let mut s = sched();
    let (_, a) = station_with_txq(&s, 256, Ac::Be);
    let (_, b) = station_with_txq(&s, 256, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    s.wake_txq(b, T0).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    assert_eq!(serve_once(&s, round, TxqReturn::Stalled, T0), Some(b), "woken last, at the head");
    assert_eq!(serve_once(&s, round, TxqReturn::Stalled, T0), Some(a), "a stalled txq does not end the round");
    s.check_invariants_quiescent().unwrap();
    // Across rounds, a txq that stalls every time does not keep the other from service.
    for _ in 0..4 {
        let round = s.start_round(Ac::Be);
        assert!(round.is_open());
        let first = serve_once(&s, round, TxqReturn::Stalled, T0).unwrap();
        let second = serve_once(&s, round, TxqReturn::Stalled, T0).unwrap();
        assert_ne!(first, second, "both served in every round");
    }
    // The contrast: returned Backlogged (it made progress), the txq goes to the front, is met
    // again first and ends the round there (mainline's head insertion).
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    assert!(serve_once(&s, round, TxqReturn::Backlogged, T0).is_some());
    assert_eq!(serve_once(&s, round, TxqReturn::Backlogged, T0), None);
    assert_eq!(s.ac_counters(Ac::Be).skipped_selections, 1);
    s.check_invariants_quiescent().unwrap();
}

/// A txq that cannot progress (ring full, power save) while frames keep arriving: every
/// service sees a wake, and the server returns it Stalled. The wake must not send it to
/// the front, where it would end the round before the other txq (B4, S7).
#[test]
fn s7_a_stalled_txq_woken_during_service_does_not_pin_the_front() {
    let mut s = sched();
    let (_, a) = station_with_txq(&s, 256, Ac::Be);
    let (_, b) = station_with_txq(&s, 256, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    s.wake_txq(b, T0).unwrap();
    // A first round in which both stall (ring full): both go to the tail, B ahead of A.
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    assert_eq!(serve_once(&s, round, TxqReturn::Stalled, T0), Some(b));
    assert_eq!(serve_once(&s, round, TxqReturn::Stalled, T0), Some(a));
    // From now on B could send, A cannot, and A keeps receiving frames.
    for r in 0..4 {
        let round = s.start_round(Ac::Be);
        assert!(round.is_open());
        let mut served = Vec::new();
        while let Some(serving) = s.next_txq(round, T0) {
            let id = serving.txq();
            served.push(id);
            if id == a {
                s.wake_txq(a, T0).unwrap(); // a frame arrives meanwhile; A still cannot send
                s.return_txq(serving, TxqReturn::Stalled, T0);
            } else {
                s.return_txq(serving, TxqReturn::Backlogged, T0);
            }
            if served.len() > 2 {
                break;
            }
        }
        assert!(served.contains(&b), "round {r}: B served (got {served:?})");
    }
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn s8_a_top_up_adds_exactly_the_current_weight() {
    let mut s = sched();
    let (sta, a) = station_with_txq(&s, 256, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    s.register_airtime(sta, Ac::Be, 356, 0, T0).unwrap();
    assert_eq!(s.deficit_us(sta, Ac::Be).unwrap(), -100);
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    assert_eq!(serve_once(&s, round, TxqReturn::Backlogged, T0), Some(a));
    assert_eq!(s.deficit_us(sta, Ac::Be).unwrap(), 156, "one top-up of 256");

    s.set_weight(sta, w(500)).unwrap();
    assert_eq!(s.weight(sta).unwrap(), w(500));
    s.register_airtime(sta, Ac::Be, 556, 0, T0).unwrap();
    assert_eq!(s.deficit_us(sta, Ac::Be).unwrap(), -400);
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    assert_eq!(serve_once(&s, round, TxqReturn::Empty, T0), Some(a));
    assert_eq!(s.deficit_us(sta, Ac::Be).unwrap(), 100, "one top-up of the new weight, 500");
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn s8_registered_airtime_is_charged_only_to_stations_active_within_the_window() {
    let mut s = sched();
    let (sta, a) = station_with_txq(&s, 256, Ac::Be);
    // Never scheduled: statistics only.
    s.register_airtime(sta, Ac::Be, 1000, 500, T0).unwrap();
    assert_eq!(s.deficit_us(sta, Ac::Be).unwrap(), 256);
    let stats = s.station_airtime(sta).unwrap();
    assert_eq!((stats.tx_us, stats.rx_us, stats.tx_us_per_ac[Ac::Be]), (1000, 500, 1000));

    s.wake_txq(a, T0).unwrap(); // active from T0
    let window = s.config().active_window_us;
    s.register_airtime(sta, Ac::Be, 1000, 500, T0.add_micros(window - 1)).unwrap();
    assert_eq!(s.deficit_us(sta, Ac::Be).unwrap(), 256 - 1500, "tx + rx charged while active");
    s.register_airtime(sta, Ac::Be, 1000, 500, T0.add_micros(window)).unwrap();
    assert_eq!(s.deficit_us(sta, Ac::Be).unwrap(), 256 - 1500, "not charged once the window has passed");
    // Other ACs have their own activity.
    s.register_airtime(sta, Ac::Vi, 1000, 0, T0).unwrap();
    assert_eq!(s.deficit_us(sta, Ac::Vi).unwrap(), 256);
    assert_eq!(s.station_airtime(sta).unwrap().tx_us, 4000);
    s.check_invariants_quiescent().unwrap();
}

/// The activity stamp moves only once it is a grain old (`Config::active_stamp_grain_us`,
/// 781 us of 100 ms): a wake less than a grain after the stamp leaves it, so the window
/// runs from the older time; a wake a grain after it moves it.
#[test]
fn s8_the_activity_stamp_moves_only_once_a_grain_old() {
    let s = sched();
    let (window, grain) = (s.config().active_window_us, s.config().active_stamp_grain_us());
    assert_eq!((window, grain), (100_000, 781));
    let (near, a) = station_with_txq(&s, 256, Ac::Be);
    let (far, b) = station_with_txq(&s, 256, Ac::Be);
    // Both stamped at T0 (exact: their stamps were far older).
    for txq in [a, b] {
        s.wake_txq(txq, T0).unwrap();
        let round = s.start_round(Ac::Be);
        let served = s.next_txq(round, T0).unwrap();
        s.return_txq(served, TxqReturn::Empty, T0);
    }
    // Listed again, a grain less 1 us later and a grain later.
    s.wake_txq(a, T0.add_micros(grain - 1)).unwrap();
    s.wake_txq(b, T0.add_micros(grain)).unwrap();
    // A window after T0: `near` kept its T0 stamp and is no longer active; `far` was
    // stamped a grain later and still is.
    let at = T0.add_micros(window);
    s.register_airtime(near, Ac::Be, 1000, 0, at).unwrap();
    s.register_airtime(far, Ac::Be, 1000, 0, at).unwrap();
    assert_eq!(s.deficit_us(near, Ac::Be).unwrap(), 256, "not charged: its stamp is T0");
    assert_eq!(s.deficit_us(far, Ac::Be).unwrap(), 256 - 1000, "charged: stamped at T0 + grain");
}

#[test]
fn s8_airtime_flags_choose_what_the_deficit_is_charged() {
    let mut s = sched();
    let (sta, a) = station_with_txq(&s, 256, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    let cases = [((true, true), 1100), ((true, false), 1000), ((false, true), 100), ((false, false), 0)];
    for ((tx, rx), charged) in cases {
        s.set_airtime_flags(AirtimeFlags::new(tx, rx));
        assert_eq!(s.airtime_flags(), AirtimeFlags::new(tx, rx));
        let before = s.deficit_us(sta, Ac::Be).unwrap();
        s.register_airtime(sta, Ac::Be, 1000, 100, T0).unwrap();
        assert_eq!(before - s.deficit_us(sta, Ac::Be).unwrap(), charged, "flags tx={tx} rx={rx}");
    }
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn s8_reset_airtime_sets_every_deficit_back_to_the_weight() {
    let mut s = sched();
    let (sta, a) = station_with_txq(&s, 300, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    s.register_airtime(sta, Ac::Be, 5000, 0, T0).unwrap();
    s.reset_airtime(sta).unwrap();
    for ac in Ac::ALL {
        assert_eq!(s.deficit_us(sta, ac).unwrap(), 300);
    }
    assert_eq!(s.station_airtime(sta).unwrap().tx_us, 0);
    s.check_invariants_quiescent().unwrap();
}

// ---------------------------------------------------------------- limits (L1–L4)

#[test]
fn l1_a_station_over_its_limit_is_gated() {
    let mut s = sched();
    let (sta, a) = station_with_txq(&s, 65_535, Ac::Be);
    let (other, _) = station_with_txq(&s, 256, Ac::Be);
    let mut held = vec![s.charge_us(sta, Ac::Be, 6000).unwrap()];
    // Between the limits: allowed while the PHY total is below the threshold.
    assert!(s.airtime_check(sta, Ac::Be).unwrap());
    held.push(s.charge_us(other, Ac::Vi, 18_000).unwrap());
    assert_eq!(s.total_pending_us(), 24_000);
    assert!(!s.airtime_check(sta, Ac::Be).unwrap(), "low limit applies at the threshold");
    release_all(&s, &mut held);

    held.push(s.charge_us(sta, Ac::Be, 12_000).unwrap());
    assert!(!s.airtime_check(sta, Ac::Be).unwrap(), "at the high limit");
    s.wake_txq(a, T0).unwrap();
    s.set_aql_enabled(false);
    assert!(s.airtime_check(sta, Ac::Be).unwrap(), "AQL off: no gate");
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    s.set_aql_enabled(true);
    assert!(s.next_txq(round, T0).is_none(), "next_txq does not hand out a gated station");
    s.check_invariants_quiescent().unwrap();
    release_all(&s, &mut held);
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    let serving = s.next_txq(round, T0).unwrap();
    assert!(serving.airtime_check());
    s.return_txq(serving, TxqReturn::Empty, T0);
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn l2_overshoot_is_at_most_one_frame_per_server() {
    let mut s = sched();
    let sta = s.add_station(w(65_535)).unwrap();
    let t0 = s.add_txq(Some(sta), Tid::new(0).unwrap()).unwrap();
    let t3 = s.add_txq(Some(sta), Tid::new(3).unwrap()).unwrap();
    let frame_us = 5000;
    let high = s.effective_limits(sta, Ac::Be).unwrap().high_us();
    let mut held = Vec::new();

    // One server checking before each dequeue.
    s.wake_txq(t0, T0).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    let serving = s.next_txq(round, T0).unwrap();
    while serving.airtime_check() {
        held.push(s.charge_us(sta, Ac::Be, frame_us).unwrap());
    }
    s.return_txq(serving, TxqReturn::Stalled, T0);
    let pending = s.station_pending_us(sta, Ac::Be).unwrap();
    assert!(pending >= high && pending < high + frame_us, "one server: {pending}");
    release_all(&s, &mut held);

    // Two servers of the same station, interleaved: each passes its check once more.
    held.push(s.charge_us(sta, Ac::Be, 10_000).unwrap());
    s.wake_txq(t3, T0).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    let first = s.next_txq(round, T0).unwrap();
    let second = s.next_txq(round, T0).unwrap();
    assert_ne!(first.txq(), second.txq());
    let servers = vec![first, second];
    loop {
        // Both servers check, then both dequeue and charge: the worst interleaving.
        let passed: Vec<bool> = servers.iter().map(|serving| serving.airtime_check()).collect();
        if !passed.contains(&true) {
            break;
        }
        for _ in passed.iter().filter(|&&ok| ok) {
            held.push(s.charge_us(sta, Ac::Be, frame_us).unwrap());
        }
    }
    let pending = s.station_pending_us(sta, Ac::Be).unwrap();
    assert!(pending <= high + 2 * frame_us, "two servers: {pending}");
    assert_eq!(pending, 20_000);
    for serving in servers {
        s.return_txq(serving, TxqReturn::Empty, T0);
    }
    s.check_invariants_quiescent().unwrap();
    release_all(&s, &mut held);
}

#[test]
fn l3_a_closed_ac_serves_nothing() {
    for policy in [OverLimitPolicy::Refuse, OverLimitPolicy::AllowLikeMainline] {
        let mut s = sched_with(|c| c.over_limit = policy);
        let (sta, a) = station_with_txq(&s, 256, Ac::Be);
        let mcast = s.add_txq(None, Tid::BE).unwrap();
        s.wake_txq(a, T0).unwrap();
        s.wake_txq(mcast, T0).unwrap();
        let limit = s.phy_limit_us(Ac::Be).unwrap();
        assert_eq!(limit, 14_500, "two listed txqs");
        let c = s.charge_us(sta, Ac::Be, limit).unwrap();
        let round = s.start_round(Ac::Be);
        assert!(!round.is_open());
        assert!(!s.round(Ac::Be).0);
        assert!(s.next_txq(round, T0).is_none(), "nothing served, station-less txqs included");
        assert_eq!(s.ac_counters(Ac::Be).closed_rounds, 1);
        match s.may_transmit(a, T0).unwrap() {
            MayTransmit::Refused(why) => {
                assert_eq!(policy, OverLimitPolicy::Refuse, "may_transmit honours L3 by default");
                assert_eq!(why, Refusal::OverPhyLimit);
            }
            MayTransmit::Granted(pulled) => {
                assert_eq!(policy, OverLimitPolicy::AllowLikeMainline, "mainline's may_transmit allows over the limit");
                s.return_txq(pulled, TxqReturn::Backlogged, T0);
            }
        }
        s.check_invariants_quiescent().unwrap();
        s.release(c).unwrap();
        let round = s.start_round(Ac::Be);
        assert!(round.is_open());
        assert!(serve_once(&s, round, TxqReturn::Empty, T0).is_some());
        s.check_invariants_quiescent().unwrap();
    }
}

#[test]
fn l3_an_ac_with_nothing_listed_has_no_limit() {
    let mut s = sched();
    let sta = s.add_station(w(256)).unwrap();
    let c = s.charge_us(sta, Ac::Be, 60_000).unwrap();
    assert_eq!(s.phy_limit_us(Ac::Be), None);
    let round = s.start_round(Ac::Be);
    assert!(round.is_open(), "n = 0 is defined as unlimited (E4)");
    s.release(c).unwrap();
    s.check_invariants_quiescent().unwrap();
}

#[test]
fn l4_multicast_txqs_are_never_aql_limited() {
    let mut s = sched();
    let (sta, a) = station_with_txq(&s, 256, Ac::Be);
    let mcast = s.add_txq(None, Tid::BE).unwrap();
    let c = s.charge_us(sta, Ac::Be, 12_000).unwrap();
    s.wake_txq(a, T0).unwrap();
    s.wake_txq(mcast, T0).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    let serving = s.next_txq(round, T0).unwrap();
    assert_eq!(serving.txq(), mcast, "the gated station is passed over, the multicast txq is not");
    assert_eq!(serving.station(), None);
    assert!(serving.airtime_check());
    s.return_txq(serving, TxqReturn::Empty, T0);
    s.check_invariants_quiescent().unwrap();
    s.release(c).unwrap();
}

#[test]
fn l4_management_txqs_are_never_aql_limited() {
    let mut s = sched();
    let sta = s.add_station(Weight::new(65_535).unwrap()).unwrap();
    let mgmt = s.add_txq(Some(sta), Tid::MGMT).unwrap();
    s.set_station_limits(sta, Ac::Vo, AqlLimits::new(1000, 2000).unwrap()).unwrap();
    let c = s.charge_us(sta, Ac::Vo, 6000).unwrap();
    assert!(!s.airtime_check(sta, Ac::Vo).unwrap(), "the station's data is gated");
    s.wake_txq(mgmt, T0).unwrap();
    let round = s.start_round(Ac::Vo);
    assert!(round.is_open());
    let serving = s.next_txq(round, T0).expect("a management frame is not held back by AQL");
    assert_eq!(serving.txq(), mgmt);
    assert!(serving.airtime_check(), "the dequeue gate passes for MMPDUs");
    s.return_txq(serving, TxqReturn::Empty, T0);
    s.check_invariants_quiescent().unwrap();
    s.release(c).unwrap();
}

#[test]
fn time_passed_in_is_all_the_scheduler_knows() {
    // No clock is read: the same calls at the same `now` give the same answers.
    let run = || {
        let s = sched();
        let (sta, a) = station_with_txq(&s, 256, Ac::Be);
        s.wake_txq(a, Instant::from_millis(5)).unwrap();
        s.register_airtime(sta, Ac::Be, 700, 0, Instant::from_millis(104)).unwrap();
        s.register_airtime(sta, Ac::Be, 700, 0, Instant::from_millis(105)).unwrap();
        s.deficit_us(sta, Ac::Be).unwrap()
    };
    assert_eq!(run(), 256 - 700);
    assert_eq!(run(), run());
}
