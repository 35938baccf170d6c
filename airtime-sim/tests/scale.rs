//! Scale: 1024 stations on one radio (ath11k alone serves 512 peers per radio) run to
//! the end; the scheduler's capacity follows the scenario, and a scenario beyond the
//! scheduler's hard range is refused naming the limit and its setting.

use airtime_sim::ap::size_for_stations;
use airtime_sim::scenario;
use airtime_sim::sim::run::{Overrides, run_one};

#[test]
fn a_1024_station_scenario_runs_to_the_end() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/scale-1024-stations.toml");
    let mut sc = scenario::load(std::path::Path::new(file)).unwrap();
    assert_eq!(sc.spec.stations.len(), 1024);
    // A short run keeps the debug build fast; every station still gets its SYN through.
    Overrides { duration_s: Some(0.4), warmup_s: Some(0.2), runs: Some(1), ..Overrides::default() }
        .apply(&mut sc)
        .unwrap();
    let r = run_one(&sc, 0).unwrap();
    assert_eq!(r.stations.len(), 1024);
    assert_eq!(r.flows.len(), 1024);
    let total: f64 = r.flows.iter().map(|f| f.throughput_mbps).sum();
    assert!(total > 1.0, "{total} Mbit/s over 1024 downloads");
    let served = r.stations.iter().filter(|s| s.airtime_share_pct > 0.0).count();
    assert!(served > 100, "only {served} stations got airtime");
}

#[test]
fn the_scheduler_is_sized_from_the_station_count_and_its_hard_limit_is_named() {
    let mut c = airtime_sched::Config::default();
    size_for_stations(&mut c, 1024).unwrap();
    assert!(c.max_stations >= 1024 && c.max_txqs >= 1024);
    let mut small = airtime_sched::Config::default();
    size_for_stations(&mut small, 4).unwrap();
    assert_eq!(small, airtime_sched::Config::default(), "small scenarios keep the defaults");
    let e = size_for_stations(&mut c, 4097).unwrap_err().0;
    assert!(e.contains("4097 stations") && e.contains("4096") && e.contains("max_stations"), "{e}");
}
