//! How many frames one A-MPDU takes: bounded by the BlockAck window, the largest A-MPDU
//! in bytes, and the longest PPDU (or a firmware cap below it). Over a link whose
//! frames carry sequence numbers, the window also bounds them across A-MPDUs: a new
//! frame may not take a sequence number beyond WinStart + WinSize - 1, WinStart being
//! the oldest frame not yet acknowledged (802.11-2020 10.25.6), so after a loss the
//! A-MPDUs carry the resent frames and no more new ones than the window has room for.

use super::phy::PhyTiming;

/// Limits an aggregate is built under.
#[derive(Clone, Copy, Debug)]
pub struct AmpduLimits {
    /// Longest PPDU allowed, in us (5484, or a firmware cap such as 4000).
    pub max_ppdu_us: f64,
}

/// Takes subframes (their byte sizes, in order) while the aggregate stays within the
/// limits; returns how many and the PSDU bytes. The first frame is always taken. For
/// frames without sequence numbers (no window across A-MPDUs to respect).
pub fn fill(timing: &PhyTiming, limits: AmpduLimits, subframes: impl IntoIterator<Item = u32>) -> (usize, u32) {
    fill_in_window(timing, limits, subframes.into_iter().map(|b| (b, true)))
}

/// As [`fill`], over `(bytes, sequenced)` subframes: a frame already `sequenced` (sent
/// before and lost, so inside the window) always fits the window; a new one takes the
/// next sequence number, and no more new ones are taken than `timing.seq_room`. The
/// first frame is taken unless it is new and the window has no room (then none is).
pub fn fill_in_window(
    timing: &PhyTiming,
    limits: AmpduLimits,
    subframes: impl IntoIterator<Item = (u32, bool)>,
) -> (usize, u32) {
    let mut n = 0usize;
    let mut bytes = 0u32;
    let mut new = 0u32;
    for (sub, sequenced) in subframes {
        if !sequenced && new >= timing.seq_room {
            break;
        }
        if n > 0 {
            if n as u32 >= timing.ba_window || bytes + sub > timing.max_ampdu_bytes {
                break;
            }
            if timing.ppdu_us(bytes + sub) > limits.max_ppdu_us {
                break;
            }
        }
        n += 1;
        bytes += sub;
        if !sequenced {
            new += 1;
        }
    }
    (n, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use airtime_est::{Bandwidth, Rate};

    #[test]
    fn the_block_ack_window_binds_at_vht_mcs9_and_ppdu_time_at_mcs0() {
        let lim = AmpduLimits { max_ppdu_us: super::super::phy::MAX_PPDU_US };
        let fast = PhyTiming::new(Rate::vht(9, 1, Bandwidth::Mhz80, true).unwrap());
        assert_eq!(fill(&fast, lim, std::iter::repeat_n(1560, 200)).0, 64);
        let slow = PhyTiming::new(Rate::vht(0, 1, Bandwidth::Mhz80, false).unwrap());
        assert_eq!(fill(&slow, lim, std::iter::repeat_n(1560, 200)).0, 12);
    }

    #[test]
    fn after_a_loss_an_ampdu_takes_its_resent_frames_and_only_as_many_new_ones_as_the_window_has_room_for() {
        let lim = AmpduLimits { max_ppdu_us: super::super::phy::MAX_PPDU_US };
        let mut t = PhyTiming::new(Rate::vht(9, 1, Bandwidth::Mhz80, true).unwrap());
        // Two resent frames at the head, then new ones; the window has room for 10.
        t.seq_room = 10;
        let queue = || (0..200).map(|i| (1560, i < 2));
        assert_eq!(fill_in_window(&t, lim, queue()).0, 12);
        // No room: the resent frames only, and nothing when none is at the head.
        t.seq_room = 0;
        assert_eq!(fill_in_window(&t, lim, queue()).0, 2);
        assert_eq!(fill_in_window(&t, lim, (0..200).map(|_| (1560, false))), (0, 0));
    }
}
