//! The end-to-end two-thread benchmark ([`airtime_benches::end_to_end`]): a wake context
//! (enqueue + round) and a completion context (reap, release, register, round) on two
//! pinned CPUs, moving frames through FQ-CoDel txqs into one ring, for ours (a
//! `TxqTable`) and the mac80211-style baseline (one radio-wide `fq->lock`, per-AC
//! scheduler lock). Four arms alternate run by run, each run on a fresh radio, so all
//! meet the same machine load: ours and the baseline with their rounds gated (one
//! context runs them, as mt76's tx worker does: the headline pair), ours with both
//! contexts running rounds at once, and the baseline with its rounds behind a spinlock
//! (as the generic `ieee80211_handle_wake_tx_queue` holds its lock). It prints
//! completed frames per second (min / median / max over the runs) and the median of the
//! per-run ratios of each ours arm to each baseline arm. Pinned, it also measures the
//! one-way cache-line transfer between the two CPUs before each set of runs, prints it
//! beside the headline pair's ratio of each run, and gives that ratio's median over the
//! runs of each of the VM's two states (fast: under 30 ns).
//!
//! ```text
//! cargo run --release -p airtime-benches --example end_to_end -- [STATIONS] [ROUNDS] [RUNS]
//! ```
//!
//! ROUNDS is the wake context's rounds, each after a burst of 16 enqueues (so
//! 16 x ROUNDS frames per run). `E2E_UNPINNED=1` leaves the threads to the OS.
//! `E2E_ONLY=ARM` runs one arm alone (for a profiler): `ours`, `baseline`,
//! `ours-concurrent`, `baseline-spin`, or `baseline-concurrent` (both contexts running
//! rounds at once, which mac80211 forbids; how the baseline ran before). `E2E_SERIAL=ARM`
//! runs both contexts' work on one thread, for valgrind. Both shapes of the workload run
//! by default, one after the other: the wake context runs a round after every burst
//! (`E2E_WAKE=every`), or only when the ring is empty (`E2E_WAKE=empty`), leaving the
//! rounds to the completions otherwise. `E2E_TURN_FRAMES=N` lets a txq's turn send up to
//! N frames instead of 16 (a host-aggregating driver's A-MPDU is up to 64).

use airtime_benches::end_to_end::{
    BURST, BaselineConcurrentRounds, BaselineRadio, BaselineSpin, E2eCounts, OursConcurrent, OursRadio, Radio,
    TURN_FRAMES, WakeRounds, run, run_serial, two_cpus,
};

type Cpus = Option<[usize; 2]>;

fn once<R: Radio>(stations: usize, rounds: u64, cpus: Cpus, shape: WakeRounds) -> E2eCounts {
    let radio = R::with_turn_frames(stations, turn_frames());
    let c = run(&radio, rounds, cpus, shape);
    let left = radio.leftovers();
    assert_eq!(c.enqueued, c.completed + left.dropped, "{}: frames lost", R::NAME);
    assert_eq!(left.pending_us, 0, "{}: airtime left pending", R::NAME);
    c
}

fn serial<R: Radio>(stations: usize, rounds: u64) {
    let radio = R::with_turn_frames(stations, turn_frames());
    let enqueued = run_serial(&radio, rounds);
    let left = radio.leftovers();
    println!("{}: {enqueued} frames enqueued, {} dropped, {} left", R::NAME, left.dropped, left.queued);
}

/// Frames a txq may send per turn: `E2E_TURN_FRAMES`, else [`TURN_FRAMES`].
fn turn_frames() -> u32 {
    match std::env::var("E2E_TURN_FRAMES") {
        Ok(v) => v
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .unwrap_or_else(|| panic!("E2E_TURN_FRAMES: {v:?} is not a count of frames")),
        Err(_) => TURN_FRAMES,
    }
}

/// One arm: its name in the output and its runs.
struct Arm {
    name: &'static str,
    once: fn(usize, u64, Cpus, WakeRounds) -> E2eCounts,
    serial: fn(usize, u64),
}

const fn arm<R: Radio>() -> Arm {
    Arm { name: R::NAME, once: once::<R>, serial: serial::<R> }
}

/// The arms, by the name `E2E_ONLY` and `E2E_SERIAL` take.
fn arm_named(name: &str) -> Option<Arm> {
    Some(match name {
        "ours" => arm::<OursRadio>(),
        "baseline" => arm::<BaselineRadio>(),
        "ours-concurrent" => arm::<OursConcurrent>(),
        "baseline-spin" => arm::<BaselineSpin>(),
        "baseline-concurrent" => arm::<BaselineConcurrentRounds>(),
        _ => return None,
    })
}

/// One-way line transfers faster than this (ns) mark the VM's fast state.
const FAST_TRANSFER_NS: f64 = 30.0;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn summary(name: &str, v: &[f64]) {
    let mut v = v.to_vec();
    let m = median(&mut v);
    println!("{name:<36} Mframes/s: min {:.3}  median {:.3}  max {:.3}", v[0] / 1e6, m / 1e6, v[v.len() - 1] / 1e6);
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let stations = args.first().copied().unwrap_or(16).clamp(1, 4096);
    let rounds = args.get(1).copied().unwrap_or(20_000) as u64;
    let runs = args.get(2).copied().unwrap_or(11).max(1);
    let cpus = two_cpus().filter(|_| std::env::var_os("E2E_UNPINNED").is_none());
    println!(
        "stations={stations} wake_rounds={rounds} frames/run={} runs={runs} turn_frames={} cpus(wake, completion)={cpus:?}",
        rounds * BURST as u64,
        turn_frames()
    );
    let chosen = |var: &str| {
        std::env::var(var).ok().map(|name| arm_named(&name).unwrap_or_else(|| panic!("{var}: no arm named {name:?}")))
    };
    if let Some(a) = chosen("E2E_SERIAL") {
        return (a.serial)(stations, rounds);
    }
    let shapes: &[WakeRounds] = match std::env::var("E2E_WAKE").as_deref() {
        Ok("every") => &[WakeRounds::EveryBurst],
        Ok("empty") => &[WakeRounds::WhenRingEmpty],
        Ok(other) => panic!("E2E_WAKE: {other:?} is neither `every` nor `empty`"),
        Err(_) => &[WakeRounds::EveryBurst, WakeRounds::WhenRingEmpty],
    };
    if let Some(a) = chosen("E2E_ONLY") {
        for &shape in shapes {
            let v: Vec<f64> = (0..runs).map(|_| (a.once)(stations, rounds, cpus, shape).frames_per_sec()).collect();
            println!("-- {}", shape.name());
            summary(a.name, &v);
        }
        return;
    }
    for &shape in shapes {
        println!("-- {}", shape.name());
        compare(stations, rounds, runs, cpus, shape);
    }
}

/// The four arms, alternating run by run, in one shape of the workload.
fn compare(stations: usize, rounds: u64, runs: usize, cpus: Cpus, shape: WakeRounds) {
    // Ours' arms first, then the baseline's; the ratios pair each of the first with each
    // of the second.
    let arms = [arm::<OursRadio>(), arm::<OursConcurrent>(), arm::<BaselineRadio>(), arm::<BaselineSpin>()];
    // One warm-up run of each.
    for a in &arms {
        (a.once)(stations, rounds, cpus, shape);
    }
    let mut rates = vec![Vec::new(); arms.len()];
    let mut last = vec![E2eCounts::default(); arms.len()];
    // The machine's cost of moving a line between the two CPUs, before each set of runs:
    // on a shared VM it changes between runs, and the baseline's locks cost in that unit.
    let mut transfer_ns = Vec::new();
    for _ in 0..runs {
        if let Some(cpus) = cpus {
            transfer_ns.push(airtime_benches::line_transfer::one_way_ns(cpus, 20_000, 3));
        }
        for (i, a) in arms.iter().enumerate() {
            last[i] = (a.once)(stations, rounds, cpus, shape);
            rates[i].push(last[i].frames_per_sec());
        }
    }
    for (a, v) in arms.iter().zip(&rates) {
        summary(a.name, v);
    }
    for o in 0..2 {
        for b in 2..4 {
            let mut r: Vec<f64> = rates[o].iter().zip(&rates[b]).map(|(x, y)| x / y).collect();
            let m = median(&mut r);
            println!(
                "{} / {}, per run: min {:.2}x  median {m:.2}x  max {:.2}x",
                arms[o].name,
                arms[b].name,
                r[0],
                r[r.len() - 1]
            );
        }
    }
    if !transfer_ns.is_empty() {
        // Each run's transfer time and the headline pair's ratio.
        let runs: Vec<(f64, f64)> =
            transfer_ns.iter().copied().zip(rates[0].iter().zip(&rates[2]).map(|(o, b)| o / b)).collect();
        let each: Vec<String> = runs.iter().map(|(ns, r)| format!("{ns:.0}ns:{r:.2}x")).collect();
        println!("one-way line transfer before each run, and {} / {}: {}", arms[0].name, arms[2].name, each.join(" "));
        // The VM's two states: lines move between its CPUs in ~10-15 ns (the CPUs
        // share a core's caches) or in ~45-200 ns. A run is filed under the state
        // measured just before it, which may change during the run.
        for (state, fast) in [("slow (>= 30 ns)", false), ("fast (< 30 ns)", true)] {
            let mut r: Vec<f64> =
                runs.iter().filter(|(ns, _)| (*ns < FAST_TRANSFER_NS) == fast).map(|&(_, r)| r).collect();
            if !r.is_empty() {
                let n = r.len();
                println!("{} / {}, {state} runs: {n}, median {:.2}x", arms[0].name, arms[2].name, median(&mut r));
            }
        }
    }
    for (a, c) in arms.iter().zip(&last) {
        println!(
            "last {}: sent by wake {} in {} rounds, by completion {} in {} rounds, {:.2} frames per turn; \
             wake waited for {} bursts, completion idle {} passes",
            a.name,
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
