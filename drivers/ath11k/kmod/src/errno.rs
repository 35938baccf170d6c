// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! Linux errno values, used only where a Rust result crosses into C.
//!
//! The numbers are the kernel's `include/uapi/asm-generic/errno-base.h`
//! values, which are the same on every architecture Linux supports.

/// A positive Linux errno; [`Errno::to_c`] gives the negative return value
/// kernel functions use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Errno(i32);

impl Errno {
    /// `ENOENT`: no such entry (e.g. a self-test index out of range).
    pub const ENOENT: Self = Self(2);
    /// `ENOMEM`: an allocation failed.
    pub const ENOMEM: Self = Self(12);
    /// `EFAULT`: a required pointer was null.
    pub const EFAULT: Self = Self(14);
    /// `EINVAL`: an argument is out of its domain.
    pub const EINVAL: Self = Self(22);

    /// The value a C entry point returns for this error: `-errno`.
    #[must_use]
    pub const fn to_c(self) -> i32 {
        -self.0
    }
}

/// Turns the result of an entry point into its C return value: the
/// non-negative success value, or `-errno`.
#[must_use]
pub fn result_to_c(result: Result<i32, Errno>) -> i32 {
    match result {
        Ok(value) => value,
        Err(errno) => errno.to_c(),
    }
}
