//! Deliberately weakened variants of the lock-free code, compiled into loom builds only,
//! to prove that each loom model can fail: CI runs a model with `AIRTIME_WEAKENED=<name>`
//! in the environment and requires the model's oracle to catch the fault.
//!
//! The variant is chosen at run time, not by a cfg, so that one loom build of the crate
//! and its tests serves every variant (a cfg per variant rebuilt them each time: about
//! ten seconds a variant, a quarter of an hour of CI). Outside `cfg(loom)` [`weakened!`]
//! is the constant `false`, so normal builds contain none of it.
//!
//! Every name a site uses must be in [`VARIANTS`] (checked when the crate compiles), and
//! an `AIRTIME_WEAKENED` that names none of them stops the test process without a
//! panic, so that a typo in CI is never mistaken for a model catching the fault.

/// Every variant's name.
#[cfg_attr(
    not(loom),
    allow(
        dead_code,
        reason = "used by weakened!'s const assertion, which the kernel's rustc (1.85) does not count as a use"
    )
)]
pub(crate) const VARIANTS: &[&str] = &[
    "topup",
    "charge_order",
    "wake_serving",
    "release_store",
    "drained_ignores_open",
    "ac_clamp",
    "wake_plain_load",
    "ring_claim_first",
    "listed_torn",
    "remove_ac_late",
    "limits_split",
    "round_end_this_only",
    "flush_live_only",
    "threshold_own_ac",
    "drop_no_flush",
    "drop_unscheduled",
    "station_limits_split",
    "weight_reread",
    "l3_round_only",
    "boost_rest_skipped",
    "may_transmit_serving",
    "reuse_no_orphan",
    "kept_never_retired",
    "enqueue_unheld",
    "intake_no_takeback",
    "retire_serving",
    "topup_stale_read",
    "take_any_generation",
    "may_transmit_no_recheck",
    "topup_any_generation",
    "round_stamp_any_generation",
    "refusal_any_generation",
    "changed_skips_look",
    "stamp_changed_skips_look",
    "station_relaxed",
    "node_cache_relaxed",
    "cache_take_load_store",
    "inline_relaxed",
    "inline_take_load_store",
    "chain_drop_early_give_back",
    "inline_at_newer",
    "len_single_read",
    "round_load_store",
    "max_laps_unlisted",
    "gate_clear_after",
    "gate_exit_store",
    "gate_relaxed",
    "gate_defer_closed",
    "gate_unwind_closed",
    "gate_defer_clears_note",
    "queue_lock_relaxed",
    "handback_forgotten",
    "direct_overtakes_intake",
    "give_back_own_only",
    "direct_checked_unlocked",
    "direct_unfiltered",
    "kept_live_relaxed",
    "have_frames_listed_only",
    "served_after_topup",
    "untagged_write",
    "untagged_stamp",
    "unguarded_control",
    "default_no_follow",
    "check_no_reread",
    "departed_refused",
    "stamp_no_retry",
    "adaptive_store",
    "adaptive_untagged",
    "wake_keeps_idle",
    "idle_first_load",
    "refusal_counts_idle",
    "skip_counts_idle",
    "no_overlap_recheck",
    "recheck_listed_with_frames",
    "recheck_after_returns_only",
    "claim_recipe_frames_left",
];

/// Whether `name` is in [`VARIANTS`]: a `const fn`, so that [`weakened!`] checks its
/// argument when the crate compiles.
#[cfg_attr(
    not(loom),
    allow(
        dead_code,
        reason = "used by weakened!'s const assertion, which the kernel's rustc (1.85) does not count as a use"
    )
)]
pub(crate) const fn declared(name: &str) -> bool {
    let mut rest = VARIANTS;
    while let [first, tail @ ..] = rest {
        if bytes_equal(first.as_bytes(), name.as_bytes()) {
            return true;
        }
        rest = tail;
    }
    false
}

#[cfg_attr(
    not(loom),
    allow(
        dead_code,
        reason = "used by weakened!'s const assertion, which the kernel's rustc (1.85) does not count as a use"
    )
)]
const fn bytes_equal(mut a: &[u8], mut b: &[u8]) -> bool {
    loop {
        match (a, b) {
            ([x, a_tail @ ..], [y, b_tail @ ..]) if *x == *y => {
                a = a_tail;
                b = b_tail;
            }
            ([], []) => return true,
            _ => return false,
        }
    }
}

/// Whether the variant `name` is the one this process runs (`AIRTIME_WEAKENED`, read
/// once). Not a loom primitive: reading it adds no interleavings to a model.
#[cfg(loom)]
pub fn is(name: &str) -> bool {
    use std::sync::OnceLock;
    static CHOSEN: OnceLock<Option<std::string::String>> = OnceLock::new();
    let chosen = CHOSEN.get_or_init(|| {
        let chosen = std::env::var("AIRTIME_WEAKENED").ok().filter(|v| !v.is_empty())?;
        if !declared(&chosen) {
            // Not a panic: a model that panics has caught its variant.
            std::eprintln!("AIRTIME_WEAKENED={chosen} names no weakened variant");
            std::process::exit(2);
        }
        Some(chosen)
    });
    match chosen {
        None => false,
        Some(chosen) => {
            if !declared(name) {
                std::eprintln!("weakened variant {name} is not declared in VARIANTS");
                std::process::exit(2);
            }
            chosen == name
        }
    }
}

/// Outside loom builds no variant exists.
#[cfg(not(loom))]
#[inline(always)]
pub(crate) const fn is(_name: &str) -> bool {
    false
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Each variant is compiled into the crate or its loom tests, and CI proves a
    /// model catches it: a variant no model is run against proves nothing.
    #[test]
    fn every_variant_is_used_and_checked_by_ci() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let ci = std::fs::read_to_string(root.join("../.ci/run")).expect(".ci/run");
        let mut code = std::string::String::new();
        let mut dirs = std::vec![root.join("src"), root.join("tests")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("source dir") {
                let path = entry.expect("dir entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("weakened.rs") {
                    code.push_str(&std::fs::read_to_string(&path).expect("source file"));
                }
            }
        }
        for v in VARIANTS {
            let quoted = std::format!("\"{v}\"");
            assert!(code.contains(&quoted), "weakened variant {v} is used nowhere");
            assert!(ci.contains(&std::format!("expect_caught {v} ")), "no CI step proves a model catches {v}");
        }
        assert!(!declared("no_such_variant"));
    }
}
