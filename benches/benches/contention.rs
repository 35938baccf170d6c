//! Two contexts on two threads driving the same AC: a wake context (enqueue, wake, round,
//! send one frame into a ring) and a completion context (reap the ring: release and
//! register airtime; then one round per frame reaped, to refill). Throughput is in frames
//! (elements) per second: each iteration is a run of `ROUNDS` wake rounds, whose time is
//! scaled to exactly `2 * ROUNDS` completed frames. Ids `<scheduler>/<stations>` release
//! and refill per frame reaped; `<scheduler>_per_budget/<stations>` run the completion
//! context as the seed's patches 6 and 9 do: one release call (ours:
//! `Scheduler::release_batch`; the baseline has no batch call and loops) and one round
//! per budget of completions.

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
    let w = TwoContexts::<S>::with_completion(n, completion);
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
