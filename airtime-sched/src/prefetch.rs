//! Asking the CPU for a cache line before the code that needs it, where the address is
//! known early and the line is likely in another CPU's cache.
//!
//! A txq's server walks the intake's chain of nodes, which the enqueuing context has
//! just written: each node's address is read from the node before it, so without a hint
//! every node costs a full line transfer in turn (about 250 ns on a 2-CPU EPYC guest, see
//! BENCHMARKS.md). Issued together, the transfers overlap.
//!
//! A prefetch is only a hint: it reads no memory as far as the program is concerned, so
//! it may name memory that was freed or reused (the hardware ignores a bad address), and
//! leaving it out changes no result. Loom builds have no module (their callers ask for
//! nothing) and Miri builds ask for nothing.

/// Asks for the line holding `p`, to be written soon. A no-op where no hint is written
/// for the target.
#[inline(always)]
pub(crate) fn for_write<T>(p: *const T) {
    #[cfg(all(not(miri), target_arch = "x86_64"))]
    // SAFETY: a prefetch reads and writes no memory the program can see (it is given an
    // address, not a pointer to read through), never faults, and clobbers neither flags
    // nor stack. `prefetchw` (fetch for ownership) only where the
    // build says the CPU has it: older x86-64 CPUs fault on it; `prefetcht0` is baseline.
    unsafe {
        #[cfg(target_feature = "prfchw")]
        core::arch::asm!("prefetchw [{0}]", in(reg) p.addr(), options(nomem, nostack, preserves_flags));
        #[cfg(not(target_feature = "prfchw"))]
        core::arch::asm!("prefetcht0 [{0}]", in(reg) p.addr(), options(nomem, nostack, preserves_flags));
    }
    #[cfg(all(not(miri), target_arch = "aarch64"))]
    // SAFETY: as above; `prfm` is a hint on every AArch64 CPU.
    unsafe {
        core::arch::asm!("prfm pstl1keep, [{0}]", in(reg) p.addr(), options(nomem, nostack, preserves_flags));
    }
    #[cfg(not(all(not(miri), any(target_arch = "x86_64", target_arch = "aarch64"))))]
    let _ = p;
}
