// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! Scenarios that run the real code in the kernel: the ath11k adapter
//! (`airtime_ath11k::Ath11k`) over its simulated HAL (`SimHal`), with the core's
//! FQ-CoDel txqs (`airtime_sched::FqCodelTxq`) and scheduler. Time is simulated
//! (passed in), so each run is deterministic; on success each scenario leaves
//! its measured numbers in the message, which the shim prints as a `RESULT`
//! line.

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt::Write;
use core::sync::atomic::{AtomicU64, Ordering};

use airtime_ath11k::hal::{
    Msdu, MsduTable, PpduStats, PpduStatsSource, RingId, RxPpdu, RxStatusSource, StatusSink, TclDesc, TclRings,
    TxCompletion, TxCompletionRing, TxStatus,
};
use airtime_ath11k::sim_hal::{SimConfig, SimHal};
use airtime_ath11k::{Ath11k, CompletionPass, Config, TextBuf};
use airtime_est::{Bandwidth, Rate};
use airtime_sched::fq_codel::{FqCodelConfig, FqCodelTxq, FqFrame};
use airtime_sched::traits::Frame;
use airtime_sched::{Ac, AqlLimits, Enqueue, Instant, RingErrorKind, RoundPolicy, StationId, Tid, Txq, TxqId, Weight};

use super::{Failed, Outcome, ensure};
use crate::msg::MsgBuf;

/// A frame: its length and flow hash.
#[derive(Debug)]
struct Pkt {
    len: u32,
    flow: u32,
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

/// The simulated HAL on the heap. `SimHal` is about 650 bytes by value; boxed,
/// the adapter stays about 1 KB, and building it keeps every stack frame under
/// the kernel's 2 KiB frame limit. Forwards every HAL role.
struct BoxedSim(Box<SimHal<Pkt>>);

impl core::ops::Deref for BoxedSim {
    type Target = SimHal<Pkt>;
    fn deref(&self) -> &SimHal<Pkt> {
        &self.0
    }
}

impl core::ops::DerefMut for BoxedSim {
    fn deref_mut(&mut self) -> &mut SimHal<Pkt> {
        &mut self.0
    }
}

impl TclRings for BoxedSim {
    type Error = RingErrorKind;
    fn tcl_descriptors(&self, ring: RingId) -> u32 {
        self.0.tcl_descriptors(ring)
    }
    fn tcl_free(&self, ring: RingId) -> u32 {
        self.0.tcl_free(ring)
    }
    fn tcl_enqueue(&self, ring: RingId, desc: TclDesc) -> Result<(), RingErrorKind> {
        self.0.tcl_enqueue(ring, desc)
    }
}

impl MsduTable for BoxedSim {
    type Frame = Pkt;
    fn msdu_capacity(&self, ring: RingId) -> u32 {
        self.0.msdu_capacity(ring)
    }
    fn msdu_outstanding(&self, ring: RingId) -> u32 {
        self.0.msdu_outstanding(ring)
    }
    fn msdu_insert(&self, ring: RingId, msdu: Msdu<Pkt>) -> Result<u32, Msdu<Pkt>> {
        self.0.msdu_insert(ring, msdu)
    }
    fn msdu_take(&self, ring: RingId, id: u32) -> Option<Msdu<Pkt>> {
        self.0.msdu_take(ring, id)
    }
    fn msdu_take_any(&self, ring: RingId) -> Option<(u32, Msdu<Pkt>)> {
        self.0.msdu_take_any(ring)
    }
}

impl TxCompletionRing for BoxedSim {
    fn reap_tx_completion(&self) -> Option<TxCompletion> {
        self.0.reap_tx_completion()
    }
}

impl StatusSink for BoxedSim {
    type Frame = Pkt;
    fn tx_status(&self, frame: Pkt, status: TxStatus) {
        self.0.tx_status(frame, status);
    }
    fn tx_completed(&self, frame: Pkt, completion: &TxCompletion) {
        self.0.tx_completed(frame, completion);
    }
}

impl PpduStatsSource for BoxedSim {
    fn next_ppdu_stats(&self) -> Option<PpduStats> {
        self.0.next_ppdu_stats()
    }
}

impl RxStatusSource for BoxedSim {
    fn next_rx_ppdu(&self) -> Option<RxPpdu> {
        self.0.next_rx_ppdu()
    }
}

/// What a txq shows the bench: the adapter's txqs live in the core's txq table, where
/// only a turn reaches a queue, so each txq publishes its counts after every change.
#[derive(Debug, Default)]
struct TxqSeen {
    /// Frames its turns moved in from the intake.
    pulled: AtomicU64,
    /// Frames in its queue.
    backlog: AtomicU64,
    /// Frames it dropped (CoDel, limits).
    dropped: AtomicU64,
}

/// An FQ-CoDel txq that publishes its counts in a [`TxqSeen`].
#[derive(Debug)]
struct CountedTxq {
    inner: FqCodelTxq<Pkt>,
    seen: Arc<TxqSeen>,
}

impl CountedTxq {
    fn publish(&self) {
        let s = self.inner.stats();
        self.seen.backlog.store(s.backlog_packets, Ordering::Relaxed);
        self.seen.dropped.store(s.enqueued.saturating_sub(s.tx_packets + s.backlog_packets), Ordering::Relaxed);
    }
}

impl Txq for CountedTxq {
    type Frame = Pkt;
    type Error = core::convert::Infallible;
    fn dequeue(&mut self, now: Instant) -> Result<Option<Pkt>, Self::Error> {
        let frame = self.inner.dequeue(now);
        self.publish();
        frame
    }
    fn peek_len(&self) -> Option<u32> {
        self.inner.peek_len()
    }
    fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }
    fn is_known_empty(&self) -> bool {
        self.inner.is_known_empty()
    }
}

impl Enqueue for CountedTxq {
    fn enqueue(&mut self, frame: Pkt, enqueued: Instant) {
        Enqueue::enqueue(&mut self.inner, frame, enqueued);
        self.seen.pulled.fetch_add(1, Ordering::Relaxed);
        self.publish();
    }
}

type Radio = Ath11k<BoxedSim, CountedTxq>;

/// Frame length used everywhere, bytes.
const LEN: u32 = 1500;

/// The airtime the simulated firmware reports per frame, us, and the rate it
/// reports (VHT MCS 3, one stream, 20 MHz: about 500 us for 1500 bytes), so the
/// adapter prices frames from the second round on.
const FRAME_AIRTIME_US: u32 = 500;

fn peer_rate() -> Option<Rate> {
    Rate::vht(3, 1, Bandwidth::Mhz20, false).ok()
}

/// The adapter over the simulated HAL, a clock, and the frame books.
struct Bench {
    radio: Box<Radio>,
    now: Instant,
    txqs: Vec<TxqId>,
    /// Per txq of `txqs`: what it shows, and the frames the bench enqueued into it.
    seen: Vec<(Arc<TxqSeen>, u64)>,
    /// Frames accepted by a txq.
    enqueued: u64,
    /// Frames handed back by the adapter, per status.
    done: [u64; TxStatus::COUNT],
    /// Lengths of the frames `top_up` enqueues, in turn.
    lens: &'static [u32],
}

impl Bench {
    fn new(msg: &mut MsgBuf<'_>, config: Config, sim: SimConfig) -> Result<Bench, Failed> {
        let sim = crate::boxed::try_box_with(move || Ok::<_, ()>(SimHal::new(sim)));
        let Ok(Ok(sim)) = sim else {
            ensure!(msg, false, "no memory for the simulated HAL");
            return Err(Failed);
        };
        let radio = crate::boxed::try_box_with(move || crate::boxed::new_out_of_line(BoxedSim(sim), config));
        let radio = match radio {
            Ok(Ok(radio)) => radio,
            Ok(Err(e)) => {
                ensure!(msg, false, "Ath11k::new failed: {e:?}");
                return Err(Failed);
            }
            Err(e) => {
                ensure!(msg, false, "no memory for the radio: {e:?}");
                return Err(Failed);
            }
        };
        Ok(Bench {
            radio,
            now: Instant::from_millis(1),
            txqs: Vec::new(),
            seen: Vec::new(),
            enqueued: 0,
            done: [0; TxStatus::COUNT],
            lens: &[LEN],
        })
    }

    /// A station with peer id `peer` and one BE txq (TID 0).
    fn station(&mut self, msg: &mut MsgBuf<'_>, peer: u16, weight: u16) -> Result<(StationId, TxqId), Failed> {
        let sta = Weight::new(weight).ok().and_then(|w| self.radio.add_station(peer, w).ok());
        ensure!(msg, sta.is_some(), "station {peer} (weight {weight}) refused");
        let Some(sta) = sta else { return Err(Failed) };
        let txq = self.be_txq(msg, Some(sta))?;
        self.radio.hal().set_peer(peer, FRAME_AIRTIME_US, peer_rate());
        Ok((sta, txq))
    }

    /// A BE txq (TID 0) for `sta`, or a station-less one (a vif's multicast queue).
    fn be_txq(&mut self, msg: &mut MsgBuf<'_>, sta: Option<StationId>) -> Result<TxqId, Failed> {
        let mut fq = FqCodelConfig::default();
        fq.flows = 16;
        fq.keep_dropped = false;
        let seen = Arc::new(TxqSeen::default());
        let txq = FqCodelTxq::new(fq)
            .ok()
            .and_then(|inner| self.radio.add_txq(sta, Tid::BE, CountedTxq { inner, seen: seen.clone() }).ok());
        ensure!(msg, txq.is_some(), "txq of {sta:?} refused");
        let Some(txq) = txq else { return Err(Failed) };
        self.txqs.push(txq);
        self.seen.push((seen, 0));
        Ok(txq)
    }

    /// Forgets txq `txq` (removed): its frames are no longer the bench's to count.
    fn forget(&mut self, txq: TxqId) -> u64 {
        let Some(i) = self.txqs.iter().position(|t| *t == txq) else { return 0 };
        self.txqs.remove(i);
        let (_, accepted) = self.seen.remove(i);
        accepted
    }

    /// Tops `txq` up to `level` queued frames and wakes it.
    fn top_up(&mut self, txq: TxqId, level: u64) {
        let now = self.now;
        let (lens, base) = (self.lens, self.enqueued);
        let mut added = 0;
        if let Some(i) = self.txqs.iter().position(|t| *t == txq) {
            let mut queued = self.queued_in(i);
            while queued < level {
                let flow = (added as u32).wrapping_mul(0x9e37_79b9);
                let len = lens.get(((base + added) % lens.len().max(1) as u64) as usize).copied().unwrap_or(LEN);
                if self.radio.enqueue(txq, Pkt { len, flow }, now).is_err() {
                    break;
                }
                if let Some((_, accepted)) = self.seen.get_mut(i) {
                    *accepted += 1;
                }
                added += 1;
                queued += 1;
            }
        }
        self.enqueued += added;
        let _ = self.radio.wake_tx_queue(txq, 0, now);
    }

    /// Moves time on, lets the firmware work, runs one completion pass and
    /// takes the PPDU stats; forgets the frames handed back (counting them).
    fn step(&mut self, dt_us: u64, budget: u32) -> CompletionPass {
        self.now = self.now.add_micros(dt_us);
        self.radio.hal().advance(self.now);
        let pass = self.radio.poll_tx_completions(budget, 0, self.now);
        self.radio.poll_airtime_reports(64, self.now);
        self.collect();
        pass
    }

    fn collect(&mut self) {
        for (_, status) in self.radio.hal().take_done() {
            if let Some(n) = self.done.get_mut(status.index()) {
                *n += 1;
            }
        }
    }

    fn done_total(&self) -> u64 {
        self.done.iter().sum()
    }

    /// Frames in txq `i` of `txqs`: its queue, and its intake (enqueued, not pulled).
    fn queued_in(&self, i: usize) -> u64 {
        self.seen.get(i).map_or(0, |(seen, accepted)| {
            seen.backlog.load(Ordering::Relaxed) + accepted.saturating_sub(seen.pulled.load(Ordering::Relaxed))
        })
    }

    /// Frames queued in the txqs, and frames the txqs dropped (CoDel, limits).
    fn queued_and_dropped(&self) -> (u64, u64) {
        (0..self.seen.len()).fold((0, 0), |(q, d), i| {
            let dropped = self.seen.get(i).map_or(0, |(seen, _)| seen.dropped.load(Ordering::Relaxed));
            (q + self.queued_in(i), d + dropped)
        })
    }

    /// Every frame accepted is in exactly one place: a txq, dropped by it, a
    /// retry slot, the hardware, or handed back.
    fn accounted(&self) -> (u64, u64) {
        let (queued, dropped) = self.queued_and_dropped();
        let places = queued
            + dropped
            + u64::from(self.radio.held_frames())
            + u64::from(self.radio.outstanding_msdus())
            + self.done_total();
        (self.enqueued, places)
    }

    /// Steps until nothing is queued, held or in the hardware; false if that
    /// does not happen within `max_steps`.
    fn drain(&mut self, max_steps: u32) -> bool {
        for _ in 0..max_steps {
            let (queued, _) = self.queued_and_dropped();
            if queued == 0 && self.radio.held_frames() == 0 && self.radio.outstanding_msdus() == 0 {
                return true;
            }
            self.step(500, 64);
            if self.radio.outstanding_msdus() == 0 {
                for id in self.txqs.clone() {
                    let _ = self.radio.wake_tx_queue(id, 0, self.now);
                }
            }
        }
        false
    }

    fn pending(&self, sta: StationId) -> u32 {
        self.radio.scheduler().station_pending_us(sta, Ac::Be).unwrap_or(u32::MAX)
    }

    fn check(&mut self, msg: &mut MsgBuf<'_>) -> Outcome {
        let checked = self.radio.check_invariants();
        ensure!(msg, checked.is_ok(), "scheduler invariant broken: {:?}", checked.err());
        let s = self.radio.dp_stats();
        ensure!(
            msg,
            s.release_errors == 0 && s.unknown_msdu == 0 && s.msdu_table_errors == 0,
            "release errors {}, unknown msdus {}, table errors {}",
            s.release_errors,
            s.unknown_msdu,
            s.msdu_table_errors
        );
        Ok(())
    }
}

/// The median (the upper one of an even count): the smallest sample with more than
/// half of the samples at or below it, which is where a sort would put it. Quadratic,
/// for a few hundred samples, and without core's sort: its panic on an inconsistent
/// order is outside the Rust-for-Linux module, which also runs this scenario, so the
/// kernel's objtool would not know that the sort ends there.
fn median(samples: &[u32]) -> u32 {
    let half = samples.len() / 2;
    let at_or_below = |v: u32| samples.iter().filter(|&&x| x <= v).count();
    samples.iter().copied().filter(|&v| at_or_below(v) > half).min().unwrap_or(0)
}

/// Frames finish with every status the hardware reports (acked, not acked,
/// firmware drop, TTL, removed, descriptor error); each releases its charge, so
/// after the drain every station's pending airtime is 0 and every frame was
/// handed back exactly once.
pub(super) fn aql_pending_returns_to_zero(msg: &mut MsgBuf<'_>) -> Outcome {
    let mut b = Bench::new(msg, Config::default(), SimConfig::default())?;
    let (a, qa) = b.station(msg, 1, 256)?;
    let (c, qc) = b.station(msg, 2, 256)?;
    let script: Vec<TxStatus> = (0..600).map(|i| TxStatus::ALL[i % TxStatus::COUNT]).collect();
    b.radio.hal().script_statuses(script);
    let mut peak = 0;
    for _ in 0..40 {
        b.top_up(qa, 16);
        b.top_up(qc, 16);
        b.step(250, 64);
        peak = peak.max(b.radio.scheduler().total_pending_us());
    }
    ensure!(msg, peak > 0, "nothing was ever pending");
    ensure!(msg, b.drain(1000), "did not drain: {:?} frames accounted", b.accounted());
    b.check(msg)?;
    let (pa, pc, total) = (b.pending(a), b.pending(c), b.radio.scheduler().total_pending_us());
    ensure!(msg, pa == 0 && pc == 0 && total == 0, "pending after drain: {pa} + {pc} us, total {total} us");
    let (enq, places) = b.accounted();
    ensure!(msg, enq == places && b.done_total() == enq, "{enq} frames enqueued, {places} accounted");
    ensure!(msg, b.done.iter().all(|n| *n > 0), "a status never occurred: {:?}", b.done);
    let _ = write!(msg, "{enq} frames, statuses {:?}, peak pending {peak} us, after drain 0 us", b.done);
    Ok(())
}

/// One saturated station: its pending airtime never exceeds its high AQL
/// limit by more than one frame's charge (a station may send while below
/// the limit). Reports the median reading, as the station's `aql` file
/// would show it.
pub(super) fn aql_limit_bounds_inflight(msg: &mut MsgBuf<'_>) -> Outcome {
    let mut b = Bench::new(msg, Config::default(), SimConfig::default())?;
    // Mixed lengths, so that charges do not divide the limit.
    b.lens = &[1500, 1100, 700, 1300, 300];
    let (sta, txq) = b.station(msg, 1, 256)?;
    let high = AqlLimits::DEFAULT.high_us();
    let one_frame = b.radio.config().sched.unknown_rate_charge_us;
    let mut samples = Vec::new();
    let (mut frames_in_flight, mut at) = (0, 0);
    for i in 0..200 {
        b.top_up(txq, 64);
        if i >= 20 {
            samples.push(b.pending(sta));
            (frames_in_flight, at) = (b.radio.outstanding_msdus(), b.pending(sta));
        }
        b.step(250, 64);
        if i >= 20 {
            samples.push(b.pending(sta));
        }
    }
    b.check(msg)?;
    let max = samples.iter().copied().max().unwrap_or(0);
    let med = median(&samples);
    ensure!(msg, max < high + one_frame, "pending {max} us above limit {high} + one frame {one_frame} us");
    ensure!(msg, med > high / 2, "median pending {med} us: the station was not saturated");
    let charge = at.checked_div(frames_in_flight).unwrap_or(0);
    let _ = write!(
        msg,
        "BE pending median {med} us, max {max} us over {} samples (limit {high} us; last {frames_in_flight} frames in flight, {charge} us on average)",
        samples.len()
    );
    Ok(())
}

/// Two saturated stations with weights 1024 and 256 on a radio with
/// TX_NO_PUSHBACK: their AQL limits scale by weight/256, so their in-flight
/// airtime (and airtime on the air) is about 4:1.
pub(super) fn weights_reach_air_with_no_pushback(msg: &mut MsgBuf<'_>) -> Outcome {
    let mut b = Bench::new(msg, Config::default(), SimConfig::default())?;
    ensure!(msg, b.radio.config().tx_no_pushback, "TX_NO_PUSHBACK is not on by default");
    let (heavy, qh) = b.station(msg, 1, 1024)?;
    let (light, ql) = b.station(msg, 2, 256)?;
    let (mut sum_h, mut sum_l) = (0u64, 0u64);
    let air = |b: &Bench, s| b.radio.scheduler().station_airtime(s).map_or(0, |a| a.tx_us);
    let (mut air_h0, mut air_l0) = (0, 0);
    for i in 0..240 {
        b.top_up(qh, 96);
        b.top_up(ql, 96);
        if i == 40 {
            (air_h0, air_l0) = (air(&b, heavy), air(&b, light));
        }
        if i >= 40 {
            sum_h += u64::from(b.pending(heavy));
            sum_l += u64::from(b.pending(light));
        }
        b.step(250, 64);
    }
    b.check(msg)?;
    let inflight_permille = (sum_h * 1000).checked_div(sum_l).unwrap_or(0);
    let (ah, al) = (air(&b, heavy) - air_h0, air(&b, light) - air_l0);
    let air_permille = (ah * 1000).checked_div(al).unwrap_or(0);
    ensure!(
        msg,
        (3500..=4500).contains(&inflight_permille),
        "in-flight ratio {inflight_permille} permille, want 4000 +/- 500"
    );
    ensure!(msg, (3500..=4500).contains(&air_permille), "airtime ratio {air_permille} permille, want 4000 +/- 500");
    let _ = write!(
        msg,
        "in-flight ratio {}.{:03}:1, airtime ratio {}.{:03}:1 ({ah} us : {al} us)",
        inflight_permille / 1000,
        inflight_permille % 1000,
        air_permille / 1000,
        air_permille % 1000
    );
    Ok(())
}

/// A burst of 300 completions reaches the NAPI poll at once: each pass takes
/// at most its budget of 64 (the first ones exactly 64), the rest wait for
/// the next pass, and every frame completes.
pub(super) fn napi_budget_bounds_a_pass(msg: &mut MsgBuf<'_>) -> Outcome {
    let mut config = Config::default();
    config.aql = false;
    let mut b = Bench::new(msg, config, SimConfig::default())?;
    let (_, q1) = b.station(msg, 1, 256)?;
    let (_, q2) = b.station(msg, 2, 256)?;
    let (_, q3) = b.station(msg, 3, 256)?;
    b.radio.hal().pause_completions(true);
    for q in [q1, q2, q3] {
        b.top_up(q, 100);
    }
    b.radio.hal().advance(b.now);
    ensure!(
        msg,
        b.radio.outstanding_msdus() == 300,
        "{} frames in the hardware, want 300",
        b.radio.outstanding_msdus()
    );
    b.now = b.now.add_micros(5000);
    b.radio.hal().pause_completions(false);
    b.radio.hal().advance(b.now);
    let burst = b.radio.hal().completions_waiting();
    ensure!(msg, burst == 300, "burst of {burst} completions, want 300");
    let mut passes: Vec<u32> = Vec::new();
    while b.radio.hal().completions_waiting() > 0 && passes.len() < 20 {
        let before = b.radio.hal().completions_waiting();
        let pass = b.radio.poll_tx_completions(64, 0, b.now);
        b.collect();
        let after = b.radio.hal().completions_waiting();
        ensure!(msg, pass.work_done <= 64, "a pass did {} with budget 64", pass.work_done);
        ensure!(
            msg,
            before - after == pass.work_done,
            "pass reaped {} but reported {}",
            before - after,
            pass.work_done
        );
        passes.push(pass.work_done);
    }
    ensure!(msg, passes == [64, 64, 64, 64, 44], "passes {passes:?}, want [64, 64, 64, 64, 44]");
    ensure!(msg, b.done_total() == 300, "{} frames completed, want 300", b.done_total());
    b.check(msg)?;
    let _ = write!(msg, "burst 300, passes {passes:?} at budget 64");
    Ok(())
}

/// Small rings that fill up, a firmware that stops taking descriptors, and
/// enqueues refused with -ENOSPC, -ENOMEM and other errors: every frame is at
/// every step in exactly one place, and after the drain all were handed back.
pub(super) fn ring_full_loses_no_frame(msg: &mut MsgBuf<'_>) -> Outcome {
    let mut sim = SimConfig::default();
    sim.tcl_ring_size = 8;
    sim.msdu_capacity = 24;
    sim.fw_take_per_advance = 4;
    let mut b = Bench::new(msg, Config::default(), sim)?;
    let (_, q1) = b.station(msg, 1, 256)?;
    let (_, q2) = b.station(msg, 2, 512)?;
    let faults = [RingErrorKind::Full, RingErrorKind::OutOfMemory, RingErrorKind::Other];
    let mut full_rounds = 0u32;
    for i in 0..120u32 {
        if i % 10 == 0 {
            b.radio.hal().fail_enqueues(RingId::for_cpu(0), faults);
        }
        b.radio.hal().hold_rings(i % 20 < 5);
        b.top_up(q1, 32);
        b.top_up(q2, 32);
        if !b.radio.blocked_acs().is_empty() {
            full_rounds += 1;
        }
        b.step(250, 16);
        let (enq, places) = b.accounted();
        ensure!(msg, enq == places, "step {i}: {enq} frames enqueued, {places} accounted");
    }
    b.radio.hal().hold_rings(false);
    ensure!(msg, b.drain(2000), "did not drain: {:?}", b.accounted());
    b.check(msg)?;
    let s = b.radio.dp_stats();
    let (enq, places) = b.accounted();
    let (_, dropped) = b.queued_and_dropped();
    ensure!(msg, enq == places && b.done_total() + dropped == enq, "{enq} enqueued, {places} accounted");
    ensure!(msg, full_rounds > 0 && s.held_for_retry > 0, "the ring never filled ({full_rounds}) or nothing was held");
    ensure!(msg, b.radio.scheduler().total_pending_us() == 0, "pending airtime left after the drain");
    let _ = write!(
        msg,
        "{enq} frames, {} completed, {dropped} dropped by fq-codel, {full_rounds} rounds ended blocked, {} held for retry, ring-full {:?}, oom {:?}",
        b.done_total(),
        s.held_for_retry,
        s.ring_full,
        s.out_of_memory
    );
    Ok(())
}

/// The round counters of a saturated station whose station limits are above
/// the per-AC PHY limit, so BE alternates between open and closed rounds.
fn closing_rounds(msg: &mut MsgBuf<'_>, policy: RoundPolicy) -> Result<(u64, u64, u64), Failed> {
    let mut config = Config::default();
    config.sched.round_policy = policy;
    let mut b = Bench::new(msg, config, SimConfig::default())?;
    let (sta, txq) = b.station(msg, 1, 256)?;
    let raised = AqlLimits::new(30_000, 60_000).map_err(|_| Failed)?;
    ensure!(msg, b.radio.set_station_limits(sta, Ac::Be, raised).is_ok(), "station limits refused");
    for _ in 0..200 {
        b.top_up(txq, 64);
        b.step(250, 64);
    }
    b.check(msg)?;
    let c = b.radio.scheduler().ac_counters(Ac::Be);
    Ok((c.closed_rounds, c.skipped_selections, b.done_total()))
}

/// The seed's round bug: closing an AC reset its round number, so the txq
/// served in the round before the close was skipped once the AC reopened.
/// With the default policy (keep the number) no selection is skipped; with
/// `ResetOnClose` (the bug, reproduced) they are.
pub(super) fn round_fix_no_skip(msg: &mut MsgBuf<'_>) -> Outcome {
    let (closed, skipped, frames) = closing_rounds(msg, RoundPolicy::default())?;
    let (closed_bug, skipped_bug, frames_bug) = closing_rounds(msg, RoundPolicy::ResetOnClose)?;
    ensure!(msg, closed > 0 && closed_bug > 0, "the AC never closed ({closed}, {closed_bug})");
    ensure!(msg, skipped == 0, "default policy skipped {skipped} selections ({closed} closed rounds)");
    ensure!(msg, skipped_bug > 0, "ResetOnClose skipped nothing in {closed_bug} closed rounds");
    let _ = write!(
        msg,
        "KeepNumber: {closed} closed rounds, {skipped} skipped, {frames} frames; ResetOnClose: {closed_bug} closed, {skipped_bug} skipped, {frames_bug} frames"
    );
    Ok(())
}

/// The number after `key` at the start of a line of `text` (e.g. "BE\t\t" in
/// the `aql` file, "TX: " in the `airtime` file).
fn field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let rest = line.get(key.len()..)?.trim_start();
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    rest.get(..digits)?.parse().ok()
}

/// The station `aql` and `airtime` files and the `soc_dp_stats` file are
/// produced in the kernel, fit a page, and parse back to the numbers the
/// scheduler and the adapter hold.
pub(super) fn debugfs_text(msg: &mut MsgBuf<'_>) -> Outcome {
    let mut b = Bench::new(msg, Config::default(), SimConfig::default())?;
    let (sta, txq) = b.station(msg, 1, 512)?;
    for _ in 0..10 {
        b.top_up(txq, 32);
        b.step(250, 64);
    }
    b.top_up(txq, 32);
    let mut page = alloc::vec![0u8; 4096];

    let mut text = TextBuf::new(&mut page);
    ensure!(msg, b.radio.write_station_aql(sta, &mut text).is_ok(), "aql text refused");
    let (n, truncated) = (text.len(), text.truncated());
    let aql = core::str::from_utf8(page.get(..n).unwrap_or(&[])).unwrap_or("");
    let pending = b.pending(sta);
    ensure!(msg, !truncated && aql.starts_with("AC\t\tAQL pending"), "aql text: {aql:?}");
    ensure!(
        msg,
        field(aql, "BE\t\t") == Some(u64::from(pending)),
        "aql BE reads {:?}, pending {pending}",
        field(aql, "BE\t\t")
    );
    ensure!(msg, pending > 0, "nothing pending");
    let aql_len = n;

    let mut text = TextBuf::new(&mut page);
    ensure!(msg, b.radio.write_station_airtime(sta, &mut text).is_ok(), "airtime text refused");
    let n = text.len();
    let airtime = core::str::from_utf8(page.get(..n).unwrap_or(&[])).unwrap_or("");
    let tx = b.radio.scheduler().station_airtime(sta).map_or(0, |a| a.tx_us);
    ensure!(msg, field(airtime, "Weight: ") == Some(512), "airtime text: {airtime:?}");
    ensure!(
        msg,
        field(airtime, "TX: ") == Some(tx) && tx > 0,
        "airtime TX reads {:?}, want {tx}",
        field(airtime, "TX: ")
    );
    ensure!(msg, field(airtime, "RX: ") == Some(0), "airtime RX: {airtime:?}");
    let airtime_len = n;

    let mut text = TextBuf::new(&mut page);
    b.radio.write_dp_stats(&mut text);
    let n = text.len();
    let dp = core::str::from_utf8(page.get(..n).unwrap_or(&[])).unwrap_or("");
    let out = b.radio.outstanding_msdus();
    let read = field(dp, "Pending tx MSDUs total: ");
    ensure!(msg, read == Some(u64::from(out)) && out > 0, "dp stats pending reads {read:?}, want {out}");
    let _ = write!(
        msg,
        "aql {aql_len} bytes (BE {pending} us), airtime {airtime_len} bytes (TX {tx} us), dp_stats {n} bytes ({out} pending MSDUs)"
    );
    Ok(())
}

/// The multicast AQL budget (newer mainline's): a station-less txq's frames priced
/// at 6 Mbit/s (a vif's lowest basic rate) are charged to BE's multicast budget, so
/// that budget bounds them in flight (never more than it plus one frame), apart
/// from the stations' pending airtime (0 here); all of it comes back to 0.
pub(super) fn multicast_budget_bounds_inflight(msg: &mut MsgBuf<'_>) -> Outcome {
    const LIMIT_US: u32 = 6000;
    let mut b = Bench::new(msg, Config::default(), SimConfig::default())?;
    let mc = b.be_txq(msg, None)?;
    let rate = Rate::legacy_ofdm(60).ok();
    ensure!(msg, rate.is_some(), "no 6 Mbit/s rate");
    b.radio.set_multicast_rate(rate);
    b.radio.scheduler().set_multicast_limit_us(Ac::Be, LIMIT_US);
    let per_frame = airtime_sched::price_from_rate(rate, LEN, Ac::Be).unwrap_or(0);
    ensure!(msg, per_frame > 0, "6 Mbit/s prices {LEN} bytes at 0 us");
    let (mut peak, mut stations_peak) = (0u32, 0u32);
    for _ in 0..60 {
        b.top_up(mc, 16);
        let pending = b.radio.scheduler().multicast_pending_us(Ac::Be);
        ensure!(msg, pending < LIMIT_US + per_frame, "{pending} us of multicast in flight, budget {LIMIT_US} us");
        let by_txq = b.radio.scheduler().txq_aql_pending_us(mc).unwrap_or(u32::MAX);
        ensure!(msg, by_txq == pending, "the txq's pending {by_txq} us, the AC's {pending} us");
        peak = peak.max(pending);
        stations_peak = stations_peak.max(b.radio.scheduler().total_pending_us());
        b.step(250, 64);
    }
    ensure!(msg, peak + per_frame > LIMIT_US, "the budget was never reached (peak {peak} us)");
    ensure!(msg, stations_peak == 0, "multicast counted as stations' airtime: {stations_peak} us");
    ensure!(msg, b.drain(1000), "did not drain: {:?} frames accounted", b.accounted());
    b.check(msg)?;
    let left = b.radio.scheduler().multicast_pending_us(Ac::Be);
    ensure!(msg, left == 0, "{left} us of multicast pending after the drain");
    let (enq, places) = b.accounted();
    ensure!(msg, enq == places, "{enq} frames enqueued, {places} accounted");
    let _ = write!(msg, "{enq} frames of {per_frame} us, budget {LIMIT_US} us, peak {peak} us in flight, 0 after");
    Ok(())
}

/// A removed station with frames in the hardware: its txq comes back at once (its
/// queued frames to the driver), it is reported drained only once every frame it
/// had in flight completed, and exactly once; nothing is lost on the way.
pub(super) fn departed_station_drains_once(msg: &mut MsgBuf<'_>) -> Outcome {
    let mut b = Bench::new(msg, Config::default(), SimConfig::default())?;
    let (a, qa) = b.station(msg, 1, 256)?;
    let (_, qb) = b.station(msg, 2, 256)?;
    for _ in 0..4 {
        b.top_up(qa, 24);
        b.top_up(qb, 24);
        b.step(250, 64);
    }
    let (mut released, mut purged, mut dropped, mut drained) = (0u32, 0u64, 0u64, Vec::new());
    let departing = b.radio.remove_station_with(
        a,
        |q| {
            // The driver's purge of the txq it gets back.
            let s = q.inner.stats();
            released += 1;
            purged += s.backlog_packets;
            dropped += s.enqueued.saturating_sub(s.tx_packets + s.backlog_packets);
        },
        |peer| drained.push(peer),
    );
    ensure!(msg, departing.is_ok(), "remove_station: {:?}", departing.err());
    let Ok(departing) = departing else { return Err(Failed) };
    let in_flight = departing.total_pending_us(b.radio.scheduler());
    ensure!(msg, in_flight > 0, "station 1 had nothing in flight at its removal");
    ensure!(msg, released == 1 && drained.is_empty(), "at removal: {released} txqs back, drained {drained:?}");
    let reaped = b.radio.reap_departed(|peer| drained.push(peer));
    ensure!(msg, reaped == 0, "reported drained with {in_flight} us in flight");
    b.forget(qa);
    let mut steps = 0;
    while !departing.is_drained(b.radio.scheduler()) && steps < 1000 {
        b.step(500, 64);
        steps += 1;
    }
    let reaped = b.radio.reap_departed(|peer| drained.push(peer));
    ensure!(msg, reaped == 1 && drained.as_slice() == [1], "after {steps} steps: reaped {reaped}, drained {drained:?}");
    let again = b.radio.reap_departed(|peer| drained.push(peer)) + b.radio.reap_removed(|_| released += 1);
    ensure!(msg, again == 0 && released == 1, "reported again: {again}, {released} txqs back");
    ensure!(msg, b.drain(1000), "did not drain: {:?} frames accounted", b.accounted());
    b.check(msg)?;
    let (enq, places) = b.accounted();
    ensure!(
        msg,
        enq == places + purged + dropped,
        "{enq} frames enqueued, {places} accounted + {purged} purged + {dropped} dropped with the txq"
    );
    let _ = write!(
        msg,
        "{in_flight} us in flight at removal, drained after {steps} steps, reported once; {purged} frames purged with its txq"
    );
    Ok(())
}
