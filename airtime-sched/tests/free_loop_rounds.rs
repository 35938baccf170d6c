//! `driver_loop::run_round` (txqs the driver owns) run by two contexts on one AC: a
//! round another context runs while this call holds a txq cannot serve it, so the call
//! must follow it with another round, or say that one is needed. Deterministic, one
//! thread: the other context's steps run from inside the ring's callbacks, at the exact
//! point of the interleaving they stand for (they touch only the scheduler, as the
//! other context's round would). Loom models txq21 and txq22 (`loom_txqs.rs`) check the
//! same over every interleaving.

use airtime_sched::driver_loop::{RoundEnd, run_round};
use airtime_sched::{
    Ac, Charge, Config, Frame, Instant, PushError, Ring, RingErrorKind, RoundPolicy, Scheduler, Tid, Txq,
};
use std::cell::Cell;
use std::collections::VecDeque;

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
    let sched = Scheduler::new(Config::default()).unwrap();
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
        let mut config = Config::default();
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
    let a = Scheduler::new(Config::default()).unwrap();
    let b = Scheduler::new(Config::default()).unwrap();
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
