//! A qdisc on the interface in front of the driver, the design before mac80211 had
//! intermediate queues: `pfifo_fast` (one FIFO of 1000 packets for best effort) or the
//! `fq_codel` qdisc (Linux defaults: target 5 ms, interval 100 ms, 10240 packets,
//! quantum 1514). The driver below it is ath9k's of that era (see
//! [`super::ath9k_like`]), which pulls from the qdisc until it stops it.

use crate::engine::Nanos;
use crate::engine::time::instant;
use crate::net::Packet;
use airtime_sched::fq_codel::{FqCodelConfig, FqCodelTxq};
use airtime_sched::traits::Txq;
use std::collections::VecDeque;

/// The interface qdisc.
pub enum Qdisc {
    /// A FIFO that drops arrivals beyond `limit` packets.
    Pfifo {
        /// Queued packets.
        queue: VecDeque<Packet>,
        /// Most packets queued.
        limit: usize,
    },
    /// The fq_codel qdisc.
    FqCodel(Box<FqCodelTxq<Packet>>),
}

impl Qdisc {
    /// `pfifo_fast`'s best-effort band: 1000 packets (`txqueuelen`).
    pub fn pfifo() -> Qdisc {
        Qdisc::Pfifo { queue: VecDeque::new(), limit: 1000 }
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
    /// Queues a packet; a `pfifo_fast` band that is full hands it back (tail drop).
    pub fn enqueue(&mut self, pkt: Packet, now: Nanos) -> Result<(), Packet> {
        match self {
            Qdisc::Pfifo { queue, limit } => {
                if queue.len() >= *limit {
                    return Err(pkt);
                }
                queue.push_back(pkt);
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
            Qdisc::Pfifo { queue, .. } => queue.pop_front(),
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
