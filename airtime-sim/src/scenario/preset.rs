//! Flent's standard tests as named presets (`preset = "rrul"`): each expands into the
//! flows Flent runs against one host, with the same markings and times, for every
//! station of the scenario (as if Flent ran from each).
//!
//! From Flent's test definitions (`flent/tests/*.conf`, by file):
//!
//! * `tcp_download` / `tcp_upload`: one TCP_MAERTS (download) or TCP_STREAM (upload),
//!   unmarked (CS0), beside a ping;
//! * `rrul_be` (`rrul_be.conf`): four TCP downloads and four uploads, all unmarked;
//! * `rrul` (`rrul.conf`): the same with markings CS0, CS1, CS5 and EF in each direction
//!   (`marking="CS0,CS0"` ... `"EF,EF"`), DSCP 0, 8, 40 and 46: BE, BK, VI and VO by
//!   `cfg80211_classify8021d`;
//! * `rtt_fair_var_up` / `rtt_fair_var_down` (`rtt_fair.inc` through `rtt_fair_var.conf`):
//!   one unmarked TCP upload (download) per host; here, per station.
//!
//! Times: Flent's defaults, `LENGTH` 60 s of load starting after `DELAY` 5 s, and pings
//! for `TOTAL_LENGTH = LENGTH + 2 * DELAY` (`netperf_definitions.inc`) every `STEP_SIZE`
//! 0.2 s. A preset sets `duration_s` to 70 s, `warmup_s` to 5 s and the ping to 5 Hz
//! unless the file sets them. Left out: Flent's UDP_RR request/response pings (the
//! model's ping is ICMP only) and the different path RTTs `rtt_fair` runs over.

use super::{Direction, Endpoint, FlowSpec, Protocol, Scenario, Stack};
use crate::net::tcp::CongestionControl;

/// Flent's default test length, s (`-l`).
pub const FLENT_LENGTH_S: f64 = 60.0;
/// Flent's default delay before the load starts, s (`--delay`).
pub const FLENT_DELAY_S: f64 = 5.0;
/// Flent's default ping interval, s (`--step-size`).
pub const FLENT_STEP_S: f64 = 0.2;

/// DSCP of Flent's markings.
pub const CS0: u8 = 0;
/// CS1 (background).
pub const CS1: u8 = 8;
/// CS5.
pub const CS5: u8 = 40;
/// EF (expedited forwarding).
pub const EF: u8 = 46;

/// A Flent test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// One TCP download.
    TcpDownload,
    /// One TCP upload.
    TcpUpload,
    /// Four TCP downloads and four uploads, best effort.
    RrulBe,
    /// Four TCP downloads and four uploads marked CS0, CS1, CS5, EF.
    Rrul,
    /// One TCP upload per station.
    RttFairVarUp,
    /// One TCP download per station.
    RttFairVarDown,
}

/// The flows of `preset` towards one station: direction and DSCP.
pub fn flows(preset: Preset) -> &'static [(Direction, u8)] {
    use Direction::{Download as D, Upload as U};
    match preset {
        Preset::TcpDownload | Preset::RttFairVarDown => &[(D, CS0)],
        Preset::TcpUpload | Preset::RttFairVarUp => &[(U, CS0)],
        Preset::RrulBe => &[(U, CS0), (U, CS0), (U, CS0), (U, CS0), (D, CS0), (D, CS0), (D, CS0), (D, CS0)],
        Preset::Rrul => &[(U, CS0), (U, CS1), (U, CS5), (U, EF), (D, CS0), (D, CS1), (D, CS5), (D, EF)],
    }
}

/// What the file set itself, which a preset leaves alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct Given {
    /// `duration_s`.
    pub duration: bool,
    /// `warmup_s`.
    pub warmup: bool,
    /// `ping.rate_hz`.
    pub ping: bool,
}

/// Expands `spec.preset` into `spec.flows` (which must be empty) and Flent's times.
pub fn expand(spec: &mut Scenario, given: Given) -> Result<(), String> {
    let Some(preset) = spec.preset else { return Ok(()) };
    if !spec.flows.is_empty() {
        return Err("a preset brings its own flows; remove the `[[flows]]` or the preset".into());
    }
    if !given.duration {
        spec.duration_s = FLENT_LENGTH_S + 2.0 * FLENT_DELAY_S;
    }
    if !given.warmup {
        spec.warmup_s = FLENT_DELAY_S;
    }
    if !given.ping {
        spec.ping.rate_hz = 1.0 / FLENT_STEP_S;
    }
    for st in &spec.stations {
        for &(direction, dscp) in flows(preset) {
            spec.flows.push(FlowSpec {
                station: toml::Spanned::new(st.rate.span(), st.name.clone()),
                protocol: Protocol::Tcp,
                rate_mbps: None,
                packet_bytes: super::default_packet_bytes(),
                dscp,
                start_s: FLENT_DELAY_S,
                stop_s: Some(FLENT_DELAY_S + FLENT_LENGTH_S),
                direction,
                endpoint: Endpoint::Wired,
                cc: CongestionControl::Cubic,
                cpu: None,
                stack: Stack::Linux,
                rwnd_bytes: super::default_rwnd(),
                hystart: true,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::udp::ac_of_dscp;
    use airtime_sched::Ac;

    fn scenario(extra: &str) -> Scenario {
        let text = format!(
            "name = \"p\"\n{extra}\n[ap]\ndesign = \"ath11k_series\"\n[[stations]]\nname = \"a\"\nrate = \"ht20-mcs7\"\n\
             [[stations]]\nname = \"b\"\nrate = \"ht20-mcs7\"\n"
        );
        toml::from_str(&text).unwrap()
    }

    #[test]
    fn rrul_expands_to_four_marked_tcp_flows_each_way_per_station_with_flents_times() {
        let mut sc = scenario("preset = \"rrul\"");
        expand(&mut sc, Given::default()).unwrap();
        assert_eq!(sc.flows.len(), 16);
        for name in ["a", "b"] {
            let mine: Vec<&FlowSpec> = sc.flows.iter().filter(|f| f.station.get_ref() == name).collect();
            for dir in [Direction::Upload, Direction::Download] {
                let dscps: Vec<u8> = mine.iter().filter(|f| f.direction == dir).map(|f| f.dscp).collect();
                assert_eq!(dscps, vec![0, 8, 40, 46], "{name} {dir:?}");
                let acs: Vec<Ac> = dscps.iter().map(|&d| ac_of_dscp(d).unwrap()).collect();
                assert_eq!(acs, vec![Ac::Be, Ac::Bk, Ac::Vi, Ac::Vo]);
            }
            assert!(mine.iter().all(|f| f.protocol == Protocol::Tcp && f.endpoint == Endpoint::Wired));
            assert!(mine.iter().all(|f| f.start_s == 5.0 && f.stop_s == Some(65.0)));
        }
        assert_eq!((sc.duration_s, sc.warmup_s, sc.ping.rate_hz), (70.0, 5.0, 5.0));
    }

    #[test]
    fn the_other_presets_bring_their_flows_and_leave_what_the_file_sets() {
        let mut sc = scenario("preset = \"rrul_be\"\nduration_s = 12.0");
        expand(&mut sc, Given { duration: true, ..Given::default() }).unwrap();
        assert_eq!(sc.flows.len(), 16);
        assert!(sc.flows.iter().all(|f| f.dscp == 0));
        assert_eq!(sc.duration_s, 12.0);
        for (p, dir) in [
            ("tcp_download", Direction::Download),
            ("tcp_upload", Direction::Upload),
            ("rtt_fair_var_up", Direction::Upload),
            ("rtt_fair_var_down", Direction::Download),
        ] {
            let mut sc = scenario(&format!("preset = \"{p}\""));
            expand(&mut sc, Given::default()).unwrap();
            assert_eq!(sc.flows.len(), 2, "{p}: one flow per station");
            assert!(sc.flows.iter().all(|f| f.direction == dir && f.dscp == 0), "{p}");
        }
    }

    #[test]
    fn a_preset_beside_flows_is_refused() {
        let mut sc = scenario("preset = \"tcp_upload\"\n[[flows]]\nstation = \"a\"");
        assert!(expand(&mut sc, Given::default()).unwrap_err().contains("its own flows"));
    }
}
