//! The receiver's BlockAck reorder buffer (mac80211's `ieee80211_sta_manage_reorder_buf`):
//! MPDUs that arrive after a lost one are held until it arrives, or until the
//! transmitter gives it up (a BlockAck request moves the window past it), and then
//! released in sequence order. Without it a lost subframe would reach TCP as a
//! reordering and cut its window; with it a loss costs delay and airtime only.
//!
//! It also keeps the originator's side of the window where the firmware aggregates
//! ([`SeqWindow`]; [`Reorder::room`]): the world numbers a frame when it first reaches
//! a BlockAck. A host-aggregating driver numbers its frames itself, and they pass here
//! with their numbers.

use super::seq_window::SeqWindow;
use std::collections::BTreeMap;

/// The sequence space of one transmitter towards one receiver (one TID).
#[derive(Clone, Debug)]
pub struct Reorder<T> {
    /// The originator's side, where the world numbers the frames.
    window: SeqWindow,
    /// The next sequence number the receiver releases.
    next_rx: u32,
    /// Held MPDUs by sequence number; `None` marks one the transmitter gave up on.
    held: BTreeMap<u32, Option<T>>,
    /// The highest sequence number that has reached a BlockAck.
    highest_attempted: u32,
}

impl<T> Default for Reorder<T> {
    fn default() -> Self {
        Reorder { window: SeqWindow::default(), next_rx: 1, held: BTreeMap::new(), highest_attempted: 0 }
    }
}

impl<T> Reorder<T> {
    /// The sequence number of an MPDU sent for the first time (`current` 0), or its own.
    pub fn assign(&mut self, current: u32) -> u32 {
        self.window.assign(current)
    }

    /// The originator's WinStart ([`SeqWindow::win_start`]).
    pub fn win_start(&self) -> u32 {
        self.window.win_start()
    }

    /// How many new sequence numbers a window of `win_size` has room for
    /// ([`SeqWindow::room`]).
    pub fn room(&self, win_size: u32) -> u32 {
        self.window.room(win_size)
    }

    /// Whether MPDU `seq` reaches a BlockAck for the first time. New numbers reach it in
    /// increasing order, whoever assigns them (the world here, or a driver in the order
    /// it chains its PPDUs), and resent frames carry lower ones.
    pub fn first_attempt(&mut self, seq: u32) -> bool {
        let first = seq > self.highest_attempted;
        self.highest_attempted = self.highest_attempted.max(seq);
        first
    }

    /// MPDU `seq` arrived (`Some`) or was given up (`None`); releases into `out`
    /// whatever is now in order.
    pub fn receive(&mut self, seq: u32, mpdu: Option<T>, out: &mut Vec<T>) {
        self.window.done(seq);
        if seq < self.next_rx {
            return;
        }
        self.held.insert(seq, mpdu);
        while let Some(m) = self.held.remove(&self.next_rx) {
            out.extend(m);
            self.next_rx += 1;
        }
    }

    /// MPDUs held.
    pub fn held(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_after_a_hole_wait_for_it_and_a_given_up_frame_releases_them() {
        let mut r = Reorder::default();
        let seqs: Vec<u32> = (0..4).map(|_| r.assign(0)).collect();
        let mut out = Vec::new();
        r.receive(seqs[0], Some('a'), &mut out);
        r.receive(seqs[2], Some('c'), &mut out);
        assert_eq!(out, vec!['a']);
        r.receive(seqs[1], Some('b'), &mut out);
        assert_eq!(out, vec!['a', 'b', 'c']);
        r.receive(seqs[3], None, &mut out);
        let s5 = r.assign(0);
        r.receive(s5, Some('e'), &mut out);
        assert_eq!(out, vec!['a', 'b', 'c', 'e']);
        assert_eq!(r.held(), 0);
    }

    #[test]
    fn the_window_starts_at_the_oldest_unacknowledged_frame_and_bounds_new_numbers() {
        let mut r = Reorder::default();
        let seqs: Vec<u32> = (0..64).map(|_| r.assign(0)).collect();
        assert_eq!(r.room(64), 0, "64 in flight fill a window of 64");
        let mut out = Vec::new();
        // The first is lost; the other 63 arrive and wait behind it.
        for &s in &seqs[1..] {
            r.receive(s, Some(s), &mut out);
        }
        assert!(out.is_empty() && r.held() == 63);
        assert_eq!((r.win_start(), r.room(64)), (seqs[0], 0), "no new number until the first is through");
        r.assign(seqs[0]);
        r.receive(seqs[0], Some(seqs[0]), &mut out);
        assert_eq!((out.len(), r.room(64)), (64, 64));
    }
}
