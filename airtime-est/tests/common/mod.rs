//! Rate generators shared by the integration tests.
#![allow(dead_code)]

use airtime_est::{Bandwidth, HeGi, Rate};
use proptest::prelude::*;

pub const CCK: [u16; 4] = [10, 20, 55, 110];
pub const OFDM: [u16; 8] = [60, 90, 120, 180, 240, 360, 480, 540];
pub const BWS: [Bandwidth; 5] = Bandwidth::ALL;
pub const GIS: [HeGi; 3] = HeGi::ALL;

/// A family of MCS rates that differ only in the MCS: (encoding name, rates by rising MCS).
pub struct Group {
    pub rates: Vec<Rate>,
}

/// Every group of MCS rates (same encoding, streams, bandwidth, GI), MCS rising.
pub fn groups() -> Vec<Group> {
    let mut out = Vec::new();
    for bw in BWS {
        for sgi in [false, true] {
            for nss in 1..=4u8 {
                let rates: Vec<Rate> = (0..8).filter_map(|m| Rate::ht((nss - 1) * 8 + m, bw, sgi).ok()).collect();
                if !rates.is_empty() {
                    out.push(Group { rates });
                }
            }
            for nss in 1..=8 {
                let rates: Vec<Rate> = (0..=9).filter_map(|m| Rate::vht(m, nss, bw, sgi).ok()).collect();
                if !rates.is_empty() {
                    out.push(Group { rates });
                }
            }
        }
        for gi in GIS {
            for nss in 1..=8 {
                let he: Vec<Rate> = (0..=11).filter_map(|m| Rate::he(m, nss, bw, gi).ok()).collect();
                if !he.is_empty() {
                    out.push(Group { rates: he });
                }
                let eht: Vec<Rate> = (0..=13).filter_map(|m| Rate::eht(m, nss, bw, gi).ok()).collect();
                out.push(Group { rates: eht });
            }
        }
    }
    out
}

/// Every valid rate: all legacy rates and every MCS rate.
pub fn all_rates() -> Vec<Rate> {
    let mut out: Vec<Rate> = Vec::new();
    for r in CCK {
        out.push(Rate::legacy_cck(r, false).unwrap());
        if r != 10 {
            out.push(Rate::legacy_cck(r, true).unwrap());
        }
    }
    for r in OFDM {
        out.push(Rate::legacy_ofdm(r).unwrap());
    }
    for g in groups() {
        out.extend(g.rates);
    }
    out
}

/// Any valid rate.
pub fn any_rate() -> impl Strategy<Value = Rate> {
    prop_oneof![
        (prop::sample::select(&CCK[..]), any::<bool>()).prop_map(|(r, s)| Rate::legacy_cck(r, s).unwrap()),
        prop::sample::select(&OFDM[..]).prop_map(|r| Rate::legacy_ofdm(r).unwrap()),
        (0u8..32, 0usize..2, any::<bool>()).prop_map(|(m, b, s)| Rate::ht(m, BWS[b], s).unwrap()),
        (0u8..10, 1u8..=8, 0usize..4, any::<bool>()).prop_map(|(m, n, b, s)| Rate::vht(m, n, BWS[b], s).unwrap()),
        (0u8..12, 1u8..=8, 0usize..4, 0usize..3).prop_map(|(m, n, b, g)| Rate::he(m, n, BWS[b], GIS[g]).unwrap()),
        (0u8..14, 1u8..=8, 0usize..5, 0usize..3).prop_map(|(m, n, b, g)| Rate::eht(m, n, BWS[b], GIS[g]).unwrap()),
    ]
}

/// Any bandwidth.
pub fn any_bw() -> impl Strategy<Value = Bandwidth> {
    prop::sample::select(&BWS[..])
}

/// Any HE guard interval.
pub fn any_gi() -> impl Strategy<Value = HeGi> {
    prop::sample::select(&GIS[..])
}

/// A frame length, weighted towards the interesting small and huge ends.
pub fn any_len() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..100, 0u32..10_000, 0u32..1_000_000, any::<u32>(), Just(u32::MAX)]
}
