// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! The Rust half of the `airtime_ath11k` Linux kernel module.
//!
//! This crate is a `#![no_std]` static library, built for
//! `x86_64-unknown-none` with `core` and `alloc` from source and the branch
//! mitigations of the target kernel. `build.sh` links it with `ld -r` into
//! one relocatable object, runs the kernel's objtool on it (ORC unwind data,
//! thunk sites), checks that object (no x87/SSE/AVX instructions, only
//! relocations the module loader handles, only known undefined symbols, no
//! bare returns or indirect branches), and Kbuild links it with the C shim
//! (`airtime_shim.c`) into `airtime_ath11k.ko`.
//!
//! Layers, from the kernel down:
//!
//! - [`entry`]: the `extern "C"` entry points declared in
//!   `include/airtime_ath11k.h`. They are thin: they check raw pointers,
//!   call safe Rust, and turn a Rust `Result` into a negative errno at the
//!   boundary and nowhere else.
//! - [`api`]: the adapter's C API (`struct airtime_radio`), one function per
//!   method of `airtime_ath11k::Ath11k`, over [`chal`], the HAL whose roles
//!   are C callbacks (`struct airtime_hal_ops`); [`boxed`] builds the
//!   adapter straight on the heap (shared with the Rust-for-Linux module).
//! - [`selftest`]: the table of named self-test scenarios the module runs at
//!   load. Each scenario returns pass or fail with a message.
//! - [`kalloc`]: the `#[global_allocator]`, Rust's heap over the shim's
//!   `kmalloc`/`krealloc`/`kfree` wrappers (`GFP_ATOMIC`, `GFP_KERNEL` at
//!   create: see there why).
//! - `panic`: the `#[panic_handler]`, which formats the panic message and
//!   hands it to the shim, which prints it and calls `BUG()`.
//! - [`ffi`]: the functions the C shim provides to Rust.
//! - [`msg`] and [`errno`]: a bounded, always NUL-terminated message writer
//!   for C buffers, and the errno values used at the boundary.
//!
//! Everything here is integer-only (`clippy::float_arithmetic` is denied):
//! the kernel does not save FPU state around kernel code, so the target has
//! no float registers, and a float would be emulated by compiler_builtins'
//! soft-float routines, slowly.

#![no_std]
#![deny(clippy::float_arithmetic)]
#![deny(clippy::undocumented_unsafe_blocks)]
// As in the crates it links: run-time code may not index unchecked, do arithmetic that
// can overflow, unwrap, or call a panicking macro; the two modules below say why they
// may. An overflow wraps silently in this module's release build, and is a BUG() in the
// Rust-for-Linux module, which compiles some of these sources with overflow checks on.
#![cfg_attr(
    not(test),
    deny(
        clippy::arithmetic_side_effects,
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]

extern crate alloc;

pub mod api;
pub mod boxed;
pub mod chal;
pub mod entry;
pub mod errno;
pub mod ffi;
pub mod kalloc;
pub mod msg;
mod panic;
// Scenarios over fixed-size data and hand-picked values, and one that must panic (it
// proves the panic handler). An overflow in a scenario's own arithmetic is a bug of the
// scenario, which its checks report as a wrong value (or a BUG(), with overflow checks).
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub mod selftest;
