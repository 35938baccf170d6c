// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! The two unwinding symbols that prebuilt library code still names.
//!
//! The module is built with `panic = "abort"`, but the standard library's
//! prebuilt `alloc` and `core` are compiled for unwinding: after fat LTO a
//! few of their functions (e.g. `alloc::fmt::format`) keep landing pads that
//! call `_Unwind_Resume`, and the unwind tables name `rust_eh_personality`.
//! Both are dead code here, because unwinding never starts: the panic
//! handler ends in the kernel's `BUG()`. They are defined so that the Rust
//! object needs nothing from the kernel beyond the shim and `mem*`; if one
//! ever runs, that is a bug, reported as a panic.

use core::ffi::c_void;

/// Resumes unwinding after a landing pad; unreachable with
/// `panic = "abort"`.
#[unsafe(no_mangle)]
#[allow(non_snake_case)]
pub extern "C" fn _Unwind_Resume(_exception: *mut c_void) -> ! {
    panic!("_Unwind_Resume reached: unwinding cannot happen in the module");
}

/// The personality routine the unwind tables name; unreachable with
/// `panic = "abort"` (build.sh also strips the unwind tables).
#[unsafe(no_mangle)]
pub extern "C" fn rust_eh_personality() -> ! {
    panic!("rust_eh_personality reached: unwinding cannot happen in the module");
}
