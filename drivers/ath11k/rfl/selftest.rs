// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! The scenario table. The scheduling scenarios are the C-API module's own
//! (`drivers/ath11k/kmod/src/selftest/adapter.rs`, shared, not copied): the
//! ath11k adapter over its simulated HAL with the core's FQ-CoDel txqs, here
//! called from a Rust-for-Linux module with no C API in between.

use alloc::boxed::Box;
use alloc::vec::Vec;

use kernel::prelude::*;

use crate::msg::MsgBuf;

#[path = "kmod-src/selftest/adapter.rs"]
mod adapter;

/// Checks `cond`; when false, writes the message and fails the scenario.
macro_rules! ensure {
    ($msg:expr, $cond:expr, $($fmt:tt)+) => {
        if !$cond {
            let _ = ::core::fmt::Write::write_fmt($msg, ::core::format_args!($($fmt)+));
            return Err($crate::selftest::Failed);
        }
    };
}
pub(crate) use ensure;

/// The scenario failed; its message says why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Failed;

/// What a scenario returns.
pub(crate) type Outcome = Result<(), Failed>;

struct Scenario {
    name: &'static str,
    explicit_only: bool,
    body: fn(&mut MsgBuf<'_>) -> Outcome,
}

const fn s(name: &'static str, body: fn(&mut MsgBuf<'_>) -> Outcome) -> Scenario {
    Scenario {
        name,
        explicit_only: false,
        body,
    }
}

const fn x(name: &'static str, body: fn(&mut MsgBuf<'_>) -> Outcome) -> Scenario {
    Scenario {
        name,
        explicit_only: true,
        body,
    }
}

/// Every scenario; `scenario=N` selects index N. Explicit-only ones last.
// One entry per line: boot-test.sh reads the names and indices from here.
#[rustfmt::skip]
static SCENARIOS: &[Scenario] = &[
    s("heap-vec-box", heap_vec_box),
    s("int-checked-arithmetic", checked_arithmetic),
    s("aql-pending-returns-to-zero", adapter::aql_pending_returns_to_zero),
    s("aql-limit-bounds-inflight", adapter::aql_limit_bounds_inflight),
    s("weights-reach-air-with-no-pushback", adapter::weights_reach_air_with_no_pushback),
    s("napi-budget-bounds-a-pass", adapter::napi_budget_bounds_a_pass),
    s("ring-full-loses-no-frame", adapter::ring_full_loses_no_frame),
    s("round-fix-no-skip", adapter::round_fix_no_skip),
    s("debugfs-text", adapter::debugfs_text),
    s("multicast-budget-bounds-inflight", adapter::multicast_budget_bounds_inflight),
    s("departed-station-drains-once", adapter::departed_station_drains_once),
    s("two-context-stress", crate::stress::two_context_stress),
    x("selftest-must-fail", must_fail),
    x("selftest-must-panic", must_panic),
    x("two-context-stress-lost-completion", crate::stress::two_context_stress_lost_completion),
];

/// Runs scenario `which`, or every default one for a negative `which`.
/// Prints a PASS/FAIL line each; `EINVAL` on any failure refuses the load.
pub(crate) fn run(which: i32) -> Result {
    let mut buf = KVec::<u8>::with_capacity(512, GFP_KERNEL)?;
    buf.resize(512, 0, GFP_KERNEL)?;
    let (mut ran, mut failed) = (0u32, 0u32);
    for (i, sc) in SCENARIOS.iter().enumerate() {
        let selected = if which < 0 {
            !sc.explicit_only
        } else {
            usize::try_from(which) == Ok(i)
        };
        if !selected {
            continue;
        }
        ran += 1;
        let mut msg = MsgBuf::new(&mut buf);
        match (sc.body)(&mut msg) {
            Ok(()) => {
                pr_info!("PASS {}\n", sc.name);
                if !msg.as_str().is_empty() {
                    pr_info!("RESULT {}: {}\n", sc.name, msg.as_str());
                }
            }
            Err(Failed) => {
                failed += 1;
                pr_err!("FAIL {}: {}\n", sc.name, msg.as_str());
            }
        }
    }
    if ran == 0 {
        pr_err!("unknown scenario {}\n", which);
        return Err(EINVAL);
    }
    if failed > 0 {
        pr_err!("{} of {} scenarios failed: refusing to load\n", failed, ran);
        return Err(EINVAL);
    }
    pr_info!("all {} scenarios passed\n", ran);
    Ok(())
}

/// The crates' `alloc` on the kernel's allocator: a `Vec` that grows
/// (realloc), a `Box`, zeroed memory, and everything freed.
fn heap_vec_box(msg: &mut MsgBuf<'_>) -> Outcome {
    let mut v: Vec<u64> = Vec::new();
    for i in 0..1000u64 {
        v.push(i * 3);
    }
    let sum: u64 = v.iter().sum();
    ensure!(msg, sum == 3 * 999 * 1000 / 2, "sum {sum}");
    let b = Box::new([7u32; 64]);
    ensure!(msg, b.iter().all(|&x| x == 7), "box content");
    let z = alloc::vec![0u8; 4096];
    ensure!(msg, z.iter().all(|&x| x == 0), "zeroed memory is not zero");
    Ok(())
}

/// Checked and saturating arithmetic at the edges (the crates' input paths
/// rely on them: with `CONFIG_RUST_OVERFLOW_CHECKS=y` a plain overflow BUG()s).
fn checked_arithmetic(msg: &mut MsgBuf<'_>) -> Outcome {
    let big = core::hint::black_box(u32::MAX);
    ensure!(
        msg,
        big.checked_add(1).is_none(),
        "checked_add did not see the overflow"
    );
    ensure!(msg, big.saturating_add(1) == u32::MAX, "saturating_add");
    ensure!(msg, big.wrapping_add(1) == 0, "wrapping_add");
    Ok(())
}

/// Always fails: proves that a failing scenario refuses the load.
fn must_fail(msg: &mut MsgBuf<'_>) -> Outcome {
    ensure!(
        msg,
        false,
        "deliberate failure (proves that a failing scenario refuses the load)"
    );
    Ok(())
}

/// Always panics, by an integer overflow: proves both that this code runs
/// with overflow checks on and that a Rust panic reaches the kernel's panic
/// handler, which prints it with its location and calls BUG().
fn must_panic(msg: &mut MsgBuf<'_>) -> Outcome {
    let big = core::hint::black_box(u32::MAX);
    let sum = big + core::hint::black_box(1);
    ensure!(msg, sum == 0, "an overflowing add returned {sum}");
    Ok(())
}
