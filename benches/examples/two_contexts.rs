//! Runs the two-context workload (wake + completion threads on one AC) outside criterion,
//! ours and the baseline interleaved run by run so that both meet the same machine load,
//! and prints frames per second (min / median / max over the runs) and the median of the
//! per-pair ratios, for both completion modes ([`Completion`]): per frame, and per
//! budget as the seed's patches 6 and 9 run it (ours releases the pass with
//! `Scheduler::release_batch`; the baseline, like mac80211, has no batch call).
//!
//! ```text
//! cargo run --release -p airtime-benches --example two_contexts -- [STATIONS] [WAKE_ROUNDS] [RUNS]
//! ```
//!
//! The contexts are pinned to the first two CPUs the process may use
//! ([`TwoContexts::pinned`]); `TWO_CONTEXTS_UNPINNED=1` leaves them to the OS.

use airtime_benches::SchedulerUnderTest;
use airtime_benches::baseline::Baseline;
use airtime_benches::workload::{Completion, TwoContexts};
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
    let pinned = std::env::var_os("TWO_CONTEXTS_UNPINNED").is_none();
    let cpus = TwoContexts::<Baseline>::new(1).pinned().cpus();
    println!("stations={stations} wake_rounds={rounds} runs={runs} cpus(wake, completion)={cpus:?} pinned={pinned}");
    if let Some(cpus) = cpus.filter(|_| pinned) {
        let ns = airtime_benches::line_transfer::one_way_ns(cpus, 200_000, 5);
        println!("one-way cache-line transfer between them: {ns:.1} ns (median of 5)");
    }
    for completion in [Completion::PerFrame, Completion::PerBudget] {
        let (ours, base) = if pinned {
            (
                TwoContexts::<Scheduler>::with_completion(stations, completion).pinned(),
                TwoContexts::<Baseline>::with_completion(stations, completion).pinned(),
            )
        } else {
            (
                TwoContexts::<Scheduler>::with_completion(stations, completion),
                TwoContexts::<Baseline>::with_completion(stations, completion),
            )
        };
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
        println!("completion {completion:?}:");
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
