//! A test bench: the adapter over the simulated HAL with VecDeque txqs.
#![allow(dead_code)]

use airtime_ath11k::sim_hal::{SimConfig, SimHal};
use airtime_ath11k::{Ath11k, CompletionPass, Config, RoundOutcome};
use airtime_sched::traits::Frame;
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

pub type Radio = Ath11k<SimHal<Pkt>, Q>;

pub struct Bench {
    pub radio: Radio,
    pub now: Instant,
    pub next_seq: u64,
    pub txqs: Vec<TxqId>,
}

impl Bench {
    pub fn new(config: Config, sim: SimConfig) -> Bench {
        let radio = Ath11k::new(SimHal::new(sim), config).expect("radio");
        Bench { radio, now: Instant::ZERO, next_seq: 0, txqs: Vec::new() }
    }

    pub fn default() -> Bench {
        Bench::new(Config::default(), SimConfig::default())
    }

    pub fn station(&mut self, peer: u16, weight: u16) -> StationId {
        self.radio.add_station(peer, Weight::new(weight).unwrap()).expect("station")
    }

    pub fn txq(&mut self, sta: StationId, tid: u8) -> TxqId {
        let id = self.radio.add_txq(Some(sta), Tid::new(tid).unwrap(), Q::default()).map_err(|e| e.0).expect("txq");
        self.txqs.push(id);
        id
    }

    pub fn enqueue(&mut self, txq: TxqId, n: u32, len: u32) {
        for _ in 0..n {
            let seq = self.next_seq;
            self.next_seq += 1;
            self.radio.txq_mut(txq).expect("txq").0.push_back(Pkt { seq, txq, len });
        }
    }

    /// Enqueues `n` frames and wakes the txq from `cpu`.
    pub fn send(&mut self, txq: TxqId, n: u32, len: u32, cpu: u32) -> RoundOutcome {
        self.enqueue(txq, n, len);
        self.radio.wake_tx_queue(txq, cpu, self.now).expect("wake")
    }

    /// Moves time on by `dt_us`, lets the firmware work, then runs one completion
    /// pass and drains airtime reports.
    pub fn step(&mut self, dt_us: u64, budget: u32, cpu: u32) -> CompletionPass {
        self.now = self.now.add_micros(dt_us);
        self.radio.hal_mut().advance(self.now);
        let pass = self.radio.poll_tx_completions(budget, cpu, self.now);
        self.radio.poll_airtime_reports(64, self.now);
        pass
    }

    /// Steps until nothing is queued, held, or in the hardware (bounded).
    pub fn drain(&mut self, budget: u32, cpu: u32) {
        self.drain_by(100, budget, cpu);
    }

    /// [`drain`](Self::drain) in steps of `dt_us`: at least the completion delay when
    /// frames complete one at a time (an MSDU table of one), so that the bound of
    /// 100 000 steps is on frames, not on simulated seconds.
    pub fn drain_by(&mut self, dt_us: u64, budget: u32, cpu: u32) {
        for _ in 0..100_000 {
            if self.idle() {
                return;
            }
            self.step(dt_us, budget, cpu);
            // A held frame or a txq blocked without traffic in flight needs a kick.
            if self.radio.outstanding_msdus() == 0 && self.radio.hal().completions_waiting() == 0 {
                let ids = self.txqs.clone();
                for id in ids {
                    let _ = self.radio.wake_tx_queue(id, cpu, self.now);
                }
            }
        }
        panic!("did not drain");
    }

    pub fn queued(&self) -> u64 {
        self.txqs.iter().filter_map(|id| self.radio.txq(*id)).map(|q| q.0.len() as u64).sum()
    }

    pub fn idle(&self) -> bool {
        self.queued() == 0
            && self.radio.held_frames() == 0
            && self.radio.outstanding_msdus() == 0
            && self.radio.hal().completions_waiting() == 0
    }

    /// Every frame ever enqueued is in exactly one place: a txq, a retry slot, the
    /// hardware (outstanding MSDUs), or handed back.
    pub fn frames_accounted(&self) -> u64 {
        self.queued()
            + u64::from(self.radio.held_frames())
            + u64::from(self.radio.outstanding_msdus())
            + self.radio.hal().done().len() as u64
    }
}
