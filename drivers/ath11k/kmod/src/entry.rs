// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! The `extern "C"` entry points declared in `include/airtime_ath11k.h`.
//!
//! Each one is a thin adapter: it validates the raw pointers it is given,
//! calls safe Rust, and turns the Rust result into a C return value
//! (non-negative on success, `-errno` on error) here and nowhere else. The
//! locking context each expects is stated at the function and in the header.
//! None of them sleeps, takes a lock or keeps a pointer after returning.

use core::ffi::{CStr, c_char};

use crate::errno::{Errno, result_to_c};
use crate::msg::MsgBuf;
use crate::selftest::{self, Verdict};

/// `"airtime-ath11k-kmod <version>"`, NUL-terminated.
const VERSION: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_NAME"), " ", env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(version) => version,
        Err(_) => panic!("the version string has an interior NUL"),
    };

/// Description of one self-test scenario, filled by
/// [`airtime_selftest_info`]. C: `struct airtime_selftest_info`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SelftestInfo {
    /// Static NUL-terminated name, e.g. `"debugfs-text"`.
    pub name: *const c_char,
    /// `AIRTIME_SELFTEST_*` flags ([`selftest::EXPLICIT_ONLY`]).
    pub flags: u32,
}

// The C header asserts the same size; a mismatch would be silent memory
// corruption across the boundary.
const _: () = assert!(core::mem::size_of::<SelftestInfo>() == 16);

/// The version of the Rust object, a static NUL-terminated string.
///
/// Context: any. Never fails.
#[unsafe(no_mangle)]
pub extern "C" fn airtime_version() -> *const c_char {
    VERSION.as_ptr()
}

/// Number of self-test scenarios; valid indices are `0..count`.
///
/// Context: any. Never fails.
#[unsafe(no_mangle)]
pub extern "C" fn airtime_selftest_count() -> u32 {
    // The table is a short static list; saturating is only for form.
    u32::try_from(selftest::SCENARIOS.len()).unwrap_or(u32::MAX)
}

/// Fills `*info` with the name and flags of scenario `index`.
///
/// Returns 0, `-ENOENT` when `index` is out of range, or `-EFAULT` when
/// `info` is null (then nothing is written).
///
/// Context: any. Never sleeps.
///
/// # Safety
///
/// `info` must be null or valid for writing one `struct airtime_selftest_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_selftest_info(index: u32, info: *mut SelftestInfo) -> i32 {
    // SAFETY: the caller guarantees `info` is null or valid for one write;
    // `as_mut` returns None for null.
    let Some(info) = (unsafe { info.as_mut() }) else {
        return Errno::EFAULT.to_c();
    };
    result_to_c(scenario(index).map(|s| {
        *info = SelftestInfo { name: s.name.as_ptr(), flags: s.flags };
        0
    }))
}

/// Runs self-test scenario `index`; writes its message, NUL-terminated and
/// truncated to `len` bytes, into `msg`.
///
/// Returns `AIRTIME_SELFTEST_PASS` (0) or `AIRTIME_SELFTEST_FAIL` (1), with a
/// message saying why in `msg` (on a pass, `msg` holds the scenario's measured
/// numbers, or nothing); `-ENOENT` when `index` is out of range;
/// `-EFAULT` when `msg` is null and `len` is not 0. `len == 0` discards the
/// message.
///
/// Context: process context, no spinlock held (the scenarios allocate with
/// `GFP_ATOMIC` but in a create's scope, and most run for milliseconds). Must
/// not run concurrently with itself: the heap scenarios count live allocations.
///
/// # Safety
///
/// `msg` must be null or valid for writing `len` bytes, and not accessed by
/// anyone else during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_selftest_run(index: u32, msg: *mut c_char, len: usize) -> i32 {
    let buf: &mut [u8] = if len == 0 {
        &mut []
    } else if msg.is_null() {
        return Errno::EFAULT.to_c();
    } else {
        // SAFETY: non-null, and the caller guarantees `msg` is valid for
        // writes of `len` bytes and not aliased during the call; u8 and
        // c_char have the same size and alignment.
        unsafe { core::slice::from_raw_parts_mut(msg.cast::<u8>(), len) }
    };
    let mut text = MsgBuf::new(buf);
    result_to_c(scenario(index).map(|s| match s.run(&mut text) {
        Verdict::Pass => selftest::PASS,
        Verdict::Fail => selftest::FAIL,
    }))
}

fn scenario(index: u32) -> Result<&'static selftest::Scenario, Errno> {
    usize::try_from(index).ok().and_then(|i| selftest::SCENARIOS.get(i)).ok_or(Errno::ENOENT)
}
