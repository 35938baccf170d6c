//! The `airtime-ath11k` adapter's HAL over the timed hardware model: TCL rings and their
//! MSDU tables, the completion ring, the status sink, PPDU stats and rx status. The
//! adapter keeps the frame in the MSDU table until its completion (as ath11k keeps the
//! skb in the idr); the hardware model carries a copy on the air.

use super::hardware::{Hardware, HwFrame};
use crate::net::Packet;
use airtime_ath11k::hal::{
    MSDU_TABLE_CAPACITY, Msdu, MsduTable, PpduStats, PpduStatsSource, RingId, RxPpdu, RxStatusSource, StatusSink,
    TclDesc, TclRings, TxCompletion, TxCompletionRing, TxStatus,
};
use airtime_sched::RingErrorKind;
use std::collections::{HashMap, VecDeque};

/// The simulated ath11k data path.
pub struct AdapterHal {
    /// The radio.
    pub hw: Hardware,
    tables: Vec<HashMap<u32, Msdu<Packet>>>,
    next_id: Vec<u32>,
    /// Completion descriptors written by the hardware, not yet reaped.
    pub completions: VecDeque<TxCompletion>,
    /// Frames handed back to the stack since the owner last took them.
    pub finished: Vec<(Packet, TxStatus)>,
    /// PPDU stats records not yet read.
    pub ppdu_stats: VecDeque<PpduStats>,
    /// Rx PPDU records not yet read.
    pub rx_ppdus: VecDeque<RxPpdu>,
}

impl AdapterHal {
    /// A HAL over `hw`.
    pub fn new(hw: Hardware) -> AdapterHal {
        AdapterHal {
            hw,
            tables: (0..3).map(|_| HashMap::new()).collect(),
            next_id: vec![0; 3],
            completions: VecDeque::new(),
            finished: Vec::new(),
            ppdu_stats: VecDeque::new(),
            rx_ppdus: VecDeque::new(),
        }
    }
}

impl TclRings for AdapterHal {
    type Error = RingErrorKind;

    fn tcl_descriptors(&self, _ring: RingId) -> u32 {
        self.hw.config.ring_entries
    }

    fn tcl_free(&self, ring: RingId) -> u32 {
        self.hw.config.ring_entries.saturating_sub(self.hw.outstanding(ring.index() as u8))
    }

    fn tcl_enqueue(&mut self, ring: RingId, desc: TclDesc) -> Result<(), RingErrorKind> {
        let Some(msdu) = self.tables.get(ring.index()).and_then(|t| t.get(&desc.msdu_id)) else {
            return Err(RingErrorKind::Other);
        };
        let Some(station) = desc.peer_id else { return Err(RingErrorKind::Other) };
        let pkt = msdu.frame.air_copy();
        let fifo = self.hw.ring_of_cpu(pkt.cpu);
        let frame = HwFrame { pkt, charge: None, ring: ring.index() as u8, station, fifo, msdu_id: Some(desc.msdu_id) };
        self.hw.push(frame).map_err(|_| RingErrorKind::Full)
    }
}

impl MsduTable for AdapterHal {
    type Frame = Packet;

    fn msdu_capacity(&self, _ring: RingId) -> u32 {
        MSDU_TABLE_CAPACITY
    }

    fn msdu_outstanding(&self, ring: RingId) -> u32 {
        self.tables.get(ring.index()).map_or(0, |t| t.len() as u32)
    }

    fn msdu_insert(&mut self, ring: RingId, msdu: Msdu<Packet>) -> Result<u32, Msdu<Packet>> {
        let (Some(t), Some(next)) = (self.tables.get_mut(ring.index()), self.next_id.get_mut(ring.index())) else {
            return Err(msdu);
        };
        if t.len() as u32 >= MSDU_TABLE_CAPACITY {
            return Err(msdu);
        }
        while t.contains_key(next) {
            *next = (*next + 1) % MSDU_TABLE_CAPACITY;
        }
        let id = *next;
        *next = (*next + 1) % MSDU_TABLE_CAPACITY;
        t.insert(id, msdu);
        Ok(id)
    }

    fn msdu_take(&mut self, ring: RingId, id: u32) -> Option<Msdu<Packet>> {
        self.tables.get_mut(ring.index())?.remove(&id)
    }

    fn msdu_take_any(&mut self, ring: RingId) -> Option<(u32, Msdu<Packet>)> {
        let t = self.tables.get_mut(ring.index())?;
        let id = *t.keys().next()?;
        t.remove(&id).map(|m| (id, m))
    }
}

impl TxCompletionRing for AdapterHal {
    fn reap_tx_completion(&mut self) -> Option<TxCompletion> {
        self.completions.pop_front()
    }
}

impl StatusSink for AdapterHal {
    type Frame = Packet;

    fn tx_status(&mut self, frame: Packet, status: TxStatus) {
        self.finished.push((frame, status));
    }
}

impl PpduStatsSource for AdapterHal {
    fn next_ppdu_stats(&mut self) -> Option<PpduStats> {
        self.ppdu_stats.pop_front()
    }
}

impl RxStatusSource for AdapterHal {
    fn next_rx_ppdu(&mut self) -> Option<RxPpdu> {
        self.rx_ppdus.pop_front()
    }
}
