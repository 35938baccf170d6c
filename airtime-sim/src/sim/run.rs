//! Runs arms: every (arm, run) pair is a job; jobs go to worker threads; results come
//! back in arm order. Progress goes to stderr.

use super::world::World;
use crate::metrics::RunResult;
use crate::scenario::{Direction, Protocol, Resolved, limits};
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Overrides from the command line.
#[derive(Clone, Copy, Debug, Default)]
pub struct Overrides {
    /// Seed of the first run.
    pub seed: Option<u64>,
    /// Simulated seconds per run.
    pub duration_s: Option<f64>,
    /// Seconds at the start left out of the figures.
    pub warmup_s: Option<f64>,
    /// Runs per arm.
    pub runs: Option<u32>,
}

impl Overrides {
    /// Applies the overrides to a scenario. A value out of its range, or a run length
    /// that leaves no measured time after the scenario's warm-up, is refused with the
    /// flag's name; nothing is clamped.
    pub fn apply(&self, sc: &mut Resolved) -> Result<(), String> {
        if let Some(d) = self.duration_s {
            limits::duration_s(d).map_err(|e| format!("--duration: {e}"))?;
        }
        if let Some(r) = self.runs {
            limits::runs(r).map_err(|e| format!("--runs: {e}"))?;
        }
        let duration = self.duration_s.unwrap_or(sc.spec.duration_s);
        let warmup = self.warmup_s.unwrap_or(sc.spec.warmup_s);
        if let Err(e) = limits::warmup_s(warmup, duration) {
            return Err(match self.warmup_s {
                Some(_) => format!("--warmup: {e}"),
                None => format!(
                    "--duration {duration}: arm `{}` leaves out its first {warmup} s (`warmup_s`), which is not \
                     below the run length; give --warmup SECONDS in [0, {duration})",
                    sc.spec.name
                ),
            });
        }
        if let Some(s) = self.seed {
            sc.spec.seed = s;
        }
        sc.spec.duration_s = duration;
        sc.spec.warmup_s = warmup;
        if let Some(r) = self.runs {
            sc.spec.runs = r;
        }
        Ok(())
    }
}

/// The results of one arm.
#[derive(Clone, Debug)]
pub struct ArmResult {
    /// The arm.
    pub scenario: Resolved,
    /// One result per run.
    pub runs: Vec<RunResult>,
}

/// Runs one run of one arm.
pub fn run_one(sc: &Resolved, run: u32) -> Result<RunResult, String> {
    let seed = sc.spec.seed.wrapping_add(u64::from(run).wrapping_mul(0x9E37_79B9));
    let world = World::new(sc, seed)?;
    let names: Vec<String> = sc.spec.stations.iter().map(|s| s.name.clone()).collect();
    let mut r = world.run(run, seed, &names, &sc.flow_station);
    for (f, spec) in r.flows.iter_mut().zip(&sc.spec.flows) {
        f.direction = match spec.direction {
            Direction::Download => "download",
            Direction::Upload => "upload",
        };
        f.protocol = match spec.protocol {
            Protocol::Tcp => "tcp",
            Protocol::Udp => "udp",
        };
        f.ac = crate::net::udp::ac_of_dscp(spec.dscp).unwrap_or(airtime_sched::Ac::Be).name();
    }
    for (s, st) in r.stations.iter_mut().enumerate() {
        st.throughput_mbps = r.flows.iter().filter(|f| usize::from(f.station) == s).map(|f| f.throughput_mbps).sum();
    }
    Ok(r)
}

/// Runs every arm's runs on `threads` worker threads; `progress` prints to stderr.
pub fn run_all(arms: Vec<Resolved>, threads: usize, progress: bool) -> Result<Vec<ArmResult>, String> {
    let jobs: Vec<(usize, u32)> =
        arms.iter().enumerate().flat_map(|(a, sc)| (0..sc.spec.runs).map(move |r| (a, r))).collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<RunResult, String>>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    let total = jobs.len();
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                loop {
                    let j = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(a, r)) = jobs.get(j) else { break };
                    let res = run_one(&arms[a], r);
                    if let Ok(mut g) = results.lock() {
                        g[j] = Some(res);
                    }
                    let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if progress {
                        let mut err = std::io::stderr().lock();
                        let _ = write!(err, "\r[{d}/{total}] {} run {}          ", arms[a].spec.name, r + 1);
                        let _ = err.flush();
                    }
                }
            });
        }
    });
    if progress {
        eprintln!();
    }
    let mut flat = results.into_inner().map_err(|_| "a worker thread panicked".to_string())?.into_iter();
    let mut out = Vec::new();
    for sc in arms {
        let mut runs = Vec::new();
        for _ in 0..sc.spec.runs {
            match flat.next().flatten() {
                Some(Ok(r)) => runs.push(r),
                Some(Err(e)) => return Err(format!("{}: {e}", sc.spec.name)),
                None => return Err(format!("{}: a run did not finish", sc.spec.name)),
            }
        }
        out.push(ArmResult { scenario: sc, runs });
    }
    Ok(out)
}
