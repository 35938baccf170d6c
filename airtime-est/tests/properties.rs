//! Properties of the estimates over the whole input domain.
//!
//! What holds, and what does not (checked over every table entry):
//! * every estimate is non-decreasing in the frame length;
//! * within one encoding, streams, bandwidth and GI, it is non-increasing as the MCS rises
//!   (HT: within the MCS block of one stream count, `mcs % 8` rising);
//! * it is non-increasing as the bandwidth widens, and non-decreasing as the guard interval
//!   lengthens (HT/VHT long GI >= short; HE/EHT 3.2 >= 1.6 >= 0.8);
//! * it is **not** monotone in the stream count: the data part shrinks, but the PPDU overhead
//!   grows by 4 us per stream (36 + 4 x N), so short frames take longer with more streams
//!   (a 0-byte frame: 40 us at 1SS, 44 us at 2SS). The true statement is that the table
//!   duration never rises with the stream count, and the estimate rises by at most 4 us per
//!   added stream;
//! * an aggregated estimate is never above the non-aggregated one;
//! * the 64-bit estimate equals mainline's 32-bit one wherever mainline does not wrap;
//! * nothing panics for any constructor input or any length up to `u32::MAX`.

mod common;

use airtime_est::{Bandwidth, HeGi, Rate, RetryStage, expected_tx_airtime_us, mainline, rx_airtime_us, tx_airtime_us};
use common::*;
use proptest::prelude::*;

/// The three length-dependent estimates of a rate.
fn estimates(rate: Rate, len: u32) -> [u32; 3] {
    [expected_tx_airtime_us(rate, len, true), expected_tx_airtime_us(rate, len, false), rx_airtime_us(rate, len)]
}

fn le(a: [u32; 3], b: [u32; 3]) -> bool {
    a.iter().zip(b.iter()).all(|(x, y)| x <= y)
}

/// The rate with one stream more, or the same rate with another bandwidth or GI, if valid.
fn with(rate: Rate, nss: u8, bw: Bandwidth, gi: Option<HeGi>, sgi: bool) -> Option<Rate> {
    let mcs = rate.mcs()?;
    match rate.encoding() {
        airtime_est::Encoding::Ht => Rate::ht((nss - 1) * 8 + mcs % 8, bw, sgi).ok(),
        airtime_est::Encoding::Vht => Rate::vht(mcs, nss, bw, sgi).ok(),
        airtime_est::Encoding::He => Rate::he(mcs, nss, bw, gi?).ok(),
        airtime_est::Encoding::Eht => Rate::eht(mcs, nss, bw, gi?).ok(),
        _ => None,
    }
}

/// Wider: never slower. Longer guard interval: never faster.
fn check_gi_and_bandwidth(rate: Rate, len: u32) -> Result<(), TestCaseError> {
    let (nss, bw, gi, sgi) = (rate.nss(), rate.bandwidth(), rate.he_gi(), rate.short_gi());
    for wider in Bandwidth::ALL.into_iter().filter(|b| *b > bw) {
        if let Some(w) = with(rate, nss, wider, gi, sgi) {
            prop_assert!(le(estimates(w, len), estimates(rate, len)), "{} -> {}", rate, w);
        }
    }
    if sgi {
        let lgi = with(rate, nss, bw, gi, false).unwrap();
        prop_assert!(le(estimates(rate, len), estimates(lgi, len)));
    }
    if let Some(g) = gi {
        for longer in HeGi::ALL.into_iter().filter(|x| *x > g) {
            let l = with(rate, nss, bw, Some(longer), sgi).unwrap();
            prop_assert!(le(estimates(rate, len), estimates(l, len)), "{} -> {}", rate, l);
        }
    }
    Ok(())
}

/// Lengths around every threshold the tables and mainline care about.
const LENGTHS: [u32; 12] = [0, 1, 60, 100, 1500, 1538, 3290, 3328, 4000, 65_535, 1_000_000, u32::MAX];

#[test]
fn gi_and_bandwidth_monotone_for_every_rate() {
    for rate in all_rates() {
        for len in LENGTHS {
            check_gi_and_bandwidth(rate, len).unwrap();
            let agg = expected_tx_airtime_us(rate, len, true);
            assert!(agg <= expected_tx_airtime_us(rate, len, false), "{rate} {len}");
        }
    }
}

#[test]
fn more_streams_can_cost_more_for_short_frames() {
    // The documented quirk: the 4 us/stream overhead outweighs the shorter data part.
    let one = Rate::vht(9, 1, Bandwidth::Mhz80, true).unwrap();
    let two = Rate::vht(9, 2, Bandwidth::Mhz80, true).unwrap();
    assert_eq!(rx_airtime_us(one, 0), 40);
    assert_eq!(rx_airtime_us(two, 0), 44);
    assert!(rx_airtime_us(two, 1538) < rx_airtime_us(one, 1538));
}

#[test]
fn table_duration_never_rises_with_streams_mcs_or_bandwidth() {
    for rate in all_rates() {
        let Some(t) = rate.table_duration() else { continue };
        let nss = rate.nss();
        let gi = rate.he_gi();
        let sgi = rate.short_gi();
        if nss < 8
            && let Some(more) = with(rate, nss + 1, rate.bandwidth(), gi, sgi)
        {
            assert!(more.table_duration().unwrap() < t, "{rate} -> {more}");
        }
        for bw in Bandwidth::ALL.into_iter().filter(|b| *b > rate.bandwidth()) {
            if let Some(wider) = with(rate, nss, bw, gi, sgi) {
                assert!(wider.table_duration().unwrap() < t, "{rate} -> {wider}");
            }
        }
    }
    for group in groups() {
        for pair in group.rates.windows(2) {
            assert!(pair[1].table_duration() < pair[0].table_duration(), "{}", pair[1]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn non_decreasing_in_length(rate in any_rate(), a in any_len(), b in any_len()) {
        let (short, long) = (a.min(b), a.max(b));
        prop_assert!(le(estimates(rate, short), estimates(rate, long)));
        let chain = [RetryStage { rate, tries: 3 }];
        prop_assert!(tx_airtime_us(&chain, short) <= tx_airtime_us(&chain, long));
    }

    #[test]
    fn aggregated_never_above_single(rate in any_rate(), len in any_len()) {
        prop_assert!(expected_tx_airtime_us(rate, len, true) <= expected_tx_airtime_us(rate, len, false));
        prop_assert!(expected_tx_airtime_us(rate, len, true) >= airtime_est::MIN_AGGREGATED_US);
    }

    #[test]
    fn stream_count_adds_at_most_four_us(rate in any_rate(), len in any_len()) {
        let next = if rate.nss() < 8 {
            with(rate, rate.nss() + 1, rate.bandwidth(), rate.he_gi(), rate.short_gi())
        } else {
            None
        };
        if let Some(more) = next {
            let (a, b) = (estimates(rate, len), estimates(more, len));
            for i in 0..3 {
                prop_assert!(b[i] <= a[i].saturating_add(4), "{} -> {}: {:?} {:?}", rate, more, a, b);
            }
        }
    }

    #[test]
    fn gi_and_bandwidth_monotone(rate in any_rate(), len in any_len()) {
        check_gi_and_bandwidth(rate, len)?;
    }

    #[test]
    fn non_increasing_as_mcs_rises(len in any_len()) {
        for group in groups() {
            for pair in group.rates.windows(2) {
                prop_assert!(le(estimates(pair[1], len), estimates(pair[0], len)), "{}", pair[1]);
            }
        }
    }

    #[test]
    fn equals_mainline_where_mainline_does_not_wrap(rate in any_rate(), len in 0u32..200_000) {
        let vht_beyond_mainline =
            rate.encoding() == airtime_est::Encoding::Vht && rate.nss() > 4;
        prop_assume!(!vht_beyond_mainline);
        for (l, aggregated) in [(len, true), (len, false)] {
            let padded = u64::from(l) + 38;
            let fits = match rate.table_duration() {
                Some(t) => u64::from(t) * padded < 1 << 32,
                None => padded * 80 < 1 << 32,
            };
            if fits {
                prop_assert_eq!(
                    expected_tx_airtime_us(rate, l, aggregated),
                    mainline::expected_tx_airtime_u32(rate, l, aggregated)
                );
            }
        }
        let fits_rx = match rate.table_duration() {
            Some(t) => u64::from(t) * u64::from(len) < 1 << 32,
            None => u64::from(len) * 80 < 1 << 32,
        };
        if fits_rx {
            prop_assert_eq!(rx_airtime_us(rate, len), mainline::rx_airtime_u32(rate, len));
        }
    }

    #[test]
    fn retry_chain_is_the_sum_of_its_stages(
        stages in proptest::collection::vec((any_rate(), 0u8..5), 0..6),
        len in 0u32..100_000,
    ) {
        let chain: Vec<RetryStage> = stages.iter().map(|&(rate, tries)| RetryStage { rate, tries }).collect();
        let expect: u64 = chain
            .iter()
            .take(4)
            .take_while(|s| s.tries > 0)
            .map(|s| u64::from(rx_airtime_us(s.rate, len)) * u64::from(s.tries))
            .sum();
        prop_assert_eq!(u64::from(tx_airtime_us(&chain, len)), expect);
    }

    #[test]
    fn no_constructor_input_panics(
        mcs in any::<u8>(), nss in any::<u8>(), bw in any_bw(), gi in any_gi(),
        sgi in any::<bool>(), legacy in any::<u16>(), len in any_len(), tries in any::<u8>(),
    ) {
        let rates = [
            Rate::legacy_cck(legacy, sgi),
            Rate::legacy_ofdm(legacy),
            Rate::ht(mcs, bw, sgi),
            Rate::vht(mcs, nss, bw, sgi),
            Rate::he(mcs, nss, bw, gi),
            Rate::eht(mcs, nss, bw, gi),
        ];
        for rate in rates.into_iter().flatten() {
            let e = estimates(rate, len);
            prop_assert!(e.iter().all(|&us| us > 0));
            let _ = rate.phy_rate_kbps();
            let chain = [RetryStage { rate, tries }; 4];
            let _ = tx_airtime_us(&chain, len);
            let _ = mainline::expected_tx_airtime_u32(rate, len, true);
            let _ = mainline::tx_airtime_u32(&chain, len);
        }
        for r in rates.iter().filter_map(|r| r.err()) {
            prop_assert!(!r.to_string().is_empty());
        }
    }
}

#[test]
fn constructors_accept_exactly_the_documented_domain() {
    let mut accepted = 0;
    for mcs in 0..=u8::MAX {
        for nss in 0..=u8::MAX {
            for bw in Bandwidth::ALL {
                for gi in HeGi::ALL {
                    let vht = Rate::vht(mcs, nss, bw, false).is_ok();
                    assert_eq!(vht, mcs <= 9 && (1..=8).contains(&nss) && bw <= Bandwidth::Mhz160);
                    let he = Rate::he(mcs, nss, bw, gi).is_ok();
                    assert_eq!(he, mcs <= 11 && (1..=8).contains(&nss) && bw <= Bandwidth::Mhz160);
                    let eht = Rate::eht(mcs, nss, bw, gi).is_ok();
                    assert_eq!(eht, mcs <= 13 && (1..=8).contains(&nss));
                    accepted += usize::from(vht) + usize::from(he) + usize::from(eht);
                }
            }
        }
        for bw in Bandwidth::ALL {
            let ht = Rate::ht(mcs, bw, true).is_ok();
            assert_eq!(ht, mcs <= 31 && bw <= Bandwidth::Mhz40);
        }
    }
    assert_eq!(accepted, 10 * 8 * 4 * 3 + 12 * 8 * 4 * 3 + 14 * 8 * 5 * 3);
    assert_eq!(all_rates().len(), 7 + 8 + 128 + 640 + 1152 + 1680);
}

#[test]
fn every_rate_equals_mainline_up_to_3290_bytes() {
    // The largest table entry is HT20/VHT20 MCS0 long GI, 1 290 528: with the +38, frames up
    // to 3290 bytes keep t x L below 2^32 at every rate, so mainline cannot wrap there.
    let beyond_mainline = |r: &Rate| r.encoding() == airtime_est::Encoding::Vht && r.nss() > 4;
    let rates: Vec<Rate> = all_rates().into_iter().filter(|r| !beyond_mainline(r)).collect();
    assert!(rates.iter().all(|r| r.table_duration().is_none_or(|t| u64::from(t) * 3328 < 1 << 32)));
    for rate in rates {
        for len in (0..=3290).step_by(7).chain([3290]) {
            for aggregated in [true, false] {
                assert_eq!(
                    expected_tx_airtime_us(rate, len, aggregated),
                    mainline::expected_tx_airtime_u32(rate, len, aggregated),
                    "{rate} {len} {aggregated}"
                );
            }
            assert_eq!(rx_airtime_us(rate, len), mainline::rx_airtime_u32(rate, len), "{rate} {len}");
        }
    }
}
