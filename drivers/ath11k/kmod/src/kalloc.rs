// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! The global allocator: Rust's heap is the kernel's `kmalloc` heap.
//!
//! # GFP flags
//!
//! `GlobalAlloc` has no per-call flags, so the shim picks them per task: the
//! task inside a [`MaySleep`] scope (`airtime_radio_create()`, which allocates
//! every table of a radio) gets `GFP_KERNEL | __GFP_RETRY_MAYFAIL |
//! __GFP_NOWARN` where it could sleep, every other allocation `GFP_ATOMIC |
//! __GFP_NOWARN`.
//!
//! - `GFP_ATOMIC` because the adapter's data path (tx completion, PPDU
//!   statistics, rx status) runs in softirq (NAPI) context, where sleeping is
//!   forbidden; `GFP_KERNEL` could sleep there. The shim also keeps it for a
//!   softirq that interrupts the creating task, and for that task while it
//!   cannot sleep (a lock, BHs or IRQs off, an RCU read-side section).
//! - `GFP_KERNEL` at create, because a radio's tables take contiguous pages
//!   (kilobytes to a few megabytes): reclaim and compaction find them where
//!   the atomic reserves would fail. `kmalloc`, not `kvmalloc`: a `vmalloc`
//!   block could not be freed with a spinlock held, as a table's drop may be.
//! - `__GFP_NOWARN` because a failed allocation is reported on the Rust side:
//!   fallible APIs (`Vec::try_reserve`) return an error the caller handles,
//!   and an infallible one that fails panics, which becomes a `BUG()` with the
//!   Rust location. Code on the data path must use the fallible APIs.
//!
//! # Alignment
//!
//! `kmalloc` guarantees [`KMALLOC_MIN_ALIGN`] for every object, and natural
//! alignment (the size) for power-of-two sizes. A layout that needs more than
//! the minimum is therefore served by asking for the next power of two at
//! least as large as both size and alignment. Alignments above
//! [`MAX_ALIGN`] (one page) are refused: `alloc` returns null, which Rust
//! reports as an allocation failure. As a last line of defence every pointer
//! is checked against the requested alignment, and a misaligned one is freed
//! and reported as a failure rather than returned.

use core::alloc::{GlobalAlloc, Layout};
use core::ffi::c_void;
use core::ptr;
use core::sync::atomic::{AtomicIsize, Ordering};

use crate::ffi;

/// Alignment of every `kmalloc` object on `x86_64` (`ARCH_KMALLOC_MINALIGN`).
///
/// Must equal `AIRTIME_KMALLOC_MIN_ALIGN` in `include/airtime_ath11k.h`; the
/// shim checks at build time that the kernel guarantees at least that much.
pub const KMALLOC_MIN_ALIGN: usize = 8;

/// Largest alignment the allocator serves (one `x86_64` page).
///
/// Must equal `AIRTIME_KMALLOC_MAX_ALIGN` in `include/airtime_ath11k.h`.
pub const MAX_ALIGN: usize = 4096;

/// Number of live Rust heap objects (allocations minus frees).
///
/// Only the self-test reads it, to check that what it allocated was freed.
/// `Relaxed` is enough: it is a statistic, and it orders nothing.
static LIVE_OBJECTS: AtomicIsize = AtomicIsize::new(0);

/// Rust's global allocator in the module: `kmalloc`, `krealloc` and `kfree`
/// through the shim, with `GFP_ATOMIC | __GFP_NOWARN` (see the module docs).
pub struct KernelAllocator;

#[global_allocator]
static ALLOCATOR: KernelAllocator = KernelAllocator;

/// The number of bytes to ask `kmalloc` for so that the object satisfies
/// `layout`, or `None` when the layout cannot be served.
#[must_use]
pub fn kmalloc_size(layout: Layout) -> Option<usize> {
    let (size, align) = (layout.size(), layout.align());
    if align <= KMALLOC_MIN_ALIGN {
        Some(size)
    } else if align <= MAX_ALIGN {
        // Power-of-two sizes are naturally aligned by kmalloc.
        size.max(align).checked_next_power_of_two()
    } else {
        None
    }
}

/// While it lives, the current task's allocations may sleep (`GFP_KERNEL`).
///
/// Begin it only where the task may sleep: process context, no spinlock, no
/// RCU read-side section (`airtime_radio_create()`'s contract). Up to four
/// tasks hold the mode at once; a fifth allocates atomically, as without it. A
/// nested scope on the same task leaves the mode to the outer one.
#[must_use = "the mode ends when the scope is dropped"]
pub struct MaySleep(bool);

impl MaySleep {
    /// Begins the mode for the current task (see the type's docs).
    pub fn begin() -> Self {
        // SAFETY: no preconditions on the C side; the caller's context is the
        // contract the type documents.
        MaySleep(unsafe { ffi::airtime_alloc_may_sleep_begin() })
    }
}

impl Drop for MaySleep {
    fn drop(&mut self) {
        if self.0 {
            // SAFETY: this task began the mode (begin returned true) and ends it once.
            unsafe { ffi::airtime_alloc_may_sleep_end() }
        }
    }
}

/// Live Rust heap objects right now (allocations minus frees).
#[must_use]
pub fn live_objects() -> isize {
    LIVE_OBJECTS.load(Ordering::Relaxed)
}

/// Returns `p` when it is non-null and aligned to `align`; otherwise frees a
/// misaligned `p` and returns null.
fn checked(p: *mut c_void, align: usize) -> *mut u8 {
    if p.is_null() {
        return ptr::null_mut();
    }
    // A layout's alignment is a power of two, so at least 1: `align - 1` cannot wrap.
    if (p as usize) & align.wrapping_sub(1) != 0 {
        // SAFETY: `p` came from kmalloc/kzalloc just now and nobody else has
        // seen it; freeing it once here is its only release.
        unsafe { ffi::airtime_kfree(p) };
        return ptr::null_mut();
    }
    LIVE_OBJECTS.fetch_add(1, Ordering::Relaxed);
    p.cast()
}

// SAFETY: `alloc`/`alloc_zeroed` return null or a fresh kmalloc object of at
// least `layout.size()` bytes aligned to `layout.align()` (checked before it
// is returned); `dealloc` frees exactly such objects; `realloc` keeps the
// contents up to the smaller size and the alignment, and leaves the old block
// intact on failure. kmalloc objects never overlap and stay valid until
// kfree, so blocks handed out are disjoint and stable.
unsafe impl GlobalAlloc for KernelAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(size) = kmalloc_size(layout) else {
            return ptr::null_mut();
        };
        // SAFETY: airtime_kmalloc may be called from any context except hard
        // IRQ/NMI (GFP_ATOMIC), with any size; `size` is non-zero because
        // `layout.size()` is (GlobalAlloc's contract).
        checked(unsafe { ffi::airtime_kmalloc(size) }, layout.align())
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let Some(size) = kmalloc_size(layout) else {
            return ptr::null_mut();
        };
        // SAFETY: as for `alloc`; kzalloc only adds zero-filling.
        checked(unsafe { ffi::airtime_kzalloc(size) }, layout.align())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        LIVE_OBJECTS.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: the caller guarantees `ptr` was returned by this allocator
        // (so by kmalloc/kzalloc/krealloc) and is not used after this call.
        unsafe { ffi::airtime_kfree(ptr.cast()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: GlobalAlloc's contract: `new_size` is non-zero and, rounded
        // up to `layout.align()`, does not overflow `isize`.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if layout.align() <= KMALLOC_MIN_ALIGN {
            // SAFETY: `ptr` came from this allocator; krealloc keeps the
            // contents, returns a block with kmalloc's minimum alignment, and
            // on failure returns null and leaves `ptr` untouched.
            let p = unsafe { ffi::airtime_krealloc(ptr.cast(), new_size) };
            return p.cast();
        }
        // Over-aligned: allocate, copy, free, so that the new block gets the
        // same alignment rules as a fresh allocation.
        // SAFETY: `new_layout` has a non-zero size (see above).
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are valid for `min(old, new)` bytes, and
            // distinct live kmalloc objects, so they do not overlap; the old
            // block is freed exactly once, after the copy.
            unsafe {
                ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}
