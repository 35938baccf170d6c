//! A host-aggregating radio's hardware queue, as ath9k drives it: the driver forms each
//! PPDU (an A-MPDU, or one unaggregated frame) and chains it on the access category's
//! hardware queue; the hardware sends the chain in order; each completion reports one
//! PPDU. The driver bounds what it chains by PPDUs, not bytes: `axq_ampdu_depth`
//! aggregates and `axq_depth` PPDUs in all (xmit.c `ath_tx_txqaddbuf` counts them,
//! `ath_tx_process_buffer` uncounts them when the completion is handled).
//!
//! [`AggregateLimits`] are `ath_tx_form_aggr`'s bounds for one station's rate.

use super::hardware::HwFrame;
use crate::wifi::PhyTiming;
use std::collections::VecDeque;

/// Aggregates kept in the hardware queue before the driver stops forming more: ath9k.h
/// `ATH_AGGR_MIN_QDEPTH` ("minimum h/w qdepth to be sustained to maximize aggregation"),
/// checked in xmit.c `ath_tx_sched_aggr`.
pub const ATH_AGGR_MIN_QDEPTH: u32 = 2;
/// PPDUs kept in the hardware queue for unaggregated traffic: ath9k.h
/// `ATH_NON_AGGR_MIN_QDEPTH`, checked in xmit.c `ath_tx_sched_aggr`.
pub const ATH_NON_AGGR_MIN_QDEPTH: u32 = 8;
/// The BlockAck window ath9k gives each TID: xmit.c `ath_tx_node_init` sets
/// `tid->baw_size = WME_MAX_BA` (64).
pub const WME_MAX_BA: u32 = 64;
/// Longest aggregate in bytes: ath9k.h `ATH_AMPDU_LIMIT_MAX` (64 KiB - 1), the cap
/// `ath_lookup_rate` puts on its 4 ms frame length.
pub const ATH_AMPDU_LIMIT_MAX: u32 = 65_535;
/// The aggregate duration ath9k sizes aggregates for, in us: xmit.c
/// `ath_update_max_aggr_framelen` ("4ms is the default (and maximum) duration", 4096 us
/// when the queue's TXOP is 0, as BE's is), read by `ath_lookup_rate`.
pub const ATH_AGGR_DURATION_US: u32 = 4096;
/// `ath_max_framelen`'s own cap on the bytes that fit in that duration.
pub const ATH_MAX_FRAMELEN: u32 = 65_532;
/// Unaggregated frames one `ath_tx_form_burst` takes from a TID per turn (its
/// `nframes >= 2` stop).
pub const ATH_BURST_FRAMES: usize = 2;

/// How one station's PPDUs are formed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AggregateLimits {
    /// Whether its frames go out as A-MPDUs (an HT/VHT/HE rate with a BlockAck session);
    /// legacy rates send single frames (`ath_tx_form_burst`).
    pub aggregates: bool,
    /// Most subframes per A-MPDU: half the BlockAck window (`ath_tx_form_aggr`'s
    /// `h_baw = tid->baw_size / 2`).
    pub max_frames: usize,
    /// Most A-MPDU bytes (subframes with delimiters and padding): `ath_lookup_rate`'s
    /// `min(max_4ms_framelen, ATH_AMPDU_LIMIT_MAX)`.
    pub max_bytes: u32,
}

impl AggregateLimits {
    /// The limits at `timing`'s rate, as `ath_lookup_rate` and `ath_max_framelen` compute
    /// them: the data symbols that fit in [`ATH_AGGR_DURATION_US`] after the preamble,
    /// less the PLCP service and tail bits, in bytes.
    pub fn at(timing: &PhyTiming) -> AggregateLimits {
        Self::within(timing, ATH_AGGR_DURATION_US)
    }

    /// The limits of access category `ac`'s hardware queue at `timing`'s rate: its
    /// aggregates last at most its TXOP limit (hostapd's AP parameters, `EdcaParams::ap`)
    /// where it has one, as `ath_update_max_aggr_framelen` takes the queue's burst time
    /// (`txop` 0, or above 4096 us, is [`ATH_AGGR_DURATION_US`]).
    pub fn for_ac(timing: &PhyTiming, ac: airtime_sched::Ac) -> AggregateLimits {
        let txop_us = crate::wifi::edca::EdcaParams::ap(ac).txop_us;
        Self::within(timing, if txop_us == 0 { ATH_AGGR_DURATION_US } else { txop_us.min(ATH_AGGR_DURATION_US) })
    }

    /// The limits for aggregates of at most `duration_us`.
    fn within(timing: &PhyTiming, duration_us: u32) -> AggregateLimits {
        if timing.ba_window <= 1 {
            return AggregateLimits { aggregates: false, max_frames: ATH_BURST_FRAMES, max_bytes: 0 };
        }
        let data_us = (f64::from(duration_us) - timing.preamble_us).max(0.0);
        let symbols = (data_us / timing.symbol_us).floor();
        let bits = symbols * timing.bits_per_symbol - 22.0;
        let framelen = ((bits / 8.0).max(0.0) as u32).min(ATH_MAX_FRAMELEN);
        AggregateLimits {
            aggregates: true,
            max_frames: (WME_MAX_BA.min(timing.ba_window) / 2).max(1) as usize,
            max_bytes: framelen.min(ATH_AMPDU_LIMIT_MAX),
        }
    }
}

/// One PPDU the driver formed.
#[derive(Debug)]
pub struct HostPpdu {
    /// The station it goes to.
    pub station: u16,
    /// Its frames, in order (one unless an A-MPDU).
    pub frames: Vec<HwFrame>,
    /// PSDU bytes.
    pub psdu_bytes: u32,
    /// Whether it is an A-MPDU (counted in `axq_ampdu_depth`).
    pub aggregate: bool,
}

/// A PPDU sent and not yet completed.
#[derive(Clone, Copy, Debug)]
struct Sent {
    station: u16,
    aggregate: bool,
}

/// The hardware queue of one access category. Every PPDU chained is counted until its
/// one completion; one that collided goes back to the chain's head still counted (the
/// hardware retries it).
#[derive(Debug, Default)]
pub struct HostHwQueue {
    chain: VecDeque<HostPpdu>,
    /// PPDUs sent and not yet completed, oldest first.
    on_air: VecDeque<Sent>,
    /// PPDUs chained and not yet completed (`axq_depth`).
    depth: u32,
    /// Aggregates chained and not yet completed (`axq_ampdu_depth`).
    ampdu_depth: u32,
    /// The most aggregates ever held at once (a check on [`ATH_AGGR_MIN_QDEPTH`]).
    pub max_ampdu_depth_seen: u32,
}

impl HostHwQueue {
    /// Whether the driver may chain a PPDU of this kind now (`ath_tx_sched_aggr`'s check).
    pub fn has_room(&self, aggregate: bool) -> bool {
        if aggregate { self.ampdu_depth < ATH_AGGR_MIN_QDEPTH } else { self.depth < ATH_NON_AGGR_MIN_QDEPTH }
    }

    /// PPDUs chained and not yet completed.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Aggregates chained and not yet completed.
    pub fn ampdu_depth(&self) -> u32 {
        self.ampdu_depth
    }

    /// Chains a PPDU (`ath_tx_txqaddbuf`).
    pub fn push(&mut self, ppdu: HostPpdu) {
        self.depth += 1;
        if ppdu.aggregate {
            self.ampdu_depth += 1;
            self.max_ampdu_depth_seen = self.max_ampdu_depth_seen.max(self.ampdu_depth);
        }
        self.chain.push_back(ppdu);
    }

    /// Whether a PPDU waits to be sent.
    pub fn has_frames(&self) -> bool {
        !self.chain.is_empty()
    }

    /// Frames waiting in the chain for `station`.
    pub fn frames_for(&self, station: u16) -> usize {
        self.chain.iter().filter(|p| p.station == station).map(|p| p.frames.len()).sum()
    }

    /// The next PPDU to send: station, frames and PSDU bytes.
    pub fn next_ppdu(&mut self) -> Option<(u16, Vec<HwFrame>, u32)> {
        let p = self.chain.pop_front()?;
        self.on_air.push_back(Sent { station: p.station, aggregate: p.aggregate });
        Some((p.station, p.frames, p.psdu_bytes))
    }

    /// A PPDU that collided goes back to the head of the chain (the hardware retries it):
    /// the last one sent, as one access category sends one PPDU at a time.
    pub fn requeue_front(&mut self, station: u16, frames: Vec<HwFrame>) {
        let sent = self.on_air.pop_back();
        debug_assert!(sent.is_some_and(|p| p.station == station), "requeued a PPDU not on the air");
        let aggregate = sent.map_or(frames.len() > 1, |p| p.aggregate);
        let psdu_bytes = frames.iter().map(|f| f.pkt.ampdu_subframe_bytes()).sum();
        self.chain.push_front(HostPpdu { station, frames, psdu_bytes, aggregate });
    }

    /// The completion of the oldest PPDU on the air, to `station`, was handled
    /// (`ath_tx_process_buffer`): it leaves the counts. Returns whether it was an
    /// aggregate, `None` if no PPDU was on the air.
    pub fn complete(&mut self, station: u16) -> Option<bool> {
        let sent = self.on_air.pop_front()?;
        debug_assert_eq!(sent.station, station, "completions come in the order the PPDUs were sent");
        self.depth -= 1;
        if sent.aggregate {
            self.ampdu_depth -= 1;
        }
        debug_assert_eq!(self.check_counts(), Ok(()));
        Some(sent.aggregate)
    }

    /// Whether the depth counts match the PPDUs chained and on the air.
    pub fn check_counts(&self) -> Result<(), String> {
        let ppdus = self.chain.len() + self.on_air.len();
        let aggregates =
            self.chain.iter().filter(|p| p.aggregate).count() + self.on_air.iter().filter(|p| p.aggregate).count();
        if self.depth as usize == ppdus && self.ampdu_depth as usize == aggregates {
            Ok(())
        } else {
            Err(format!(
                "depth {} for {ppdus} PPDUs, ampdu_depth {} for {aggregates} aggregates",
                self.depth, self.ampdu_depth
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use airtime_est::{Bandwidth, Rate};

    #[test]
    fn ht20_mcs15_aggregates_are_bounded_by_half_the_window_and_mcs0_by_4_ms() {
        let fast = AggregateLimits::at(&PhyTiming::new(Rate::ht(15, Bandwidth::Mhz20, true).unwrap()));
        assert!(fast.aggregates);
        assert_eq!(fast.max_frames, 32);
        // 4096 us at 144.4 Mbit/s is more than 64 KiB: the byte cap binds.
        assert_eq!(fast.max_bytes, ATH_MAX_FRAMELEN);
        let slow = AggregateLimits::at(&PhyTiming::new(Rate::ht(0, Bandwidth::Mhz20, false).unwrap()));
        // ath_max_framelen(4096, 0, false, false): (4096 - 36) / 4 symbols of 26 bits.
        assert_eq!(slow.max_bytes, (1015 * 26 - 22) / 8);
        let legacy = AggregateLimits::at(&PhyTiming::new(Rate::legacy_cck(10, false).unwrap()));
        assert!(!legacy.aggregates);
    }

    #[test]
    fn the_queue_counts_ppdus_until_their_completion() {
        let mut q = HostHwQueue::default();
        assert!(q.has_room(true));
        q.push(HostPpdu { station: 0, frames: Vec::new(), psdu_bytes: 0, aggregate: true });
        q.push(HostPpdu { station: 1, frames: Vec::new(), psdu_bytes: 0, aggregate: true });
        assert!(!q.has_room(true));
        assert!(q.has_room(false));
        assert_eq!(q.next_ppdu().map(|p| p.0), Some(0));
        // Sent but not completed: still counted.
        assert!(!q.has_room(true));
        assert_eq!(q.complete(0), Some(true));
        assert!(q.has_room(true));
        assert_eq!((q.depth(), q.ampdu_depth(), q.max_ampdu_depth_seen), (1, 1, 2));
    }
}
