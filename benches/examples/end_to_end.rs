//! The end-to-end two-thread benchmark ([`airtime_benches::end_to_end`]): a wake context
//! (enqueue + round) and a completion context (reap, release, register, round) on two
//! pinned CPUs, moving frames through FQ-CoDel txqs into one locked ring, for ours (a
//! `TxqTable`) and the mac80211-style baseline (one radio-wide `fq->lock`, per-AC
//! scheduler lock). Ours and the baseline alternate run by run, each run on a fresh
//! radio, so both meet the same machine load; it prints completed frames per second
//! (min / median / max over the runs) and the median of the per-pair ratios.
//!
//! ```text
//! cargo run --release -p airtime-benches --example end_to_end -- [STATIONS] [ROUNDS] [RUNS]
//! ```
//!
//! ROUNDS is the wake context's rounds, each after a burst of 16 enqueues (so
//! 16 x ROUNDS frames per run). `E2E_UNPINNED=1` leaves the threads to the OS.

use airtime_benches::end_to_end::{BURST, BaselineRadio, E2eCounts, OursRadio, Radio, run, run_serial, two_cpus};

fn once<R: Radio>(stations: usize, rounds: u64, cpus: Option<[usize; 2]>) -> E2eCounts {
    let radio = R::new(stations);
    let c = run(&radio, rounds, cpus);
    let left = radio.leftovers();
    assert_eq!(c.enqueued, c.completed + left.dropped, "{}: frames lost", R::NAME);
    assert_eq!(left.pending_us, 0, "{}: airtime left pending", R::NAME);
    c
}

fn summary(name: &str, v: &mut [f64]) {
    v.sort_by(f64::total_cmp);
    println!(
        "{name:<9} Mframes/s: min {:.3}  median {:.3}  max {:.3}",
        v[0] / 1e6,
        v[v.len() / 2] / 1e6,
        v[v.len() - 1] / 1e6
    );
}

fn serial<R: Radio>(stations: usize, rounds: u64) {
    let radio = R::new(stations);
    let enqueued = run_serial(&radio, rounds);
    let left = radio.leftovers();
    println!("{}: {enqueued} frames enqueued, {} dropped, {} left", R::NAME, left.dropped, left.queued);
}

fn report(name: &str, counts: Vec<E2eCounts>) {
    let mut v: Vec<f64> = counts.iter().map(E2eCounts::frames_per_sec).collect();
    summary(name, &mut v);
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let stations = args.first().copied().unwrap_or(16).clamp(1, 4096);
    let rounds = args.get(1).copied().unwrap_or(20_000) as u64;
    let runs = args.get(2).copied().unwrap_or(11).max(1);
    let cpus = two_cpus().filter(|_| std::env::var_os("E2E_UNPINNED").is_none());
    println!(
        "stations={stations} wake_rounds={rounds} frames/run={} runs={runs} cpus(wake, completion)={cpus:?}",
        rounds * BURST as u64
    );
    // `E2E_SERIAL=ours|baseline`: both contexts' work on one thread, for valgrind.
    match std::env::var("E2E_SERIAL").as_deref() {
        Ok("ours") => return serial::<OursRadio>(stations, rounds),
        Ok("baseline") => return serial::<BaselineRadio>(stations, rounds),
        _ => {}
    }
    // `E2E_ONLY=ours|baseline`: one implementation alone (for a profiler).
    match std::env::var("E2E_ONLY").as_deref() {
        Ok("ours") => return report("ours", (0..runs).map(|_| once::<OursRadio>(stations, rounds, cpus)).collect()),
        Ok("baseline") => {
            return report("baseline", (0..runs).map(|_| once::<BaselineRadio>(stations, rounds, cpus)).collect());
        }
        _ => {}
    }
    // One warm-up run of each.
    once::<OursRadio>(stations, rounds, cpus);
    once::<BaselineRadio>(stations, rounds, cpus);
    let (mut o, mut b, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    let (mut last_o, mut last_b) = (E2eCounts::default(), E2eCounts::default());
    for _ in 0..runs {
        last_o = once::<OursRadio>(stations, rounds, cpus);
        last_b = once::<BaselineRadio>(stations, rounds, cpus);
        let (x, y) = (last_o.frames_per_sec(), last_b.frames_per_sec());
        o.push(x);
        b.push(y);
        ratio.push(x / y);
    }
    summary("ours", &mut o);
    summary("baseline", &mut b);
    ratio.sort_by(f64::total_cmp);
    println!(
        "ours / baseline, per pair: min {:.2}x  median {:.2}x  max {:.2}x",
        ratio[0],
        ratio[ratio.len() / 2],
        ratio[ratio.len() - 1]
    );
    for (name, c) in [("ours", last_o), ("baseline", last_b)] {
        println!(
            "last {name}: sent by wake {} in {} rounds, by completion {} in {} rounds, {:.2} frames per turn; \
             wake waited for {} bursts, completion idle {} passes",
            c.wake_sent,
            c.wake_rounds,
            c.completion_sent,
            c.completion_rounds,
            c.frames_per_turn(),
            c.wake_waits,
            c.completion_idle
        );
    }
}
