//! The ath11k adapter over the simulated HAL: sends, firmware steps, completion passes
//! with every status and any NAPI budget, completion batches read by the caller
//! (including ids never sent, already completed, or reused), refused enqueues, held
//! rings, paused completions, station removal and teardown. After each operation:
//! every frame is in exactly one place (txq, retry slot, outstanding MSDU, handed
//! back), the per-ring MSDU counts add up to the outstanding count, no pass exceeds its
//! budget, every frame handed back is counted by status, no release fails, and the
//! scheduler's invariants hold. At the end every charge is released.

#![no_main]

// The ath11k tests' bench (it allows its own dead code).
#[path = "../../drivers/ath11k/tests/common/mod.rs"]
mod bench;

use airtime_ath11k::Config;
use airtime_ath11k::hal::{RingId, TxCompletion, TxStatus};
use airtime_ath11k::sim_hal::SimConfig;
use airtime_sched::{Ac, RingErrorKind, StationId, TxqId};
use arbitrary::Arbitrary;
use bench::Bench;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    ring_size: u8,
    msdu_capacity: u8,
    completion_delay_us: u16,
    fw_take: u8,
    mu_users: u8,
    ppdu_stats: bool,
    rounds_on_completion: bool,
    resume_blocked_acs: bool,
    tcl_ring_retry: bool,
    stations: Vec<(u8, u16, u8)>,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Send { txq: u8, n: u8, len: u16, cpu: u8 },
    Step { dt: u16, budget: u8, cpu: u8 },
    Statuses(Vec<u8>),
    Faults { ring: u8, kinds: Vec<u8> },
    Inject { ring: u8, msdu_id: u8, status: u8 },
    Batch { completions: Vec<(u8, u8, u8)>, budget: u8, cpu: u8 },
    HoldRings(bool),
    PauseCompletions(bool),
    RemoveStation { sta: u8 },
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
        assert_eq!(by_status + dp.flushed, r.hal().done().len() as u64, "{dp:?}");
        let done = r.hal().done();
        for (_, st) in &done[self.seen..] {
            self.by_status[st.index()] += 1;
        }
        self.seen = done.len();
        for s in TxStatus::ALL {
            if s != TxStatus::Removed {
                assert_eq!(self.by_status[s.index()], dp.completions[s.index()], "{s:?}");
            }
        }
        self.b.radio.scheduler_mut().check_invariants().unwrap();
    }
}

fuzz_target!(|input: Input| {
    let mut sim = SimConfig::default();
    sim.tcl_ring_size = u32::from(input.ring_size % 64) + 1;
    sim.msdu_capacity = u32::from(input.msdu_capacity % 64) + 1;
    sim.completion_delay_us = u64::from(input.completion_delay_us % 5000);
    sim.fw_take_per_advance = u32::from(input.fw_take % 16) + 1;
    sim.mu_max_users = input.mu_users % 5;
    sim.ppdu_stats = input.ppdu_stats;
    let mut config = Config::default();
    config.rounds_on_completion = input.rounds_on_completion;
    config.resume_blocked_acs = input.resume_blocked_acs;
    config.tcl_ring_retry = input.tcl_ring_retry;
    // At most 8 peers with a few txqs each: a small table keeps the O(capacity)
    // invariant check after every operation cheap (it was 78 % of the run time).
    config.sched.max_stations = 16;
    config.sched.max_txqs = 128;
    let mut s = State {
        b: Bench::new(config, sim),
        stas: Vec::new(),
        live: Vec::new(),
        discarded: 0,
        seen: 0,
        by_status: [0; TxStatus::COUNT],
    };
    for &(peer, weight, tid) in input.stations.iter().take(4) {
        let peer = u16::from(peer % 8);
        if s.b.radio.station_by_peer(peer).is_some() {
            continue;
        }
        let sta = s.b.station(peer, weight.max(1));
        s.stas.push(sta);
        s.live.push(s.b.txq(sta, tid % 8));
    }
    if s.live.is_empty() {
        return;
    }
    for op in input.ops.iter().take(192) {
        match op {
            Op::Send { txq, n, len, cpu } => {
                if s.live.is_empty() {
                    continue;
                }
                let id = s.live[usize::from(*txq) % s.live.len()];
                s.b.send(id, u32::from(n % 16), u32::from(*len), u32::from(*cpu));
            }
            Op::Step { dt, budget, cpu } => {
                let budget = u32::from(*budget % 80);
                let pass = s.b.step(u64::from(*dt), budget, u32::from(*cpu));
                assert!(pass.work_done <= budget, "{pass:?} over budget {budget}");
            }
            Op::Statuses(v) => s.b.radio.hal_mut().script_statuses(v.iter().take(64).map(|&x| status(x))),
            Op::Faults { ring: r, kinds } => {
                s.b.radio.hal_mut().fail_enqueues(ring(*r), kinds.iter().take(8).map(|&k| kind(k)))
            }
            Op::Inject { ring: r, msdu_id, status: st } => s.b.radio.hal_mut().inject_completion(TxCompletion {
                ring: ring(*r),
                msdu_id: u32::from(*msdu_id),
                status: status(*st),
            }),
            Op::Batch { completions, budget, cpu } => {
                let batch: Vec<TxCompletion> = completions
                    .iter()
                    .take(64)
                    .map(|&(r, id, st)| TxCompletion { ring: ring(r), msdu_id: u32::from(id), status: status(st) })
                    .collect();
                let budget = u32::from(*budget % 80);
                let now = s.b.now;
                let pass = s.b.radio.complete_tx_batch(&batch, budget, u32::from(*cpu), now);
                assert_eq!(pass.work_done as usize, batch.len().min(budget as usize));
            }
            Op::HoldRings(on) => s.b.radio.hal_mut().hold_rings(*on),
            Op::PauseCompletions(on) => s.b.radio.hal_mut().pause_completions(*on),
            Op::RemoveStation { sta } => {
                if s.stas.is_empty() {
                    continue;
                }
                let id = s.stas.swap_remove(usize::from(*sta) % s.stas.len());
                let mut dropped = 0u64;
                s.b.radio.remove_station(id, |q| dropped += q.0.len() as u64).unwrap();
                s.discarded += dropped;
                let radio = &s.b.radio;
                s.live.retain(|t| radio.txq(*t).is_some());
                s.b.txqs.retain(|t| radio.txq(*t).is_some());
            }
            Op::Flush => {
                s.b.radio.flush_outstanding();
                assert_eq!(s.b.radio.outstanding_msdus() + s.b.radio.held_frames(), 0);
                assert_eq!(s.b.radio.scheduler().total_pending_us(), 0, "flush leaves charges");
            }
            Op::SetAql(on) => s.b.radio.set_aql_enabled(*on),
        }
        s.check();
    }
    // Let everything finish: no faults held back, then every charge must be released.
    s.b.radio.hal_mut().hold_rings(false);
    s.b.radio.hal_mut().pause_completions(false);
    s.b.radio.set_aql_enabled(true);
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
    let mut seqs: Vec<u64> = s.b.radio.hal().done().iter().map(|(p, _)| p.seq).collect();
    assert_eq!(seqs.len() as u64 + s.discarded, s.b.next_seq, "frames handed back");
    seqs.sort_unstable();
    seqs.dedup();
    assert_eq!(seqs.len() as u64 + s.discarded, s.b.next_seq, "a frame was handed back twice");
});
