// SPDX-License-Identifier: MIT OR GPL-2.0-only
//! HE resource units (RUs): the slices of an OFDMA channel that the users of one
//! multi-user PPDU are sent on.
//!
//! An RU's size is its number of tones (subcarriers); of those, the data subcarriers
//! carry the user's bits (the rest are pilots). The sizes and how many of each fit in a
//! channel are IEEE Std 802.11ax-2021, 27.3.2.2 (Table 27-7, the maximum number of RUs
//! for each channel width); the data subcarriers of each size (N_SD) are those of the
//! HE-MCS parameter tables of 27.5, one per RU size. A user's data rate on an RU is the
//! HE-MCS rate with the RU's N_SD in place of the whole channel's.

use crate::rate::Bandwidth;

/// The size of a resource unit, in tones.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuSize {
    /// 26-tone RU (24 data subcarriers).
    Tones26,
    /// 52-tone RU (48 data subcarriers).
    Tones52,
    /// 106-tone RU (102 data subcarriers).
    Tones106,
    /// 242-tone RU (234 data subcarriers): a whole 20 MHz channel.
    Tones242,
    /// 484-tone RU (468 data subcarriers): a whole 40 MHz channel.
    Tones484,
    /// 996-tone RU (980 data subcarriers): a whole 80 MHz channel.
    Tones996,
    /// 2x996-tone RU (1960 data subcarriers): a whole 160 MHz channel.
    Tones2x996,
}

impl RuSize {
    /// Every size, smallest first.
    pub const ALL: [RuSize; 7] = [
        RuSize::Tones26,
        RuSize::Tones52,
        RuSize::Tones106,
        RuSize::Tones242,
        RuSize::Tones484,
        RuSize::Tones996,
        RuSize::Tones2x996,
    ];

    /// Tones of the RU.
    pub const fn tones(self) -> u16 {
        match self {
            RuSize::Tones26 => 26,
            RuSize::Tones52 => 52,
            RuSize::Tones106 => 106,
            RuSize::Tones242 => 242,
            RuSize::Tones484 => 484,
            RuSize::Tones996 => 996,
            RuSize::Tones2x996 => 1992,
        }
    }

    /// Data subcarriers of the RU (N_SD).
    pub const fn data_tones(self) -> u16 {
        match self {
            RuSize::Tones26 => 24,
            RuSize::Tones52 => 48,
            RuSize::Tones106 => 102,
            RuSize::Tones242 => 234,
            RuSize::Tones484 => 468,
            RuSize::Tones996 => 980,
            RuSize::Tones2x996 => 1960,
        }
    }

    /// The size with `tones` tones (as PPDU stats report `ru_end - ru_start + 1`), if
    /// there is one.
    pub const fn from_tones(tones: u16) -> Option<RuSize> {
        match tones {
            26 => Some(RuSize::Tones26),
            52 => Some(RuSize::Tones52),
            106 => Some(RuSize::Tones106),
            242 => Some(RuSize::Tones242),
            484 => Some(RuSize::Tones484),
            996 => Some(RuSize::Tones996),
            1992 => Some(RuSize::Tones2x996),
            _ => None,
        }
    }

    /// The RU that is the whole of a `bw` channel (`None` for 320 MHz, which is EHT's).
    pub const fn whole(bw: Bandwidth) -> Option<RuSize> {
        match bw {
            Bandwidth::Mhz20 => Some(RuSize::Tones242),
            Bandwidth::Mhz40 => Some(RuSize::Tones484),
            Bandwidth::Mhz80 => Some(RuSize::Tones996),
            Bandwidth::Mhz160 => Some(RuSize::Tones2x996),
            Bandwidth::Mhz320 => None,
        }
    }

    /// How many RUs of this size fit in a `bw` channel (Table 27-7; 0 when the size is
    /// wider than the channel or the channel is not HE's).
    pub const fn per_channel(self, bw: Bandwidth) -> u16 {
        let (r26, r52, r106, r242, r484, r996, r2x996) = match bw {
            Bandwidth::Mhz20 => (9, 4, 2, 1, 0, 0, 0),
            Bandwidth::Mhz40 => (18, 8, 4, 2, 1, 0, 0),
            Bandwidth::Mhz80 => (37, 16, 8, 4, 2, 1, 0),
            Bandwidth::Mhz160 => (74, 32, 16, 8, 4, 2, 1),
            Bandwidth::Mhz320 => (0, 0, 0, 0, 0, 0, 0),
        };
        match self {
            RuSize::Tones26 => r26,
            RuSize::Tones52 => r52,
            RuSize::Tones106 => r106,
            RuSize::Tones242 => r242,
            RuSize::Tones484 => r484,
            RuSize::Tones996 => r996,
            RuSize::Tones2x996 => r2x996,
        }
    }

    /// The largest size of which `users` RUs fit in a `bw` channel: equal RUs for
    /// `users` users (`None` for no user, or more users than 26-tone RUs).
    pub fn equal_share(users: u16, bw: Bandwidth) -> Option<RuSize> {
        if users == 0 {
            return None;
        }
        RuSize::ALL.iter().rev().copied().find(|size| size.per_channel(bw) >= users)
    }

    /// A user's data rate on this RU, in kbit/s, from `rate` (an HE rate over a whole
    /// channel): the rate scaled by this RU's data subcarriers over the channel's.
    /// Rounded down; 0 for a rate that is not HE or an RU wider than its channel.
    ///
    /// HE-MCS 10 and 11 (1024-QAM) are priced on every size, the 26-, 52- and 106-tone RUs
    /// included. 802.11ax does not forbid them there: it makes them optional, behind the
    /// "Tx 1024-QAM < 242-tone RU" and "Rx 1024-QAM < 242-tone RU" subfields of the HE PHY
    /// Capabilities (mainline's `IEEE80211_HE_PHY_CAP9_TX/RX_1024_QAM_LESS_THAN_242_TONE_RU`,
    /// which mt7915 and ath11k set). Whether a given pair of devices may use them is a
    /// capability check for the caller, which this function cannot make.
    pub fn rate_kbps(self, rate: &crate::Rate) -> u32 {
        if !matches!(rate.encoding(), crate::Encoding::He) {
            return 0;
        }
        let Some(whole) = RuSize::whole(rate.bandwidth()) else { return 0 };
        if self > whole {
            return 0;
        }
        let scaled = u64::from(rate.phy_rate_kbps())
            .saturating_mul(u64::from(self.data_tones()))
            .checked_div(u64::from(whole.data_tones()))
            .unwrap_or(0);
        u32::try_from(scaled).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HeGi, Rate};

    #[test]
    fn equal_shares_of_an_80_mhz_channel() {
        let bw = Bandwidth::Mhz80;
        assert_eq!(RuSize::equal_share(1, bw), Some(RuSize::Tones996));
        assert_eq!(RuSize::equal_share(2, bw), Some(RuSize::Tones484));
        assert_eq!(RuSize::equal_share(3, bw), Some(RuSize::Tones242));
        assert_eq!(RuSize::equal_share(4, bw), Some(RuSize::Tones242));
        assert_eq!(RuSize::equal_share(5, bw), Some(RuSize::Tones106));
        assert_eq!(RuSize::equal_share(37, bw), Some(RuSize::Tones26));
        assert_eq!(RuSize::equal_share(38, bw), None);
        assert_eq!(RuSize::equal_share(0, bw), None);
    }

    #[test]
    fn every_size_round_trips_through_its_tones() {
        for s in RuSize::ALL {
            assert_eq!(RuSize::from_tones(s.tones()), Some(s));
            assert!(s.data_tones() < s.tones());
        }
        assert_eq!(RuSize::from_tones(100), None);
    }

    #[test]
    fn a_242_tone_ru_of_he80_carries_234_of_980_data_subcarriers() {
        let rate = Rate::he(11, 2, Bandwidth::Mhz80, HeGi::Gi0_8).unwrap();
        let full = rate.phy_rate_kbps();
        assert_eq!(RuSize::Tones996.rate_kbps(&rate), full);
        let ru = RuSize::Tones242.rate_kbps(&rate);
        // HE20 MCS11 2SS is 286.8 Mbit/s.
        assert_eq!(ru, (u64::from(full) * 234 / 980) as u32);
        assert!((286_000..=287_000).contains(&ru), "{ru}");
        assert_eq!(RuSize::Tones2x996.rate_kbps(&rate), 0);
    }

    #[test]
    fn mcs_10_and_11_are_priced_below_242_tones_too() {
        // Optional in 802.11ax (the 1024-QAM < 242-tone RU capabilities), not forbidden:
        // HE-MCS 11 on a 26-tone RU, 1 stream, GI 0.8: 24 subcarriers x 10 bits x 5/6 = 200
        // bits per 13.6 us symbol, 14.7 Mbit/s.
        let rate = Rate::he(11, 1, Bandwidth::Mhz20, HeGi::Gi0_8).unwrap();
        assert_eq!(RuSize::Tones26.rate_kbps(&rate), 14_705);
        let mcs10 = Rate::he(10, 1, Bandwidth::Mhz20, HeGi::Gi0_8).unwrap();
        // 24 x 10 x 3/4 = 180 bits per symbol: 13.2 Mbit/s.
        assert_eq!(RuSize::Tones26.rate_kbps(&mcs10), 13_235);
        for size in [RuSize::Tones52, RuSize::Tones106] {
            assert!(size.rate_kbps(&rate) > size.rate_kbps(&mcs10));
        }
    }
}
