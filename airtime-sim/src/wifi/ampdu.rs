//! How many frames one A-MPDU takes: bounded by the BlockAck window, the largest A-MPDU
//! in bytes, and the longest PPDU (or a firmware cap below it).

use super::phy::PhyTiming;

/// Limits an aggregate is built under.
#[derive(Clone, Copy, Debug)]
pub struct AmpduLimits {
    /// Longest PPDU allowed, in us (5484, or a firmware cap such as 4000).
    pub max_ppdu_us: f64,
}

/// Takes subframes (their byte sizes, in order) while the aggregate stays within the
/// limits; returns how many and the PSDU bytes. The first frame is always taken.
pub fn fill(timing: &PhyTiming, limits: AmpduLimits, subframes: impl IntoIterator<Item = u32>) -> (usize, u32) {
    let mut n = 0usize;
    let mut bytes = 0u32;
    for sub in subframes {
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
}
