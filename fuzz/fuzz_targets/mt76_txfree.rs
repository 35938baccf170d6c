//! The mt76 adapter on its simulated HAL at the scale of a busy AP: up to 300 stations
//! (WTBL indices, txqs on every TID 0..=16 and station-less ones, each an FQ-CoDel queue
//! that drops), added, put to sleep, woken and removed mid-run; enqueues, wakes and
//! tx-worker runs under either airtime source (per-frame tx status through
//! `Scheduler::complete_frame`, or WTBL polling), any burst bound, small and large token
//! tables and DMA rings; a HAL that refuses descriptors, loses or delays tx-free events,
//! reports any rate and try count, and whose WTBL counters reach their clear bit; stale
//! and duplicate tx-free events; status timeouts and resets.
//!
//! After every operation: every frame the adapter accepted is reported to the stack at
//! most once, and the reports add up to the adapter's counters; each report's airtime is
//! what its status says (the core's `FrameStatus::airtime_us`); the tokens in use stay
//! within the table; nothing is pending while no token is in use; `check_invariants`
//! holds. At the end every frame is reported exactly once and no airtime stays pending.

#![no_main]

use airtime_mt76::hal::{AirtimeWords, DmaError, Token, TxFree, TxOutcome, WTBL_AIRTIME_CLEAR_BIT};
use airtime_mt76::sim_hal::{SimConfig, SimHal};
use airtime_mt76::{AirtimeSource, Config, Mt76, Mt76Error};
use airtime_sched::fq_codel::{FqCodelConfig, FqCodelTxq, FqFrame};
use airtime_sched::txqs::TurnBudget;
use airtime_sched::{Ac, Frame, FrameStatus, Instant, PerAc, SchedError, StationId, Tid, TxqId, Weight};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[path = "common/mod.rs"]
#[allow(dead_code)] // each target uses part of it
mod common;
use common::RateSpec;

#[derive(Debug)]
struct Pkt {
    id: u64,
    len: u32,
    flow: u32,
    ac: Ac,
}

impl Frame for Pkt {
    fn len_bytes(&self) -> u32 {
        self.len
    }
}

impl FqFrame for Pkt {
    fn flow_hash(&self) -> u32 {
        self.flow
    }
}

type Q = FqCodelTxq<Pkt>;
type Radio = Mt76<SimHal<Pkt>, Q>;

#[derive(Arbitrary, Debug, Clone, Copy)]
struct StaSpec {
    weight: u16,
    /// Bit t (0..=16): a txq on TID t.
    tids: u32,
}

#[derive(Arbitrary, Debug)]
enum Population {
    Few(Vec<StaSpec>),
    Many { count: u16, spec: StaSpec },
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Burst {
    Unlimited,
    Legacy,
    Frames(u8),
    Airtime(u16),
}

#[derive(Arbitrary, Debug)]
struct Input {
    tx_status: bool,
    burst: Burst,
    /// Tokens: small tables block tx often.
    tokens: u16,
    /// Descriptors per DMA ring.
    ndesc: u16,
    multicast_rate: bool,
    packet_limit: u16,
    codel_target_us: u16,
    population: Population,
    stationless: Vec<u8>,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Enqueue { txq: u16, n: u8, len: u16, flow: u8 },
    /// One frame to each of `count` txqs from `first`: traffic to many stations.
    Span { first: u16, count: u16, len: u16 },
    Wake { txq: u16 },
    Schedule { ac: u8 },
    ScheduleAll,
    /// Time passes and the hardware sends what was kicked.
    Advance { us: u16 },
    TxFree { budget: u16 },
    StaPoll,
    StatusCheck { flush: bool },
    AddStation(StaSpec),
    RemoveStation { sta: u16 },
    AddTxq { sta: Option<u16>, tid: u8 },
    RemoveTxq { txq: u16 },
    SetWeight { sta: u16, weight: u16 },
    Ps { sta: u16, asleep: bool },
    Reap,
    SetRate { sta: u16, rate: Option<RateSpec> },
    SetTries { sta: u16, tries: u8, acked: bool },
    FailDma { ac: u8, errors: Vec<bool> },
    LoseTxFree { n: u8 },
    DelayTxFree { n: u8, us: u16 },
    RxAirtime { sta: u16, ac: u8, us: u16 },
    /// The WTBL counters near their clear bit.
    WtblNearClear { sta: u16 },
    /// A tx-free for a token that may hold nothing (late, duplicate).
    Stale { token: u16, sta: Option<u16> },
    Stats { sta: u16 },
}

struct World {
    radio: Radio,
    /// Live stations with their WTBL index.
    stas: Vec<(StationId, u16)>,
    txqs: Vec<(TxqId, Ac)>,
    next_wcid: u16,
    /// Frames accepted, and whether each was reported.
    accepted: u64,
    reported: Vec<bool>,
    next_id: u64,
    /// Reports by outcome: acked + failed, flushed, purged, dropped.
    by_outcome: [u64; 4],
    now: Instant,
    tx_status: bool,
    max_stations: usize,
    max_txqs: usize,
}

const MAX_FRAMES: u64 = 8192;
const MAX_SETUP_TXQS: usize = 640;

fn ac_of(v: u8) -> Ac {
    Ac::ALL[usize::from(v) % Ac::COUNT]
}

impl World {
    fn queue(&self, packet_limit: u32, codel_target_us: u64) -> Q {
        let mut config = FqCodelConfig::MAC80211;
        config.flows = 8;
        config.packet_limit = packet_limit;
        config.codel_target_us = codel_target_us;
        config.keep_dropped = true;
        Q::new(config).unwrap()
    }

    fn pick_sta(&self, v: u16) -> Option<(StationId, u16)> {
        (!self.stas.is_empty()).then(|| self.stas[usize::from(v) % self.stas.len()])
    }

    fn pick_txq(&self, v: u16) -> Option<(TxqId, Ac)> {
        (!self.txqs.is_empty()).then(|| self.txqs[usize::from(v) % self.txqs.len()])
    }

    fn add_station(&mut self, spec: StaSpec, q: (u32, u64)) {
        let wcid = self.next_wcid;
        self.next_wcid = self.next_wcid.wrapping_add(1);
        match self.radio.add_station(wcid, Weight::new(spec.weight.max(1)).unwrap()) {
            Ok(id) => {
                assert_eq!(self.radio.station(id).and_then(|r| r.wcid()), Some(wcid));
                self.stas.push((id, wcid));
                for tid in 0..=16u8 {
                    if spec.tids & (1 << tid) != 0 {
                        self.add_txq(Some(id), tid, q);
                    }
                }
            }
            Err(e) => {
                assert!(!e.to_string().is_empty());
                let duplicate = self.stas.iter().any(|s| s.1 == wcid);
                match e {
                    // Every free slot belongs to a removed station whose frames are still
                    // in flight: only while some are.
                    Mt76Error::Sched(SchedError::StationsDraining) => assert!(
                        self.stas.len() < self.max_stations && self.radio.tokens_in_use() > 0,
                        "StationsDraining with {} of {} stations and nothing in flight",
                        self.stas.len(),
                        self.max_stations
                    ),
                    // A removed station's frames still hold the index.
                    Mt76Error::WcidDraining(w) => {
                        assert!(w == wcid && self.radio.tokens_in_use() > 0 && self.radio.wcid_draining(w))
                    }
                    e => assert!(self.stas.len() >= self.max_stations || duplicate, "{e:?}"),
                }
            }
        }
    }

    fn add_txq(&mut self, station: Option<StationId>, tid: u8, q: (u32, u64)) {
        let tid = Tid::new(tid % 17).unwrap();
        match self.radio.add_txq(station, tid, self.queue(q.0, q.1)) {
            Ok(id) => self.txqs.push((id, tid.ac())),
            Err((e, back)) => {
                assert!(back.is_some(), "the queue comes back");
                assert!(self.txqs.len() >= self.max_txqs, "{e:?}");
            }
        }
    }

    /// Takes the stack's reports: each frame once, its airtime as its status says.
    fn collect(&mut self) {
        for (pkt, report) in self.radio.hal().take_done() {
            let seen = &mut self.reported[pkt.id as usize];
            assert!(!*seen, "frame {} reported twice", pkt.id);
            *seen = true;
            match report.outcome {
                TxOutcome::Acked | TxOutcome::Failed => {
                    self.by_outcome[0] += 1;
                    assert!(report.tries >= 1);
                    let status =
                        FrameStatus { len_bytes: pkt.len, rate: report.rate, tries: report.tries, aggregated: pkt.ac.aggregated() };
                    assert_eq!(report.airtime_us, status.airtime_us(report.charged_us), "frame {}'s airtime", pkt.id);
                }
                TxOutcome::Flushed => {
                    self.by_outcome[1] += 1;
                    assert_eq!((report.tries, report.airtime_us), (0, 0));
                }
                TxOutcome::Purged => {
                    self.by_outcome[2] += 1;
                    assert_eq!(report.airtime_us, 0);
                }
                TxOutcome::Dropped => {
                    // By its queue (never charged), or unmapped at its DMA write (charged,
                    // the charge given back): never sent either way.
                    self.by_outcome[3] += 1;
                    assert_eq!((report.tries, report.airtime_us), (0, 0));
                }
            }
        }
    }

    fn check(&mut self) {
        self.collect();
        let s = self.radio.stats();
        assert_eq!(s.enqueued, self.accepted);
        assert_eq!(
            [s.completed, s.flushed, s.purged, s.dropped],
            self.by_outcome,
            "the reports add up to the counters"
        );
        let sched = self.radio.scheduler();
        assert!(self.radio.tokens_in_use() <= self.radio.token_size());
        // Every descriptor in a DMA queue holds its token: no frame goes back to the stack
        // while the hardware may still fetch it.
        let in_queues: usize = Ac::ALL.iter().map(|&ac| self.radio.hal().descs(ac).len()).sum();
        assert!(in_queues <= self.radio.tokens_in_use() as usize, "{in_queues} descriptors queued");
        if self.radio.tokens_in_use() == 0 {
            // No frame between its DMA write and its tx-free: nothing is in flight (the
            // table's loop gives a kept frame's charge back).
            assert_eq!(sched.total_pending_us(), 0, "airtime pending with no token in use");
            for ac in Ac::ALL {
                assert_eq!(sched.multicast_pending_us(ac), 0);
            }
        }
        assert_eq!(sched.underflows(), 0);
        sched.check_invariants().unwrap();
    }

    fn enqueue(&mut self, txq: TxqId, ac: Ac, len: u32, flow: u32) {
        if self.next_id >= MAX_FRAMES {
            return;
        }
        let pkt = Pkt { id: self.next_id, len, flow, ac };
        self.next_id += 1;
        self.reported.push(false);
        match self.radio.enqueue(txq, pkt, self.now) {
            Ok(()) => self.accepted += 1,
            // Refused (unknown txq, intake full, no memory): back with the caller.
            Err(pkt) => self.reported[pkt.id as usize] = true,
        }
    }
}

fuzz_target!(|input: Input| {
    let specs: Vec<StaSpec> = match &input.population {
        Population::Few(v) => v.iter().take(8).copied().collect(),
        Population::Many { count, spec } => vec![*spec; usize::from(*count % 301)],
    };
    let txqs: usize = specs.iter().map(|s| (s.tids & 0x1ffff).count_ones() as usize).sum::<usize>().min(MAX_SETUP_TXQS);
    let max_stations = specs.len() + 8;
    let max_txqs = txqs + 4 + 32;
    let mut config = Config::default();
    config.sched.max_stations = max_stations as u16;
    config.sched.max_txqs = max_txqs as u16;
    config.airtime = if input.tx_status { AirtimeSource::TxStatus } else { AirtimeSource::WtblPoll };
    config.burst = match input.burst {
        Burst::Unlimited => TurnBudget::UNLIMITED,
        Burst::Legacy => Config::legacy_burst(),
        Burst::Frames(n) => TurnBudget::frames(u32::from(n % 32) + 1),
        // A budget of 0 sends nothing, ever (every turn ends on it before its first
        // frame): not a configuration a driver can run on.
        Burst::Airtime(us) => TurnBudget::airtime_us(u32::from(us).max(1)),
    };
    config.token_size = u32::from(input.tokens % 2048) + config.token_free_thr + 1;
    if !input.multicast_rate {
        config.multicast_rate = None;
    }
    let ndesc = u32::from(input.ndesc % 512) + config.txq_free_thr + 1;
    let hal = SimHal::new(SimConfig { ndesc, ..SimConfig::default() });
    let radio = Radio::new(hal, config).unwrap();
    assert_eq!(radio.config().token_size, config.token_size);
    let q = (u32::from(input.packet_limit % 512) + 1, u64::from(input.codel_target_us) + 1);
    let mut w = World {
        radio,
        stas: Vec::new(),
        txqs: Vec::new(),
        next_wcid: 1,
        accepted: 0,
        reported: Vec::new(),
        next_id: 0,
        by_outcome: [0; 4],
        now: Instant::from_millis(1000),
        tx_status: input.tx_status,
        max_stations,
        max_txqs,
    };
    let mut room = MAX_SETUP_TXQS;
    for spec in specs {
        let mut tids = spec.tids & 0x1ffff;
        while tids.count_ones() as usize > room {
            tids &= tids - 1;
        }
        room -= tids.count_ones() as usize;
        w.add_station(StaSpec { tids, ..spec }, q);
    }
    for &tid in input.stationless.iter().take(4) {
        w.add_txq(None, tid, q);
    }
    w.check();
    for op in input.ops.iter().take(256) {
        match *op {
            Op::Enqueue { txq, n, len, flow } => {
                let Some((id, ac)) = w.pick_txq(txq) else { continue };
                for _ in 0..n % 32 {
                    w.enqueue(id, ac, u32::from(len % 2304) + 1, u32::from(flow % 4));
                }
            }
            Op::Span { first, count, len } => {
                let ids = w.txqs.clone();
                for i in 0..usize::from(count).min(ids.len()) {
                    let (id, ac) = ids[(usize::from(first) + i) % ids.len()];
                    w.enqueue(id, ac, u32::from(len % 2304) + 1, i as u32);
                }
            }
            Op::Wake { txq } => {
                let Some((id, _)) = w.pick_txq(txq) else { continue };
                let r = w.radio.wake_tx_queue(id, w.now).unwrap();
                assert!(r.rounds >= 1 && r.bursts <= r.frames.max(r.bursts));
            }
            Op::Schedule { ac } => {
                let r = w.radio.schedule(ac_of(ac), w.now);
                assert!(r.rounds >= 1 && r.end.is_some());
            }
            Op::ScheduleAll => {
                let _ = w.radio.schedule_all(w.now);
            }
            Op::Advance { us } => {
                w.now = w.now.add_micros(u64::from(us));
                w.radio.hal().advance(w.now);
            }
            Op::TxFree { budget } => {
                let p = w.radio.tx_free(u32::from(budget), w.now);
                assert!(p.entries <= u32::from(budget) && p.completed + p.stale == p.entries);
            }
            Op::StaPoll => {
                let _ = w.radio.sta_poll(w.now);
            }
            Op::StatusCheck { flush } => {
                if flush {
                    // A reset: tx stops, DMA empties, every token is flushed, tx restarts.
                    w.radio.stop_tx();
                    w.radio.hal().reset_dma();
                    let n = w.radio.reset_tokens().expect("one thread: no tx-free pass holds an event");
                    assert_eq!(w.radio.tokens_in_use(), 0, "a reset completes every token ({n})");
                    w.radio.start_tx(w.now).expect("one thread: no stop or flush runs");
                } else {
                    // The hang check releases nothing.
                    let (tokens, done) = (w.radio.tokens_in_use(), w.radio.hal().done_len());
                    let overdue = w.radio.tokens_overdue(w.now);
                    assert!(overdue <= tokens);
                    assert_eq!((w.radio.tokens_in_use(), w.radio.hal().done_len()), (tokens, done));
                }
            }
            Op::AddStation(spec) => w.add_station(spec, q),
            Op::RemoveStation { sta } => {
                let Some((id, _)) = w.pick_sta(sta) else { continue };
                w.radio.remove_station(id, w.now).unwrap();
                w.stas.retain(|s| s.0 != id);
                let sched = w.radio.scheduler();
                w.txqs.retain(|t| sched.txq_info(t.0).is_ok());
                assert!(w.radio.station(id).is_none());
            }
            Op::AddTxq { sta, tid } => {
                let station = sta.and_then(|s| w.pick_sta(s)).map(|s| s.0);
                w.add_txq(station, tid, q);
            }
            Op::RemoveTxq { txq } => {
                let Some((id, _)) = w.pick_txq(txq) else { continue };
                w.radio.remove_txq(id, w.now).unwrap();
                w.txqs.retain(|t| t.0 != id);
            }
            Op::SetWeight { sta, weight } => {
                let Some((id, _)) = w.pick_sta(sta) else { continue };
                w.radio.set_weight(id, Weight::new(weight.max(1)).unwrap()).unwrap();
            }
            Op::Ps { sta, asleep } => {
                let Some((id, _)) = w.pick_sta(sta) else { continue };
                let sent = w.radio.sta_ps(id, asleep, w.now).unwrap();
                assert!(!asleep || sent == 0);
                assert_eq!(w.radio.station(id).unwrap().asleep(), asleep);
            }
            Op::Reap => {
                let _ = w.radio.reap(w.now);
            }
            Op::SetRate { sta, rate } => {
                if let Some((_, wcid)) = w.pick_sta(sta) {
                    w.radio.hal().set_rate(wcid, rate.and_then(RateSpec::build));
                }
            }
            Op::SetTries { sta, tries, acked } => {
                if let Some((_, wcid)) = w.pick_sta(sta) {
                    w.radio.hal().set_tries(wcid, tries % 16, acked);
                }
            }
            Op::FailDma { ac, ref errors } => {
                let errors = errors.iter().take(8).map(|&m| if m { DmaError::MapFailed } else { DmaError::Full });
                w.radio.hal().fail_dma(ac_of(ac), errors);
            }
            Op::LoseTxFree { n } => w.radio.hal().lose_tx_free(u32::from(n % 8)),
            Op::DelayTxFree { n, us } => w.radio.hal().delay_tx_free(u32::from(n % 8), u64::from(us)),
            Op::RxAirtime { sta, ac, us } => {
                if let Some((_, wcid)) = w.pick_sta(sta) {
                    w.radio.hal().add_rx_airtime(wcid, ac_of(ac), u32::from(us));
                }
            }
            Op::WtblNearClear { sta } => {
                if let Some((_, wcid)) = w.pick_sta(sta) {
                    let near = WTBL_AIRTIME_CLEAR_BIT - 1000;
                    w.radio.hal().set_airtime_words(wcid, AirtimeWords { tx_us: PerAc([near; 4]), rx_us: PerAc([near; 4]) });
                }
            }
            Op::Stale { token, sta } => {
                let wcid = sta.and_then(|s| w.pick_sta(s)).map(|s| s.1);
                w.radio.hal().inject_tx_free(TxFree { token: Token(u32::from(token)), wcid, tries: 1, acked: true, rate: None });
            }
            Op::Stats { sta } => {
                let text = format!("{:?} {:?} {}", w.radio.stats(), w.radio, w.radio.tx_blocked());
                assert!(!text.is_empty());
                if let Some((id, wcid)) = w.pick_sta(sta) {
                    let r = w.radio.station(id).unwrap();
                    assert_eq!(r.wcid(), Some(wcid));
                    let _ = (r.tx_rate(), w.radio.hal().airtime_words(wcid), w.radio.scheduler().station_airtime(id));
                }
                let _ = (w.radio.hal().done_len(), w.radio.hal().events_in_flight(), w.radio.hal().fetched());
            }
        }
        w.check();
    }
    // Drain: everyone awake, the hardware sends, tx-free comes (lost events time out).
    for &(id, _) in &w.stas.clone() {
        w.radio.sta_ps(id, false, w.now).unwrap();
    }
    let _ = w.tx_status;
    // With a token table that blocks at one frame in use, a frame per tx-free delay: the
    // bound allows every frame its own cycle.
    let cycles = 2 * w.accepted + 400;
    for i in 0..cycles {
        let _ = w.radio.schedule_all(w.now);
        w.now = w.now.add_micros(1100);
        w.radio.hal().advance(w.now);
        let pass = w.radio.tx_free(4096, w.now);
        if pass.entries == 0 && w.radio.tokens_in_use() > 0 {
            if w.radio.hal().events_in_flight() > 0 {
                // Tx-free events delayed (by at most 65.5 ms here) come.
                w.now = w.now.add_micros(70_000);
            } else {
                // Only lost events are owed: the hang, answered by a reset.
                w.now = w.now.add_micros(w.radio.config().tx_status_timeout_us);
                assert!(w.radio.tokens_overdue(w.now) > 0);
                w.radio.stop_tx();
                w.radio.hal().reset_dma();
                w.radio.reset_tokens().expect("one thread: no tx-free pass holds an event");
                w.radio.start_tx(w.now).expect("one thread: no stop or flush runs");
            }
        }
        w.check();
        let done = w.by_outcome.iter().sum::<u64>();
        if done == w.accepted && w.radio.tokens_in_use() == 0 {
            break;
        }
        assert!(i + 1 < cycles, "frames left after the drain: {} accepted, {done} reported", w.accepted);
    }
    // Everyone leaves.
    for (id, _) in w.stas.clone() {
        w.radio.remove_station(id, w.now).unwrap();
    }
    for (id, _) in w.txqs.clone() {
        let _ = w.radio.remove_txq(id, w.now);
    }
    let _ = w.radio.reap(w.now);
    w.check();
    assert!(w.reported.iter().all(|&r| r), "a frame never reported");
    assert_eq!(w.radio.scheduler().total_pending_us(), 0);
    assert_eq!(w.radio.tokens_in_use(), 0);
});
