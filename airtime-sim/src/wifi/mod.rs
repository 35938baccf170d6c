//! The Wi-Fi layer: PHY timing of a PPDU, EDCA contention, A-MPDU limits, the shared
//! medium that decides who transmits when, the timing of HE multi-user (OFDMA) PPDUs,
//! and (off by default) a station's lossy or changing link with its rate control and
//! the receiver's reorder buffer; a station's own transmit queues (mac80211's txqs).

pub mod ampdu;
pub mod edca;
pub mod link;
pub mod medium;
pub mod minstrel;
pub mod ofdma;
pub mod phy;
pub mod reorder;
pub mod seq_window;
pub mod station_txq;

pub use phy::PhyTiming;
