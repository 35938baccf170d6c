// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! The panic handler: a Rust panic becomes a kernel `BUG()`.
//!
//! A panic means a broken invariant in the Rust code (an `unwrap` on a bug,
//! an index out of bounds, an infallible allocation that failed). There is no
//! unwinding in the kernel (`panic = "abort"`), so the handler formats the
//! message and location into a stack buffer and gives it to the shim, which
//! prints it with `pr_err` and calls `BUG()`: the kernel prints an oops with
//! the Rust frames and kills the current task, as it does for a C `BUG()`.

#[cfg(not(test))]
#[panic_handler]
fn on_panic(info: &core::panic::PanicInfo<'_>) -> ! {
    use core::fmt::Write as _;

    // 256 bytes on the kernel stack, only on the way to BUG().
    let mut buf = [0u8; 256];
    let mut text = crate::msg::MsgBuf::new(&mut buf);
    // `MsgBuf` never fails: a long message is truncated, not lost.
    let _ = match info.location() {
        Some(at) => write!(text, "{} at {}:{}:{}", info.message(), at.file(), at.line(), at.column()),
        None => write!(text, "{}", info.message()),
    };
    let bytes = text.as_bytes();
    // SAFETY: `bytes` is valid for reads of `bytes.len()` bytes for the whole
    // call (it lives in this frame, which the call never returns to);
    // `airtime_rust_panic` reads exactly that many bytes (`%.*s`) and does not
    // return, as the C `__noreturn` says.
    unsafe { crate::ffi::airtime_rust_panic(bytes.as_ptr().cast(), bytes.len()) };
    // Never reached. `ud2` is how C's `BUG()` ends too: objtool sees the
    // function end here instead of running off its end (see the import).
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `ud2` only raises an invalid-opcode exception; it touches no
    // memory and no stack, and nothing follows it.
    unsafe {
        core::arch::asm!("ud2", options(noreturn, nomem, nostack))
    }
    // The module is x86_64-only; a host build elsewhere only type-checks.
    #[cfg(not(target_arch = "x86_64"))]
    loop {
        core::hint::spin_loop();
    }
}
