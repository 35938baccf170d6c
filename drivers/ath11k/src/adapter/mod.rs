//! The adapter: the nine patches of the seed series over a [`Hal`], driving the core
//! scheduler ([`airtime_sched::Scheduler`]) and its ready round loop
//! ([`airtime_sched::driver_loop::run_round`]).
//!
//! One [`Ath11k`] value is one radio (mac80211's `ieee80211_hw`, ath11k's `ar`). Its
//! entry points map one to one onto the C API the kernel module exposes; see the
//! crate README for that mapping and for the locking context of each.

mod ac_set;
mod airtime;
mod completion;
mod config;
mod control;
mod error;
mod ring;
mod tables;
mod tx;

pub use ac_set::AcSet;
pub use airtime::PpduOutcome;
pub use completion::CompletionPass;
pub use config::Config;
pub use error::Ath11kError;
pub use tables::StationRecord;
pub use tx::RoundOutcome;

use crate::hal::Hal;
use crate::stats::DpStats;
use airtime_sched::{Ac, Charge, Scheduler, Txq, TxqId};
use tables::{StationSlots, TxqSlots};

/// A frame the ring refused after it was dequeued and charged (a race with another
/// path, or -ENOMEM): kept here, with its charge, and pushed first at the next round
/// on its AC. Nothing is freed and nothing is charged twice (the seed's patch 8 frees
/// it instead).
#[derive(Debug)]
struct Held<F> {
    frame: F,
    charge: Option<Charge>,
    txq: TxqId,
}

/// The ath11k adapter for one radio.
///
/// Generic over the HAL (`H`: the simulated one or the kernel module's) and the txq
/// type (`T`: any [`Txq`] whose frames are the HAL's, e.g. the core's FQ-CoDel txq).
///
/// Every entry point takes `&mut self`: the C side serialises them with one per-radio
/// lock taken with bottom halves disabled (see the README). The scheduler inside is
/// lock-free, so splitting the adapter per context later needs no change to it.
pub struct Ath11k<H, T: Txq> {
    hal: H,
    sched: Scheduler,
    config: Config,
    txqs: TxqSlots<T>,
    stations: StationSlots,
    /// The retry slot of each AC (patch 8, without freeing the frame).
    held: [Option<Held<T::Frame>>; Ac::COUNT],
    /// ACs whose last round ended on a full or refusing ring.
    blocked: AcSet,
    counters: DpStats,
}

impl<H: Hal, T: Txq<Frame = crate::hal::FrameOf<H>>> core::fmt::Debug for Ath11k<H, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ath11k")
            .field("config", &self.config)
            .field("sched", &self.sched)
            .field("blocked", &self.blocked)
            .finish_non_exhaustive()
    }
}
