//! Runs the two-context workload (wake + completion threads on one AC) outside criterion,
//! ours and the baseline interleaved run by run so that both meet the same machine load,
//! and prints frames per second (min / median / max over the runs) and the median of the
//! per-pair ratios, once with charges released per frame and once per completion pass
//! (ours: `Scheduler::release_batch`; the baseline, like mac80211, has no batch call and
//! releases them one by one either way).
//!
//! ```text
//! cargo run --release -p airtime-benches --example two_contexts -- [STATIONS] [WAKE_ROUNDS] [RUNS]
//! ```

use airtime_benches::SchedulerUnderTest;
use airtime_benches::baseline::Baseline;
use airtime_benches::workload::{Release, TwoContexts};
use airtime_sched::Scheduler;

fn fps<S: SchedulerUnderTest>(w: &TwoContexts<S>, rounds: u64) -> f64 {
    let c = w.run_counted(rounds);
    c.completed as f64 / c.elapsed.as_secs_f64()
}

fn summary(name: &str, v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let med = v[v.len() / 2];
    println!("{name:<9} Mframes/s: min {:.2}  median {:.2}  max {:.2}", v[0] / 1e6, med / 1e6, v[v.len() - 1] / 1e6);
    med
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let stations = args.first().copied().unwrap_or(16).clamp(1, 4096);
    let rounds = args.get(1).copied().unwrap_or(50_000) as u64;
    let runs = args.get(2).copied().unwrap_or(15).max(1);
    println!("stations={stations} wake_rounds={rounds} runs={runs}");
    for release in [Release::PerFrame, Release::PerPass] {
        let ours = TwoContexts::<Scheduler>::with_release(stations, release);
        let base = TwoContexts::<Baseline>::with_release(stations, release);
        ours.run(rounds);
        base.run(rounds);
        let (mut o, mut b, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let x = fps(&ours, rounds);
            let y = fps(&base, rounds);
            o.push(x);
            b.push(y);
            ratio.push(x / y);
        }
        println!("release {release:?}:");
        summary("ours", &mut o);
        summary("baseline", &mut b);
        ratio.sort_by(f64::total_cmp);
        println!(
            "ours / baseline, per pair: min {:.2}x  median {:.2}x  max {:.2}x",
            ratio[0],
            ratio[ratio.len() / 2],
            ratio[ratio.len() - 1]
        );
    }
}
