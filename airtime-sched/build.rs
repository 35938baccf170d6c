//! Forwards `AIRTIME_WEAKENED` — the name of a deliberately weakened variant that CI
//! builds to prove a loom model can fail — as this crate's `airtime_weakened` cfg.
//!
//! A cfg given through RUSTFLAGS would rebuild loom and every other dependency for each
//! variant; set here, a change of variant rebuilds this crate and its tests only.
//! Unset or empty (every normal build): no cfg, nothing weakened.

fn main() {
    println!("cargo:rerun-if-env-changed=AIRTIME_WEAKENED");
    // Variants declared here rather than in the workspace's `check-cfg` list (rustc
    // merges the two): the concurrent rounds' re-check (loom_txqs' txq17 to txq23).
    println!("cargo:rustc-check-cfg=cfg(airtime_weakened, values(\"no_overlap_recheck\"))");
    println!("cargo:rustc-check-cfg=cfg(airtime_weakened, values(\"recheck_listed_with_frames\"))");
    println!("cargo:rustc-check-cfg=cfg(airtime_weakened, values(\"recheck_after_returns_only\"))");
    // A recipe the loom model txq24 follows (a test-side variant: the crate is unchanged).
    println!("cargo:rustc-check-cfg=cfg(airtime_weakened, values(\"claim_recipe_frames_left\"))");
    match std::env::var("AIRTIME_WEAKENED") {
        Ok(variant) if !variant.is_empty() => {
            println!("cargo:rustc-cfg=airtime_weakened=\"{variant}\"");
        }
        _ => {}
    }
}
