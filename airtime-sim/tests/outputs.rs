//! What the outputs carry: the CSV's and JSON's echo of the scenario and the flows'
//! direction and protocol, the time series, the steady-state warning, and the SVG files
//! `--plot` writes.

use std::path::{Path, PathBuf};
use std::process::Command;

fn sim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_airtime-sim"))
}

fn scenario(name: &str) -> String {
    format!("{}/scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"))
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("airtime-sim-outputs-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn the_csv_header_names_direction_and_protocol_and_every_row_echoes_the_run() {
    let out = sim()
        .args([&scenario("split-equal"), "--duration", "1", "--warmup", "0.5", "--runs", "2", "-q"])
        .args(["--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for col in ["sim_version", "design", "duration_s", "warmup_s", "seed", "direction", "protocol", "ampdu_p50"] {
        assert!(header.contains(&col), "{col} missing from {header:?}");
    }
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 4, "2 runs x 2 stations x 1 flow each");
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap();
    for r in &rows {
        assert_eq!(r.len(), header.len());
        assert_eq!(r[col("sim_version")], env!("CARGO_PKG_VERSION"));
        assert_eq!((r[col("direction")], r[col("protocol")]), ("download", "tcp"));
        assert_eq!((r[col("design")], r[col("duration_s")], r[col("warmup_s")]), ("ath11k_adapter", "1", "0.5"));
    }
    assert_ne!(rows[0][col("seed")], rows[2][col("seed")], "each run has its own seed");
}

#[test]
fn the_json_echoes_the_resolved_scenario_and_carries_series_and_rtt_quantiles() {
    let out = sim()
        .args([&scenario("vht80-series-500-1000"), "--duration", "2", "--warmup", "0.5", "--runs", "1", "-q"])
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["simulator"]["version"], env!("CARGO_PKG_VERSION"));
    let arm = &doc["arms"][0];
    // Resolved: the file leaves `sample_interval_ms` out; the echo has its default.
    assert_eq!(arm["scenario"]["sample_interval_ms"], 100.0);
    assert_eq!(arm["scenario"]["duration_s"], 2.0);
    assert_eq!(arm["scenario"]["warmup_s"], 0.5);
    let run = &arm["runs"][0];
    assert!(run["seed"].is_u64());
    // 1.5 s measured at 100 ms: 15 samples (the first at the warm-up is the baseline).
    let times = run["sample_times_s"].as_array().unwrap();
    assert_eq!(times.len(), 15, "{times:?}");
    let flow = &run["flows"][0];
    assert_eq!((flow["direction"].as_str(), flow["protocol"].as_str()), (Some("download"), Some("tcp")));
    for k in ["throughput_series_mbps", "cwnd_series_segments", "srtt_series_ms"] {
        assert_eq!(flow[k].as_array().unwrap().len(), times.len(), "{k}");
    }
    assert!(flow["cwnd_series_segments"][14].as_f64().unwrap() >= 2.0);
    let q = flow["rtt_cdf"].as_array().unwrap();
    assert!(q.len() > 100 && q.windows(2).all(|w| w[0].as_f64() <= w[1].as_f64()), "sorted RTT quantiles");
    let st = &run["stations"][0];
    assert_eq!(st["aql_pending_series_us"].as_array().unwrap().len(), times.len());
    assert!(!st["ping_series"].as_array().unwrap().is_empty());
    for k in ["throughput_mbps", "ping_p50_ms", "ping_p99_ms", "ampdu_p50", "airtime_share_pct", "aql_pending_p50_us"] {
        assert!(arm["summary"]["stations"][0][k].is_number(), "{k}");
    }
}

#[test]
fn a_run_too_short_to_settle_warns_naming_the_figure_and_a_long_one_does_not() {
    let run = |d: &str, w: &str| {
        let out = sim()
            .args([&scenario("vht80-series-default"), "--duration", d, "--warmup", w, "--runs", "1", "-q"])
            .output()
            .unwrap();
        assert!(out.status.success());
        (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
    };
    // No warm-up: slow start fills the first half (of 1 s: with post-backoff a burst
    // after an idle medium goes at once, and slow start is over within 1.5 s).
    let (table, err) = run("1.0", "0");
    assert!(err.contains("warning: arm `vht80-series-default`: flow 0 throughput is"), "{err}");
    assert!(err.contains("raise `duration_s`"), "{err}");
    assert!(table.contains("    warning: arm `vht80-series-default`: flow 0 throughput"), "{table}");
    let (_, err) = run("6", "2");
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn the_table_gives_confidence_intervals_jain_indices_and_per_station_figures() {
    let out = sim()
        .args([&scenario("split-equal"), "--duration", "1.5", "--warmup", "0.5", "--runs", "3", "-q"])
        .output()
        .unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("ours: mean ±95% CI (runs)"), "{table}");
    assert!(table.contains("Jain index, air d+u") && table.contains("Jain index, Mbit/s"), "{table}");
    assert!(table.contains("AP down %") && table.contains("air d+u %"), "{table}");
    let sta = table.lines().find(|l| l.trim_start().starts_with("vht ")).expect("a line for station vht");
    assert!(sta.contains('±'), "{sta}");
    assert!(table.contains("ping p99 ms") && table.contains("A-MPDU p50") && table.contains("AQL p50 us"));
}

/// Whether `svg` is well-formed XML as far as its tags go: every element opened is
/// closed in order, and the root is `<svg>`.
fn well_formed(svg: &str) -> bool {
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = svg;
    let mut root = None;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let Some(end) = rest.find('>') else { return false };
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            if stack.pop() != Some(name.trim()) {
                return false;
            }
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().unwrap_or("");
            root.get_or_insert(name);
            stack.push(name);
        } else {
            root.get_or_insert(tag.split_whitespace().next().unwrap_or(""));
        }
    }
    stack.is_empty() && root == Some("svg")
}

/// The data series of a chart: its 2-pixel polylines (axes and ticks are 1 pixel).
fn series(svg: &str) -> usize {
    svg.split("<polyline").skip(1).filter(|p| p.split('>').next().unwrap_or("").contains("stroke-width=\"2\"")).count()
}

/// The text of every `<text>` element, trimmed.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split("</text>").next()?.trim().to_string()))
        .collect()
}

fn read(dir: &Path, f: &str) -> String {
    std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"))
}

#[test]
fn plot_writes_the_named_svg_files_with_one_line_per_series() {
    let dir = tmp("plot");
    let out = sim()
        .args([&scenario("split-equal"), "--duration", "1.5", "--warmup", "0.5", "--runs", "1", "-q", "--plot"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for f in
        airtime_sim::report::plots::arm_files("split-equal").iter().chain(["suite-tcp-rtt-cdf.svg".to_string()].iter())
    {
        let svg = read(&dir, f);
        assert!(well_formed(&svg), "{f} is not well-formed SVG");
    }
    // Two stations, each with a TCP download and a ping.
    assert_eq!(series(&read(&dir, "split-equal-rtt-cdf.svg")), 4);
    assert_eq!(series(&read(&dir, "split-equal-aql.svg")), 2);
    assert_eq!(series(&read(&dir, "split-equal-cwnd.svg")), 2);
    assert_eq!(series(&read(&dir, "split-equal-ping.svg")), 2);
    assert_eq!(series(&read(&dir, "suite-tcp-rtt-cdf.svg")), 1);
    // Bars: one per station, on a 0-100 % axis for the airtime share.
    let air = read(&dir, "split-equal-airtime.svg");
    let labels = texts(&air);
    assert!(labels.iter().any(|t| t == "100") && !labels.iter().any(|t| t == "100.0"), "{labels:?}");
    for s in ["vht", "he"] {
        assert!(labels.iter().any(|t| t == s), "bar label {s}: {labels:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_station_whose_every_ping_is_lost_has_no_ping_percentiles_and_shows_its_loss() {
    // MCS0 with frames joining the firmware queue as written: a ping waits behind about
    // a second of download, so none sent in the last half second is answered.
    let d = tmp("ping-loss");
    std::fs::create_dir_all(&d).unwrap();
    let file = d.join("all-pings-lost.toml");
    let text = std::fs::read_to_string(scenario("mcs0-stock"))
        .unwrap()
        .replace("[[stations]]", "[ap.hardware]\ntcl_admission = \"direct\"\n\n[[stations]]");
    std::fs::write(&file, text).unwrap();
    let run = |format: &str| {
        let out = sim()
            .args([file.to_str().unwrap(), "--duration", "6", "--warmup", "5.5", "--runs", "2", "-q"])
            .args(["--format", format])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let arm = &json["arms"][0];
    for r in arm["runs"].as_array().unwrap() {
        let st = &r["stations"][0];
        assert!(st["ping_p50_ms"].is_null() && st["ping_p99_ms"].is_null(), "{st:?}");
        assert_eq!(st["ping_loss_pct"].as_f64(), Some(100.0));
    }
    let st = &arm["summary"]["stations"][0];
    assert!(st["ping_p50_ms"].is_null() && st["ping_p99_ms"].is_null(), "{st:?}");
    assert_eq!(st["ping_loss_pct"].as_f64(), Some(100.0));
    let figures = arm["summary"]["figures"].as_array().unwrap();
    let fig = |k: &str| figures.iter().find(|f| f["key"] == k).unwrap_or_else(|| panic!("{k}"));
    assert!(fig("ping_ms")["ours"].as_array().unwrap().is_empty());
    assert_eq!(fig("ping_ms")["within_target"].as_bool(), Some(false), "no ping answered misses the seed's");
    assert_eq!(fig("ping_loss_pct")["ours"][0].as_f64(), Some(100.0));

    let table = run("table");
    let median = table.lines().find(|l| l.contains("ping median ms")).unwrap();
    assert!(median.contains('—') && !median.contains("0.00"), "{median}");
    assert!(table.lines().any(|l| l.contains("ping loss %") && l.contains("100")), "{table}");
    let sta = table.lines().find(|l| l.trim_start().starts_with("sta ")).unwrap();
    assert_eq!(sta.matches('—').count(), 2, "p50 and p99 absent: {sta}");
    assert!(!sta.contains("0.00         0.00"), "{sta}");
    let csv = run("csv");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let p50 = header.iter().position(|c| *c == "ping_p50_ms").unwrap();
    for row in csv.lines().skip(1) {
        assert_eq!(row.split(',').nth(p50), Some(""), "{row}");
    }
    let _ = std::fs::remove_dir_all(&d);
}
