//! A qdisc on the interface in front of the driver, the design before mac80211 had
//! intermediate queues: `pfifo_fast` (three priority bands, 1000 packets in all) or the
//! `fq_codel` qdisc (Linux defaults: target 5 ms, interval 100 ms, 10240 packets,
//! quantum 1514). The interface is multiqueue (a netdev queue per access category), so
//! each access category has its own (`mq`'s children; see [`super::ath9k_like`]). The
//! driver below is ath9k's of that era, which pulls from a qdisc until it stops its
//! queue.

use crate::engine::Nanos;
use crate::engine::time::instant;
use crate::net::Packet;
use airtime_sched::fq_codel::{FqCodelConfig, FqCodelTxq};
use airtime_sched::traits::Txq;
use std::collections::VecDeque;

/// The interface qdisc.
pub enum Qdisc {
    /// `pfifo_fast`: three FIFO bands, the lowest-numbered non-empty one served first,
    /// dropping arrivals beyond `limit` packets in all.
    Pfifo {
        /// Queued packets, by band.
        bands: [VecDeque<Packet>; 3],
        /// Most packets queued over the bands (`tx_queue_len`).
        limit: usize,
    },
    /// The fq_codel qdisc.
    FqCodel(Box<FqCodelTxq<Packet>>),
}

/// `pfifo_fast`'s band of each `skb->priority` (sch_generic.c `prio2band`, for
/// `TC_PRIO_*` 0..=15): 0 is served first. mac80211's `ieee80211_select_queue` has set
/// the priority to the 802.1d user priority (`cfg80211_classify8021d`) before the qdisc
/// sees the packet, so UP 6 and 7 (EF, CS6) take band 0, UP 0 and 4 band 1, and UP 1, 2,
/// 3 and 5 band 2.
pub const PRIO2BAND: [u8; 16] = [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1];

/// The `pfifo_fast` band of `pkt`.
fn band_of(pkt: &Packet) -> usize {
    let up = crate::net::udp::user_priority_of_dscp(pkt.dscp).unwrap_or(0);
    usize::from(PRIO2BAND[usize::from(up & 15)])
}

impl Qdisc {
    /// `pfifo_fast` of 1000 packets over its bands (`txqueuelen`; Linux 3.x's
    /// `pfifo_fast_enqueue` checks the qdisc's total length).
    pub fn pfifo() -> Qdisc {
        Qdisc::Pfifo { bands: Default::default(), limit: 1000 }
    }

    /// `fq_codel` with Linux's qdisc defaults.
    pub fn fq_codel() -> Qdisc {
        let mut c = FqCodelConfig::MAC80211;
        c.codel_target_us = 5_000;
        c.packet_limit = 10_240;
        c.quantum_bytes = 1514;
        c.memory_limit_bytes = 32 << 20;
        c.ecn = false;
        Qdisc::FqCodel(Box::new(super::mac80211::new_txq(c)))
    }
}

impl Qdisc {
    /// Queues a packet; a full `pfifo_fast` hands it back (tail drop).
    pub fn enqueue(&mut self, pkt: Packet, now: Nanos) -> Result<(), Packet> {
        match self {
            Qdisc::Pfifo { bands, limit } => {
                if bands.iter().map(VecDeque::len).sum::<usize>() >= *limit {
                    return Err(pkt);
                }
                bands[band_of(&pkt)].push_back(pkt);
                Ok(())
            }
            Qdisc::FqCodel(q) => {
                // fq_codel's own limits drop from its fattest flow: see `take_drops`.
                let _ = q.enqueue(pkt, instant(now));
                Ok(())
            }
        }
    }

    /// The next packet for the driver.
    pub fn dequeue(&mut self, now: Nanos) -> Option<Packet> {
        match self {
            Qdisc::Pfifo { bands, .. } => bands.iter_mut().find_map(VecDeque::pop_front),
            Qdisc::FqCodel(q) => q.dequeue(instant(now)).ok().flatten(),
        }
    }

    /// The packets the qdisc dropped (fq_codel's CoDel and limits) since the last call.
    pub fn take_drops(&mut self) -> Vec<Packet> {
        match self {
            Qdisc::Pfifo { .. } => Vec::new(),
            Qdisc::FqCodel(q) => q.drain_drops().map(|d| d.frame).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{FlowTag, Node, Payload};

    fn pkt(seq: u16, dscp: u8) -> Packet {
        Packet {
            payload: Payload::Ip(Vec::new()),
            len_bytes: 1500,
            src: Node::Wired,
            dst: Node::Station(0),
            flow: FlowTag::Udp(seq),
            dscp,
            cpu: 0,
            enqueue_ns: 0,
            tries: 0,
            mpdu_seq: 0,
        }
    }

    #[test]
    fn pfifo_fast_serves_ef_before_best_effort_before_background_and_caps_the_total() {
        let mut q = Qdisc::pfifo();
        for (seq, dscp) in [(0, 8), (1, 0), (2, 46), (3, 0), (4, 48)] {
            q.enqueue(pkt(seq, dscp), 0).unwrap();
        }
        let order: Vec<FlowTag> = std::iter::from_fn(|| q.dequeue(0)).map(|p| p.flow).collect();
        // EF (UP 6) and CS6 (UP 7) in band 0, CS0 in band 1, CS1 (UP 1) in band 2.
        assert_eq!(order, [2, 4, 1, 3, 0].map(FlowTag::Udp));
        for seq in 0..1000 {
            q.enqueue(pkt(seq, if seq % 2 == 0 { 0 } else { 8 }), 0).unwrap();
        }
        assert!(q.enqueue(pkt(0, 46), 0).is_err(), "1000 packets over the bands");
    }
}
