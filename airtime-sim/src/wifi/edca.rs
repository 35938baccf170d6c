//! EDCA parameters of one access category at one transmitter (802.11 EDCA at 5 GHz:
//! AIFS = SIFS + AIFSN x slot, then a backoff drawn from the contention window), and the
//! contention window that doubles after a collision.

use super::phy::{SIFS_US, SLOT_US};
use crate::engine::Nanos;

/// EDCA parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdcaParams {
    /// AIFS number: AIFS = SIFS + AIFSN x slot.
    pub aifsn: u32,
    /// Smallest contention window.
    pub cw_min: u32,
    /// Largest contention window.
    pub cw_max: u32,
}

impl EdcaParams {
    /// Best effort at a station: AIFSN 3, CW 15..1023.
    pub const STATION_BE: EdcaParams = EdcaParams { aifsn: 3, cw_min: 15, cw_max: 1023 };
    /// Best effort at the access point: AIFSN 3, CW 15..63.
    pub const AP_BE: EdcaParams = EdcaParams { aifsn: 3, cw_min: 15, cw_max: 63 };

    /// AIFS in nanoseconds.
    pub fn aifs_ns(&self) -> Nanos {
        ((SIFS_US + f64::from(self.aifsn) * SLOT_US) * 1000.0) as Nanos
    }
}

/// Slot time in nanoseconds.
pub const SLOT_NS: Nanos = (SLOT_US * 1000.0) as Nanos;
