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
    /// `EEXIST`: the entry exists already (a peer id in use).
    pub const EEXIST: Self = Self(17);
    /// `EINVAL`: an argument is out of its domain.
    pub const EINVAL: Self = Self(22);
    /// `ENOSPC`: no room (a table full, a text buffer too small).
    pub const ENOSPC: Self = Self(28);
    /// `EIO`: any other failure.
    pub const EIO: Self = Self(5);
    /// `EUCLEAN`: an internal invariant does not hold (the kernel's "structure
    /// needs cleaning", as filesystems report corruption).
    pub const EUCLEAN: Self = Self(117);

    /// The errno of a negative kernel return value such as
    /// `Ath11kError::errno()`; anything not negative becomes `EIO`.
    #[must_use]
    pub const fn from_negative(ret: i32) -> Self {
        // -4095..=-1: the negation cannot wrap.
        if ret < 0 && ret > -4096 { Self(ret.wrapping_neg()) } else { Self::EIO }
    }

    /// The value a C entry point returns for this error: `-errno`.
    #[must_use]
    pub const fn to_c(self) -> i32 {
        // An errno is 1..=4095 (the constants, `from_negative`): no wrap.
        self.0.wrapping_neg()
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
