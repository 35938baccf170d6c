//! The per-turn budget (`Config::turn_budget`, the core's `TurnBudget`; not in the
//! series, where a turn lasts while AQL and the ring allow): a txq's turn ends once it
//! sent its budget of frames or of charged airtime, and the round goes on with the
//! other stations' txqs, so that one station cannot hold the ring while the others
//! wait. AQL is off in these tests, so that only the budget and the txqs' contents end
//! a turn (charges are counted either way), and completions start no round, so that
//! each round the tests look at is one they ran.

mod common;

use airtime_ath11k::sim_hal::SimConfig;
use airtime_ath11k::{Config, RoundEnd};
use airtime_sched::txqs::TurnBudget;
use airtime_sched::{Ac, TxqId};
use common::Bench;

const STATIONS: u16 = 3;
const FRAMES: u32 = 20;
const LEN: u32 = 1000;

/// Three stations with one BE txq each, `FRAMES` frames queued in each and every txq
/// marked backlogged (as an enqueue's wake does, without running a round yet).
fn bench(budget: TurnBudget) -> (Bench, Vec<TxqId>) {
    let mut config = Config::default();
    config.aql = false;
    // Only the test runs rounds: a completion pass starts none.
    config.rounds_on_completion = false;
    config.turn_budget = budget;
    let mut b = Bench::new(config, SimConfig::default());
    let mut txqs = Vec::new();
    for peer in 1..=STATIONS {
        let sta = b.station(peer, 256);
        let q = b.txq(sta, 0);
        b.enqueue(q, FRAMES, LEN);
        b.radio.scheduler().wake_txq(q, b.now).unwrap();
        txqs.push(q);
    }
    (b, txqs)
}

/// Lets the firmware complete every frame in the hardware.
fn complete_all(b: &mut Bench) {
    for _ in 0..100 {
        if b.radio.outstanding_msdus() == 0 {
            return;
        }
        b.step(1_000, 1024, 0);
    }
    panic!("{} frames never completed", b.radio.outstanding_msdus());
}

/// The txq of each frame the ring took, in the order it took them (ring 0 completes
/// in order): the frames are completed and read back from the status sink.
fn push_order(b: &mut Bench, txqs: &[TxqId]) -> Vec<usize> {
    let before = b.done_len() as usize;
    complete_all(b);
    b.radio.hal().with_done(|done| {
        done[before..].iter().map(|(p, _)| txqs.iter().position(|q| *q == p.txq).expect("a bench txq")).collect()
    })
}

#[test]
fn a_frame_budget_ends_each_turn_and_the_round_serves_the_other_stations() {
    let (mut b, txqs) = bench(TurnBudget::frames(4));
    let r = b.radio.run_round(Ac::Be, 0, b.now);
    // Four frames from each station, then the round ends on the budget.
    assert_eq!((r.frames, r.txqs_served, r.end), (12, 3, Some(RoundEnd::TurnBudget)));
    for q in &txqs {
        assert_eq!(b.txq_len(*q), u64::from(FRAMES - 4));
    }
    // In turns: four of one station, then four of the next, each station once.
    let order = push_order(&mut b, &txqs);
    assert_eq!(order.len(), 12);
    let turns: Vec<&[usize]> = order.chunks(4).collect();
    for turn in &turns {
        assert!(turn.iter().all(|t| *t == turn[0]), "a turn mixed txqs: {order:?}");
    }
    let mut served: Vec<usize> = turns.iter().map(|t| t[0]).collect();
    served.sort_unstable();
    assert_eq!(served, vec![0, 1, 2], "each station served once: {order:?}");

    // Every later round keeps the bound: at most four frames per txq, until all sent.
    let mut rounds = 1;
    while b.queued() > 0 {
        let before: Vec<u64> = txqs.iter().map(|q| b.txq_len(*q)).collect();
        let r = b.radio.run_round(Ac::Be, 0, b.now);
        assert!(r.frames > 0, "round {rounds} sent nothing with {} frames queued", b.queued());
        for (q, was) in txqs.iter().zip(&before) {
            let sent = was - b.txq_len(*q);
            assert!(sent <= 4, "round {rounds}: txq {q:?} sent {sent} frames in its turn");
        }
        complete_all(&mut b);
        rounds += 1;
        assert!(rounds < 100, "the budgeted rounds do not drain");
    }
    assert_eq!(rounds, FRAMES.div_ceil(4), "each round sent a whole budget per station");
    b.drain(1024, 0);
    assert_eq!(b.done_len(), u64::from(FRAMES) * u64::from(STATIONS));
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
}

#[test]
fn without_a_budget_the_first_station_sends_its_whole_queue_before_the_others() {
    // The default (the series): the same round sends everything, one whole txq at a time.
    assert_eq!(Config::default().turn_budget, TurnBudget::UNLIMITED);
    let (mut b, txqs) = bench(TurnBudget::UNLIMITED);
    let r = b.radio.run_round(Ac::Be, 0, b.now);
    assert_eq!((r.frames, r.txqs_served, r.end), (FRAMES * u32::from(STATIONS), 3, Some(RoundEnd::Exhausted)));
    let order = push_order(&mut b, &txqs);
    let first = order[0];
    assert!(order[..FRAMES as usize].iter().all(|t| *t == first), "the first turn was cut short: {order:?}");
}

#[test]
fn an_airtime_budget_ends_a_turn_at_the_frame_that_reaches_it() {
    // One frame's charge (the unknown-rate charge of a 1000-byte frame), measured with
    // a budget of one frame per turn.
    let (probe, probe_txqs) = bench(TurnBudget::frames(1));
    let r = probe.radio.run_round(Ac::Be, 0, probe.now);
    assert_eq!(r.frames, 3);
    let charge = probe.radio.scheduler().txq_aql_pending_us(probe_txqs[0]).unwrap();
    assert!(charge > 0);

    // Two and a half frames' airtime: the third frame reaches it and is sent, no fourth.
    let (mut b, txqs) = bench(TurnBudget::airtime_us(charge * 5 / 2));
    let r = b.radio.run_round(Ac::Be, 0, b.now);
    assert_eq!((r.frames, r.txqs_served, r.end), (9, 3, Some(RoundEnd::TurnBudget)));
    for q in &txqs {
        assert_eq!(b.txq_len(*q), u64::from(FRAMES - 3));
        assert_eq!(b.radio.scheduler().txq_aql_pending_us(*q).unwrap(), 3 * charge);
    }
    let order = push_order(&mut b, &txqs);
    for turn in order.chunks(3) {
        assert!(turn.iter().all(|t| *t == turn[0]), "a turn mixed txqs: {order:?}");
    }
    b.drain(1024, 0);
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
}
