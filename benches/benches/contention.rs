//! Two contexts on two threads, pinned to two CPUs, driving the same AC: a wake context
//! (enqueue, wake, a round that sends one frame into a ring) and a completion context
//! (reap the ring, release, register airtime, refill by rounds). Throughput is in frames
//! (elements) per second: each iteration is a run of `ROUNDS` wake rounds, whose time is
//! scaled to exactly `2 * ROUNDS` completed frames. Ids `<scheduler>/<stations>` hand
//! over, release, register and refill frame by frame (the stress case);
//! `<scheduler>_per_budget/<stations>` run as ath11k with the seed's patches 6 and 9:
//! completions a PPDU at a time, one release call per pass (ours:
//! `Scheduler::release_batch`; the baseline has no batch call and loops), airtime
//! registered per station per pass, one round per budget ([`Completion`]).

use airtime_benches::SchedulerUnderTest;
use airtime_benches::baseline::Baseline;
use airtime_benches::workload::{Completion, TwoContexts};
use airtime_sched::Scheduler;
use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main, measurement::WallTime,
};
use std::time::Duration;

const ROUNDS: u64 = 10_000;
const FRAMES: u64 = 2 * ROUNDS;

fn one<S: SchedulerUnderTest>(g: &mut BenchmarkGroup<'_, WallTime>, n: usize, completion: Completion) {
    let w = TwoContexts::<S>::with_completion(n, completion).pinned();
    w.run(ROUNDS);
    let name = match completion {
        Completion::PerFrame => S::NAME.to_string(),
        Completion::PerBudget => format!("{}_per_budget", S::NAME),
    };
    g.bench_function(BenchmarkId::new(name, n), |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let c = w.run_counted(ROUNDS);
                    c.elapsed.mul_f64(FRAMES as f64 / c.completed.max(1) as f64)
                })
                .sum::<Duration>()
        })
    });
}

fn contention(c: &mut Criterion) {
    let mut g = c.benchmark_group("contention");
    g.throughput(Throughput::Elements(FRAMES));
    g.sample_size(20);
    for n in [16, 256] {
        for completion in [Completion::PerFrame, Completion::PerBudget] {
            one::<Scheduler>(&mut g, n, completion);
            one::<Baseline>(&mut g, n, completion);
        }
    }
    g.finish();
}

criterion_group!(benches, contention);
criterion_main!(benches);
