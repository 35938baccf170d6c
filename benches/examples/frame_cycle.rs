//! Runs N frame cycles of one scheduler at S stations, for instruction counting under
//! valgrind (`benches/instructions.sh` runs it with N and 2N and subtracts the startup).
//!
//! ```text
//! cargo run --release -p airtime-benches --example frame_cycle -- ours|baseline STATIONS N [cycle|debt]
//! ```
//! `cycle` (the default) is [`FrameCycle::cycle`]; `debt` is N selections of the
//! reference-E6 workload ([`DebtRound::select`], weight 1, 1000 us pending and 1000 us
//! debt per station, the debt restored before each selection).
//!
//! With `FRAME_CYCLE_BATCHES=B` in the environment it also times B batches of N cycles
//! and prints the fastest and the median batch in ns per cycle: on a shared machine
//! the fastest batch is the one least disturbed by other processes.

use airtime_benches::SchedulerUnderTest;
use airtime_benches::baseline::Baseline;
use airtime_benches::workload::{DebtRound, FrameCycle};
use airtime_sched::Scheduler;
use std::hint::black_box;
use std::process::ExitCode;

fn run<S: SchedulerUnderTest>(stations: usize, n: u64, workload: &str) -> u64 {
    match workload {
        "debt" => {
            let w = DebtRound::<S>::new(stations, 1000, 1000);
            (0..n)
                .filter(|_| {
                    w.prepare();
                    black_box(w.select())
                })
                .count() as u64
        }
        _ => {
            let mut w = FrameCycle::<S>::new(stations);
            let sent = (0..n).filter(|_| black_box(w.cycle())).count() as u64;
            let batches: usize = std::env::var("FRAME_CYCLE_BATCHES").ok().and_then(|b| b.parse().ok()).unwrap_or(0);
            if batches > 0 {
                let mut ns: Vec<f64> = (0..batches)
                    .map(|_| {
                        let t = std::time::Instant::now();
                        for _ in 0..n {
                            black_box(w.cycle());
                        }
                        t.elapsed().as_nanos() as f64 / n as f64
                    })
                    .collect();
                ns.sort_by(f64::total_cmp);
                println!(
                    "{} stations={stations}: fastest {:.1} ns/cycle, median {:.1} ns/cycle",
                    S::NAME,
                    ns[0],
                    ns[ns.len() / 2]
                );
            }
            sent
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: frame_cycle ours|baseline STATIONS N [cycle|debt]";
    let (Some(which), Some(Ok(stations)), Some(Ok(n))) =
        (args.first(), args.get(1).map(|s| s.parse::<usize>()), args.get(2).map(|s| s.parse::<u64>()))
    else {
        eprintln!("{usage}");
        return ExitCode::FAILURE;
    };
    let workload = args.get(3).map_or("cycle", String::as_str);
    if !matches!(workload, "cycle" | "debt") || !(1..=4096).contains(&stations) {
        eprintln!("{usage} (1 <= STATIONS <= 4096)");
        return ExitCode::FAILURE;
    }
    let sent = match which.as_str() {
        "ours" => run::<Scheduler>(stations, n, workload),
        "baseline" => run::<Baseline>(stations, n, workload),
        _ => {
            eprintln!("{usage}");
            return ExitCode::FAILURE;
        }
    };
    println!("{which} {workload} stations={stations} n={n} sent={sent}");
    ExitCode::SUCCESS
}
