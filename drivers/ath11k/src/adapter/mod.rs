//! The adapter: the nine patches of the seed series over a [`Hal`], driving the core
//! scheduler ([`airtime_sched::Scheduler`]) through the core's txq table and its ready
//! round loop ([`airtime_sched::TxqTable::run_round`]).
//!
//! One [`Ath11k`] value is one radio (mac80211's `ieee80211_hw`, ath11k's `ar`). Its
//! entry points map one to one onto the C API the kernel module exposes; see the
//! crate README for that mapping and for the locking context of each.

mod ac_set;
mod airtime;
mod calibration;
mod completion;
mod config;
mod control;
mod counters;
mod error;
mod ring;
mod tables;
mod tx;

pub use ac_set::AcSet;
pub use airtime::PpduOutcome;
pub use completion::CompletionPass;
pub use config::{Config, Rounds};
pub use error::Ath11kError;
pub use tables::StationRecord;
pub use tx::{RoundOutcome, RoundsRun};

use crate::hal::Hal;
use airtime_sched::{Txq, TxqTable};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU8, AtomicU64};
use counters::{AtomicAcSet, DpCounters, HeldGauge};
use tables::StationSlots;

/// What the adapter keeps per txq slot beside the core's table.
#[derive(Debug)]
pub(crate) struct TxqMark {
    /// The slot's txq (raw id), `u64::MAX` if none: for teardown to find every txq.
    id: AtomicU64,
    /// 0, or 1 + the AC index while the txq's retry slot holds a frame the ring refused
    /// (patch 8, without freeing the frame). Written only by the context holding the
    /// txq's turn, or the one taking the removed txq back.
    holding: AtomicU8,
}

/// The ath11k adapter for one radio.
///
/// Generic over the HAL (`H`: the simulated one or the kernel module's) and the txq
/// type (`T`: any [`Txq`] that can be enqueued into, whose frames are the HAL's, e.g.
/// the core's FQ-CoDel txq).
///
/// Every entry point takes `&self`. The wake path ([`enqueue`](Self::enqueue),
/// [`wake_tx_queue`](Self::wake_tx_queue), [`run_round`](Self::run_round)), the
/// completion path ([`poll_tx_completions`](Self::poll_tx_completions), PPDU stats, rx
/// status) and control operations may run at once on different CPUs: the adapter
/// itself takes no lock. The txqs live in the core's [`TxqTable`] (an enqueue writes
/// into a txq's queue when nobody holds it, else into its lock-free intake; the
/// scheduler hands each txq to one context at a time), counters are
/// atomics, station records are atomics, and the HAL serialises each hardware ring
/// itself. The README's "Locking" section lists the context of each entry point.
pub struct Ath11k<H, T: Txq> {
    hal: H,
    /// The txqs and the scheduler that owns their turns.
    txqs: TxqTable<T>,
    config: Config,
    stations: StationSlots,
    /// Per txq slot: its txq, and whether its retry slot holds a refused frame.
    txq_marks: Vec<TxqMark>,
    /// Frames in retry slots, per AC.
    held: HeldGauge,
    /// ACs a round found the ring full for (or refusing) since the last completion
    /// pass that resumed them: only that pass clears them (`finish_pass`).
    blocked: AtomicAcSet,
    /// ACs on which a round must follow with nobody running it yet: a round ran out of
    /// its bounded follow-up rounds ([`Ath11k::rounds_waiting`]).
    rerun: AtomicAcSet,
    /// Which context runs each AC's rounds, with [`Rounds::Gated`].
    gate: airtime_sched::RoundGate,
    counters: DpCounters,
}

impl<H: Hal, T: Txq<Frame = crate::hal::FrameOf<H>>> core::fmt::Debug for Ath11k<H, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ath11k")
            .field("config", &self.config)
            .field("txqs", &self.txqs)
            .field("blocked", &self.blocked.load())
            .finish_non_exhaustive()
    }
}
