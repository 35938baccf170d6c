// SPDX-License-Identifier: MIT OR GPL-2.0-only
//! The duration tables, built at compile time the way mac80211 builds them (the macros
//! of net/mac80211/airtime.c).
//!
//! One *group* per (encoding, bandwidth, guard interval, streams); one entry per MCS. An entry
//! is the data duration of a 1024-byte frame in 1/1024 us (so numerically "us per frame of
//! 1 KiB, times 1024"):
//!
//! 1. `ksyms = ceil(8192 x 1024 / (N x b))`, the symbol count x 1024 for 8192 bits, with `b`
//!    data bits per symbol per stream and `N` streams;
//! 2. `t = ksyms x symbol time`, the symbol time in us written as an exact fraction: 4 (HT/VHT
//!    long GI), 72/20 (short GI, 3.6 us), and 16 x 17/20, 16 x 18/20, 16 (HE/EHT GI 0.8, 1.6,
//!    3.2: 13.6, 14.4, 16.0 us), rounded down;
//! 3. each group stores `t >> s` as a `u16`, with `s = max(0, bitlength(t_MCS0) - 16)` taken
//!    from the group's slowest (MCS0) entry; a lookup gives back `stored << s`.
//!
//! Every table is a `const` item evaluated by `const fn`: nothing is computed at run time, and
//! an entry that would not fit its `u16` stops the build.

use crate::rate::{Bandwidth, Encoding};

/// Bytes of the reference frame (`AVG_PKT_SIZE`): entries are per 1024 bytes.
pub const REFERENCE_FRAME_BYTES: u64 = 1024;

/// Symbol time of a group, as the exact fraction the tables use.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Symbol {
    /// HT/VHT long GI: 4.0 us.
    HtLgi,
    /// HT/VHT short GI: 3.6 us.
    HtSgi,
    /// HE/EHT GI 0.8 us: 13.6 us.
    HeGi08,
    /// HE/EHT GI 1.6 us: 14.4 us.
    HeGi16,
    /// HE/EHT GI 3.2 us: 16.0 us.
    HeGi32,
}

/// Step 2: data duration of 1024 bytes in 1/1024 us from `ksyms`.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)] // compile time only
const fn duration(ksyms: u64, symbol: Symbol) -> u64 {
    match symbol {
        Symbol::HtLgi => ksyms * 4,
        Symbol::HtSgi => ksyms * 72 / 20,
        Symbol::HeGi08 => ksyms * 16 * 17 / 20,
        Symbol::HeGi16 => ksyms * 16 * 18 / 20,
        Symbol::HeGi32 => ksyms * 16,
    }
}

/// Step 1: `ceil(8192 x 1024 / (nss x bits))`.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)] // compile time only
const fn ksyms(bits: u16, nss: u8) -> u64 {
    let nbits = REFERENCE_FRAME_BYTES * 8 * 1024;
    let per_symbol = bits as u64 * nss as u64;
    nbits.div_ceil(per_symbol)
}

/// Number of significant bits (0 for 0).
const fn bit_length(x: u64) -> u32 {
    u64::BITS.saturating_sub(x.leading_zeros())
}

/// One group of the table: the storage shift and the stored entries, MCS 0 first.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Group<const N: usize> {
    /// The shift that brings every entry into a `u16` (from the MCS0 entry).
    pub shift: u8,
    /// `t >> shift` per MCS.
    pub entries: [u16; N],
}

/// Builds one group from its bits-per-symbol row (step 1 to 3).
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)] // compile time only
const fn group<const N: usize>(bits: &[u16; N], nss: u8, symbol: Symbol) -> Group<N> {
    let shift = bit_length(duration(ksyms(bits[0], nss), symbol)).saturating_sub(16);
    let mut entries = [0u16; N];
    let mut mcs = 0;
    while mcs < N {
        let stored = duration(ksyms(bits[mcs], nss), symbol) >> shift;
        // Compile-time check: the rows rise with the MCS, so MCS0 is the largest entry.
        assert!(stored <= u16::MAX as u64, "table entry does not fit its u16");
        entries[mcs] = stored as u16;
        mcs += 1;
    }
    Group { shift: shift as u8, entries }
}

/// Builds every group of an encoding, at index `(bw x GIS + gi) x max_nss + (nss - 1)`.
/// `G` must be `BW x GIS x max_nss`; any other size fails the build.
#[allow(clippy::arithmetic_side_effects, clippy::indexing_slicing)] // compile time only
const fn groups<const N: usize, const BW: usize, const GIS: usize, const G: usize>(
    rows: &[[u16; N]; BW],
    symbols: &[Symbol; GIS],
    max_nss: u8,
) -> [Group<N>; G] {
    assert!(G == BW * GIS * max_nss as usize, "group count does not match the table shape");
    let mut out = [Group { shift: 0, entries: [0u16; N] }; G];
    let mut bw = 0;
    while bw < BW {
        let mut gi = 0;
        while gi < GIS {
            let mut nss = 1u8;
            while nss <= max_nss {
                out[(bw * GIS + gi) * max_nss as usize + (nss as usize - 1)] = group(&rows[bw], nss, symbols[gi]);
                nss += 1;
            }
            gi += 1;
        }
        bw += 1;
    }
    out
}

/// Data bits per symbol per stream (the values mainline's airtime.c uses,
/// including its rounding, e.g. 115 for HE20 MCS0 and 2937 for EHT160 MCS2).
pub mod bits {
    /// HT MCS0..7 at 20 and 40 MHz.
    pub const HT: [[u16; 8]; 2] = [[26, 52, 78, 104, 156, 208, 234, 260], [54, 108, 162, 216, 324, 432, 486, 540]];
    /// VHT MCS0..9 at 20, 40, 80, 160 MHz.
    pub const VHT: [[u16; 10]; 4] = [
        [26, 52, 78, 104, 156, 208, 234, 260, 312, 346],
        [54, 108, 162, 216, 324, 432, 486, 540, 648, 720],
        [117, 234, 351, 468, 702, 936, 1053, 1170, 1404, 1560],
        [234, 468, 702, 936, 1404, 1872, 2106, 2340, 2808, 3120],
    ];
    /// HE MCS0..11 at 20, 40, 80, 160 MHz.
    pub const HE: [[u16; 12]; 4] = [
        [115, 230, 345, 475, 705, 936, 1051, 1166, 1411, 1555, 1756, 1944],
        [230, 475, 705, 936, 1411, 1872, 2102, 2347, 2808, 3124, 3513, 3902],
        [489, 979, 1468, 1958, 2937, 3916, 4406, 4896, 5875, 6523, 7344, 8164],
        [979, 1958, 2937, 3916, 5875, 7833, 8827, 9806, 11764, 13060, 14702, 16329],
    ];
    /// EHT MCS0..13 at 20, 40, 80, 160, 320 MHz.
    pub const EHT: [[u16; 14]; 5] = [
        [117, 234, 351, 468, 702, 936, 1053, 1170, 1404, 1560, 1755, 1950, 2106, 2340],
        [234, 468, 702, 936, 1404, 1872, 2106, 2340, 2808, 3120, 3510, 3900, 4212, 4680],
        [490, 980, 1470, 1960, 2940, 3920, 4410, 4900, 5880, 6533, 7350, 8166, 8820, 9800],
        [980, 1960, 2937, 3920, 5880, 7840, 8820, 9800, 11760, 13066, 14700, 16333, 17640, 19600],
        [1960, 3920, 5880, 7840, 11760, 15680, 17640, 19600, 23520, 26133, 29400, 32666, 35280, 39200],
    ];
}

const HT_SYMBOLS: [Symbol; 2] = [Symbol::HtLgi, Symbol::HtSgi];
const HE_SYMBOLS: [Symbol; 3] = [Symbol::HeGi08, Symbol::HeGi16, Symbol::HeGi32];

/// Streams per HT group set (the MCS index carries up to 4).
pub const HT_MAX_NSS: u8 = 4;
/// Streams per VHT/HE/EHT group set (VHT: 8, beyond mainline's 4; see `Rate::vht`).
pub const MAX_NSS: u8 = 8;

/// HT groups: index `(bw x 2 + sgi) x 4 + (nss - 1)`.
pub const HT: [Group<8>; 16] = groups(&bits::HT, &HT_SYMBOLS, HT_MAX_NSS);
/// VHT groups: index `(bw x 2 + sgi) x 8 + (nss - 1)`.
pub const VHT: [Group<10>; 64] = groups(&bits::VHT, &HT_SYMBOLS, MAX_NSS);
/// HE groups: index `(bw x 3 + gi) x 8 + (nss - 1)`.
pub const HE: [Group<12>; 96] = groups(&bits::HE, &HE_SYMBOLS, MAX_NSS);
/// EHT groups: index `(bw x 3 + gi) x 8 + (nss - 1)`.
pub const EHT: [Group<14>; 120] = groups(&bits::EHT, &HE_SYMBOLS, MAX_NSS);

/// Looks a rate up: `(shift, stored entry)`, or `None` outside the tables.
///
/// `gi` is 0/1 (long/short) for HT/VHT and 0..=2 for HE/EHT. For HT, `mcs` is the full
/// 0..=31 index and `nss` must be `mcs / 8 + 1`. Every index is checked: out-of-range input
/// gives `None`, never a panic.
pub(crate) const fn lookup(encoding: Encoding, mcs: u8, nss: u8, bw: Bandwidth, gi: u8) -> Option<(u8, u16)> {
    // Every operand is a few bits wide after the range checks, so wrapping ops never wrap;
    // any index they produce is bounds-checked again by `entry`.
    let Some(n) = nss.checked_sub(1) else {
        return None;
    };
    let n = n as usize;
    let b = bw.index();
    let g = gi as usize;
    let m = mcs as usize;
    // Guard intervals, bandwidths and stream counts of each encoding's group set.
    let (gis, bws, streams) = match encoding {
        Encoding::Ht => (2, 2, HT_MAX_NSS as usize),
        Encoding::Vht => (2, 4, MAX_NSS as usize),
        Encoding::He => (3, 4, MAX_NSS as usize),
        Encoding::Eht => (3, 5, MAX_NSS as usize),
        Encoding::Cck | Encoding::Ofdm => return None,
    };
    if g >= gis || b >= bws || n >= streams {
        return None;
    }
    let row = b.wrapping_mul(gis).wrapping_add(g);
    match encoding {
        Encoding::Ht => {
            if m >> 3 != n {
                return None;
            }
            entry(&HT, row.wrapping_mul(HT_MAX_NSS as usize).wrapping_add(n), m & 7)
        }
        Encoding::Vht => entry(&VHT, row.wrapping_mul(MAX_NSS as usize).wrapping_add(n), m),
        Encoding::He => entry(&HE, row.wrapping_mul(MAX_NSS as usize).wrapping_add(n), m),
        _ => entry(&EHT, row.wrapping_mul(MAX_NSS as usize).wrapping_add(n), m),
    }
}

/// Bounds-checked read of one entry.
#[allow(clippy::indexing_slicing)] // both indices are checked on the line before
const fn entry<const N: usize>(table: &[Group<N>], group: usize, mcs: usize) -> Option<(u8, u16)> {
    if group < table.len() && mcs < N {
        let g = &table[group];
        Some((g.shift, g.entries[mcs]))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::rate::{HeGi, Rate};
    use std::vec::Vec;

    /// The table construction written out again, plainly, without the const machinery:
    /// returns `(shift, stored)` for every MCS of the row.
    ///
    /// This checks the `const fn` builder and the lookup, not the data: it starts from the
    /// crate's own [`bits`] rows, so a wrong row passes it. The rows (and every shift and
    /// entry) are checked against values from outside the crate by `tests/golden.rs`.
    #[allow(clippy::manual_div_ceil)] // spelled out on purpose: not the code under test
    fn recompute(row: &[u16], nss: u64, num: u64, den: u64) -> Vec<(u32, u64)> {
        let t: Vec<u64> = row
            .iter()
            .map(|&b| {
                let per_symbol = u64::from(b) * nss;
                let ksyms = (8192 * 1024 + per_symbol - 1) / per_symbol;
                ksyms * num / den
            })
            .collect();
        let bits = 64 - t[0].leading_zeros();
        let shift = bits.saturating_sub(16);
        t.iter().map(|&x| (shift, x >> shift)).collect()
    }

    /// Symbol time as a fraction (numerator, denominator) in us.
    fn symbol(encoding: Encoding, gi: u8) -> (u64, u64) {
        match (encoding, gi) {
            (Encoding::Ht | Encoding::Vht, 0) => (4, 1),
            (Encoding::Ht | Encoding::Vht, _) => (72, 20),
            (_, 0) => (16 * 17, 20),
            (_, 1) => (16 * 18, 20),
            _ => (16, 1),
        }
    }

    fn check_family(
        encoding: Encoding,
        rows: &[&[u16]],
        gis: u8,
        nss_max: u8,
        mut make: impl FnMut(u8, u8, usize, u8) -> Result<Rate, crate::RateError>,
    ) -> usize {
        let mut checked = 0;
        for (bw, row) in rows.iter().enumerate() {
            for gi in 0..gis {
                for nss in 1..=nss_max {
                    let (num, den) = symbol(encoding, gi);
                    let expect = recompute(row, u64::from(nss), num, den);
                    for (mcs, &(shift, stored)) in expect.iter().enumerate() {
                        let rate = make(mcs as u8, nss, bw, gi).unwrap();
                        let (s, v, _) = rate.raw();
                        assert_eq!((u32::from(s), u64::from(v)), (shift, stored), "{rate}: stored entry");
                        assert_eq!(rate.table_duration(), Some((stored << shift) as u32), "{rate}");
                        checked += 1;
                    }
                }
            }
        }
        checked
    }

    const BWS: [Bandwidth; 5] = Bandwidth::ALL;

    #[test]
    fn every_entry_matches_a_plain_recomputation_from_the_same_rows() {
        let ht: Vec<&[u16]> = bits::HT.iter().map(|r| &r[..]).collect();
        let n =
            check_family(Encoding::Ht, &ht, 2, 4, |mcs, nss, bw, gi| Rate::ht((nss - 1) * 8 + mcs, BWS[bw], gi == 1));
        assert_eq!(n, 2 * 2 * 4 * 8);
        let vht: Vec<&[u16]> = bits::VHT.iter().map(|r| &r[..]).collect();
        let n = check_family(Encoding::Vht, &vht, 2, 8, |mcs, nss, bw, gi| Rate::vht(mcs, nss, BWS[bw], gi == 1));
        assert_eq!(n, 4 * 2 * 8 * 10);
        let he: Vec<&[u16]> = bits::HE.iter().map(|r| &r[..]).collect();
        let n = check_family(Encoding::He, &he, 3, 8, |mcs, nss, bw, gi| {
            Rate::he(mcs, nss, BWS[bw], HeGi::ALL[usize::from(gi)])
        });
        assert_eq!(n, 4 * 3 * 8 * 12);
        let eht: Vec<&[u16]> = bits::EHT.iter().map(|r| &r[..]).collect();
        let n = check_family(Encoding::Eht, &eht, 3, 8, |mcs, nss, bw, gi| {
            Rate::eht(mcs, nss, BWS[bw], HeGi::ALL[usize::from(gi)])
        });
        assert_eq!(n, 5 * 3 * 8 * 14);
    }

    #[test]
    fn vht80_mcs9_sgi_and_vht20_mcs0_lgi_table_entries() {
        // A: VHT80 1SS MCS9 SGI: ksyms 5378, t = 19 360; group shift 2 (t0 = 258 112).
        let a = Rate::vht(9, 1, Bandwidth::Mhz80, true).unwrap();
        assert_eq!(a.table_duration(), Some(19_360));
        assert_eq!(a.raw().0, 2);
        assert_eq!(ksyms(1560, 1), 5378);
        assert_eq!(ksyms(117, 1), 71_698);
        assert_eq!(duration(71_698, Symbol::HtSgi), 258_112);
        // LGI variant: t = 21 512.
        let lgi = Rate::vht(9, 1, Bandwidth::Mhz80, false).unwrap();
        assert_eq!(lgi.table_duration(), Some(21_512));
        // B: VHT20 1SS MCS0 LGI: t = 1 290 556 (21 bits), shift 5, stored 40 329, 1 290 528.
        assert_eq!(ksyms(26, 1), 322_639);
        assert_eq!(duration(322_639, Symbol::HtLgi), 1_290_556);
        let b = Rate::vht(0, 1, Bandwidth::Mhz20, false).unwrap();
        assert_eq!(b.raw().0, 5);
        assert_eq!(b.raw().1, 40_329);
        assert_eq!(b.table_duration(), Some(1_290_528));
        // HT20 MCS0 LGI is the same row and the same entry.
        let ht = Rate::ht(0, Bandwidth::Mhz20, false).unwrap();
        assert_eq!(ht.table_duration(), Some(1_290_528));
        // VHT80 1SS MCS0 LGI: t = 286 792.
        let c = Rate::vht(0, 1, Bandwidth::Mhz80, false).unwrap();
        assert_eq!(c.table_duration(), Some(286_792));
    }

    #[test]
    fn the_vht160_243_typo_would_not_change_any_shift() {
        // Mainline's airtime.c derives the VHT160 shift from 243 bits, not 234.
        for nss in 1..=8u8 {
            for symbol in HT_SYMBOLS {
                let typo = bit_length(duration(ksyms(243, nss), symbol)).saturating_sub(16);
                let ours = bit_length(duration(ksyms(234, nss), symbol)).saturating_sub(16);
                assert_eq!(typo, ours, "nss {nss} {symbol:?}");
            }
        }
    }

    #[test]
    fn lookup_answers_exactly_inside_the_tables() {
        // Together with the recomputation above (which checks every value reached through
        // the constructors), this shows no out-of-range input aliases another group.
        let encodings = [Encoding::Cck, Encoding::Ofdm, Encoding::Ht, Encoding::Vht, Encoding::He, Encoding::Eht];
        for encoding in encodings {
            for mcs in 0..=40u8 {
                for nss in 0..=12u8 {
                    for bw in Bandwidth::ALL {
                        for gi in 0..=4u8 {
                            let b = bw.index();
                            let valid = match encoding {
                                Encoding::Ht => mcs <= 31 && nss == mcs / 8 + 1 && b <= 1 && gi <= 1,
                                Encoding::Vht => mcs <= 9 && (1..=8).contains(&nss) && b <= 3 && gi <= 1,
                                Encoding::He => mcs <= 11 && (1..=8).contains(&nss) && b <= 3 && gi <= 2,
                                Encoding::Eht => mcs <= 13 && (1..=8).contains(&nss) && gi <= 2,
                                _ => false,
                            };
                            let got = lookup(encoding, mcs, nss, bw, gi);
                            assert_eq!(got.is_some(), valid, "{encoding} mcs {mcs} nss {nss} {bw} gi {gi}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn lookup_refuses_out_of_range_input() {
        assert_eq!(lookup(Encoding::Vht, 10, 1, Bandwidth::Mhz20, 0), None);
        assert_eq!(lookup(Encoding::Vht, 0, 9, Bandwidth::Mhz20, 0), None);
        assert_eq!(lookup(Encoding::Vht, 0, 0, Bandwidth::Mhz20, 0), None);
        assert_eq!(lookup(Encoding::Vht, 0, 1, Bandwidth::Mhz320, 0), None);
        assert_eq!(lookup(Encoding::Ht, 8, 1, Bandwidth::Mhz20, 0), None);
        assert_eq!(lookup(Encoding::He, 0, 1, Bandwidth::Mhz20, 3), None);
        assert_eq!(lookup(Encoding::Eht, 14, 1, Bandwidth::Mhz20, 0), None);
        assert_eq!(lookup(Encoding::Ofdm, 0, 1, Bandwidth::Mhz20, 0), None);
    }
}
