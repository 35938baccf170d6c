//! The TCL data rings: where frames enter the hardware.

use super::DP_TCL_NUM_RING_MAX;
use airtime_sched::{Ac, RingError, RingErrorKind};

/// One of the [`DP_TCL_NUM_RING_MAX`] TCL data rings. Always in range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RingId(u8);

impl RingId {
    /// Every ring, in order.
    pub const ALL: [RingId; DP_TCL_NUM_RING_MAX] = [RingId(0), RingId(1), RingId(2)];

    /// The ring a frame sent from `cpu` uses: `cpu % 3`, as ath11k's ring selector
    /// (`smp_processor_id()`) does on IPQ8074.
    #[inline]
    pub const fn for_cpu(cpu: u32) -> RingId {
        RingId::for_cpu_of(cpu, DP_TCL_NUM_RING_MAX as u8)
    }

    /// The ring a frame sent from `cpu` uses on hardware with `rings` TCL data rings
    /// (ath11k's `hw_params.max_tx_ring`, 1 to 3): `cpu % rings`, as `ath11k_dp_tx`'s
    /// ring selector does. `rings` out of range counts as 3.
    #[inline]
    pub const fn for_cpu_of(cpu: u32, rings: u8) -> RingId {
        let rings =
            if rings == 0 || rings as usize > DP_TCL_NUM_RING_MAX { DP_TCL_NUM_RING_MAX as u32 } else { rings as u32 };
        // `rings` is 1 to 3: the remainder exists and fits.
        RingId(match cpu.checked_rem(rings) {
            Some(r) => r as u8,
            None => 0,
        })
    }

    /// The next of `rings` rings, wrapping (ath11k's `tcl_ring_retry` order).
    #[inline]
    pub const fn next_of(self, rings: u8) -> RingId {
        RingId::for_cpu_of((self.0 as u32).wrapping_add(1), rings)
    }

    /// Ring `n`, if `n` names one.
    #[inline]
    pub const fn new(n: u8) -> Option<RingId> {
        if (n as usize) < DP_TCL_NUM_RING_MAX { Some(RingId(n)) } else { None }
    }

    /// The ring's index, `0..DP_TCL_NUM_RING_MAX`.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// What the driver writes into a TCL descriptor, beside the frame's DMA address
/// (which the HAL knows from the [`MsduTable`](super::MsduTable) entry `msdu_id`, or
/// from `frame_addr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TclDesc {
    /// The frame, as [`MsduTable::frame_addr`](super::MsduTable::frame_addr) names it
    /// (the C HAL's frame pointer; 0 for a HAL that names none): the descriptor's writer
    /// maps it without looking entry `msdu_id` up in its table.
    pub frame_addr: usize,
    /// The MSDU id the completion will carry back (ath11k's `buf_id`).
    pub msdu_id: u32,
    /// Frame length in bytes.
    pub len_bytes: u32,
    /// The access category of the round that sent it.
    pub ac: Ac,
    /// The firmware peer id of the receiving station; `None` for station-less frames.
    pub peer_id: Option<u16>,
}

/// The TCL data rings (`dp->tx_ring[i].tcl_data_ring`).
///
/// Locking: every method takes `&self` and may be called from the wake context and the
/// completion context at once, on the same ring or on different ones. The
/// implementation serialises each ring itself, as ath11k takes `tcl_ring->lock` around
/// `ath11k_hal_srng_src_get_next_entry()`: one lock per ring, never one for all.
pub trait TclRings {
    /// Why an enqueue was refused; `kind()` is the core's ring error kind.
    type Error: RingError;

    /// Descriptors the ring has in all (`DP_TCL_DATA_RING_SIZE` on ath11k).
    fn tcl_descriptors(&self, ring: RingId) -> u32;

    /// Descriptors free now (`ath11k_hal_srng_src_num_free`). A hint: the enqueue may
    /// still refuse (the ring is shared with other paths and other CPUs).
    fn tcl_free(&self, ring: RingId) -> u32;

    /// Writes one descriptor. Refuses with kind `Full` (-ENOSPC, no descriptor) or
    /// `OutOfMemory` (-ENOMEM, including a DMA mapping failure); the frame stays in
    /// the MSDU table and the caller takes it back out.
    fn tcl_enqueue(&self, ring: RingId, desc: TclDesc) -> Result<(), Self::Error>;
}

/// The errno a kernel driver returns for an error kind: -ENOSPC (-28) for full,
/// -ENOMEM (-12) for out of memory, -EIO (-5) otherwise.
pub const fn errno(kind: RingErrorKind) -> i32 {
    match kind {
        RingErrorKind::Full => -28,
        RingErrorKind::OutOfMemory => -12,
        _ => -5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_is_the_sending_cpu_modulo_three() {
        assert_eq!(RingId::for_cpu(0), RingId(0));
        assert_eq!(RingId::for_cpu(4), RingId(1));
        assert_eq!(RingId::for_cpu(u32::MAX), RingId((u32::MAX % 3) as u8));
        assert_eq!(RingId::new(3), None);
        assert_eq!(RingId(2).next_of(3), RingId(0));
    }

    #[test]
    fn error_kinds_map_to_the_kernel_errnos() {
        assert_eq!(errno(RingErrorKind::Full), -28);
        assert_eq!(errno(RingErrorKind::OutOfMemory), -12);
        assert_eq!(errno(RingErrorKind::Other), -5);
    }
}
