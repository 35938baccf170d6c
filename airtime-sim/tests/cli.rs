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
    for (fmt, needle) in [("table", "Mbit/s, flow 0"), ("json", "\"arms\""), ("csv", "arm,run,seed")] {
        let out = sim().args([f, "--duration", "1", "--runs", "1", "-q", "--format", fmt]).output().unwrap();
        assert!(out.status.success(), "{fmt}");
        assert!(String::from_utf8_lossy(&out.stdout).contains(needle), "{fmt}");
    }
}
