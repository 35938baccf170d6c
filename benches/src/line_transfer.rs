//! The machine's cost of moving one cache line between two CPUs, measured by two threads
//! handing a counter back and forth. Printed beside the two-thread results: it is the
//! unit in which contention costs are paid, and on a shared VM it changes from hour to
//! hour, so a result means little without it.

use crate::padded::Padded;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Median one-way transfer time in ns over `runs` runs of `handoffs` round trips between
/// threads pinned to `cpus` (unpinned where pinning is refused).
pub fn one_way_ns(cpus: [usize; 2], handoffs: u64, runs: usize) -> f64 {
    let mut v: Vec<f64> = (0..runs.max(1)).map(|_| run(cpus, handoffs.max(1))).collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn run(cpus: [usize; 2], handoffs: u64) -> f64 {
    let turn = Padded(AtomicU64::new(0));
    // Both sides on threads of their own: pinning the caller's thread would leave it
    // pinned for whatever it runs next.
    std::thread::scope(|s| {
        let first = s.spawn(|| {
            let _ = crate::affinity::pin_current_thread(cpus[0]);
            let t0 = Instant::now();
            for i in 0..handoffs {
                turn.store(2 * i + 1, Ordering::Release);
                while turn.load(Ordering::Acquire) != 2 * i + 2 {
                    std::hint::spin_loop();
                }
            }
            t0.elapsed().as_nanos() as f64 / (2 * handoffs) as f64
        });
        s.spawn(|| {
            let _ = crate::affinity::pin_current_thread(cpus[1]);
            for i in 0..handoffs {
                // Acquire/Release: each side's write is what the other waits to see.
                while turn.load(Ordering::Acquire) != 2 * i + 1 {
                    std::hint::spin_loop();
                }
                turn.store(2 * i + 2, Ordering::Release);
            }
        });
        first.join().unwrap_or(f64::NAN)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_handoff_between_two_cpus_takes_some_time_and_completes() {
        // On one CPU the spinning side would wait out a time slice per handoff.
        let [a, b, ..] = crate::affinity::allowed_cpus()[..] else { return };
        let ns = super::one_way_ns([a, b], 1000, 3);
        assert!(ns.is_finite() && ns > 0.0, "{ns}");
    }
}
