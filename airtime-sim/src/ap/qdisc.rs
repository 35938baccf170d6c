//! A qdisc on the interface in front of the driver, the design before mac80211 had
//! intermediate queues: `pfifo_fast` (one FIFO of 1000 packets for best effort) or the
//! `fq_codel` qdisc (Linux defaults: target 5 ms, interval 100 ms, 10240 packets,
//! quantum 1514), over a driver that keeps its own FIFO of a few aggregates (the TCL
//! ring with a small `ring_entries`). The driver pulls from the qdisc whenever its FIFO
//! has room: on every enqueue and on every completion.

use super::Ap;
use super::hardware::{HwFrame, TxStatus};
use crate::engine::Nanos;
use crate::engine::time::instant;
use crate::net::{Node, Packet};
use airtime_sched::Txq;
use airtime_sched::fq_codel::{FqCodelConfig, FqCodelTxq};
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

fn enqueue(ap: &mut Ap, pkt: Packet, now: Nanos) {
    let Some(q) = ap.qdisc.as_mut() else {
        ap.dropped.push(pkt);
        return;
    };
    match q {
        Qdisc::Pfifo { queue, limit } => {
            if queue.len() >= *limit {
                ap.counters.txq_drops += 1;
                ap.dropped.push(pkt);
            } else {
                queue.push_back(pkt);
            }
        }
        Qdisc::FqCodel(q) => {
            let _ = q.enqueue(pkt, instant(now));
        }
    }
}

fn dequeue(ap: &mut Ap, now: Nanos) -> Option<Packet> {
    match ap.qdisc.as_mut()? {
        Qdisc::Pfifo { queue, .. } => queue.pop_front(),
        Qdisc::FqCodel(q) => {
            let p = q.dequeue(instant(now)).ok().flatten();
            for d in q.drain_drops() {
                ap.counters.txq_drops += 1;
                ap.dropped.push(d.frame);
            }
            p
        }
    }
}

/// Moves packets from the qdisc into the driver's FIFO while it has room.
fn run(ap: &mut Ap, now: Nanos) {
    loop {
        let Some(pkt) = dequeue(ap, now) else { return };
        let ring = ap.hw.ring_of_cpu(pkt.cpu);
        if !ap.hw.has_room(ring) {
            // Requeue at the head: the driver stops the queue before it is full.
            if let Some(Qdisc::Pfifo { queue, .. }) = ap.qdisc.as_mut() {
                queue.push_front(pkt);
            } else if let Some(Qdisc::FqCodel(q)) = ap.qdisc.as_mut() {
                let _ = q.enqueue(pkt, instant(now));
            }
            return;
        }
        let Node::Station(station) = pkt.dst else {
            ap.dropped.push(pkt);
            continue;
        };
        if let Err(f) = ap.hw.push(HwFrame { ring, fifo: ring, pkt, charge: None, station, msdu_id: None }) {
            ap.counters.ring_drops += 1;
            ap.dropped.push(f.pkt);
        }
    }
}

/// The stack hands a packet to the interface.
pub fn xmit(ap: &mut Ap, pkt: Packet, now: Nanos) {
    enqueue(ap, pkt, now);
    run(ap, now);
}

/// Completions free the driver's FIFO; the qdisc refills it.
pub fn tx_status(ap: &mut Ap, statuses: &mut [TxStatus], now: Nanos) {
    for st in statuses.iter_mut() {
        ap.hw.free_descriptor(st.ring);
    }
    run(ap, now);
}
