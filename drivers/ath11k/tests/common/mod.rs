//! A test bench: the adapter over the simulated HAL with FIFO txqs whose contents the
//! bench can see (each txq shares its FIFO with the bench, since the core's table
//! reaches a queue only through a turn).
#![allow(dead_code)]

use airtime_ath11k::hal::TxStatus;
use airtime_ath11k::sim_hal::{SimConfig, SimHal};
use airtime_ath11k::{Ath11k, Ath11kError, CompletionPass, Config, RoundOutcome};
use airtime_sched::traits::Frame;
use airtime_sched::{Enqueue, Instant, StationId, Tid, Txq, TxqId, Weight};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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

/// What a txq shares with the bench: its FIFO, and how many frames its turns pulled in
/// from the intake.
#[derive(Default)]
pub struct Shared {
    pub fifo: Mutex<VecDeque<Pkt>>,
    pub pulled: AtomicU64,
    /// Run once, by the next dequeue that finds a frame, after it took it (a test's way
    /// to act in the middle of a round).
    pub on_dequeue: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl core::fmt::Debug for Shared {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Shared").field("fifo", &self.fifo).field("pulled", &self.pulled).finish_non_exhaustive()
    }
}

/// A plain FIFO txq over a [`Shared`].
#[derive(Debug, Default)]
pub struct Q(pub Arc<Shared>);

impl Q {
    pub fn len(&self) -> usize {
        self.0.fifo.lock().unwrap().len()
    }
}

impl Txq for Q {
    type Frame = Pkt;
    type Error = core::convert::Infallible;
    fn dequeue(&mut self, _: Instant) -> Result<Option<Pkt>, Self::Error> {
        let frame = self.0.fifo.lock().unwrap().pop_front();
        if frame.is_some() {
            let hook = self.0.on_dequeue.lock().unwrap().take();
            if let Some(hook) = hook {
                hook();
            }
        }
        Ok(frame)
    }
    fn peek_len(&self) -> Option<u32> {
        self.0.fifo.lock().unwrap().front().map(|p| p.len)
    }
}

impl Enqueue for Q {
    fn enqueue(&mut self, frame: Pkt, _: Instant) {
        self.0.fifo.lock().unwrap().push_back(frame);
        self.0.pulled.fetch_add(1, Ordering::Relaxed);
    }
}

pub type Radio = Ath11k<SimHal<Pkt>, Q>;

/// A txq the bench made: its id, what it shares, and how many frames were enqueued.
pub struct BenchTxq {
    pub id: TxqId,
    pub shared: Arc<Shared>,
    pub accepted: u64,
}

impl BenchTxq {
    /// Frames in the txq: its FIFO, and its intake (enqueued, not yet pulled).
    pub fn queued(&self) -> u64 {
        let fifo = self.shared.fifo.lock().unwrap().len() as u64;
        fifo + (self.accepted - self.shared.pulled.load(Ordering::Relaxed))
    }
}

pub struct Bench {
    pub radio: Radio,
    pub now: Instant,
    pub next_seq: u64,
    pub txqs: Vec<BenchTxq>,
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
        self.try_txq(sta, tid).expect("txq")
    }

    /// A txq for `sta` on `tid`, or why the adapter refused it.
    pub fn try_txq(&mut self, sta: StationId, tid: u8) -> Result<TxqId, Ath11kError> {
        let shared = Arc::new(Shared::default());
        let tid = Tid::new(tid).map_err(|_| Ath11kError::TxqInUse)?;
        let id = self.radio.add_txq(Some(sta), tid, Q(shared.clone())).map_err(|e| e.0)?;
        self.txqs.push(BenchTxq { id, shared, accepted: 0 });
        Ok(id)
    }

    /// Forgets the bench's txqs the adapter no longer has.
    pub fn forget_removed_txqs(&mut self) {
        let radio = &self.radio;
        self.txqs.retain(|t| radio.scheduler().txq_info(t.id).is_ok());
    }

    fn bench_txq(&mut self, id: TxqId) -> &mut BenchTxq {
        self.txqs.iter_mut().find(|t| t.id == id).expect("a bench txq")
    }

    pub fn enqueue(&mut self, txq: TxqId, n: u32, len: u32) {
        for _ in 0..n {
            let seq = self.next_seq;
            self.next_seq += 1;
            self.radio.enqueue(txq, Pkt { seq, txq, len }, self.now).map_err(|e| e.to_string()).expect("enqueue");
            self.bench_txq(txq).accepted += 1;
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
        self.radio.hal().advance(self.now);
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
                let ids: Vec<_> = self.txqs.iter().map(|t| t.id).collect();
                for id in ids {
                    let _ = self.radio.wake_tx_queue(id, cpu, self.now);
                }
            }
        }
        let acs: Vec<_> = airtime_sched::Ac::ALL
            .iter()
            .map(|ac| {
                let r = self.radio.run_round(*ac, cpu, self.now);
                (
                    *ac,
                    self.radio.scheduler().ac_pending_us(*ac),
                    self.radio.scheduler().phy_limit_us(*ac),
                    r.end,
                    r.txqs_served,
                    r.frames,
                )
            })
            .collect();
        eprintln!("ACs: {acs:?}");
        for t in &self.txqs {
            if t.queued() > 0 {
                eprintln!("{:?}: {:?}", t.id, self.radio.scheduler().txq_info(t.id));
            }
        }
        let per_txq: Vec<(TxqId, u64)> = self.txqs.iter().map(|t| (t.id, t.queued())).filter(|t| t.1 > 0).collect();
        panic!(
            "did not drain: queued {:?}, held {}, outstanding {}, completions {}, blocked {:?}, pending {}, {:?}",
            per_txq,
            self.radio.held_frames(),
            self.radio.outstanding_msdus(),
            self.radio.hal().completions_waiting(),
            self.radio.blocked_acs(),
            self.radio.scheduler().total_pending_us(),
            self.radio.dp_stats()
        );
    }

    /// Frames in the txqs the bench still has.
    pub fn queued(&self) -> u64 {
        self.txqs.iter().map(BenchTxq::queued).sum()
    }

    /// Frames in txq `id` (FIFO and intake).
    pub fn txq_len(&self, id: TxqId) -> u64 {
        self.txqs.iter().find(|t| t.id == id).map_or(0, BenchTxq::queued)
    }

    /// The sequence number at the head of txq `id`'s FIFO.
    pub fn txq_front(&self, id: TxqId) -> Option<u64> {
        let t = self.txqs.iter().find(|t| t.id == id)?;
        t.shared.fifo.lock().unwrap().front().map(|p| p.seq)
    }

    /// Forgets the bench's txqs (after their station's removal took them).
    pub fn forget_txqs(&mut self) {
        self.txqs.clear();
    }

    pub fn idle(&self) -> bool {
        self.queued() == 0
            && self.radio.held_frames() == 0
            && self.radio.outstanding_msdus() == 0
            && self.radio.hal().completions_waiting() == 0
    }

    /// Frames handed back to the stack so far.
    pub fn done_len(&self) -> u64 {
        self.radio.hal().done_len() as u64
    }

    /// Sequence numbers of the frames handed back, in order.
    pub fn done_seqs(&self) -> Vec<u64> {
        self.radio.hal().with_done(|d| d.iter().map(|(p, _)| p.seq).collect())
    }

    /// Statuses of the frames handed back, in order.
    pub fn done_statuses(&self) -> Vec<TxStatus> {
        self.radio.hal().with_done(|d| d.iter().map(|(_, s)| *s).collect())
    }

    /// Every frame ever enqueued is in exactly one place: a txq (FIFO or intake), a
    /// retry slot, the hardware (outstanding MSDUs), or handed back.
    pub fn frames_accounted(&self) -> u64 {
        self.queued()
            + u64::from(self.radio.held_frames())
            + u64::from(self.radio.outstanding_msdus())
            + self.done_len()
    }
}
