//! A snapshot of the default suite's table at a short duration (2 simulated seconds, one
//! run). Regenerate with `UPDATE_SNAPSHOTS=1 cargo test -p airtime-sim --test snapshot`
//! after a deliberate model change, and review the diff.

use airtime_sim::report::{notes, summary, table};
use airtime_sim::scenario::suite::default_suite;
use airtime_sim::sim::run::{Overrides, run_all};

#[test]
fn the_default_suite_table_at_two_seconds_matches_its_snapshot() {
    let mut arms = default_suite().unwrap();
    for a in &mut arms {
        // 0.5 s: the warm-up `--duration 2` gave before the warm-up became its own flag.
        Overrides { seed: Some(1), duration_s: Some(2.0), warmup_s: Some(0.5), runs: Some(1) }.apply(a).unwrap();
    }
    let results = run_all(arms, 2, false).unwrap();
    let summaries: Vec<_> = results.iter().map(summary::summarise).collect();
    let mut lines = notes::suite_notes(&results);
    lines.extend(notes::targets_line(&summaries, &results));
    let got = table::render(&summaries, &lines);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots/default-suite-2s.txt");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(path, &got).unwrap();
    }
    let want = std::fs::read_to_string(path).expect("snapshot missing: run with UPDATE_SNAPSHOTS=1");
    assert_eq!(got, want, "the default suite's table changed; see the diff above");
}
