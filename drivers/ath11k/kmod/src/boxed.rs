// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! Building large values straight on the heap, without aborting when memory is
//! short: the adapter is well over a kilobyte by value and the kernel stack is
//! 16 KiB (the object check refuses frames above 2 KiB).
//!
//! One implementation for both kernel modules: this crate's C API uses it, and the
//! Rust-for-Linux module (`../rfl`) compiles this same file as its `boxed` module
//! (`#[path]`, through the `kmod-src` link its build makes). So it names nothing of
//! either crate: only `alloc`, `core` and the workspace's crates.

use alloc::boxed::Box;
use core::alloc::Layout;
use core::mem::MaybeUninit;

use airtime_ath11k::{Ath11k, Ath11kError, Config};

/// No memory for a value (each module maps it to its own error: `-ENOMEM`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoMemory;

/// An uninitialised heap slot for a `T`, without aborting when memory is short.
fn try_box_uninit<T>() -> Result<Box<MaybeUninit<T>>, NoMemory> {
    let layout = Layout::new::<T>();
    if layout.size() == 0 {
        return Ok(Box::new(MaybeUninit::uninit()));
    }
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { alloc::alloc::alloc(layout) }.cast::<MaybeUninit<T>>();
    if ptr.is_null() {
        return Err(NoMemory);
    }
    // SAFETY: `ptr` is a fresh allocation from the global allocator with the
    // layout of `T` (the same as `MaybeUninit<T>`'s), so the box owns it; an
    // uninitialised `MaybeUninit` is valid.
    Ok(unsafe { Box::from_raw(ptr) })
}

/// Writes what `make` returns into `slot`. Never inlined, so that `make`'s
/// result is built in place in the heap slot (the callee writes through the
/// return pointer) instead of on the caller's stack and copied.
#[inline(never)]
fn build_in<T>(slot: &mut MaybeUninit<T>, make: impl FnOnce() -> T) {
    let dst = slot.as_mut_ptr();
    // SAFETY: `dst` is valid for writing one `T` (it is `slot`'s storage);
    // the previous content is uninitialised, so nothing is leaked.
    unsafe { dst.write(make()) };
}

/// Builds the value `make` returns straight on the heap: `Ok(Ok(box))`,
/// `Ok(Err(e))` when `make` fails, `Err(NoMemory)` when memory is short. The
/// value goes heap to heap, never through this stack frame.
pub fn try_box_with<T, E: Copy>(make: impl FnOnce() -> Result<T, E>) -> Result<Result<Box<T>, E>, NoMemory> {
    let mut slot = try_box_uninit::<Result<T, E>>()?;
    build_in(&mut slot, make);
    // SAFETY: `build_in` initialised the slot.
    let made = unsafe { slot.assume_init_mut() };
    let value: *const T = match made {
        Err(e) => return Ok(Err(*e)),
        Ok(v) => v,
    };
    let mut dst = match try_box_uninit::<T>() {
        Ok(dst) => dst,
        Err(e) => {
            // SAFETY: initialised above and not used again.
            unsafe { slot.assume_init_drop() };
            return Err(e);
        }
    };
    // SAFETY: `value` points at the initialised `T` inside `slot`, `dst` is a
    // separate allocation of `T`'s layout; after the copy `dst` owns the value
    // and `slot` is freed without dropping its content (a `MaybeUninit` never
    // drops it), so the value is dropped exactly once, through `dst`.
    unsafe {
        dst.as_mut_ptr().copy_from_nonoverlapping(value, 1);
        drop(slot);
        Ok(Ok(dst.assume_init()))
    }
}

/// `Ath11k::new`, never inlined into its caller: its frame (it builds the
/// adapter piece by piece on the stack) then stays apart from the caller's,
/// which holds the finished adapter. A direct call, not one through a
/// function pointer: this compiles to a tail jump, and the caller's frame is
/// 256 bytes smaller than with the pointer call.
#[inline(never)]
pub fn new_out_of_line<H, T>(hal: H, config: Config) -> Result<Ath11k<H, T>, Ath11kError>
where
    H: airtime_ath11k::Hal,
    T: airtime_sched::Txq<Frame = airtime_ath11k::hal::FrameOf<H>> + airtime_sched::Enqueue,
    airtime_ath11k::hal::FrameOf<H>: airtime_sched::traits::Frame,
{
    Ath11k::new(hal, config)
}
