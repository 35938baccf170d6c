//! The originator's side of a BlockAck agreement (802.11-2020 10.25.6): the sequence
//! numbers it assigned and has neither seen acknowledged nor given up, the oldest of
//! which is WinStart. It numbers no new frame beyond WinStart + WinSize - 1, so the
//! receiver's reorder buffer never has to hold a window's worth.
//!
//! The firmware keeps it on the firmware-aggregating designs (the world numbers a frame
//! when it first reaches a BlockAck, [`super::reorder::Reorder`]); on the
//! host-aggregating ones the driver keeps it per TID, as ath9k's `tid->seq_next`,
//! `tid->seq_start` and `tid->tx_buf` (numbered in `ath_tx_setup_buffer`, checked with
//! `BAW_WITHIN`, advanced by `ath_tx_update_baw`).

use std::collections::BTreeSet;

/// One transmitter's sequence space towards one receiver (one TID).
#[derive(Clone, Debug)]
pub struct SeqWindow {
    /// The next sequence number to assign.
    next: u32,
    /// Sequence numbers assigned and neither acknowledged nor given up.
    outstanding: BTreeSet<u32>,
}

impl Default for SeqWindow {
    fn default() -> Self {
        SeqWindow { next: 1, outstanding: BTreeSet::new() }
    }
}

impl SeqWindow {
    /// The sequence number of an MPDU sent for the first time (`current` 0), or its own.
    pub fn assign(&mut self, current: u32) -> u32 {
        if current != 0 {
            return current;
        }
        let s = self.next;
        self.next += 1;
        self.outstanding.insert(s);
        s
    }

    /// WinStart: the oldest frame not yet acknowledged or given up, or the next
    /// sequence number when there is none.
    pub fn win_start(&self) -> u32 {
        self.outstanding.first().copied().unwrap_or(self.next)
    }

    /// How many new sequence numbers a window of `win_size` has room for: up to
    /// WinStart + WinSize - 1.
    pub fn room(&self, win_size: u32) -> u32 {
        self.win_start().saturating_add(win_size).saturating_sub(self.next)
    }

    /// MPDU `seq` was acknowledged or given up: it leaves the window.
    pub fn done(&mut self, seq: u32) {
        self.outstanding.remove(&seq);
    }

    /// Frames numbered and not yet acknowledged or given up.
    pub fn outstanding(&self) -> usize {
        self.outstanding.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_starts_at_the_oldest_outstanding_frame_and_bounds_new_numbers() {
        let mut w = SeqWindow::default();
        let seqs: Vec<u32> = (0..64).map(|_| w.assign(0)).collect();
        assert_eq!(w.room(64), 0, "64 outstanding fill a window of 64");
        // All but the first are acknowledged: it alone holds the window where it is.
        for &s in &seqs[1..] {
            w.done(s);
        }
        assert_eq!((w.win_start(), w.room(64), w.outstanding()), (seqs[0], 0, 1));
        assert_eq!(w.assign(seqs[0]), seqs[0], "a resent frame keeps its number");
        w.done(seqs[0]);
        assert_eq!(w.room(64), 64);
    }
}
