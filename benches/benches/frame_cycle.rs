//! The full frame cycle (wake, start round, next txq, AQL check, dequeue, charge, return,
//! release, register airtime) at 1, 16, 256 and 4096 backlogged stations, ours beside
//! the baseline in the same run.

use airtime_benches::SchedulerUnderTest;
use airtime_benches::baseline::Baseline;
use airtime_benches::workload::FrameCycle;
use airtime_sched::Scheduler;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, criterion_group, criterion_main, measurement::WallTime};
use std::hint::black_box;

const STATIONS: [usize; 4] = [1, 16, 256, 4096];

fn one<S: SchedulerUnderTest>(g: &mut BenchmarkGroup<'_, WallTime>, n: usize) {
    let mut w = FrameCycle::<S>::new(n);
    // One lap over every station first, so the measurement starts in steady state.
    for _ in 0..2 * n {
        w.cycle();
    }
    g.bench_function(BenchmarkId::new(S::NAME, n), |b| b.iter(|| black_box(w.cycle())));
}

fn frame_cycle(c: &mut Criterion) {
    let mut g = c.benchmark_group("frame_cycle");
    for n in STATIONS {
        one::<Scheduler>(&mut g, n);
        one::<Baseline>(&mut g, n);
    }
    g.finish();
}

criterion_group!(benches, frame_cycle);
criterion_main!(benches);
