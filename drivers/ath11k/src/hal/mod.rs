//! The hardware abstraction the adapter runs over: the ath11k data path split into
//! small traits by role (embedded-hal's habit).
//!
//! # For HAL authors
//! Implement one trait per role of the data path, then [`Hal`] comes for free (a
//! blanket impl):
//!
//! | trait | ath11k | what it does |
//! |---|---|---|
//! | [`TclRings`] | `dp->tx_ring[i].tcl_data_ring`, `ath11k_dp_tx` | three TCL data rings picked by the sending CPU: room check and enqueue, which may refuse with -ENOSPC or -ENOMEM |
//! | [`MsduTable`] | `tx_ring->txbuf_idr` | the outstanding MSDUs of each ring, by MSDU id: the frame and its AQL charge until completion |
//! | [`TxCompletionRing`] | WBM tx completion rings, `ath11k_dp_tx_completion_handler` | one completion descriptor at a time: ring, MSDU id, status |
//! | [`StatusSink`] | `ieee80211_tx_status_ext` / `ieee80211_free_txskb` | gives a finished frame back to the stack with its status |
//! | [`PpduStatsSource`] | HTT PPDU stats (`ath11k_htt_pull_ppdu_stats`) | per-user tx duration of each PPDU, MU PPDUs with several users |
//! | [`RxStatusSource`] | rx monitor status (`ath11k_dp_rx_process_mon_status`) | per-PPDU rx duration per peer |
//!
//! The NAPI budget is not a HAL role: it is the argument of the completion poll,
//! [`Ath11k::poll_tx_completions`](crate::Ath11k::poll_tx_completions), as it is the
//! argument of a NAPI poll function.
//!
//! Errors: [`TclRings::Error`] implements the core's
//! [`RingError`](airtime_sched::RingError), so its `kind()` is the core's
//! [`RingErrorKind`](airtime_sched::RingErrorKind) (full, out of memory, other) and
//! maps to an errno with [`errno`]. The other roles cannot fail in a way the adapter
//! could act on: a source is empty or not, a table has the id or not.
//!
//! # Locking
//! Every method of every role takes `&self`: the adapter's wake context and completion
//! context call the HAL at the same time, on different CPUs. The implementation
//! serialises what the hardware needs serialised, and nothing more: one lock per TCL
//! ring around its descriptor writes (ath11k's `tcl_ring->lock`), one per ring's MSDU
//! table (`tx_ring->tx_idr_lock`). The completion ring has one consumer, the completion
//! context; the status sink may be called from any context. [`TclRings::tcl_free`] and
//! [`MsduTable::msdu_outstanding`] are hints read before each dequeue; the enqueue
//! and the insert decide (a refusal is kept by the adapter, never dropped). The
//! simulated HAL models those locks with a small spinlock per ring; the kernel
//! module's C HAL uses ath11k's own.
//!
//! # For users of the traits
//! The adapter ([`Ath11k`](crate::Ath11k)) is the only user the crate has; the
//! simulated HAL ([`SimHal`](crate::sim_hal::SimHal)) and the kernel module's C-backed
//! HAL are the implementations.

mod completion;
mod msdu;
mod stats;
mod tcl;

pub use completion::{StatusSink, TxCompletion, TxCompletionRing, TxStatus};
pub use msdu::{Msdu, MsduTable};
pub use stats::{MAX_PPDU_USERS, PpduStats, PpduStatsSource, PpduUser, RxPpdu, RxStatusSource};
pub use tcl::{RingId, TclDesc, TclRings, errno};

/// ath11k's `DP_TCL_NUM_RING_MAX`: TCL data rings per SoC (IPQ8074).
pub const DP_TCL_NUM_RING_MAX: usize = 3;
/// ath11k's `DP_TCL_DATA_RING_SIZE`: descriptors per TCL data ring.
pub const DP_TCL_DATA_RING_SIZE: u32 = 512;
/// ath11k's `DP_TX_IDR_SIZE` (`DP_TX_COMP_RING_SIZE`): the MSDU id space of one ring.
pub const DP_TX_IDR_SIZE: u32 = 32768;
/// Outstanding MSDUs one ring's table holds: one short of [`DP_TX_IDR_SIZE`], since
/// ath11k allocates ids in `[0, DP_TX_IDR_SIZE - 1)` (the seed's patch 3 note).
pub const MSDU_TABLE_CAPACITY: u32 = DP_TX_IDR_SIZE - 1;

/// Every role of the ath11k data path, for one frame type ([`MsduTable::Frame`]).
/// Implemented for any type that implements all the role traits.
pub trait Hal:
    TclRings + MsduTable + TxCompletionRing + StatusSink<Frame = FrameOf<Self>> + PpduStatsSource + RxStatusSource
{
}

impl<H> Hal for H where
    H: TclRings + MsduTable + TxCompletionRing + StatusSink<Frame = FrameOf<H>> + PpduStatsSource + RxStatusSource
{
}

/// The frame type of a HAL (an skb in the kernel module).
pub type FrameOf<H> = <H as MsduTable>::Frame;
