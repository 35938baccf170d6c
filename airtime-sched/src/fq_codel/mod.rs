//! A reusable FQ-CoDel [`Txq`](crate::Txq): what mac80211 runs in each txq
//! (`ieee80211_txq_enqueue`, `ieee80211_tx_dequeue` over `fq_tin_dequeue` and
//! `codel_dequeue`), over any frame type.
//!
//! # The algorithm, top-down
//!
//! 1. **Flows.** A frame's [`flow_hash`](FqFrame::flow_hash) (the 5-tuple hash the stack
//!    computed) is scaled to one of the txq's flows. Frames of a flow stay in order.
//! 2. **Byte deficit round robin between flows (DRR++).** A flow that becomes
//!    backlogged gets a credit of one quantum (300 bytes) and joins the *new* list,
//!    which is served before the *old* list: a sparse flow (a ping, a DNS query, a TCP
//!    ACK) goes ahead of bulk flows. A flow sends while its credit is positive; each
//!    frame takes its length from the credit; a flow without credit gets another quantum
//!    and moves to the tail of the old list. So bulk flows share the txq's bytes equally,
//!    whatever their frame sizes. A new flow that empties moves to the old list if
//!    others wait there (so that a flow cannot stay "new" forever), else it leaves.
//! 3. **CoDel per flow.** At dequeue, each frame's sojourn time (now minus its enqueue
//!    time, in the passed-in microseconds) is compared with the target (20 ms). When it
//!    has stayed at or above the target for an interval (100 ms), the flow drops its
//!    head frame — or, with ECN on and an ECN-capable frame, marks it CE and sends it —
//!    and then again after `interval / sqrt(count)`, faster and faster, until the
//!    sojourn falls below target; a drop episode that starts soon after the last one
//!    resumes near its drop rate. A dropped frame is replaced by the flow's next frame
//!    in the same dequeue. A flow's last frame is never dropped (mac80211 sets no MTU,
//!    so CoDel only holds off when the flow would be empty). The control law is integer:
//!    `1 / sqrt(count)` in Q0.32 by Newton steps. No floats, no clock.
//! 4. **Limits.** After each enqueue, while the txq holds more than the packet limit
//!    (8192) or more memory than the memory limit (16 MiB of
//!    [`truesize`](FqFrame::truesize)), the *fattest* flow (most bytes queued) loses a
//!    batch of `max(1, min(32, its packets / 2))` frames from its head. Finding the
//!    fattest flow walks the listed flows (every backlogged flow is listed): O(listed
//!    flows) on this overload path only, nothing on the normal path; mac80211 scans its
//!    backlog bitmap there. (An exact heap would cost O(log flows) on every enqueue and
//!    dequeue to save time only while overloaded.)
//!
//! # Drops are never silent
//! Every frame accepted by [`enqueue`](FqCodelTxq::enqueue) leaves by exactly one of:
//! [`dequeue`](crate::Txq::dequeue), or a drop that is counted in [`FqCodelStats`] by
//! reason and (by default) kept with its [`DropReason`] until the owner takes it with
//! [`drain_drops`](FqCodelTxq::drain_drops). So at any time
//! `enqueued = tx_packets + dropped + backlog_packets`. A txq that is done (its station
//! left) is ended with [`retire`](FqCodelTxq::retire), which hands back its frames and
//! final counters; dropping it instead releases its queued frames uncounted.
//!
//! Why a drop buffer rather than a callback: CoDel drops happen inside
//! [`Txq::dequeue`](crate::Txq::dequeue), whose signature is fixed, so a callback would
//! have to be stored in the txq — a boxed closure (an allocation and an indirect call per
//! drop) that needs shared ownership of whatever it reports to (`Rc<RefCell<..>>` in the
//! simulator). A buffer is plain data: the simulator drains it after each step to
//! account TCP losses exactly, the fuzz target checks that no frame is lost or
//! duplicated, and a driver that only needs counts sets
//! [`FqCodelConfig::keep_dropped`] to false and frames are released at once.
//!
//! # Where this differs from mac80211
//! * Flows and limits are per txq, not shared by the PHY (see [`FqCodelConfig`]); hence
//!   no default flow and no cross-txq collisions. [`FqCodelStats::collisions`] counts
//!   instead frames whose hash differs from the one of the backlogged flow they join.
//! * Time is in microseconds (u64), not 1024 ns units in a wrapping u32.
//! * The inverse square root is iterated to convergence, so the first drops of an
//!   episode are spaced exactly (`interval / sqrt(2)`, not `interval / 2`).
//! * A frame's debit of DRR credit is capped at 65 535 bytes, so that a frame of absurd
//!   length costs its flow at most 219 laps of the 300-byte quantum rather than millions.
//!   A flow alone on the old list takes its laps at once, in O(1), where mac80211 rotates
//!   it onto itself once per lap.
//! * A frame that cannot be stored (allocation failure) is dropped and counted
//!   ([`DropReason::OutOfMemory`]) instead of aborting.
//! * The limit counters count frames, not batches, and a batch dropped while over the
//!   memory limit counts as over-memory only, so the drop counters add up to the drops.
//! * The dequeue (or limit drop) that takes the txq's last frame unlists every flow at
//!   once, as the next dequeue, which would find nothing, does in mac80211; a round
//!   ends a turn on the emptied queue without making that call
//!   ([`Txq::is_known_empty`](crate::Txq::is_known_empty)). A driver that stops at the
//!   last frame (its budget, AQL) thus leaves no drained flow listed, where mac80211
//!   leaves them until its next call.
//! * A dequeue that finds a flow empty also forgets when its sojourn went above target
//!   (mainline's `codel_dequeue` only leaves dropping mode).
//!
//! # Example
//! ```
//! use airtime_sched::fq_codel::{FqCodelConfig, FqCodelTxq, FqFrame};
//! use airtime_sched::{Frame, Instant, Txq};
//!
//! struct Pkt {
//!     flow: u32,
//!     len: u32,
//! }
//! impl Frame for Pkt {
//!     fn len_bytes(&self) -> u32 {
//!         self.len
//!     }
//! }
//! impl FqFrame for Pkt {
//!     fn flow_hash(&self) -> u32 {
//!         self.flow
//!     }
//! }
//!
//! let mut txq = FqCodelTxq::new(FqCodelConfig::default()).unwrap();
//! let t0 = Instant::from_millis(1);
//! for _ in 0..3 {
//!     assert!(txq.enqueue(Pkt { flow: 0x1000_0000, len: 1500 }, t0).is_queued());
//! }
//! assert!(txq.enqueue(Pkt { flow: 0x9000_0000, len: 64 }, t0).is_queued());
//!
//! // Both flows are new; the bulk flow spends its quantum, then the sparse one goes.
//! assert_eq!(txq.dequeue(t0).unwrap().map(|p| p.len), Some(1500));
//! assert_eq!(txq.dequeue(t0).unwrap().map(|p| p.len), Some(64));
//!
//! // Half a second later the bulk flow's frames have waited far above target, but
//! // CoDel only drops once that has lasted a whole interval.
//! let later = Instant::from_millis(501);
//! assert_eq!(txq.dequeue(later).unwrap().map(|p| p.len), Some(1500));
//! assert_eq!(txq.stats().codel_drops, 0);
//! assert_eq!(txq.drain_drops().count(), 0);
//! assert_eq!(txq.stats().tx_packets, 3);
//! ```

mod codel;
mod config;
mod flows;
mod stats;
mod txq;

pub use config::{FqCodelConfig, FqCodelConfigError, MAX_FLOWS};
pub use stats::FqCodelStats;
pub use txq::{FqCodelTxq, RetiredTxq};

use crate::{Frame, Instant};

/// A frame FQ-CoDel can classify and manage.
pub trait FqFrame: Frame {
    /// The flow hash (e.g. the kernel's `skb_get_hash`): frames of one transport flow
    /// must hash alike. Any `u32` is fine; it is scaled to the flow table.
    fn flow_hash(&self) -> u32;

    /// Memory the frame holds, counted against the memory limit (mac80211 counts
    /// `skb->truesize`). Defaults to the length.
    fn truesize(&self) -> u32 {
        self.len_bytes()
    }

    /// Whether the frame is ECN-capable (ECT(0) or ECT(1) in its IP header).
    fn ecn_capable(&self) -> bool {
        false
    }

    /// Marks the frame Congestion Experienced; returns whether it did. Called instead of
    /// a CoDel drop when ECN is on and [`ecn_capable`](FqFrame::ecn_capable) is true;
    /// returning false makes CoDel drop the frame after all.
    fn set_ce(&mut self) -> bool {
        false
    }
}

/// Why a frame was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DropReason {
    /// CoDel dropped it at dequeue (sojourn above target for too long).
    Codel,
    /// The txq was over its packet limit: dropped from the head of the fattest flow.
    PacketLimit,
    /// The txq was over its memory limit: dropped from the head of the fattest flow.
    MemoryLimit,
    /// The frame could not be stored (allocation failed) at enqueue.
    OutOfMemory,
    /// [`FqCodelTxq::purge`] removed it.
    Purged,
}

/// A dropped frame, kept for the owner to see (see [`FqCodelTxq::drain_drops`]).
#[derive(Debug)]
#[non_exhaustive]
pub struct Dropped<F> {
    /// The frame.
    pub frame: F,
    /// Why it was dropped.
    pub reason: DropReason,
    /// When it was enqueued.
    pub enqueued: Instant,
}

/// What [`FqCodelTxq::enqueue`] did.
#[must_use = "an enqueue may drop frames, which the caller has to account"]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnqueueOutcome {
    /// The frame is queued; `dropped` other frames were dropped to keep the limits.
    Queued {
        /// Frames dropped from the fattest flow(s) by this enqueue.
        dropped: u32,
    },
    /// The frame itself was dropped.
    Dropped {
        /// Why it was dropped.
        reason: DropReason,
        /// Frames dropped by this enqueue, the frame itself included.
        dropped: u32,
    },
}

impl EnqueueOutcome {
    /// Whether the frame is queued.
    pub fn is_queued(&self) -> bool {
        matches!(self, EnqueueOutcome::Queued { .. })
    }

    /// Frames this enqueue dropped (including the frame itself if it was dropped).
    pub fn dropped(&self) -> u32 {
        match *self {
            EnqueueOutcome::Queued { dropped } | EnqueueOutcome::Dropped { dropped, .. } => dropped,
        }
    }
}

/// A frame in a flow, with what was measured when it arrived (so that accounting does
/// not depend on the frame answering alike twice).
#[derive(Debug)]
pub(crate) struct Queued<F> {
    pub(crate) frame: F,
    pub(crate) enqueued: Instant,
    pub(crate) len: u32,
    pub(crate) truesize: u32,
}
