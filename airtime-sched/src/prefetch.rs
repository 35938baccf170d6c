//! Asking the CPU for a cache line ahead of the code that needs it: where the address is
//! known early and the line was last written by another CPU, so that several transfers
//! overlap instead of following one another (the intake's walk of its stack, in
//! `txqs::intake`).
//!
//! A prefetch is only a hint. It is given an address, not a pointer to read through, so
//! it reads no memory as far as the program is concerned and may name memory freed or
//! reused since; it never faults, and a stale address costs at most a wasted line
//! transfer. Leaving it out changes no result. Miri builds ask for nothing, and loom
//! builds have no such module (their callers ask for nothing).

/// Asks for the line holding `p`, to be written soon. A no-op where no hint is written
/// for the target.
#[inline(always)]
pub(crate) fn for_write<T>(p: *const T) {
    #[cfg(all(not(miri), target_arch = "x86_64", target_feature = "sse"))]
    // SAFETY: SSE is enabled for this build (the cfg above), which is all the intrinsic
    // needs; a prefetch reads no memory the program can see and never faults. `ET0` lets
    // the compiler emit `prefetchw` (fetch for ownership) where the target CPU has it
    // (`-C target-cpu`), and `prefetcht0` otherwise.
    unsafe {
        use core::arch::x86_64::{_MM_HINT_ET0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_ET0>(p.cast());
    }
    #[cfg(all(not(miri), target_arch = "x86_64", not(target_feature = "sse")))]
    // SAFETY: as above; builds without SSE (a kernel's) still have `prefetcht0`, which is
    // in every x86-64 CPU and touches no SSE state.
    unsafe {
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
