//! `airtime-sim`: runs the default suite (the seed cover letter's tables), a named suite
//! or a scenario file, and prints our figures beside the seed's.

use airtime_sim::report::{self, summary};
use airtime_sim::scenario::{self, Resolved, limits};
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
    /// A named suite: default, vht80, mcs0, split, roundfix, designs, ofdma, adaptive, calibration, or a directory.
    #[arg(long)]
    suite: Option<String>,
    /// Seed of the first run of every arm.
    #[arg(long)]
    seed: Option<u64>,
    /// Simulated seconds per run, in (0, 86400].
    #[arg(long, value_parser = parse_duration, allow_negative_numbers = true)]
    duration: Option<f64>,
    /// Seconds at the start of every run left out of the figures, below the run length.
    #[arg(long, value_parser = parse_warmup, allow_negative_numbers = true)]
    warmup: Option<f64>,
    /// Runs per arm, 1..=1000.
    #[arg(long, value_parser = parse_runs, allow_negative_numbers = true)]
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

/// Writes `text` to stdout; a reader that closed the pipe early (`| head`) is not an
/// error (`print!` would panic).
fn out(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    match o.write_all(text.as_bytes()).and_then(|()| o.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

fn parse_f64(s: &str) -> Result<f64, String> {
    s.trim().parse::<f64>().map_err(|e| format!("`{s}` is not a number: {e}"))
}

fn parse_duration(s: &str) -> Result<f64, String> {
    limits::duration_s(parse_f64(s)?)
}

fn parse_warmup(s: &str) -> Result<f64, String> {
    limits::warmup_alone_s(parse_f64(s)?)
}

fn parse_runs(s: &str) -> Result<u32, String> {
    let n: u32 =
        s.trim().parse().map_err(|e| format!("`{s}` is not a run count: {e}; give 1..={}", limits::MAX_RUNS))?;
    limits::runs(n)
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
        if let Err(e) = out(&scenario::keys::reference_markdown()) {
            eprintln!("error: writing the output: {e}");
            return ExitCode::FAILURE;
        }
        return ExitCode::SUCCESS;
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
    let ov = Overrides { seed: cli.seed, duration_s: cli.duration, warmup_s: cli.warmup, runs: cli.runs };
    for a in &mut list {
        if let Err(e) = ov.apply(a) {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
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
    notes.extend(report::notes::targets_line(&summaries, &results));
    notes.push(format!(
        "{} arms, {} runs in {wall:.1} s wall clock: {:.2} M simulated packets per wall-clock second",
        results.len(),
        results.iter().map(|a| a.runs.len()).sum::<usize>(),
        packets as f64 / wall.max(1e-9) / 1e6
    ));
    for w in summaries.iter().flat_map(|s| &s.warnings) {
        eprintln!("warning: {w}");
    }
    let text = match cli.format {
        Format::Table => report::table::render(&summaries, &notes),
        Format::Json => report::json::render(&summaries, &results, &notes) + "\n",
        Format::Csv => report::csv::render(&results),
    };
    if let Err(e) = out(&text) {
        eprintln!("error: writing the output: {e}");
        return ExitCode::FAILURE;
    }
    if let Some(dir) = &cli.plot
        && let Err(e) = report::plots::write_all(dir, &summaries, &results)
    {
        eprintln!("error: writing plots to {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
