// SPDX-License-Identifier: MIT OR GPL-2.0-only
//! Bug-compatible reproductions of mainline's 32-bit arithmetic, for comparison only.
//!
//! Mainline multiplies the table entry by the length in 32 bits (`ieee80211_calc_rx_airtime`
//! and `ieee80211_calc_expected_tx_airtime` both do). The entry of HT20/VHT20 MCS0 long GI
//! is 1 290 528, so `t x L` passes 2^32 above 3328 bytes and the estimate wraps to a small,
//! wrong value: a large A-MSDU at the lowest rate is under-charged. Slower entries wrap at
//! longer frames: in the expected estimate (`L` = frame + 38) 28 of mainline's 3280 MCS
//! rates wrap for a 7935-byte frame and 52 for an 11 454-byte one, all at 20 or 40 MHz. The functions here wrap
//! exactly as mainline does; the crate's own functions ([`crate::expected_tx_airtime_us`]
//! and friends) do not, and equal these wherever the product stays below 2^32.
//!
//! Mainline's tables stop at 4 VHT streams: its lookup (`ieee80211_get_rate_duration`) gives
//! duration 0 for VHT with 5 to 8 streams and leaves the PPDU overhead unset. A frame of such a
//! rate then costs 0 on every non-aggregated path, and 4 us (the floor) aggregated; so here.
//!
//! ```
//! use airtime_est::{expected_tx_airtime_us, mainline, Bandwidth, Rate};
//! let mcs0 = Rate::vht(0, 1, Bandwidth::Mhz20, false)?;
//! assert_eq!(expected_tx_airtime_us(mcs0, 4000, true), 4989);
//! assert_eq!(mainline::expected_tx_airtime_u32(mcs0, 4000, true), 893);
//! # Ok::<(), airtime_est::RateError>(())
//! ```

use crate::estimate::{LENGTH_PADDING_BYTES, MAX_RETRY_STAGES, MIN_AGGREGATED_US, RetryStage, agg_shift};
use crate::rate::{Encoding, Rate};

/// `(t, overhead)` as mainline's lookup gives them, or `None` where its lookup returns
/// duration 0 without setting the overhead (VHT above 4 streams).
fn mcs_duration(rate: Rate) -> Option<(u32, u32)> {
    if matches!(rate.encoding(), Encoding::Vht) && rate.nss() > 4 {
        return None;
    }
    Some((rate.table_duration()?, rate.ppdu_overhead_us()?))
}

/// Mainline's legacy duration in wrapping `u32` (`ieee80211_calc_legacy_rate_duration`).
fn legacy_u32(rate: Rate, len: u32) -> u32 {
    let overhead: u32 = match rate.encoding() {
        Encoding::Cck if rate.short_preamble() => 96 + 10,
        Encoding::Cck => 192 + 10,
        _ => 20 + 16,
    };
    let bitrate = u32::from(rate.legacy_rate_100kbps().unwrap_or(0));
    let data = len.wrapping_mul(8).wrapping_mul(10).checked_div(bitrate).unwrap_or(0);
    overhead.wrapping_add(data)
}

/// `ieee80211_calc_rx_airtime` with mainline's 32-bit product: airtime of one non-aggregated
/// frame of `len` bytes. 0 where mainline cannot price the rate (VHT above 4 streams).
pub fn rx_airtime_u32(rate: Rate, len: u32) -> u32 {
    if rate.encoding().is_legacy() {
        return legacy_u32(rate, len);
    }
    match mcs_duration(rate) {
        Some((t, overhead)) => (t.wrapping_mul(len) / 1024 / 1024).wrapping_add(overhead),
        None => 0,
    }
}

/// `ieee80211_calc_tx_airtime` with mainline's 32-bit arithmetic: the first four stages, ending
/// at the first stage with no tries or a zero price, each `tries x` [`rx_airtime_u32`], summed
/// in wrapping `u32`.
pub fn tx_airtime_u32(chain: &[RetryStage], len: u32) -> u32 {
    let mut total = 0u32;
    for stage in chain.iter().take(MAX_RETRY_STAGES) {
        let one = rx_airtime_u32(stage.rate, len);
        if stage.tries == 0 || one == 0 {
            break;
        }
        total = total.wrapping_add(one.wrapping_mul(u32::from(stage.tries)));
    }
    total
}

/// `ieee80211_calc_expected_tx_airtime` with mainline's 32-bit arithmetic:
/// `L = frame_len + 38` (wrapping), then
/// `max(4, (t x L mod 2^32) / 2^20 + (overhead >> agg_shift))` when aggregated, else
/// [`rx_airtime_u32`] of `L`.
///
/// Aggregated, a rate mainline cannot price (VHT above 4 streams) is not 0 but the floor,
/// 4 us: mainline returns early only on the non-aggregated path; on the aggregated one its
/// lookup gives duration 0 and leaves the overhead at the 0 it was initialised to (6.18;
/// older kernels left that overhead uninitialised), so it returns `max(0 + (0 >> 5), 4)`.
pub fn expected_tx_airtime_u32(rate: Rate, frame_len: u32, aggregated: bool) -> u32 {
    let len = frame_len.wrapping_add(LENGTH_PADDING_BYTES);
    if rate.encoding().is_legacy() || !aggregated {
        return rx_airtime_u32(rate, len);
    }
    let (t, overhead) = mcs_duration(rate).unwrap_or((0, 0));
    let shared = overhead >> agg_shift(rate.encoding(), t);
    (t.wrapping_mul(len) / 1024 / 1024).wrapping_add(shared).max(MIN_AGGREGATED_US)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::Bandwidth;
    use crate::{expected_tx_airtime_us, rx_airtime_us};

    #[test]
    fn mcs0_at_4000_bytes_wraps_in_mainline_only() {
        // t = 1 290 528; L = 4038; t x L = 5 211 152 064 > 2^32.
        for rate in [Rate::vht(0, 1, Bandwidth::Mhz20, false).unwrap(), Rate::ht(0, Bandwidth::Mhz20, false).unwrap()] {
            let t = u64::from(rate.table_duration().unwrap());
            let l = 4038u64;
            assert!(t * l > u64::from(u32::MAX));
            // Ours: floor(5 211 152 064 / 2^20) = 4969, + 20 (agg) or + 40.
            assert_eq!(expected_tx_airtime_us(rate, 4000, true), 4969 + 20);
            assert_eq!(expected_tx_airtime_us(rate, 4000, false), 4969 + 40);
            // Mainline: (5 211 152 064 - 2^32) / 2^20 = 873, + 20 / + 40.
            let wrapped = (t * l - (1u64 << 32)) >> 20;
            assert_eq!(wrapped, 873);
            assert_eq!(expected_tx_airtime_u32(rate, 4000, true), 873 + 20);
            assert_eq!(expected_tx_airtime_u32(rate, 4000, false), 873 + 40);
        }
    }

    #[test]
    fn mainline_wraps_exactly_above_3328_bytes() {
        // Mainline's 32-bit product: VHT20/HT20 MCS0 LGI wraps for L > 3328.
        let rate = Rate::vht(0, 1, Bandwidth::Mhz20, false).unwrap();
        assert_eq!(rx_airtime_u32(rate, 3328), rx_airtime_us(rate, 3328));
        assert_ne!(rx_airtime_u32(rate, 3329), rx_airtime_us(rate, 3329));
    }

    #[test]
    fn vht_above_four_streams_is_unpriced_in_mainline_only() {
        for nss in 5..=8 {
            let rate = Rate::vht(9, nss, Bandwidth::Mhz80, true).unwrap();
            // Non-aggregated paths: mainline returns 0 as soon as the lookup gives 0.
            assert_eq!(rx_airtime_u32(rate, 1500), 0);
            assert_eq!(expected_tx_airtime_u32(rate, 1500, false), 0);
            let chain = [RetryStage { rate, tries: 1 }];
            assert_eq!(tx_airtime_u32(&chain, 1500), 0);
            // Aggregated: duration 0, overhead 0, so only the 4 us floor is left.
            assert_eq!(expected_tx_airtime_u32(rate, 1500, true), MIN_AGGREGATED_US);
            assert_eq!(expected_tx_airtime_u32(rate, 0, true), 4);
            // Ours prices them from the extended table, far above the floor.
            assert!(expected_tx_airtime_us(rate, 1500, true) > 4);
            assert!(rx_airtime_us(rate, 1500) > 0);
        }
        // Four streams are in mainline's tables: both agree.
        let four = Rate::vht(9, 4, Bandwidth::Mhz80, true).unwrap();
        assert_eq!(expected_tx_airtime_u32(four, 1500, true), expected_tx_airtime_us(four, 1500, true));
    }
}
