//! Suites: lists of scenarios. The default suite is the seed cover letter's tables, from
//! the files in `airtime-sim/scenarios/`, built into the binary so that `cargo run` needs
//! no path. A named suite is the default suite's arms whose names start with that name
//! (`vht80`, `mcs0`, `split`, `roundfix`), or a directory of scenario files.

use super::{Resolved, ScenarioError, ScenarioErrorKind, parse};
use std::path::Path;

/// The default suite's files, in table order.
pub const DEFAULT_SUITE: &[(&str, &str)] = &[
    ("vht80-stock.toml", include_str!("../../scenarios/vht80-stock.toml")),
    ("vht80-series-default.toml", include_str!("../../scenarios/vht80-series-default.toml")),
    ("vht80-series-500-1000.toml", include_str!("../../scenarios/vht80-series-500-1000.toml")),
    ("mcs0-stock.toml", include_str!("../../scenarios/mcs0-stock.toml")),
    ("mcs0-series-default.toml", include_str!("../../scenarios/mcs0-series-default.toml")),
    ("mcs0-series-500-1000.toml", include_str!("../../scenarios/mcs0-series-500-1000.toml")),
    ("split-equal.toml", include_str!("../../scenarios/split-equal.toml")),
    ("split-1024-256.toml", include_str!("../../scenarios/split-1024-256.toml")),
    ("split-256-1024.toml", include_str!("../../scenarios/split-256-1024.toml")),
    ("split-nopushback-equal.toml", include_str!("../../scenarios/split-nopushback-equal.toml")),
    ("split-nopushback-1024-256.toml", include_str!("../../scenarios/split-nopushback-1024-256.toml")),
    ("split-nopushback-256-1024.toml", include_str!("../../scenarios/split-nopushback-256-1024.toml")),
    ("roundfix-forwarded-bug.toml", include_str!("../../scenarios/roundfix-forwarded-bug.toml")),
    ("roundfix-forwarded-fixed.toml", include_str!("../../scenarios/roundfix-forwarded-fixed.toml")),
    ("roundfix-ap-bug.toml", include_str!("../../scenarios/roundfix-ap-bug.toml")),
    ("roundfix-ap-fixed.toml", include_str!("../../scenarios/roundfix-ap-fixed.toml")),
];

/// The queueing-design comparison (not part of the default suite).
pub const DESIGNS_SUITE: &[(&str, &str)] = &[
    ("designs-qdisc-pfifo.toml", include_str!("../../scenarios/designs/designs-qdisc-pfifo.toml")),
    ("designs-qdisc-fq-codel.toml", include_str!("../../scenarios/designs/designs-qdisc-fq-codel.toml")),
    ("designs-mac80211-rr.toml", include_str!("../../scenarios/designs/designs-mac80211-rr.toml")),
    ("designs-mac80211-atf.toml", include_str!("../../scenarios/designs/designs-mac80211-atf.toml")),
    ("designs-mac80211-aql.toml", include_str!("../../scenarios/designs/designs-mac80211-aql.toml")),
    ("designs-30sta-mac80211-rr.toml", include_str!("../../scenarios/designs/designs-30sta-mac80211-rr.toml")),
    ("designs-30sta-mac80211-atf.toml", include_str!("../../scenarios/designs/designs-30sta-mac80211-atf.toml")),
];

/// Airtime fairness under downlink OFDMA: four HE80 stations, weights 2:1:1:1 and
/// equal, SU against MU with each charging policy, with the firmware picking the
/// transmitters (the ath11k adapter) and with the host picking them (the AQL series' driver rounds over
/// one shallow TCL ring) (`docs/ofdma-fairness.md`; not part of the default suite).
pub const OFDMA_SUITE: &[(&str, &str)] = &[
    ("ofdma-weighted-su.toml", include_str!("../../scenarios/ofdma/ofdma-weighted-su.toml")),
    ("ofdma-weighted-whole-ppdu.toml", include_str!("../../scenarios/ofdma/ofdma-weighted-whole-ppdu.toml")),
    ("ofdma-weighted-ru-share.toml", include_str!("../../scenarios/ofdma/ofdma-weighted-ru-share.toml")),
    ("ofdma-weighted-own-duration.toml", include_str!("../../scenarios/ofdma/ofdma-weighted-own-duration.toml")),
    ("ofdma-equal-su.toml", include_str!("../../scenarios/ofdma/ofdma-equal-su.toml")),
    ("ofdma-equal-whole-ppdu.toml", include_str!("../../scenarios/ofdma/ofdma-equal-whole-ppdu.toml")),
    ("ofdma-equal-ru-share.toml", include_str!("../../scenarios/ofdma/ofdma-equal-ru-share.toml")),
    ("ofdma-equal-own-duration.toml", include_str!("../../scenarios/ofdma/ofdma-equal-own-duration.toml")),
    ("ofdma-fifo-weighted-su.toml", include_str!("../../scenarios/ofdma/ofdma-fifo-weighted-su.toml")),
    ("ofdma-fifo-weighted-whole-ppdu.toml", include_str!("../../scenarios/ofdma/ofdma-fifo-weighted-whole-ppdu.toml")),
    ("ofdma-fifo-weighted-ru-share.toml", include_str!("../../scenarios/ofdma/ofdma-fifo-weighted-ru-share.toml")),
    (
        "ofdma-fifo-weighted-own-duration.toml",
        include_str!("../../scenarios/ofdma/ofdma-fifo-weighted-own-duration.toml"),
    ),
    ("ofdma-fifo-equal-su.toml", include_str!("../../scenarios/ofdma/ofdma-fifo-equal-su.toml")),
    ("ofdma-fifo-equal-whole-ppdu.toml", include_str!("../../scenarios/ofdma/ofdma-fifo-equal-whole-ppdu.toml")),
    ("ofdma-fifo-equal-ru-share.toml", include_str!("../../scenarios/ofdma/ofdma-fifo-equal-ru-share.toml")),
    ("ofdma-fifo-equal-own-duration.toml", include_str!("../../scenarios/ofdma/ofdma-fifo-equal-own-duration.toml")),
    ("ofdma-fifo-udp-weighted-su.toml", include_str!("../../scenarios/ofdma/ofdma-fifo-udp-weighted-su.toml")),
    (
        "ofdma-fifo-udp-weighted-whole-ppdu.toml",
        include_str!("../../scenarios/ofdma/ofdma-fifo-udp-weighted-whole-ppdu.toml"),
    ),
    (
        "ofdma-fifo-udp-weighted-ru-share.toml",
        include_str!("../../scenarios/ofdma/ofdma-fifo-udp-weighted-ru-share.toml"),
    ),
    (
        "ofdma-fifo-udp-weighted-own-duration.toml",
        include_str!("../../scenarios/ofdma/ofdma-fifo-udp-weighted-own-duration.toml"),
    ),
];

/// Adaptive AQL against the default and the 500/1000 fixed limits (not part of the
/// default suite; `docs/adaptive-aql.md`).
pub const ADAPTIVE_SUITE: &[(&str, &str)] = &[
    ("adaptive-vht80-default.toml", include_str!("../../scenarios/adaptive/adaptive-vht80-default.toml")),
    ("adaptive-vht80-500-1000.toml", include_str!("../../scenarios/adaptive/adaptive-vht80-500-1000.toml")),
    ("adaptive-vht80-adaptive.toml", include_str!("../../scenarios/adaptive/adaptive-vht80-adaptive.toml")),
    ("adaptive-mcs0-default.toml", include_str!("../../scenarios/adaptive/adaptive-mcs0-default.toml")),
    ("adaptive-mcs0-500-1000.toml", include_str!("../../scenarios/adaptive/adaptive-mcs0-500-1000.toml")),
    ("adaptive-mcs0-adaptive.toml", include_str!("../../scenarios/adaptive/adaptive-mcs0-adaptive.toml")),
    ("adaptive-split-default.toml", include_str!("../../scenarios/adaptive/adaptive-split-default.toml")),
    ("adaptive-split-500-1000.toml", include_str!("../../scenarios/adaptive/adaptive-split-500-1000.toml")),
    ("adaptive-split-adaptive.toml", include_str!("../../scenarios/adaptive/adaptive-split-adaptive.toml")),
    (
        "adaptive-split-nopushback-default.toml",
        include_str!("../../scenarios/adaptive/adaptive-split-nopushback-default.toml"),
    ),
    (
        "adaptive-split-nopushback-500-1000.toml",
        include_str!("../../scenarios/adaptive/adaptive-split-nopushback-500-1000.toml"),
    ),
    (
        "adaptive-split-nopushback-adaptive.toml",
        include_str!("../../scenarios/adaptive/adaptive-split-nopushback-adaptive.toml"),
    ),
    ("adaptive-ratedrop-default.toml", include_str!("../../scenarios/adaptive/adaptive-ratedrop-default.toml")),
    ("adaptive-ratedrop-500-1000.toml", include_str!("../../scenarios/adaptive/adaptive-ratedrop-500-1000.toml")),
    ("adaptive-ratedrop-adaptive.toml", include_str!("../../scenarios/adaptive/adaptive-ratedrop-adaptive.toml")),
];

/// The ath11k adapter's AQL estimate calibration off and on, on the seed's VHT80 and
/// MCS0 arms (not part of the default suite; `docs/mechanisms.md`).
pub const CALIBRATION_SUITE: &[(&str, &str)] = &[
    (
        "calibration-mcs0-series-500-1000-off.toml",
        include_str!("../../scenarios/calibration/calibration-mcs0-series-500-1000-off.toml"),
    ),
    (
        "calibration-mcs0-series-500-1000-on.toml",
        include_str!("../../scenarios/calibration/calibration-mcs0-series-500-1000-on.toml"),
    ),
    (
        "calibration-mcs0-series-default-off.toml",
        include_str!("../../scenarios/calibration/calibration-mcs0-series-default-off.toml"),
    ),
    (
        "calibration-mcs0-series-default-on.toml",
        include_str!("../../scenarios/calibration/calibration-mcs0-series-default-on.toml"),
    ),
    (
        "calibration-vht80-series-1000-2000-on.toml",
        include_str!("../../scenarios/calibration/calibration-vht80-series-1000-2000-on.toml"),
    ),
    (
        "calibration-vht80-series-500-1000-off.toml",
        include_str!("../../scenarios/calibration/calibration-vht80-series-500-1000-off.toml"),
    ),
    (
        "calibration-vht80-series-500-1000-on.toml",
        include_str!("../../scenarios/calibration/calibration-vht80-series-500-1000-on.toml"),
    ),
    (
        "calibration-vht80-series-default-off.toml",
        include_str!("../../scenarios/calibration/calibration-vht80-series-default-off.toml"),
    ),
    (
        "calibration-vht80-series-default-on.toml",
        include_str!("../../scenarios/calibration/calibration-vht80-series-default-on.toml"),
    ),
];

/// The suites run by name besides the default suite and its prefixes.
const NAMED_SUITES: &[(&str, &[(&str, &str)])] = &[
    ("designs", DESIGNS_SUITE),
    ("ofdma", OFDMA_SUITE),
    ("adaptive", ADAPTIVE_SUITE),
    ("calibration", CALIBRATION_SUITE),
];

/// The default suite, parsed.
pub fn default_suite() -> Result<Vec<Resolved>, ScenarioError> {
    DEFAULT_SUITE.iter().map(|(name, text)| parse(text, name)).collect()
}

/// A suite by name (a prefix of default-suite arm names) or by directory.
pub fn named(name: &str) -> Result<Vec<Resolved>, ScenarioError> {
    if name == "default" {
        return default_suite();
    }
    if let Some((_, files)) = NAMED_SUITES.iter().find(|(n, _)| *n == name) {
        return files.iter().map(|(file, text)| parse(text, file)).collect();
    }
    let dir = Path::new(name);
    if dir.is_dir() {
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| ScenarioError::new(name, ScenarioErrorKind::Io, e.to_string()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        paths.sort();
        return paths.iter().map(|p| super::load(p)).collect();
    }
    let arms: Vec<Resolved> = default_suite()?.into_iter().filter(|r| r.spec.name.starts_with(name)).collect();
    if arms.is_empty() {
        return Err(ScenarioError::new(
            name,
            ScenarioErrorKind::NoSuite,
            "no such suite: use default, vht80, mcs0, split, roundfix, designs, ofdma, adaptive, calibration, or a directory of scenario files",
        ));
    }
    Ok(arms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_scenario_parses_and_names_match_files() {
        let arms = default_suite().unwrap();
        assert_eq!(arms.len(), DEFAULT_SUITE.len());
        for (r, (file, _)) in arms.iter().zip(DEFAULT_SUITE) {
            assert_eq!(format!("{}.toml", r.spec.name), *file);
            assert!(r.warnings.is_empty(), "{file}: {:?}", r.warnings);
        }
        for (file, text) in DESIGNS_SUITE.iter().chain(ADAPTIVE_SUITE).chain(CALIBRATION_SUITE) {
            assert!(parse(text, file).unwrap().warnings.is_empty(), "{file}");
        }
        for (file, text) in OFDMA_SUITE {
            let r = parse(text, file).unwrap();
            assert!(r.warnings.is_empty(), "{file}");
            assert_eq!(format!("{}.toml", r.spec.name), *file);
        }
    }

    #[test]
    fn named_suites_select_by_prefix() {
        assert_eq!(named("split").unwrap().len(), 6);
        assert_eq!(named("designs").unwrap().len(), 7);
        assert_eq!(named("ofdma").unwrap().len(), 20);
        assert_eq!(named("adaptive").unwrap().len(), 15);
        assert_eq!(named("calibration").unwrap().len(), 9);
        assert!(named("nonsense").is_err());
    }
}
