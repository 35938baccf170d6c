// SPDX-License-Identifier: MIT OR GPL-2.0-only
//! The three estimates (mainline's `ieee80211_calc_rx_airtime`, `ieee80211_calc_tx_airtime`
//! and `ieee80211_calc_expected_tx_airtime`) and the AQL charge quantisation (multiples of 4 us,
//! as `ieee80211_tx_dequeue` charges).
//!
//! All arithmetic is 64-bit and saturates at `u32::MAX`: for a table entry `t` (below 2^21)
//! and any `u32` length, `t x len` is below 2^54, so nothing here can wrap, and the results
//! equal mainline's wherever mainline's own 32-bit product does not wrap (see
//! [`crate::mainline`]).

use crate::rate::{Encoding, Rate};

/// Bytes added to the frame length by the expected-airtime estimate (its first
/// step in `ieee80211_calc_expected_tx_airtime`; mainline calls it the Ethernet header length).
pub const LENGTH_PADDING_BYTES: u32 = 38;

/// Floor of the aggregated (A-MPDU) expected airtime, in us (the `max(4, ..)` of
/// `ieee80211_calc_expected_tx_airtime`).
pub const MIN_AGGREGATED_US: u32 = 4;

/// Largest AQL charge a frame can carry: mainline's 10-bit `tx_time_est` in 4 us units
/// (`ieee80211_info_set_tx_time_est`): 4095 clamped, rounded down to a multiple of 4.
pub const MAX_AQL_CHARGE_US: u32 = 4092;

/// Stages of a multi-rate retry chain that [`tx_airtime_us`] reads (mainline's
/// `IEEE80211_TX_MAX_RATES`).
pub const MAX_RETRY_STAGES: usize = 4;

/// One stage of a multi-rate retry chain: `tries` attempts at `rate`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct RetryStage {
    /// The rate of every attempt of this stage.
    pub rate: Rate,
    /// Number of attempts at this rate; 0 ends the chain.
    pub tries: u8,
}

/// Saturating narrowing to the `u32` result type.
#[inline]
fn saturate(us: u64) -> u32 {
    u32::try_from(us).unwrap_or(u32::MAX)
}

/// Data part of an MCS PPDU: `floor(floor(t x len / 1024) / 1024)` us, which is
/// `t x len >> 20`. `t < 2^21` and `len < 2^33`, so the product fits a `u64`.
#[inline]
fn mcs_data_us(table_duration: u32, len: u64) -> u64 {
    u64::from(table_duration).saturating_mul(len) >> 20
}

/// Legacy PPDU, as `ieee80211_calc_legacy_rate_duration`: preamble/PLCP/SIFS plus
/// `floor(len x 80 / rate_100kbps)`.
#[inline]
fn legacy_us(encoding: Encoding, short_preamble: bool, rate_100kbps: u16, len: u64) -> u64 {
    let overhead: u64 = match encoding {
        // Long preamble 192 us, short 96 us, plus 10 us SIFS.
        Encoding::Cck if short_preamble => 96 + 10,
        Encoding::Cck => 192 + 10,
        // OFDM preamble 20 us plus 16 us SIFS.
        _ => 20 + 16,
    };
    let data = len
        .saturating_mul(80)
        .checked_div(u64::from(rate_100kbps))
        // A legacy Rate never has a zero bitrate; if it had, charge the most, not nothing.
        .unwrap_or(u64::MAX);
    overhead.saturating_add(data)
}

/// Non-aggregated airtime in us for a length already widened to 64 bits.
#[inline]
fn single_us(rate: Rate, len: u64) -> u64 {
    match (rate.table_duration(), rate.ppdu_overhead_us()) {
        (Some(t), Some(overhead)) => mcs_data_us(t, len).saturating_add(u64::from(overhead)),
        _ => legacy_us(rate.encoding(), rate.short_preamble(), rate.legacy_rate_100kbps().unwrap_or(0), len),
    }
}

/// Airtime in us of one received frame of `len` bytes, or of one non-aggregated transmission
/// (mainline's `ieee80211_calc_rx_airtime`): the whole PPDU, preamble and SIFS included.
///
/// ```
/// use airtime_est::{rx_airtime_us, Bandwidth, Rate};
/// let rate = Rate::vht(9, 1, Bandwidth::Mhz80, true)?;
/// assert_eq!(rx_airtime_us(rate, 1538), 68);
/// # Ok::<(), airtime_est::RateError>(())
/// ```
pub fn rx_airtime_us(rate: Rate, len: u32) -> u32 {
    saturate(single_us(rate, u64::from(len)))
}

/// Airtime in us of a transmission over a multi-rate retry chain
/// (`ieee80211_calc_tx_airtime`): the sum over the stages of `tries x`
/// [`rx_airtime_us`]`(rate, len)`, every attempt a full non-aggregated PPDU.
///
/// At most the first [`MAX_RETRY_STAGES`] stages are read, and the chain ends at the first
/// stage with `tries == 0` (mainline ends at the first stage that prices to 0; our rates never
/// do, so the try count is the only end marker).
///
/// ```
/// use airtime_est::{tx_airtime_us, Bandwidth, Rate, RetryStage};
/// let fast = Rate::vht(9, 1, Bandwidth::Mhz80, true)?;
/// let slow = Rate::vht(0, 1, Bandwidth::Mhz80, false)?;
/// let chain = [RetryStage { rate: fast, tries: 2 }, RetryStage { rate: slow, tries: 1 }];
/// assert_eq!(tx_airtime_us(&chain, 1538), 2 * 68 + 460);
/// # Ok::<(), airtime_est::RateError>(())
/// ```
pub fn tx_airtime_us(chain: &[RetryStage], len: u32) -> u32 {
    let len = u64::from(len);
    let mut total = 0u64;
    for stage in chain.iter().take(MAX_RETRY_STAGES) {
        if stage.tries == 0 {
            break;
        }
        total = total.saturating_add(single_us(stage.rate, len).saturating_mul(u64::from(stage.tries)));
    }
    saturate(total)
}

/// Aggregation amortisation shift for an A-MPDU at table duration `t` (the thresholds of
/// `ieee80211_calc_expected_tx_airtime`):
/// the PPDU overhead is shared by `2^shift` MPDUs, more of them the faster the rate.
#[inline]
pub(crate) const fn agg_shift(encoding: Encoding, t: u32) -> u32 {
    if t > 400 * 1024 {
        1
    } else if t > 250 * 1024 {
        2
    } else if t > 150 * 1024 {
        3
    } else if t > 70 * 1024 {
        4
    } else if matches!(encoding, Encoding::He) && t <= 20 * 1024 {
        // Only HE gets 64 MPDUs; mainline gives EHT (and HT/VHT) 32.
        6
    } else {
        5
    }
}

/// Expected airtime in us of one frame of `frame_len` bytes, the AQL estimate
/// (`ieee80211_calc_expected_tx_airtime`).
///
/// `L = frame_len + 38`. Legacy rates, or `aggregated == false` (mainline: the VO access
/// category), give the non-aggregated airtime of `L` bytes ([`rx_airtime_us`]). Otherwise the
/// frame is taken to be one MPDU of an A-MPDU that shares the PPDU overhead with `2^s` others,
/// `s` from the rate's table duration (the faster, the more MPDUs):
/// `max(4, floor(t x L / 2^20) + (overhead >> s))`.
///
/// Mainline semantics, but 64-bit: where mainline's `u32` product `t x L` wraps (first at
/// HT20/VHT20 MCS0 long GI above 3328 bytes; at 52 of its rates for an 11 454-byte frame),
/// this is right and mainline is not; see
/// [`crate::mainline::expected_tx_airtime_u32`].
///
/// ```
/// use airtime_est::{expected_tx_airtime_us, Bandwidth, Rate};
/// let rate = Rate::vht(9, 1, Bandwidth::Mhz80, true)?;
/// assert_eq!(expected_tx_airtime_us(rate, 1500, true), 29);
/// assert_eq!(expected_tx_airtime_us(rate, 1500, false), 68);
/// # Ok::<(), airtime_est::RateError>(())
/// ```
#[inline]
pub fn expected_tx_airtime_us(rate: Rate, frame_len: u32, aggregated: bool) -> u32 {
    let len = u64::from(frame_len).saturating_add(u64::from(LENGTH_PADDING_BYTES));
    match (rate.table_duration(), rate.ppdu_overhead_us()) {
        (Some(t), Some(overhead)) if aggregated => {
            let shared = overhead >> agg_shift(rate.encoding(), t);
            let us = mcs_data_us(t, len).saturating_add(u64::from(shared));
            saturate(us.max(u64::from(MIN_AGGREGATED_US)))
        }
        _ => saturate(single_us(rate, len)),
    }
}

/// The AQL charge of an estimate: `4 x floor(min(estimate, 4095) / 4)`, mainline's 10-bit
/// `tx_time_est` field (set in `ieee80211_tx_dequeue`).
///
/// The clamp under-charges very slow frames (a 1500-byte frame at 1 Mbit/s is
/// 12 506 us but is charged 4092). This helper reproduces mainline below 65 536 us; whether to
/// clamp at all is the scheduler's decision (a Rust scheduler need not squeeze the charge into
/// 10 bits).
///
/// From 65 536 us on it differs: mainline's `ieee80211_info_set_tx_time_est` takes the
/// estimate as a `u16`, so the `u32` estimate is truncated modulo 65 536 before the 4095
/// clamp (reached by 1 Mbit/s frames from 8162 bytes on). An estimate of 65 600 us is
/// charged 64 us there and 4092
/// here, which clamps the whole value: `4 x floor(min(est mod 65 536, 4095) / 4)` would be
/// mainline's.
///
/// ```
/// use airtime_est::aql_charge_us;
/// assert_eq!(aql_charge_us(29), 28);
/// assert_eq!(aql_charge_us(12_506), 4092);
/// ```
pub const fn aql_charge_us(estimate_us: u32) -> u32 {
    let clamped = if estimate_us > 4095 { 4095 } else { estimate_us };
    clamped & !3
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::{Bandwidth, HeGi};

    #[test]
    fn agg_shift_table() {
        assert_eq!(agg_shift(Encoding::Vht, 400 * 1024 + 1), 1);
        assert_eq!(agg_shift(Encoding::Vht, 400 * 1024), 2);
        assert_eq!(agg_shift(Encoding::Vht, 250 * 1024), 3);
        assert_eq!(agg_shift(Encoding::Vht, 150 * 1024), 4);
        assert_eq!(agg_shift(Encoding::Vht, 70 * 1024), 5);
        assert_eq!(agg_shift(Encoding::Vht, 0), 5);
        assert_eq!(agg_shift(Encoding::Eht, 20 * 1024), 5);
        assert_eq!(agg_shift(Encoding::He, 20 * 1024 + 1), 5);
        assert_eq!(agg_shift(Encoding::He, 20 * 1024), 6);
    }

    #[test]
    fn retry_chain_reads_four_stages_and_stops_at_zero_tries() {
        let r = Rate::he(0, 1, Bandwidth::Mhz20, HeGi::Gi0_8).unwrap();
        let one = rx_airtime_us(r, 100);
        let s = |tries| RetryStage { rate: r, tries };
        assert_eq!(tx_airtime_us(&[], 100), 0);
        assert_eq!(tx_airtime_us(&[s(3)], 100), 3 * one);
        assert_eq!(tx_airtime_us(&[s(1), s(0), s(5)], 100), one);
        assert_eq!(tx_airtime_us(&[s(1); 6], 100), 4 * one);
    }

    #[test]
    fn results_saturate_at_u32_max() {
        let cck = Rate::legacy_cck(10, false).unwrap();
        assert_eq!(rx_airtime_us(cck, u32::MAX), u32::MAX);
        assert_eq!(expected_tx_airtime_us(cck, u32::MAX, true), u32::MAX);
        let chain = [RetryStage { rate: cck, tries: u8::MAX }; 4];
        assert_eq!(tx_airtime_us(&chain, u32::MAX), u32::MAX);
        // The fastest rate still does not saturate: 4 GiB at EHT320 8SS MCS13 is 2.2 s.
        let eht = Rate::eht(13, 8, Bandwidth::Mhz320, HeGi::Gi0_8).unwrap();
        assert!(rx_airtime_us(eht, u32::MAX) < u32::MAX);
    }

    #[test]
    fn aql_charge_quantises_and_clamps() {
        assert_eq!(aql_charge_us(0), 0);
        assert_eq!(aql_charge_us(3), 0);
        assert_eq!(aql_charge_us(68), 68);
        assert_eq!(aql_charge_us(1912), 1912);
        assert_eq!(aql_charge_us(430), 428);
        assert_eq!(aql_charge_us(4095), MAX_AQL_CHARGE_US);
        assert_eq!(aql_charge_us(u32::MAX), MAX_AQL_CHARGE_US);
        // Mainline truncates to u16 first (documented difference): 65 600 -> 64 there.
        assert_eq!(aql_charge_us(65_600), MAX_AQL_CHARGE_US);
        assert_eq!(aql_charge_us(65_600 % 65_536), 64);
        // 8162 bytes (+ 38) at 1 Mbit/s: the first estimate at or above 65 536 us.
        let cck = Rate::legacy_cck(10, false).unwrap();
        assert_eq!(expected_tx_airtime_us(cck, 8162, false), 65_802);
    }
}
