//! A pull-mode driver (ath10k's "pull-push" mode), written from the crate's docs: the
//! firmware pulls frames, and the host pushes the rest with rounds.
//!
//! * The **firmware** (simulated) holds each frame it is given for a fixed time, then
//!   completes it with a tx status (the rate it used, its tries). Every couple of
//!   milliseconds it sends a *fetch indication*: records naming a (station, TID) and
//!   how many frames and bytes it wants from that txq, as ath10k's
//!   `HTT_T2H_MSG_TYPE_TX_FETCH_IND`. Unasked, the host may push only while the
//!   firmware holds fewer than a few dozen frames (ath10k's `num_push_allowed`).
//! * The **wake thread** is mac80211's `wake_tx_queue`: it enqueues frames for the
//!   stations ([`TxqTable::enqueue`], which wakes the txq) and runs a push round on
//!   each AC it enqueued on.
//! * The **firmware-event thread** is the HTT interrupt's bottom half: it completes
//!   the frames the firmware finished ([`Scheduler::complete_frame`]: releases the AQL
//!   charge, registers the airtime) and runs a round on each AC it reaped, and it
//!   answers each fetch record as `ath10k_htt_rx_tx_fetch_ind` does: the txq's turn
//!   through [`TxqTable::may_transmit`], served within the record's budget with
//!   [`TxqTurn::serve`] — and then, because that turn was taken outside a round
//!   beside concurrent rounds, a round on the AC if the txq may still have frames
//!   ([`TxqTable::may_have_frames`], the crate docs' recipe).
//! * The **control thread** removes stations with frames queued and in flight, adds
//!   new ones (the scheduler reuses a station slot, and the driver the firmware's peer
//!   index, only once the departed station drained: [`DepartingStation`]) and changes
//!   weights ([`Scheduler::set_weight`]).
//!
//! While it runs it checks that no station's pending airtime on an AC exceeds its AQL
//! limit by more than one frame, and that no frame is settled twice (completed, handed
//! back by a removal, or dropped by FQ-CoDel). At the end the producers stop and the radio drains with no further
//! wake: firmware events and the rounds the docs call for only. Then no airtime may be
//! pending, no txq may hold frames (a lost wake), and every frame must be accounted for.
//! Run it with
//! `cargo run --release -p airtime-sched --example pull_mode_driver [-- MILLISECONDS]`
//! (1000 ms of churn by default); it exits non-zero if a check fails.
//!
//! [`TxqTurn::serve`]: airtime_sched::TxqTurn::serve
//! [`DepartingStation`]: airtime_sched::DepartingStation

use airtime_est::{Bandwidth, Rate};
use airtime_sched::driver_loop::{RoundEnd, RoundReport, StationTable};
use airtime_sched::fq_codel::{DropReason, FqCodelConfig, FqCodelTxq, FqFrame};
use airtime_sched::traits::{PushError, RingErrorKind, StationErrorKind, price_from_rate};
use airtime_sched::txqs::{EnqueueError, RemovedTxq, TurnBudget};
use airtime_sched::{
    Ac, Charge, Config, DepartingStation, Frame, FrameStatus, Instant, MayTransmit, Refusal, Ring, Scheduler, Station,
    StationId, Tid, TxqId, TxqTable, TxqTurn, Weight,
};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Station slots (the firmware's peer indices).
const MAX_STATIONS: usize = 12;
/// Stations associated at a time (fewer than the slots, so that slots are reused).
const LIVE_STATIONS: usize = 8;
/// The TIDs each station has a txq on: one per AC, so one server at a time per
/// (station, AC).
const TIDS: [Tid; 2] = [Tid::BE, Tid::VI];
/// The ACs of `TIDS`.
const ACS: [Ac; 2] = [Ac::Be, Ac::Vi];
/// Frames the firmware can hold (its MSDU ids).
const FW_SLOTS: usize = 192;
/// Frames the host may have pushed unasked into the firmware (ath10k's
/// `num_push_allowed` in push-pull mode): beyond it, only fetched frames go in.
const PUSH_ALLOWED: usize = 48;
/// How long the firmware holds a frame before it completes it, in us.
const HOLD_US: u64 = 2_000;
/// How often the firmware sends a fetch indication, in us.
const FETCH_PERIOD_US: u64 = 2_000;
/// Records per fetch indication.
const FETCH_RECORDS: usize = 4;
/// Frames the stack lets the driver hold before it stops offering more.
const FRAMES_IN_DRIVER: u64 = 768;
/// Most frames a run may enqueue (the size of the fate table).
const MAX_FRAMES: usize = 1 << 22;

/// Fates of a frame, in the fate table.
const FATE_NONE: u8 = 0;
const FATE_QUEUED: u8 = 1;
const FATE_COMPLETED: u8 = 2;
const FATE_HANDED_BACK: u8 = 3;
const FATE_DROPPED: u8 = 4;

/// A tiny xorshift generator (no dependency): each thread has its own.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A frame: a unique id (for the at-most-once check), its station, length and flow.
struct Packet {
    id: u64,
    station: StationId,
    len: u32,
    flow: u32,
}

impl Frame for Packet {
    fn len_bytes(&self) -> u32 {
        self.len
    }
}

impl FqFrame for Packet {
    fn flow_hash(&self) -> u32 {
        self.flow
    }
}

/// The driver's peer slot, indexed by `StationId::index` (the firmware's peer index),
/// read by every thread without a lock (a kernel driver's RCU-protected peer table).
struct Peer {
    /// Raw `StationId` of the occupant, `u64::MAX` if none.
    id: AtomicU64,
    /// Its VHT80 MCS (rate control's last report).
    mcs: AtomicU32,
    /// Raw `TxqId` of its txq on each of `TIDS`, `u64::MAX` if none: how a fetch
    /// record's (peer, TID) finds its txq.
    txqs: [AtomicU64; TIDS.len()],
}

impl Station for Peer {
    type Error = StationErrorKind;

    fn station_id(&self) -> StationId {
        StationId::from_raw(self.id.load(Ordering::Acquire))
    }

    fn last_tx_rate(&self) -> Option<Rate> {
        Rate::vht(self.mcs.load(Ordering::Relaxed) as u8, 1, Bandwidth::Mhz80, false).ok()
    }

    fn expected_airtime_us(&self, frame_len: u32, ac: Ac) -> Result<u32, StationErrorKind> {
        price_from_rate(self.last_tx_rate(), frame_len, ac)
    }
}

struct Peers(Vec<Peer>);

impl StationTable for Peers {
    type Station = Peer;
    fn station(&self, id: StationId) -> Option<&Peer> {
        self.0.get(id.index()).filter(|p| p.id.load(Ordering::Acquire) == id.to_raw())
    }
}

/// A frame the firmware holds, with the status it will report.
struct InFlight {
    frame: Packet,
    charge: Option<Charge>,
    status: FrameStatus,
    done_at: Instant,
}

/// The firmware: the frames it holds, behind its own lock (the HTT message queue).
struct Firmware {
    state: Mutex<FwState>,
}

struct FwState {
    frames: Vec<InFlight>,
    rng: Rng,
    /// When it last took or completed a frame, for the drain's idle detection.
    last_activity: Instant,
}

/// Counters for the summary and the final checks.
#[derive(Default)]
struct Counts {
    enqueued: AtomicU64,
    completed: AtomicU64,
    handed_back: AtomicU64,
    dropped: AtomicU64,
    fetch_records: AtomicU64,
    fetch_unknown: AtomicU64,
    fetch_refused: AtomicU64,
    refused_phy: AtomicU64,
    refused_deficit: AtomicU64,
    refused_other: AtomicU64,
    fetch_answered: AtomicU64,
    fetch_answered_empty: AtomicU64,
    fetch_answered_no_frames: AtomicU64,
    fetch_frames: AtomicU64,
    recipe_rounds: AtomicU64,
    /// Frames the recipe's rounds pushed from the txq the fetch record had just served.
    recipe_same_txq: AtomicU64,
    /// Refused frames a ready loop's report handed back (docs: should not happen).
    refused_reports: AtomicU64,
    owed_rounds: AtomicU64,
    pushed_by_rounds: AtomicU64,
    removed: AtomicU64,
    added: AtomicU64,
    add_draining: AtomicU64,
    weight_changes: AtomicU64,
    index_reuses: AtomicU64,
    left_with_queued: AtomicU64,
    left_with_in_flight: AtomicU64,
    aql_checks: AtomicU64,
    max_overshoot_us: AtomicU64,
    violations: AtomicU64,
}

/// Everything the threads share.
struct Radio {
    txqs: TxqTable<FqCodelTxq<Packet>>,
    peers: Peers,
    fw: Firmware,
    /// Live stations, for the wake and control threads to pick from.
    live: Mutex<Vec<StationId>>,
    /// Removed stations, not yet seen drained by a reuse of their slot.
    departed: Mutex<Vec<DepartingStation>>,
    /// Per AC of `ACS`: a round a report asked for (`overlapped`, `TurnBudget`,
    /// `QueueBusy`) that nobody has run yet.
    owed: [AtomicBool; ACS.len()],
    /// Fate of each frame id.
    fates: Vec<AtomicU8>,
    next_frame: AtomicU64,
    /// The largest charge one frame can carry here, for the running AQL check.
    max_frame_us: u32,
    start: std::time::Instant,
    counts: Counts,
}

/// One context's port into the firmware: the `Ring` the crate's loops push into.
struct FwPort<'a> {
    radio: &'a Radio,
    now: Instant,
    /// The rate of the turn's station, looked up once per turn.
    turn_rate: Option<Rate>,
    /// Frames the firmware may hold for this port to push: `PUSH_ALLOWED` for a
    /// push round, `FW_SLOTS` for a fetch answer (whose frame and byte bounds are the
    /// turn's budget).
    limit: usize,
    frames: u64,
    /// The txq of the turn in progress, and a txq whose pushes are counted apart
    /// (`watched`): the one a fetch record just served, in the recipe's round.
    turn_txq: Option<TxqId>,
    watch: Option<TxqId>,
    watched: u64,
}

impl Ring for FwPort<'_> {
    type Frame = Packet;
    type Error = RingErrorKind;

    fn has_room(&self, _ac: Ac) -> bool {
        self.radio.fw.state.lock().map(|s| s.frames.len() < self.limit).unwrap_or(false)
    }

    fn start_turn(&mut self, txq: TxqId, station: Option<StationId>, _ac: Ac) {
        self.turn_txq = Some(txq);
        self.turn_rate = station.and_then(|s| self.radio.peers.station(s)).and_then(Station::last_tx_rate);
    }

    fn push(&mut self, frame: Packet, charge: Option<Charge>) -> Result<(), PushError<Packet, RingErrorKind>> {
        let Ok(mut fw) = self.radio.fw.state.lock() else {
            return Err(PushError { frame, charge, error: RingErrorKind::Other });
        };
        if fw.frames.len() >= self.limit {
            return Err(PushError { frame, charge, error: RingErrorKind::Full });
        }
        // The running AQL check: the frame's charge is already counted for its
        // station, so its pending airtime may be over the limit by this frame at most.
        match &charge {
            Some(c) => self.radio.check_aql(c),
            None => self.radio.violation(format!("frame {} of a station txq reached the firmware uncharged", frame.id)),
        }
        let tries = 1 + (fw.rng.below(4) == 0) as u8 + (fw.rng.below(16) == 0) as u8;
        let status = FrameStatus { len_bytes: frame.len, rate: self.turn_rate, tries, aggregated: true };
        self.frames += 1;
        self.watched += u64::from(self.watch.is_some() && self.turn_txq == self.watch);
        fw.last_activity = self.now;
        fw.frames.push(InFlight { frame, charge, status, done_at: self.now.add_micros(HOLD_US) });
        Ok(())
    }
}

impl Radio {
    fn now(&self) -> Instant {
        Instant::from_micros(self.start.elapsed().as_micros() as u64)
    }

    fn violation(&self, msg: String) {
        if self.counts.violations.fetch_add(1, Ordering::Relaxed) < 10 {
            eprintln!("CHECK FAILED: {msg}");
        }
    }

    /// A port for a push round or a fetch record's answer (`fetch`).
    fn port(&self, now: Instant, fetch: bool) -> FwPort<'_> {
        let limit = if fetch { FW_SLOTS } else { PUSH_ALLOWED };
        FwPort { radio: self, now, turn_rate: None, limit, frames: 0, turn_txq: None, watch: None, watched: 0 }
    }

    /// Pending airtime of the charge's station on its AC within its AQL limit plus one frame.
    fn check_aql(&self, charge: &Charge) {
        let Some(sta) = charge.station() else { return };
        let sched = self.txqs.scheduler();
        let (Ok(pending), Ok(limits)) =
            (sched.station_pending_us(sta, charge.ac()), sched.effective_limits(sta, charge.ac()))
        else {
            return; // removed meanwhile
        };
        self.counts.aql_checks.fetch_add(1, Ordering::Relaxed);
        let over = u64::from(pending.saturating_sub(limits.high_us()));
        self.counts.max_overshoot_us.fetch_max(over, Ordering::Relaxed);
        if pending > limits.high_us().saturating_add(charge.airtime_us()) {
            self.violation(format!(
                "station {sta} {:?}: {pending} us pending at a push, limit {} us + this frame's {} us",
                charge.ac(),
                limits.high_us(),
                charge.airtime_us()
            ));
        }
    }

    /// The same check for every live station, from the control thread (any frame).
    fn check_all_aql(&self) {
        let sched = self.txqs.scheduler();
        let live = self.live.lock().map(|l| l.clone()).unwrap_or_default();
        for sta in live {
            for ac in ACS {
                let (Ok(pending), Ok(limits)) = (sched.station_pending_us(sta, ac), sched.effective_limits(sta, ac))
                else {
                    continue;
                };
                if pending > limits.high_us().saturating_add(self.max_frame_us) {
                    self.violation(format!(
                        "station {sta} {ac:?}: {pending} us pending, limit {} us + one frame ({} us)",
                        limits.high_us(),
                        self.max_frame_us
                    ));
                }
            }
        }
    }

    /// Moves frame `id` from queued to `fate`; a second move is a double completion.
    fn settle(&self, id: u64, fate: u8) {
        let Some(cell) = self.fates.get(id as usize) else {
            return self.violation(format!("frame {id} was never issued"));
        };
        if let Err(was) = cell.compare_exchange(FATE_QUEUED, fate, Ordering::AcqRel, Ordering::Acquire) {
            self.violation(format!("frame {id} settled twice: was {was}, now {fate}"));
        }
        let counter = match fate {
            FATE_COMPLETED => &self.counts.completed,
            FATE_HANDED_BACK => &self.counts.handed_back,
            _ => &self.counts.dropped,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn in_driver(&self) -> u64 {
        let c = &self.counts;
        let out = c.completed.load(Ordering::Relaxed)
            + c.handed_back.load(Ordering::Relaxed)
            + c.dropped.load(Ordering::Relaxed);
        c.enqueued.load(Ordering::Relaxed).saturating_sub(out)
    }

    /// At each turn's end, while this context holds the txq: FQ-CoDel's drops.
    fn take_drops(&self, turn: &mut TxqTurn<'_, FqCodelTxq<Packet>>) {
        if let Some(queue) = turn.queue() {
            for dropped in queue.drain_drops() {
                self.settle(dropped.frame.id, FATE_DROPPED);
            }
        }
    }

    /// What a report asks of its caller: another round on the AC, soon.
    fn note_report(&self, ac_index: usize, report: &RoundReport<Packet>) {
        if report.overlapped || matches!(report.end, RoundEnd::TurnBudget | RoundEnd::QueueBusy) {
            if let Some(owed) = self.owed.get(ac_index) {
                owed.store(true, Ordering::Release);
            }
        }
    }

    /// A refused frame a report hands back (the table's loops keep refused frames in
    /// the txq's retry slot, so this should not happen): its charge given back, the
    /// frame enqueued again.
    fn refused_back(&self, report: RoundReport<Packet>) {
        let Some(refused) = report.refused else { return };
        self.counts.refused_reports.fetch_add(1, Ordering::Relaxed);
        if let Some(charge) = refused.charge {
            if let Err(e) = self.txqs.scheduler().give_back(charge) {
                self.violation(format!("give back of a refused frame's charge: {e}"));
            }
        }
        match self.txqs.enqueue(refused.txq, refused.frame, self.now()) {
            Ok(()) => {}
            Err(EnqueueError::Removed(back)) => back.for_each(|f| self.settle(f.id, FATE_HANDED_BACK)),
            Err(e) => e.into_frames().for_each(|f| self.settle(f.id, FATE_HANDED_BACK)),
        }
    }

    /// A host push round on `ACS[ac_index]`; returns the frames it pushed of txq
    /// `watch`.
    fn push_round(&self, ac_index: usize, watch: Option<TxqId>) -> u64 {
        let Some(&ac) = ACS.get(ac_index) else { return 0 };
        let now = self.now();
        let mut port = self.port(now, false);
        port.watch = watch;
        let report =
            self.txqs.run_round_with(ac, now, &self.peers, &mut port, TurnBudget::frames(16), |t| self.take_drops(t));
        self.counts.pushed_by_rounds.fetch_add(port.frames, Ordering::Relaxed);
        self.note_report(ac_index, &report);
        self.refused_back(report);
        port.watched
    }

    /// The rounds earlier reports asked for.
    fn owed_rounds(&self) {
        for (i, owed) in self.owed.iter().enumerate() {
            if owed.swap(false, Ordering::AcqRel) {
                self.counts.owed_rounds.fetch_add(1, Ordering::Relaxed);
                self.push_round(i, None);
            }
        }
    }

    /// One fetch record: (peer index, TID index, frames, bytes). Returns the frames
    /// answered.
    fn fetch(&self, peer: usize, tid_index: usize, max_frames: u32, max_bytes: u64) -> u64 {
        self.counts.fetch_records.fetch_add(1, Ordering::Relaxed);
        let raw =
            self.peers.0.get(peer).and_then(|p| p.txqs.get(tid_index)).map_or(u64::MAX, |t| t.load(Ordering::Acquire));
        if raw == u64::MAX {
            self.counts.fetch_unknown.fetch_add(1, Ordering::Relaxed);
            return 0;
        }
        let txq = TxqId::from_raw(raw);
        let now = self.now();
        let mut sent = 0;
        match self.txqs.may_transmit(txq, now) {
            Ok(MayTransmit::Granted(turn)) => {
                let had_frames = turn.is_backlogged();
                // The record's `max_num_msdus` and `max_num_bytes`, as ath10k's loop
                // bounds its answer (the frame that reaches the byte bound is sent).
                let mut port = self.port(now, true);
                let bytes = u32::try_from(max_bytes).unwrap_or(u32::MAX);
                let budget = TurnBudget { frames: max_frames, bytes, ..TurnBudget::UNLIMITED };
                let report = turn.serve(now, &self.peers, &mut port, budget, |t| self.take_drops(t));
                sent = port.frames;
                self.counts.fetch_answered.fetch_add(1, Ordering::Relaxed);
                self.counts.fetch_frames.fetch_add(sent, Ordering::Relaxed);
                if sent == 0 {
                    self.counts.fetch_answered_empty.fetch_add(1, Ordering::Relaxed);
                    if !had_frames {
                        self.counts.fetch_answered_no_frames.fetch_add(1, Ordering::Relaxed);
                    }
                }
                // Not `note_report`: a fetch turn's `TurnBudget` is the firmware's budget,
                // not a round left to finish.
                if report.overlapped {
                    self.owed[tid_index].store(true, Ordering::Release);
                }
                self.refused_back(report);
            }
            Ok(MayTransmit::Refused(why)) => {
                // Nothing to send for this record: the txq keeps its frames and its
                // place, and a round serves it (the recipe's below, the push rounds).
                self.counts.fetch_refused.fetch_add(1, Ordering::Relaxed);
                let reason = match why {
                    Refusal::OverPhyLimit => &self.counts.refused_phy,
                    Refusal::Deficit => &self.counts.refused_deficit,
                    _ => &self.counts.refused_other,
                };
                reason.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {
                // Removed since the look-up: nothing to send.
                self.counts.fetch_unknown.fetch_add(1, Ordering::Relaxed);
                return 0;
            }
        }
        // The crate docs' recipe for a turn taken outside a round beside concurrent
        // rounds: a round on the AC after the call, whatever it returned, if the txq
        // may still have frames, asked after the return.
        if self.txqs.may_have_frames(txq).unwrap_or(false) {
            self.counts.recipe_rounds.fetch_add(1, Ordering::Relaxed);
            let same = self.push_round(tid_index, Some(txq));
            self.counts.recipe_same_txq.fetch_add(same, Ordering::Relaxed);
        }
        sent
    }

    /// The firmware's completions due by `now`; returns which ACs were reaped.
    fn complete_due(&self, now: Instant) -> [bool; ACS.len()] {
        let done: Vec<InFlight> = self
            .fw
            .state
            .lock()
            .map(|mut fw| {
                let (done, kept): (Vec<_>, Vec<_>) = fw.frames.drain(..).partition(|f| f.done_at <= now);
                fw.frames = kept;
                if !done.is_empty() {
                    fw.last_activity = now;
                }
                done
            })
            .unwrap_or_default();
        let mut reaped = [false; ACS.len()];
        let sched = self.txqs.scheduler();
        for f in done {
            match f.charge {
                Some(charge) => {
                    if let Some(i) = ACS.iter().position(|&ac| ac == charge.ac()) {
                        reaped[i] = true;
                    }
                    let c = sched.complete_frame(charge, &f.status, now, None);
                    if let Err(e) = c.released {
                        self.violation(format!("release at completion: {e}"));
                    }
                    if let Err(e) = c.registered {
                        self.violation(format!("airtime registration at completion: {e}"));
                    }
                }
                None => self.violation(format!("frame {} completed without a charge", f.frame.id)),
            }
            self.settle(f.frame.id, FATE_COMPLETED);
        }
        reaped
    }

    /// A removed txq's frames: handed back (queued, retry slot, intake) or counted as
    /// FQ-CoDel's drops. Returns how many were handed back.
    fn reap(&self, removed: RemovedTxq<FqCodelTxq<Packet>>) -> u64 {
        let RemovedTxq { queue, retry, intake, .. } = removed;
        let mut back = 0;
        for f in intake {
            self.settle(f.id, FATE_HANDED_BACK);
            back += 1;
        }
        if let Some(retry) = retry {
            if let Some(charge) = retry.charge {
                // RemovedTxq's docs: give the retry frame's charge back (never sent).
                if let Err(e) = self.txqs.scheduler().give_back(charge) {
                    self.violation(format!("give back of a removed txq's retry charge: {e}"));
                }
            }
            self.settle(retry.frame.id, FATE_HANDED_BACK);
            back += 1;
        }
        for d in queue.retire().frames {
            if d.reason == DropReason::Purged {
                self.settle(d.frame.id, FATE_HANDED_BACK);
                back += 1;
            } else {
                self.settle(d.frame.id, FATE_DROPPED);
            }
        }
        back
    }

    fn reap_all(&self) -> u64 {
        let mut back = 0;
        while let Some(removed) = self.txqs.take_removed() {
            back += self.reap(removed);
        }
        back
    }

    fn add_station(&self, weight: u16, mcs: u32) -> Result<StationId, String> {
        let sched = self.txqs.scheduler();
        let sta = sched.add_station(Weight::new(weight).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
        // The slot (the firmware's peer index) is reused only once its last occupant
        // drained: check it, and that the firmware holds none of its frames.
        {
            let mut departed = self.departed.lock().map_err(|_| "poisoned")?;
            let before = departed.len();
            departed.retain(|d| {
                if d.id().index() != sta.index() {
                    return true;
                }
                if !d.is_drained(sched) {
                    self.violation(format!("slot {} reused before {} drained", sta.index(), d.id()));
                }
                false
            });
            if departed.len() < before {
                self.counts.index_reuses.fetch_add(1, Ordering::Relaxed);
                let old_frames = self.fw.state.lock().map(|fw| {
                    fw.frames
                        .iter()
                        .filter(|f| f.frame.station.index() == sta.index() && f.frame.station != sta)
                        .count()
                });
                if old_frames.unwrap_or(0) > 0 {
                    self.violation(format!(
                        "peer index {} reused with the old peer's frames in the firmware",
                        sta.index()
                    ));
                }
            }
        }
        let peer = &self.peers.0[sta.index()];
        peer.mcs.store(mcs, Ordering::Relaxed);
        peer.id.store(sta.to_raw(), Ordering::Release);
        let mut config = FqCodelConfig::default();
        config.flows = 16;
        for (slot, tid) in peer.txqs.iter().zip(TIDS) {
            let queue = FqCodelTxq::new(config).map_err(|e| format!("{e:?}"))?;
            let txq = match self.txqs.add_txq(Some(sta), tid, queue) {
                Ok(txq) => txq,
                Err(e) => {
                    // `TxqsDraining` (a removed txq's slot not let go of yet) is retried
                    // later, as `StationsDraining`: undo the station meanwhile.
                    self.remove_station(sta)?;
                    return Err(e.error.to_string());
                }
            };
            slot.store(txq.to_raw(), Ordering::Release);
        }
        self.live.lock().map_err(|_| "poisoned")?.push(sta);
        self.counts.added.fetch_add(1, Ordering::Relaxed);
        Ok(sta)
    }

    fn remove_station(&self, sta: StationId) -> Result<(), String> {
        self.live.lock().map_err(|_| "poisoned")?.retain(|&s| s != sta);
        let peer = &self.peers.0[sta.index()];
        // Fetch records for this peer find nothing from now on.
        for slot in &peer.txqs {
            slot.store(u64::MAX, Ordering::Release);
        }
        let departing = self.txqs.remove_station(sta).map_err(|e| e.to_string())?;
        peer.id.store(u64::MAX, Ordering::Release);
        let back = self.reap_all();
        let c = &self.counts;
        c.removed.fetch_add(1, Ordering::Relaxed);
        c.left_with_queued.fetch_add(u64::from(back > 0), Ordering::Relaxed);
        c.left_with_in_flight
            .fetch_add(u64::from(departing.total_pending_us(self.txqs.scheduler()) > 0), Ordering::Relaxed);
        self.departed.lock().map_err(|_| "poisoned")?.push(departing);
        Ok(())
    }

    /// Whether the firmware has been idle (nothing held) since `quiet_us` ago.
    fn fw_idle(&self, quiet_us: u64) -> bool {
        let now = self.now();
        self.fw
            .state
            .lock()
            .map(|fw| fw.frames.is_empty() && now.micros_since(fw.last_activity) >= quiet_us)
            .unwrap_or(false)
    }
}

/// What the firmware-event thread does.
const MODE_RUN: u8 = 0;
const MODE_DRAIN: u8 = 1;
const MODE_DRAIN_NO_FETCH: u8 = 2;
const MODE_STOP: u8 = 3;

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let usage = "usage: pull_mode_driver [MILLISECONDS >= 100]";
    let mut churn_ms = 1000u64;
    for arg in std::env::args().skip(1) {
        churn_ms = arg.parse().ok().filter(|&ms| ms >= 100).ok_or(usage)?;
    }
    let config = Config::builder().max_stations(MAX_STATIONS)?.max_txqs(MAX_STATIONS * TIDS.len())?.build();
    let slowest = Rate::vht(0, 1, Bandwidth::Mhz80, false)?;
    let max_frame_us = ACS.iter().filter_map(|&ac| price_from_rate(Some(slowest), 1500, ac).ok()).max().unwrap_or(0);
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_nanos() as u64 | 1;
    let radio = Arc::new(Radio {
        txqs: TxqTable::new(Scheduler::new(config)?),
        peers: Peers(
            (0..MAX_STATIONS)
                .map(|_| Peer {
                    id: AtomicU64::new(u64::MAX),
                    mcs: AtomicU32::new(9),
                    txqs: [AtomicU64::new(u64::MAX), AtomicU64::new(u64::MAX)],
                })
                .collect(),
        ),
        fw: Firmware {
            state: Mutex::new(FwState { frames: Vec::new(), rng: Rng(seed), last_activity: Instant::ZERO }),
        },
        live: Mutex::new(Vec::new()),
        departed: Mutex::new(Vec::new()),
        owed: [AtomicBool::new(false), AtomicBool::new(false)],
        fates: (0..MAX_FRAMES).map(|_| AtomicU8::new(FATE_NONE)).collect(),
        next_frame: AtomicU64::new(0),
        max_frame_us: max_frame_us.next_multiple_of(4),
        start: std::time::Instant::now(),
        counts: Counts::default(),
    });
    for mcs in [9, 7, 4, 0, 9, 2, 5, 1].into_iter().take(LIVE_STATIONS) {
        radio.add_station(256, mcs)?;
    }
    let producers_stop = Arc::new(AtomicBool::new(false));
    let fw_mode = Arc::new(AtomicU8::new(MODE_RUN));

    // The wake thread: mac80211's `wake_tx_queue`.
    let wake = {
        let (radio, stop) = (radio.clone(), producers_stop.clone());
        std::thread::spawn(move || {
            let mut rng = Rng(seed ^ 0x9e37_79b9_7f4a_7c15);
            while !stop.load(Ordering::Relaxed) {
                let mut woke = [false; ACS.len()];
                let live = if radio.in_driver() < FRAMES_IN_DRIVER {
                    radio.live.lock().map(|l| l.clone()).unwrap_or_default()
                } else {
                    Vec::new()
                };
                for sta in live {
                    for _ in 0..4 {
                        let k = rng.below(TIDS.len() as u64) as usize;
                        let raw = radio.peers.0[sta.index()].txqs[k].load(Ordering::Acquire);
                        if raw == u64::MAX {
                            break;
                        }
                        let id = radio.next_frame.fetch_add(1, Ordering::Relaxed);
                        let Some(cell) = radio.fates.get(id as usize) else { break };
                        cell.store(FATE_QUEUED, Ordering::Release);
                        let len = 200 + rng.below(1301) as u32;
                        let frame = Packet { id, station: sta, len, flow: rng.below(8) as u32 };
                        match radio.txqs.enqueue(TxqId::from_raw(raw), frame, radio.now()) {
                            Ok(()) => {
                                radio.counts.enqueued.fetch_add(1, Ordering::Relaxed);
                                woke[k] = true;
                            }
                            Err(EnqueueError::Removed(back)) => {
                                // Ours was taken (it comes back here, with the removed
                                // txq, or was sent); these are the intake's.
                                radio.counts.enqueued.fetch_add(1, Ordering::Relaxed);
                                back.for_each(|f| radio.settle(f.id, FATE_HANDED_BACK));
                                break;
                            }
                            Err(e) => {
                                // Not taken: it never entered the driver.
                                for f in e.into_frames() {
                                    if let Some(c) = radio.fates.get(f.id as usize) {
                                        c.store(FATE_NONE, Ordering::Release);
                                    }
                                }
                                break;
                            }
                        }
                    }
                }
                for (i, woke) in woke.into_iter().enumerate() {
                    if woke {
                        radio.push_round(i, None);
                    }
                }
                radio.owed_rounds();
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    };

    // The firmware-event thread: tx status and fetch indications.
    let fw_events = {
        let (radio, mode) = (radio.clone(), fw_mode.clone());
        std::thread::spawn(move || {
            let mut rng = Rng(seed ^ 0x2545_f491_4f6c_dd1d);
            let mut next_fetch = radio.now();
            loop {
                let m = mode.load(Ordering::Acquire);
                if m == MODE_STOP {
                    break;
                }
                let now = radio.now();
                let reaped = radio.complete_due(now);
                for (i, reaped) in reaped.into_iter().enumerate() {
                    if reaped {
                        radio.push_round(i, None);
                    }
                }
                if m != MODE_DRAIN_NO_FETCH && now >= next_fetch {
                    next_fetch = now.add_micros(FETCH_PERIOD_US);
                    for _ in 0..FETCH_RECORDS {
                        let peer = rng.below(MAX_STATIONS as u64) as usize;
                        let tid_index = rng.below(TIDS.len() as u64) as usize;
                        let max_frames = 1 + rng.below(16) as u32;
                        let max_bytes = u64::from(max_frames) * (200 + rng.below(1301));
                        radio.fetch(peer, tid_index, max_frames, max_bytes);
                    }
                }
                radio.owed_rounds();
                std::thread::sleep(Duration::from_micros(100));
            }
        })
    };

    // The control thread: station churn and weight changes.
    let control = {
        let (radio, stop) = (radio.clone(), producers_stop.clone());
        std::thread::spawn(move || -> Result<(), String> {
            let mut rng = Rng(seed ^ 0x5851_f42d_4c95_7f2d);
            let mut step = 0u64;
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(10));
                step += 1;
                radio.check_all_aql();
                if let Err(e) = radio.txqs.scheduler().check_invariants() {
                    radio.violation(format!("invariant: {e:?}"));
                }
                radio.reap_all();
                let live = radio.live.lock().map(|l| l.clone()).unwrap_or_default();
                if step % 4 == 0 {
                    if let Some(&sta) = live.get(rng.below(live.len() as u64) as usize) {
                        let w = Weight::new(64 + 64 * rng.below(16) as u16).map_err(|e| e.to_string())?;
                        if radio.txqs.scheduler().set_weight(sta, w).is_ok() {
                            radio.counts.weight_changes.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    continue;
                }
                if live.len() >= LIVE_STATIONS {
                    if let Some(&sta) = live.get(rng.below(live.len() as u64) as usize) {
                        radio.remove_station(sta)?;
                    }
                }
                // A new station, once a slot is free (a departed one drained).
                match radio.add_station(256, rng.below(10) as u32) {
                    Ok(_) => {}
                    Err(e) if e.contains("drain") => {
                        radio.counts.add_draining.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        })
    };

    std::thread::sleep(Duration::from_millis(churn_ms));
    producers_stop.store(true, Ordering::Relaxed);
    wake.join().map_err(|_| "wake thread panicked")?;
    control.join().map_err(|_| "control thread panicked")??;
    radio.reap_all();

    // Drain with no further wake: firmware events (completions, fetches) and the rounds
    // they call for, then completions alone.
    let drain_start = std::time::Instant::now();
    for mode in [MODE_DRAIN, MODE_DRAIN_NO_FETCH] {
        fw_mode.store(mode, Ordering::Release);
        let phase = std::time::Instant::now();
        while !radio.fw_idle(20_000) && phase.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    fw_mode.store(MODE_STOP, Ordering::Release);
    fw_events.join().map_err(|_| "firmware-event thread panicked")?;
    let drain_ms = drain_start.elapsed().as_millis();

    let mut ok = radio.counts.violations.load(Ordering::Relaxed) == 0;
    let sched = radio.txqs.scheduler();
    let pending = sched.total_pending_us();
    if pending != 0 {
        eprintln!("CHECK FAILED: {pending} us of airtime pending after the drain");
        ok = false;
    }
    let fw_left = radio.fw.state.lock().map(|fw| fw.frames.len()).unwrap_or(usize::MAX);
    if fw_left != 0 {
        eprintln!("CHECK FAILED: the firmware still holds {fw_left} frames");
        ok = false;
    }
    let mut stranded = Vec::new();
    for txq in radio.txqs.txq_ids() {
        if radio.txqs.may_have_frames(txq).unwrap_or(false) {
            stranded.push(txq);
        }
    }
    if !stranded.is_empty() {
        eprintln!("CHECK FAILED: txqs left with frames after the drain (a lost wake): {stranded:?}");
        ok = false;
    }

    // Shutdown: every station leaves; what it still holds is handed back.
    let live = radio.live.lock().map_err(|_| "poisoned")?.clone();
    for sta in live {
        radio.remove_station(sta)?;
    }
    radio.reap_all();
    let undrained = radio.departed.lock().map_err(|_| "poisoned")?.iter().filter(|d| !d.is_drained(sched)).count();
    if undrained != 0 {
        eprintln!("CHECK FAILED: {undrained} departed stations not drained");
        ok = false;
    }
    let issued = (radio.next_frame.load(Ordering::Relaxed) as usize).min(MAX_FRAMES);
    let unsettled = radio.fates.iter().take(issued).filter(|f| f.load(Ordering::Relaxed) == FATE_QUEUED).count();
    let c = &radio.counts;
    let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let (enq, done, back, dropped) = (n(&c.enqueued), n(&c.completed), n(&c.handed_back), n(&c.dropped));
    if unsettled != 0 || enq != done + back + dropped {
        eprintln!(
            "CHECK FAILED: frames unaccounted for: {unsettled} never settled; enqueued {enq} != completed {done} + \
             handed back {back} + dropped {dropped}"
        );
        ok = false;
    }
    if sched.underflows() != 0 {
        eprintln!("CHECK FAILED: {} release underflows", sched.underflows());
        ok = false;
    }
    // Only the fetch answers ask `may_transmit`: the scheduler's per-reason counts are
    // the refusals this driver saw.
    let counted: [u64; 3] = ACS.iter().fold([0; 3], |[phy, debt, other], &ac| {
        let r = sched.ac_counters(ac).pull_refusals;
        [phy + r.over_phy_limit, debt + r.deficit, other + r.served + r.queue_busy]
    });
    let seen = [n(&c.refused_phy), n(&c.refused_deficit), n(&c.refused_other)];
    if counted != seen {
        eprintln!("CHECK FAILED: refusals by reason: the scheduler counted {counted:?}, the driver saw {seen:?}");
        ok = false;
    }
    let violations = n(&c.violations);
    if violations != 0 {
        eprintln!("CHECK FAILED: {violations} violations while running (first ones above)");
    }
    println!(
        "frames: enqueued {enq}, completed {done}, handed back {back}, dropped {dropped}; pushed by rounds {}, \
         pulled {}",
        n(&c.pushed_by_rounds),
        n(&c.fetch_frames)
    );
    println!(
        "fetch records {}: turns granted {} ({} of them sent nothing, {} on an \
         empty txq), refused by may_transmit {} (AC over its PHY limit {}, \
         effective deficit negative {}, txq or queue held elsewhere {}), unknown peer/txq {}; recipe rounds {} (pushing {} frames \
         of the txq just fetched), owed rounds {}, refused frames reported {}",
        n(&c.fetch_records),
        n(&c.fetch_answered),
        n(&c.fetch_answered_empty),
        n(&c.fetch_answered_no_frames),
        n(&c.fetch_refused),
        n(&c.refused_phy),
        n(&c.refused_deficit),
        n(&c.refused_other),
        n(&c.fetch_unknown),
        n(&c.recipe_rounds),
        n(&c.recipe_same_txq),
        n(&c.owed_rounds),
        n(&c.refused_reports)
    );
    println!(
        "churn: removed {} (with frames queued {}, in flight {}), added {}, refused while draining {}, slot reuses {}, \
         weight changes {}",
        n(&c.removed),
        n(&c.left_with_queued),
        n(&c.left_with_in_flight),
        n(&c.added),
        n(&c.add_draining),
        n(&c.index_reuses),
        n(&c.weight_changes)
    );
    println!(
        "AQL: {} checks at push, most over the high limit {} us (one frame at most {} us); drain {drain_ms} ms; \
         pending {pending} us; {}",
        n(&c.aql_checks),
        n(&c.max_overshoot_us),
        radio.max_frame_us,
        if ok { "PASS" } else { "FAIL" }
    );
    Ok(ok)
}
