//! The Wi-Fi layer: PHY timing of a PPDU, EDCA contention, A-MPDU limits, and the shared
//! medium that decides who transmits when.

pub mod ampdu;
pub mod edca;
pub mod medium;
pub mod phy;

pub use phy::PhyTiming;
