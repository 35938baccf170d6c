//! A test bench: the adapter over the simulated HAL with FIFO txqs, and the invariants
//! every test ends with.
#![allow(dead_code)]

use airtime_mt76::hal::{TxOutcome, TxReport};
use airtime_mt76::sim_hal::{SimConfig, SimHal};
use airtime_mt76::{Config, DriverTxq, Mt76, ScheduleReport, TxFreePass};
use airtime_sched::traits::{Enqueue, Frame};
use airtime_sched::{Instant, StationId, Tid, Txq, TxqId, Weight};
use std::collections::VecDeque;

/// A frame: its sequence number (global, in enqueue order), txq and length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pkt {
    pub seq: u64,
    pub txq: TxqId,
    pub len: u32,
}

impl Frame for Pkt {
    fn len_bytes(&self) -> u32 {
        self.len
    }
}

impl airtime_sched::FqFrame for Pkt {
    fn flow_hash(&self) -> u32 {
        (self.seq % 8) as u32
    }
}

/// A plain FIFO txq.
#[derive(Debug, Default)]
pub struct Q(pub VecDeque<Pkt>);

impl Txq for Q {
    type Frame = Pkt;
    type Error = core::convert::Infallible;
    fn dequeue(&mut self, _: Instant) -> Result<Option<Pkt>, Self::Error> {
        Ok(self.0.pop_front())
    }
    fn peek_len(&self) -> Option<u32> {
        self.0.front().map(|p| p.len)
    }
}

impl Enqueue for Q {
    fn enqueue(&mut self, frame: Pkt, _: Instant) {
        self.0.push_back(frame);
    }
}

impl DriverTxq for Q {}

pub type Radio = Mt76<SimHal<Pkt>, Q>;

pub struct Bench {
    pub radio: Radio,
    pub now: Instant,
    pub next_seq: u64,
    /// Every frame handed back to the stack so far, with its report.
    pub done: Vec<(Pkt, TxReport)>,
}

impl Bench {
    pub fn new(config: Config, sim: SimConfig) -> Bench {
        let radio = Mt76::new(SimHal::new(sim), config).expect("radio");
        Bench { radio, now: Instant::from_millis(1), next_seq: 0, done: Vec::new() }
    }

    pub fn default() -> Bench {
        Bench::new(Config::default(), SimConfig::default())
    }

    pub fn station(&mut self, wcid: u16, weight: u16) -> StationId {
        self.radio.add_station(wcid, Weight::new(weight).unwrap()).expect("station")
    }

    pub fn txq(&mut self, sta: StationId, tid: u8) -> TxqId {
        self.radio.add_txq(Some(sta), Tid::new(tid).unwrap(), Q::default()).map_err(|e| e.0).expect("txq")
    }

    /// Enqueues `n` frames of `len` bytes on `txq` (no scheduling).
    pub fn enqueue(&mut self, txq: TxqId, n: u32, len: u32) {
        for _ in 0..n {
            let seq = self.next_seq;
            self.next_seq += 1;
            self.radio.enqueue(txq, Pkt { seq, txq, len }, self.now).expect("enqueue");
        }
    }

    /// Enqueues `n` frames and wakes the txq.
    pub fn send(&mut self, txq: TxqId, n: u32, len: u32) -> ScheduleReport {
        self.enqueue(txq, n, len);
        self.radio.wake_tx_queue(txq, self.now).expect("wake")
    }

    /// The hardware fetches what was kicked, time moves `us`, due tx-free events are
    /// reported; then the tx-free path handles up to `budget` of them.
    pub fn step(&mut self, us: u64, budget: u32) -> TxFreePass {
        self.radio.hal().advance(self.now);
        self.now = self.now.add_micros(us);
        self.radio.hal().advance(self.now);
        let pass = self.radio.tx_free(budget, self.now);
        self.collect();
        pass
    }

    /// A reset, as a driver's reset work runs it: tx stopped, DMA emptied, every token
    /// flushed, tx restarted. Returns the descriptors and events the DMA reset dropped,
    /// and the frames flushed.
    pub fn reset(&mut self) -> (usize, u32) {
        self.radio.stop_tx();
        let dropped = self.radio.hal().reset_dma();
        let flushed = self.radio.reset_tokens().expect("nothing else runs: the flush proceeds");
        self.radio.start_tx(self.now).expect("nothing else runs: tx restarts");
        (dropped, flushed)
    }

    pub fn collect(&mut self) {
        self.done.extend(self.radio.hal().take_done());
    }

    /// Runs the hardware and the tx-free path until nothing is in flight or queued.
    pub fn drain(&mut self) {
        for _ in 0..10_000 {
            self.step(1000, 256);
            if self.radio.tokens_in_use() == 0 && self.radio.hal().events_in_flight() == 0 && self.queued_frames() == 0
            {
                break;
            }
        }
        self.collect();
    }

    /// Frames accepted and not yet handed back.
    pub fn queued_frames(&self) -> u64 {
        let s = self.radio.stats();
        s.enqueued - s.completed - s.flushed - s.purged - s.dropped - u64::from(self.radio.tokens_in_use())
    }

    pub fn outcomes(&self, outcome: TxOutcome) -> usize {
        self.done.iter().filter(|(_, r)| r.outcome == outcome).count()
    }

    /// The invariants every test ends with, after a drain: no airtime pending, and
    /// every frame accepted was handed back exactly once (completed, timed out, purged
    /// or dropped), none twice.
    pub fn check_invariants(&mut self) {
        self.collect();
        let s = self.radio.stats();
        assert_eq!(self.radio.scheduler().total_pending_us(), 0, "pending airtime after drain");
        assert_eq!(self.radio.tokens_in_use(), 0, "tokens after drain");
        assert_eq!(s.enqueued, s.completed + s.flushed + s.purged + s.dropped, "no frame lost: {s:?}");
        assert_eq!(self.done.len() as u64, s.enqueued, "every frame handed back to the stack once");
        let mut seqs: Vec<u64> = self.done.iter().map(|(p, _)| p.seq).collect();
        seqs.sort_unstable();
        seqs.dedup();
        assert_eq!(seqs.len(), self.done.len(), "no frame handed back twice");
    }
}
