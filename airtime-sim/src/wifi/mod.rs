//! The Wi-Fi layer: PHY timing of a PPDU, EDCA contention, A-MPDU limits, and the shared
//! medium that decides who transmits when; the timing of HE multi-user (OFDMA) PPDUs.

pub mod ampdu;
pub mod edca;
pub mod medium;
pub mod ofdma;
pub mod phy;

pub use phy::PhyTiming;
