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
//! 2. **The core** ([`airtime_sched`]) — the adapter owns a
//!    [`Scheduler`](airtime_sched::Scheduler) and runs every round through the core's
//!    ready loop [`driver_loop::run_round`](airtime_sched::driver_loop::run_round),
//!    which checks ring room before each dequeue. The adapter implements the core's
//!    traits: [`Station`](airtime_sched::Station) for its [`StationRecord`] (priced by
//!    the last tx rate from PPDU stats, or the last rx rate before that), and
//!    [`Ring`](airtime_sched::Ring) over the TCL rings; the firmware picks the next
//!    transmitter, which the core learns from `Config::tx_no_pushback`. Txqs are any
//!    [`Txq`](airtime_sched::Txq) whose frames are the HAL's (the core's FQ-CoDel txq
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
//! | 1 | free tx skbs through `ieee80211_free_txskb()` | every completion status, and every teardown path, releases the frame's charge ([`Ath11k::complete_msdu`], [`Ath11k::flush_outstanding`]) |
//! | 2 | enable AQL | [`Config::aql`] (on), the core's AQL checks |
//! | 3 | report the pending MSDU count | [`DpStats::pending_msdus`], [`Ath11k::dp_stats`], its `Display` |
//! | 4 | report tx airtime, enable ATF | [`Ath11k::on_ppdu_tx_stats`]: each MU user charged the whole PPDU |
//! | 5 | schedule TXQs from the driver | [`Ath11k::wake_tx_queue`] → [`Ath11k::run_round`] → `driver_loop::run_round` |
//! | 6 | run the scheduler on tx completion | [`Ath11k::poll_tx_completions`] starts rounds only for the ACs it reaped |
//! | 7 | charge received airtime | [`Ath11k::on_rx_ppdu`]: `register_airtime(sta, BE, 0, rx_us)` |
//! | 8 | stop a round when the hardware refuses | room checked before dequeue; a refused frame is kept with its charge and sent first next round |
//! | 9 | budget the tx completion handler | [`Ath11k::poll_tx_completions`] handles at most `budget` descriptors per call |
//! | flag | `IEEE80211_HW_TX_NO_PUSHBACK` | [`Config::tx_no_pushback`] (on): limits scale by weight/256 |
//!
//! ## Where this differs from the series, on purpose
//! * **Patch 8**: the series frees the frame that meets a full ring (it was already
//!   dequeued and charged). Here ring room is checked before the dequeue, so that
//!   frame stays in its txq; and a frame the ring still refuses after the check (a
//!   race with another path, or -ENOMEM) is kept in a per-AC retry slot with its
//!   charge and pushed first at the next round on its AC. No frame and no charge is
//!   lost (tested).
//! * **Patch 6**: the rings are shared by all ACs, so a completion pass that reaped
//!   anything also starts rounds on ACs whose last round ended on a full ring
//!   ([`Config::resume_blocked_acs`], on by default; off gives the series' behaviour).
//!   Otherwise such an AC waits for its next enqueue.
//! * **Patch 4**: a PPDU record without a PPDU duration charges each user its own
//!   reported tx duration.
//! * **Charges**: frames sent before the station's first rate report are charged the
//!   core's conservative unknown-rate charge, not nothing.
//!
//! ## Time, memory, panics
//! Time is passed in ([`airtime_sched::Instant`]); nothing reads a clock. Every table
//! is allocated in [`Ath11k::new`] (with `try_reserve`, so creation fails with
//! [`Ath11kError::OutOfMemory`] instead of aborting); the data path never allocates
//! (the simulated HAL does). No floating point, no 128-bit division, no large arrays
//! on the stack (the largest value passed by value is a [`hal::PpduStats`], under
//! 300 bytes), no panics on any input.
//!
//! ## Concurrency
//! Every entry point takes `&mut self`: the C side serialises them with one per-radio
//! spinlock taken with bottom halves disabled (softirq-safe), which is what
//! mac80211's own `ieee80211_handle_wake_tx_queue` does with its per-PHY lock. The
//! scheduler underneath is lock-free, so a later split of the adapter per context
//! (wake and completion on different CPUs at once) needs no change to the core.
//!
//! ## Example
//! ```
//! use airtime_ath11k::sim_hal::{SimConfig, SimHal};
//! use airtime_ath11k::{Ath11k, Config, RoundEnd};
//! use airtime_sched::traits::Frame;
//! use airtime_sched::{Instant, Tid, Txq, Weight};
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
//! let mut radio: Ath11k<SimHal<Pkt>, Fifo> =
//!     Ath11k::new(SimHal::new(SimConfig::default()), Config::default()).unwrap();
//! let sta = radio.add_station(7, Weight::DEFAULT).unwrap(); // firmware peer id 7
//! let txq = radio.add_txq(Some(sta), Tid::BE, Fifo::default()).map_err(|e| e.0).unwrap();
//!
//! // The stack enqueues and wakes the txq from CPU 1: the driver's round pushes into
//! // TCL ring 1 until AQL or the ring stops it.
//! let mut now = Instant::from_millis(1);
//! radio.txq_mut(txq).unwrap().0.extend((0..3).map(|_| Pkt(1500)));
//! let round = radio.wake_tx_queue(txq, 1, now).unwrap();
//! assert_eq!((round.frames, round.end), (3, RoundEnd::Exhausted));
//! assert_eq!(radio.dp_stats().pending_msdus, [0, 3, 0]);
//!
//! // The firmware takes the descriptors, completes them 1000 us later (its
//! // configured delay), and the NAPI poll releases every charge.
//! radio.hal_mut().advance(now);
//! now = now.add_micros(1000);
//! radio.hal_mut().advance(now);
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
#![warn(missing_docs)]

extern crate alloc;

mod adapter;
pub mod hal;
pub mod sim_hal;
pub mod stats;

pub use adapter::{AcSet, Ath11k, Ath11kError, CompletionPass, Config, PpduOutcome, RoundOutcome, StationRecord};
pub use airtime_sched::driver_loop::RoundEnd;
pub use hal::Hal;
pub use stats::{DpStats, TextBuf};

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
