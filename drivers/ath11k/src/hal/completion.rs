//! The tx completion ring and the way finished frames go back to the stack.

use super::RingId;

/// How the hardware finished with a frame (ath11k's WBM release source and reason,
/// folded into what the stack needs). Every one of them releases the frame's charge
/// (the seed's patch 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum TxStatus {
    /// Transmitted and acknowledged (`HAL_WBM_TQM_REL_REASON_FRAME_ACKED`).
    Acked = 0,
    /// Transmitted, never acknowledged (retries exhausted).
    NotAcked = 1,
    /// Dropped by the firmware (`HAL_WBM_REL_HTT_TX_COMP_STATUS_DROP`).
    FirmwareDropped = 2,
    /// Its time to live expired in the queue (`..._STATUS_TTL`, aged frames).
    TtlExpired = 3,
    /// Removed by a command: station teardown, flush (`..._REMOVE_CMD_*`).
    Removed = 4,
    /// A descriptor or DMA failure (bad buffer, invalid release source).
    DescriptorError = 5,
}

impl TxStatus {
    /// Every status, in `repr` order.
    pub const ALL: [TxStatus; 6] = [
        TxStatus::Acked,
        TxStatus::NotAcked,
        TxStatus::FirmwareDropped,
        TxStatus::TtlExpired,
        TxStatus::Removed,
        TxStatus::DescriptorError,
    ];
    /// Number of statuses.
    pub const COUNT: usize = 6;

    /// The status for its `repr` value (the C API's `u8`).
    pub const fn from_u8(v: u8) -> Option<TxStatus> {
        match v {
            0 => Some(TxStatus::Acked),
            1 => Some(TxStatus::NotAcked),
            2 => Some(TxStatus::FirmwareDropped),
            3 => Some(TxStatus::TtlExpired),
            4 => Some(TxStatus::Removed),
            5 => Some(TxStatus::DescriptorError),
            _ => None,
        }
    }

    /// Index in [`TxStatus::ALL`].
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Whether the frame went on the air (its status is worth reporting to rate
    /// control); the others are freed (`ieee80211_free_txskb`).
    #[inline]
    pub const fn transmitted(self) -> bool {
        matches!(self, TxStatus::Acked | TxStatus::NotAcked)
    }

    /// A short name for statistics.
    pub const fn name(self) -> &'static str {
        match self {
            TxStatus::Acked => "acked",
            TxStatus::NotAcked => "not acked",
            TxStatus::FirmwareDropped => "fw dropped",
            TxStatus::TtlExpired => "ttl expired",
            TxStatus::Removed => "removed",
            TxStatus::DescriptorError => "desc/dma error",
        }
    }
}

/// One tx completion descriptor. Built with [`new`](Self::new) (more fields may come).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TxCompletion {
    /// The TCL ring the frame was sent on (whose MSDU table holds it).
    pub ring: RingId,
    /// The MSDU id written into the TCL descriptor.
    pub msdu_id: u32,
    /// How it ended.
    pub status: TxStatus,
    /// The HAL's own value for this completion, handed back with its frame by
    /// [`StatusSink::tx_completed`]; the adapter reads nothing else from it. A HAL
    /// that reads its descriptors in batches sets it to the descriptor's place in the
    /// batch, so that its status path finds what the descriptor says beyond the status
    /// (ath11k's `struct hal_tx_status`: the ack RSSI, the tries, the PPDU id) without
    /// storing it in the frame first. 0 when unused.
    pub tag: u32,
}

impl TxCompletion {
    /// A completion of MSDU `msdu_id` sent on `ring`, ended `status`, with tag 0.
    pub const fn new(ring: RingId, msdu_id: u32, status: TxStatus) -> TxCompletion {
        TxCompletion { ring, msdu_id, status, tag: 0 }
    }

    /// This completion with tag `tag` ([`tag`](Self::tag)).
    #[must_use]
    pub const fn with_tag(self, tag: u32) -> TxCompletion {
        TxCompletion { tag, ..self }
    }
}

/// The tx completion ring(s).
///
/// Locking: called from the completion context only (ath11k's tx completion NAPI, one
/// poll at a time per ring), concurrently with the wake context's calls to the other
/// roles. `&self`: a ring with a single consumer needs no lock on the kernel side; a
/// simulated one whose firmware writes from another thread locks itself.
pub trait TxCompletionRing {
    /// Takes the next completion descriptor, `None` when the ring is empty now.
    fn reap_tx_completion(&self) -> Option<TxCompletion>;
}

/// Where finished frames go: `ieee80211_tx_status_ext` for transmitted frames,
/// `ieee80211_free_txskb` for the rest. The adapter owns the frame's charge and
/// releases it itself (a completion pass releases its frames' charges together, after
/// their statuses; a frame of a removed txq, before): the stack must not release it.
///
/// Locking: `&self`, from any context: the completion context (completions), the wake
/// context (never: a refused frame is kept, not freed) and control operations (frames
/// of removed txqs, teardown). mac80211's status path is safe from any context.
pub trait StatusSink {
    /// The frame type.
    type Frame;

    /// Gives a frame back with how it ended.
    fn tx_status(&self, frame: Self::Frame, status: TxStatus);

    /// Gives back a frame that `completion` finished (its charge is released with the
    /// pass's others, after this call): [`tx_status`](Self::tx_status) with the
    /// completion's status, unless the HAL overrides it to find its own data on the
    /// descriptor by [`TxCompletion::tag`]. Every frame a completion finishes comes
    /// back here, and only those: frames handed back by removals and teardown go to
    /// `tx_status`. A sink that wraps another forwards both methods, or the inner
    /// one's tags are lost.
    fn tx_completed(&self, frame: Self::Frame, completion: &TxCompletion) {
        self.tx_status(frame, completion.status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip_through_their_c_value() {
        for s in TxStatus::ALL {
            assert_eq!(TxStatus::from_u8(s as u8), Some(s));
            assert_eq!(TxStatus::ALL[s.index()], s);
        }
        assert_eq!(TxStatus::from_u8(6), None);
        assert!(TxStatus::Acked.transmitted() && !TxStatus::Removed.transmitted());
    }
}
