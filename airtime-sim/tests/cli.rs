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

#[test]
fn a_key_that_does_nothing_is_warned_about_on_stderr_by_name_and_the_run_goes_on() {
    let dir = std::env::temp_dir().join(format!("airtime-sim-cli-warn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("warn.toml");
    let text = "name = \"x\"\n[ap]\ndesign = \"stock\"\n[[stations]]\nname = \"a\"\nrate = \"vht80-1ss-mcs9-sgi\"\n\
                [[flows]]\nstation = \"a\"\ncc = \"cubic\"\n";
    std::fs::write(&f, text).unwrap();
    let out = sim().arg(&f).args(["-q", "--duration", "0.2", "--runs", "1"]).output().unwrap();
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
