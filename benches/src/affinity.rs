//! Pinning the two-thread workload's contexts to CPUs of their own.
//!
//! Left to the OS, the two contexts sometimes share one CPU and sometimes run on two,
//! and the two cases differ by up to 5x (on one CPU no cache line ever moves), so
//! unpinned runs measure where the OS put the threads as much as the schedulers. A
//! driver's wake and completion contexts run on different CPUs, which is the case the
//! two-thread target is about; pinned runs measure that case every time.

/// Pins the calling thread to `cpu`. False where pinning is unavailable (not Linux, or
/// the CPU is not in the process's allowed set): the thread then runs where the OS puts it.
pub fn pin_current_thread(cpu: usize) -> bool {
    imp::pin(cpu)
}

/// The CPUs this process may run on, in order (empty where unknown).
pub fn allowed_cpus() -> Vec<usize> {
    imp::allowed()
}

#[cfg(target_os = "linux")]
mod imp {
    pub(super) fn pin(cpu: usize) -> bool {
        if cpu >= libc::CPU_SETSIZE as usize {
            return false;
        }
        // SAFETY: cpu_set_t is plain data for which all-zero is the empty set; CPU_SET
        // writes inside it (cpu < CPU_SETSIZE, checked above); sched_setaffinity reads
        // size_of::<cpu_set_t>() bytes from a valid reference, and pid 0 is this thread.
        unsafe {
            let mut set: libc::cpu_set_t = core::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, core::mem::size_of::<libc::cpu_set_t>(), &set) == 0
        }
    }

    pub(super) fn allowed() -> Vec<usize> {
        // SAFETY: as in `pin`; sched_getaffinity writes at most size_of::<cpu_set_t>()
        // bytes into `set`, and CPU_ISSET reads inside it.
        unsafe {
            let mut set: libc::cpu_set_t = core::mem::zeroed();
            if libc::sched_getaffinity(0, core::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return Vec::new();
            }
            (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub(super) fn pin(_cpu: usize) -> bool {
        false
    }

    pub(super) fn allowed() -> Vec<usize> {
        Vec::new()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_thread_pinned_to_an_allowed_cpu_runs_only_there() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty(), "a Linux process may run on some CPU");
        let last = *cpus.last().unwrap();
        std::thread::spawn(move || {
            assert!(pin_current_thread(last));
            assert_eq!(allowed_cpus(), vec![last]);
            // SAFETY: sched_getcpu has no preconditions.
            let now = unsafe { libc::sched_getcpu() };
            assert_eq!(now, last as i32);
        })
        .join()
        .unwrap();
        assert!(!pin_current_thread(usize::MAX), "a CPU outside the set is refused, not a panic");
    }
}
