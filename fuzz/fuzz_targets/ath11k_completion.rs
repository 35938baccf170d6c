//! The ath11k adapter over the simulated HAL, from a handful of peers to hundreds
//! (txqs on every TID 0..=16, the management TID included), with peers and txqs
//! added and removed while frames are in flight: sends to one txq or to many at once,
//! firmware steps, completion passes with every status and any NAPI budget (passes
//! over many stations and ACs, more (station, AC) groups than `release_batch` sums at
//! once), completion batches read by the caller and single completions (including ids
//! never sent, already completed, or reused), refused enqueues, held rings, paused
//! completions, PPDU tx stats and rx status for known and unknown peers, weights,
//! limits, thresholds, the debugfs texts, station removal, flushes and teardown.
//!
//! After each operation: every frame is in exactly one place (txq, retry slot,
//! outstanding MSDU, handed back), the per-ring MSDU counts add up to the outstanding
//! count, no pass exceeds its budget, every frame handed back is counted by status, no
//! release fails (a batch that releases fewer charges than it was handed counts as a
//! release error), and the scheduler's invariants hold. At the end every charge is
//! released and the teardown hands every frame back once.

#![no_main]

// The ath11k tests' bench (it allows its own dead code).
#[path = "../../drivers/ath11k/tests/common/mod.rs"]
mod bench;

use airtime_ath11k::hal::{PpduStats, PpduUser, RingId, RxPpdu, StatusSink, TxCompletion, TxStatus};
use airtime_ath11k::sim_hal::SimConfig;
use airtime_ath11k::{AcSet, Ath11kError, Config, MuCharging};
use airtime_est::{Bandwidth, HeGi, Rate};
use airtime_sched::{Ac, AqlLimits, RingErrorKind, StationId, Tid, TxqId, Weight};
use arbitrary::Arbitrary;
use bench::Bench;
use libfuzzer_sys::fuzz_target;

/// One peer as the input describes it.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct PeerSpec {
    peer: u16,
    weight: u16,
    /// Bit t (0..=16): a txq on TID t (16 is the management TID).
    tids: u32,
}

#[derive(Arbitrary, Debug)]
enum Population {
    /// Up to 8 peers, each described (peer ids below 512).
    Few(Vec<PeerSpec>),
    /// `count` peers (up to 300, peer ids 0..count), weights and TIDs cycled from `specs`.
    Many { count: u16, specs: Vec<PeerSpec> },
}

#[derive(Arbitrary, Debug)]
struct Input {
    ring_size: u8,
    msdu_capacity: u16,
    completion_delay_us: u16,
    fw_take: u8,
    mu_users: u8,
    ppdu_stats: bool,
    rounds_on_completion: bool,
    resume_blocked_acs: bool,
    tcl_ring_retry: bool,
    tx_no_pushback: bool,
    population: Population,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Send {
        txq: u16,
        n: u8,
        len: u16,
        cpu: u8,
    },
    /// `n` frames into each of `count` txqs from `first` on, each woken from `cpu`.
    SendSpan {
        first: u16,
        count: u16,
        n: u8,
        len: u16,
        cpu: u8,
    },
    Step {
        dt: u16,
        budget: u16,
        cpu: u8,
    },
    Statuses(Vec<u8>),
    Faults {
        ring: u8,
        kinds: Vec<u8>,
    },
    Inject {
        ring: u8,
        msdu_id: u16,
        status: u8,
    },
    Batch {
        completions: Vec<(u8, u16, u8)>,
        budget: u16,
        cpu: u8,
    },
    /// One completion descriptor the caller read (`complete_msdu`).
    CompleteOne {
        ring: u8,
        msdu_id: u16,
        status: u8,
    },
    RunRounds {
        acs: u8,
        cpu: u8,
    },
    HoldRings(bool),
    PauseCompletions(bool),
    AddStation(PeerSpec),
    RemoveStation {
        sta: u16,
    },
    AddTxq {
        sta: u16,
        tid: u8,
    },
    RemoveTxq {
        txq: u16,
    },
    SetWeight {
        sta: u16,
        weight: u16,
    },
    SetLimits {
        sta: u16,
        ac: u8,
        a: u16,
        b: u16,
    },
    SetDefaultLimits {
        ac: u8,
        a: u16,
        b: u16,
    },
    SetThreshold {
        us: u16,
    },
    /// A PPDU tx stats record (users may name unknown peers).
    Ppdu {
        duration_us: u16,
        users: Vec<(u16, u8, u16, Option<u8>)>,
    },
    /// An rx status record (the peer may be unknown).
    Rx {
        peer: u16,
        us: u16,
        rate: Option<u8>,
    },
    /// What the simulated firmware reports for a peer.
    SetPeer {
        peer: u16,
        airtime_us: u16,
        rate: Option<u8>,
    },
    Debugfs {
        sta: u16,
    },
    Flush,
    SetAql(bool),
}

fn ring(v: u8) -> RingId {
    RingId::for_cpu(u32::from(v))
}

fn status(v: u8) -> TxStatus {
    TxStatus::ALL[usize::from(v) % TxStatus::COUNT]
}

fn kind(v: u8) -> RingErrorKind {
    match v % 3 {
        0 => RingErrorKind::Full,
        1 => RingErrorKind::OutOfMemory,
        _ => RingErrorKind::Other,
    }
}

fn ac_of(v: u8) -> Ac {
    Ac::ALL[usize::from(v) % Ac::COUNT]
}

fn limits(a: u16, b: u16) -> AqlLimits {
    AqlLimits::new(u32::from(a.min(b)), u32::from(a.max(b))).unwrap()
}

/// A rate of each encoding family (invalid combinations give none).
fn rate(v: u8) -> Option<Rate> {
    match v % 4 {
        0 => Rate::legacy_ofdm([60, 90, 120, 180, 240, 360, 480, 540][usize::from(v / 4) % 8]).ok(),
        1 => Rate::ht(v / 4 % 32, Bandwidth::Mhz20, v & 0x80 != 0).ok(),
        2 => Rate::vht(v / 4 % 10, 1 + v / 40 % 4, Bandwidth::Mhz80, v & 0x80 != 0).ok(),
        _ => {
            Rate::he(v / 4 % 12, 1 + v / 48 % 4, Bandwidth::ALL[usize::from(v) % 4], HeGi::ALL[usize::from(v) % 3]).ok()
        }
    }
}

/// Most frames one input sends: bounds the run time (and the final drain) of an input.
const MAX_FRAMES: u64 = 8192;
/// Most txqs the initial population gets (`add_txq` looks for a free slot from the
/// first one, so thousands would make the setup quadratic).
const MAX_SETUP_TXQS: usize = 640;

struct State {
    b: Bench,
    stas: Vec<StationId>,
    live: Vec<TxqId>,
    discarded: u64,
    /// Frames handed back, by status, counted incrementally: `done()` only grows, and
    /// recounting it after every operation made the target quadratic (1.5 k exec/s).
    seen: usize,
    by_status: [u64; TxStatus::COUNT],
}

impl State {
    fn check(&mut self) {
        let r = &self.b.radio;
        assert_eq!(self.b.frames_accounted() + self.discarded, self.b.next_seq, "a frame was lost or duplicated");
        let dp = r.dp_stats();
        assert_eq!(dp.pending_msdus.iter().map(|&n| u64::from(n)).sum::<u64>(), u64::from(r.outstanding_msdus()));
        assert_eq!(dp.release_errors, 0, "a release failed");
        assert_eq!(r.scheduler().underflows(), 0);
        let by_status: u64 = dp.completions.iter().sum();
        assert_eq!(by_status + dp.flushed, r.hal().done_len() as u64, "{dp:?}");
        let (seen, counts) = (self.seen, &mut self.by_status);
        self.seen = r.hal().with_done(|done| {
            for (_, st) in done.get(seen..).unwrap_or(&[]) {
                counts[st.index()] += 1;
            }
            done.len()
        });
        for s in TxStatus::ALL {
            if s != TxStatus::Removed {
                assert_eq!(self.by_status[s.index()], dp.completions[s.index()], "{s:?}");
            }
        }
        self.b.radio.check_invariants().unwrap();
    }

    fn pick_sta(&self, v: u16) -> Option<StationId> {
        (!self.stas.is_empty()).then(|| self.stas[usize::from(v) % self.stas.len()])
    }

    fn pick_txq(&self, v: u16) -> Option<TxqId> {
        (!self.live.is_empty()).then(|| self.live[usize::from(v) % self.live.len()])
    }

    fn add_txq(&mut self, sta: StationId, tid: u8) -> Result<TxqId, Ath11kError> {
        let id = self.b.try_txq(sta, tid % 17)?;
        assert_eq!(self.b.radio.txq_for(sta, Tid::new(tid % 17).unwrap()), Some(id));
        self.live.push(id);
        Ok(id)
    }

    /// Adds a peer with a txq on each TID of `tids`; none if the peer id is taken or
    /// the tables are full.
    fn add_station(&mut self, spec: PeerSpec) -> Option<StationId> {
        let sta = self.b.radio.add_station(spec.peer, Weight::new(spec.weight.max(1)).unwrap()).ok()?;
        assert_eq!(self.b.radio.station_by_peer(spec.peer), Some(sta));
        self.stas.push(sta);
        for tid in 0..=16u8 {
            if spec.tids & (1 << tid) != 0 {
                let _ = self.add_txq(sta, tid);
            }
        }
        Some(sta)
    }

    fn enqueue(&mut self, id: TxqId, n: u8, len: u16) {
        let n = u64::from(n % 16).min(MAX_FRAMES - self.b.next_seq);
        self.b.enqueue(id, n as u32, u32::from(len));
    }

    fn debugfs(&self, sta: Option<StationId>) {
        let r = &self.b.radio;
        let mut text = String::new();
        r.write_dp_stats(&mut text);
        assert!(text.contains("Pending tx MSDUs total"));
        if let Some(sta) = sta {
            r.write_station_aql(sta, &mut text).unwrap();
            r.write_station_airtime(sta, &mut text).unwrap();
            let rec = r.station(sta).unwrap();
            assert_eq!(r.station_by_peer(rec.peer_id()), Some(sta));
            let _ = (rec.last_tx_rate(), rec.last_rx_rate());
        }
        let _ = (r.blocked_acs(), r.config(), r.held_frames());
    }
}

fuzz_target!(|input: Input| {
    let mut sim = SimConfig::default();
    sim.tcl_ring_size = u32::from(input.ring_size % 64) + 1;
    sim.msdu_capacity = u32::from(input.msdu_capacity % 512) + 1;
    sim.completion_delay_us = u64::from(input.completion_delay_us % 5000);
    sim.fw_take_per_advance = u32::from(input.fw_take % 16) + 1;
    sim.mu_max_users = input.mu_users % 9;
    sim.ppdu_stats = input.ppdu_stats;
    let specs: Vec<PeerSpec> = match &input.population {
        Population::Few(v) => v.iter().take(8).map(|p| PeerSpec { peer: p.peer % 512, ..*p }).collect(),
        Population::Many { count, specs } => {
            let default = [PeerSpec { peer: 0, weight: 256, tids: 1 }];
            let specs = if specs.is_empty() { &default[..] } else { &specs[..] };
            (0..*count % 301).map(|i| PeerSpec { peer: i, ..specs[usize::from(i) % specs.len()] }).collect()
        }
    };
    let txqs = specs.iter().map(|s| (s.tids & 0x1ffff).count_ones() as usize).sum::<usize>().min(MAX_SETUP_TXQS);
    let mut config = Config::default();
    config.rounds_on_completion = input.rounds_on_completion;
    config.resume_blocked_acs = input.resume_blocked_acs;
    config.tcl_ring_retry = input.tcl_ring_retry;
    config.tx_no_pushback = input.tx_no_pushback;
    // Spare high bits of bytes whose low bits size the simulated firmware choose the MU
    // charging policy and adaptive AQL, so old corpus entries keep their meaning.
    config.mu_charging =
        [MuCharging::WholePpdu, MuCharging::RuShare, MuCharging::OwnDuration][usize::from(input.mu_users / 9) % 3];
    config.sched.adaptive_aql = input.fw_take >= 128;
    // And the estimate's calibration (warm after 2 samples, so that it scales prices).
    config.calibration = (input.mu_users / 27 % 2 == 1).then(|| {
        let mut c = airtime_est::CalibratorConfig::default();
        c.warmup_samples = 2;
        c
    });
    // Tables sized to the population with room for churn: the O(capacity) invariant
    // check after every operation stays proportional to what the input uses.
    config.sched.max_stations = specs.len() as u16 + 16;
    config.sched.max_txqs = (txqs + 64) as u16;
    let mut s = State {
        b: Bench::new(config, sim),
        stas: Vec::new(),
        live: Vec::new(),
        discarded: 0,
        seen: 0,
        by_status: [0; TxStatus::COUNT],
    };
    for spec in specs {
        let room = MAX_SETUP_TXQS.saturating_sub(s.live.len());
        let mut tids = spec.tids & 0x1ffff;
        while tids.count_ones() as usize > room {
            tids &= tids - 1;
        }
        let _ = s.add_station(PeerSpec { tids, ..spec });
    }
    if s.live.is_empty() {
        return;
    }
    s.check();
    for op in input.ops.iter().take(192) {
        match *op {
            Op::Send { txq, n, len, cpu } => {
                let Some(id) = s.pick_txq(txq) else { continue };
                s.enqueue(id, n, len);
                s.b.radio.wake_tx_queue(id, u32::from(cpu), s.b.now).expect("wake");
            }
            Op::SendSpan { first, count, n, len, cpu } => {
                for i in 0..usize::from(count).min(s.live.len()) {
                    let id = s.live[(usize::from(first) + i) % s.live.len()];
                    s.enqueue(id, n % 4 + 1, len);
                    s.b.radio.wake_tx_queue(id, u32::from(cpu), s.b.now).expect("wake");
                }
            }
            Op::Step { dt, budget, cpu } => {
                let budget = u32::from(budget % 600);
                let pass = s.b.step(u64::from(dt), budget, u32::from(cpu));
                assert!(pass.work_done <= budget, "{pass:?} over budget {budget}");
                assert_eq!(pass.budget_exhausted(budget), pass.work_done >= budget);
            }
            Op::Statuses(ref v) => s.b.radio.hal().script_statuses(v.iter().take(64).map(|&x| status(x))),
            Op::Faults { ring: r, ref kinds } => {
                s.b.radio.hal().fail_enqueues(ring(r), kinds.iter().take(8).map(|&k| kind(k)))
            }
            Op::Inject { ring: r, msdu_id, status: st } => {
                s.b.radio.hal().inject_completion(TxCompletion::new(ring(r), u32::from(msdu_id), status(st)))
            }
            Op::Batch { ref completions, budget, cpu } => {
                // Tagged with their places, as the C API tags its array's entries.
                let batch: Vec<TxCompletion> = completions
                    .iter()
                    .take(256)
                    .zip(0u32..)
                    .map(|(&(r, id, st), i)| TxCompletion::new(ring(r), u32::from(id), status(st)).with_tag(i))
                    .collect();
                let budget = u32::from(budget % 600);
                let now = s.b.now;
                let radio = &s.b.radio;
                let mut next = 0u32;
                let pass = radio.complete_tx_iter_with(batch.iter().copied(), budget, u32::from(cpu), now, |f, c| {
                    // Each frame with its own entry, in the array's order, within the budget.
                    assert!(c.tag >= next && c.tag < budget, "tag {} after {next} (budget {budget})", c.tag);
                    assert_eq!(batch.get(c.tag as usize), Some(c), "a frame came back with another entry");
                    next = c.tag + 1;
                    radio.hal().tx_completed(f, c);
                });
                assert_eq!(pass.work_done as usize, batch.len().min(budget as usize));
            }
            Op::CompleteOne { ring: r, msdu_id, status: st } => {
                let c = TxCompletion::new(ring(r), u32::from(msdu_id), status(st));
                let before = s.b.radio.outstanding_msdus();
                match s.b.radio.complete_msdu(c) {
                    Some(_) => assert_eq!(s.b.radio.outstanding_msdus() + 1, before),
                    None => assert_eq!(s.b.radio.outstanding_msdus(), before),
                }
            }
            Op::RunRounds { acs, cpu } => {
                let acs: AcSet = Ac::ALL.into_iter().filter(|ac| acs & (1 << ac.index()) != 0).collect();
                let now = s.b.now;
                s.b.radio.run_rounds(acs, u32::from(cpu), now);
            }
            Op::HoldRings(on) => s.b.radio.hal().hold_rings(on),
            Op::PauseCompletions(on) => s.b.radio.hal().pause_completions(on),
            Op::AddStation(spec) => {
                let _ = s.add_station(PeerSpec { peer: spec.peer % 512, ..spec });
            }
            Op::RemoveStation { sta } => {
                let Some(id) = s.pick_sta(sta) else { continue };
                s.stas.retain(|x| *x != id);
                let mut dropped = 0u64;
                s.b.radio.remove_station(id, |q| dropped += q.len() as u64).unwrap();
                s.discarded += dropped;
                let radio = &s.b.radio;
                s.live.retain(|t| radio.scheduler().txq_info(*t).is_ok());
                s.b.forget_removed_txqs();
                assert!(s.b.radio.station(id).is_none());
            }
            Op::AddTxq { sta, tid } => {
                if let Some(id) = s.pick_sta(sta) {
                    let _ = s.add_txq(id, tid);
                }
            }
            Op::RemoveTxq { txq } => {
                let Some(id) = s.pick_txq(txq) else { continue };
                let mut dropped = 0u64;
                s.b.radio.remove_txq(id, |q| dropped += q.len() as u64).unwrap();
                s.discarded += dropped;
                s.live.retain(|t| *t != id);
                s.b.forget_removed_txqs();
            }
            Op::SetWeight { sta, weight } => {
                if let Some(id) = s.pick_sta(sta) {
                    s.b.radio.set_weight(id, Weight::new(weight.max(1)).unwrap()).unwrap();
                }
            }
            Op::SetLimits { sta, ac, a, b } => {
                if let Some(id) = s.pick_sta(sta) {
                    s.b.radio.set_station_limits(id, ac_of(ac), limits(a, b)).unwrap();
                }
            }
            Op::SetDefaultLimits { ac, a, b } => s.b.radio.set_default_limits(ac_of(ac), limits(a, b)),
            Op::SetThreshold { us } => s.b.radio.set_aql_threshold_us(u32::from(us)),
            Op::Ppdu { duration_us, ref users } => {
                let mut p = PpduStats::new(u32::from(duration_us));
                for &(peer, tid, us, r) in users.iter().take(8) {
                    // The peer's spare high bits pick an RU (valid sizes, unknown, and one
                    // no RU has) and how much of the PPDU the user's own data took.
                    let ru_tones = [0, 26, 52, 106, 242, 484, 996, 7][usize::from(peer >> 9) % 8];
                    let own_duration_us = u32::from(us) / (1 + u32::from(peer >> 12) % 4);
                    let user = PpduUser {
                        peer_id: peer % 512,
                        tid,
                        tx_duration_us: u32::from(us),
                        rate: r.and_then(rate),
                        ru_tones,
                        own_duration_us,
                        // Any count and size, none included: the calibration must take
                        // or refuse every one without a panic.
                        msdus: us % 64,
                        msdu_bytes: u32::from(us).wrapping_mul(23),
                    };
                    assert!(p.push_user(user));
                }
                let now = s.b.now;
                let out = s.b.radio.on_ppdu_tx_stats(&p, now);
                assert_eq!((out.users_charged + out.unknown_peers) as usize, p.n_users());
            }
            Op::Rx { peer, us, rate: r } => {
                let rx = RxPpdu { peer_id: peer % 512, rx_duration_us: u32::from(us), rate: r.and_then(rate) };
                let known = s.b.radio.station_by_peer(rx.peer_id).is_some();
                let now = s.b.now;
                assert_eq!(s.b.radio.on_rx_ppdu(&rx, now).is_ok(), known);
            }
            Op::SetPeer { peer, airtime_us, rate: r } => {
                s.b.radio.hal().set_peer(peer % 512, u32::from(airtime_us), r.and_then(rate))
            }
            Op::Debugfs { sta } => s.debugfs(s.pick_sta(sta)),
            Op::Flush => {
                // Kept frames live in their txqs: a flush of the rings leaves them (and
                // their charges); the radio's shutdown takes everything.
                s.b.radio.flush_outstanding();
                assert_eq!(s.b.radio.outstanding_msdus(), 0);
                let mut dropped = 0u64;
                s.b.radio.shutdown(|q| dropped += q.len() as u64);
                s.discarded += dropped;
                s.stas.clear();
                s.live.clear();
                s.b.forget_removed_txqs();
                assert_eq!(s.b.radio.outstanding_msdus() + s.b.radio.held_frames(), 0);
                assert_eq!(s.b.radio.scheduler().total_pending_us(), 0, "shutdown leaves charges");
            }
            Op::SetAql(on) => s.b.radio.set_aql_enabled(on),
        }
        s.check();
    }
    // Let everything finish: no faults held back, the default limits (limits of 0 would
    // hold a station back for good), then every charge must be released.
    s.b.radio.hal().hold_rings(false);
    s.b.radio.hal().pause_completions(false);
    s.b.radio.set_aql_enabled(true);
    s.b.radio.set_aql_threshold_us(airtime_sched::DEFAULT_AQL_THRESHOLD_US);
    for ac in Ac::ALL {
        s.b.radio.set_default_limits(ac, AqlLimits::DEFAULT);
        for sta in s.stas.clone() {
            s.b.radio.set_station_limits(sta, ac, AqlLimits::DEFAULT).unwrap();
        }
    }
    // Steps of the completion delay: with an MSDU table of one, every step completes a
    // frame, so the drain's step bound covers every frame the ops can send.
    s.b.drain_by(sim.completion_delay_us.max(100), 64, 0);
    s.check();
    assert_eq!(s.b.radio.scheduler().total_pending_us(), 0, "charges left after the drain");
    for sta in &s.stas {
        for ac in Ac::ALL {
            assert_eq!(s.b.radio.scheduler().station_pending_us(*sta, ac).unwrap(), 0);
        }
    }
    let mut seqs: Vec<u64> = s.b.done_seqs();
    assert_eq!(seqs.len() as u64 + s.discarded, s.b.next_seq, "frames handed back");
    seqs.sort_unstable();
    seqs.dedup();
    assert_eq!(seqs.len() as u64 + s.discarded, s.b.next_seq, "a frame was handed back twice");
    // Teardown: nothing is left to flush, and the HAL comes back with every frame.
    let hal = s.b.radio.into_hal();
    assert_eq!(hal.done_len(), seqs.len());
});
