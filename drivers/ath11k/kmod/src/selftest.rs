// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! The self-test the module runs at load: a table of named scenarios.
//!
//! Each [`Scenario`] is a function that checks one behaviour inside the real
//! kernel and returns [`Outcome`]: `Ok(())` for pass, or `Err(Failed)` after
//! writing what went wrong into the message buffer (the `ensure!` macro does
//! both). The shim prints `airtime: PASS <name>` or
//! `airtime: FAIL <name>: <message>` for each and refuses to load the module
//! on any failure; `boot-test.sh` checks those lines in a booted kernel.
//!
//! The scheduling scenarios (`adapter`) run the real code: the ath11k adapter
//! over its simulated HAL with the core's FQ-CoDel txqs and scheduler. On
//! success a scenario may leave its measured numbers in the message; the shim
//! prints them as `airtime: RESULT <name>: <numbers>`. `c-api-roundtrip` is
//! driven from C (`airtime_capi_selftest.c`) through the header.
//!
//! Adding a scenario: write a
//! `fn(&mut MsgBuf<'_>) -> Outcome`, add a line to [`SCENARIOS`], and add its
//! name to `EXPECTED_PASS` in `boot-test.sh`, which fails on any difference
//! between the two lists. Scenarios must be deterministic, integer-only, keep
//! stack frames small (the kernel stack is 16 KiB) and finish in a few
//! milliseconds under software emulation; `c-api-smp-stress` alone runs for
//! seconds, by design (two kthreads on one radio, timed).
//!
//! Explicit-only scenarios exist to prove the harness can fail:
//! `selftest-must-fail` (a FAIL refuses the load), `selftest-must-panic`
//! (a panic becomes a clean `BUG()` oops with the Rust location), and
//! `c-api-smp-stress-lost-completion` / `-lost-wake` (the stress test's
//! checks catch a frame that never completes and a txq never served);
//! `c-api-leak-radios` leaks two radios with their works pending, so that the
//! boot test can check that `rmmod` stops them (`airtime_stop_works()`).

use core::ffi::CStr;

use crate::msg::MsgBuf;

mod adapter;
mod arith;
mod capi;
mod heap;

/// Checks `cond`; when it is false, writes the formatted message into `msg`
/// and returns `Err(Failed)` from the enclosing scenario.
macro_rules! ensure {
    ($msg:expr, $cond:expr, $($fmt:tt)+) => {
        if !$cond {
            // MsgBuf never fails; a long message is truncated.
            let _ = ::core::fmt::Write::write_fmt($msg, ::core::format_args!($($fmt)+));
            return Err($crate::selftest::Failed);
        }
    };
}
pub(crate) use ensure;

/// Return value of [`airtime_selftest_run`](crate::entry::airtime_selftest_run)
/// for a passing scenario. C: `AIRTIME_SELFTEST_PASS`.
pub const PASS: i32 = 0;
/// Return value for a failing scenario. C: `AIRTIME_SELFTEST_FAIL`.
pub const FAIL: i32 = 1;
/// Scenario flag: skipped by the default `all` run, runs only when selected
/// by name or index. C: `AIRTIME_SELFTEST_EXPLICIT_ONLY`.
pub const EXPLICIT_ONLY: u32 = 1 << 0;

/// Marker error: the scenario failed and its message says why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failed;

/// What a scenario body returns.
pub type Outcome = Result<(), Failed>;

/// The verdict of one scenario run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every check held.
    Pass,
    /// A check failed; the message says which and why.
    Fail,
}

/// One named self-test scenario.
pub struct Scenario {
    /// Name printed in the PASS/FAIL line and accepted by `scenario=`.
    pub name: &'static CStr,
    /// `EXPLICIT_ONLY` or 0.
    pub flags: u32,
    body: fn(&mut MsgBuf<'_>) -> Outcome,
}

impl Scenario {
    /// A scenario that is part of the default `all` run.
    pub const fn new(name: &'static CStr, body: fn(&mut MsgBuf<'_>) -> Outcome) -> Self {
        Self { name, flags: 0, body }
    }

    /// A scenario that runs only when selected by name or index.
    pub const fn explicit_only(name: &'static CStr, body: fn(&mut MsgBuf<'_>) -> Outcome) -> Self {
        Self { name, flags: EXPLICIT_ONLY, body }
    }

    /// Runs the scenario; on failure `msg` holds the reason.
    pub fn run(&self, msg: &mut MsgBuf<'_>) -> Verdict {
        match (self.body)(msg) {
            Ok(()) => Verdict::Pass,
            Err(Failed) => Verdict::Fail,
        }
    }
}

/// Every scenario, in the order `all` runs them. Indices are positions here.
pub static SCENARIOS: &[Scenario] = &[
    Scenario::new(c"heap-vec-box", heap::vec_and_box),
    Scenario::new(c"heap-btreemap", heap::btreemap),
    Scenario::new(c"heap-alignment", heap::alignment),
    Scenario::new(c"heap-failure-is-reported", heap::failure_is_reported),
    Scenario::new(c"int-arithmetic", arith::integer_arithmetic),
    Scenario::new(c"aql-pending-returns-to-zero", adapter::aql_pending_returns_to_zero),
    Scenario::new(c"aql-limit-bounds-inflight", adapter::aql_limit_bounds_inflight),
    Scenario::new(c"weights-reach-air-with-no-pushback", adapter::weights_reach_air_with_no_pushback),
    Scenario::new(c"napi-budget-bounds-a-pass", adapter::napi_budget_bounds_a_pass),
    Scenario::new(c"ring-full-loses-no-frame", adapter::ring_full_loses_no_frame),
    Scenario::new(c"round-fix-no-skip", adapter::round_fix_no_skip),
    Scenario::new(c"debugfs-text", adapter::debugfs_text),
    Scenario::new(c"multicast-budget-bounds-inflight", adapter::multicast_budget_bounds_inflight),
    Scenario::new(c"departed-station-drains-once", adapter::departed_station_drains_once),
    Scenario::new(c"c-api-roundtrip", capi::roundtrip),
    Scenario::new(c"c-api-mcast", capi::mcast),
    Scenario::new(c"c-api-deferred-work", capi::deferred_work),
    Scenario::new(c"c-api-work-control", capi::work_control),
    Scenario::new(c"c-api-smp-stress", capi::smp_stress),
    Scenario::new(c"c-api-smp-stress-gated", capi::smp_stress_gated),
    Scenario::new(c"c-api-smp-stress-no-op", capi::smp_stress_no_op),
    Scenario::explicit_only(c"selftest-must-fail", must_fail),
    Scenario::explicit_only(c"selftest-must-panic", must_panic),
    Scenario::explicit_only(c"c-api-smp-stress-lost-completion", capi::smp_stress_lost_completion),
    Scenario::explicit_only(c"c-api-smp-stress-lost-wake", capi::smp_stress_lost_wake),
    Scenario::explicit_only(c"c-api-leak-radios", capi::leak_radios),
];

/// Always panics, with an out-of-bounds index. It exists so the boot test
/// can prove that a Rust panic reaches the panic handler, which prints the
/// message with its source location and calls `BUG()` (an oops naming the
/// Rust frames). It oopses the loading task, so the boot test runs it last.
fn must_panic(msg: &mut MsgBuf<'_>) -> Outcome {
    let empty: alloc::vec::Vec<u32> = alloc::vec::Vec::new();
    let index = core::hint::black_box(3);
    ensure!(msg, empty[index] == 0, "indexing an empty Vec returned");
    Ok(())
}

/// Always fails. It exists so the boot test can prove that a FAIL line makes
/// the module refuse to load (`scenario=selftest-must-fail`).
fn must_fail(msg: &mut MsgBuf<'_>) -> Outcome {
    ensure!(msg, false, "deliberate failure (proves that a failing scenario refuses the load)");
    Ok(())
}
