//! The ready loops' re-check for concurrent rounds (`driver_loop::run_round` over txqs
//! the driver owns, and `TxqTable::run_round`): a round another context runs while this
//! call has a txq off the list cannot serve it, so the call must follow it with another
//! round, or say that one is needed; a round that took nothing off the list needs no
//! re-check (and asks for no other round); and a turn taken outside a round
//! (`TxqTable::claim`) followed as the crate docs say loses no wake. Deterministic: the
//! other context's steps run from inside the ring's callbacks, at the exact point of
//! the interleaving they stand for (they touch only the scheduler, as the other
//! context's round would). Loom models txq17 to txq25 (`loom_txqs.rs`) check the same
//! over every interleaving.

mod common;

use airtime_sched::driver_loop::{RoundEnd, StationTable, run_round};
use airtime_sched::txqs::TurnBudget;
use airtime_sched::{
    Ac, Charge, Frame, Instant, PushError, Ring, RingErrorKind, RoundPolicy, Scheduler, Tid, Txq, TxqReturn, TxqTable,
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

#[derive(Default)]
struct Q(VecDeque<Pkt>);
impl Txq for Q {
    type Frame = Pkt;
    type Error = core::convert::Infallible;
    fn dequeue(&mut self, _: Instant) -> Result<Option<Pkt>, Self::Error> {
        Ok(self.0.pop_front())
    }
    fn peek_len(&self) -> Option<u32> {
        self.0.front().map(|_| 100)
    }
}

/// What the "other context" does from inside `push`: the completion of frame 0 of T
/// (T's BlockAck window opens, nothing else is in flight) and the round it runs, which
/// cannot serve T while the call under test holds it.
fn other_context_round(sched: &Scheduler) {
    let r = sched.start_round(Ac::Be);
    assert!(r.is_open());
    assert!(sched.next_txq(r, NOW).is_none(), "T is held by the call under test: nothing to serve");
}

/// A ring with room whose `push` of frame 1 runs the other context's round at the
/// point of the interleaving, then accepts (`refuse: None`) or refuses it.
struct Racing<'a> {
    sched: &'a Scheduler,
    refuse: Option<RingErrorKind>,
    fired: Cell<bool>,
    sent: Vec<Pkt>,
}
impl Ring for Racing<'_> {
    type Frame = Pkt;
    type Error = RingErrorKind;
    fn has_room(&self, _: Ac) -> bool {
        true
    }
    fn push(&mut self, frame: Pkt, charge: Option<Charge>) -> Result<(), PushError<Pkt, RingErrorKind>> {
        if frame.0 == 1 && !self.fired.replace(true) {
            // The ring decided (window closed), then the completion landed and its round ran.
            other_context_round(self.sched);
            if let Some(error) = self.refuse {
                return Err(PushError { frame, charge, error });
            }
        }
        self.sent.push(frame);
        Ok(())
    }
}

fn setup() -> (Scheduler, Vec<Option<Q>>, airtime_sched::TxqId) {
    let sched = Scheduler::new(common::config()).unwrap();
    let t = sched.add_txq(None, Tid::BE).unwrap();
    let mut txqs: Vec<Option<Q>> = (0..=t.index()).map(|_| None).collect();
    txqs[t.index()] = Some(Q([Pkt(1), Pkt(2)].into_iter().collect()));
    sched.wake_txq(t, NOW).unwrap();
    (sched, txqs, t)
}

/// The interleaving without a refusal. T's turn pushes frame 1 and
/// reads the ring full; right after that read the completion frees the ring and the
/// other context's round runs (it cannot serve T, held). The call notices the start
/// and runs one more round, which sends frame 2.
#[test]
fn a_round_another_context_ran_while_a_txq_was_held_is_followed_by_one_more() {
    let (sched, mut txqs, t) = setup();
    struct FullOnce<'a> {
        sched: &'a Scheduler,
        full: Cell<bool>,
        sent: Vec<Pkt>,
    }
    impl Ring for FullOnce<'_> {
        type Frame = Pkt;
        type Error = RingErrorKind;
        fn has_room(&self, _: Ac) -> bool {
            if self.full.replace(false) {
                // Read full; then the completion frees the slot and runs its round.
                other_context_round(self.sched);
                return false;
            }
            true
        }
        fn push(&mut self, frame: Pkt, _: Option<Charge>) -> Result<(), PushError<Pkt, RingErrorKind>> {
            if frame.0 == 1 {
                self.full.set(true);
            }
            self.sent.push(frame);
            Ok(())
        }
    }
    let mut ring = FullOnce { sched: &sched, full: Cell::new(false), sent: Vec::new() };
    let before = sched.round(Ac::Be).1;
    let r = run_round(&sched, Ac::Be, NOW, &mut txqs[..], &[] as &[Option<NoSta>], &mut ring);
    assert!(r.refused.is_none() && !r.overlapped);
    assert_eq!(ring.sent, vec![Pkt(1), Pkt(2)]);
    assert_eq!((r.frames, r.txqs_served), (2, 2), "counts summed over the call's two rounds");
    assert_eq!(sched.round(Ac::Be).1, before + 3, "its round, the other's, its follow-up");
    assert!(txqs[t.index()].as_ref().unwrap().0.is_empty());
}

/// The ring refuses frame 1 (T's BlockAck window closed, `TxqFull`; or `Full`, a ring
/// that said it had room) and, before the call returns T, the completion that opens the
/// window lands in another context and runs its round, which cannot serve T (held).
/// The call returns T (backlogged, frame 2 queued) and the refused frame at once; the
/// caller, waiting for room, would wait for room that already came, so the call says
/// another round is needed (`overlapped`).
#[test]
fn a_refused_frame_returned_while_another_round_missed_its_txq_asks_for_another() {
    for kind in [RingErrorKind::TxqFull, RingErrorKind::Full, RingErrorKind::OutOfMemory] {
        let (sched, mut txqs, t) = setup();
        let mut ring = Racing { sched: &sched, refuse: Some(kind), fired: Cell::new(false), sent: Vec::new() };
        let before = sched.round(Ac::Be).1;
        let r = run_round(&sched, Ac::Be, NOW, &mut txqs[..], &[] as &[Option<NoSta>], &mut ring);
        let refused = r.refused.as_ref().expect("frame 1 refused");
        assert_eq!((refused.frame.0, refused.txq, r.end), (1, t, RoundEnd::Refused(kind)));
        // Another context started a round on the AC while this call's round held T,
        // which it returned backlogged:
        assert_eq!(sched.round(Ac::Be).1, before + 2, "the call's round and the other context's");
        assert_eq!(txqs[t.index()].as_ref().unwrap().0.len(), 1, "frame 2 still queued in T");
        let overlapped = r.overlapped;
        // The caller drops the refused frame (as the simulator's ath11k_like does) and
        // waits for room; T is listed: a round started now would serve frame 2.
        if let Some(c) = r.refused.and_then(|x| x.charge) {
            let _ = sched.give_back(c);
        }
        let mut open = Racing { sched: &sched, refuse: None, fired: Cell::new(true), sent: Vec::new() };
        let later = run_round(&sched, Ac::Be, NOW, &mut txqs[..], &[] as &[Option<NoSta>], &mut open);
        assert_eq!(open.sent, vec![Pkt(2)], "T was listed with frame 2: only a round was missing");
        let _ = later;
        assert!(
            overlapped,
            "{kind:?}: another context's round missed T while this call held it, and the call does not ask for \
             another: the round meant to follow the completion is lost"
        );
    }
}

/// One context's calls never run an extra round (each call starts exactly one
/// round), whatever the policy, including `ResetOnClose`.
#[test]
fn one_context_runs_one_round_per_call() {
    for policy in [RoundPolicy::default(), RoundPolicy::ResetOnClose] {
        let mut config = common::config();
        config.round_policy = policy;
        let sched = Scheduler::new(config).unwrap();
        let t = sched.add_txq(None, Tid::BE).unwrap();
        let mut txqs: Vec<Option<Q>> = (0..=t.index()).map(|_| None).collect();
        txqs[t.index()] = Some(Q((0..10).map(Pkt).collect()));
        sched.wake_txq(t, NOW).unwrap();
        struct Two(usize, usize);
        impl Ring for Two {
            type Frame = Pkt;
            type Error = RingErrorKind;
            fn has_room(&self, _: Ac) -> bool {
                self.0 < self.1
            }
            fn push(&mut self, _: Pkt, _: Option<Charge>) -> Result<(), PushError<Pkt, RingErrorKind>> {
                self.0 += 1;
                Ok(())
            }
        }
        for call in 0..5 {
            let before = sched.round(Ac::Be).1;
            let r = run_round(&sched, Ac::Be, NOW, &mut txqs[..], &[] as &[Option<NoSta>], &mut Two(0, 2));
            assert!(r.refused.is_none() && !r.overlapped);
            assert_eq!(sched.round(Ac::Be).1, before + 1, "{policy:?} call {call}: one round");
        }
    }
}

/// `round_started_since`'s edges: a closed round and another scheduler's round answer
/// false; a round of this scheduler whose AC saw a start since answers true.
#[test]
fn round_started_since_answers_for_this_schedulers_open_rounds_of_one_ac() {
    let a = Scheduler::new(common::config()).unwrap();
    let b = Scheduler::new(common::config()).unwrap();
    let ra = a.start_round(Ac::Be);
    assert!(!a.round_started_since(ra));
    let _ = a.start_round(Ac::Be);
    assert!(a.round_started_since(ra));
    // Another scheduler's round: false even though b's number differs.
    let rb = b.start_round(Ac::Be);
    let _ = b.start_round(Ac::Be);
    assert!(!a.round_started_since(rb));
    // Another AC of the same scheduler is its own word.
    let rvi = a.start_round(Ac::Vi);
    assert!(!a.round_started_since(rvi));
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
    let table: TxqTable<Fifo> = TxqTable::new(Scheduler::new(common::config()).unwrap());
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
    let sched = Scheduler::new(common::config()).unwrap();
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
    let table: Arc<TxqTable<Fifo>> = Arc::new(TxqTable::new(Scheduler::new(common::config()).unwrap()));
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
    let table: TxqTable<Fifo> = TxqTable::new(Scheduler::new(common::config()).unwrap());
    let t = table.add_txq(None, Tid::BE, Fifo::default()).ok().unwrap();
    table.enqueue(t, Pkt(1), NOW).unwrap();
    // 1. C claims T and flushes it.
    let mut turn = table.claim(t).unwrap().granted().expect("T is not served");
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
