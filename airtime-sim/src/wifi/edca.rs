//! EDCA parameters of one access category at one transmitter (802.11 EDCA at 5 GHz:
//! AIFS = SIFS + AIFSN x slot, then a backoff drawn from the contention window), and the
//! contention window that doubles after a collision.
//!
//! The defaults per access category:
//!
//! * a station: 802.11-2020 Table 9-155 (default EDCA Parameter Set element parameter
//!   values), with the OFDM PHY's aCWmin 15 and aCWmax 1023: BK AIFSN 7, CW 15-1023;
//!   BE 3, 15-1023; VI 2, 7-15 (aCWmin/2), TXOP 3.008 ms; VO 2, 3-7 (aCWmin/4), TXOP
//!   1.504 ms;
//! * the access point: the parameters it uses for itself, hostapd's defaults
//!   (`tx_queue_data0..3` in hostapd.conf, the WMM specification's AP values): BK AIFSN
//!   7, CW 15-1023; BE 3, 15-63; VI 1, 7-15, TXOP 3.008 ms; VO 1, 3-7, TXOP 1.504 ms.
//!
//! A TXOP limit of 0 means one frame exchange (one A-MPDU) per access.

use super::phy::{SIFS_US, SLOT_US};
use crate::engine::Nanos;
use airtime_sched::Ac;

/// EDCA parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdcaParams {
    /// AIFS number: AIFS = SIFS + AIFSN x slot.
    pub aifsn: u32,
    /// Smallest contention window.
    pub cw_min: u32,
    /// Largest contention window.
    pub cw_max: u32,
    /// TXOP limit in us (0: one exchange per access).
    pub txop_us: u32,
}

impl EdcaParams {
    /// Background at a station: AIFSN 7, CW 15..1023.
    pub const STATION_BK: EdcaParams = EdcaParams { aifsn: 7, cw_min: 15, cw_max: 1023, txop_us: 0 };
    /// Best effort at a station: AIFSN 3, CW 15..1023.
    pub const STATION_BE: EdcaParams = EdcaParams { aifsn: 3, cw_min: 15, cw_max: 1023, txop_us: 0 };
    /// Video at a station: AIFSN 2, CW 7..15, TXOP 3.008 ms.
    pub const STATION_VI: EdcaParams = EdcaParams { aifsn: 2, cw_min: 7, cw_max: 15, txop_us: 3008 };
    /// Voice at a station: AIFSN 2, CW 3..7, TXOP 1.504 ms.
    pub const STATION_VO: EdcaParams = EdcaParams { aifsn: 2, cw_min: 3, cw_max: 7, txop_us: 1504 };
    /// Background at the access point: AIFSN 7, CW 15..1023.
    pub const AP_BK: EdcaParams = EdcaParams { aifsn: 7, cw_min: 15, cw_max: 1023, txop_us: 0 };
    /// Best effort at the access point: AIFSN 3, CW 15..63.
    pub const AP_BE: EdcaParams = EdcaParams { aifsn: 3, cw_min: 15, cw_max: 63, txop_us: 0 };
    /// Video at the access point: AIFSN 1, CW 7..15, TXOP 3.008 ms.
    pub const AP_VI: EdcaParams = EdcaParams { aifsn: 1, cw_min: 7, cw_max: 15, txop_us: 3008 };
    /// Voice at the access point: AIFSN 1, CW 3..7, TXOP 1.504 ms.
    pub const AP_VO: EdcaParams = EdcaParams { aifsn: 1, cw_min: 3, cw_max: 7, txop_us: 1504 };

    /// A station's parameters for `ac`.
    pub fn station(ac: Ac) -> EdcaParams {
        match ac {
            Ac::Bk => Self::STATION_BK,
            Ac::Be => Self::STATION_BE,
            Ac::Vi => Self::STATION_VI,
            Ac::Vo => Self::STATION_VO,
        }
    }

    /// The access point's parameters for `ac`.
    pub fn ap(ac: Ac) -> EdcaParams {
        match ac {
            Ac::Bk => Self::AP_BK,
            Ac::Be => Self::AP_BE,
            Ac::Vi => Self::AP_VI,
            Ac::Vo => Self::AP_VO,
        }
    }

    /// The longest PPDU an access may carry, in us: the TXOP limit where there is one
    /// (less SIFS and the BlockAck it must also hold), else `max_ppdu_us`.
    pub fn max_ppdu_us(&self, max_ppdu_us: f64, block_ack_us: f64) -> f64 {
        if self.txop_us == 0 {
            return max_ppdu_us;
        }
        (f64::from(self.txop_us) - SIFS_US - block_ack_us).min(max_ppdu_us)
    }

    /// AIFS in nanoseconds.
    pub fn aifs_ns(&self) -> Nanos {
        ((SIFS_US + f64::from(self.aifsn) * SLOT_US) * 1000.0) as Nanos
    }
}

/// Slot time in nanoseconds.
pub const SLOT_NS: Nanos = (SLOT_US * 1000.0) as Nanos;

#[cfg(test)]
mod tests {
    use super::*;

    /// The OFDM PHY's aCWmin and aCWmax.
    const A_CW_MIN: u32 = 15;
    const A_CW_MAX: u32 = 1023;
    /// 802.11-2020 Table 9-155, written as the table does in aCWmin and aCWmax:
    /// (AC, CWmin, CWmax, AIFSN, TXOP limit for the "other" PHYs in us).
    #[allow(clippy::manual_div_ceil, reason = "the standard writes (aCWmin + 1)/2 - 1")]
    const TABLE_9_155: [(Ac, u32, u32, u32, u32); 4] = [
        (Ac::Bk, A_CW_MIN, A_CW_MAX, 7, 0),
        (Ac::Be, A_CW_MIN, A_CW_MAX, 3, 0),
        (Ac::Vi, (A_CW_MIN + 1) / 2 - 1, A_CW_MIN, 2, 3008),
        (Ac::Vo, (A_CW_MIN + 1) / 4 - 1, (A_CW_MIN + 1) / 2 - 1, 2, 1504),
    ];

    #[test]
    fn a_stations_edca_parameters_are_the_standards_default_set() {
        for (ac, cw_min, cw_max, aifsn, txop_us) in TABLE_9_155 {
            assert_eq!(EdcaParams::station(ac), EdcaParams { aifsn, cw_min, cw_max, txop_us }, "{ac:?}");
        }
    }

    #[test]
    fn the_access_point_waits_less_than_a_station_for_vi_and_vo_and_caps_be_at_63() {
        for ac in [Ac::Bk, Ac::Be, Ac::Vi, Ac::Vo] {
            let (ap, sta) = (EdcaParams::ap(ac), EdcaParams::station(ac));
            assert!(ap.aifsn <= sta.aifsn && ap.cw_min == sta.cw_min && ap.txop_us == sta.txop_us, "{ac:?}");
        }
        assert_eq!((EdcaParams::AP_VO.aifsn, EdcaParams::AP_BE.cw_max), (1, 63));
        // Voice gets through a TXOP of 1.504 ms, less SIFS and a 32 us BlockAck.
        assert_eq!(EdcaParams::STATION_VO.max_ppdu_us(5484.0, 32.0), 1456.0);
        assert_eq!(EdcaParams::STATION_BE.max_ppdu_us(5484.0, 32.0), 5484.0);
    }
}
