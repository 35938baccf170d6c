//! The end-to-end two-thread workload: the scheduler *and* the txq work, on two CPUs.
//!
//! Where [`TwoContexts`](crate::workload::TwoContexts) measures the scheduler alone
//! (its txqs are counters), this workload moves real frames through real FQ-CoDel txqs
//! ([`FqCodelTxq`], the same queue code in both implementations):
//!
//! * the **wake context** enqueues a burst of [`BURST`] frames, one per station in turn
//!   over `S` stations, and runs a round on BE: after every burst, or only when the ring
//!   is empty, leaving the rounds to the completions otherwise ([`WakeRounds`], the
//!   workload's two shapes);
//! * the **completion context** reaps up to [`REAP_BUDGET`] completed frames from the
//!   ring (a NAPI budget), releases their charges, registers each station's airtime once
//!   per pass (as PPDU statistics report it), and runs rounds on BE to refill what it
//!   reaped: until as many frames as it reaped are sent, the ring is full or a round
//!   sends nothing (a round serves each txq once, so one round may send fewer). It runs
//!   rounds only after completions (it is not a poller), except at the end, when it
//!   sends what is left; the wake context runs an extra round when it waits for room
//!   with the ring empty.
//!
//! A round takes txqs from the scheduler and, for each, dequeues up to [`TURN_FRAMES`]
//! frames while the station passes its AQL check and the ring has room, charging each
//! frame and pushing it into the ring.
//!
//! **Rounds.** mac80211 forbids a driver concurrent scheduling rounds ("The driver must
//! not call multiple TXQ scheduling rounds concurrently", `ieee80211_txq_schedule_start`):
//! ath10k takes a per-AC lock around the round in its `wake_tx_queue` op
//! (`queue_lock[ac]`), the generic `ieee80211_handle_wake_tx_queue` a radio-wide one,
//! and mt76 runs every round from one tx worker. Ours allows concurrent rounds. Each
//! radio takes its rounds' discipline as a parameter ([`rounds`]): both headline arms,
//! [`OursRadio`] and [`BaselineRadio`], gate them the same way (one context runs the
//! rounds, another that wants one leaves a note, [`RoundGate`]: mt76's worker without
//! the worker, at most [`GATE_ROUNDS`] rounds per call, its own included);
//! [`OursConcurrent`] runs them at once, and [`BaselineSpin`] behind a spinlock, as
//! the generic handler does. [`BaselineConcurrentRounds`] is the baseline as this
//! benchmark ran it before, with the concurrent rounds mainline forbids, kept for
//! comparison.
//!
//! The two implementations differ only in the scheduler+txq layer:
//!
//! * [`OursRadio`]: a [`TxqTable`] of FQ-CoDel txqs. Enqueue is
//!   [`TxqTable::enqueue`] (FQ-CoDel's enqueue straight into the txq's queue when no
//!   other context holds it, else a lock-free intake per txq; then a wake); a round is
//!   [`TxqTable::run_round`], where the scheduler's turn is the only one that dequeues
//!   from a txq's queue, holding only that txq's queue lock. A pass's charges go back together with
//!   `Scheduler::release_batch`.
//! * [`BaselineRadio`]: built as mac80211 builds it. The same FQ-CoDel txqs, all behind
//!   one radio-wide lock (`fq->lock`, taken by `ieee80211_txq_enqueue` and
//!   `ieee80211_tx_dequeue` around the FQ state), and the mainline scheduler of
//!   [`baseline`](crate::baseline) (the per-AC `active_txq_lock` around schedule start,
//!   next and return). Charges are released frame by frame, as
//!   `ieee80211_sta_update_pending_airtime` does (mac80211 has no batch release). As
//!   mainline's `txq_has_queue` reads the tin's backlog without the lock, the return
//!   reads a per-txq backlog counter kept beside the queue, not the queue.
//!
//! **The ring** ([`HwRing`], a [`TxRing`]) is one bounded ring per AC shared by both
//! contexts, built as a NIC's source ring and its completion ring are: both contexts
//! push into it (both run rounds) behind its producer lock, as ath11k has one lock per
//! TCL ring, and the completion context reaps from it without that lock, as completions
//! come back on a ring of their own. An SPSC ring per context would need a second ring
//! the completion context also reaps, which an ath11k-like radio (one TCL ring per AC)
//! does not have; and a ring that locks itself is one of the two shapes
//! `TxqTable::run_round` is written for (with a ring per context). Both implementations
//! use the same ring type, so the ring's cost is the same in both and the difference is
//! the scheduler+txq layer. Its room check takes no lock (as a driver reads the ring's
//! head and tail pointers); a push after a positive check is always taken (the ring has
//! slack for the other context's concurrent push), so neither implementation needs a
//! requeue path.
//!
//! **Time** is a logical clock the wake context advances by 1 us per burst (as
//! [`TwoContexts`](crate::workload::TwoContexts) does), read by both contexts: CoDel and
//! the schedulers' activity windows see the same times in both implementations on every
//! machine (under valgrind too), so neither drops a frame for sojourn time. The wake
//! context keeps at most `RING_FRAMES + S * DEPTH` frames outstanding (enqueued, not yet
//! completed), so queues cannot grow without bound. Whether stations are backlogged
//! depends on the machine, and the example prints it ([`E2eCounts::frames_per_turn`]).
//! On the guests that moved a line between their CPUs in 10 to 200 ns, the rounds of
//! both contexts kept up with the wake context at 16 stations and more. A txq's turn then
//! usually sends the one frame its last wake brought (about 1 frame per turn there, about
//! 3 at 4 stations), and each frame pays a whole wake, listing, turn and return, the
//! scheduler's costliest case per frame in both implementations. On a guest moving a
//! line in 250 ns, the completion context is the slower one at 4 and 16 stations: the
//! wake context waits for the cap, and a turn sends 15 to 16 frames.

use crate::baseline::{Baseline, BaselineCharge};
use crate::padded::Padded;
use crate::spinlock::SpinLock;
use crate::tx_ring::TxRing;
use crate::workload::{AC, bench_rate, frame_airtime_us};
use airtime_est::Rate;
use airtime_sched::driver_loop::StationTable;
use airtime_sched::fq_codel::{FqCodelConfig, FqCodelStats, FqCodelTxq, FqFrame};
use airtime_sched::traits::{PushError, RingErrorKind, StationErrorKind};
use airtime_sched::txqs::TurnBudget;
use airtime_sched::{
    Ac, Charge, Config, Frame, Instant, Ring, RoundGate, Scheduler, Station, StationId, Tid, TxqId, TxqTable, Weight,
};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant as WallClock};

/// Frames the wake context enqueues before each of its rounds.
pub const BURST: usize = 16;
/// Completions the completion context reaps per pass (a NAPI budget).
pub const REAP_BUDGET: usize = 64;
/// Frames one txq may send per turn by default (the per-turn budget; ath10k pushes up to
/// 16). [`Radio::with_turn_frames`] takes another: a host-aggregating driver's turn is an
/// A-MPDU of up to 64.
pub const TURN_FRAMES: u32 = 16;
/// Rounds a context runs at most, its own included, each time it runs them through the
/// gate ([`rounds::GATED`]) before it goes back to its own work.
pub const GATE_ROUNDS: u32 = 4;
/// Descriptors in the ring.
pub const RING_FRAMES: usize = 256;
/// Frames outstanding per station (queued in its txq) on top of the ring's worth.
pub const DEPTH: usize = 32;
/// Flows per station (distinct flow hashes, so FQ's DRR has work to do).
pub const FLOWS_PER_STATION: u32 = 4;

/// A frame: its station (index) and its flow's hash; 1500 bytes on the air.
#[derive(Debug)]
pub struct Pkt {
    /// The station's index (0..S), as a driver's frame carries its station.
    pub sta: u32,
    /// The flow hash FQ files it under.
    pub flow: u32,
}

impl Pkt {
    /// The `seq`-th frame for station `sta`: its flow is `seq % FLOWS_PER_STATION`.
    #[inline]
    pub fn new(sta: u32, seq: u32) -> Pkt {
        let flow = sta.wrapping_mul(FLOWS_PER_STATION).wrapping_add(seq % FLOWS_PER_STATION);
        // A well-spread hash, as skb_get_hash gives.
        Pkt { sta, flow: flow.wrapping_add(1).wrapping_mul(0x9E37_79B9) }
    }
}

impl Frame for Pkt {
    #[inline]
    fn len_bytes(&self) -> u32 {
        1500
    }
}

impl FqFrame for Pkt {
    #[inline]
    fn flow_hash(&self) -> u32 {
        self.flow
    }
}

/// The FQ-CoDel parameters of every txq: mac80211's, with dropped frames counted and
/// released rather than kept (nothing drains them during a run).
pub fn fq_config() -> FqCodelConfig {
    let mut c = FqCodelConfig::MAC80211;
    c.keep_dropped = false;
    c
}

/// The hardware ring of BE: a [`TxRing`] of descriptors (a frame and its charge) with
/// room for [`RING_FRAMES`]. See the [module docs](self).
pub type HwRing<C> = TxRing<(Pkt, Option<C>)>;

/// What a completion pass keeps until its end: the charges (for a batch release) and
/// each station's airtime (registered once per pass).
#[derive(Debug)]
pub struct Pass<C> {
    charges: Vec<C>,
    airtime_us: Vec<u32>,
    touched: Vec<u32>,
    done: Vec<(Pkt, Option<C>)>,
}

impl<C> Pass<C> {
    fn new(stations: usize) -> Self {
        Pass {
            charges: Vec::with_capacity(REAP_BUDGET),
            airtime_us: vec![0; stations],
            touched: Vec::with_capacity(REAP_BUDGET),
            done: Vec::with_capacity(REAP_BUDGET),
        }
    }

    /// Files a completed frame's airtime under its station.
    #[inline]
    fn add_airtime(&mut self, sta: u32, us: u32) {
        let a = &mut self.airtime_us[sta as usize];
        if *a == 0 {
            self.touched.push(sta);
        }
        *a += us;
    }
}

/// What one round sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sent {
    /// Frames pushed into the ring.
    pub frames: u32,
    /// Txqs served (turns), whether or not they sent anything.
    pub turns: u32,
}

/// How a radio's two contexts share its rounds on BE (the `ROUNDS` parameter of
/// [`Ours`] and [`MacRadio`]).
pub mod rounds {
    /// Both contexts run rounds at once whenever they want one: ours allows it (each
    /// round is `&self`); mac80211 forbids it (`ieee80211_txq_schedule_start`).
    pub const CONCURRENT: u8 = 0;
    /// One round at a time, behind a spinlock a context waits on: the generic
    /// `ieee80211_handle_wake_tx_queue`'s radio-wide lock (ath10k's per-AC
    /// `queue_lock[ac]` in its `wake_tx_queue` op).
    pub const SPIN: u8 = 1;
    /// One context runs the rounds; one that finds a round running leaves a note and
    /// returns, and the runner runs once more for it (or, its budget spent, leaves it to
    /// the next call): [`RoundGate`], as mt76 runs every
    /// round from one tx worker.
    ///
    /// [`RoundGate`]: airtime_sched::RoundGate
    pub const GATED: u8 = 2;
}

/// Runs `round` as the discipline `ROUNDS` says, with `lock` and `gate` the radio's.
#[inline]
fn round_as<const ROUNDS: u8>(lock: &SpinLock<()>, gate: &RoundGate, mut round: impl FnMut() -> Sent) -> Sent {
    match ROUNDS {
        rounds::CONCURRENT => round(),
        rounds::SPIN => {
            let _held = lock.lock();
            round()
        }
        _ => {
            let mut sent = Sent::default();
            // Handed off: the runner sends this context's frames, and counts them.
            // Deferred: a later call serves the notes. While the ring holds frames the
            // completion context reaps them and calls again; with it empty the wake
            // context calls after its next burst (or while it waits for room); once the
            // wake context is done, the completion context calls until nothing is left.
            let _ = gate.run(AC, GATE_ROUNDS, || {
                let s = round();
                sent.frames += s.frames;
                sent.turns += s.turns;
            });
            sent
        }
    }
}

/// Where every frame enqueued ended up, once a run is over and the radio taken apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Leftovers {
    /// Frames FQ-CoDel dropped (CoDel, limits, purges), over all txqs.
    pub dropped: u64,
    /// Frames still queued (in a queue, an intake or a retry slot).
    pub queued: u64,
    /// Airtime still pending in the scheduler, us.
    pub pending_us: u64,
    /// Airtime registered in the scheduler over all stations, us.
    pub registered_us: u64,
}

fn fq_drops(s: &FqCodelStats) -> u64 {
    s.codel_drops + s.overlimit_drops + s.overmemory_drops + s.alloc_drops + s.purged
}

/// One radio as the end-to-end workload drives it: ours or the baseline.
pub trait Radio: Sync + Sized {
    /// A charge as the ring carries it.
    type Charge: Send;
    /// `ours` or `baseline`.
    const NAME: &'static str;
    /// A radio with `stations` stations of weight 256, one BE FQ-CoDel txq each, whose
    /// turns send up to [`TURN_FRAMES`] frames.
    fn new(stations: usize) -> Self {
        Self::with_turn_frames(stations, TURN_FRAMES)
    }
    /// [`new`](Self::new), with turns of up to `turn_frames` frames (at least 1).
    fn with_turn_frames(stations: usize, turn_frames: u32) -> Self;
    /// Stations.
    fn stations(&self) -> usize;
    /// The ring.
    fn ring(&self) -> &HwRing<Self::Charge>;
    /// Enqueues `pkt` on station `pkt.sta`'s txq and wakes it.
    fn enqueue(&self, pkt: Pkt, now: u64);
    /// One round on BE into the ring: the frames pushed and the turns they took.
    fn round(&self, now: u64) -> Sent;
    /// Completes the frames in `pass.done`: releases their charges, registers airtime.
    fn complete(&self, pass: &mut Pass<Self::Charge>, now: u64);
    /// Takes the radio apart after a run and says where the frames not completed are.
    fn leftovers(self) -> Leftovers;
}

/// A station of ours as the driver keeps it: its handle and the price of a frame.
#[derive(Debug)]
pub struct Peer {
    id: StationId,
    airtime_us: u32,
}

impl Station for Peer {
    type Error = StationErrorKind;

    #[inline]
    fn station_id(&self) -> StationId {
        self.id
    }

    fn last_tx_rate(&self) -> Option<Rate> {
        Some(bench_rate())
    }

    #[inline]
    fn expected_airtime_us(&self, _frame_len: u32, _ac: Ac) -> Result<u32, StationErrorKind> {
        // Every frame is 1500 bytes at the bench rate: priced once, at setup.
        Ok(self.airtime_us)
    }
}

/// Our stations, by `StationId::index` (stations are added in order into an empty
/// scheduler, so index i is station i).
#[derive(Debug)]
pub struct Peers(Vec<Peer>);

impl StationTable for Peers {
    type Station = Peer;

    #[inline]
    fn station(&self, id: StationId) -> Option<&Peer> {
        self.0.get(id.index()).filter(|p| p.id == id)
    }
}

/// One context's access to the shared ring, as our round loop pushes into it.
struct OursRing<'a>(&'a HwRing<Charge>);

impl Ring for OursRing<'_> {
    type Frame = Pkt;
    type Error = RingErrorKind;

    #[inline]
    fn has_room(&self, _ac: Ac) -> bool {
        self.0.has_room()
    }

    #[inline]
    fn push(&mut self, frame: Pkt, charge: Option<Charge>) -> Result<(), PushError<Pkt, RingErrorKind>> {
        self.0.push((frame, charge));
        Ok(())
    }
}

/// Ours, its rounds gated ([`rounds::GATED`]): the headline arm.
pub type OursRadio = Ours<{ rounds::GATED }>;
/// Ours, both contexts running rounds at once ([`rounds::CONCURRENT`]).
pub type OursConcurrent = Ours<{ rounds::CONCURRENT }>;

/// Ours: a [`TxqTable`] of FQ-CoDel txqs, its rounds shared as `ROUNDS` says
/// ([`rounds`]).
pub struct Ours<const ROUNDS: u8> {
    table: TxqTable<FqCodelTxq<Pkt>>,
    peers: Peers,
    txqs: Vec<TxqId>,
    ring: HwRing<Charge>,
    round_lock: Padded<SpinLock<()>>,
    gate: RoundGate,
    turn: TurnBudget,
}

impl<const ROUNDS: u8> Ours<ROUNDS> {
    /// The txq table.
    pub fn table(&self) -> &TxqTable<FqCodelTxq<Pkt>> {
        &self.table
    }
}

impl<const ROUNDS: u8> Radio for Ours<ROUNDS> {
    type Charge = Charge;
    const NAME: &'static str = if ROUNDS == rounds::GATED { "ours" } else { "ours, concurrent rounds" };

    fn with_turn_frames(stations: usize, turn_frames: u32) -> Self {
        let n = u16::try_from(stations.max(1)).unwrap_or(Config::MAX_STATIONS).min(Config::MAX_STATIONS);
        let mut config = Config::default();
        config.max_stations = n;
        config.max_txqs = n;
        let sched = Scheduler::new(config).unwrap_or_else(|e| panic!("configuration refused: {e}"));
        let table = TxqTable::new(sched);
        let airtime_us = frame_airtime_us();
        let mut peers = Vec::new();
        let mut txqs = Vec::new();
        for _ in 0..n {
            let id = table.scheduler().add_station(Weight::DEFAULT).unwrap_or_else(|e| panic!("add_station: {e}"));
            let queue = FqCodelTxq::new(fq_config()).unwrap_or_else(|e| panic!("fq-codel: {e:?}"));
            let txq = table.add_txq(Some(id), Tid::BE, queue).unwrap_or_else(|e| panic!("add_txq: {e:?}"));
            assert_eq!(id.index(), peers.len(), "stations are numbered in order");
            peers.push(Peer { id, airtime_us });
            txqs.push(txq);
        }
        Ours {
            table,
            peers: Peers(peers),
            txqs,
            ring: TxRing::new(RING_FRAMES),
            round_lock: Padded(SpinLock::new(())),
            gate: RoundGate::new(),
            turn: TurnBudget::frames(turn_frames.max(1)),
        }
    }

    fn stations(&self) -> usize {
        self.txqs.len()
    }

    fn ring(&self) -> &HwRing<Charge> {
        &self.ring
    }

    #[inline]
    fn enqueue(&self, pkt: Pkt, now: u64) {
        let txq = self.txqs[pkt.sta as usize];
        if let Err(e) = self.table.enqueue(txq, pkt, Instant::from_micros(now)) {
            panic!("enqueue refused: {e}");
        }
    }

    #[inline]
    fn round(&self, now: u64) -> Sent {
        round_as::<ROUNDS>(&self.round_lock, &self.gate, || {
            let report =
                self.table.run_round(AC, Instant::from_micros(now), &self.peers, &mut OursRing(&self.ring), self.turn);
            // The ring takes every push, so nothing is refused.
            debug_assert!(report.refused.is_none());
            Sent { frames: report.frames, turns: report.txqs_served }
        })
    }

    #[inline]
    fn complete(&self, pass: &mut Pass<Charge>, now: u64) {
        let airtime_us = frame_airtime_us();
        let mut done = core::mem::take(&mut pass.done);
        for (pkt, charge) in done.drain(..) {
            if let Some(c) = charge {
                pass.charges.push(c);
            }
            pass.add_airtime(pkt.sta, airtime_us);
        }
        pass.done = done;
        let sched = self.table.scheduler();
        let _ = sched.release_batch(pass.charges.drain(..));
        let now = Instant::from_micros(now);
        for sta in pass.touched.drain(..) {
            let us = core::mem::take(&mut pass.airtime_us[sta as usize]);
            let _ = sched.register_airtime(self.peers.0[sta as usize].id, AC, us, 0, now);
        }
    }

    fn leftovers(self) -> Leftovers {
        let sched = self.table.scheduler();
        let mut out = Leftovers {
            pending_us: u64::from(sched.total_pending_us()),
            registered_us: self.peers.0.iter().map(|p| sched.station_airtime(p.id).map_or(0, |a| a.tx_us)).sum(),
            ..Leftovers::default()
        };
        for &txq in &self.txqs {
            let _ = self.table.remove_txq(txq);
        }
        while let Some(removed) = self.table.take_removed() {
            out.queued += removed.queue.backlog_packets() + removed.intake.count() as u64;
            out.queued += u64::from(removed.retry.is_some());
            out.dropped += fq_drops(&removed.queue.stats());
        }
        out
    }
}

/// The baseline, its rounds gated as ours are ([`rounds::GATED`], mt76's single tx
/// worker): the headline arm.
pub type BaselineRadio = MacRadio<{ rounds::GATED }>;
/// The baseline, its rounds behind a spinlock ([`rounds::SPIN`], the generic handler's
/// way).
pub type BaselineSpin = MacRadio<{ rounds::SPIN }>;
/// The baseline with both contexts running rounds at once ([`rounds::CONCURRENT`]), which
/// `ieee80211_txq_schedule_start` forbids (its round numbers, and the single server of a
/// txq that a wake re-lists while it is held, are then nobody's job): how this
/// benchmark's baseline ran before its rounds were serialized, kept for comparison.
pub type BaselineConcurrentRounds = MacRadio<{ rounds::CONCURRENT }>;

/// The baseline: mac80211's design (see the [module docs](self)), its rounds shared as
/// `ROUNDS` says ([`rounds`]).
pub struct MacRadio<const ROUNDS: u8> {
    sched: Baseline,
    /// The driver's lock around a round on BE ([`rounds::SPIN`]).
    round_lock: Padded<SpinLock<()>>,
    /// The driver's gate ([`rounds::GATED`]).
    gate: RoundGate,
    /// `fq->lock` and the FQ state of every txq of the radio.
    fq: Padded<SpinLock<Vec<FqCodelTxq<Pkt>>>>,
    /// Each txq's backlog, written under `fq` and read without it (`txq_has_queue`).
    backlog: Vec<Padded<AtomicU32>>,
    ring: HwRing<BaselineCharge>,
    airtime_us: u32,
    /// Frames one txq may send per turn.
    turn_frames: u32,
}

impl<const ROUNDS: u8> MacRadio<ROUNDS> {
    /// The scheduler.
    pub fn scheduler(&self) -> &Baseline {
        &self.sched
    }

    /// `ieee80211_tx_dequeue`: the txq's next frame, under `fq->lock`.
    #[inline]
    fn tx_dequeue(&self, t: usize, now: u64) -> Option<Pkt> {
        use airtime_sched::Txq as _;
        let mut fq = self.fq.lock();
        let q = &mut fq[t];
        let pkt = match q.dequeue(Instant::from_micros(now)) {
            Ok(p) => p,
            Err(e) => match e {},
        };
        self.backlog[t].store(q.backlog_packets() as u32, Ordering::Relaxed);
        pkt
    }

    /// A driver's round as ath10k and mt76 run it: `ieee80211_txq_schedule_start`,
    /// then `ieee80211_next_txq`; per txq, `ieee80211_txq_airtime_check` and
    /// `ieee80211_tx_dequeue` (which charges the frame) up to the turn budget; then
    /// `ieee80211_return_txq`.
    #[inline]
    fn mac80211_round(&self, now: u64) -> Sent {
        let s = &self.sched;
        let mut sent = Sent::default();
        if !s.schedule_start(AC) {
            return sent;
        }
        while self.ring.has_room() {
            let Some(held) = s.next_txq(AC) else { break };
            sent.turns += 1;
            let t = held.txq as usize;
            let mut frames = 0;
            while frames < self.turn_frames && self.ring.has_room() && s.airtime_check(held.txq) {
                let Some(pkt) = self.tx_dequeue(t, now) else { break };
                let charge = s.charge(held.txq, AC, self.airtime_us);
                self.ring.push((pkt, charge));
                frames += 1;
            }
            s.schedule_txq(held.txq, false, self.backlog[t].load(Ordering::Relaxed) > 0, now);
            sent.frames += frames;
        }
        sent
    }
}

impl<const ROUNDS: u8> Radio for MacRadio<ROUNDS> {
    type Charge = BaselineCharge;
    const NAME: &'static str = match ROUNDS {
        rounds::GATED => "baseline",
        rounds::SPIN => "baseline, rounds behind a spinlock",
        _ => "baseline, concurrent rounds",
    };

    fn with_turn_frames(stations: usize, turn_frames: u32) -> Self {
        let n = stations.max(1);
        let mut sched = Baseline::with_capacity(n, n);
        let mut queues = Vec::with_capacity(n);
        for i in 0..n {
            let sta = sched.add_station(256).unwrap_or_else(|| panic!("baseline: no room for station {i}"));
            let txq = sched.add_txq(Some(sta), Tid::BE).unwrap_or_else(|| panic!("baseline: no room for txq {i}"));
            assert_eq!((sta as usize, txq as usize), (i, i));
            queues.push(FqCodelTxq::new(fq_config()).unwrap_or_else(|e| panic!("fq-codel: {e:?}")));
        }
        MacRadio {
            sched,
            round_lock: Padded(SpinLock::new(())),
            gate: RoundGate::new(),
            fq: Padded(SpinLock::new(queues)),
            backlog: (0..n).map(|_| Padded(AtomicU32::new(0))).collect(),
            ring: TxRing::new(RING_FRAMES),
            airtime_us: frame_airtime_us(),
            turn_frames: turn_frames.max(1),
        }
    }

    fn stations(&self) -> usize {
        self.backlog.len()
    }

    fn ring(&self) -> &HwRing<BaselineCharge> {
        &self.ring
    }

    /// `ieee80211_queue_skb`: `fq->lock` around the FQ enqueue, then
    /// `ieee80211_schedule_txq` (the AC lock).
    #[inline]
    fn enqueue(&self, pkt: Pkt, now: u64) {
        let t = pkt.sta as usize;
        {
            let mut fq = self.fq.lock();
            let q = &mut fq[t];
            let _ = q.enqueue(pkt, Instant::from_micros(now));
            self.backlog[t].store(q.backlog_packets() as u32, Ordering::Relaxed);
        }
        self.sched.schedule_txq(t as u32, true, true, now);
    }

    /// A round, shared between the contexts as `ROUNDS` says.
    #[inline]
    fn round(&self, now: u64) -> Sent {
        round_as::<ROUNDS>(&self.round_lock, &self.gate, || self.mac80211_round(now))
    }

    #[inline]
    fn complete(&self, pass: &mut Pass<BaselineCharge>, now: u64) {
        for (pkt, charge) in pass.done.drain(..) {
            if let Some(c) = charge {
                self.sched.release(c);
            }
            let a = &mut pass.airtime_us[pkt.sta as usize];
            if *a == 0 {
                pass.touched.push(pkt.sta);
            }
            *a += self.airtime_us;
        }
        for sta in pass.touched.drain(..) {
            let us = core::mem::take(&mut pass.airtime_us[sta as usize]);
            self.sched.register_airtime(sta, AC, us, 0, now);
        }
    }

    fn leftovers(self) -> Leftovers {
        let n = self.stations();
        let mut out = Leftovers {
            pending_us: u64::try_from(self.sched.total_pending()).unwrap_or(u64::MAX),
            registered_us: (0..n as u32).map(|s| self.sched.tx_airtime(s, AC)).sum(),
            ..Leftovers::default()
        };
        for q in self.fq.0.into_inner() {
            out.queued += q.backlog_packets();
            out.dropped += fq_drops(&q.stats());
        }
        out
    }
}

/// What one run did.
#[derive(Clone, Copy, Debug, Default)]
pub struct E2eCounts {
    /// Wall time from both contexts ready to the last completion.
    pub elapsed: Duration,
    /// Frames enqueued (by the wake context).
    pub enqueued: u64,
    /// Frames completed (reaped, released, registered).
    pub completed: u64,
    /// Rounds the wake context asked for (a gated call counts one, whether it ran rounds or handed off).
    pub wake_rounds: u64,
    /// Frames the wake context's rounds sent.
    pub wake_sent: u64,
    /// Rounds the completion context asked for (counted as `wake_rounds` is).
    pub completion_rounds: u64,
    /// Frames the completion context's rounds sent.
    pub completion_sent: u64,
    /// Turns (txqs served) in both contexts' rounds: `completed / turns` is how many
    /// frames a txq had to send when its turn came.
    pub turns: u64,
    /// Bursts the wake context had to wait for (the outstanding cap was reached): the
    /// completion side paced the run.
    pub wake_waits: u64,
    /// Completion passes that found the ring empty: the wake side paced the run.
    pub completion_idle: u64,
}

impl E2eCounts {
    /// Completed frames per second.
    pub fn frames_per_sec(&self) -> f64 {
        self.completed as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Frames sent per turn, over both contexts.
    pub fn frames_per_turn(&self) -> f64 {
        (self.wake_sent + self.completion_sent) as f64 / self.turns.max(1) as f64
    }
}

/// Waits a little for the other context. Pinned to two CPUs, it only spins: the other
/// context runs on the other CPU, so a yield could only hand this CPU to another
/// process, and on a loaded machine for a whole time slice, during which the other
/// context waits for this one (runs then measure the machine's load, and charge the
/// faster implementation, which waits more often, the most). Unpinned (perhaps both on
/// one CPU, or under valgrind), it spins a little, then yields.
#[inline]
fn backoff(spins: u32, pinned: bool) -> u32 {
    if pinned || spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
    spins.saturating_add(1)
}

/// When the wake context runs a round after its burst (the workload's two shapes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakeRounds {
    /// After every burst, as mac80211's generic `ieee80211_handle_wake_tx_queue` runs a
    /// round on every wake.
    EveryBurst,
    /// Only when the ring is empty: while it holds frames, their completions start the
    /// rounds that refill it (the completion context runs one after every pass that
    /// reaped), so the wake context only enqueues and wakes. A driver whose tx-status
    /// path refills the ring works this way (mt76 runs its rounds from one tx worker,
    /// which its wake path only schedules; the ath11k AQL series drives rounds from tx
    /// completion).
    WhenRingEmpty,
}

impl WakeRounds {
    /// The shape's name in the benchmark's output.
    pub const fn name(self) -> &'static str {
        match self {
            WakeRounds::EveryBurst => "wake runs a round after every burst",
            WakeRounds::WhenRingEmpty => "wake runs a round only with the ring empty",
        }
    }
}

/// Runs both contexts on `radio`: the wake context runs `rounds` bursts, each followed
/// by a round as `wake_rounds` says; the completion context runs until the wake context
/// is done and nothing is left to send. `cpus` pins the wake and the completion context
/// (see [`affinity`](crate::affinity)).
pub fn run<R: Radio>(radio: &R, rounds: u64, cpus: Option<[usize; 2]>, wake_rounds: WakeRounds) -> E2eCounts {
    let n = radio.stations();
    let cap = (RING_FRAMES + n * DEPTH) as u64;
    let clock = Padded(AtomicU64::new(1_000_000));
    let completed = Padded(AtomicU64::new(0));
    let wake_done = AtomicBool::new(false);
    let ready = Barrier::new(3);
    let pinned = cpus.is_some();
    let pin = |which: usize| {
        if let Some(c) = cpus {
            let _ = crate::affinity::pin_current_thread(c[which]);
        }
    };
    std::thread::scope(|scope| {
        let wake = scope.spawn(|| {
            pin(0);
            ready.wait();
            let t0 = WallClock::now();
            let mut now = clock.load(Ordering::Relaxed);
            let (mut enqueued, mut sent, mut turns, mut cursor, mut seq, mut waits) =
                (0u64, 0u64, 0u64, 0usize, 0u32, 0u64);
            let mut rounds_run = 0u64;
            let mut count = |s: Sent| {
                rounds_run += 1;
                sent += u64::from(s.frames);
                turns += u64::from(s.turns);
            };
            for _ in 0..rounds {
                let mut spins = 0;
                if enqueued + BURST as u64 > completed.load(Ordering::Relaxed) + cap {
                    waits += 1;
                }
                while enqueued + BURST as u64 > completed.load(Ordering::Relaxed) + cap {
                    // An empty ring with frames outstanding: they wait in the txqs, and
                    // only a round sends them (the completion context runs rounds only
                    // after completions).
                    if radio.ring().is_empty() {
                        count(radio.round(now));
                    }
                    spins = backoff(spins, pinned);
                }
                now += 1;
                clock.store(now, Ordering::Relaxed);
                for _ in 0..BURST {
                    radio.enqueue(Pkt::new(cursor as u32, seq), now);
                    cursor += 1;
                    if cursor == n {
                        cursor = 0;
                        seq = seq.wrapping_add(1);
                    }
                }
                enqueued += BURST as u64;
                if wake_rounds == WakeRounds::EveryBurst || radio.ring().is_empty() {
                    count(radio.round(now));
                }
            }
            // Release: everything this context did comes before the flag is seen.
            wake_done.store(true, Ordering::Release);
            (t0, enqueued, sent, turns, waits, rounds_run)
        });
        let completion = scope.spawn(|| {
            pin(1);
            ready.wait();
            let mut pass = Pass::new(n);
            let (mut done, mut rounds, mut sent, mut turns, mut idle, mut idle_passes) =
                (0u64, 0u64, 0u64, 0u64, 0u32, 0u64);
            loop {
                // Acquire: pairs with the wake context's Release of its flag.
                let finished = wake_done.load(Ordering::Acquire);
                let now = clock.load(Ordering::Relaxed);
                let reaped = radio.ring().reap(&mut pass.done, REAP_BUDGET);
                if reaped > 0 {
                    radio.complete(&mut pass, now);
                    done += reaped as u64;
                    completed.store(done, Ordering::Relaxed);
                }
                // A round after completions, to refill what was reaped (as a tx-status
                // handler does); once the wake context is done, also when idle, to send
                // what is left.
                if reaped > 0 || finished {
                    // Rounds until as many frames as were reaped are sent back (a round
                    // serves a txq once, so one round may send less), the ring is full,
                    // or a round finds nothing to send.
                    let mut pushed = 0u32;
                    loop {
                        rounds += 1;
                        let s = radio.round(now);
                        let p = s.frames;
                        pushed += p;
                        turns += u64::from(s.turns);
                        if p == 0 || pushed as usize >= reaped || !radio.ring().has_room() {
                            break;
                        }
                    }
                    sent += u64::from(pushed);
                    // Alone once the wake context is done: an empty ring and a round
                    // that found nothing to send mean every frame has completed.
                    if finished && reaped == 0 && pushed == 0 && radio.ring().is_empty() {
                        break;
                    }
                }
                if reaped == 0 {
                    idle_passes += 1;
                    idle = backoff(idle, pinned);
                } else {
                    idle = 0;
                }
            }
            (done, rounds, sent, turns, idle_passes, WallClock::now())
        });
        ready.wait();
        let (completed, completion_rounds, completion_sent, completion_turns, completion_idle, end) =
            completion.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        let (t0, enqueued, wake_sent, wake_turns, wake_waits, wake_rounds) =
            wake.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        E2eCounts {
            elapsed: end.saturating_duration_since(t0),
            enqueued,
            completed,
            wake_rounds,
            wake_sent,
            completion_rounds,
            completion_sent,
            turns: wake_turns + completion_turns,
            wake_waits,
            completion_idle,
        }
    })
}

/// Both contexts' work on one thread, interleaved (a burst and a round of the wake
/// context, then a completion pass and its round), with no waiting: for instruction
/// counts under valgrind, where two threads would add their spin-waits. Returns the
/// frames enqueued; the radio is left with nothing queued or in the ring.
pub fn run_serial<R: Radio>(radio: &R, rounds: u64) -> u64 {
    let n = radio.stations();
    let mut pass = Pass::new(n);
    let (mut now, mut cursor, mut seq) = (1_000_000u64, 0usize, 0u32);
    let complete = |now: u64, pass: &mut Pass<R::Charge>| {
        let reaped = radio.ring().reap(&mut pass.done, REAP_BUDGET);
        if reaped > 0 {
            radio.complete(pass, now);
        }
        reaped as u64 + u64::from(radio.round(now).frames)
    };
    for _ in 0..rounds {
        now += 1;
        for _ in 0..BURST {
            radio.enqueue(Pkt::new(cursor as u32, seq), now);
            cursor += 1;
            if cursor == n {
                cursor = 0;
                seq = seq.wrapping_add(1);
            }
        }
        let _ = radio.round(now);
        let _ = complete(now, &mut pass);
    }
    // Drain.
    while complete(now, &mut pass) > 0 || !radio.ring().is_empty() {}
    rounds * BURST as u64
}

/// The first two CPUs this process may use, for the wake and completion contexts.
pub fn two_cpus() -> Option<[usize; 2]> {
    match crate::affinity::allowed_cpus()[..] {
        [a, b, ..] => Some([a, b]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conserves<R: Radio>(stations: usize, rounds: u64) {
        for shape in [WakeRounds::EveryBurst, WakeRounds::WhenRingEmpty] {
            conserves_in::<R>(stations, rounds, shape, TURN_FRAMES);
        }
    }

    fn conserves_in<R: Radio>(stations: usize, rounds: u64, shape: WakeRounds, turn_frames: u32) {
        let radio = R::with_turn_frames(stations, turn_frames);
        let c = run(&radio, rounds, two_cpus(), shape);
        let name = (R::NAME, stations, shape);
        assert_eq!(c.enqueued, rounds * BURST as u64, "{name:?}");
        assert!(c.wake_sent > 0 && c.completion_sent > 0, "{name:?}: both contexts send: {c:?}");
        assert_eq!(c.wake_sent + c.completion_sent, c.completed, "{name:?}: every frame sent completes");
        // Every frame is sent in a turn, and no turn sends more than its budget.
        assert!(c.turns > 0, "{name:?}: {c:?}");
        assert!(c.frames_per_turn() <= f64::from(turn_frames), "{name:?}: {c:?}");
        let left = radio.leftovers();
        assert_eq!(left.queued, 0, "{name:?}: nothing left queued");
        assert_eq!(c.enqueued, c.completed + left.dropped, "{name:?}: enqueued = completed + dropped ({left:?})");
        assert_eq!(left.pending_us, 0, "{name:?}: no airtime pending");
        assert_eq!(
            left.registered_us,
            c.completed * u64::from(frame_airtime_us()),
            "{name:?}: airtime registered once"
        );
    }

    #[test]
    fn ours_conserves_frames_and_leaves_no_pending_airtime() {
        for n in [1, 4, 16, 256] {
            conserves::<OursRadio>(n, 3_000);
            conserves::<OursConcurrent>(n, 3_000);
        }
    }

    #[test]
    fn the_baseline_conserves_frames_and_leaves_no_pending_airtime() {
        for n in [1, 4, 16, 256] {
            conserves::<BaselineRadio>(n, 3_000);
            conserves::<BaselineSpin>(n, 3_000);
            conserves::<BaselineConcurrentRounds>(n, 3_000);
        }
    }

    #[test]
    fn both_keep_to_the_turn_budget_they_are_built_with() {
        // Turns of one frame, where 16 would let them send several; and of 64, an A-MPDU.
        for turn_frames in [1, 64] {
            for shape in [WakeRounds::EveryBurst, WakeRounds::WhenRingEmpty] {
                conserves_in::<OursRadio>(4, 2_000, shape, turn_frames);
                conserves_in::<BaselineRadio>(4, 2_000, shape, turn_frames);
            }
        }
    }

    #[test]
    fn the_serial_run_conserves_frames_in_both() {
        fn check<R: Radio>(n: usize) {
            let radio = R::new(n);
            let enqueued = run_serial(&radio, 2_000);
            let left = radio.leftovers();
            let completed = left.registered_us / u64::from(frame_airtime_us());
            assert_eq!((left.queued, left.pending_us), (0, 0), "{}", R::NAME);
            assert_eq!(enqueued, completed + left.dropped, "{} at {n}", R::NAME);
        }
        for n in [4, 256] {
            check::<OursRadio>(n);
            check::<OursConcurrent>(n);
            check::<BaselineRadio>(n);
            check::<BaselineSpin>(n);
        }
    }

    #[test]
    fn a_radio_with_frames_still_queued_counts_them_as_left_over() {
        fn check<R: Radio>() {
            let radio = R::new(4);
            for seq in 0..8 {
                radio.enqueue(Pkt::new(seq % 4, seq), 1_000_000);
            }
            let left = radio.leftovers();
            assert_eq!((left.queued, left.dropped, left.pending_us), (8, 0, 0), "{}", R::NAME);
        }
        check::<OursRadio>();
        check::<BaselineRadio>();
    }
}
