//! The timed hardware model of an ath11k-like radio (IPQ8074): TCL data rings that the
//! host fills, firmware that takes frames from the rings into per-station queues and
//! picks which station transmits next, and the completion path back to the host.
//!
//! * **TCL rings and the radio's MSDU budget.** The host pushes a frame into the ring of
//!   the CPU it runs on ([`Hardware::push`]). A frame holds a descriptor of its ring
//!   (`ring_entries`, ath11k's `DP_TX_IDR_SIZE` ids per ring) and one of the radio's
//!   `msdu_budget` MSDUs (ath11k's `TARGET_NUM_MSDU_DESC`, the `num_msdu_desc` its WMI
//!   resource config gives the firmware) from push until its completion is reaped; a
//!   push is refused when either is used up. The budget is the hardware queue a stock
//!   driver fills.
//! * **Firmware queues.** How a descriptor reaches its station's queue is
//!   [`TclAdmission`]: by default, before each transmission the firmware admits frames
//!   from the heads of the rings, round robin over rings, into its per-station queues
//!   while a station holds fewer than `fw_queue_aggregates` BlockAck windows, so a frame
//!   in another ring than the bulk flow's (the seed's ping) is admitted within one
//!   transmission rather than behind the whole ring; with [`TclAdmission::Direct`] every
//!   descriptor goes to its station's queue as it is written, as `ath11k_dp_tx`'s
//!   comment describes, and nothing waits in a ring.
//! * **Transmitter choice.** The firmware serves stations with admitted frames in round
//!   robin, one A-MPDU per channel access: the host's scheduling order does not reach
//!   the air (the reason for TX_NO_PUSHBACK).
//! * **Access categories.** The firmware's queues are per (station, TID) (its TQM
//!   queues; ath11k writes the TID into each TCL descriptor, `ath11k_dp_tx` from
//!   `skb->priority`), so a frame is admitted into its station's queue of its access
//!   category, and each access category contends for the medium with its own EDCA
//!   function ([`Hardware::next_ampdu_ac`] serves the one that won).
//! * **Downlink OFDMA** (`ofdma`, off by default): several HE stations in one MU PPDU,
//!   each on its own resource unit ([`ofdma`]).

pub mod ofdma;
pub use ofdma::{MuPpdu, MuUser};

use super::super::net::Packet;
use super::super::wifi::PhyTiming;
use super::super::wifi::ampdu::{self, AmpduLimits};
use crate::engine::Nanos;
use airtime_sched::{Ac, Charge};
use std::collections::VecDeque;

/// Parameters of the hardware model.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct HardwareConfig {
    /// TCL data rings (ath11k: 3, chosen by the sending CPU).
    pub rings: u8,
    /// Descriptors per ring: frames pushed on it and not yet completed (ath11k's
    /// `DP_TX_IDR_SIZE`, 32768).
    pub ring_entries: u32,
    /// Frames the radio holds at once, all rings together, from push to reaped
    /// completion (ath11k's `TARGET_NUM_MSDU_DESC`, 2500).
    pub msdu_budget: u32,
    /// Firmware per-station queue, in full-sized aggregates at the station's rate (the
    /// frames one A-MPDU of 1500-byte packets can take: the BlockAck window, or fewer
    /// where the PPDU time binds).
    pub fw_queue_aggregates: u32,
    /// How descriptors move from the TCL rings into the firmware's per-station queues.
    pub tcl_admission: TclAdmission,
    /// Longest PPDU the firmware builds, in us.
    pub max_ppdu_us: f64,
    /// How completions reach the host: ath11k's interrupt moderation, or a fixed delay.
    pub tx_completion_irq: super::completion_irq::CompletionIrq,
    /// With a fixed delay: from the end of the BlockAck to the host reaping the
    /// completion, in us.
    pub tx_completion_delay_us: u64,
    /// From the end of the exchange to the PPDU-stats report, in us.
    pub ppdu_stats_delay_us: u64,
    /// Completions the host handles per NAPI poll (the series' patch 9).
    pub napi_budget: u32,
    /// Downlink OFDMA: HE stations share MU PPDUs on equal RUs ([`ofdma`]).
    pub ofdma: bool,
    /// Most users in one MU PPDU (ath11k's PPDU stats carry at most 8).
    pub ofdma_max_users: u8,
}

/// ath11k's `DP_TX_IDR_SIZE` (`dp.h`): the descriptor ids `ath11k_dp_tx` allocates per
/// TCL ring for frames in flight (it equals `DP_TX_COMP_RING_SIZE`).
pub const DP_TX_IDR_SIZE: u32 = 32768;
/// ath11k's `TARGET_NUM_MSDU_DESC` (`hw.h`): the MSDUs the firmware is configured to hold
/// (`num_msdu_desc` in the WMI resource config, `ath11k_init_wmi_config_ipq8074`). In
/// ath10k the same field is the firmware's tx descriptor count and the host's
/// `max_num_pending_tx`; the ath11k driver does not say how its firmware enforces it.
/// Applied here as a bound on the frames the radio holds, it predicts the stock arms'
/// queue (the seed's VHT80 max RTT, 313-322 ms, is 2500 frames at 101 Mbit/s plus the
/// path), where a ring depth fitted to the mean RTT was used before.
pub const TARGET_NUM_MSDU_DESC: u32 = 2500;

impl Default for HardwareConfig {
    fn default() -> Self {
        HardwareConfig {
            rings: 3,
            ring_entries: DP_TX_IDR_SIZE,
            msdu_budget: TARGET_NUM_MSDU_DESC,
            fw_queue_aggregates: 1,
            tcl_admission: TclAdmission::RingHeads,
            max_ppdu_us: super::super::wifi::phy::MAX_PPDU_US,
            tx_completion_irq: super::completion_irq::CompletionIrq::Fixed,
            tx_completion_delay_us: 500,
            ppdu_stats_delay_us: 1000,
            napi_budget: 64,
            ofdma: false,
            ofdma_max_users: 4,
        }
    }
}

/// How the firmware takes descriptors from the TCL rings into its per-station (TQM)
/// queues.
///
/// The public driver does not settle it. The seed explains its ping (8-11 ms beside a
/// 220 ms download queue to the same station, same TID, on stock) by frames waiting in
/// the rings, per ring: the ping lands in a ring the download does not fill. ath11k's own
/// comment in `ath11k_dp_tx` says instead that a TCL descriptor "is directly enqueued
/// onto hw queue". Each choice gives up what the other explains.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TclAdmission {
    /// The seed's explanation: frames wait in their ring; before each transmission the
    /// firmware admits ring heads, round robin over rings, while the head's station
    /// queue holds fewer than `fw_queue_aggregates` aggregates. A ring blocks at its
    /// head behind a station whose queue is full, across stations, and flows sharing a
    /// ring share that ring's turn.
    #[default]
    RingHeads,
    /// `ath11k_dp_tx`'s comment: a descriptor joins its station's queue of its TID when
    /// written, in the order written across rings; only the descriptor count (held
    /// until the completion is reaped) bounds the hardware queue. No ring blocks, and
    /// a station's flows share its queue first come, first served.
    Direct,
}

/// A frame in the hardware, with its AQL charge and the ring that holds its descriptor.
#[derive(Debug)]
pub struct HwFrame {
    /// The packet.
    pub pkt: Packet,
    /// Its AQL charge, if the design charges.
    pub charge: Option<Charge>,
    /// The TCL ring of its descriptor.
    pub ring: u8,
    /// The station it goes to.
    pub station: u16,
    /// The ring whose FIFO it waits in for the firmware (its flow's; see
    /// [`super::tcl_port`]). Equal to `ring` except under the adapter.
    pub fifo: u8,
    /// The MSDU id the completion carries back (adapter design only).
    pub msdu_id: Option<u32>,
}

impl HwFrame {
    /// The frame left the hardware: its completion status for the host, and the packet
    /// (delivered, or lost) apart from it.
    pub fn complete(self) -> (TxStatus, Packet) {
        let status = TxStatus {
            charge: self.charge,
            msdu_id: self.msdu_id,
            ring: self.ring,
            station: self.station,
            flow: self.pkt.flow,
            ac: self.pkt.ac(),
            from_ap: self.pkt.src == crate::net::Node::Ap,
            len_bytes: self.pkt.len_bytes,
            mpdu_seq: self.pkt.mpdu_seq,
        };
        (status, self.pkt)
    }
}

/// What the host learns from one completion: the frame has left the hardware.
#[derive(Debug)]
pub struct TxStatus {
    /// The charge to release.
    pub charge: Option<Charge>,
    /// The ring whose descriptor is freed.
    pub ring: u8,
    /// The station.
    pub station: u16,
    /// The packet's flow and source, for TCP small queues and metrics.
    pub flow: crate::net::packet::FlowTag,
    /// Its access category (the round a completion runs is that AC's).
    pub ac: Ac,
    /// Whether the AP itself generated the packet.
    pub from_ap: bool,
    /// IPv4 bytes.
    pub len_bytes: u32,
    /// The MSDU id written into the descriptor (adapter design only).
    pub msdu_id: Option<u32>,
    /// Its sequence number (0 if it never got one): a host-aggregating driver's window
    /// moves past it.
    pub mpdu_seq: u32,
}

#[derive(Debug, Default)]
struct TclRing {
    /// Frames waiting for the firmware, by access category: the firmware hands each
    /// descriptor to its TID's queue, so a voice frame does not wait for room behind
    /// best-effort ones (with best effort only, one FIFO as before).
    queue: [VecDeque<HwFrame>; Ac::COUNT],
    outstanding: u32,
}

/// The radio below the driver.
#[derive(Debug)]
pub struct Hardware {
    /// Parameters.
    pub config: HardwareConfig,
    rings: Vec<TclRing>,
    /// Firmware queues by access category (`Ac::index`), then station.
    fw: [Vec<VecDeque<HwFrame>>; Ac::COUNT],
    fw_limit: Vec<usize>,
    /// Round-robin position per access category.
    next_station: [usize; Ac::COUNT],
    /// Whether frames go to their access category's queues (else all to BE's: the
    /// downlink OFDMA firmware, whose MU path groups BE frames only).
    per_ac: bool,
    next_ring: usize,
    /// [`Hardware::next_mu_ppdu`] admitted frames for a transmission it left SU.
    admitted: bool,
}

impl Hardware {
    /// Hardware for stations whose timings are `timings` (their aggregate sizes size the
    /// firmware queues).
    pub fn new(config: HardwareConfig, timings: &[PhyTiming]) -> Hardware {
        Hardware {
            config,
            rings: (0..config.rings.max(1)).map(|_| TclRing::default()).collect(),
            fw: std::array::from_fn(|_| timings.iter().map(|_| VecDeque::new()).collect()),
            fw_limit: timings
                .iter()
                .map(|t| {
                    let limits = AmpduLimits { max_ppdu_us: config.max_ppdu_us };
                    let per_aggregate = ampdu::fill(t, limits, std::iter::repeat_n(1560, t.ba_window as usize)).0;
                    per_aggregate * config.fw_queue_aggregates.max(1) as usize
                })
                .collect(),
            next_station: [0; Ac::COUNT],
            per_ac: false,
            next_ring: 0,
            admitted: false,
        }
    }

    /// Queue frames by their access category (the designs whose host side has one
    /// txq and round per access category); off, every frame is best effort's.
    pub fn set_access_categories(&mut self, on: bool) {
        self.per_ac = on;
    }

    /// Whether frames are queued by access category.
    pub fn access_categories(&self) -> bool {
        self.per_ac
    }

    /// The access category whose queues hold `frame`.
    fn ac_of(&self, frame: &HwFrame) -> Ac {
        if self.per_ac { frame.pkt.ac() } else { Ac::Be }
    }

    /// The ring a context on `cpu` pushes into.
    pub fn ring_of_cpu(&self, cpu: u8) -> u8 {
        cpu % self.rings.len() as u8
    }

    /// Whether `ring` has a free descriptor and the radio an MSDU of its budget.
    pub fn has_room(&self, ring: u8) -> bool {
        self.free_descriptors(ring) > 0
    }

    /// Frames `ring` can still take: its free descriptors, or fewer where the radio's
    /// MSDU budget is nearer its end.
    pub fn free_descriptors(&self, ring: u8) -> u32 {
        let Some(r) = self.rings.get(usize::from(ring)) else { return 0 };
        let held: u32 = self.rings.iter().map(|r| r.outstanding).sum();
        self.config.ring_entries.saturating_sub(r.outstanding).min(self.config.msdu_budget.saturating_sub(held))
    }

    /// Pushes a frame into its ring; refused (and handed back) without a free descriptor.
    pub fn push(&mut self, frame: HwFrame) -> Result<(), HwFrame> {
        if !self.has_room(frame.ring) || usize::from(frame.station) >= self.fw_limit.len() {
            return Err(frame);
        }
        self.rings[usize::from(frame.ring)].outstanding += 1;
        let ac = self.ac_of(&frame).index();
        if self.config.tcl_admission == TclAdmission::Direct {
            // `push` checked the station index against the firmware's queues above.
            self.fw[ac][usize::from(frame.station)].push_back(frame);
            return Ok(());
        }
        let fifo = usize::from(frame.fifo).min(self.rings.len() - 1);
        self.rings[fifo].queue[ac].push_back(frame);
        Ok(())
    }

    /// Frees the descriptor of a completed frame.
    pub fn free_descriptor(&mut self, ring: u8) {
        if let Some(r) = self.rings.get_mut(usize::from(ring)) {
            r.outstanding = r.outstanding.saturating_sub(1);
        }
    }

    /// Whether any frame waits anywhere in the hardware.
    pub fn has_frames(&self) -> bool {
        self.rings.iter().flat_map(|r| &r.queue).any(|q| !q.is_empty())
            || self.fw.iter().flatten().any(|q| !q.is_empty())
    }

    /// Whether a frame of `ac` waits in the rings or the firmware: that access
    /// category's EDCA function contends.
    pub fn has_frames_ac(&self, ac: Ac) -> bool {
        let a = ac.index();
        self.rings.iter().any(|r| !r.queue[a].is_empty()) || self.fw[a].iter().any(|q| !q.is_empty())
    }

    /// Frames held for `station` (rings and firmware).
    pub fn frames_for(&self, station: u16) -> usize {
        let s = usize::from(station);
        self.fw.iter().map(|fw| fw.get(s).map_or(0, VecDeque::len)).sum::<usize>()
            + self
                .rings
                .iter()
                .flat_map(|r| &r.queue)
                .map(|q| q.iter().filter(|f| f.station == station).count())
                .sum::<usize>()
    }

    /// Descriptors in use per ring.
    pub fn ring_outstanding(&self) -> Vec<u32> {
        self.rings.iter().map(|r| r.outstanding).collect()
    }

    fn admit(&mut self) {
        let n = self.rings.len();
        loop {
            let mut moved = false;
            for k in 0..n {
                let i = (self.next_ring + k) % n;
                for ac in 0..Ac::COUNT {
                    let Some(head) = self.rings[i].queue[ac].front() else { continue };
                    let s = usize::from(head.station);
                    if self.fw[ac][s].len() >= self.fw_limit[s] {
                        continue;
                    }
                    if let Some(f) = self.rings[i].queue[ac].pop_front() {
                        self.fw[ac][s].push_back(f);
                        moved = true;
                    }
                }
            }
            self.next_ring = (self.next_ring + 1) % n;
            if !moved {
                break;
            }
        }
    }

    /// The firmware's next best-effort A-MPDU (see [`Hardware::next_ampdu_ac`]).
    pub fn next_ampdu(&mut self, timings: &[PhyTiming]) -> Option<(u16, Vec<HwFrame>, u32)> {
        self.next_ampdu_ac(Ac::Be, timings)
    }

    /// The firmware's next A-MPDU of `ac`, whose EDCA function won the access: admits
    /// frames from the rings, picks the next station in round robin that has frames of
    /// `ac`, and aggregates that queue within the limits (the longest PPDU, or the
    /// access category's TXOP limit). Returns the station, the frames and the PSDU
    /// length in bytes.
    pub fn next_ampdu_ac(&mut self, ac: Ac, timings: &[PhyTiming]) -> Option<(u16, Vec<HwFrame>, u32)> {
        if !std::mem::take(&mut self.admitted) {
            self.admit();
        }
        let a = ac.index();
        let n = self.fw[a].len();
        let s = (0..n).map(|k| (self.next_station[a] + k) % n).find(|&s| self.can_send(a, s, timings))?;
        self.next_station[a] = (s + 1) % n;
        let timing = timings.get(s)?;
        let edca = crate::wifi::edca::EdcaParams::ap(ac);
        let limits = AmpduLimits { max_ppdu_us: edca.max_ppdu_us(self.config.max_ppdu_us, timing.block_ack_us) };
        let subframes = self.fw[a][s].iter().map(|f| (f.pkt.ampdu_subframe_bytes(), f.pkt.mpdu_seq != 0));
        let (count, bytes) = ampdu::fill_in_window(timing, limits, subframes);
        let frames: Vec<HwFrame> = self.fw[a][s].drain(..count).collect();
        Some((s as u16, frames, bytes))
    }

    /// Whether station `s`'s firmware queue of access category index `a` has a frame
    /// its BlockAck window lets go: a resent one at its head, or room for a new one.
    fn can_send(&self, a: usize, s: usize, timings: &[PhyTiming]) -> bool {
        let Some(head) = self.fw.get(a).and_then(|q| q.get(s)).and_then(|q| q.front()) else { return false };
        head.pkt.mpdu_seq != 0 || timings.get(s).is_none_or(|t| t.seq_room > 0)
    }

    /// Puts back an A-MPDU that collided, in order, at the head of its station's queue
    /// of its access category.
    pub fn requeue_front(&mut self, station: u16, frames: Vec<HwFrame>) {
        let ac = frames.first().map_or(Ac::Be, |f| self.ac_of(f));
        if let Some(q) = self.fw[ac.index()].get_mut(usize::from(station)) {
            for f in frames.into_iter().rev() {
                q.push_front(f);
            }
        }
    }

    /// When a completion for an exchange ending at `end` is reaped.
    pub fn completion_at(&self, end: Nanos) -> Nanos {
        end + self.config.tx_completion_delay_us * 1_000
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::net::packet::FlowTag;
    use crate::net::{Node, Payload};
    use airtime_est::{Bandwidth, HeGi, Rate};

    /// A 1500-byte UDP frame to `station`, its descriptor on `ring`, numbered `seq`.
    pub(in crate::ap) fn frame(station: u16, ring: u8, seq: u64) -> HwFrame {
        let pkt = Packet {
            len_bytes: 1500,
            dst: Node::Station(station),
            src: Node::Ap,
            payload: Payload::Udp { seq, sent_ns: 0 },
            flow: FlowTag::Udp(station),
            dscp: 0,
            cpu: ring,
            enqueue_ns: 0,
            tries: 0,
            mpdu_seq: 0,
        };
        HwFrame { pkt, charge: None, ring, station, fifo: ring, msdu_id: None }
    }

    fn he80() -> PhyTiming {
        PhyTiming::new(Rate::he(11, 2, Bandwidth::Mhz80, HeGi::Gi0_8).unwrap())
    }

    #[test]
    fn the_radios_msdu_budget_bounds_all_rings_together() {
        let config = HardwareConfig { ring_entries: 4, msdu_budget: 6, ..HardwareConfig::default() };
        let mut hw = Hardware::new(config, &[he80()]);
        for seq in 0..4 {
            hw.push(frame(0, 0, seq)).unwrap();
        }
        assert!(hw.push(frame(0, 0, 4)).is_err(), "ring 0 is out of descriptors");
        assert_eq!(hw.free_descriptors(1), 2, "the budget leaves ring 1 two frames, not its four descriptors");
        hw.push(frame(0, 1, 5)).unwrap();
        hw.push(frame(0, 1, 6)).unwrap();
        assert!(hw.push(frame(0, 2, 7)).is_err(), "the radio holds its budget: ring 2's descriptors do not help");
        hw.free_descriptor(0);
        // A completion frees one descriptor of ring 0 and one frame of the budget.
        assert_eq!((hw.free_descriptors(0), hw.free_descriptors(2)), (1, 1));
        hw.push(frame(0, 2, 8)).unwrap();
        assert_eq!(hw.ring_outstanding(), vec![3, 2, 1]);
    }

    fn seqs(frames: &[HwFrame]) -> Vec<u64> {
        frames
            .iter()
            .map(|f| match f.pkt.payload {
                Payload::Udp { seq, .. } => seq,
                _ => u64::MAX,
            })
            .collect()
    }

    #[test]
    fn admitted_as_written_a_stations_frames_leave_in_write_order_across_rings() {
        let config = HardwareConfig { tcl_admission: TclAdmission::Direct, ..HardwareConfig::default() };
        let timings = [he80()];
        let mut hw = Hardware::new(config, &timings);
        // Ring 0 writes three frames, then rings 1 and 2 one each, then ring 0 again.
        for (seq, ring) in [(0, 0), (1, 0), (2, 0), (3, 1), (4, 2), (5, 0)] {
            hw.push(frame(0, ring, seq)).unwrap();
        }
        let (_, frames, _) = hw.next_ampdu(&timings).unwrap();
        assert_eq!(seqs(&frames), vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn admitted_from_the_ring_heads_rings_take_turns() {
        let timings = [he80()];
        let mut hw = Hardware::new(HardwareConfig::default(), &timings);
        for (seq, ring) in [(0, 0), (1, 0), (2, 0), (3, 1), (4, 2), (5, 0)] {
            hw.push(frame(0, ring, seq)).unwrap();
        }
        let (_, frames, _) = hw.next_ampdu(&timings).unwrap();
        // One head per ring in turn: ring 1's and ring 2's frames pass ring 0's backlog.
        assert_eq!(seqs(&frames), vec![0, 3, 4, 1, 2, 5]);
    }
}
