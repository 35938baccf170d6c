// SPDX-License-Identifier: MIT OR GPL-2.0-only
//! What a frame is sent with: the PHY rate description the estimator prices.
//!
//! A [`Rate`] can only be built through its validating constructors, so every `Rate` that
//! exists has a price: the constructor looks its duration up in the compile-time tables (built
//! as mainline's airtime.c builds them, [`crate::tables`]) and keeps the stored entry and the
//! group's shift inside the value. The estimates then need no lookup and have no failure path.

use core::fmt;

use crate::tables;

/// Channel width of a transmission.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Bandwidth {
    /// 20 MHz (every encoding; the only width of legacy CCK/OFDM).
    Mhz20,
    /// 40 MHz (HT, VHT, HE, EHT).
    Mhz40,
    /// 80 MHz (VHT, HE, EHT).
    Mhz80,
    /// 160 MHz, contiguous or 80+80 (VHT, HE, EHT).
    Mhz160,
    /// 320 MHz (EHT only).
    Mhz320,
}

impl Bandwidth {
    /// Every bandwidth, narrowest first.
    pub const ALL: [Bandwidth; 5] =
        [Bandwidth::Mhz20, Bandwidth::Mhz40, Bandwidth::Mhz80, Bandwidth::Mhz160, Bandwidth::Mhz320];

    /// The width in MHz.
    pub const fn mhz(self) -> u16 {
        match self {
            Bandwidth::Mhz20 => 20,
            Bandwidth::Mhz40 => 40,
            Bandwidth::Mhz80 => 80,
            Bandwidth::Mhz160 => 160,
            Bandwidth::Mhz320 => 320,
        }
    }

    /// Index 0..=4, narrowest first (the table's bandwidth index).
    pub(crate) const fn index(self) -> usize {
        match self {
            Bandwidth::Mhz20 => 0,
            Bandwidth::Mhz40 => 1,
            Bandwidth::Mhz80 => 2,
            Bandwidth::Mhz160 => 3,
            Bandwidth::Mhz320 => 4,
        }
    }
}

impl fmt::Display for Bandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} MHz", self.mhz())
    }
}

/// Guard interval of an HE or EHT transmission (0.8, 1.6 or 3.2 us).
///
/// It sets the OFDM symbol time: 13.6, 14.4 or 16.0 us (mainline's HE GI index 0, 1, 2).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HeGi {
    /// 0.8 us guard interval (13.6 us symbols).
    Gi0_8,
    /// 1.6 us guard interval (14.4 us symbols).
    Gi1_6,
    /// 3.2 us guard interval (16.0 us symbols).
    Gi3_2,
}

impl HeGi {
    /// Every guard interval, shortest first.
    pub const ALL: [HeGi; 3] = [HeGi::Gi0_8, HeGi::Gi1_6, HeGi::Gi3_2];

    /// The guard interval in nanoseconds (800, 1600, 3200).
    pub const fn ns(self) -> u16 {
        match self {
            HeGi::Gi0_8 => 800,
            HeGi::Gi1_6 => 1600,
            HeGi::Gi3_2 => 3200,
        }
    }

    /// Index 0..=2 (mainline's `he_gi` / `eht.gi` numbering).
    pub(crate) const fn index(self) -> usize {
        match self {
            HeGi::Gi0_8 => 0,
            HeGi::Gi1_6 => 1,
            HeGi::Gi3_2 => 2,
        }
    }

    const fn from_index(i: u8) -> HeGi {
        match i {
            0 => HeGi::Gi0_8,
            1 => HeGi::Gi1_6,
            _ => HeGi::Gi3_2,
        }
    }
}

impl fmt::Display for HeGi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HeGi::Gi0_8 => "GI 0.8 us",
            HeGi::Gi1_6 => "GI 1.6 us",
            HeGi::Gi3_2 => "GI 3.2 us",
        })
    }
}

/// The PHY encoding (modulation family) of a [`Rate`].
#[non_exhaustive]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Encoding {
    /// 802.11b DSSS/CCK: 1, 2, 5.5, 11 Mbit/s.
    Cck,
    /// 802.11a/g OFDM: 6 to 54 Mbit/s.
    Ofdm,
    /// 802.11n (HT): MCS 0–31.
    Ht,
    /// 802.11ac (VHT): MCS 0–9.
    Vht,
    /// 802.11ax (HE): MCS 0–11.
    He,
    /// 802.11be (EHT): MCS 0–13.
    Eht,
}

impl Encoding {
    /// A short name: "CCK", "OFDM", "HT", "VHT", "HE", "EHT".
    pub const fn name(self) -> &'static str {
        match self {
            Encoding::Cck => "CCK",
            Encoding::Ofdm => "OFDM",
            Encoding::Ht => "HT",
            Encoding::Vht => "VHT",
            Encoding::He => "HE",
            Encoding::Eht => "EHT",
        }
    }

    /// Whether this is a legacy (non-MCS) encoding.
    pub const fn is_legacy(self) -> bool {
        matches!(self, Encoding::Cck | Encoding::Ofdm)
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a [`Rate`] constructor refused its arguments.
///
/// Every variant names the encoding and the offending value, so that a driver can log it.
#[non_exhaustive]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum RateError {
    /// The legacy bitrate (in 100 kbit/s) is not one of the encoding's rates.
    InvalidLegacyRate {
        /// CCK or OFDM.
        encoding: Encoding,
        /// The refused rate, in 100 kbit/s.
        rate_100kbps: u16,
    },
    /// The MCS index is above the encoding's highest priced MCS.
    InvalidMcs {
        /// The encoding asked for.
        encoding: Encoding,
        /// The refused MCS index.
        mcs: u8,
    },
    /// The spatial stream count is 0 or above the encoding's maximum.
    InvalidStreams {
        /// The encoding asked for.
        encoding: Encoding,
        /// The refused stream count.
        nss: u8,
    },
    /// The encoding cannot be sent at this bandwidth.
    InvalidBandwidth {
        /// The encoding asked for.
        encoding: Encoding,
        /// The refused bandwidth.
        bandwidth: Bandwidth,
    },
}

impl fmt::Display for RateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RateError::InvalidLegacyRate { encoding, rate_100kbps } => {
                let allowed = match encoding {
                    Encoding::Cck => "10, 20, 55, 110",
                    _ => "60, 90, 120, 180, 240, 360, 480, 540",
                };
                write!(f, "{rate_100kbps} (x100 kbit/s) is not a {encoding} rate (expected one of {allowed})")
            }
            RateError::InvalidMcs { encoding, mcs } => {
                write!(f, "MCS {mcs} is not valid for {encoding} (MCS 0-{})", max_mcs(encoding))
            }
            RateError::InvalidStreams { encoding, nss } => {
                write!(f, "{nss} spatial streams is not valid for {encoding} (1-{})", max_nss(encoding))
            }
            RateError::InvalidBandwidth { encoding, bandwidth } => {
                write!(f, "{encoding} cannot be sent at {bandwidth}")
            }
        }
    }
}

impl core::error::Error for RateError {}

/// Highest MCS index a constructor accepts for the encoding (0 for legacy).
const fn max_mcs(encoding: Encoding) -> u8 {
    match encoding {
        Encoding::Cck | Encoding::Ofdm => 0,
        Encoding::Ht => 31,
        Encoding::Vht => 9,
        Encoding::He => 11,
        Encoding::Eht => 13,
    }
}

/// Highest stream count a constructor accepts for the encoding.
const fn max_nss(encoding: Encoding) -> u8 {
    match encoding {
        Encoding::Cck | Encoding::Ofdm => 1,
        Encoding::Ht => 4,
        // VHT: 8, one more than mainline prices (it stops at 4); see `Rate::vht`.
        Encoding::Vht | Encoding::He | Encoding::Eht => 8,
    }
}

/// Legacy CCK rates in 100 kbit/s.
const CCK_RATES: [u16; 4] = [10, 20, 55, 110];
/// Legacy OFDM rates in 100 kbit/s.
const OFDM_RATES: [u16; 8] = [60, 90, 120, 180, 240, 360, 480, 540];

const fn contains(list: &[u16], v: u16) -> bool {
    let mut rest = list;
    while let [first, tail @ ..] = rest {
        if *first == v {
            return true;
        }
        rest = tail;
    }
    false
}

/// A validated PHY rate: encoding, MCS, streams, bandwidth and guard interval (or, for legacy
/// rates, bitrate and preamble).
///
/// Eight bytes, `Copy`. Built only through the constructors, which refuse what the estimator
/// cannot price; each `Rate` carries its duration-table entry ([`crate::tables`]), so the estimates
/// never look anything up.
///
/// ```
/// use airtime_est::{Bandwidth, HeGi, Rate};
/// let vht = Rate::vht(9, 1, Bandwidth::Mhz80, true)?;
/// assert_eq!(vht.phy_rate_kbps(), 433_333);
/// let he = Rate::he(11, 2, Bandwidth::Mhz80, HeGi::Gi0_8)?;
/// assert_eq!(he.nss(), 2);
/// assert!(Rate::he(12, 1, Bandwidth::Mhz80, HeGi::Gi0_8).is_err());
/// # Ok::<(), airtime_est::RateError>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rate {
    encoding: Encoding,
    /// MCS index as given (HT: the full 0..=31 index); 0 for legacy.
    mcs: u8,
    nss: u8,
    bw: Bandwidth,
    /// HT/VHT: 1 = short GI. HE/EHT: GI index 0..=2. CCK: 1 = short preamble. OFDM: 0.
    gi: u8,
    /// MCS encodings: the group's storage shift. Legacy: 0.
    shift: u8,
    /// MCS encodings: the stored table entry (duration of 1024 bytes in 1/1024 us, >> shift).
    /// Legacy: the bitrate in 100 kbit/s (never 0).
    value: u16,
}

impl Rate {
    const fn mcs_rate(encoding: Encoding, mcs: u8, nss: u8, bw: Bandwidth, gi: u8) -> Result<Rate, RateError> {
        match tables::lookup(encoding, mcs, nss, bw, gi) {
            Some((shift, value)) => Ok(Rate { encoding, mcs, nss, bw, gi, shift, value }),
            // Unreachable after the constructors' checks: the tables cover exactly what they
            // accept (a test walks every accepted combination). Refuse rather than panic.
            None => Err(RateError::InvalidMcs { encoding, mcs }),
        }
    }

    /// A legacy 802.11b DSSS/CCK rate: `rate_100kbps` is 10, 20, 55 or 110.
    ///
    /// 1 Mbit/s is always sent with the long preamble (802.11b has no short-preamble form of
    /// it), so `short_preamble` is ignored there: `legacy_cck(10, true) == legacy_cck(10, false)`.
    pub const fn legacy_cck(rate_100kbps: u16, short_preamble: bool) -> Result<Rate, RateError> {
        if !contains(&CCK_RATES, rate_100kbps) {
            return Err(RateError::InvalidLegacyRate { encoding: Encoding::Cck, rate_100kbps });
        }
        let short = short_preamble && rate_100kbps != 10;
        Ok(Rate {
            encoding: Encoding::Cck,
            mcs: 0,
            nss: 1,
            bw: Bandwidth::Mhz20,
            gi: short as u8,
            shift: 0,
            value: rate_100kbps,
        })
    }

    /// A legacy 802.11a/g OFDM rate: `rate_100kbps` is 60, 90, 120, 180, 240, 360, 480 or 540.
    pub const fn legacy_ofdm(rate_100kbps: u16) -> Result<Rate, RateError> {
        if !contains(&OFDM_RATES, rate_100kbps) {
            return Err(RateError::InvalidLegacyRate { encoding: Encoding::Ofdm, rate_100kbps });
        }
        Ok(Rate {
            encoding: Encoding::Ofdm,
            mcs: 0,
            nss: 1,
            bw: Bandwidth::Mhz20,
            gi: 0,
            shift: 0,
            value: rate_100kbps,
        })
    }

    /// An HT (802.11n) rate: `mcs` 0..=31 in the HT numbering, so the stream count is
    /// `mcs / 8 + 1` and the modulation is `mcs % 8`. 20 or 40 MHz; `sgi` selects the 0.4 us
    /// guard interval.
    pub const fn ht(mcs: u8, bw: Bandwidth, sgi: bool) -> Result<Rate, RateError> {
        let encoding = Encoding::Ht;
        if mcs > max_mcs(encoding) {
            return Err(RateError::InvalidMcs { encoding, mcs });
        }
        if !matches!(bw, Bandwidth::Mhz20 | Bandwidth::Mhz40) {
            return Err(RateError::InvalidBandwidth { encoding, bandwidth: bw });
        }
        // mcs <= 31 here, so this is 1..=4.
        Rate::mcs_rate(encoding, mcs, (mcs >> 3).wrapping_add(1), bw, sgi as u8)
    }

    /// A VHT (802.11ac) rate: MCS 0..=9, 1..=8 streams, 20/40/80/160 MHz.
    ///
    /// Mainline's tables stop at 4 streams: it prices 5–8 as 0 airtime when not aggregated
    /// (no AQL charge) and at the 4 us floor in an A-MPDU. We extend the same construction
    /// ([`crate::tables`]) to 8 streams, since the standard allows them and a zero or floor
    /// charge would all but bypass AQL. Combinations the standard leaves out (such as
    /// VHT20 MCS9 at one stream) are accepted and priced from the table, as mainline does,
    /// because drivers report them.
    pub const fn vht(mcs: u8, nss: u8, bw: Bandwidth, sgi: bool) -> Result<Rate, RateError> {
        let encoding = Encoding::Vht;
        if let Err(e) = check(encoding, mcs, nss) {
            return Err(e);
        }
        if matches!(bw, Bandwidth::Mhz320) {
            return Err(RateError::InvalidBandwidth { encoding, bandwidth: bw });
        }
        Rate::mcs_rate(encoding, mcs, nss, bw, sgi as u8)
    }

    /// An HE (802.11ax) single-user rate: MCS 0..=11, 1..=8 streams, 20..=160 MHz, any of the
    /// three guard intervals.
    pub const fn he(mcs: u8, nss: u8, bw: Bandwidth, gi: HeGi) -> Result<Rate, RateError> {
        let encoding = Encoding::He;
        if let Err(e) = check(encoding, mcs, nss) {
            return Err(e);
        }
        if matches!(bw, Bandwidth::Mhz320) {
            return Err(RateError::InvalidBandwidth { encoding, bandwidth: bw });
        }
        Rate::mcs_rate(encoding, mcs, nss, bw, gi.index() as u8)
    }

    /// An EHT (802.11be) rate: MCS 0..=13, 1..=8 streams, 20..=320 MHz, any of the three
    /// guard intervals. (MCS 14 and 15, the duplicated BPSK modes, are not priced.)
    pub const fn eht(mcs: u8, nss: u8, bw: Bandwidth, gi: HeGi) -> Result<Rate, RateError> {
        let encoding = Encoding::Eht;
        if let Err(e) = check(encoding, mcs, nss) {
            return Err(e);
        }
        Rate::mcs_rate(encoding, mcs, nss, bw, gi.index() as u8)
    }

    /// The encoding.
    pub const fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The MCS index as given to the constructor (HT: 0..=31), or `None` for legacy rates.
    pub const fn mcs(&self) -> Option<u8> {
        if self.encoding.is_legacy() { None } else { Some(self.mcs) }
    }

    /// Number of spatial streams (1 for legacy rates).
    pub const fn nss(&self) -> u8 {
        self.nss
    }

    /// Channel width (20 MHz for legacy rates).
    pub const fn bandwidth(&self) -> Bandwidth {
        self.bw
    }

    /// HT/VHT: whether the short (0.4 us) guard interval is used. `false` for other encodings.
    pub const fn short_gi(&self) -> bool {
        matches!(self.encoding, Encoding::Ht | Encoding::Vht) && self.gi == 1
    }

    /// HE/EHT: the guard interval; `None` for other encodings.
    pub const fn he_gi(&self) -> Option<HeGi> {
        match self.encoding {
            Encoding::He | Encoding::Eht => Some(HeGi::from_index(self.gi)),
            _ => None,
        }
    }

    /// CCK: whether the short preamble is used. `false` for every other encoding.
    pub const fn short_preamble(&self) -> bool {
        matches!(self.encoding, Encoding::Cck) && self.gi == 1
    }

    /// Legacy rates: the bitrate in 100 kbit/s; `None` for MCS encodings.
    pub const fn legacy_rate_100kbps(&self) -> Option<u16> {
        if self.encoding.is_legacy() { Some(self.value) } else { None }
    }

    /// MCS encodings: the data duration of a 1024-byte frame in 1/1024 us, as the table stores
    /// it (the stored u16 shifted back by the group's shift, as
    /// `ieee80211_get_rate_duration` does). `None` for legacy.
    pub const fn table_duration(&self) -> Option<u32> {
        if self.encoding.is_legacy() {
            None
        } else {
            // The shift is at most 5 (the widest t is 21 bits): no bits are lost.
            Some((self.value as u32).wrapping_shl(self.shift as u32))
        }
    }

    /// MCS encodings: the per-PPDU overhead, 36 + 4 x streams us (preamble, training fields,
    /// SIFS, a share of the acknowledgement; as in
    /// `ieee80211_get_rate_duration`). `None` for legacy rates.
    pub const fn ppdu_overhead_us(&self) -> Option<u32> {
        if self.encoding.is_legacy() {
            None
        } else {
            // nss is 1..=8: at most 68 us.
            Some((self.nss as u32).wrapping_mul(4).wrapping_add(36))
        }
    }

    /// `(shift, stored value, gi)`, the private representation, for the table tests.
    #[cfg(test)]
    pub(crate) const fn raw(&self) -> (u8, u16, u8) {
        (self.shift, self.value, self.gi)
    }

    /// Nominal PHY rate in kbit/s (rounded down).
    ///
    /// Legacy: the bitrate. MCS encodings: data subcarriers x bits per subcarrier x coding rate
    /// x streams / symbol time, from the standard's parameters rather than from the duration
    /// tables (whose bits-per-symbol values are rounded; for example HE80 MCS11 1SS gives
    /// 600 490 here, while the table's 8164 bits per symbol would say 600 294).
    pub fn phy_rate_kbps(&self) -> u32 {
        if self.encoding.is_legacy() {
            return u32::from(self.value).saturating_mul(100);
        }
        let (subcarriers, symbol_ns) = match self.encoding {
            Encoding::Ht | Encoding::Vht => {
                let sc: u64 = match self.bw {
                    Bandwidth::Mhz20 => 52,
                    Bandwidth::Mhz40 => 108,
                    Bandwidth::Mhz80 => 234,
                    _ => 468,
                };
                (sc, if self.gi == 1 { 3600u64 } else { 4000 })
            }
            _ => {
                let sc: u64 = match self.bw {
                    Bandwidth::Mhz20 => 234,
                    Bandwidth::Mhz40 => 468,
                    Bandwidth::Mhz80 => 980,
                    Bandwidth::Mhz160 => 1960,
                    Bandwidth::Mhz320 => 3920,
                };
                let sym = match self.gi {
                    0 => 13_600u64,
                    1 => 14_400,
                    _ => 16_000,
                };
                (sc, sym)
            }
        };
        let modulation = if matches!(self.encoding, Encoding::Ht) { self.mcs % 8 } else { self.mcs };
        // (bits per subcarrier, coding rate numerator, denominator) per MCS.
        let (bits, num, den): (u64, u64, u64) = match modulation {
            0 => (1, 1, 2),
            1 => (2, 1, 2),
            2 => (2, 3, 4),
            3 => (4, 1, 2),
            4 => (4, 3, 4),
            5 => (6, 2, 3),
            6 => (6, 3, 4),
            7 => (6, 5, 6),
            8 => (8, 3, 4),
            9 => (8, 5, 6),
            10 => (10, 3, 4),
            11 => (10, 5, 6),
            12 => (12, 3, 4),
            _ => (12, 5, 6),
        };
        // bits per us = Mbit/s; x 10^6 / symbol_ns gives kbit/s. At most
        // 3920 * 12 * 5 * 8 * 10^6 < 2^51: no overflow in u64.
        let numerator = subcarriers
            .saturating_mul(bits)
            .saturating_mul(num)
            .saturating_mul(u64::from(self.nss))
            .saturating_mul(1_000_000);
        let kbps = numerator.checked_div(den.saturating_mul(symbol_ns)).unwrap_or(0);
        u32::try_from(kbps).unwrap_or(u32::MAX)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.encoding {
            Encoding::Cck => write!(
                f,
                "CCK {}.{} Mbit/s {} preamble",
                self.value / 10,
                self.value % 10,
                if self.gi == 1 { "short" } else { "long" }
            ),
            Encoding::Ofdm => write!(f, "OFDM {} Mbit/s", self.value / 10),
            Encoding::Ht => {
                write!(f, "HT{} MCS{} {}", self.bw.mhz(), self.mcs, if self.gi == 1 { "SGI" } else { "LGI" })
            }
            Encoding::Vht => write!(
                f,
                "VHT{} {}SS MCS{} {}",
                self.bw.mhz(),
                self.nss,
                self.mcs,
                if self.gi == 1 { "SGI" } else { "LGI" }
            ),
            Encoding::He | Encoding::Eht => write!(
                f,
                "{}{} {}SS MCS{} {}",
                self.encoding,
                self.bw.mhz(),
                self.nss,
                self.mcs,
                HeGi::from_index(self.gi)
            ),
        }
    }
}

/// Common MCS and stream-count checks of the VHT/HE/EHT constructors.
const fn check(encoding: Encoding, mcs: u8, nss: u8) -> Result<(), RateError> {
    if mcs > max_mcs(encoding) {
        return Err(RateError::InvalidMcs { encoding, mcs });
    }
    if nss == 0 || nss > max_nss(encoding) {
        return Err(RateError::InvalidStreams { encoding, nss });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_is_at_most_eight_bytes() {
        assert!(core::mem::size_of::<Rate>() <= 8);
    }

    #[test]
    fn ht_streams_follow_the_mcs_index() {
        for mcs in 0..=31u8 {
            let r = Rate::ht(mcs, Bandwidth::Mhz20, false).unwrap();
            assert_eq!(r.nss(), mcs / 8 + 1);
        }
    }

    #[test]
    fn constructors_refuse_what_they_cannot_price() {
        use Bandwidth::*;
        assert_eq!(Rate::ht(32, Mhz20, false), Err(RateError::InvalidMcs { encoding: Encoding::Ht, mcs: 32 }));
        assert!(matches!(Rate::ht(0, Mhz80, false), Err(RateError::InvalidBandwidth { .. })));
        assert!(matches!(Rate::vht(10, 1, Mhz80, false), Err(RateError::InvalidMcs { .. })));
        assert!(matches!(Rate::vht(0, 0, Mhz80, false), Err(RateError::InvalidStreams { .. })));
        assert!(matches!(Rate::vht(0, 9, Mhz80, false), Err(RateError::InvalidStreams { .. })));
        assert!(matches!(Rate::vht(0, 1, Mhz320, false), Err(RateError::InvalidBandwidth { .. })));
        assert!(matches!(Rate::he(12, 1, Mhz20, HeGi::Gi0_8), Err(RateError::InvalidMcs { .. })));
        assert!(matches!(Rate::he(0, 1, Mhz320, HeGi::Gi0_8), Err(RateError::InvalidBandwidth { .. })));
        assert!(matches!(Rate::eht(14, 1, Mhz320, HeGi::Gi0_8), Err(RateError::InvalidMcs { .. })));
        assert!(matches!(Rate::eht(13, 9, Mhz320, HeGi::Gi0_8), Err(RateError::InvalidStreams { .. })));
        assert!(matches!(Rate::legacy_cck(60, false), Err(RateError::InvalidLegacyRate { .. })));
        assert!(matches!(Rate::legacy_ofdm(110), Err(RateError::InvalidLegacyRate { .. })));
        assert!(Rate::eht(13, 8, Mhz320, HeGi::Gi3_2).is_ok());
        assert!(Rate::vht(9, 8, Mhz160, true).is_ok());
    }

    #[test]
    fn one_mbit_cck_has_no_short_preamble() {
        assert_eq!(Rate::legacy_cck(10, true), Rate::legacy_cck(10, false));
        assert!(Rate::legacy_cck(20, true).unwrap().short_preamble());
    }

    #[test]
    fn nominal_phy_rates() {
        use Bandwidth::*;
        let r = |x: Result<Rate, RateError>| x.unwrap().phy_rate_kbps();
        assert_eq!(r(Rate::ht(7, Mhz20, false)), 65_000);
        assert_eq!(r(Rate::ht(7, Mhz20, true)), 72_222);
        assert_eq!(r(Rate::ht(15, Mhz40, true)), 300_000);
        assert_eq!(r(Rate::vht(0, 1, Mhz20, false)), 6_500);
        assert_eq!(r(Rate::vht(9, 1, Mhz80, true)), 433_333);
        assert_eq!(r(Rate::vht(9, 4, Mhz160, true)), 3_466_666);
        assert_eq!(r(Rate::he(11, 1, Mhz80, HeGi::Gi0_8)), 600_490);
        assert_eq!(r(Rate::he(11, 2, Mhz160, HeGi::Gi0_8)), 2_401_960);
        assert_eq!(r(Rate::eht(13, 1, Mhz20, HeGi::Gi0_8)), 172_058);
        assert_eq!(r(Rate::legacy_cck(55, true)), 5_500);
        assert_eq!(r(Rate::legacy_ofdm(540)), 54_000);
    }

    #[test]
    fn errors_display_the_offending_value() {
        extern crate std;
        use std::string::ToString;
        let e = Rate::he(12, 1, Bandwidth::Mhz20, HeGi::Gi0_8).unwrap_err();
        assert_eq!(e.to_string(), "MCS 12 is not valid for HE (MCS 0-11)");
        let e = Rate::vht(0, 9, Bandwidth::Mhz20, false).unwrap_err();
        assert_eq!(e.to_string(), "9 spatial streams is not valid for VHT (1-8)");
        let e = Rate::ht(0, Bandwidth::Mhz160, false).unwrap_err();
        assert_eq!(e.to_string(), "HT cannot be sent at 160 MHz");
    }
}
