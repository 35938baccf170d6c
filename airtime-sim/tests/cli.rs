//! The command line: clear errors for bad input, never a panic.

use std::process::Command;

fn sim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_airtime-sim"))
}

#[test]
fn a_bad_scenario_file_names_the_key_and_the_line_and_exits_2() {
    let dir = std::env::temp_dir().join(format!("airtime-sim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.toml");
    std::fs::write(&f, "name = \"x\"\n[ap]\ndesign = \"stock\"\n[[stations]]\nname = \"a\"\nrate = \"vht80-mcs42\"\n")
        .unwrap();
    let out = sim().arg(&f).arg("-q").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 6") && err.contains("rate"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_file_is_an_error_not_a_panic() {
    let out = sim().arg("/nonexistent/scenario.toml").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("error:"));
}

#[test]
fn a_short_scenario_prints_a_table_json_and_csv() {
    let f = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/vht80-series-500-1000.toml");
    for (fmt, needle) in [("table", "Mbit/s, flow 0"), ("json", "\"arms\""), ("csv", "sim_version,arm,design")] {
        let out = sim()
            .args([f, "--duration", "1", "--warmup", "0.25", "--runs", "1", "-q", "--format", fmt])
            .output()
            .unwrap();
        assert!(out.status.success(), "{fmt}");
        assert!(String::from_utf8_lossy(&out.stdout).contains(needle), "{fmt}");
    }
}

#[test]
fn a_key_that_does_nothing_is_warned_about_on_stderr_by_name_and_the_run_goes_on() {
    let dir = std::env::temp_dir().join(format!("airtime-sim-cli-warn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("warn.toml");
    let text = "name = \"x\"\n[ap]\ndesign = \"stock\"\n[[stations]]\nname = \"a\"\nrate = \"vht80-1ss-mcs9-sgi\"\n\
                [[flows]]\nstation = \"a\"\ncc = \"cubic\"\n";
    std::fs::write(&f, text).unwrap();
    let out = sim().arg(&f).args(["-q", "--duration", "0.2", "--warmup", "0.05", "--runs", "1"]).output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning:") && err.contains("line 9: `flows[0].cc`: is the default and has no effect"),
        "{err}"
    );
    std::fs::write(&f, text.replace("cubic", "reno")).unwrap();
    let out = sim().arg(&f).arg("-q").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`flows[0].cc`: has no effect here"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs the binary on the 500/1000 arm with `args`, expecting a refusal (exit 2) whose
/// message names `flag` and each of `words`.
fn refused(args: &[&str], words: &[&str]) {
    let f = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/vht80-series-500-1000.toml");
    let out = sim().arg(f).args(["-q"]).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} ran: {}", String::from_utf8_lossy(&out.stdout));
    for w in words {
        assert!(err.contains(w), "{args:?}: `{w}` missing from: {err}");
    }
}

#[test]
fn run_lengths_and_counts_that_cannot_run_are_refused_naming_the_flag_and_the_range() {
    for d in ["0", "-1", "NaN", "inf", "86401", "1e9", "abc"] {
        refused(&["--duration", d], &["--duration"]);
    }
    refused(&["--duration", "0"], &["(0, 86400]"]);
    for r in ["0", "-1", "1001", "x"] {
        refused(&["--runs", r], &["--runs", "1..=1000"]);
    }
    for w in ["-0.5", "NaN"] {
        refused(&["--warmup", w], &["--warmup"]);
    }
    // The arm's own warm-up (2 s) leaves nothing of a 1 s run: refused, not shrunk.
    refused(&["--duration", "1"], &["--duration 1", "`warmup_s`", "--warmup SECONDS in [0, 1)"]);
    refused(&["--duration", "1", "--warmup", "1"], &["--warmup", "[0, 1)"]);
    refused(&["--warmup", "25"], &["--warmup", "[0, 20)"]);
}

#[test]
fn the_same_values_in_a_scenario_file_are_refused_naming_the_key() {
    let dir = std::env::temp_dir().join(format!("airtime-sim-cli-range-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = "[ap]\ndesign = \"stock\"\n[[stations]]\nname = \"a\"\nrate = \"vht80-1ss-mcs9-sgi\"\n";
    for (top, key) in [
        ("duration_s = 0.0", "duration_s"),
        ("duration_s = nan", "duration_s"),
        ("duration_s = 100000.0", "duration_s"),
        ("duration_s = 1.0\nwarmup_s = 1.0", "warmup_s"),
        ("warmup_s = nan", "warmup_s"),
        ("warmup_s = -1.0", "warmup_s"),
        ("runs = 0", "runs"),
        ("runs = 5000", "runs"),
        ("sample_interval_ms = 0.0", "sample_interval_ms"),
        ("sample_interval_ms = inf", "sample_interval_ms"),
    ] {
        let f = dir.join("range.toml");
        std::fs::write(&f, format!("name = \"x\"\n{top}\n{base}")).unwrap();
        let out = sim().arg(&f).arg("-q").output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{top}: {err}");
        assert!(err.contains(&format!("`{key}`")), "{top}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_reader_that_closes_the_pipe_early_is_not_a_panic() {
    use std::io::Read;
    use std::process::Stdio;
    // About 150 KB of JSON: more than a pipe holds, so the writer meets the closed end.
    let f = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/vht80-stock.toml");
    let mut child = sim()
        .args([f, "--duration", "4", "--warmup", "0.5", "--runs", "3", "-q", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The pipe's read end is dropped here, as `| head -c 16` would.
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}: {}", out.status, String::from_utf8_lossy(&out.stderr));
}
