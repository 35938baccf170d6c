//! E6: every station at weight 1 with 1000 us in flight and 1000 us of
//! registered debt, so mainline walks about 2000 laps over the whole list before it
//! serves anything. `select` is one selection from that state; `drain` is a whole round
//! that serves every station once. The debt is restored (untimed) before each iteration.

use airtime_benches::SchedulerUnderTest;
use airtime_benches::baseline::Baseline;
use airtime_benches::workload::DebtRound;
use airtime_sched::Scheduler;
use criterion::{
    BatchSize, BenchmarkGroup, BenchmarkId, Criterion, criterion_group, criterion_main, measurement::WallTime,
};
use std::hint::black_box;

const PENDING_US: u32 = 1000;
const DEBT_US: u32 = 1000;

fn select<S: SchedulerUnderTest>(g: &mut BenchmarkGroup<'_, WallTime>, n: usize) {
    let w = DebtRound::<S>::new(n, PENDING_US, DEBT_US);
    g.bench_function(BenchmarkId::new(S::NAME, n), |b| {
        b.iter_batched(|| w.prepare(), |()| black_box(w.select()), BatchSize::PerIteration)
    });
}

fn drain<S: SchedulerUnderTest>(g: &mut BenchmarkGroup<'_, WallTime>, n: usize) {
    let w = DebtRound::<S>::new(n, PENDING_US, DEBT_US);
    g.bench_function(BenchmarkId::new(S::NAME, n), |b| {
        b.iter_batched(|| w.prepare(), |()| black_box(w.drain()), BatchSize::PerIteration)
    });
}

fn negative_deficit(c: &mut Criterion) {
    let mut g = c.benchmark_group("negative_deficit_select");
    g.sample_size(20);
    for n in [16, 256] {
        select::<Scheduler>(&mut g, n);
        select::<Baseline>(&mut g, n);
    }
    g.finish();
    let mut g = c.benchmark_group("negative_deficit_drain");
    g.sample_size(10);
    for n in [16, 256, 1024] {
        drain::<Scheduler>(&mut g, n);
        drain::<Baseline>(&mut g, n);
    }
    g.finish();
}

criterion_group!(benches, negative_deficit);
criterion_main!(benches);
