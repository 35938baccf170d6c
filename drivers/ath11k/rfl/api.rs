// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! Building large values straight on the heap (the kernel stack is 16 KiB
//! and the adapter is over a kilobyte by value). The shared scenarios
//! (`kmod-src/selftest/adapter.rs`) call these as `crate::api::…`.

use alloc::boxed::Box;
use core::alloc::Layout;
use core::mem::MaybeUninit;

use airtime_ath11k::{Ath11k, Ath11kError, Config};

/// No memory for a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NoMemory;

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
    // SAFETY: a fresh allocation with `T`'s layout, owned by the box; an
    // uninitialised `MaybeUninit` is valid.
    Ok(unsafe { Box::from_raw(ptr) })
}

/// Writes `make()` into `slot`; never inlined so the value is built in place.
#[inline(never)]
fn build_in<T>(slot: &mut MaybeUninit<T>, make: impl FnOnce() -> T) {
    // SAFETY: `slot` is valid for one `T` and holds nothing to drop.
    unsafe { slot.as_mut_ptr().write(make()) };
}

/// `Ok(Ok(box))`, `Ok(Err(e))` when `make` fails, `Err(NoMemory)`.
pub(crate) fn try_box_with<T, E: Copy>(
    make: impl FnOnce() -> Result<T, E>,
) -> Result<Result<Box<T>, E>, NoMemory> {
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
    // SAFETY: `value` points at the initialised `T` inside `slot`; `dst` is a
    // separate allocation for a `T`. After the copy `dst` owns the value and
    // `slot` is freed without dropping it (`MaybeUninit` never drops).
    unsafe {
        dst.as_mut_ptr().copy_from_nonoverlapping(value, 1);
        drop(slot);
        Ok(Ok(dst.assume_init()))
    }
}

/// `Ath11k::new`, through a call the optimiser cannot inline into the
/// caller's frame.
pub(crate) fn new_out_of_line<H, T>(hal: H, config: Config) -> Result<Ath11k<H, T>, Ath11kError>
where
    H: airtime_ath11k::Hal,
    T: airtime_sched::Txq<Frame = airtime_ath11k::hal::FrameOf<H>> + airtime_sched::Enqueue,
    airtime_ath11k::hal::FrameOf<H>: airtime_sched::traits::Frame,
{
    let new: fn(H, Config) -> Result<Ath11k<H, T>, Ath11kError> = Ath11k::new;
    core::hint::black_box(new)(hal, config)
}
