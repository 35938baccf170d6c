//! The one place atomics come from (tokio's pattern).
//!
//! Under `cfg(loom)` every atomic maps to loom's model-checked type, so the loom
//! models in `tests/loom_*.rs` run the real scheduler code, not a copy. Nothing
//! else in the crate may import from `core::sync` directly.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
