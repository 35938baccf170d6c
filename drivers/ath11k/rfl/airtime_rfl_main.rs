// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! airtime_rfl: a Rust-for-Linux module that links the workspace's crates
//! (`airtime-est`, `airtime-sched`, `airtime-ath11k`) directly, with no C API in
//! between, and runs self-test scenarios at load.
//!
//! Built by Kbuild (see `Kbuild` and `ci.sh`), not by cargo. Every scenario
//! prints `airtime_rfl: PASS <name>` or `airtime_rfl: FAIL <name>: <why>`; any
//! failure refuses the load. The `scenario` parameter selects one scenario by
//! index (`-1`, the default, runs every scenario that is not explicit-only).

use kernel::prelude::*;

// The crates' `alloc` is the toolchain's, compiled by Kbuild with the
// kernel's flags (`--extern alloc`); `kalloc` routes it to the kernel's
// allocator.

// The heap-construction helpers the shared scenarios call (`crate::boxed::…`):
// the C-API module's file, compiled here too, not a copy.
#[path = "kmod-src/boxed.rs"]
#[allow(unreachable_pub)]
mod boxed;
mod kalloc;
#[path = "kmod-src/msg.rs"]
#[allow(dead_code, missing_docs, unreachable_pub)]
mod msg;
mod selftest;
mod stress;

module! {
    type: AirtimeRfl,
    name: "airtime_rfl",
    authors: ["The airtime developers"],
    description: "airtime crates in a Rust-for-Linux module: load-time self-test",
    license: "Dual MIT/GPL",
    params: {
        scenario: i32 {
            default: -1,
            description: "Scenario index to run (-1: every scenario that is not explicit-only)",
        },
    },
}

struct AirtimeRfl;

impl kernel::Module for AirtimeRfl {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let which = *module_parameters::scenario.value_ref();
        selftest::run(which)?;
        Ok(AirtimeRfl)
    }
}

impl Drop for AirtimeRfl {
    fn drop(&mut self) {
        pr_info!("unloaded\n");
    }
}
