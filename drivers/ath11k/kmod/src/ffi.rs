// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! Functions the C shim (`airtime_shim.c`) provides to Rust.
//!
//! These are the only undefined symbols the Rust object may have, besides
//! `memcpy`, `memmove`, `memset`, `memcmp` and `bcmp` (which the kernel
//! exports); `build.sh` fails the build on any other. Their C declarations,
//! with kernel-doc, are in `include/airtime_ath11k.h`.

use core::ffi::{c_char, c_void};

/// Hold bit of [`airtime_rounds_work_hold`]: `airtime_radio_quiesce()`.
pub const WORK_QUIESCED: u32 = 1 << 0;
/// Hold bit: `airtime_radio_check_idle()` while it runs.
pub const WORK_CHECKING: u32 = 1 << 1;
/// Hold bit: `airtime_radio_destroy()`, for good.
pub const WORK_DESTROYED: u32 = 1 << 2;

unsafe extern "C" {
    /// `kmalloc(size, GFP_ATOMIC | __GFP_NOWARN)`, or `GFP_KERNEL` for the
    /// task between [`airtime_alloc_may_sleep_begin`] and its end.
    ///
    /// Returns null on failure. The result is aligned to
    /// [`KMALLOC_MIN_ALIGN`](crate::kalloc::KMALLOC_MIN_ALIGN), and to `size`
    /// when `size` is a power of two.
    pub fn airtime_kmalloc(size: usize) -> *mut c_void;

    /// `kzalloc()` with [`airtime_kmalloc`]'s flags: like it,
    /// zero-filled.
    pub fn airtime_kzalloc(size: usize) -> *mut c_void;

    /// `krealloc(ptr, size, ...)` with [`airtime_kmalloc`]'s flags.
    ///
    /// On failure returns null and leaves `ptr` allocated and unchanged.
    pub fn airtime_krealloc(ptr: *mut c_void, size: usize) -> *mut c_void;

    /// Until [`airtime_alloc_may_sleep_end`], this task's allocations (where it
    /// could sleep) use `GFP_KERNEL`: true if this call began the mode, false
    /// if the task already has it (nested) or no slot is free. Process context.
    pub fn airtime_alloc_may_sleep_begin() -> bool;

    /// Ends what [`airtime_alloc_may_sleep_begin`] returning true began; by
    /// the task that began.
    pub fn airtime_alloc_may_sleep_end();

    /// `kfree(ptr)`; `ptr` may be null.
    pub fn airtime_kfree(ptr: *mut c_void);

    /// A radio's rounds work (`struct airtime_rounds_work`), allocated and
    /// initialised, not yet bound to a radio; null when out of memory. In
    /// [`airtime_radio_create`](crate::api::airtime_radio_create)'s context (atomic
    /// if its caller cannot sleep: the list lock is a spinlock).
    pub fn airtime_rounds_work_alloc() -> *mut c_void;

    /// Names the radio `work` serves: its runs call
    /// [`airtime_rounds_work_run`](crate::api::airtime_rounds_work_run)`(radio, ..)`. Once,
    /// before the radio is handed to the driver.
    pub fn airtime_rounds_work_bind(work: *mut c_void, radio: *mut c_void);

    /// A new deferral: queues a bound work with no delay (`mod_delayed_work(.., 0)` if
    /// its timer is armed, else `queue_delayed_work(.., 0)`) unless a hold is set
    /// (quiesced: the deferral waits in `airtime_rounds_waiting()`); warns once if the
    /// radio is being destroyed. Any context but hard IRQ and NMI.
    pub fn airtime_rounds_work_kick(work: *mut c_void);

    /// Sets the hold bits `why` ([`WORK_QUIESCED`], [`WORK_CHECKING`],
    /// [`WORK_DESTROYED`]), then `cancel_delayed_work_sync()`: on return no run is
    /// queued or running, and none is queued while a bit is set. Process context, may
    /// sleep.
    pub fn airtime_rounds_work_hold(work: *mut c_void, why: u32);

    /// Clears the hold bits `why`; if no bit is left, then reads
    /// [`airtime_rounds_waiting`](crate::api::airtime_rounds_waiting) and kicks the work
    /// if rounds wait (in that order: a deferral while held only marked its ACs, one
    /// after the release kicks by itself). Process context, serialised with the
    /// work's other holds and releases.
    pub fn airtime_rounds_work_release(work: *mut c_void, why: u32);

    /// `kfree()` of a destroyed (held for good) or never bound work (off the list under
    /// a spinlock; no sleep). Process context, or a failed create's (maybe atomic).
    pub fn airtime_rounds_work_free(work: *mut c_void);

    /// A radio was created (the module's count of live radios, checked at unload).
    pub fn airtime_radio_created();

    /// A radio's destroy begins: `might_sleep()`, one live radio fewer.
    pub fn airtime_radio_destroying();

    /// `might_sleep()`: for the calls that may sleep only when the radio has the
    /// module's rounds work (`airtime_radio_quiesce()`, `airtime_radio_check_idle()`),
    /// so that a caller in atomic context is reported for every radio.
    pub fn airtime_might_sleep();

    /// Prints `len` bytes at `msg` with `pr_err` and calls `BUG()`.
    ///
    /// Never returns (`__noreturn` on the C side), but is declared here as
    /// returning: the panic handler then ends in its own `ud2` after the
    /// call. With `-> !` the call would be the function's last instruction,
    /// and objtool, which cannot know that a function outside the object
    /// does not return, would see the code run off its end.
    pub fn airtime_rust_panic(msg: *const c_char, len: usize);

    /// The C self-test of the adapter's C API (`airtime_capi_selftest.c`):
    /// 0 on success, `-errno` or 1 on failure; writes a NUL-terminated message
    /// (its numbers on success, the failed check otherwise) into `msg[..len]`.
    pub fn airtime_capi_selftest(msg: *mut c_char, len: usize) -> i32;

    /// The C self-test of station-less (multicast) txqs
    /// (`airtime_capi_selftest.c`): as [`airtime_capi_selftest`].
    pub fn airtime_capi_mcast(msg: *mut c_char, len: usize) -> i32;

    /// The C self-test of a concurrent radio's deferral without the `rounds_deferred`
    /// op, run by the module's own work (`airtime_capi_selftest.c`): as
    /// [`airtime_capi_selftest`]. Sleeps (up to 5 s) while it waits for the work.
    pub fn airtime_capi_deferred_work(msg: *mut c_char, len: usize) -> i32;

    /// The C self-test of stopping, backing off and restarting the module's rounds work
    /// (`airtime_capi_selftest.c`): as [`airtime_capi_selftest`]. Sleeps (about a second).
    pub fn airtime_capi_work_control(msg: *mut c_char, len: usize) -> i32;

    /// Leaks two radios with their rounds works pending (a backoff timer armed,
    /// a run in progress), for the boot test's check of module exit
    /// (`airtime_capi_selftest.c`): as [`airtime_capi_selftest`]. Sleeps.
    pub fn airtime_capi_leak_radios(msg: *mut c_char, len: usize) -> i32;

    /// The SMP stress self-test (`airtime_capi_selftest.c`): two kthreads on
    /// one radio for a few seconds; `flags` are `AIRTIME_STRESS_*` faults that
    /// must make it fail. Sleeps. As [`airtime_capi_selftest`] otherwise.
    pub fn airtime_capi_smp_stress(flags: u32, msg: *mut c_char, len: usize) -> i32;
}
