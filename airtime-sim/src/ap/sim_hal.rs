//! The `airtime-ath11k` adapter's HAL over the timed hardware model: TCL rings and their
//! MSDU tables, the completion ring, the status sink, PPDU stats and rx status. The
//! adapter keeps the frame in the MSDU table until its completion (as ath11k keeps the
//! skb in the idr); the hardware model carries a copy on the air.
//!
//! The adapter's HAL roles take `&self` (the real driver serialises each ring itself);
//! the simulator is single-threaded, so each part sits in a `RefCell`.

use super::hardware::{Hardware, HwFrame};
use crate::net::Packet;
use airtime_ath11k::hal::{
    MSDU_TABLE_CAPACITY, Msdu, MsduTable, PpduStats, PpduStatsSource, RingId, RxPpdu, RxStatusSource, StatusSink,
    TclDesc, TclRings, TxCompletion, TxCompletionRing, TxStatus,
};
use airtime_sched::{Charge, Frame, RingErrorKind};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

/// The simulated ath11k data path.
pub struct AdapterHal {
    /// The radio.
    pub hw: RefCell<Hardware>,
    tables: RefCell<Vec<HashMap<u32, Msdu<Packet>>>>,
    next_id: RefCell<Vec<u32>>,
    /// Completion descriptors written by the hardware, not yet reaped.
    pub completions: RefCell<VecDeque<TxCompletion>>,
    /// Frames handed back to the stack since the owner last took them.
    pub finished: RefCell<Vec<(Packet, TxStatus)>>,
    /// PPDU stats records not yet read.
    pub ppdu_stats: RefCell<VecDeque<PpduStats>>,
    /// Rx PPDU records not yet read.
    pub rx_ppdus: RefCell<VecDeque<RxPpdu>>,
}

impl AdapterHal {
    /// A HAL over `hw`.
    pub fn new(hw: Hardware) -> AdapterHal {
        AdapterHal {
            hw: RefCell::new(hw),
            tables: RefCell::new((0..3).map(|_| HashMap::new()).collect()),
            next_id: RefCell::new(vec![0; 3]),
            completions: RefCell::new(VecDeque::new()),
            finished: RefCell::new(Vec::new()),
            ppdu_stats: RefCell::new(VecDeque::new()),
            rx_ppdus: RefCell::new(VecDeque::new()),
        }
    }
}

impl AdapterHal {
    /// The airtime the adapter charged for MSDU `id` of `ring`, still in its table, in
    /// us (`None`: no such entry, or uncharged). The raw charge is decoded from a copy
    /// only to read it: the entry keeps the charge the adapter releases.
    pub fn charged_us(&self, ring: RingId, id: u32) -> Option<u32> {
        let tables = self.tables.borrow();
        let raw = tables.get(ring.index())?.get(&id)?.charge_raw;
        Charge::from_raw(raw).map(|c| c.airtime_us())
    }
}

/// The MSDUs of one station a PPDU carried and had acknowledged, as ath11k's ACK/BA
/// status TLV reports them per user (`HTT_PPDU_STATS_ACK_BA_INFO_NUM_MSDU_M` of
/// `struct htt_ppdu_stats_usr_cmpltn_ack_ba_status`, and its `success_bytes`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckedMsdus {
    /// MSDUs acknowledged.
    pub count: u16,
    /// Their bytes, as the adapter priced them (the MAC frame).
    pub bytes: u32,
}

impl AckedMsdus {
    /// One more acknowledged MSDU.
    pub fn add(&mut self, pkt: &Packet) {
        self.count = self.count.saturating_add(1);
        self.bytes = self.bytes.saturating_add(pkt.len_bytes());
    }
}

impl TclRings for AdapterHal {
    type Error = RingErrorKind;

    fn tcl_descriptors(&self, _ring: RingId) -> u32 {
        self.hw.borrow().config.ring_entries
    }

    fn tcl_free(&self, ring: RingId) -> u32 {
        self.hw.borrow().free_descriptors(ring.index() as u8)
    }

    fn tcl_enqueue(&self, ring: RingId, desc: TclDesc) -> Result<(), RingErrorKind> {
        let tables = self.tables.borrow();
        let Some(msdu) = tables.get(ring.index()).and_then(|t| t.get(&desc.msdu_id)) else {
            return Err(RingErrorKind::Other);
        };
        let Some(station) = desc.peer_id else { return Err(RingErrorKind::Other) };
        let pkt = msdu.frame.air_copy();
        let mut hw = self.hw.borrow_mut();
        let fifo = hw.ring_of_cpu(pkt.cpu);
        let frame = HwFrame { pkt, charge: None, ring: ring.index() as u8, station, fifo, msdu_id: Some(desc.msdu_id) };
        hw.push(frame).map_err(|_| RingErrorKind::Full)
    }
}

impl MsduTable for AdapterHal {
    type Frame = Packet;

    fn msdu_capacity(&self, _ring: RingId) -> u32 {
        MSDU_TABLE_CAPACITY
    }

    fn msdu_outstanding(&self, ring: RingId) -> u32 {
        self.tables.borrow().get(ring.index()).map_or(0, |t| t.len() as u32)
    }

    fn msdu_insert(&self, ring: RingId, msdu: Msdu<Packet>) -> Result<u32, Msdu<Packet>> {
        let (mut tables, mut next_id) = (self.tables.borrow_mut(), self.next_id.borrow_mut());
        let (Some(t), Some(next)) = (tables.get_mut(ring.index()), next_id.get_mut(ring.index())) else {
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

    fn msdu_take(&self, ring: RingId, id: u32) -> Option<Msdu<Packet>> {
        self.tables.borrow_mut().get_mut(ring.index())?.remove(&id)
    }

    fn msdu_take_any(&self, ring: RingId) -> Option<(u32, Msdu<Packet>)> {
        let mut tables = self.tables.borrow_mut();
        let t = tables.get_mut(ring.index())?;
        let id = *t.keys().next()?;
        t.remove(&id).map(|m| (id, m))
    }
}

impl TxCompletionRing for AdapterHal {
    fn reap_tx_completion(&self) -> Option<TxCompletion> {
        self.completions.borrow_mut().pop_front()
    }
}

impl StatusSink for AdapterHal {
    type Frame = Packet;

    fn tx_status(&self, frame: Packet, status: TxStatus) {
        self.finished.borrow_mut().push((frame, status));
    }
}

impl PpduStatsSource for AdapterHal {
    fn next_ppdu_stats(&self) -> Option<PpduStats> {
        self.ppdu_stats.borrow_mut().pop_front()
    }
}

impl RxStatusSource for AdapterHal {
    fn next_rx_ppdu(&self) -> Option<RxPpdu> {
        self.rx_ppdus.borrow_mut().pop_front()
    }
}
