//! # airtime-ath11k
//!
//! The ath11k adapter of the airtime workspace: the nine patches of the seed series
//! "wifi: ath11k: airtime queue limits, fairness and a driver TXQ scheduler" (v4),
//! plus the TX_NO_PUSHBACK flag, written once over a hardware abstraction so that the
//! same code runs on the simulated HAL (tests, simulator) and in the Linux kernel
//! module (`kmod/`, which exposes it to C).
//!
//! ## The layers, top-down
//!
//! 1. **[`Ath11k`]** — one radio. Its entry points are the driver's: wake a txq
//!    ([`Ath11k::wake_tx_queue`]), the tx completion NAPI poll
//!    ([`Ath11k::poll_tx_completions`]), PPDU tx stats ([`Ath11k::on_ppdu_tx_stats`]),
//!    rx duration ([`Ath11k::on_rx_ppdu`]), station and txq management, weights and
//!    limits, and the debugfs texts. Each maps one to one onto a C function of the
//!    kernel module (the README lists the mapping and the locking context of each).
//! 2. **The core** ([`airtime_sched`]) — the adapter owns the core's txq table
//!    [`TxqTable`](airtime_sched::TxqTable) (with its
//!    [`Scheduler`](airtime_sched::Scheduler)) and runs every round through the
//!    table's ready loop [`TxqTable::run_round`](airtime_sched::TxqTable::run_round),
//!    which checks ring room before each dequeue and keeps a refused frame in its
//!    txq's retry slot. The adapter implements the core's
//!    traits: [`Station`](airtime_sched::Station) for its [`StationRecord`] (priced by
//!    the last tx rate from PPDU stats, or the last rx rate before that), and
//!    [`Ring`](airtime_sched::Ring) over the TCL rings; the firmware picks the next
//!    transmitter, which the core learns from `Config::tx_no_pushback`. Txqs are any
//!    [`Txq`](airtime_sched::Txq) + [`Enqueue`](airtime_sched::Enqueue) whose frames
//!    are the HAL's (the core's FQ-CoDel txq
//!    in the simulator, a plain FIFO in the tests).
//! 3. **[`hal`]** — the ath11k data path split by role: [`hal::TclRings`] (three TCL
//!    data rings picked by the sending CPU, refusing with -ENOSPC or -ENOMEM),
//!    [`hal::MsduTable`] (the outstanding MSDUs of each ring, ath11k's idr, one entry
//!    short of `DP_TX_IDR_SIZE`), [`hal::TxCompletionRing`] and [`hal::StatusSink`]
//!    (completions with their statuses, and frames back to the stack),
//!    [`hal::PpduStatsSource`] and [`hal::RxStatusSource`] (HTT PPDU stats and rx
//!    monitor status). The NAPI budget is the completion poll's argument.
//! 4. **[`sim_hal`]** — a deterministic simulated HAL in passed-in time, with fault
//!    injection (full rings, out of memory, every completion status, MU PPDUs,
//!    completion bursts larger than the budget).
//!
//! ## The series, patch by patch
//!
//! | patch | what | here |
//! |---|---|---|
//! | 1 | free tx skbs through `ieee80211_free_txskb()` | every completion status, and every teardown path, releases the frame's charge ([`Ath11k::complete_msdu`], [`Ath11k::flush_outstanding`], [`Ath11k::shutdown`]) |
//! | 2 | enable AQL | [`Config::aql`] (on), the core's AQL checks |
//! | 3 | report the pending MSDU count | [`DpStats::pending_msdus`], [`Ath11k::dp_stats`], its `Display` |
//! | 4 | report tx airtime, enable ATF | [`Ath11k::on_ppdu_tx_stats`]: each MU user charged the whole PPDU (or its RU share, [`Config::mu_charging`]) |
//! | 5 | schedule TXQs from the driver | [`Ath11k::wake_tx_queue`] → [`Ath11k::run_round`] → `TxqTable::run_round` |
//! | 6 | run the scheduler on tx completion | [`Ath11k::poll_tx_completions`] starts rounds only for the ACs it reaped |
//! | 7 | charge received airtime | [`Ath11k::on_rx_ppdu`]: `register_airtime(sta, BE, 0, rx_us)` |
//! | 8 | stop a round when the hardware refuses | room checked before dequeue; a refused frame is kept in its txq (its charge given back while it waits) and sent first at the txq's next turn |
//! | 9 | budget the tx completion handler | [`Ath11k::poll_tx_completions`] handles at most `budget` descriptors per call |
//! | flag | `IEEE80211_HW_TX_NO_PUSHBACK` | [`Config::tx_no_pushback`] (on): limits scale by weight/256 |
//!
//! ## Where this differs from the series, on purpose
//! * **Patch 8**: the series frees the frame that meets a full ring (it was already
//!   dequeued and charged). Here ring room is checked before the dequeue, so that
//!   frame stays in its txq; and a frame the ring still refuses after the check (a
//!   race with the other context, or -ENOMEM) is kept in its txq's retry slot and
//!   pushed first at the txq's next turn. Its charge is released while it waits and
//!   made again when it is sent: a frame that is not in flight must not count against
//!   the AQL and PHY limits that gate its own txq's turn (kept charges did, and could
//!   hold a station back for good). No frame is lost and no charge leaks (tested, also
//!   from two threads with faults injected).
//! * **Patch 6**: the rings are shared by all ACs, so a completion pass that reaped
//!   anything also starts rounds on ACs whose last round ended on a full ring
//!   ([`Config::resume_blocked_acs`], on by default; off gives the series' behaviour).
//!   Otherwise such an AC waits for its next enqueue.
//! * **Patch 4**: a PPDU record without a PPDU duration charges each user its own
//!   reported tx duration. [`Config::mu_charging`] can charge each user of an MU PPDU
//!   its RU's share of it, or its own duration, instead of the whole PPDU
//!   ([`MuCharging`]; off by default).
//! * **Charges**: frames sent before the station's first rate report are charged the
//!   core's conservative unknown-rate charge, not nothing.
//! * **Calibration** ([`Config::calibration`], off by default): each station's AQL
//!   estimate can be calibrated against the airtime PPDU stats report (the series'
//!   cover letter measured the estimate at about 1/1.85 of the air); its frames are
//!   then priced at the learned ratio times the estimate. [`CalibrationStats`] counts
//!   the samples.
//!
//! ## Time, memory, panics
//! Time is passed in ([`airtime_sched::Instant`]); nothing reads a clock. Every table
//! is allocated in [`Ath11k::new`] (with `try_reserve`, so creation fails with
//! [`Ath11kError::OutOfMemory`] instead of aborting); the data path allocates only the
//! core's intake node for a frame [`Ath11k::enqueue`] takes when its txq has neither its
//! own node free nor an emptied one to reuse (refused with
//! `EnqueueError::NoMemory`, frame handed back, never an abort), and the simulated HAL's
//! queues. No floating point, no 128-bit division, no large arrays
//! on the stack (the largest value passed by value is a [`hal::PpduStats`], under
//! 300 bytes), no panics on any input.
//!
//! ## Concurrency
//! Every entry point takes `&self`, and `Ath11k` is `Sync` when its HAL, txqs and
//! frames allow: the wake path ([`Ath11k::enqueue`], [`Ath11k::wake_tx_queue`]) and
//! the completion path ([`Ath11k::poll_tx_completions`], PPDU stats, rx status) run at
//! once on different CPUs, and control operations beside them. The adapter takes no
//! lock: the txqs live in the core's [`TxqTable`](airtime_sched::TxqTable) (a lock-free
//! intake per txq, and the scheduler hands each txq to one context at a time, which is
//! the only way to its queue), station records and counters are atomics (a station's
//! estimate calibrator sits behind a try-flag that is never waited on), and each
//! hardware ring is serialised by the HAL (one lock per TCL ring and per MSDU table,
//! as in ath11k). The README lists the context and the locks of each entry point.
//!
//! ## Example
//! ```
//! use airtime_ath11k::sim_hal::{SimConfig, SimHal};
//! use airtime_ath11k::{Ath11k, Config, RoundEnd};
//! use airtime_sched::traits::Frame;
//! use airtime_sched::{Enqueue, Instant, Tid, Txq, Weight};
//! use std::collections::VecDeque;
//!
//! struct Pkt(u32);
//! impl Frame for Pkt {
//!     fn len_bytes(&self) -> u32 {
//!         self.0
//!     }
//! }
//! #[derive(Default)]
//! struct Fifo(VecDeque<Pkt>);
//! impl Txq for Fifo {
//!     type Frame = Pkt;
//!     type Error = core::convert::Infallible;
//!     fn dequeue(&mut self, _: Instant) -> Result<Option<Pkt>, Self::Error> {
//!         Ok(self.0.pop_front())
//!     }
//!     fn peek_len(&self) -> Option<u32> {
//!         self.0.front().map(|p| p.0)
//!     }
//! }
//!
//! impl Enqueue for Fifo {
//!     fn enqueue(&mut self, frame: Pkt, _: Instant) {
//!         self.0.push_back(frame);
//!     }
//! }
//!
//! let radio: Ath11k<SimHal<Pkt>, Fifo> =
//!     Ath11k::new(SimHal::new(SimConfig::default()), Config::default()).unwrap();
//! let sta = radio.add_station(7, Weight::DEFAULT).unwrap(); // firmware peer id 7
//! let txq = radio.add_txq(Some(sta), Tid::BE, Fifo::default()).map_err(|e| e.0).unwrap();
//!
//! // The stack enqueues (any context, no lock) and wakes the txq from CPU 1: the
//! // driver's round pushes into TCL ring 1 until AQL or the ring stops it.
//! let mut now = Instant::from_millis(1);
//! for _ in 0..3 {
//!     radio.enqueue(txq, Pkt(1500), now).map_err(|e| e.to_string()).unwrap();
//! }
//! let round = radio.wake_tx_queue(txq, 1, now).unwrap();
//! assert_eq!((round.frames, round.end), (3, Some(RoundEnd::Exhausted)));
//! assert_eq!(radio.dp_stats().pending_msdus, [0, 3, 0]);
//!
//! // The firmware takes the descriptors, completes them 1000 us later (its
//! // configured delay), and the NAPI poll releases every charge.
//! radio.hal().advance(now);
//! now = now.add_micros(1000);
//! radio.hal().advance(now);
//! let pass = radio.poll_tx_completions(64, 1, now);
//! assert_eq!(pass.work_done, 3);
//! assert_eq!(radio.scheduler().total_pending_us(), 0);
//!
//! // Measured airtime from PPDU stats lands in the station's `airtime` file.
//! radio.poll_airtime_reports(16, now);
//! let mut text = String::new();
//! radio.write_station_airtime(sta, &mut text).unwrap();
//! assert!(text.contains("TX: 300 us"));
//! ```

// Never std outside tests: a std user elsewhere in a build (the simulator) must not be
// able to pull std into the kernel module's staticlib through feature unification.
#![cfg_attr(not(test), no_std)]
#![deny(clippy::float_arithmetic)]
// This code runs inside kernel modules and is fuzzed. Outside tests, run-time code may not
// index unchecked (per-AC state is a `PerAc`, indexed by `Ac`), do arithmetic that can
// overflow, unwrap, or call a panicking macro; an exception names why its index is in
// bounds. The Rust-for-Linux module (rfl/) compiles this crate with overflow checks on
// (CONFIG_RUST_OVERFLOW_CHECKS), where an overflow is a BUG(): arithmetic wraps,
// saturates or is checked, and says why.
#![cfg_attr(
    not(test),
    deny(
        clippy::arithmetic_side_effects,
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]
#![warn(missing_docs)]

extern crate alloc;

mod adapter;
pub mod hal;
pub mod mu_charging;
pub mod sim_hal;
pub mod stats;

pub use adapter::{
    AcSet, Ath11k, Ath11kError, CompletionPass, Config, PpduOutcome, RoundOutcome, Rounds, RoundsRun, StationRecord,
};
pub use airtime_sched::driver_loop::RoundEnd;
pub use hal::Hal;
pub use mu_charging::MuCharging;
pub use stats::{CalibrationStats, DpStats, TextBuf};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_passed_by_value_stay_small_for_kernel_stacks() {
        assert!(core::mem::size_of::<hal::PpduStats>() <= 300, "{}", core::mem::size_of::<hal::PpduStats>());
        assert!(core::mem::size_of::<DpStats>() <= 320, "{}", core::mem::size_of::<DpStats>());
        assert!(core::mem::size_of::<CompletionPass>() <= 32);
        assert!(core::mem::size_of::<RoundOutcome>() <= 32);
    }
}
