//! Gated rounds (`Rounds::Gated`), deterministically: a txq's dequeue asks for another
//! round on the same AC in the middle of a round (as another CPU's wake would), so the
//! hand-off, the runner's extra round, the deferral at the budget and the waiting
//! rounds each happen on cue. `two_contexts.rs` runs the gate under two real threads.

mod common;

use airtime_ath11k::sim_hal::{SimConfig, SimHal};
use airtime_ath11k::{Ath11k, Config, RoundEnd, RoundOutcome, Rounds};
use airtime_sched::{Ac, Instant, Tid, TxqId, Weight};
use common::{Pkt, Q, Shared};
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, Weak};

type Radio = Ath11k<SimHal<Pkt>, Q>;

const NOW: Instant = Instant::from_micros(1000);

/// A txq of the test and what it shares with it.
type TestTxq = (TxqId, Arc<Shared>);

/// A radio with `rounds`, two stations with a BE txq each: `a` with two frames queued
/// and woken, `b` empty. Returns the radio and both txqs.
fn radio(rounds: Rounds) -> (Arc<Radio>, TestTxq, TestTxq) {
    let mut config = Config::default();
    config.rounds = rounds;
    let radio = Arc::new(Ath11k::new(SimHal::new(SimConfig::default()), config).expect("radio"));
    let txq = |peer: u16| {
        let sta = radio.add_station(peer, Weight::DEFAULT).expect("station");
        let shared = Arc::new(Shared::default());
        let id = radio.add_txq(Some(sta), Tid::BE, Q(shared.clone())).map_err(|e| e.0).expect("txq");
        (id, shared)
    };
    let (a, b) = (txq(1), txq(2));
    for seq in 0..2 {
        radio.enqueue(a.0, Pkt { seq, txq: a.0, len: 1500 }, NOW).expect("enqueue");
    }
    radio.scheduler().wake_txq(a.0, NOW).expect("wake");
    (radio, a, b)
}

/// Arms `a`'s next dequeue to enqueue one frame to `b` and wake it (another context's
/// wake, mid-round); the wake's outcome lands in the returned cell.
fn wake_b_mid_round(radio: &Arc<Radio>, a: &Shared, b: TxqId) -> Arc<Mutex<Option<RoundOutcome>>> {
    let seen = Arc::new(Mutex::new(None));
    let (weak, out): (Weak<Radio>, _) = (Arc::downgrade(radio), seen.clone());
    *a.on_dequeue.lock().unwrap() = Some(Box::new(move || {
        let radio = weak.upgrade().expect("the radio lives");
        radio.enqueue(b, Pkt { seq: 100, txq: b, len: 1500 }, NOW).expect("enqueue");
        *out.lock().unwrap() = Some(radio.wake_tx_queue(b, 1, NOW).expect("wake"));
    }));
    seen
}

#[test]
fn a_request_during_a_round_is_handed_to_the_runner() {
    let (radio, a, b) = radio(Rounds::Gated { max_rounds: NonZeroU32::new(4).unwrap() });
    let inner = wake_b_mid_round(&radio, &a.1, b.0);
    let outer = radio.run_round(Ac::Be, 0, NOW);
    let inner = inner.lock().unwrap().expect("the hook ran");
    // The mid-round wake ran no round of its own: it left a note and returned.
    assert_eq!((inner.rounds, inner.frames, inner.end, inner.deferred), (0, 0, None, false), "{inner:?}");
    // The runner served a's two frames and b's, and ran one more round for the note.
    assert_eq!((outer.rounds, outer.frames, outer.deferred), (2, 3, false), "{outer:?}");
    assert_eq!(outer.end, Some(RoundEnd::Exhausted));
    assert!(radio.rounds_waiting().is_empty());
    let s = radio.dp_stats();
    assert_eq!((s.rounds_handed_off, s.rounds_deferred), (1, 0), "{s:?}");
}

#[test]
fn a_runner_at_its_budget_defers_and_the_request_waits() {
    let (radio, a, b) = radio(Rounds::Gated { max_rounds: NonZeroU32::new(1).unwrap() });
    let inner = wake_b_mid_round(&radio, &a.1, b.0);
    let outer = radio.run_round(Ac::Be, 0, NOW);
    assert_eq!(inner.lock().unwrap().expect("the hook ran").rounds, 0);
    // One round, its budget, with a note left: deferred, and the note shows as waiting.
    assert_eq!((outer.rounds, outer.deferred), (1, true), "{outer:?}");
    assert_eq!(radio.rounds_waiting().iter().collect::<Vec<_>>(), [Ac::Be]);
    // The poller's call serves it and leaves nothing waiting.
    radio.run_waiting_rounds(0, NOW);
    assert!(radio.rounds_waiting().is_empty());
    assert!(b.1.fifo.lock().unwrap().is_empty() && a.1.fifo.lock().unwrap().is_empty(), "every frame was sent");
}

#[test]
fn a_completion_pass_reports_the_rounds_it_deferred() {
    let (radio, a, b) = radio(Rounds::Gated { max_rounds: NonZeroU32::new(1).unwrap() });
    // a's frames go out, then complete; its next frame's dequeue, in the pass's round,
    // asks for another round.
    radio.run_round(Ac::Be, 0, NOW);
    radio.enqueue(a.0, Pkt { seq: 2, txq: a.0, len: 1500 }, NOW).expect("enqueue");
    radio.scheduler().wake_txq(a.0, NOW).expect("wake");
    let _inner = wake_b_mid_round(&radio, &a.1, b.0);
    // The firmware takes the frames, then completes them: the first pass that reaps
    // runs the round.
    let mut now = NOW;
    let pass = (0..1000)
        .find_map(|_| {
            now = now.add_micros(1000);
            radio.hal().advance(now);
            let pass = radio.poll_tx_completions(64, 0, now);
            pass.reaped.contains(Ac::Be).then_some(pass)
        })
        .expect("a's frames complete");
    assert!(pass.deferred.contains(Ac::Be), "the pass's round met a request at its budget: {pass:?}");
    assert!(radio.rounds_waiting().contains(Ac::Be));
    // The poll, kept scheduled, runs again: it reaps nothing, and still serves them.
    let again = radio.poll_tx_completions(64, 0, now);
    assert!(again.reaped.is_empty() && again.rounds.contains(Ac::Be), "{again:?}");
    assert!(radio.rounds_waiting().is_empty(), "{again:?}");
    let s = radio.dp_stats();
    assert_eq!((s.rounds_handed_off, s.rounds_deferred), (1, 1), "{s:?}");
}

#[test]
fn concurrent_rounds_run_the_mid_round_request_at_once() {
    let (radio, a, b) = radio(Rounds::Concurrent);
    let inner = wake_b_mid_round(&radio, &a.1, b.0);
    let outer = radio.run_round(Ac::Be, 0, NOW);
    let inner = inner.lock().unwrap().expect("the hook ran");
    // The wake ran its own round beside the outer one, and served b there.
    assert_eq!((inner.rounds, inner.frames, inner.deferred), (1, 1, false), "{inner:?}");
    assert_eq!((outer.rounds, outer.frames, outer.deferred), (1, 2, false), "{outer:?}");
    assert!(radio.rounds_waiting().is_empty());
}
