//! PHY timing of one PPDU (802.11n/ac/ax symbol times and preambles, 5 GHz OFDM): preamble,
//! then data symbols for the PSDU plus 16 service and 6 tail bits; SIFS and the BlockAck that
//! answers it.

use airtime_est::{Encoding, HeGi, Rate};

/// Short interframe space, 5 GHz OFDM, in us.
pub const SIFS_US: f64 = 16.0;
/// Slot time, in us.
pub const SLOT_US: f64 = 9.0;
/// Longest PPDU (aPPDUMaxTime / the L-SIG limit), in us.
pub const MAX_PPDU_US: f64 = 5484.0;

/// Timing of transmissions at one rate.
#[derive(Clone, Copy, Debug)]
pub struct PhyTiming {
    /// The rate.
    pub rate: Rate,
    /// OFDM symbol time in us.
    pub symbol_us: f64,
    /// Data bits per symbol.
    pub bits_per_symbol: f64,
    /// Preamble and training fields in us.
    pub preamble_us: f64,
    /// The BlockAck window: most MPDUs in one A-MPDU.
    pub ba_window: u32,
    /// Largest A-MPDU in bytes.
    pub max_ampdu_bytes: u32,
    /// The BlockAck response in us (64- or 256-bit bitmap at 24 Mbit/s).
    pub block_ack_us: f64,
    /// New sequence numbers the originator's BlockAck window still has room for
    /// (802.11-2020 10.25.6: none beyond WinStart + WinSize - 1, WinStart being its
    /// oldest unacknowledged frame); `u32::MAX` where the model numbers no frames (an
    /// ideal link). See [`super::ampdu::fill_in_window`].
    pub seq_room: u32,
}

impl PhyTiming {
    /// Timing at `rate`. Legacy rates (no aggregation) are timed as single-frame OFDM.
    pub fn new(rate: Rate) -> PhyTiming {
        let nss = f64::from(rate.nss().max(1));
        let (symbol_us, preamble_us, ba_window, max_ampdu_bytes) = match rate.encoding() {
            Encoding::Ht => (if rate.short_gi() { 3.6 } else { 4.0 }, 32.0 + 4.0 * nss.max(1.0), 64, 65_535),
            Encoding::Vht => (if rate.short_gi() { 3.6 } else { 4.0 }, 36.0 + 4.0 * nss, 64, 1_048_575),
            Encoding::He | Encoding::Eht => {
                let gi = match rate.he_gi() {
                    Some(HeGi::Gi1_6) => 1.6,
                    Some(HeGi::Gi3_2) => 3.2,
                    _ => 0.8,
                };
                (12.8 + gi, 36.0 + 7.2 * nss, 256, 6_500_631)
            }
            _ => (4.0, 20.0, 1, 2304),
        };
        let bits_per_symbol = f64::from(rate.phy_rate_kbps()) * symbol_us / 1000.0;
        let block_ack_us = if ba_window > 64 { 40.0 } else { 32.0 };
        PhyTiming {
            rate,
            symbol_us,
            bits_per_symbol,
            preamble_us,
            ba_window,
            max_ampdu_bytes,
            block_ack_us,
            seq_room: u32::MAX,
        }
    }

    /// Duration of a PPDU carrying `psdu_bytes`, in us.
    pub fn ppdu_us(&self, psdu_bytes: u32) -> f64 {
        let bits = f64::from(psdu_bytes) * 8.0 + 22.0;
        self.preamble_us + (bits / self.bits_per_symbol.max(1.0)).ceil() * self.symbol_us
    }

    /// The frame exchange after channel access: PPDU, SIFS and the BlockAck (what the
    /// hardware reports as `fes_duration_us`), in us.
    pub fn exchange_us(&self, psdu_bytes: u32) -> f64 {
        self.ppdu_us(psdu_bytes) + SIFS_US + self.block_ack_us
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use airtime_est::Bandwidth;

    #[test]
    fn sixty_four_subframes_at_vht80_mcs9_sgi_take_1_89_ms() {
        let t = PhyTiming::new(Rate::vht(9, 1, Bandwidth::Mhz80, true).unwrap());
        let ppdu = t.ppdu_us(64 * 1560);
        assert!((ppdu - 1890.0).abs() < 15.0, "{ppdu}");
    }

    #[test]
    fn twelve_subframes_at_vht80_mcs0_take_5_16_ms() {
        let t = PhyTiming::new(Rate::vht(0, 1, Bandwidth::Mhz80, false).unwrap());
        let ppdu = t.ppdu_us(12 * 1560);
        assert!((ppdu - 5160.0).abs() < 20.0, "{ppdu}");
        assert!(t.ppdu_us(13 * 1560) > MAX_PPDU_US);
    }
}
