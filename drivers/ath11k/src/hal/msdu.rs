//! The outstanding MSDU table: ath11k's per-ring idr of frames handed to the hardware.

use super::RingId;
use airtime_sched::{Ac, Charge};

/// One outstanding MSDU: the frame and what its completion needs.
///
/// The charge is kept as its compact `u32` ([`Charge::into_raw`], 0 = uncharged)
/// rather than as a [`Charge`]: in the kernel module the table is ath11k's idr of
/// skbs and the charge lives in the skb's control block, which holds plain bytes
/// only. Keeping the trait at that representation means the simulated HAL runs the
/// very encoding the module runs, on every frame. Exactly-once release is then kept
/// the way the idr keeps it: [`MsduTable::msdu_take`] removes the entry, so a second
/// completion for the same id finds nothing.
#[derive(Debug, PartialEq, Eq)]
pub struct Msdu<F> {
    /// The frame.
    pub frame: F,
    /// Its charge as [`Charge::into_raw`] gave it, or 0 for an uncharged frame.
    pub charge_raw: u32,
    /// The access category of the round that sent it (the completion pass starts
    /// rounds for the ACs it reaped, patch 6; uncharged frames need it too).
    pub ac: Ac,
}

impl<F> Msdu<F> {
    /// An entry for `frame` holding `charge` (consumed into its raw form).
    pub fn new(frame: F, charge: Option<Charge>, ac: Ac) -> Msdu<F> {
        Msdu { frame, charge_raw: charge.map_or(0, Charge::into_raw), ac }
    }

    /// Splits the entry into the frame and its charge token (to be released).
    pub fn into_parts(self) -> (F, Option<Charge>, Ac) {
        (self.frame, Charge::from_raw(self.charge_raw), self.ac)
    }
}

/// The outstanding MSDU table of each ring (`tx_ring->txbuf_idr`): bounded, one entry
/// short of `DP_TX_IDR_SIZE` on ath11k ([`MSDU_TABLE_CAPACITY`](super::MSDU_TABLE_CAPACITY)).
///
/// Locking: `&self` throughout; the wake context inserts (and takes back a refused
/// entry) while the completion context takes completed entries, at once. The
/// implementation serialises each ring's table with its own lock, as ath11k's
/// `tx_ring->tx_idr_lock` does, independent of the TCL ring's lock.
pub trait MsduTable {
    /// The frame type.
    type Frame;

    /// Entries one ring's table can hold.
    fn msdu_capacity(&self, ring: RingId) -> u32;

    /// Entries held now on `ring` (the count patch 3 reports).
    fn msdu_outstanding(&self, ring: RingId) -> u32;

    /// Stores an entry and returns its id (`idr_alloc`), or hands it back when the
    /// table is full (ath11k then returns -ENOSPC).
    fn msdu_insert(&self, ring: RingId, msdu: Msdu<Self::Frame>) -> Result<u32, Msdu<Self::Frame>>;

    /// Removes and returns the entry `id` (`idr_remove`), `None` if there is none.
    fn msdu_take(&self, ring: RingId, id: u32) -> Option<Msdu<Self::Frame>>;

    /// Removes and returns any one entry of `ring`, for teardown
    /// (`ath11k_dp_tx_pending_cleanup` over `idr_for_each`).
    fn msdu_take_any(&self, ring: RingId) -> Option<(u32, Msdu<Self::Frame>)>;

    /// The frame's address as this HAL's descriptor writer knows it, carried in
    /// [`TclDesc::frame_addr`](super::TclDesc::frame_addr) (ath11k's `skb`, which
    /// `ath11k_dp_tx` maps right after `idr_alloc`). 0 by default: none.
    fn frame_addr(&self, frame: &Self::Frame) -> usize {
        let _ = frame;
        0
    }
}
