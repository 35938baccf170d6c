//! PHY timing of HE multi-user (OFDMA) downlink PPDUs: each user on its own resource
//! unit (RU), at its HE-MCS with the RU's data subcarriers; the PPDU as long as its
//! longest user (the others padded); HE-SIG-B naming the users; the BlockAcks back in
//! one HE trigger-based PPDU.
//!
//! Sources: IEEE Std 802.11ax-2021 — RU sizes and data subcarriers in
//! [`airtime_est::RuSize`] (27.3.2.2, Table 27-7; N_SD from the per-RU HE-MCS tables
//! of 27.5); HE-SIG-B fields in 27.3.11.8; the HE TB PPDU's fields in 27.3.4 and
//! 27.3.11.

use super::phy::{PhyTiming, SIFS_US};
use airtime_est::{Bandwidth, Encoding, RuSize};

/// HE-SIG-B data bits per symbol at HE-SIG-B MCS 0 (BPSK, rate 1/2, 52 data
/// subcarriers of a 20 MHz content channel): 26. The firmware is assumed to send
/// HE-SIG-B at MCS 0, its most robust choice.
const SIGB_BITS_PER_SYMBOL: u32 = 26;
/// HE-SIG-B symbol: 3.2 us plus a 0.8 us guard interval (27.3.11.8).
const SIGB_SYMBOL_US: f64 = 4.0;
/// One user field (21 bits, 27.3.11.8.4); a user block field holds two, with a 4-bit
/// CRC and 6 tail bits (52 bits), and a lone last user field has its own CRC and tail.
const USER_FIELD_BITS: u32 = 21;
const CRC_TAIL_BITS: u32 = 10;
/// The BlockAcks of every user, in one HE TB PPDU a SIFS after the MU PPDU (solicited
/// by a trigger the AP aggregates into each user's A-MPDU), in us: L-STF 8, L-LTF 8,
/// L-SIG 4, RL-SIG 4, HE-SIG-A 8, HE-STF 8 (TB), one 2x HE-LTF 8 (6.4 and a 1.6 GI) and
/// one data symbol with a 3.2 us GI (16): 64 (27.3.4, 27.3.11).
pub const TB_BLOCK_ACK_US: f64 = 64.0;

/// The timing of a user's transmission on `ru` at the station's `timing` (an HE rate
/// over its whole channel): the same symbols and preamble, the bits per symbol of the
/// RU's data subcarriers. `None` for a rate that is not HE or an RU wider than its
/// channel.
pub fn on_ru(timing: &PhyTiming, ru: RuSize) -> Option<PhyTiming> {
    if timing.rate.encoding() != Encoding::He {
        return None;
    }
    let kbps = ru.rate_kbps(&timing.rate);
    if kbps == 0 {
        return None;
    }
    Some(PhyTiming { bits_per_symbol: f64::from(kbps) * timing.symbol_us / 1000.0, ..*timing })
}

/// HE-SIG-B of an MU PPDU of `users` users on a `bw` channel, in us: one content
/// channel at 20 MHz, two at 40 MHz and wider, users split evenly between them; each
/// carries the common field (an 8-bit RU allocation per 20 MHz it covers, one more bit
/// for the centre 26-tone RU at 80 MHz and wider, CRC and tail) and its users' blocks.
/// The longer content channel sets the length.
pub fn sigb_us(users: usize, bw: Bandwidth) -> f64 {
    let (channels, allocations, centre): (u32, u32, u32) = match bw {
        Bandwidth::Mhz20 => (1, 1, 0),
        Bandwidth::Mhz40 => (2, 1, 0),
        Bandwidth::Mhz80 => (2, 2, 1),
        _ => (2, 4, 1),
    };
    let users = users as u32;
    let per_channel = users.div_ceil(channels);
    let common = 8 * allocations + centre + CRC_TAIL_BITS;
    let blocks =
        per_channel / 2 * (2 * USER_FIELD_BITS + CRC_TAIL_BITS) + (per_channel % 2) * (USER_FIELD_BITS + CRC_TAIL_BITS);
    f64::from((common + blocks).div_ceil(SIGB_BITS_PER_SYMBOL)) * SIGB_SYMBOL_US
}

/// A user's PPDU on its RU, padded to nothing: its preamble and data at `ru_timing`
/// plus the PPDU's HE-SIG-B, in us.
pub fn user_ppdu_us(ru_timing: &PhyTiming, psdu_bytes: u32, sigb_us: f64) -> f64 {
    ru_timing.ppdu_us(psdu_bytes) + sigb_us
}

/// The exchange after a PPDU of `ppdu_us`: SIFS and the users' BlockAcks, in us.
pub fn exchange_us(ppdu_us: f64) -> f64 {
    ppdu_us + SIFS_US + TB_BLOCK_ACK_US
}

#[cfg(test)]
mod tests {
    use super::*;
    use airtime_est::{HeGi, Rate};

    #[test]
    fn he_sigb_of_four_users_on_80_mhz_takes_four_symbols() {
        // 80 MHz: common 16 + 1 + 10 = 27 bits, one block of two users 52: 79 bits, 4
        // symbols of 26.
        assert_eq!(sigb_us(4, Bandwidth::Mhz80), 16.0);
        // Two users: one per content channel, 27 + 31 = 58 bits, 3 symbols.
        assert_eq!(sigb_us(2, Bandwidth::Mhz80), 12.0);
    }

    #[test]
    fn a_user_on_a_242_tone_ru_sends_at_234_of_980_data_subcarriers() {
        let full = PhyTiming::new(Rate::he(11, 2, Bandwidth::Mhz80, HeGi::Gi0_8).unwrap());
        let ru = on_ru(&full, RuSize::Tones242).unwrap();
        assert!((ru.bits_per_symbol / full.bits_per_symbol - 234.0 / 980.0).abs() < 1e-3);
        assert_eq!(ru.preamble_us, full.preamble_us);
        // 100 frames of 1560 bytes: about 4.2 times the data symbols.
        let (f, r) = (full.ppdu_us(156_000) - full.preamble_us, ru.ppdu_us(156_000) - ru.preamble_us);
        assert!((r / f - 980.0 / 234.0).abs() < 0.05, "{}", r / f);
        let vht = PhyTiming::new(Rate::vht(9, 1, Bandwidth::Mhz80, true).unwrap());
        assert!(on_ru(&vht, RuSize::Tones242).is_none());
    }
}
