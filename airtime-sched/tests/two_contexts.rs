//! What must hold when two contexts drive one scheduler: each context's round is its
//! own, and a `Serving` handle, a charge and a round belong to the scheduler that issued
//! them. Regression tests for defects found in review, written as the sequences a second
//! CPU produces.

mod common;

use airtime_sched::{Ac, Charge, ReleaseError, Tid, TxqReturn};
use common::{T0, sched, station_with_txq};

/// A round ends at a txq it already handed out even while another context keeps
/// starting rounds of its own on the same AC: before rounds carried their number, every
/// `start_round` renumbered the AC and the first context's round handed out 10,000 txqs.
#[test]
fn a_round_ends_while_another_context_keeps_starting_rounds() {
    let s = sched();
    let (_, a) = station_with_txq(&s, 256, Ac::Be);
    let (_, b) = station_with_txq(&s, 256, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    s.wake_txq(b, T0).unwrap();
    let mine = s.start_round(Ac::Be);
    assert!(mine.is_open());
    let mut handed_out = 0;
    for _ in 0..10_000 {
        let Some(serving) = s.next_txq(mine, T0) else { break };
        handed_out += 1;
        s.return_txq(serving, TxqReturn::Backlogged, T0);
        // The completion context starts its own round meanwhile (and serves nothing).
        let _theirs = s.start_round(Ac::Be);
    }
    assert!(handed_out <= 2, "one round handed out {handed_out} txqs; two are listed");
}

/// A txq handed out by a later round of another context ends this context's round too:
/// it was served since this round began, so this round's lap is complete.
#[test]
fn a_txq_served_by_a_later_round_ends_an_earlier_one() {
    let mut s = sched();
    let (_, a) = station_with_txq(&s, 256, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    let earlier = s.start_round(Ac::Be);
    let later = s.start_round(Ac::Be);
    let serving = s.next_txq(later, T0).expect("the later round serves the txq");
    s.return_txq(serving, TxqReturn::Backlogged, T0);
    assert!(s.next_txq(earlier, T0).is_none(), "the earlier round meets a txq served since it began");
    assert!(s.next_txq(later, T0).is_none(), "and so does the later one (S4)");
    let next = s.start_round(Ac::Be);
    let serving = s.next_txq(next, T0).expect("a new round serves it again");
    s.return_txq(serving, TxqReturn::Empty, T0);
    s.check_invariants_quiescent().unwrap();
}

/// Returning a handle through another scheduler returns it to the scheduler that issued
/// it: the other scheduler's txq in the same slot keeps its single server (S3), and the
/// returned txq is listed again (S1).
#[test]
fn return_txq_on_another_scheduler_returns_the_txq_to_its_own() {
    let mut s1 = sched();
    let mut s2 = sched();
    let q1 = s1.add_txq(None, Tid::BE).unwrap();
    let q2 = s2.add_txq(None, Tid::BE).unwrap();
    assert_eq!(q1, q2, "the same slot and generation in both");
    s1.wake_txq(q1, T0).unwrap();
    s2.wake_txq(q2, T0).unwrap();
    let held2 = s2.next_txq(s2.start_round(Ac::Be), T0).expect("s2's txq is held");
    let serving = s1.next_txq(s1.start_round(Ac::Be), T0).expect("s1's txq is served");
    s2.return_txq(serving, TxqReturn::Backlogged, T0);
    assert!(s2.next_txq(s2.start_round(Ac::Be), T0).is_none(), "s2's held txq has no second server");
    let again = s1.next_txq(s1.start_round(Ac::Be), T0).expect("s1's txq was listed again");
    assert_eq!(again.txq(), q1);
    s1.return_txq(again, TxqReturn::Empty, T0);
    s2.return_txq(held2, TxqReturn::Empty, T0);
    s1.check_invariants_quiescent().unwrap();
    s2.check_invariants_quiescent().unwrap();
}

/// A charge belongs to the scheduler that made it: released on another radio's
/// scheduler, whose station in the same slot has the same generation, it is refused
/// there and leaves both counters as they were. Before charges carried their scheduler,
/// the release took s2's pending airtime to 0 and s1 kept its 400 us for good.
#[test]
fn a_charge_released_on_another_scheduler_is_refused_and_changes_nothing() {
    let (s1, mut s2) = (sched(), sched());
    let (sta1, _) = station_with_txq(&s1, 256, Ac::Be);
    let (sta2, _) = station_with_txq(&s2, 256, Ac::Be);
    assert_eq!(sta1, sta2, "the same slot and generation in both");
    let mine = s1.charge_us(sta1, Ac::Be, 400).unwrap();
    let theirs = s2.charge_us(sta2, Ac::Be, 400).unwrap();
    assert_eq!(s2.release(mine), Err(ReleaseError::OtherRadio));
    assert_eq!((s1.ac_pending_us(Ac::Be), s2.ac_pending_us(Ac::Be)), (400, 400));
    assert_eq!(s2.station_pending_us(sta2, Ac::Be), Ok(400));
    // The same through a batch: counted apart, nothing released.
    let (a, b) = (s1.charge_us(sta1, Ac::Be, 100).unwrap(), s1.charge_us(sta1, Ac::Be, 100).unwrap());
    let done = s2.release_batch([a, theirs, b]);
    assert_eq!((done.released, done.other_radio, done.unknown_station), (1, 2, 0));
    assert!(!done.is_clean());
    assert_eq!((s1.ac_pending_us(Ac::Be), s2.ac_pending_us(Ac::Be)), (600, 0));
    // A multicast charge too.
    let mc = s1.charge_multicast_us(Ac::Be, 40).unwrap();
    assert_eq!(s2.release(mc), Err(ReleaseError::OtherRadio));
    s2.check_invariants_quiescent().unwrap();
}

/// A raw token cannot say which scheduler made it (its 32 bits are taken), so any
/// scheduler takes it back; the driver keeps the radio with the frame.
#[test]
fn a_raw_token_is_released_on_the_scheduler_it_is_handed_to() {
    let s1 = sched();
    let (sta, _) = station_with_txq(&s1, 256, Ac::Be);
    let raw = s1.charge_us(sta, Ac::Be, 400).unwrap().into_raw();
    assert_eq!(s1.release(Charge::from_raw(raw).unwrap()), Ok(()));
    assert_eq!(s1.ac_pending_us(Ac::Be), 0);
}

/// A round belongs to the scheduler that started it: passed to another radio's
/// scheduler it hands out nothing and stamps nothing there. Before rounds carried their
/// scheduler, s1's round number 101 stamped s2's txq, and s2's next ten rounds of its
/// own (numbers 1 to 10) each ended at it without serving it.
#[test]
fn a_round_of_another_scheduler_hands_out_nothing() {
    let (s1, mut s2) = (sched(), sched());
    for _ in 0..100 {
        let _ = s1.start_round(Ac::Be);
    }
    let foreign = s1.start_round(Ac::Be);
    assert_eq!(foreign.number(), 101);
    let (_, q) = station_with_txq(&s2, 256, Ac::Be);
    s2.wake_txq(q, T0).unwrap();
    assert!(s2.next_txq(foreign, T0).is_none(), "s1's round hands out nothing on s2");
    for _ in 0..10 {
        let round = s2.start_round(Ac::Be);
        let serving = s2.next_txq(round, T0).expect("s2's own round serves its backlogged txq");
        s2.return_txq(serving, TxqReturn::Backlogged, T0);
    }
    let round = s2.start_round(Ac::Be);
    let serving = s2.next_txq(round, T0).unwrap();
    s2.return_txq(serving, TxqReturn::Empty, T0);
    s2.check_invariants_quiescent().unwrap();
}
