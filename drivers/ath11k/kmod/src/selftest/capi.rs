// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! The `c-api-roundtrip` scenario: driven from C. The shim's C self-test
//! (`airtime_capi_selftest.c`) implements a small HAL in C (TCL rings, MSDU
//! tables, txqs of frames, status sink), and calls every function of the
//! adapter's C API through the header: create, stations, txqs, weights and
//! limits, wake, completion batches under a NAPI budget, PPDU stats, rx
//! duration, statistics, the debugfs texts, removal and destroy, and the
//! error returns of bad arguments.

use core::ffi::c_char;

use super::{Outcome, ensure};
use crate::msg::MsgBuf;

/// Size of the message buffer handed to C.
const MSG_LEN: usize = 200;

/// Runs the C side and copies its message.
pub(super) fn roundtrip(msg: &mut MsgBuf<'_>) -> Outcome {
    let mut buf = [0u8; MSG_LEN];
    // SAFETY: `buf` is valid for writing `MSG_LEN` bytes and not otherwise
    // used during the call; the C function NUL-terminates within it.
    let ret = unsafe { crate::ffi::airtime_capi_selftest(buf.as_mut_ptr().cast::<c_char>(), MSG_LEN) };
    let end = buf.iter().position(|b| *b == 0).unwrap_or(0);
    let text = core::str::from_utf8(buf.get(..end).unwrap_or(&[])).unwrap_or("(not UTF-8)");
    ensure!(msg, ret == 0, "{text} ({ret})");
    let _ = core::fmt::Write::write_str(msg, text);
    Ok(())
}
