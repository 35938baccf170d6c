//! Driver-side statistics (a `soc_dp_stats`-like report, with the outstanding MSDU
//! count of patch 3) and a text buffer for debugfs files.

use crate::hal::{DP_TCL_NUM_RING_MAX, TxStatus};
use core::fmt;

/// The data path's counters and the outstanding MSDU count per ring, read with
/// [`Ath11k::dp_stats`](crate::Ath11k::dp_stats). Its `Display` is the text of a
/// `soc_dp_stats`-like debugfs file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DpStats {
    /// Outstanding MSDUs per ring now: frames handed to the hardware and not yet
    /// completed (patch 3; bounded by each ring's MSDU table capacity).
    pub pending_msdus: [u32; DP_TCL_NUM_RING_MAX],
    /// Descriptors enqueued per ring.
    pub enqueued: [u64; DP_TCL_NUM_RING_MAX],
    /// Enqueues refused with no descriptor free (-ENOSPC) per ring.
    pub ring_full: [u64; DP_TCL_NUM_RING_MAX],
    /// Pushes refused because the ring's MSDU table was full (-ENOSPC) per ring.
    pub msdu_table_full: [u64; DP_TCL_NUM_RING_MAX],
    /// Enqueues refused for memory or a DMA mapping (-ENOMEM) per ring.
    pub out_of_memory: [u64; DP_TCL_NUM_RING_MAX],
    /// Enqueues refused for any other reason, per ring.
    pub other_failures: [u64; DP_TCL_NUM_RING_MAX],
    /// Completions per [`TxStatus`] (index [`TxStatus::index`]).
    pub completions: [u64; TxStatus::COUNT],
    /// Completions whose MSDU id named no outstanding entry (ignored).
    pub unknown_msdu: u64,
    /// Releases the scheduler reported as mismatched (should stay 0).
    pub release_errors: u64,
    /// Frames of a station txq that could not be charged (the station was being
    /// removed): kept back uncharged in their txq, never sent uncharged; they come back
    /// with the txq.
    pub uncharged: u64,
    /// Frames refused after dequeue and kept for retry in their txq (patch 8 without
    /// the free).
    pub held_for_retry: u64,
    /// Frames freed without being sent: kept and intake frames of removed txqs,
    /// outstanding frames at teardown.
    pub flushed: u64,
    /// An enqueue failure whose MSDU table entry had vanished (a HAL bug).
    pub msdu_table_errors: u64,
    /// PPDU stats users and rx PPDUs naming no known peer.
    pub unknown_peer_reports: u64,
    /// Gated rounds ([`Rounds::Gated`](crate::Rounds::Gated)): round requests handed to
    /// the context running the AC's rounds.
    pub rounds_handed_off: u64,
    /// Gated rounds: calls that spent their budget of rounds with requests pending.
    pub rounds_deferred: u64,
    /// Frames waiting in the txqs' retry slots now (refused by the ring; uncharged until
    /// sent).
    pub held_now: u32,
}

impl DpStats {
    /// Outstanding MSDUs over all rings.
    pub fn pending_msdus_total(&self) -> u32 {
        self.pending_msdus.iter().fold(0u32, |a, b| a.saturating_add(*b))
    }
}

fn per_ring<X: fmt::Display>(f: &mut fmt::Formatter<'_>, name: &str, v: &[X]) -> fmt::Result {
    write!(f, "{name}:")?;
    for (i, x) in v.iter().enumerate() {
        write!(f, " ring{i} {x}")?;
    }
    writeln!(f)
}

impl fmt::Display for DpStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "SOC TX STATS:")?;
        per_ring(f, "TCL enqueued", &self.enqueued)?;
        per_ring(f, "TCL ring full failures", &self.ring_full)?;
        per_ring(f, "MSDU table full failures", &self.msdu_table_full)?;
        per_ring(f, "Out of memory/DMA failures", &self.out_of_memory)?;
        per_ring(f, "Other enqueue failures", &self.other_failures)?;
        writeln!(f, "Tx completions:")?;
        for s in TxStatus::ALL {
            writeln!(f, "  {}: {}", s.name(), self.completions.get(s.index()).copied().unwrap_or(0))?;
        }
        writeln!(f, "Unknown MSDU completions: {}", self.unknown_msdu)?;
        writeln!(f, "Release errors: {}", self.release_errors)?;
        writeln!(f, "Uncharged frames: {}", self.uncharged)?;
        writeln!(f, "Held for retry: {} (now {})", self.held_for_retry, self.held_now)?;
        writeln!(f, "Flushed: {}", self.flushed)?;
        writeln!(f, "Rounds handed off: {} deferred: {}", self.rounds_handed_off, self.rounds_deferred)?;
        per_ring(f, "Pending tx MSDUs", &self.pending_msdus)?;
        writeln!(f, "Pending tx MSDUs total: {}", self.pending_msdus_total())
    }
}

/// What became of the samples of the estimate's calibration
/// ([`Config::calibration`](crate::Config::calibration)), read with
/// [`Ath11k::calibration_stats`](crate::Ath11k::calibration_stats). Every SU user of a
/// PPDU record of a known station is counted once, in one of the first four.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CalibrationStats {
    /// Samples averaged into a station's calibrator.
    pub accepted: u64,
    /// Samples refused: a user without a rate (also counted in
    /// [`no_rate`](Self::no_rate)), no MSDU count or bytes in the record, or a ratio
    /// outside the calibrator's outlier bounds.
    pub rejected: u64,
    /// Samples dropped because another context was feeding the station's calibrator
    /// (a statistic, not a charge: nothing else is lost).
    pub busy: u64,
    /// Samples dropped because their station had left its slot meanwhile.
    pub stale: u64,
    /// Users of MU PPDUs, never sampled (their price is [`MuCharging`](crate::MuCharging)'s).
    pub mu_users: u64,
    /// Of the [`rejected`](Self::rejected), SU users the record gave no rate
    /// (`AIRTIME_RATE_NONE` in the C API): their MSDUs cannot be priced at the rate
    /// they went out at, so they are never a sample.
    pub no_rate: u64,
    /// Of the [`rejected`](Self::rejected), SU users naming no data TID (TID 16:
    /// ath11k's value when the user's record has no ACK/BA TLV, which also carries the
    /// MSDU count), never a sample.
    pub no_tid: u64,
}

impl fmt::Display for CalibrationStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Calibration samples: accepted {} rejected {} (no rate {}, no TID {}) busy {} stale {} (MU users skipped {})",
            self.accepted, self.rejected, self.no_rate, self.no_tid, self.busy, self.stale, self.mu_users
        )
    }
}

/// A `fmt::Write` into a byte buffer that truncates instead of failing: how a
/// debugfs read fills the buffer the kernel gives it.
#[derive(Debug)]
pub struct TextBuf<'a> {
    buf: &'a mut [u8],
    len: usize,
    truncated: bool,
}

impl<'a> TextBuf<'a> {
    /// An empty text in `buf`.
    pub fn new(buf: &'a mut [u8]) -> TextBuf<'a> {
        TextBuf { buf, len: 0, truncated: false }
    }

    /// Bytes written.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether some text did not fit.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// The text written (truncation may have cut a multi-byte character; the crate's
    /// own texts are ASCII).
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }
}

impl fmt::Write for TextBuf<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = self.buf.len().saturating_sub(self.len);
        let n = s.len().min(room);
        if n < s.len() {
            self.truncated = true;
        }
        // `n` fits the room, so `len + n` stays within the buffer.
        let end = self.len.saturating_add(n);
        if let (Some(dst), Some(src)) = (self.buf.get_mut(self.len..end), s.as_bytes().get(..n)) {
            dst.copy_from_slice(src);
            self.len = end;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::fmt::Write;

    #[test]
    fn a_text_buffer_truncates_instead_of_failing() {
        let mut b = [0u8; 8];
        let mut t = TextBuf::new(&mut b);
        write!(t, "pending {} us", 12024).unwrap();
        assert!(t.truncated());
        assert_eq!(t.as_bytes(), b"pending ");
    }
}
