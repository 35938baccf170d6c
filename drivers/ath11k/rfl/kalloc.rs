// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! The global-allocator entry points of the crates' `alloc`, on top of the
//! kernel's `Kmalloc`.
//!
//! Kernels since 6.13 no longer build `alloc`, so nothing defines these
//! symbols; rustc emits calls to them from `alloc::alloc::{alloc, dealloc,
//! realloc, alloc_zeroed}` and `handle_alloc_error`. The names are those of
//! rustc 1.85 (newer compilers mangle them: check each toolchain).
//!
//! `GFP_ATOMIC | __GFP_NOWARN`: the crates may allocate with a spinlock held
//! or in softirq context, and report a failed allocation themselves.

use core::alloc::Layout;
use core::ptr::{self, NonNull};

use kernel::alloc::allocator::Kmalloc;
use kernel::alloc::{flags, Allocator, Flags, NumaNode};

fn gfp() -> Flags {
    flags::GFP_ATOMIC | flags::__GFP_NOWARN
}

/// # Safety
///
/// `size` and `align` must form a valid `Layout` (rustc guarantees it).
unsafe fn layout(size: usize, align: usize) -> Layout {
    // SAFETY: the caller (the `alloc` crate) passes a valid layout.
    unsafe { Layout::from_size_align_unchecked(size, align) }
}

fn alloc_with(layout: Layout, flags: Flags) -> *mut u8 {
    match Kmalloc::alloc(layout, flags, NumaNode::NO_NODE) {
        Ok(p) => p.as_ptr().cast(),
        Err(_) => ptr::null_mut(),
    }
}

#[no_mangle]
unsafe extern "Rust" fn __rust_alloc(size: usize, align: usize) -> *mut u8 {
    // SAFETY: forwarded from the caller.
    alloc_with(unsafe { layout(size, align) }, gfp())
}

#[no_mangle]
unsafe extern "Rust" fn __rust_alloc_zeroed(size: usize, align: usize) -> *mut u8 {
    // SAFETY: forwarded from the caller.
    alloc_with(unsafe { layout(size, align) }, gfp() | flags::__GFP_ZERO)
}

#[no_mangle]
unsafe extern "Rust" fn __rust_dealloc(ptr: *mut u8, size: usize, align: usize) {
    if let Some(p) = NonNull::new(ptr) {
        // SAFETY: `ptr` came from `__rust_alloc*` with this layout.
        unsafe { Kmalloc::free(p, layout(size, align)) };
    }
}

#[no_mangle]
unsafe extern "Rust" fn __rust_realloc(
    ptr: *mut u8,
    size: usize,
    align: usize,
    new_size: usize,
) -> *mut u8 {
    // SAFETY: forwarded from the caller; `new_size` rounded to `align` does not
    // overflow (the `alloc` crate's contract).
    let (old, new) = unsafe { (layout(size, align), layout(new_size, align)) };
    // SAFETY: `ptr` came from `__rust_alloc*` with layout `old`.
    match unsafe { Kmalloc::realloc(NonNull::new(ptr), new, old, gfp(), NumaNode::NO_NODE) } {
        Ok(p) => p.as_ptr().cast(),
        Err(_) => ptr::null_mut(),
    }
}

#[no_mangle]
extern "Rust" fn __rust_alloc_error_handler(size: usize, _align: usize) -> ! {
    panic!("out of memory: allocation of {size} bytes failed");
}

#[no_mangle]
static __rust_no_alloc_shim_is_unstable: u8 = 0;

#[no_mangle]
static __rust_alloc_error_handler_should_panic: u8 = 1;
