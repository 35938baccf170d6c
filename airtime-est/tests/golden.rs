//! The crate against golden values of mainline's estimator that come from outside it.
//!
//! `tests/golden/mainline.txt` is written by `tests/golden/gen.py`, a Python model typed
//! from the macros and functions of mainline's net/mac80211/airtime.c (its header names
//! them), sharing nothing with this crate: not its bits-per-symbol rows, not its table
//! builder. The other table tests recompute the tables from the crate's own rows, so a
//! wrong row would pass them; it cannot pass this one.

use airtime_est::tables::{self, Group};
use airtime_est::{Bandwidth, Encoding, HeGi, Rate, expected_tx_airtime_us, mainline, rx_airtime_us};

const GOLDEN: &str = include_str!("golden/mainline.txt");

fn lines(kind: &str) -> impl Iterator<Item = Vec<u64>> + '_ {
    GOLDEN.lines().filter_map(move |line| {
        let mut fields = line.split_whitespace();
        if fields.next() != Some(kind) {
            return None;
        }
        let enc = match fields.next().unwrap() {
            "cck" => 0,
            "ofdm" => 1,
            "ht" => 2,
            "vht" => 3,
            "he" => 4,
            "eht" => 5,
            other => panic!("unknown encoding {other}"),
        };
        Some([enc].into_iter().chain(fields.map(|f| f.parse::<u64>().unwrap())).collect())
    })
}

/// The crate's group `(shift, entries)` at mainline's coordinates.
fn crate_group(enc: u64, bw: usize, gi: usize, nss: usize) -> (u8, Vec<u16>) {
    fn pick<const N: usize>(g: &Group<N>) -> (u8, Vec<u16>) {
        (g.shift, g.entries.to_vec())
    }
    let max_nss = usize::from(tables::MAX_NSS);
    match enc {
        2 => pick(&tables::HT[(bw * 2 + gi) * usize::from(tables::HT_MAX_NSS) + nss - 1]),
        3 => pick(&tables::VHT[(bw * 2 + gi) * max_nss + nss - 1]),
        4 => pick(&tables::HE[(bw * 3 + gi) * max_nss + nss - 1]),
        5 => pick(&tables::EHT[(bw * 3 + gi) * max_nss + nss - 1]),
        _ => unreachable!(),
    }
}

fn rate(f: &[u64]) -> Rate {
    let (a, b, bw, gi) = (f[1] as u8, f[2] as u8, Bandwidth::ALL[f[3] as usize], f[4] as usize);
    match f[0] {
        0 => Rate::legacy_cck(f[1] as u16, b == 1),
        1 => Rate::legacy_ofdm(f[1] as u16),
        2 => Rate::ht(a, bw, gi == 1),
        3 => Rate::vht(a, b, bw, gi == 1),
        4 => Rate::he(a, b, bw, HeGi::ALL[gi]),
        _ => Rate::eht(a, b, bw, HeGi::ALL[gi]),
    }
    .unwrap()
}

#[test]
fn every_group_of_mainline_has_its_shift_and_entries() {
    let mut groups = 0;
    let mut entries = 0;
    for f in lines("group") {
        let (enc, bw, gi, nss, shift) = (f[0], f[1] as usize, f[2] as usize, f[3] as usize, f[4] as u8);
        let golden: Vec<u16> = f[5..].iter().map(|&e| u16::try_from(e).unwrap()).collect();
        let (ours_shift, ours) = crate_group(enc, bw, gi, nss);
        assert_eq!((ours_shift, &ours), (shift, &golden), "group {f:?}");
        // And through the public lookup, entry by entry.
        for (mcs, &stored) in golden.iter().enumerate() {
            let r = match enc {
                2 => Rate::ht((nss as u8 - 1) * 8 + mcs as u8, Bandwidth::ALL[bw], gi == 1),
                3 => Rate::vht(mcs as u8, nss as u8, Bandwidth::ALL[bw], gi == 1),
                4 => Rate::he(mcs as u8, nss as u8, Bandwidth::ALL[bw], HeGi::ALL[gi]),
                _ => Rate::eht(mcs as u8, nss as u8, Bandwidth::ALL[bw], HeGi::ALL[gi]),
            }
            .unwrap();
            assert_eq!(r.table_duration(), Some(u32::from(stored) << shift), "{r}");
            entries += 1;
        }
        groups += 1;
    }
    // Every group mainline has: HT 2 x 2 x 4, VHT 4 x 2 x 4, HE 4 x 3 x 8, EHT 5 x 3 x 8.
    assert_eq!(groups, 16 + 32 + 96 + 120);
    assert_eq!(entries, 16 * 8 + 32 * 10 + 96 * 12 + 120 * 14);
}

#[test]
fn sampled_estimates_equal_mainlines() {
    let mut checked = 0;
    let mut wrapped = 0;
    for f in lines("est") {
        let r = rate(&f);
        let (len, rx, aggregated, single) = (f[5] as u32, f[6] as u32, f[7] as u32, f[8] as u32);
        // The bug-compatible functions equal mainline everywhere.
        assert_eq!(mainline::rx_airtime_u32(r, len), rx, "{r} {len} rx");
        assert_eq!(mainline::expected_tx_airtime_u32(r, len, true), aggregated, "{r} {len} aggregated");
        assert_eq!(mainline::expected_tx_airtime_u32(r, len, false), single, "{r} {len} single");
        // The crate's own equal them where mainline neither wraps nor leaves the rate
        // unpriced (VHT above 4 streams).
        let beyond = r.encoding() == Encoding::Vht && r.nss() > 4;
        let wraps = r.table_duration().is_some_and(|t| u64::from(t) * u64::from(len + 38) >= 1 << 32);
        if !beyond && !wraps {
            assert_eq!(expected_tx_airtime_us(r, len, true), aggregated, "{r} {len} aggregated");
            assert_eq!(expected_tx_airtime_us(r, len, false), single, "{r} {len} single");
            assert_eq!(rx_airtime_us(r, len), rx, "{r} {len} rx");
        } else if wraps {
            wrapped += 1;
        }
        checked += 1;
    }
    assert!(checked >= 700, "{checked}");
    assert!(wrapped > 0, "the sample reaches mainline's wrapping lengths");
}

#[test]
fn the_wrapping_rates_the_documentation_counts() {
    // README and crate docs: mainline's 32-bit product wraps, in the expected estimate
    // (L = frame + 38), first above 3290-byte frames, at 28 of its 3280 MCS rates for
    // 7935-byte frames and at 52 for 11 454-byte ones, all at 20 or 40 MHz.
    let rates: Vec<Rate> = lines("group")
        .flat_map(|f| {
            let (enc, bw, gi, nss) = (f[0], Bandwidth::ALL[f[1] as usize], f[2] as usize, f[3] as u8);
            (0..f.len() as u8 - 5).map(move |mcs| match enc {
                2 => Rate::ht((nss - 1) * 8 + mcs, bw, gi == 1).unwrap(),
                3 => Rate::vht(mcs, nss, bw, gi == 1).unwrap(),
                4 => Rate::he(mcs, nss, bw, HeGi::ALL[gi]).unwrap(),
                _ => Rate::eht(mcs, nss, bw, HeGi::ALL[gi]).unwrap(),
            })
        })
        .collect();
    assert_eq!(rates.len(), 3280);
    let wrapping = |frame: u32| -> Vec<Rate> {
        let l = u64::from(frame + 38);
        rates.iter().copied().filter(|r| u64::from(r.table_duration().unwrap()) * l > u64::from(u32::MAX)).collect()
    };
    assert!(wrapping(3290).is_empty());
    assert_eq!(wrapping(3291).len(), 2); // HT20 and VHT20 MCS0 long GI
    assert_eq!(wrapping(7935).len(), 28);
    assert_eq!(wrapping(11_454).len(), 52);
    assert!(wrapping(11_454).iter().all(|r| r.bandwidth() <= Bandwidth::Mhz40));
}
