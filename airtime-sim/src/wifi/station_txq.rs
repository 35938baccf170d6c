//! A station's own transmit path, per access category: what a Linux client's mac80211
//! does with the packets its stack sends, and the few frames its driver holds below.
//!
//! A client whose driver uses mac80211's intermediate queues (`wake_tx_queue`) has no
//! qdisc (mac80211 sets `IFF_NO_QUEUE`): `ieee80211_txq_enqueue` puts each packet in
//! the txq of its TID, which is FQ-CoDel with mac80211's parameters
//! (`ieee80211_txq_setup_flows`: target 20 ms, interval 100 ms, 8192 packets), and the
//! driver pulls from it when it can transmit (`ieee80211_tx_dequeue`). Below that, the
//! driver holds what it pulled for the next A-MPDU, and frames the BlockAck did not
//! acknowledge go back to the front there.
//!
//! [`StationQueue::Fifo`] keeps the simpler model (one unbounded FIFO, no drops) for
//! ablation.

use crate::engine::Nanos;
use crate::engine::time::instant;
use crate::net::Packet;
use airtime_sched::fq_codel::{FqCodelConfig, FqCodelTxq};
use airtime_sched::traits::Txq;
use std::collections::VecDeque;

/// What queues a station's packets before its driver takes them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StationQueue {
    /// mac80211's txq: FQ-CoDel with mac80211's parameters (a Linux client).
    #[default]
    FqCodel,
    /// One FIFO without a limit.
    Fifo,
}

/// One access category's transmit queue of a station.
#[derive(Debug, Default)]
pub struct StationTxq {
    /// mac80211's txq, made at the first packet (`None` for [`StationQueue::Fifo`]).
    fq: Option<Box<FqCodelTxq<Packet>>>,
    kind: StationQueue,
    /// Frames the driver holds for its next A-MPDU (everything, for a FIFO).
    pub held: VecDeque<Packet>,
}

impl StationTxq {
    /// An empty queue of `kind`.
    pub fn new(kind: StationQueue) -> StationTxq {
        StationTxq { fq: None, kind, held: VecDeque::new() }
    }

    /// Queues `pkt` from the station's stack; returns the packets FQ-CoDel's limits
    /// dropped (from its fattest flow), which may include `pkt`.
    pub fn enqueue(&mut self, pkt: Packet, now: Nanos) -> Vec<Packet> {
        match self.kind {
            StationQueue::Fifo => {
                self.held.push_back(pkt);
                Vec::new()
            }
            StationQueue::FqCodel => {
                let fq = self.fq.get_or_insert_with(|| Box::new(mac80211_txq()));
                let _ = fq.enqueue(pkt, instant(now));
                fq.drain_drops().map(|d| d.frame).collect()
            }
        }
    }

    /// The driver pulls from the txq until it holds `frames` (an A-MPDU's worth);
    /// returns the packets CoDel dropped on the way.
    pub fn pull(&mut self, frames: usize, now: Nanos) -> Vec<Packet> {
        let Some(fq) = self.fq.as_mut() else { return Vec::new() };
        while self.held.len() < frames {
            match fq.dequeue(instant(now)) {
                Ok(Some(p)) => self.held.push_back(p),
                Ok(None) | Err(_) => break,
            }
        }
        fq.drain_drops().map(|d| d.frame).collect()
    }

    /// Whether nothing waits, in the txq or the driver.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty() && self.fq.as_ref().is_none_or(|fq| fq.backlog_packets() == 0)
    }
}

/// mac80211's txq, with the crate's defaults (mac80211's `ieee80211_txq_setup_flows`).
fn mac80211_txq() -> FqCodelTxq<Packet> {
    FqCodelTxq::new(FqCodelConfig::MAC80211)
        .unwrap_or_else(|_| unreachable!("mac80211's parameters are valid and need no more than the flow table"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{FlowTag, Node, Payload};

    fn pkt(flow: FlowTag) -> Packet {
        Packet {
            payload: Payload::Ip(Vec::new()),
            len_bytes: 1500,
            src: Node::Station(0),
            dst: Node::Wired,
            flow,
            dscp: 0,
            cpu: 0,
            enqueue_ns: 0,
            tries: 0,
            mpdu_seq: 0,
        }
    }

    #[test]
    fn a_new_flow_is_pulled_ahead_of_a_backlogged_one() {
        let mut q = StationTxq::new(StationQueue::FqCodel);
        for _ in 0..20 {
            assert!(q.enqueue(pkt(FlowTag::Tcp(1)), 0).is_empty());
        }
        assert!(q.enqueue(pkt(FlowTag::Ping(0)), 0).is_empty());
        assert!(q.pull(4, 0).is_empty());
        assert_eq!(q.held.len(), 4);
        assert!(
            q.held.iter().take(2).any(|p| matches!(p.flow, FlowTag::Ping(_))),
            "the ping waits behind the bulk flow"
        );
        assert!(!q.is_empty());
        q.held.clear();
        assert!(q.pull(64, 0).is_empty());
        assert_eq!(q.held.len(), 17);
        q.held.clear();
        assert!(q.is_empty());
    }

    #[test]
    fn codel_drops_from_a_standing_queue_and_reports_them() {
        let mut q = StationTxq::new(StationQueue::FqCodel);
        for _ in 0..2000 {
            q.enqueue(pkt(FlowTag::Tcp(1)), 0);
        }
        // Pull one frame every 1 ms for a second: the sojourn stays far above 20 ms.
        let mut dropped = 0;
        for ms in 1..=1000u64 {
            q.held.clear();
            dropped += q.pull(1, ms * 1_000_000).len();
        }
        assert!(dropped > 0, "CoDel dropped nothing from a second of standing queue");
    }

    #[test]
    fn a_fifo_keeps_every_packet_in_order() {
        let mut q = StationTxq::new(StationQueue::Fifo);
        for f in 0..10 {
            assert!(q.enqueue(pkt(FlowTag::Tcp(f)), 0).is_empty());
        }
        assert!(q.pull(1, 0).is_empty());
        let order: Vec<_> = q.held.iter().map(|p| p.flow).collect();
        assert_eq!(order, (0..10).map(FlowTag::Tcp).collect::<Vec<_>>());
    }
}
