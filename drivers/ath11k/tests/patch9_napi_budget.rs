//! Patch 9: the tx completion handler stops at the NAPI budget and resumes on the
//! next call; the completion round runs once per budget of completions.

mod common;

use airtime_ath11k::Config;
use airtime_ath11k::sim_hal::SimConfig;
use airtime_sched::Ac;
use common::Bench;
use proptest::prelude::*;

fn burst(n: u32) -> (Bench, airtime_sched::TxqId) {
    let mut config = Config::default();
    config.aql = false;
    let mut b = Bench::new(config, SimConfig::default());
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.radio.hal().pause_completions(true);
    b.send(q, n, 1000, 0);
    b.step(0, 64, 0);
    b.radio.hal().pause_completions(false);
    b.now = b.now.add_micros(5000);
    b.radio.hal().advance(b.now);
    assert_eq!(b.radio.hal().completions_waiting(), n);
    (b, q)
}

#[test]
fn a_round_runs_once_per_budget_of_completions() {
    let (mut b, q) = burst(200);
    b.enqueue(q, 50, 1000); // backlog for the completion rounds to push
    let mut works = Vec::new();
    loop {
        let rounds = b.radio.scheduler().ac_counters(Ac::Be).rounds_started;
        let pass = b.radio.poll_tx_completions(64, 0, b.now);
        if pass.work_done == 0 {
            break;
        }
        works.push(pass.work_done);
        assert_eq!(b.radio.scheduler().ac_counters(Ac::Be).rounds_started, rounds + 1, "one round per call");
    }
    assert_eq!(works, vec![64, 64, 64, 8]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn no_completion_call_handles_more_than_the_budget(n in 0u32..400, budget in 1u32..100) {
        let (b, _) = burst(n);
        let mut total = 0;
        let mut calls = 0;
        loop {
            let pass = b.radio.poll_tx_completions(budget, 0, b.now);
            prop_assert!(pass.work_done <= budget);
            total += pass.work_done;
            calls += 1;
            if !pass.budget_exhausted(budget) {
                break;
            }
        }
        prop_assert_eq!(total, n, "every completion is handled, budget by budget");
        prop_assert_eq!(calls, n / budget + 1, "a NAPI poll is repeated while it uses its whole budget");
        prop_assert_eq!(b.radio.scheduler().total_pending_us(), 0);
    }
}

#[test]
fn a_completion_batch_read_by_the_caller_is_cut_at_the_budget() {
    let (b, _) = burst(10);
    let mut batch = Vec::new();
    while let Some(c) = airtime_ath11k::hal::TxCompletionRing::reap_tx_completion(b.radio.hal()) {
        batch.push(c);
    }
    assert_eq!(batch.len(), 10);
    let pass = b.radio.complete_tx_batch(&batch, 4, 0, b.now);
    assert_eq!(pass.work_done, 4);
    assert_eq!(b.done_len(), 4);
    let pass = b.radio.complete_tx_batch(&batch[4..], 64, 0, b.now);
    assert_eq!(pass.work_done, 6);
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
    // A descriptor given twice finds no entry the second time: nothing is released twice.
    let pass = b.radio.complete_tx_batch(&batch[..1], 64, 0, b.now);
    assert_eq!((pass.work_done, pass.reaped.is_empty()), (1, true));
    assert_eq!(b.radio.dp_stats().unknown_msdu, 1);
    assert_eq!(b.radio.scheduler().underflows(), 0);
}

#[test]
fn completion_passes_of_two_rings_may_run_at_once_on_one_radio() {
    // ath11k has a WBM completion ring per NAPI, each on its own CPU and each carrying
    // every radio's frames: two passes over one radio at once, each with its own
    // descriptors (the C API's `airtime_tx_complete()` calls `complete_tx_iter_with`).
    for _ in 0..20 {
        let (b, _) = burst(400);
        let mut batch = Vec::new();
        while let Some(c) = airtime_ath11k::hal::TxCompletionRing::reap_tx_completion(b.radio.hal()) {
            batch.push(c);
        }
        let (odd, even): (Vec<_>, Vec<_>) = batch.iter().enumerate().partition(|(i, _)| i % 2 == 1);
        let done: u32 = std::thread::scope(|s| {
            let passes = [odd, even].map(|half| {
                let radio = &b.radio;
                s.spawn(move || {
                    let mut done = 0;
                    for chunk in half.chunks(16) {
                        let pass = radio.complete_tx_iter(chunk.iter().map(|&(_, c)| *c), 64, 0, b.now);
                        done += pass.work_done;
                    }
                    done
                })
            });
            passes.into_iter().map(|p| p.join().unwrap()).sum()
        });
        assert_eq!(done, 400);
        assert_eq!(b.done_len(), 400, "every frame handed back once");
        assert_eq!(b.radio.scheduler().total_pending_us(), 0, "every charge released once");
        assert_eq!((b.radio.dp_stats().unknown_msdu, b.radio.scheduler().underflows()), (0, 0));
    }
}
