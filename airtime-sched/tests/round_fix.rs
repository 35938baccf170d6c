//! The seed's bug (B1, fixed by "wifi: mac80211: keep the TXQ scheduling round number across a closed round"): closing
//! an AC reset the round number to 0, so the next open round was numbered 1 again and a
//! txq served in the earlier round 1 was taken for "already served" and skipped.
//! `RoundPolicy::ResetOnClose` reproduces it; the default keeps the number.

mod common;

use airtime_sched::{Ac, Charge, RoundPolicy, Scheduler, TxqReturn};
use common::*;

/// Round 1 serves A, whose frame puts the AC over its PHY limit; the next start closes
/// the AC; the frame completes; the next start reopens it. Returns what that reopened
/// round's `next_txq` hands out, and the scheduler.
fn serve_close_reopen(policy: RoundPolicy) -> (Option<airtime_sched::TxqId>, airtime_sched::TxqId, Scheduler) {
    let mut s = sched_with(|c| c.round_policy = policy);
    let (sta, a) = station_with_txq(&s, 65_535, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    assert_eq!(s.round(Ac::Be), (true, 1));
    let serving = s.next_txq(round, T0).unwrap();
    let charge = s.charge_us(sta, Ac::Be, 12_000).unwrap();
    s.return_txq(serving, TxqReturn::Backlogged, T0);
    assert_eq!(s.phy_limit_us(Ac::Be), Some(12_000));

    let round = s.start_round(Ac::Be);
    assert!(!round.is_open(), "pending 12000 us is not below the limit: the AC closes");
    assert!(s.next_txq(round, T0).is_none());
    s.release(charge).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open(), "under the limit again: the AC reopens");
    let got = serve_once(&s, round, TxqReturn::Backlogged, T0);
    s.check_invariants_quiescent().unwrap();
    (got, a, s)
}

#[test]
fn reset_on_close_skips_the_txq_served_before_the_close() {
    let (got, _, s) = serve_close_reopen(RoundPolicy::ResetOnClose);
    assert_eq!(s.round(Ac::Be), (true, 1), "the reopened round is numbered 1 again");
    assert_eq!(got, None, "the txq stamped 1 is taken for already served");
    let counters = s.ac_counters(Ac::Be);
    assert_eq!(counters.skipped_selections, 1);
    assert_eq!(counters.closed_rounds, 1);
}

#[test]
fn keep_number_serves_the_txq_after_the_ac_reopens() {
    let (got, a, s) = serve_close_reopen(RoundPolicy::default());
    assert_eq!(RoundPolicy::default(), RoundPolicy::KeepNumber);
    assert_eq!(s.round(Ac::Be), (true, 2), "closing kept the number; reopening moved on");
    assert_eq!(got, Some(a));
    assert_eq!(s.ac_counters(Ac::Be).skipped_selections, 0);
}

/// Where the limit binds, closed and open rounds alternate (the seed's measurement).
/// Each open round serves the one backlogged txq until the round ends; its frame fills
/// the AC, so the next start closes it while the frame completes. Returns the open
/// rounds and how many of them served nothing.
fn alternating_rounds(policy: RoundPolicy, starts: u32) -> (u32, u32) {
    let mut s = sched_with(|c| c.round_policy = policy);
    let (sta, a) = station_with_txq(&s, 65_535, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    let mut in_flight: Vec<Charge> = Vec::new();
    let (mut open_rounds, mut lost) = (0, 0);
    for _ in 0..starts {
        let round = s.start_round(Ac::Be);
        if round.is_open() {
            open_rounds += 1;
            let mut served = 0;
            while let Some(serving) = s.next_txq(round, T0) {
                in_flight.push(s.charge_us(sta, Ac::Be, 12_000).unwrap());
                s.return_txq(serving, TxqReturn::Backlogged, T0);
                served += 1;
            }
            if served == 0 {
                lost += 1;
            }
        } else {
            // The AC is closed: the hardware completes what is in flight meanwhile.
            release_all(&s, &mut in_flight);
        }
    }
    release_all(&s, &mut in_flight);
    s.check_invariants_quiescent().unwrap();
    (open_rounds, lost)
}

#[test]
fn alternating_closed_rounds_lose_open_rounds_only_with_the_reset() {
    // Fix: open (serves, fills), closed, open (serves), closed, ...
    assert_eq!(alternating_rounds(RoundPolicy::KeepNumber, 100), (50, 0));
    // Reset, a cycle of five starts: round 1 (serves, fills), closed, round 1 again (the
    // stamp is stale: serves nothing, fills nothing), round 2 (serves, fills), closed.
    // One open round in three is lost.
    let (open_rounds, lost) = alternating_rounds(RoundPolicy::ResetOnClose, 100);
    assert_eq!((open_rounds, lost), (60, 20));
}

#[test]
fn reset_on_close_skips_every_txq_stamped_with_the_reused_number() {
    let s = sched_with(|c| c.round_policy = RoundPolicy::ResetOnClose);
    let (sta, a) = station_with_txq(&s, 65_535, Ac::Be);
    let (_, b) = station_with_txq(&s, 65_535, Ac::Be);
    s.wake_txq(a, T0).unwrap();
    s.wake_txq(b, T0).unwrap();
    // Round 1 serves both (returned stalled, to the tail, so the round goes on to A).
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    assert_eq!(serve_once(&s, round, TxqReturn::Stalled, T0), Some(b));
    assert_eq!(serve_once(&s, round, TxqReturn::Stalled, T0), Some(a));
    let charge = s.charge_us(sta, Ac::Be, 20_000).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(!round.is_open());
    s.release(charge).unwrap();
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    assert_eq!(s.round(Ac::Be), (true, 1));
    // The reused number 1 is stale on both: the round ends at whichever is at the head,
    // every time it is asked, and serves nothing.
    assert_eq!(serve_once(&s, round, TxqReturn::Backlogged, T0), None);
    assert_eq!(serve_once(&s, round, TxqReturn::Backlogged, T0), None);
    assert_eq!(s.ac_counters(Ac::Be).skipped_selections, 2, "each call ended at a stale stamp");
    let round = s.start_round(Ac::Be);
    assert!(round.is_open());
    assert!(serve_once(&s, round, TxqReturn::Backlogged, T0).is_some(), "round 2 serves again");
}
