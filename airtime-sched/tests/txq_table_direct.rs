//! Enqueues that write straight into a table txq's queue: only while nobody else holds
//! it and it has room (so an unserved txq never drops on the enqueuing context), never
//! ahead of frames still in the intake, and an enqueue preempted while it holds the
//! queue costs its txq a turn, never a frame, the round, or the removed txq's hand-back.

mod common;

use airtime_sched::driver_loop::RoundEnd;
use airtime_sched::fq_codel::{FqCodelConfig, FqCodelTxq, FqFrame};
use airtime_sched::txqs::{EnqueueError, INTAKE_LIMIT, TurnBudget, TurnStart};
use airtime_sched::{Ac, Frame, Instant, Scheduler, Tid, Txq, TxqId, TxqReturn, TxqTable, Weight};
use common::fixtures::{OpenRing, Peer, Peers};
use std::sync::mpsc;
use std::thread;

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct Pkt(u32);
impl Frame for Pkt {
    fn len_bytes(&self) -> u32 {
        1500
    }
}
impl FqFrame for Pkt {
    // One flow: FQ-CoDel keeps its frames in order.
    fn flow_hash(&self) -> u32 {
        7
    }
}

type Fq = FqCodelTxq<Pkt>;
const NOW: Instant = Instant::from_micros(1000);

fn queue(packet_limit: u32) -> Fq {
    let mut config = FqCodelConfig::default();
    config.packet_limit = packet_limit;
    FqCodelTxq::new(config).unwrap()
}

fn table_with_txq(packet_limit: u32) -> (TxqTable<Fq>, TxqId) {
    let t = TxqTable::new(Scheduler::new(common::config()).unwrap());
    let sta = t.scheduler().add_station(Weight::DEFAULT).unwrap();
    let q = t.add_txq(Some(sta), Tid::BE, queue(packet_limit)).unwrap();
    (t, q)
}

/// One turn of a round on BE: every frame it dequeues (`None`: no turn).
fn serve(t: &TxqTable<Fq>) -> Option<Vec<Pkt>> {
    let round = t.scheduler().start_round(Ac::Be);
    let mut turn = t.next_txq(round, NOW)?;
    let mut sent = Vec::new();
    while let Ok(Some(p)) = turn.dequeue(NOW) {
        sent.push(p);
    }
    let outcome = if turn.is_backlogged() { TxqReturn::Backlogged } else { TxqReturn::Empty };
    turn.finish(outcome, NOW);
    Some(sent)
}

#[test]
fn an_unserved_txq_fills_its_queue_then_its_intake_and_drops_only_at_its_turn() {
    let (t, q) = table_with_txq(4);
    // Four frames fit the queue, then the intake takes its bound: nothing is refused or
    // dropped on the enqueuing context before both are full.
    for i in 0..4 + INTAKE_LIMIT {
        t.enqueue(q, Pkt(i), NOW).unwrap();
    }
    assert!(matches!(t.enqueue(q, Pkt(u32::MAX), NOW), Err(EnqueueError::Full(Pkt(u32::MAX)))));
    // The server's turn moves the intake into the full queue, which drops to its limit:
    // every frame is queued or handed back as a drop, none lost.
    let mut turn = t.claim(q).unwrap().granted().expect("nobody holds it");
    let queue = turn.queue().unwrap();
    let stats = queue.stats();
    assert_eq!(stats.enqueued, u64::from(4 + INTAKE_LIMIT));
    assert_eq!(stats.backlog_packets, 4);
    assert_eq!(queue.drain_drops().count() as u64, u64::from(INTAKE_LIMIT));
    turn.finish(TxqReturn::Backlogged, NOW);
}

#[test]
fn frames_enqueued_while_the_server_holds_the_queue_go_out_before_later_ones() {
    let (t, q) = table_with_txq(1024);
    // The turn holds the queue: frame 1 goes through the intake.
    let turn = t.claim(q).unwrap().granted().expect("nobody holds it");
    t.enqueue(q, Pkt(1), NOW).unwrap();
    turn.finish(TxqReturn::Empty, NOW);
    // Free now, but frame 1 still waits in the intake: frame 2 must not overtake it.
    t.enqueue(q, Pkt(2), NOW).unwrap();
    assert_eq!(serve(&t), Some(vec![Pkt(1), Pkt(2)]));
    // Intake empty: frames 3 and 4 go straight into the queue, in order.
    t.enqueue(q, Pkt(3), NOW).unwrap();
    t.enqueue_burst(q, &mut [Pkt(4), Pkt(5)].into_iter(), NOW).unwrap();
    assert_eq!(serve(&t), Some(vec![Pkt(3), Pkt(4), Pkt(5)]));
}

#[test]
fn a_queue_that_fills_mid_burst_sends_the_rest_through_the_intake_in_order() {
    let (t, q) = table_with_txq(2);
    assert_eq!(t.enqueue_burst(q, &mut (0..5).map(Pkt), NOW).unwrap(), 5);
    // Two went into the queue, three into the intake; the turn's pull makes the queue
    // drop two to its limit (the oldest, from the head), counted and handed back.
    let mut turn = t.claim(q).unwrap().granted().expect("nobody holds it");
    let mut sent = Vec::new();
    while let Ok(Some(p)) = turn.dequeue(NOW) {
        sent.push(p);
    }
    let dropped: Vec<Pkt> = turn.queue().unwrap().drain_drops().map(|d| d.frame).collect();
    turn.finish(TxqReturn::Empty, NOW);
    let mut all = [dropped.clone(), sent.clone()].concat();
    all.sort_by_key(|p| p.0);
    assert_eq!(all, (0..5).map(Pkt).collect::<Vec<_>>(), "every frame once: sent or dropped");
    assert!(sent.windows(2).all(|w| w[0].0 < w[1].0), "sent in order: {sent:?}");
}

/// An enqueue of `frames` whose iterator stops before its last frame until told to go
/// on: it then holds the queue, as an enqueuer preempted in its burst would.
struct Stalling {
    frames: Vec<Pkt>,
    reached: mpsc::Sender<()>,
    go: mpsc::Receiver<()>,
}
impl Iterator for Stalling {
    type Item = Pkt;
    fn next(&mut self) -> Option<Pkt> {
        if self.frames.len() == 1 {
            self.reached.send(()).unwrap();
            self.go.recv().unwrap();
        }
        (!self.frames.is_empty()).then(|| self.frames.remove(0))
    }
}

/// Runs `during` while an enqueue of frames 1 and 2 to `q` holds its queue (frame 1
/// written, frame 2 not yet); returns what the enqueue returned.
fn while_an_enqueue_holds_the_queue(
    t: &TxqTable<Fq>,
    q: TxqId,
    during: impl FnOnce(),
) -> Result<u32, EnqueueError<Pkt>> {
    let (reached_tx, reached) = mpsc::channel();
    let (go, go_rx) = mpsc::channel();
    thread::scope(|s| {
        let enqueuer = s.spawn(move || {
            let mut frames = Stalling { frames: vec![Pkt(1), Pkt(2)], reached: reached_tx, go: go_rx };
            t.enqueue_burst(q, &mut frames, NOW)
        });
        reached.recv().unwrap();
        // A failed check in `during` lets the enqueue go on before it fails the test,
        // which would otherwise wait for the enqueue forever.
        let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(during));
        go.send(()).unwrap();
        let done = enqueuer.join().unwrap();
        checked.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        done
    })
}

#[test]
fn a_preempted_enqueue_costs_its_txq_the_turn_not_the_round_or_a_frame() {
    let (t, q) = table_with_txq(1024);
    // A second station's txq, listed behind it, still gets its turn in the round.
    let other_sta = t.scheduler().add_station(Weight::DEFAULT).unwrap();
    let other = t.add_txq(Some(other_sta), Tid::BE, queue(1024)).unwrap();
    // Backlogged last, so listed first (mainline's head insertion): met before `other`.
    t.enqueue(other, Pkt(100), NOW).unwrap();
    t.enqueue(q, Pkt(0), NOW).unwrap();
    let done = while_an_enqueue_holds_the_queue(&t, q, || {
        let round = t.scheduler().start_round(Ac::Be);
        let mut turn = t.next_txq(round, NOW).expect("the other txq's turn");
        assert_eq!(turn.txq(), other, "the held txq is passed over, the round goes on");
        assert_eq!(turn.dequeue(NOW).unwrap(), Some(Pkt(100)));
        turn.finish(TxqReturn::Empty, NOW);
        assert!(t.next_txq(round, NOW).is_none(), "the passed-over txq ends the round when met again");
        assert_eq!(
            t.claim(q).unwrap().refusal(),
            Some(airtime_sched::Refusal::QueueBusy),
            "a claim waits for the enqueue too"
        );
        assert_eq!(
            t.may_transmit(q, NOW).unwrap().refusal(),
            Some(airtime_sched::Refusal::QueueBusy),
            "and so does a pull-mode turn, saying why"
        );
    });
    assert_eq!(t.scheduler().ac_counters(Ac::Be).pull_refusals.queue_busy, 1, "counted by reason");
    assert_eq!(done.unwrap(), 2);
    assert_eq!(serve(&t), Some(vec![Pkt(0), Pkt(1), Pkt(2)]), "still listed: every frame, in order");
    let mut t = t;
    t.check_invariants().unwrap();
}

#[test]
fn a_removal_handed_back_while_an_enqueue_holds_the_queue_comes_back_after_it() {
    let (t, q) = table_with_txq(1024);
    t.enqueue(q, Pkt(0), NOW).unwrap();
    let done = while_an_enqueue_holds_the_queue(&t, q, || {
        t.remove_txq(q).unwrap();
        assert!(t.take_removed().is_none(), "the enqueue still writes the queue");
    });
    // The enqueue saw the removal at its wake; its frames were already in the queue.
    match done {
        Err(EnqueueError::Removed(back)) => assert_eq!(back.count(), 0),
        other => panic!("expected Removed, got {other:?}"),
    }
    let removed = t.take_removed().expect("the enqueue's unlock put it back");
    assert_eq!(removed.id, q);
    let mut handed_back = removed.queue;
    let frames: Vec<Pkt> = std::iter::from_fn(|| handed_back.dequeue(NOW).unwrap()).collect();
    assert_eq!(frames, [Pkt(0), Pkt(1), Pkt(2)], "every frame handed back once");
    assert!(removed.retry.is_none() && removed.intake.count() == 0);
    // The slot is free again, and its next txq starts unlocked.
    let sta = t.scheduler().add_station(Weight::DEFAULT).unwrap();
    let q2 = t.add_txq(Some(sta), Tid::BE, queue(1024)).unwrap();
    t.enqueue(q2, Pkt(9), NOW).unwrap();
    assert_eq!(serve(&t), Some(vec![Pkt(9)]));
}

#[test]
fn the_ready_loop_says_when_it_passed_a_txq_over() {
    let (t, q) = table_with_txq(1024);
    t.enqueue(q, Pkt(0), NOW).unwrap();
    let sta = t.scheduler().txq_info(q).unwrap().0.unwrap();
    let peers = Peers(vec![Peer(sta)]);
    let done = while_an_enqueue_holds_the_queue(&t, q, || {
        let mut ring = OpenRing::default();
        let report = t.run_round(Ac::Be, NOW, &peers, &mut ring, TurnBudget::UNLIMITED);
        assert_eq!((report.frames, report.end), (0, RoundEnd::QueueBusy), "another round is needed");
    });
    assert_eq!(done.unwrap(), 2);
    let mut ring = OpenRing::default();
    let report = t.run_round(Ac::Be, NOW, &peers, &mut ring, TurnBudget::UNLIMITED);
    assert_eq!((report.frames, report.end), (3, RoundEnd::Exhausted));
    for (_, charge) in ring.0 {
        t.scheduler().release(charge.expect("a station frame is charged")).unwrap();
    }
}

/// A ready-loop round on BE whose one turn sends at most one frame (or is skipped, as
/// `start` says), with three frames from Pkt(`first`) on enqueued while the turn holds the
/// queue (so into the intake): the report, and what the turn's end saw in the queue (its
/// backlog, the drops it took).
fn round_with_enqueues_during_the_turn(
    t: &TxqTable<Fq>,
    q: TxqId,
    first: u32,
    start: TurnStart,
) -> (u32, RoundEnd, Vec<(u64, usize)>) {
    let sta = t.scheduler().txq_info(q).unwrap().0.unwrap();
    let peers = Peers(vec![Peer(sta)]);
    let mut ring = OpenRing::default();
    let mut ends = Vec::new();
    let report = t.run_round_hooked(
        Ac::Be,
        NOW,
        &peers,
        &mut ring,
        TurnBudget::frames(1),
        |_| {
            for i in first..first + 3 {
                t.enqueue(q, Pkt(i), NOW).unwrap();
            }
            start
        },
        |turn| {
            assert_eq!(turn.skipped(), start == TurnStart::Skip);
            let queue = turn.queue().unwrap();
            let drops = queue.drain_drops().count();
            ends.push((queue.stats().backlog_packets, drops));
        },
    );
    for (_, charge) in ring.0 {
        t.scheduler().release(charge.expect("a station frame is charged")).unwrap();
    }
    (report.frames, report.end, ends)
}

#[test]
fn a_ready_loop_turn_pulls_what_arrived_meanwhile_so_later_enqueues_go_straight_in() {
    let (t, q) = table_with_txq(1024);
    t.enqueue(q, Pkt(0), NOW).unwrap();
    t.enqueue(q, Pkt(1), NOW).unwrap();
    let (frames, end, ends) = round_with_enqueues_during_the_turn(&t, q, 2, TurnStart::Serve);
    assert_eq!((frames, end), (1, RoundEnd::TurnBudget));
    assert_eq!(ends, [(4, 0)], "Pkt(1) to Pkt(4) in the queue when the turn's end ran");
    // The intake is empty again, so this enqueue writes straight into the queue, behind
    // the frames that waited in the intake.
    t.enqueue(q, Pkt(9), NOW).unwrap();
    t.remove_txq(q).unwrap();
    let mut removed = t.take_removed().expect("nobody holds it");
    assert_eq!(removed.intake.count(), 0, "nothing left in the intake");
    let frames: Vec<Pkt> = std::iter::from_fn(|| removed.queue.dequeue(NOW).unwrap()).collect();
    assert_eq!(frames, [Pkt(1), Pkt(2), Pkt(3), Pkt(4), Pkt(9)]);
}

#[test]
fn the_limit_drops_of_a_turns_last_pull_are_the_turns_end_to_take() {
    let (t, q) = table_with_txq(2);
    t.enqueue(q, Pkt(0), NOW).unwrap();
    t.enqueue(q, Pkt(1), NOW).unwrap();
    let (frames, _, ends) = round_with_enqueues_during_the_turn(&t, q, 2, TurnStart::Serve);
    // Pkt(0) sent; Pkt(1) to Pkt(4) pulled into a queue of two: two dropped, every one
    // of the five accounted for.
    assert_eq!(frames, 1);
    assert_eq!(ends, [(2, 2)]);
}

#[test]
fn a_skipped_turn_pulls_what_arrived_during_its_hook_and_its_end_takes_the_drops() {
    // A dozing station's txq, skipped by the hook: Pkt(0) to Pkt(3) in a queue of two at
    // the turn's end, which takes the two limit drops there, not at the station's wake.
    let (t, q) = table_with_txq(2);
    t.enqueue(q, Pkt(0), NOW).unwrap();
    let (frames, _, ends) = round_with_enqueues_during_the_turn(&t, q, 1, TurnStart::Skip);
    assert_eq!(frames, 0);
    assert_eq!(ends, [(2, 2)]);
}

/// Yields `frames`, then panics: a caller's iterator that fails mid-burst.
fn then_panic(frames: Vec<Pkt>) -> impl Iterator<Item = Pkt> {
    let mut frames = frames.into_iter();
    std::iter::from_fn(move || Some(frames.next().unwrap_or_else(|| panic!("the caller's iterator fails"))))
}

/// Runs an enqueue of `frames` to `q` whose iterator panics after them, and checks it did.
fn enqueue_then_panic(t: &TxqTable<Fq>, q: TxqId, frames: Vec<Pkt>) {
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = t.enqueue_burst(q, &mut then_panic(frames), NOW);
    }));
    assert!(unwound.is_err(), "the iterator's panic reaches the caller");
}

/// A table of one txq slot, so that a slot left held could not be reused.
fn one_slot_table() -> (TxqTable<Fq>, TxqId) {
    let mut config = common::config();
    config.max_txqs = 1;
    let t = TxqTable::new(Scheduler::new(config).unwrap());
    let sta = t.scheduler().add_station(Weight::DEFAULT).unwrap();
    let q = t.add_txq(Some(sta), Tid::BE, queue(1024)).unwrap();
    (t, q)
}

/// The txq's removal is handed back, and its slot, the table's only one, is reused.
fn hand_back_and_reuse(t: &TxqTable<Fq>, q: TxqId) -> airtime_sched::txqs::RemovedTxq<Fq> {
    let removed = t.take_removed().expect("nobody holds the removed txq");
    assert_eq!(removed.id, q);
    let sta = t.scheduler().add_station(Weight::DEFAULT).unwrap();
    let q2 = t.add_txq(Some(sta), Tid::BE, queue(1024)).expect("the only slot is free again");
    assert_eq!(q2.index(), q.index());
    t.enqueue(q2, Pkt(9), NOW).unwrap();
    assert_eq!(serve(t), Some(vec![Pkt(9)]));
    removed
}

#[test]
fn a_burst_whose_iterator_panics_leaves_its_frames_queued_and_the_txq_free() {
    let (t, q) = one_slot_table();
    // Straight into the queue: the frames before the panic are served.
    enqueue_then_panic(&t, q, vec![Pkt(1), Pkt(2)]);
    assert_eq!(serve(&t), Some(vec![Pkt(1), Pkt(2)]), "woken despite the panic");
    // Through the intake (a turn holds the queue): the same.
    let turn = t.claim(q).unwrap().granted().expect("nobody holds it");
    enqueue_then_panic(&t, q, vec![Pkt(3), Pkt(4)]);
    turn.finish(TxqReturn::Empty, NOW);
    assert_eq!(serve(&t), Some(vec![Pkt(3), Pkt(4)]), "pushed and woken despite the panic");
    // A panic before any frame: nothing held either.
    enqueue_then_panic(&t, q, vec![]);
    t.remove_txq(q).unwrap();
    let _removed = hand_back_and_reuse(&t, q);
    let mut t = t;
    t.check_invariants().unwrap();
}

#[test]
fn a_burst_that_panics_after_its_txq_was_removed_hands_every_earlier_frame_back() {
    let (t, q) = one_slot_table();
    t.enqueue(q, Pkt(0), NOW).unwrap();
    // Frame 1 goes straight into the queue; the iterator then removes the txq and panics.
    let mut frames = vec![Pkt(1)].into_iter();
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut burst = std::iter::from_fn(|| {
            frames.next().or_else(|| {
                t.remove_txq(q).unwrap();
                panic!("the caller's iterator fails")
            })
        });
        let _ = t.enqueue_burst(q, &mut burst, NOW);
    }));
    assert!(unwound.is_err());
    let mut removed = hand_back_and_reuse(&t, q);
    let frames: Vec<Pkt> = std::iter::from_fn(|| removed.queue.dequeue(NOW).unwrap()).collect();
    assert_eq!(frames, [Pkt(0), Pkt(1)], "the queue comes back whole");
}

#[test]
fn a_burst_that_panics_before_queuing_leaves_the_removed_txqs_intake_to_its_hand_back() {
    let (t, q) = one_slot_table();
    // A turn holds the queue: frame 1 waits in the intake, its enqueue done.
    let turn = t.claim(q).unwrap().granted().expect("nobody holds it");
    t.enqueue(q, Pkt(1), NOW).unwrap();
    // Another enqueue holds the txq while it is removed and returned, then panics
    // before it queues anything: frame 1 is not its to take back.
    let mut turn = Some(turn);
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut burst = std::iter::from_fn(|| {
            t.remove_txq(q).unwrap();
            turn.take().unwrap().finish(TxqReturn::Empty, NOW);
            panic!("the caller's iterator fails")
        });
        let _ = t.enqueue_burst(q, &mut burst, NOW);
    }));
    assert!(unwound.is_err());
    let removed = hand_back_and_reuse(&t, q);
    assert_eq!(removed.intake.count(), 1, "frame 1 comes back with the hand-back");
}

#[test]
fn a_burst_whose_iterator_panics_keeps_the_intake_bound_exact() {
    let (t, q) = table_with_txq(1024);
    // A turn holds the queue, so the burst goes through the intake.
    let turn = t.claim(q).unwrap().granted().expect("nobody holds it");
    enqueue_then_panic(&t, q, vec![Pkt(0), Pkt(1)]);
    turn.finish(TxqReturn::Empty, NOW);
    // Its two frames counted against the intake's bound; the turn takes them out of
    // the intake and their places with them.
    serve(&t).expect("woken");
    // Held again, the intake takes exactly its bound.
    let turn = t.claim(q).unwrap().granted().expect("nobody holds it");
    let fitted = t.enqueue_burst(q, &mut (100..).map(Pkt), NOW);
    assert!(matches!(fitted, Err(EnqueueError::Full(Pkt(n))) if n == 100 + INTAKE_LIMIT), "{fitted:?}");
    turn.finish(TxqReturn::Backlogged, NOW);
}
