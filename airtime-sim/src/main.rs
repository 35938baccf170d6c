//! `airtime-sim`: runs the default suite (the seed cover letter's tables), a named suite
//! or a scenario file, and prints our figures beside the seed's.

use airtime_sim::report::{self, summary};
use airtime_sim::scenario::{self, Resolved};
use airtime_sim::sim::run::{self, Overrides};
use clap::{Parser, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Table,
    Json,
    Csv,
}

/// Discrete-event Wi-Fi simulator for AQL and airtime fairness, with the airtime crates in
/// the access point.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    /// Scenario files to run (default: the default suite).
    scenarios: Vec<PathBuf>,
    /// A named suite: default, vht80, mcs0, split, roundfix, designs, adaptive, or a directory.
    #[arg(long)]
    suite: Option<String>,
    /// Seed of the first run of every arm.
    #[arg(long)]
    seed: Option<u64>,
    /// Simulated seconds per run.
    #[arg(long)]
    duration: Option<f64>,
    /// Runs per arm.
    #[arg(long)]
    runs: Option<u32>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Write SVG figures into this directory.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    threads: Option<usize>,
    /// No progress on stderr.
    #[arg(long, short)]
    quiet: bool,
    /// Print the reference of every scenario key (Markdown) and exit.
    #[arg(long)]
    keys_md: bool,
}

fn arms(cli: &Cli) -> Result<Vec<Resolved>, String> {
    if !cli.scenarios.is_empty() {
        return cli.scenarios.iter().map(|p| scenario::load(p).map_err(|e| e.to_string())).collect();
    }
    scenario::suite::named(cli.suite.as_deref().unwrap_or("default")).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.keys_md {
        print!("{}", scenario::keys::reference_markdown());
        return ExitCode::SUCCESS;
    }
    if cli.duration.is_some_and(|d| !(d > 0.0 && d.is_finite())) {
        eprintln!("error: --duration must be a positive number of seconds");
        return ExitCode::from(2);
    }
    let mut list = match arms(&cli) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    for w in list.iter().flat_map(|a| &a.warnings) {
        eprintln!("warning: {w}");
    }
    let ov = Overrides { seed: cli.seed, duration_s: cli.duration, runs: cli.runs };
    for a in &mut list {
        ov.apply(a);
    }
    let threads = cli.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let started = std::time::Instant::now();
    let results = match run::run_all(list, threads, !cli.quiet) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let wall = started.elapsed().as_secs_f64();
    let summaries: Vec<_> = results.iter().map(summary::summarise).collect();
    let packets: u64 = results.iter().flat_map(|a| a.runs.iter()).map(|r| r.packets).sum();
    let mut notes = report::notes::suite_notes(&results);
    notes.push(format!(
        "{} arms, {} runs in {wall:.1} s wall clock: {:.2} M simulated packets per wall-clock second",
        results.len(),
        results.iter().map(|a| a.runs.len()).sum::<usize>(),
        packets as f64 / wall.max(1e-9) / 1e6
    ));
    let paired: Vec<_> = summaries.iter().cloned().zip(results.iter().map(|a| a.runs.clone())).collect();
    match cli.format {
        Format::Table => print!("{}", report::table::render(&summaries, &notes)),
        Format::Json => println!("{}", report::json::render(&paired, &notes)),
        Format::Csv => {
            let rows: Vec<_> = results.iter().map(|a| (a.scenario.spec.name.clone(), a.runs.clone())).collect();
            print!("{}", report::csv::render(&rows));
        }
    }
    if let Some(dir) = &cli.plot
        && let Err(e) = report::svg::write_all(dir, &paired)
    {
        eprintln!("error: writing plots to {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
