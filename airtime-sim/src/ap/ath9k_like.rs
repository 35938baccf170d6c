//! An ath9k-shaped host-aggregating driver over the crate's [`TxqTable`], in its two eras:
//!
//! * **mac80211 txqs** (Linux 4.11 on; the `mac80211_rr`, `mac80211_atf` and
//!   `mac80211_aql` designs): the per-station FQ-CoDel txqs are the table's. On every wake
//!   (`ath9k_wake_tx_queue`) and every completion (`ath_tx_process_buffer`) the driver runs
//!   `ath_txq_schedule`: one scheduling round in which each txq handed out gets one turn,
//!   and a turn forms at most one PPDU (`ath_tx_sched_aggr`). A turn first asks for room:
//!   an A-MPDU only while the hardware queue holds fewer than
//!   [`ATH_AGGR_MIN_QDEPTH`](super::host_ampdu::ATH_AGGR_MIN_QDEPTH) aggregates, a single
//!   frame while it holds fewer than
//!   [`ATH_NON_AGGR_MIN_QDEPTH`](super::host_ampdu::ATH_NON_AGGR_MIN_QDEPTH) PPDUs
//!   (`-EBUSY` otherwise: the txq is returned with its frames). The aggregate takes
//!   subframes from the txq (`ath_tx_form_aggr`: the frames to resend first, the
//!   [`RetryFirst`] queue standing for `tid->retry_q`, then the frame kept back at the
//!   last turn, in the table's retry slot, then `ieee80211_tx_dequeue`) until half the
//!   BlockAck window or the 4 ms byte length is reached, or a new frame would be
//!   numbered past the BlockAck window (`BAW_WITHIN`); the frame that does not go is
//!   kept for the txq's next turn. With airtime fairness mac80211 lists a txq that made
//!   progress at the head, so its round ends there and the next wake or completion serves
//!   it again while its deficit lasts; without it, at the tail (round robin).
//! * **Qdisc** (before mac80211's intermediate queues; the `qdisc_pfifo` and
//!   `qdisc_fq_codel` designs): the interface's qdisc feeds the driver (`ath_tx_start`),
//!   which keeps each frame in its TID's buffer (`tid->buf_q`, a FIFO here) and schedules
//!   TIDs round robin with the same aggregate forming. The driver stops the qdisc once the
//!   hardware queue's `pending_frames` (frames handed to the driver and not yet completed,
//!   in TID buffers and in hardware) exceeds [`ATH_MAX_QDEPTH`], and wakes it when a
//!   completion brings the count below it (`ath_tx_start` / `ath_tx_complete`, ath9k of
//!   Linux 3.x).
//!
//! Access categories: ath9k has one hardware queue per access category
//! (`sc->tx.txq_map[ac]`, `ATH_TXQ_AC_*`), each with its own EDCA parameters (hostapd's
//! AP values, set through `ath9k_conf_tx`) and aggregates bounded by its TXOP
//! (`ath_update_max_aggr_framelen`); a frame goes to its station's TID queue (a txq per
//! TID, or `tid->buf_q`) and a schedule (`ath_txq_schedule`) serves one hardware queue,
//! the one woken or completed. Under a qdisc the interface is multiqueue (mac80211
//! registers a netdev queue per AC and `ieee80211_select_queue` picks it from the
//! packet's priority), so the default root qdisc is `mq` with one child qdisc per AC,
//! and the driver stops (`ieee80211_stop_queue`) only the AC whose hardware queue holds
//! too many frames.
//!
//! Transmit airtime is registered per PPDU at completion (`ath_tx_count_airtime`; here
//! through the PPDU-stats event) and received airtime per PPDU, both only under airtime
//! fairness. Every frame the driver takes is accounted: sent and completed, kept in a
//! txq's retry slot or waiting there to be resent, or dropped by its queue (FQ-CoDel,
//! the qdisc) and handed back.
//!
//! Over a lossy link a PPDU's completion ([`Ath9k::ppdu_done`]) puts the subframes its
//! BlockAck missed back in their TID queue, numbered, to go first into the TID's next
//! aggregate with new frames (`ath_tx_complete_aggr`); the driver numbers frames and
//! keeps each station's BlockAck window per access category ([`SeqWindow`]), moved as
//! completions are handled (`ath_tx_update_baw`).

use super::hardware::{HwFrame, TxStatus};
use super::host_ampdu::{AggregateLimits, HostHwQueue, HostPpdu, WME_MAX_BA};
use super::mac80211::{SimStation, SimTxq};
use super::qdisc::Qdisc;
use super::tid_retry::RetryFirst;
use crate::engine::Nanos;
use crate::engine::time::instant;
use crate::net::{Node, Packet};
use crate::wifi::PhyTiming;
use crate::wifi::seq_window::SeqWindow;
use airtime_est::Rate;
use airtime_sched::traits::{Enqueue, Txq};
use airtime_sched::txqs::{Retry, TxqTurn};
use airtime_sched::{Ac, Instant, Scheduler, StationId, Tid, TxqId, TxqReturn, TxqTable, Weight};
use std::collections::VecDeque;

/// Frames the old ath9k let the driver hold per hardware queue before it stopped the
/// qdisc: ath9k.h `ATH_MAX_QDEPTH` = `ATH_TXBUF / 4 - ATH_TXBUF_RESERVE` = 512 / 4 - 5
/// (Linux 3.x, checked in xmit.c `ath_tx_start`).
pub const ATH_MAX_QDEPTH: u32 = 512 / 4 - 5;

/// A TID queue the driver serves: a queue of the table that hands back what it dropped.
pub trait TidQueue: Txq<Frame = Packet> + Enqueue {
    /// Moves the frames the queue dropped since the last call into `out`.
    fn take_drops(&mut self, out: &mut Vec<Packet>);
}

impl TidQueue for SimTxq {
    fn take_drops(&mut self, out: &mut Vec<Packet>) {
        out.extend(self.drain_drops().map(|d| d.frame));
    }
}

/// The old ath9k's per-TID buffer (`tid->buf_q`): a FIFO without a limit of its own (the
/// driver's `pending_frames` bounds all of them together).
#[derive(Debug, Default)]
pub struct TidFifo(VecDeque<Packet>);

impl Txq for TidFifo {
    type Frame = Packet;
    type Error = core::convert::Infallible;
    fn dequeue(&mut self, _now: Instant) -> Result<Option<Packet>, Self::Error> {
        Ok(self.0.pop_front())
    }
    fn peek_len(&self) -> Option<u32> {
        self.0.front().map(airtime_sched::Frame::len_bytes)
    }
}

impl Enqueue for TidFifo {
    fn enqueue(&mut self, frame: Packet, _enqueued: Instant) {
        self.0.push_back(frame);
    }
}

impl TidQueue for TidFifo {
    fn take_drops(&mut self, _out: &mut Vec<Packet>) {}
}

/// Which `ath_txq_schedule` the driver runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScheduleShape {
    /// ath9k before its airtime fairness (Linux 3.x to 4.10): laps of round robin over
    /// the stations while a lap sent something, and the whole schedule stops at the first
    /// TID that finds the hardware queue full (`ath_tx_sched_aggr` sets `stop`; that TID
    /// goes back to the tail, `ath_tx_queue_tid`).
    RoundRobinLaps,
    /// ath9k over mac80211's scheduler (Linux 4.20 on): one round of
    /// `ieee80211_next_txq`; a txq that finds the hardware queue full is returned
    /// (`ieee80211_return_txq`) and the round goes on.
    Mac80211Round,
}

/// Counters of the driver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ath9kCounters {
    /// Frames the driver took (from the stack or the qdisc).
    pub frames_in: u64,
    /// Frames completed.
    pub frames_completed: u64,
    /// Frames dropped by the txqs' or the qdisc's AQM or limits, or refused at enqueue.
    pub frames_dropped: u64,
    /// PPDUs formed.
    pub ppdus: u64,
    /// Turns that found the hardware queue full (`-EBUSY`).
    pub busy_turns: u64,
    /// Subframes a BlockAck missed, put back to be resent (`ath_tx_complete_aggr`).
    pub resent: u64,
    /// Aggregates that stopped at a new frame outside the BlockAck window.
    pub window_stops: u64,
}

/// The driver with its TID queues of type `Q`.
pub struct Ath9k<Q: TidQueue> {
    table: TxqTable<RetryFirst<Q>>,
    /// Station record and simulator station number, by scheduler handle index.
    stations: Vec<Option<(SimStation, u16)>>,
    /// Scheduler handle of each station, by station number.
    pub sta_ids: Vec<StationId>,
    /// BE txq of each station, by station number.
    pub txq_ids: Vec<TxqId>,
    /// Each station's queue per TID (user priority 0..=7), where one is registered
    /// (TID 0 from the start, the others on their first frame).
    tid_txqs: Vec<[Option<TxqId>; 8]>,
    new_queue: Box<dyn FnMut() -> Q>,
    /// Aggregate limits per station and access category (`Ac::index`).
    limits: Vec<[AggregateLimits; Ac::COUNT]>,
    /// The hardware queue of each access category (`Ac::index`).
    pub hwqs: [HostHwQueue; Ac::COUNT],
    /// Frames taken by the driver and not yet completed, per hardware queue
    /// (`txq->pending_frames`).
    pub pending_frames: [u32; Ac::COUNT],
    /// Counters.
    pub counters: Ath9kCounters,
    /// Each station's sequence space and BlockAck window per access category
    /// (`Ac::index`), one for its TIDs of that category, as the receiver's reorder
    /// buffer has one.
    windows: Vec<[SeqWindow; Ac::COUNT]>,
    /// Numbered frames the driver gave up outside the retry limit (station, access
    /// category, number), for the world to move the receiver's reorder buffer past them
    /// as a BlockAck request would ([`take_given_up`](Self::take_given_up)).
    given_up: Vec<(u16, Ac, u32)>,
    any_aggregating: bool,
    any_legacy: bool,
    shape: ScheduleShape,
    dropped_scratch: Vec<Packet>,
}

impl<Q: TidQueue> Ath9k<Q> {
    /// A driver over `sched` for stations sent at `timings`, priced at `reported`, with
    /// `weights`; each station's BE txq holds a queue from `new_queue`.
    pub fn new(
        sched: Scheduler,
        shape: ScheduleShape,
        timings: &[PhyTiming],
        reported: &[Rate],
        weights: &[u16],
        new_queue: impl FnMut() -> Q + 'static,
    ) -> Result<Ath9k<Q>, String> {
        let mut new_queue: Box<dyn FnMut() -> Q> = Box::new(new_queue);
        let max_stations = usize::from(sched.config().max_stations);
        let table = TxqTable::new(sched);
        let mut stations: Vec<Option<(SimStation, u16)>> = (0..max_stations).map(|_| None).collect();
        let (mut sta_ids, mut txq_ids) = (Vec::new(), Vec::new());
        for (s, (rate, w)) in reported.iter().zip(weights).enumerate() {
            let weight = Weight::new(*w).map_err(|e| format!("weight: {e}"))?;
            let id = table.scheduler().add_station(weight).map_err(|e| format!("{e:?}"))?;
            let txq =
                table.add_txq(Some(id), Tid::BE, RetryFirst::new(new_queue())).map_err(|e| format!("{:?}", e.error))?;
            let slot = stations.get_mut(id.index()).ok_or("station index beyond the table")?;
            *slot = Some((
                SimStation { id, rate: *rate, mu_scale_q8: airtime_ath11k::mu_charging::SCALE_ONE_Q8 },
                s as u16,
            ));
            sta_ids.push(id);
            txq_ids.push(txq);
        }
        let limits: Vec<[AggregateLimits; Ac::COUNT]> = timings
            .iter()
            .map(|t| std::array::from_fn(|a| AggregateLimits::for_ac(t, Ac::from_index(a).unwrap_or(Ac::Be))))
            .collect();
        Ok(Ath9k {
            any_aggregating: limits.iter().any(|l| l[BE].aggregates),
            any_legacy: limits.iter().any(|l| !l[BE].aggregates),
            table,
            stations,
            tid_txqs: txq_ids.iter().map(|&be| std::array::from_fn(|tid| (tid == 0).then_some(be))).collect(),
            new_queue,
            sta_ids,
            txq_ids,
            limits,
            shape,
            hwqs: Default::default(),
            pending_frames: [0; Ac::COUNT],
            counters: Ath9kCounters::default(),
            given_up: Vec::new(),
            windows: (0..timings.len()).map(|_| Default::default()).collect(),
            dropped_scratch: Vec::new(),
        })
    }

    /// The scheduler.
    pub fn sched(&self) -> &Scheduler {
        self.table.scheduler()
    }

    /// The best-effort aggregate limits of station `s`.
    pub fn limits(&self, s: u16) -> Option<AggregateLimits> {
        self.limits.get(usize::from(s)).map(|l| l[BE])
    }

    /// Station `s`'s queue of `pkt`'s TID (its DSCP's user priority,
    /// `cfg80211_classify8021d`), added to the table on its first frame (ath9k has
    /// every TID from `ath_tx_node_init`); `None` if the table has no room.
    fn txq_of(&mut self, s: u16, pkt: &Packet) -> Option<TxqId> {
        let tids = self.tid_txqs.get(usize::from(s))?;
        let up = crate::net::udp::user_priority_of_dscp(pkt.dscp).unwrap_or(0);
        if let Some(id) = tids[usize::from(up)] {
            return Some(id);
        }
        let id = *self.sta_ids.get(usize::from(s))?;
        let txq = self.table.add_txq(Some(id), Tid::new(up).ok()?, RetryFirst::new((self.new_queue)())).ok()?;
        self.tid_txqs[usize::from(s)][usize::from(up)] = Some(txq);
        Some(txq)
    }

    /// Queues `pkt` in station `s`'s txq of its TID (which wakes it); a frame the table
    /// refuses goes to `dropped`. Returns whether the frame was taken.
    pub fn enqueue(&mut self, s: u16, pkt: Packet, now: Nanos, dropped: &mut Vec<Packet>) -> bool {
        self.counters.frames_in += 1;
        let Some(txq) = self.txq_of(s, &pkt) else {
            self.counters.frames_dropped += 1;
            dropped.push(pkt);
            return false;
        };
        match self.table.enqueue(txq, pkt, instant(now)) {
            Ok(()) => true,
            Err(e) => {
                let back: Vec<Packet> = e.into_frames().collect();
                self.counters.frames_dropped += back.len() as u64;
                dropped.extend(back);
                false
            }
        }
    }

    fn has_room_for_any(&self, ac: Ac) -> bool {
        let hwq = &self.hwqs[ac.index()];
        (self.any_aggregating && hwq.has_room(true)) || (self.any_legacy && hwq.has_room(false))
    }

    /// `ath_txq_schedule` of BE's hardware queue (see [`Ath9k::schedule_ac`]).
    pub fn schedule(&mut self, now: Nanos, dropped: &mut Vec<Packet>) {
        self.schedule_ac(Ac::Be, now, dropped);
    }

    /// `ath_txq_schedule` of `ac`'s hardware queue: rounds over that access category's
    /// txqs, one PPDU per turn, while the hardware queue has room, in the driver's
    /// [`ScheduleShape`]. Frames the queues dropped go to `dropped`.
    pub fn schedule_ac(&mut self, ac: Ac, now: Nanos, dropped: &mut Vec<Packet>) {
        let mut drops = std::mem::take(&mut self.dropped_scratch);
        match self.shape {
            ScheduleShape::Mac80211Round => {
                self.round(ac, now, &mut drops);
            }
            ScheduleShape::RoundRobinLaps => {
                // A lap per round; at most one lap per txq beyond the first, as the
                // driver's `if (!sent) break` ends the laps once one sends nothing.
                for _ in 0..=self.txq_ids.len() {
                    let (sent, stopped) = self.round(ac, now, &mut drops);
                    if stopped || !sent || !self.has_room_for_any(ac) {
                        break;
                    }
                }
            }
        }
        self.counters.frames_dropped += drops.len() as u64;
        dropped.append(&mut drops);
        self.dropped_scratch = drops;
    }

    /// One scheduling round; returns whether it sent anything and whether it stopped
    /// at a full hardware queue.
    fn round(&mut self, ac: Ac, now: Nanos, drops: &mut Vec<Packet>) -> (bool, bool) {
        let now_i = instant(now);
        let a = ac.index();
        let round = self.table.scheduler().start_round(ac);
        if !round.is_open() {
            return (false, false);
        }
        let (mut sent, mut stopped) = (false, false);
        while self.has_room_for_any(ac) {
            let Some(mut turn) = self.table.next_txq(round, now_i) else { break };
            let record = turn.station().and_then(|id| self.stations.get(id.index()).copied().flatten());
            let Some((station, s)) = record else {
                // Not a station txq of this model: nothing to form.
                let outcome = if turn.is_backlogged() { TxqReturn::Stalled } else { TxqReturn::Empty };
                turn.finish(outcome, now_i);
                continue;
            };
            let Some(lim) = self.limits.get(usize::from(s)).map(|l| l[a]) else {
                turn.finish(TxqReturn::Stalled, now_i);
                continue;
            };
            if !self.hwqs[a].has_room(lim.aggregates) {
                // `ath_tx_sched_aggr`'s -EBUSY: the frames stay with the txq.
                self.counters.busy_turns += 1;
                let outcome = if turn.is_backlogged() { TxqReturn::Stalled } else { TxqReturn::Empty };
                turn.finish(outcome, now_i);
                if self.shape == ScheduleShape::RoundRobinLaps {
                    stopped = true;
                    break;
                }
                continue;
            }
            let mut frames: Vec<HwFrame> = Vec::new();
            let mut bytes = 0u32;
            let (mut taken, mut singles) = (0usize, 0usize);
            while taken < lim.max_frames {
                taken += 1;
                // `ath_tid_dequeue`: the frames to resend first, oldest number first;
                // mac80211's AQL check (`ieee80211_tx_dequeue`'s, before each new frame)
                // applies to the rest.
                let resend = turn.queue().is_some_and(|q| q.resend_next());
                if !resend && !turn.airtime_check() {
                    break;
                }
                let slot = if resend { None } else { turn.take_retry() };
                let (pkt, charge) = match slot {
                    Some(Retry { frame, charge }) => (frame, charge),
                    None => match turn.dequeue(now_i) {
                        Ok(Some(p)) => (p, None),
                        Ok(None) | Err(_) => break,
                    },
                };
                let sub = pkt.ampdu_subframe_bytes();
                if lim.aggregates && !frames.is_empty() && bytes + sub > lim.max_bytes {
                    // `ath_tx_form_aggr`'s stop: the frame goes back for the next turn.
                    put_back(&mut turn, Retry { frame: pkt, charge }, &mut frames, &mut bytes, s);
                    break;
                }
                if lim.aggregates && pkt.mpdu_seq == 0 && self.windows[usize::from(s)][a].room(WME_MAX_BA) == 0 {
                    // `BAW_WITHIN`: a new frame would take a number past the BlockAck
                    // window, so the aggregate ends here and the frame waits for the
                    // oldest outstanding one to complete (802.11-2020 10.25.6).
                    self.counters.window_stops += 1;
                    put_back(&mut turn, Retry { frame: pkt, charge }, &mut frames, &mut bytes, s);
                    break;
                }
                let charge = match charge {
                    Some(c) => c,
                    None => match turn.charge_frame(&station, airtime_sched::Frame::len_bytes(&pkt)) {
                        Ok(c) => c,
                        // Its station is gone: the frame is kept back, uncharged, and comes
                        // back with the txq; sent, it would be in flight where the
                        // station's drain cannot see it.
                        Err(_) => {
                            if let Some(back) = hold(&mut turn, Retry { frame: pkt, charge: None }) {
                                turn.send_uncharged();
                                push_frame(&mut frames, &mut bytes, back.frame, None, s);
                            }
                            break;
                        }
                    },
                };
                // `ath_tx_setup_buffer` numbers a new frame from the TID's `seq_next`; a
                // resent one keeps its number.
                let mut pkt = pkt;
                pkt.mpdu_seq = self.windows[usize::from(s)][a].assign(pkt.mpdu_seq);
                push_frame(&mut frames, &mut bytes, pkt, Some(charge), s);
                if !lim.aggregates {
                    // `ath_tx_form_burst`: each frame its own PPDU.
                    let one = std::mem::take(&mut frames);
                    self.hwqs[a].push(HostPpdu { station: s, frames: one, psdu_bytes: bytes, aggregate: false });
                    self.counters.ppdus += 1;
                    singles += 1;
                    bytes = 0;
                    if !self.hwqs[a].has_room(false) {
                        break;
                    }
                }
            }
            let formed = !frames.is_empty() || singles > 0;
            sent |= formed;
            if !frames.is_empty() {
                self.hwqs[a].push(HostPpdu { station: s, frames, psdu_bytes: bytes, aggregate: true });
                self.counters.ppdus += 1;
            }
            if let Some(q) = turn.queue() {
                q.fresh.take_drops(drops);
            }
            let outcome = match (turn.is_backlogged(), formed) {
                (false, _) => TxqReturn::Empty,
                (true, true) => TxqReturn::Backlogged,
                (true, false) => TxqReturn::Stalled,
            };
            turn.finish(outcome, now_i);
        }
        (sent, stopped)
    }

    /// Frames completed (acknowledged, or dropped at the retry limit): their charges
    /// released, and each leaves its BlockAck window (`ath_tx_update_baw` moves
    /// `seq_start` past the oldest ones done).
    pub fn complete_frames(&mut self, statuses: &mut [TxStatus]) {
        for st in statuses.iter_mut() {
            if let Some(c) = st.charge.take() {
                let _ = self.table.scheduler().release(c);
            }
            self.counters.frames_completed += 1;
            let pending = &mut self.pending_frames[st.ac.index()];
            *pending = pending.saturating_sub(1);
            if let Some(w) = self.windows.get_mut(usize::from(st.station)) {
                w[st.ac.index()].done(st.mpdu_seq);
            }
        }
    }

    /// The completion of `ac`'s oldest PPDU on the air, to `station`
    /// (`ath_tx_process_buffer`): it leaves the hardware queue's counts, its completed
    /// frames complete, and those its BlockAck missed go back to the head of their TID
    /// queue, keeping their numbers, to be resent in the TID's next aggregate with its
    /// new frames (`ath_tx_complete_aggr`). Frames that cannot go back (unreachable:
    /// every TID queue takes them) go to `dropped`.
    pub fn ppdu_done(
        &mut self,
        ac: Ac,
        station: u16,
        statuses: &mut [TxStatus],
        failed: Vec<HwFrame>,
        now: Nanos,
        dropped: &mut Vec<Packet>,
    ) {
        let done = self.hwqs[ac.index()].complete(station);
        debug_assert!(done.is_some(), "a completion with no PPDU on the air");
        self.complete_frames(statuses);
        for f in failed {
            self.resend(f, now, dropped);
        }
    }

    /// Puts a frame its BlockAck missed back in its TID queue: the table's enqueue wakes
    /// the txq (`ath_tx_queue_tid`), and the queue keeps it ahead of the new frames.
    ///
    /// Its AQL charge is released here and it is charged again when resent, so AQL
    /// counts what waits in the hardware queue, and a frame waiting in the driver holds
    /// no airtime. mac80211 would hold the charge until the frame's final status; with
    /// AQL's station and PHY limits that can hold back the very txq whose resent frames
    /// would release it (a stall this model showed with an HT20 MCS0 and a legacy station).
    fn resend(&mut self, f: HwFrame, now: Nanos, dropped: &mut Vec<Packet>) {
        let HwFrame { pkt, charge, station, .. } = f;
        debug_assert!(pkt.mpdu_seq != 0, "a resent frame keeps the number it was sent with");
        let key = (station, pkt.ac().index(), pkt.mpdu_seq);
        if let Some(c) = charge {
            let _ = self.table.scheduler().release(c);
        }
        self.counters.resent += 1;
        let Some(txq) = self.txq_of(station, &pkt) else {
            self.give_up(key, pkt, dropped);
            return;
        };
        if let Err(e) = self.table.enqueue(txq, pkt, instant(now)) {
            for p in e.into_frames() {
                let key = (station, p.ac().index(), p.mpdu_seq);
                self.give_up(key, p, dropped);
            }
        }
    }

    /// A frame the driver cannot keep: it leaves its window and counts as dropped, and
    /// the receiver is told to stop waiting for it ([`take_given_up`](Self::take_given_up)),
    /// as ath9k's `ath_send_bar` does for a frame it gives up. Not reached by any
    /// scenario (the TID queues take every resend); handled so that a release build
    /// never leaves the receiver's reorder buffer holding frames behind it.
    fn give_up(&mut self, key: (u16, usize, u32), pkt: Packet, dropped: &mut Vec<Packet>) {
        debug_assert!(false, "station {}'s TID queue refused a frame to resend", key.0);
        if let Some(w) = self.windows.get_mut(usize::from(key.0)) {
            w[key.1].done(key.2);
        }
        self.given_up.push((key.0, pkt.ac(), key.2));
        self.pending_frames[key.1] = self.pending_frames[key.1].saturating_sub(1);
        self.counters.frames_dropped += 1;
        dropped.push(pkt);
    }

    /// The numbered frames given up since the last call (station, access category,
    /// number): the receiver's reorder buffer must move past each.
    pub fn take_given_up(&mut self) -> Vec<(u16, Ac, u32)> {
        core::mem::take(&mut self.given_up)
    }

    /// Transmit or receive airtime of station `s` in `ac`, registered for airtime
    /// fairness.
    pub fn register_airtime(&self, s: u16, ac: Ac, tx_us: u32, rx_us: u32, now: Nanos) {
        if let Some(id) = self.sta_ids.get(usize::from(s)) {
            let _ = self.table.scheduler().register_airtime(*id, ac, tx_us, rx_us, instant(now));
        }
    }
}

/// Best effort's index in per-AC arrays.
const BE: usize = Ac::Be.index();

/// Keeps a frame for the txq's next turn in its retry slot; hands it back if the slot
/// is taken (unreachable: the turn emptied it before taking the frame).
fn hold<Q: TidQueue>(turn: &mut TxqTurn<'_, RetryFirst<Q>>, r: Retry<Packet>) -> Option<Retry<Packet>> {
    turn.hold_back(r).err()
}

/// A frame taken and not sent in this turn goes back for the next one: a numbered
/// frame to its place among the frames to resend (uncharged, as they wait), a new one to
/// the txq's retry slot. Should the slot be taken (unreachable: the turn emptied it
/// before taking a new frame), the frame goes into the PPDU rather than be lost.
fn put_back<Q: TidQueue>(
    turn: &mut TxqTurn<'_, RetryFirst<Q>>,
    r: Retry<Packet>,
    frames: &mut Vec<HwFrame>,
    bytes: &mut u32,
    s: u16,
) {
    if r.frame.mpdu_seq != 0 && turn.queue().is_some() {
        if let Some(c) = r.charge {
            let _ = turn.give_back(c);
        }
        if let Some(q) = turn.queue() {
            q.enqueue(r.frame, Instant::from_micros(0));
        }
        return;
    }
    if let Some(back) = hold(turn, r) {
        push_frame(frames, bytes, back.frame, back.charge, s);
    }
}

/// Adds a frame to the PPDU being formed for station `s`.
fn push_frame(frames: &mut Vec<HwFrame>, bytes: &mut u32, pkt: Packet, charge: Option<airtime_sched::Charge>, s: u16) {
    *bytes += pkt.ampdu_subframe_bytes();
    frames.push(HwFrame { pkt, charge, ring: 0, fifo: 0, station: s, msdu_id: None });
}

/// The driver of one design era.
pub enum Ath9kAp {
    /// Over mac80211's txqs.
    Txqs(Box<Ath9k<SimTxq>>),
    /// Under a qdisc, with per-TID buffers.
    Qdisc {
        /// The driver.
        driver: Box<Ath9k<TidFifo>>,
        /// The interface's qdiscs: `mq`'s child per access category (`Ac::index`).
        qdisc: Box<[Qdisc; Ac::COUNT]>,
        /// Whether the driver stopped each access category's queue
        /// (`ieee80211_stop_queue`).
        stopped: [bool; Ac::COUNT],
    },
}

impl Ath9kAp {
    /// ath9k under the interface's `mq` qdisc with a child from `qdisc` per access
    /// category.
    pub fn under_qdisc(driver: Ath9k<TidFifo>, qdisc: impl Fn() -> Qdisc) -> Ath9kAp {
        Ath9kAp::Qdisc {
            driver: Box::new(driver),
            qdisc: Box::new(std::array::from_fn(|_| qdisc())),
            stopped: [false; Ac::COUNT],
        }
    }

    /// The driver's scheduler.
    pub fn sched(&self) -> &Scheduler {
        match self {
            Ath9kAp::Txqs(d) => d.sched(),
            Ath9kAp::Qdisc { driver, .. } => driver.sched(),
        }
    }

    /// Scheduler handles of the stations.
    pub fn sta_ids(&self) -> &[StationId] {
        match self {
            Ath9kAp::Txqs(d) => &d.sta_ids,
            Ath9kAp::Qdisc { driver, .. } => &driver.sta_ids,
        }
    }

    /// The hardware queue of `ac`.
    pub fn hwq(&self, ac: Ac) -> &HostHwQueue {
        match self {
            Ath9kAp::Txqs(d) => &d.hwqs[ac.index()],
            Ath9kAp::Qdisc { driver, .. } => &driver.hwqs[ac.index()],
        }
    }

    fn hwq_mut(&mut self, ac: Ac) -> &mut HostHwQueue {
        match self {
            Ath9kAp::Txqs(d) => &mut d.hwqs[ac.index()],
            Ath9kAp::Qdisc { driver, .. } => &mut driver.hwqs[ac.index()],
        }
    }

    /// The driver's counters.
    pub fn counters(&self) -> Ath9kCounters {
        match self {
            Ath9kAp::Txqs(d) => d.counters,
            Ath9kAp::Qdisc { driver, .. } => driver.counters,
        }
    }

    /// Frames taken and not yet completed or dropped, by where they are: (qdisc, driver
    /// and hardware). For conservation checks.
    pub fn pending_frames(&self) -> u32 {
        match self {
            Ath9kAp::Txqs(d) => {
                let c = d.counters;
                u32::try_from(c.frames_in.saturating_sub(c.frames_completed + c.frames_dropped)).unwrap_or(u32::MAX)
            }
            Ath9kAp::Qdisc { driver, .. } => driver.pending_frames.iter().sum(),
        }
    }

    /// The stack hands a packet for station `s` to the interface.
    pub fn enqueue(&mut self, s: u16, pkt: Packet, now: Nanos, dropped: &mut Vec<Packet>) {
        let ac = pkt.ac();
        match self {
            Ath9kAp::Txqs(d) => {
                d.enqueue(s, pkt, now, dropped);
                d.schedule_ac(ac, now, dropped);
            }
            Ath9kAp::Qdisc { qdisc, .. } => {
                let q = &mut qdisc[ac.index()];
                if let Err(p) = q.enqueue(pkt, now) {
                    dropped.push(p);
                }
                dropped.extend(q.take_drops());
                self.feed(ac, now, dropped);
            }
        }
    }

    /// `ac`'s qdisc runs while the driver has not stopped its queue: each frame goes to
    /// its TID's buffer and the driver schedules that hardware queue (`ath_tx_start`,
    /// then `ath_tx_send_ampdu` or the TID scheduled for later).
    fn feed(&mut self, ac: Ac, now: Nanos, dropped: &mut Vec<Packet>) {
        let Ath9kAp::Qdisc { driver, qdisc, stopped } = self else { return };
        let (a, qdisc) = (ac.index(), &mut qdisc[ac.index()]);
        while !stopped[a] {
            let Some(pkt) = qdisc.dequeue(now) else { break };
            dropped.extend(qdisc.take_drops());
            let Node::Station(s) = pkt.dst else {
                dropped.push(pkt);
                continue;
            };
            if driver.enqueue(s, pkt, now, dropped) {
                driver.pending_frames[a] += 1;
                if driver.pending_frames[a] > ATH_MAX_QDEPTH {
                    stopped[a] = true;
                }
            }
            driver.schedule_ac(ac, now, dropped);
        }
        dropped.extend(qdisc.take_drops());
    }

    /// Frames completed outside a PPDU's completion (dropped at the retry limit in a
    /// collision whose PPDU the hardware retries), then the schedule.
    pub fn tx_status(&mut self, statuses: &mut [TxStatus], now: Nanos, dropped: &mut Vec<Packet>) {
        let ac = statuses.first().map_or(Ac::Be, |st| st.ac);
        match self {
            Ath9kAp::Txqs(d) => d.complete_frames(statuses),
            Ath9kAp::Qdisc { driver, .. } => driver.complete_frames(statuses),
        }
        self.after_completion(ac, now, dropped);
    }

    /// The numbered frames the driver gave up since the last call
    /// ([`Ath9k::take_given_up`]).
    pub fn take_given_up(&mut self) -> Vec<(u16, Ac, u32)> {
        match self {
            Ath9kAp::Txqs(d) => d.take_given_up(),
            Ath9kAp::Qdisc { driver, .. } => driver.take_given_up(),
        }
    }

    /// One PPDU's completion ([`Ath9k::ppdu_done`]), then the schedule.
    pub fn ppdu_done(
        &mut self,
        ac: Ac,
        station: u16,
        statuses: &mut [TxStatus],
        failed: Vec<HwFrame>,
        now: Nanos,
        dropped: &mut Vec<Packet>,
    ) {
        match self {
            Ath9kAp::Txqs(d) => d.ppdu_done(ac, station, statuses, failed, now, dropped),
            Ath9kAp::Qdisc { driver, .. } => driver.ppdu_done(ac, station, statuses, failed, now, dropped),
        }
        self.after_completion(ac, now, dropped);
    }

    /// The schedule of `ac` after a completion (and, before txqs, the qdisc woken once
    /// `pending_frames` is below [`ATH_MAX_QDEPTH`]).
    fn after_completion(&mut self, ac: Ac, now: Nanos, dropped: &mut Vec<Packet>) {
        match self {
            Ath9kAp::Txqs(d) => d.schedule_ac(ac, now, dropped),
            Ath9kAp::Qdisc { driver, stopped, .. } => {
                let a = ac.index();
                if stopped[a] && driver.pending_frames[a] < ATH_MAX_QDEPTH {
                    stopped[a] = false;
                }
                driver.schedule_ac(ac, now, dropped);
                self.feed(ac, now, dropped);
            }
        }
    }

    /// Registers airtime for station `s` in `ac`.
    pub fn register_airtime(&self, s: u16, ac: Ac, tx_us: u32, rx_us: u32, now: Nanos) {
        match self {
            Ath9kAp::Txqs(d) => d.register_airtime(s, ac, tx_us, rx_us, now),
            Ath9kAp::Qdisc { driver, .. } => driver.register_airtime(s, ac, tx_us, rx_us, now),
        }
    }

    /// The next PPDU the hardware queue of `ac` sends, when its EDCA function won.
    pub fn next_ppdu(&mut self, ac: Ac) -> Option<(u16, Vec<HwFrame>, u32)> {
        self.hwq_mut(ac).next_ppdu()
    }

    /// A collided PPDU goes back to the head of its hardware queue.
    pub fn requeue_front(&mut self, station: u16, frames: Vec<HwFrame>) {
        let ac = frames.first().map_or(Ac::Be, |f| f.pkt.ac());
        self.hwq_mut(ac).requeue_front(station, frames);
    }
}

#[cfg(test)]
mod tests_support {
    use super::*;
    use crate::net::Payload;
    use crate::net::packet::FlowTag;
    use airtime_est::Bandwidth;
    use airtime_sched::Config;

    pub fn udp(station: u16, seq: u64) -> Packet {
        Packet {
            payload: Payload::Udp { seq, sent_ns: 0 },
            len_bytes: 1500,
            src: Node::Wired,
            dst: Node::Station(station),
            flow: FlowTag::Udp(station),
            dscp: 0,
            cpu: 0,
            enqueue_ns: 0,
            tries: 0,
            mpdu_seq: 0,
        }
    }

    pub fn rates() -> Vec<Rate> {
        vec![
            Rate::ht(15, Bandwidth::Mhz20, true).unwrap(),
            Rate::ht(15, Bandwidth::Mhz20, true).unwrap(),
            Rate::ht(0, Bandwidth::Mhz20, false).unwrap(),
            Rate::legacy_cck(10, false).unwrap(),
        ]
    }

    pub fn driver() -> Ath9k<SimTxq> {
        driver_shaped(ScheduleShape::Mac80211Round)
    }

    /// One VHT80 MCS9 station, as the lossy-link tests run it.
    pub fn one_station_driver() -> Ath9k<SimTxq> {
        driver_with(vec![Rate::vht(9, 1, Bandwidth::Mhz80, true).unwrap()], ScheduleShape::Mac80211Round)
    }

    pub fn driver_shaped(shape: ScheduleShape) -> Ath9k<SimTxq> {
        driver_with(rates(), shape)
    }

    fn driver_with(r: Vec<Rate>, shape: ScheduleShape) -> Ath9k<SimTxq> {
        let timings: Vec<PhyTiming> = r.iter().map(|x| PhyTiming::new(*x)).collect();
        let sched = Scheduler::new(Config::default()).unwrap();
        // CoDel out of the way: these tests count frames, not sojourn times.
        let mut fq = airtime_sched::fq_codel::FqCodelConfig::MAC80211;
        fq.codel_target_us = 1_000_000;
        fq.codel_interval_us = 10_000_000;
        let weights = vec![256; r.len()];
        Ath9k::new(sched, shape, &timings, &r, &weights, move || super::super::mac80211::new_txq(fq)).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::*;
    use super::*;
    use airtime_sched::Config;

    /// Sends every chained PPDU and completes it, scheduling after each completion as
    /// ath9k does; returns each PPDU's (station, frames).
    fn drain(d: &mut Ath9k<SimTxq>, now: &mut Nanos, dropped: &mut Vec<Packet>) -> Vec<(u16, usize)> {
        let mut sent = Vec::new();
        while let Some((station, frames, _)) = d.hwqs[BE].next_ppdu() {
            assert!(d.hwqs[BE].ampdu_depth() <= super::super::host_ampdu::ATH_AGGR_MIN_QDEPTH);
            assert!(d.hwqs[BE].depth() <= super::super::host_ampdu::ATH_NON_AGGR_MIN_QDEPTH);
            sent.push((station, frames.len()));
            let mut statuses: Vec<TxStatus> = frames.into_iter().map(|f| f.complete().0).collect();
            *now += 1_000_000;
            d.ppdu_done(Ac::Be, station, &mut statuses, Vec::new(), *now, dropped);
            d.schedule(*now, dropped);
            assert_eq!(d.hwqs[BE].check_counts(), Ok(()));
        }
        sent
    }

    #[test]
    fn the_old_schedule_stops_at_the_first_txq_that_finds_the_hardware_full() {
        let mut d = driver_shaped(ScheduleShape::RoundRobinLaps);
        let mut dropped = Vec::new();
        for seq in 0..100 {
            for s in 0..4 {
                d.enqueue(s, udp(s, seq), 0, &mut dropped);
            }
        }
        d.schedule(0, &mut dropped);
        assert_eq!(d.hwqs[BE].ampdu_depth(), 2);
        for k in 0..5 {
            let before = d.counters.busy_turns;
            d.schedule(k, &mut dropped);
            assert!(d.counters.busy_turns - before <= 1, "a busy TID ends the schedule");
        }
        let mut now = 0;
        drain(&mut d, &mut now, &mut dropped);
        assert_eq!(d.counters.frames_completed, 400);
    }

    #[test]
    fn fast_ht20_mcs15_aggregates_reach_half_the_window_and_the_hardware_holds_two() {
        let mut d = driver();
        let mut dropped = Vec::new();
        let mut now: Nanos = 0;
        for seq in 0..200 {
            for s in 0..4 {
                d.enqueue(s, udp(s, seq), now, &mut dropped);
            }
        }
        d.schedule(now, &mut dropped);
        let sent = drain(&mut d, &mut now, &mut dropped);
        assert!(dropped.is_empty());
        assert_eq!(d.hwqs[BE].max_ampdu_depth_seen, super::super::host_ampdu::ATH_AGGR_MIN_QDEPTH);
        let sizes = |s: u16| sent.iter().filter(|p| p.0 == s).map(|p| p.1).collect::<Vec<_>>();
        // 32 = half the BlockAck window; 1500-byte frames stay under the 64 KiB bound.
        assert!(sizes(0).iter().filter(|&&n| n == 32).count() >= 5, "{:?}", sizes(0));
        // HT20 MCS0: 3296 bytes in 4 ms, two subframes.
        assert!(sizes(2).iter().all(|&n| n <= 2) && sizes(2).contains(&2), "{:?}", sizes(2));
        // Legacy: single frames.
        assert!(sizes(3).iter().all(|&n| n == 1), "{:?}", sizes(3));
    }

    #[test]
    fn every_frame_the_driver_takes_is_completed_or_handed_back() {
        let mut d = driver();
        let mut dropped = Vec::new();
        let mut now: Nanos = 0;
        let mut offered = 0u64;
        for round in 0..50u64 {
            for s in 0..4u16 {
                for k in 0..(3 + u64::from(s) * 7) {
                    d.enqueue(s, udp(s, round * 100 + k), now, &mut dropped);
                    offered += 1;
                }
            }
            d.schedule(now, &mut dropped);
            // Complete a few PPDUs between arrivals, not all.
            for _ in 0..3 {
                let Some((station, frames, _)) = d.hwqs[BE].next_ppdu() else { break };
                let mut st: Vec<TxStatus> = frames.into_iter().map(|f| f.complete().0).collect();
                now += 2_000_000;
                d.ppdu_done(Ac::Be, station, &mut st, Vec::new(), now, &mut dropped);
                d.schedule(now, &mut dropped);
            }
        }
        drain(&mut d, &mut now, &mut dropped);
        let c = d.counters;
        assert_eq!(c.frames_in, offered);
        assert_eq!(c.frames_completed + c.frames_dropped, offered, "{c:?}");
        assert_eq!(dropped.len() as u64, c.frames_dropped);
        // Every charge came back.
        for id in &d.sta_ids {
            assert_eq!(d.sched().station_pending_us(*id, Ac::Be).unwrap(), 0);
        }
    }

    #[test]
    fn the_old_driver_stops_the_qdisc_above_its_pending_limit_and_loses_nothing() {
        let r = rates();
        let timings: Vec<PhyTiming> = r.iter().map(|x| PhyTiming::new(*x)).collect();
        let sched = Scheduler::new(Config::default()).unwrap();
        let driver =
            Ath9k::new(sched, ScheduleShape::Mac80211Round, &timings, &r, &[256; 4], TidFifo::default).unwrap();
        let mut ap = Ath9kAp::under_qdisc(driver, Qdisc::pfifo);
        let mut dropped = Vec::new();
        for seq in 0..600 {
            ap.enqueue((seq % 4) as u16, udp((seq % 4) as u16, seq), 0, &mut dropped);
        }
        // 600 offered, 1000 fit in pfifo_fast: nothing dropped, the driver stopped.
        assert!(dropped.is_empty());
        assert!(matches!(ap, Ath9kAp::Qdisc { stopped: [false, false, true, false], .. }));
        assert_eq!(ap.pending_frames(), ATH_MAX_QDEPTH + 1);
        let mut now = 0;
        let mut completed = 0;
        while let Some((station, frames, _)) = ap.next_ppdu(Ac::Be) {
            let mut st: Vec<TxStatus> = frames.into_iter().map(|f| f.complete().0).collect();
            completed += st.len();
            now += 1_000_000;
            ap.ppdu_done(Ac::Be, station, &mut st, Vec::new(), now, &mut dropped);
            assert!(ap.pending_frames() <= ATH_MAX_QDEPTH + 1);
        }
        assert_eq!(completed, 600);
        assert_eq!(ap.pending_frames(), 0);
    }
}

#[cfg(test)]
mod lossy_tests {
    //! The driver over a lossy link, its BlockAck emulated as the world's is: each
    //! subframe lost with a probability, a lost one counting a try and dropped at
    //! [`MAX_ATTEMPTS`], as `block_ack_down` does.
    use super::tests_support::*;
    use super::*;
    use crate::engine::Rng;
    use crate::wifi::link::MAX_ATTEMPTS;

    /// What the emulated BlockAcks saw.
    #[derive(Default)]
    struct Seen {
        /// Each PPDU's sequence numbers, in the order sent.
        ppdus: Vec<Vec<u32>>,
        /// Frames acknowledged, dropped at the retry limit.
        acked: u64,
        retry_dropped: u64,
    }

    /// Sends the next chained PPDU and hands its completion to the driver (then the
    /// schedule, as `Ath9kAp::ppdu_done` runs it): `lose(seq)` says which subframes the
    /// BlockAck misses; `collide` puts the PPDU back at the head of the chain instead, its
    /// frames counting a try. Returns `false` when nothing is chained.
    fn exchange(
        d: &mut Ath9k<SimTxq>,
        now: &mut Nanos,
        seen: &mut Seen,
        collide: bool,
        mut lose: impl FnMut(u32) -> bool,
    ) -> bool {
        let mut dropped = Vec::new();
        let Some((station, frames, _)) = d.hwqs[BE].next_ppdu() else { return false };
        seen.ppdus.push(frames.iter().map(|f| f.pkt.mpdu_seq).collect());
        *now += 1_000_000;
        let (mut statuses, mut failed, mut kept) = (Vec::new(), Vec::new(), Vec::new());
        for mut f in frames {
            if !collide && !lose(f.pkt.mpdu_seq) {
                seen.acked += 1;
                statuses.push(f.complete().0);
                continue;
            }
            f.pkt.tries += 1;
            if f.pkt.tries >= MAX_ATTEMPTS {
                seen.retry_dropped += 1;
                statuses.push(f.complete().0);
            } else if collide {
                kept.push(f);
            } else {
                failed.push(f);
            }
        }
        if collide && !kept.is_empty() {
            d.hwqs[BE].requeue_front(station, kept);
            d.complete_frames(&mut statuses);
        } else {
            d.ppdu_done(Ac::Be, station, &mut statuses, failed, *now, &mut dropped);
        }
        d.schedule(*now, &mut dropped);
        assert!(dropped.is_empty(), "the txq dropped {}", dropped.len());
        assert_eq!(d.hwqs[BE].check_counts(), Ok(()));
        true
    }

    fn offer(d: &mut Ath9k<SimTxq>, from: u64, n: u64) {
        let mut dropped = Vec::new();
        for seq in from..from + n {
            d.enqueue(0, udp(0, seq), 0, &mut dropped);
        }
        d.schedule(0, &mut dropped);
        assert!(dropped.is_empty());
    }

    #[test]
    fn a_lost_subframe_is_resent_inside_a_later_ampdu_with_new_frames() {
        let mut d = one_station_driver();
        let (mut now, mut seen) = (0, Seen::default());
        offer(&mut d, 0, 200);
        // The first aggregate loses its sixth subframe; nothing else is lost.
        assert!(exchange(&mut d, &mut now, &mut seen, false, |seq| seq == 6));
        while exchange(&mut d, &mut now, &mut seen, false, |_| false) {}
        let first = seen.ppdus[0].clone();
        assert_eq!(first.len(), 32, "half the BlockAck window");
        let again: Vec<&Vec<u32>> = seen.ppdus[1..].iter().filter(|p| p.contains(&6)).collect();
        assert_eq!(again.len(), 1, "resent once: {:?}", seen.ppdus);
        let resent_in = again[0];
        // Not a PPDU of its own: it heads an A-MPDU of frames never sent before.
        assert_eq!(resent_in[0], 6);
        let newest_before = seen.ppdus.iter().take_while(|p| !p.contains(&6) || **p == first).flatten().max();
        assert!(resent_in.len() > 1 && resent_in[1..].iter().all(|s| Some(s) > newest_before), "{resent_in:?}");
        assert_eq!((d.counters.resent, seen.acked), (1, 200));
        assert_eq!((d.hwqs[BE].depth(), d.hwqs[BE].ampdu_depth()), (0, 0));
    }

    #[test]
    fn no_new_sequence_number_goes_past_the_block_ack_window_after_losses() {
        let mut d = one_station_driver();
        let (mut now, mut seen, mut rng) = (0, Seen::default(), Rng::new(7));
        offer(&mut d, 0, 3000);
        // The frames sent and not yet acknowledged: WinStart is the oldest of them.
        let mut outstanding = std::collections::BTreeSet::new();
        loop {
            let mut lost = Vec::new();
            let sent = exchange(&mut d, &mut now, &mut seen, false, |s| {
                let l = rng.unit() < 0.2;
                if l {
                    lost.push(s);
                }
                l
            });
            let Some(p) = seen.ppdus.last().filter(|_| sent) else { break };
            let start = outstanding.first().or(p.iter().min()).copied().unwrap_or(0);
            for &s in p {
                assert!(s < start + WME_MAX_BA, "sequence number {s} past the window from {start}");
                outstanding.insert(s);
            }
            for s in p.iter().filter(|s| !lost.contains(s)) {
                outstanding.remove(s);
            }
        }
        assert!(d.counters.window_stops > 0, "at p = 0.2 the window binds");
        assert_eq!(seen.acked + seen.retry_dropped, 3000);
    }

    #[test]
    fn the_depth_counts_return_to_zero_and_every_frame_is_delivered_or_dropped_at_the_retry_limit() {
        let mut d = driver();
        let (mut now, mut seen, mut rng) = (0, Seen::default(), Rng::new(11));
        // Four stations, three of them aggregating; p = 0.9 sends some frames to their
        // retry limit (0.9^30: 4 %), and one exchange in five collides.
        for round in 0..10 {
            for s in 0..4u16 {
                let mut dropped = Vec::new();
                for k in 0..50 {
                    d.enqueue(s, udp(s, round * 100 + k), now, &mut dropped);
                }
                d.schedule(now, &mut dropped);
            }
            for _ in 0..20 {
                let collide = rng.unit() < 0.2;
                exchange(&mut d, &mut now, &mut seen, collide, |_| rng.unit() < 0.9);
            }
        }
        loop {
            let collide = rng.unit() < 0.2;
            if !exchange(&mut d, &mut now, &mut seen, collide, |_| rng.unit() < 0.9) {
                break;
            }
        }
        let c = d.counters;
        assert_eq!(c.frames_in, 2000);
        assert_eq!(seen.acked + seen.retry_dropped, 2000, "{c:?}");
        assert!(seen.retry_dropped > 0 && c.resent > 0);
        assert_eq!((c.frames_completed, c.frames_dropped), (2000, 0));
        assert_eq!((d.hwqs[BE].depth(), d.hwqs[BE].ampdu_depth()), (0, 0));
        for id in &d.sta_ids {
            assert_eq!(d.sched().station_pending_us(*id, Ac::Be).unwrap(), 0, "every charge came back");
        }
    }
}
