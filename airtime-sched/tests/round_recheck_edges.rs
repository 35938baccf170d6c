//! The ready loops' re-check for concurrent rounds, at its edges: a round that took
//! nothing off the list needs none (and asks for no other round), two contexts never
//! keep each other re-asking, and a turn taken outside a round (`TxqTable::claim`)
//! followed as the crate docs say loses no wake. Deterministic where an interleaving
//! is named: the other context's steps run from inside the ring's callbacks, at the
//! exact point they stand for (as `free_loop_rounds.rs` does).

mod common;

use airtime_sched::driver_loop::{StationTable, run_round};
use airtime_sched::txqs::TurnBudget;
use airtime_sched::{
    Ac, Charge, Config, Frame, Instant, PushError, Ring, RingErrorKind, Scheduler, Tid, TxqReturn, TxqTable,
};
use std::cell::Cell;
use std::collections::VecDeque;

type Fifo = common::fixtures::Fifo<Pkt>;

const NOW: Instant = Instant::ZERO;

#[derive(Debug, PartialEq)]
struct Pkt(u32);
impl Frame for Pkt {
    fn len_bytes(&self) -> u32 {
        100
    }
}

/// No station in these tests: station-less txqs only.
struct NoSta;
impl airtime_sched::Station for NoSta {
    type Error = airtime_sched::StationErrorKind;
    fn station_id(&self) -> airtime_sched::StationId {
        unreachable!()
    }
    fn last_tx_rate(&self) -> Option<airtime_est::Rate> {
        None
    }
    fn expected_airtime_us(&self, _: u32, _: Ac) -> Result<u32, Self::Error> {
        unreachable!()
    }
}
struct NoStations;
impl StationTable for NoStations {
    type Station = NoSta;
    fn station(&self, _: airtime_sched::StationId) -> Option<&NoSta> {
        None
    }
}

#[derive(Default)]
struct Q(VecDeque<Pkt>);
impl airtime_sched::Txq for Q {
    type Frame = Pkt;
    type Error = core::convert::Infallible;
    fn dequeue(&mut self, _: Instant) -> Result<Option<Pkt>, Self::Error> {
        Ok(self.0.pop_front())
    }
    fn peek_len(&self) -> Option<u32> {
        self.0.front().map(|_| 100)
    }
}

/// A ring with room whose every `has_room` first lets "the other context" start a round
/// on the AC and visit its (empty) list: a second context running rounds on the AC in
/// step with the call under test.
struct Lockstep<'a> {
    sched: &'a Scheduler,
    other_rounds: Cell<u32>,
    sent: Vec<Pkt>,
}
impl Ring for Lockstep<'_> {
    type Frame = Pkt;
    type Error = RingErrorKind;
    fn has_room(&self, ac: Ac) -> bool {
        let r = self.sched.start_round(ac);
        assert!(self.sched.next_txq(r, NOW).is_none(), "nothing is listed on the AC");
        self.other_rounds.set(self.other_rounds.get() + 1);
        true
    }
    fn push(&mut self, frame: Pkt, _: Option<Charge>) -> Result<(), PushError<Pkt, RingErrorKind>> {
        self.sent.push(frame);
        Ok(())
    }
}

/// No txq exists on the AC; nothing is ever listed. Two contexts run rounds on
/// it (a completion pass that reaped frames of the AC whose txqs are all drained, and a
/// wake of another AC's txq re-running "all ACs", say). Interleaving, per round of the
/// call under test A: A starts round n; B starts round n+1 and its `next_txq` finds the
/// list empty; A's `next_txq` finds the list empty; A's re-check reads n+1: "a round
/// started since". A's rounds took nothing off the list (its `next_txq` popped nothing),
/// so B's round cannot have missed anything of A's: A runs no other round and does not
/// report `overlapped` (which would oblige its caller to ask for yet another round).
#[test]
fn a_call_whose_round_found_the_list_empty_runs_no_other_and_asks_for_none() {
    let table: TxqTable<Fifo> = TxqTable::new(Scheduler::new(Config::default()).unwrap());
    let sched = table.scheduler();
    let mut ring = Lockstep { sched, other_rounds: Cell::new(0), sent: Vec::new() };
    let before = sched.round(Ac::Be).1;
    let r = table.run_round(Ac::Be, NOW, &NoStations, &mut ring, TurnBudget::UNLIMITED);
    let rounds_of_a = sched.round(Ac::Be).1 - before - u64::from(ring.other_rounds.get());
    assert!(
        !r.overlapped && rounds_of_a == 1,
        "no round of this call took an entry off the list (it was empty throughout), yet it ran {rounds_of_a} \
         rounds and reported overlapped = {} (its caller must now ask for another round)",
        r.overlapped
    );
}

/// The same through `driver_loop::run_round`.
#[test]
fn the_same_through_the_loop_over_txqs_the_driver_owns() {
    let sched = Scheduler::new(Config::default()).unwrap();
    let mut txqs: Vec<Option<Q>> = Vec::new();
    let mut ring = Lockstep { sched: &sched, other_rounds: Cell::new(0), sent: Vec::new() };
    let before = sched.round(Ac::Be).1;
    let r = run_round(&sched, Ac::Be, NOW, &mut txqs[..], &[] as &[Option<NoSta>], &mut ring);
    let rounds_of_a = sched.round(Ac::Be).1 - before - u64::from(ring.other_rounds.get());
    assert!(
        !r.overlapped && rounds_of_a == 1,
        "no round of this call took an entry off the list (it was empty throughout), yet it ran {rounds_of_a} \
         rounds and reported overlapped = {}",
        r.overlapped
    );
}

/// Two real threads, each doing what `RoundReport::overlapped` tells a caller to do ("it
/// must ask for a round on the AC again"): `loop { r = run_round(); if !r.overlapped {
/// break } }`, on an AC with nothing listed at all. Rounds that take nothing off the
/// list never re-check, so no call reports `overlapped`, however the two interleave.
#[test]
fn two_contexts_over_an_empty_list_never_ask_each_other_for_rounds() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Barrier};
    struct Open;
    impl Ring for Open {
        type Frame = Pkt;
        type Error = RingErrorKind;
        fn has_room(&self, _: Ac) -> bool {
            true
        }
        fn push(&mut self, _: Pkt, _: Option<Charge>) -> Result<(), PushError<Pkt, RingErrorKind>> {
            Ok(())
        }
    }
    let table: Arc<TxqTable<Fifo>> = Arc::new(TxqTable::new(Scheduler::new(Config::default()).unwrap()));
    let episodes = 100_000u64;
    let calls = Arc::new(AtomicU64::new(0));
    let overlapped = Arc::new(AtomicU64::new(0));
    let longest = Arc::new(AtomicU64::new(0));
    let barrier = Arc::new(Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (table, calls, overlapped, longest, barrier) =
                (table.clone(), calls.clone(), overlapped.clone(), longest.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for _ in 0..episodes {
                    let mut streak = 0u64;
                    loop {
                        let r = table.run_round(Ac::Be, NOW, &NoStations, &mut Open, TurnBudget::UNLIMITED);
                        calls.fetch_add(1, Ordering::Relaxed);
                        if !r.overlapped {
                            break;
                        }
                        overlapped.fetch_add(1, Ordering::Relaxed);
                        streak += 1;
                        if streak > 1_000_000 {
                            break;
                        }
                    }
                    longest.fetch_max(streak, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let (calls, overlapped, longest) =
        (calls.load(Ordering::Relaxed), overlapped.load(Ordering::Relaxed), longest.load(Ordering::Relaxed));
    assert_eq!(
        (overlapped, longest),
        (0, 0),
        "two contexts over an empty AC asked each other for rounds ({calls} calls)"
    );
}

/// A turn taken outside a round (`TxqTable::claim`, a power-save flush) and a wake
/// that lands during it, followed as the crate docs say: after returning the turn, a
/// round if the txq may have frames.
///
/// Interleaving (T station-less, frame 1 queued, listed):
/// 1. Context C claims T and moves frame 1 to its buffer; `is_backlogged()` reads
///    false: no frames left.
/// 2. Context E enqueues frame 2 into T (T's wake marks it woken, as T is held) and
///    runs its round: T is held by C, off the list, so the round serves nothing; no
///    other round started since, so `overlapped` is false.
/// 3. C finishes the turn `Empty` (what it saw): the return lists T for the wake.
///
/// A round only "with frames left" (what C saw) would run none: frame 2 stranded with
/// nothing in flight, the race loom model txq19 checks inside a round. The recipe asks
/// `may_have_frames` after the return, which sees the wake.
#[test]
fn a_claimed_turn_returned_empty_while_woken_is_followed_by_a_round() {
    struct Sink(Vec<Pkt>);
    impl Ring for Sink {
        type Frame = Pkt;
        type Error = RingErrorKind;
        fn has_room(&self, _: Ac) -> bool {
            true
        }
        fn push(&mut self, frame: Pkt, _: Option<Charge>) -> Result<(), PushError<Pkt, RingErrorKind>> {
            self.0.push(frame);
            Ok(())
        }
    }
    let table: TxqTable<Fifo> = TxqTable::new(Scheduler::new(Config::default()).unwrap());
    let t = table.add_txq(None, Tid::BE, Fifo::default()).ok().unwrap();
    table.enqueue(t, Pkt(1), NOW).unwrap();
    // 1. C claims T and flushes it.
    let mut turn = table.claim(t).unwrap().expect("T is not served");
    let mut flushed = Vec::new();
    while let Ok(Some(f)) = turn.dequeue(NOW) {
        flushed.push(f);
    }
    assert_eq!(flushed, vec![Pkt(1)]);
    let frames_left = turn.is_backlogged();
    assert!(!frames_left);
    // 2. E's enqueue and its round.
    table.enqueue(t, Pkt(2), NOW).unwrap();
    let mut e_ring = Sink(Vec::new());
    let e = table.run_round(Ac::Be, NOW, &NoStations, &mut e_ring, TurnBudget::UNLIMITED);
    assert_eq!((e.txqs_served, e.frames, e.overlapped), (0, 0, false), "E's round could not serve T (held by C)");
    // 3. C returns what it saw, and follows the recipe.
    turn.finish(TxqReturn::Empty, NOW);
    let mut c_ring = Sink(Vec::new());
    if table.may_have_frames(t).unwrap() {
        let _ = table.run_round(Ac::Be, NOW, &NoStations, &mut c_ring, TurnBudget::UNLIMITED);
    }
    assert_eq!(
        (e_ring.0, c_ring.0),
        (vec![], vec![Pkt(2)]),
        "frame 2 sent by C's round: E's could not serve T (held by C)"
    );
}
