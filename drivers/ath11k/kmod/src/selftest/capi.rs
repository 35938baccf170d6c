// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! The scenarios driven from C (`airtime_capi_selftest.c`), over a small HAL
//! written in C (TCL rings, MSDU tables, txqs of frames, status sink) and the
//! adapter's C API through the header:
//!
//! - `c-api-roundtrip`: every function once: create, stations, txqs, weights
//!   and limits, wake, completion batches under a NAPI budget, PPDU stats, rx
//!   duration, statistics, the debugfs texts, removal and destroy, and the
//!   error returns of bad arguments;
//! - `c-api-mcast`: a station-less (multicast) txq beside a station's;
//! - `c-api-deferred-work`: a concurrent radio whose driver gave no
//!   `rounds_deferred` op, its deferral forced with nothing in flight and no poll:
//!   the module's own work must send the frames;
//! - `c-api-work-control`: that work backs off when it makes no progress, a new
//!   deferral cuts the backoff short, and `airtime_radio_check_idle()`, destroy,
//!   quiesce (also during a run on another CPU) and resume stop and restart it,
//!   a deferral made between a resume's release and its read included;
//! - `c-api-smp-stress`: a wake kthread and a completion kthread on different
//!   CPUs hammering one radio for a few seconds, with station churn and weight
//!   changes, then conservation, invariant and drain checks;
//! - `c-api-smp-stress-no-op`: the same for 1 s with no `rounds_deferred` op, the
//!   module's rounds work a third context, quiesced and resumed every 100 ms;
//! - `c-api-smp-stress-lost-completion` and `c-api-smp-stress-lost-wake`
//!   (explicit only): the same with one completion, or every wake of the
//!   multicast txq, lost on purpose; the checks must catch each (FAIL);
//! - `c-api-leak-radios` (explicit only): two radios leaked on purpose, their
//!   works pending (a backoff timer armed, a run in progress), for the boot
//!   test's check that module exit stops them.

use core::ffi::c_char;

use super::{Outcome, ensure};
use crate::msg::MsgBuf;

/// Size of the message buffer handed to C: the shim's (`AIRTIME_SELFTEST_MSG_LEN`), so
/// that the stress's RESULT line is not cut short.
const MSG_LEN: usize = 256;

/// `AIRTIME_STRESS_LOSE_COMPLETION`: the simulated firmware loses one
/// completion.
const STRESS_LOSE_COMPLETION: u32 = 1 << 0;
/// `AIRTIME_STRESS_LOSE_WAKE`: the multicast txq gets frames, never a wake.
const STRESS_LOSE_WAKE: u32 = 1 << 1;
/// `AIRTIME_STRESS_GATED_ROUNDS` (not a fault): the radio's rounds are gated.
const STRESS_GATED_ROUNDS: u32 = 1 << 2;
/// `AIRTIME_STRESS_NO_DEFERRED_OP` (not a fault): no `rounds_deferred` op, so the
/// module's rounds work runs the deferrals, quiesced and resumed during the run.
const STRESS_NO_DEFERRED_OP: u32 = 1 << 3;

/// Runs one C test through `call` (given the buffer and its size) and copies
/// its message.
fn run_c(msg: &mut MsgBuf<'_>, call: impl FnOnce(*mut c_char, usize) -> i32) -> Outcome {
    let mut buf = [0u8; MSG_LEN];
    let ret = call(buf.as_mut_ptr().cast::<c_char>(), MSG_LEN);
    let end = buf.iter().position(|b| *b == 0).unwrap_or(0);
    let text = core::str::from_utf8(buf.get(..end).unwrap_or(&[])).unwrap_or("(not UTF-8)");
    ensure!(msg, ret == 0, "{text} ({ret})");
    let _ = core::fmt::Write::write_str(msg, text);
    Ok(())
}

/// `c-api-roundtrip`.
pub(super) fn roundtrip(msg: &mut MsgBuf<'_>) -> Outcome {
    // SAFETY: `run_c` passes a buffer valid for writing `len` bytes and not
    // otherwise used during the call; the C function NUL-terminates within it.
    run_c(msg, |buf, len| unsafe { crate::ffi::airtime_capi_selftest(buf, len) })
}

/// `c-api-mcast`.
pub(super) fn mcast(msg: &mut MsgBuf<'_>) -> Outcome {
    // SAFETY: as in `roundtrip`.
    run_c(msg, |buf, len| unsafe { crate::ffi::airtime_capi_mcast(buf, len) })
}

/// `c-api-deferred-work`.
pub(super) fn deferred_work(msg: &mut MsgBuf<'_>) -> Outcome {
    // SAFETY: as in `roundtrip`; the C side sleeps while it waits, which module init
    // allows.
    run_c(msg, |buf, len| unsafe { crate::ffi::airtime_capi_deferred_work(buf, len) })
}

/// `c-api-work-control`.
pub(super) fn work_control(msg: &mut MsgBuf<'_>) -> Outcome {
    // SAFETY: as in `roundtrip`; the C side sleeps, which module init allows.
    run_c(msg, |buf, len| unsafe { crate::ffi::airtime_capi_work_control(buf, len) })
}

/// `c-api-leak-radios` (explicit only): leaks two radios on purpose, one with
/// its work's backoff timer armed and one with a run in progress, so that the
/// boot test can check that `rmmod` stops both works (`airtime_stop_works()`)
/// before the workqueue and the module's text go away.
pub(super) fn leak_radios(msg: &mut MsgBuf<'_>) -> Outcome {
    // SAFETY: as in `roundtrip`; the C side sleeps, which module init allows.
    run_c(msg, |buf, len| unsafe { crate::ffi::airtime_capi_leak_radios(buf, len) })
}

/// `c-api-smp-stress`.
pub(super) fn smp_stress(msg: &mut MsgBuf<'_>) -> Outcome {
    // SAFETY: as in `roundtrip`; the C side sleeps, which module init allows.
    run_c(msg, |buf, len| unsafe { crate::ffi::airtime_capi_smp_stress(0, buf, len) })
}

/// `c-api-smp-stress-gated`: the same stress with the radio's rounds gated
/// (`AIRTIME_RADIO_GATED_ROUNDS`), each context running the rounds left waiting.
pub(super) fn smp_stress_gated(msg: &mut MsgBuf<'_>) -> Outcome {
    // SAFETY: as in `smp_stress`.
    run_c(msg, |buf, len| unsafe { crate::ffi::airtime_capi_smp_stress(STRESS_GATED_ROUNDS, buf, len) })
}

/// `c-api-smp-stress-no-op`: the same stress (1 s) with concurrent rounds and no
/// `rounds_deferred` op: the module's rounds work is a third context, quiesced and
/// resumed every 100 ms.
pub(super) fn smp_stress_no_op(msg: &mut MsgBuf<'_>) -> Outcome {
    // SAFETY: as in `smp_stress`.
    run_c(msg, |buf, len| unsafe { crate::ffi::airtime_capi_smp_stress(STRESS_NO_DEFERRED_OP, buf, len) })
}

/// `c-api-smp-stress-lost-completion`: proves the stress checks catch a frame
/// that never completes.
pub(super) fn smp_stress_lost_completion(msg: &mut MsgBuf<'_>) -> Outcome {
    // SAFETY: as in `smp_stress`.
    run_c(msg, |buf, len| unsafe { crate::ffi::airtime_capi_smp_stress(STRESS_LOSE_COMPLETION, buf, len) })
}

/// `c-api-smp-stress-lost-wake`: proves the stress checks catch a txq with
/// frames that is never served.
pub(super) fn smp_stress_lost_wake(msg: &mut MsgBuf<'_>) -> Outcome {
    // SAFETY: as in `smp_stress`.
    run_c(msg, |buf, len| unsafe { crate::ffi::airtime_capi_smp_stress(STRESS_LOSE_WAKE, buf, len) })
}
