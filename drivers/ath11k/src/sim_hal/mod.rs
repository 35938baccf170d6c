//! A simulated HAL: deterministic, in passed-in time, with fault injection.
//!
//! It models three TCL data rings, each with its outstanding MSDU table, and a
//! firmware that takes descriptors from the rings when it is advanced, completes each
//! frame a configured delay later with a configured status, and reports PPDU stats
//! for what it transmitted (several users per PPDU when MU is configured). Nothing
//! here reads a clock or draws a random number: the same calls give the same results.
//!
//! Fault injection:
//! * full rings: small [`SimConfig::tcl_ring_size`] or [`SimConfig::msdu_capacity`],
//!   or [`SimHal::hold_rings`] (the firmware stops taking descriptors);
//! * refused enqueues of any kind (-ENOSPC race, -ENOMEM, other):
//!   [`SimHal::fail_enqueues`];
//! * every completion status: [`SimHal::script_statuses`] and
//!   [`SimConfig::default_status`]; completions for ids that were never sent:
//!   [`SimHal::inject_completion`];
//! * MU PPDUs: [`SimConfig::mu_max_users`], or [`SimHal::inject_ppdu`];
//! * completion bursts larger than any budget: many frames due at one instant
//!   (hold the firmware with [`SimHal::pause_completions`], then release).
//!
//! Every method takes `&self`: the adapter's wake and completion contexts and the
//! thread playing the firmware may all call it at once. Each ring has its own lock
//! (a small spinlock, documented in the `ring_lock` module), as each of ath11k's TCL rings and MSDU tables does.
//!
//! Used by the crate's tests, the kernel module's self-test and the simulator.

use crate::hal::{
    DP_TCL_DATA_RING_SIZE, DP_TCL_NUM_RING_MAX, MSDU_TABLE_CAPACITY, Msdu, MsduTable, PpduStats, PpduStatsSource,
    PpduUser, RingId, RxPpdu, RxStatusSource, StatusSink, TclDesc, TclRings, TxCompletion, TxCompletionRing, TxStatus,
};
use airtime_est::{Bandwidth, Rate, RuSize};
use airtime_sched::{Ac, Instant, RingErrorKind};
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use ring_lock::RingLock;

pub(crate) mod ring_lock;

/// The simulated hardware's configuration (build from `Default`, then set fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SimConfig {
    /// Descriptors per TCL ring.
    pub tcl_ring_size: u32,
    /// Entries per ring's outstanding MSDU table.
    pub msdu_capacity: u32,
    /// Time from the firmware taking a frame to its completion, in us.
    pub completion_delay_us: u64,
    /// Descriptors the firmware takes from each ring per [`SimHal::advance`].
    pub fw_take_per_advance: u32,
    /// Airtime of one frame in PPDU stats, in us (per-peer values override it).
    pub frame_airtime_us: u32,
    /// Users per PPDU: 1 for SU only, up to [`MAX_PPDU_USERS`](crate::hal::MAX_PPDU_USERS).
    pub mu_max_users: u8,
    /// The channel an MU PPDU's users split into equal RUs (the largest size of which
    /// there are enough, [`RuSize::equal_share`]).
    pub mu_bandwidth: Bandwidth,
    /// Whether transmitted frames produce PPDU stats.
    pub ppdu_stats: bool,
    /// Status of a completion once the scripted statuses are used up.
    pub default_status: TxStatus,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            tcl_ring_size: DP_TCL_DATA_RING_SIZE,
            msdu_capacity: MSDU_TABLE_CAPACITY,
            completion_delay_us: 1000,
            fw_take_per_advance: u32::MAX,
            frame_airtime_us: 100,
            mu_max_users: 1,
            mu_bandwidth: Bandwidth::Mhz80,
            ppdu_stats: true,
            default_status: TxStatus::Acked,
        }
    }
}

/// One ring's outstanding MSDU table: a slab with a free list (ids are reused, lowest
/// recently freed first), growing up to its capacity.
#[derive(Debug)]
struct Slab<F> {
    entries: Vec<Option<Msdu<F>>>,
    free: Vec<u32>,
    count: u32,
}

impl<F> Slab<F> {
    const fn new() -> Self {
        Slab { entries: Vec::new(), free: Vec::new(), count: 0 }
    }

    fn insert(&mut self, capacity: u32, msdu: Msdu<F>) -> Result<u32, Msdu<F>> {
        if self.count >= capacity {
            return Err(msdu);
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                let Ok(id) = u32::try_from(self.entries.len()) else { return Err(msdu) };
                self.entries.push(None);
                id
            }
        };
        match self.entries.get_mut(id as usize) {
            Some(slot @ None) => {
                *slot = Some(msdu);
                self.count = self.count.saturating_add(1);
                Ok(id)
            }
            _ => Err(msdu),
        }
    }

    fn take(&mut self, id: u32) -> Option<Msdu<F>> {
        let m = self.entries.get_mut(id as usize)?.take()?;
        self.count = self.count.saturating_sub(1);
        self.free.push(id);
        Some(m)
    }

    fn take_any(&mut self) -> Option<(u32, Msdu<F>)> {
        let id = self.entries.iter().position(Option::is_some)?;
        let id = u32::try_from(id).ok()?;
        self.take(id).map(|m| (id, m))
    }
}

#[derive(Clone, Copy, Debug)]
struct InFlight {
    ring: RingId,
    desc: TclDesc,
    due: Instant,
}

#[derive(Clone, Copy, Debug)]
struct Peer {
    peer_id: u16,
    frame_airtime_us: u32,
    rate: Option<Rate>,
}

/// Counters of the simulated firmware.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SimCounters {
    /// Descriptors accepted into the TCL rings.
    pub enqueued: u64,
    /// Enqueues refused (faults and full rings).
    pub refused: u64,
    /// Descriptors the firmware took from the rings.
    pub taken: u64,
    /// Completions produced.
    pub completed: u64,
    /// PPDU stats records produced.
    pub ppdus: u64,
}

#[derive(Debug, Default)]
struct AtomicCounters {
    enqueued: AtomicU64,
    refused: AtomicU64,
    taken: AtomicU64,
    completed: AtomicU64,
    ppdus: AtomicU64,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// One TCL ring: its descriptors and the faults scripted for its next enqueues
/// (ath11k's `tcl_ring->lock` protects the former).
#[derive(Debug, Default)]
struct TclRingState {
    descs: VecDeque<TclDesc>,
    faults: VecDeque<RingErrorKind>,
}

/// The simulated firmware's own state.
#[derive(Debug)]
struct Firmware {
    now: Instant,
    in_flight: VecDeque<InFlight>,
    statuses: VecDeque<TxStatus>,
    rings_held: bool,
    completions_paused: bool,
    peers: Vec<Peer>,
}

/// The simulated HAL over frames of type `F`. See the [module documentation](self).
///
/// Every method takes `&self`, so the wake context, the completion context and the
/// test driving the firmware ([`advance`](Self::advance)) may call it at once. Each
/// TCL ring, each ring's MSDU table, the completion ring, the PPDU and rx status
/// queues, the status sink and the firmware have a lock of their own (a small spinlock),
/// held for a few instructions; only `advance` nests them (firmware, then one ring at
/// a time).
#[derive(Debug)]
pub struct SimHal<F> {
    config: SimConfig,
    rings: [RingLock<TclRingState>; DP_TCL_NUM_RING_MAX],
    tables: [RingLock<Slab<F>>; DP_TCL_NUM_RING_MAX],
    fw: RingLock<Firmware>,
    completions: RingLock<VecDeque<TxCompletion>>,
    ppdus: RingLock<VecDeque<PpduStats>>,
    rx: RingLock<VecDeque<RxPpdu>>,
    done: RingLock<Returned<F>>,
    counters: AtomicCounters,
}

/// The frames handed back through [`StatusSink`], in order, each with its completion's
/// tag (`None`: handed back by anything but a completion).
#[derive(Debug)]
struct Returned<F> {
    frames: Vec<(F, TxStatus)>,
    tags: Vec<Option<u32>>,
}

impl<F> Returned<F> {
    fn push(&mut self, frame: F, status: TxStatus, tag: Option<u32>) {
        self.frames.push((frame, status));
        self.tags.push(tag);
    }
}

impl<F> SimHal<F> {
    /// A simulated radio at time 0.
    pub fn new(config: SimConfig) -> SimHal<F> {
        SimHal {
            config,
            rings: [const { RingLock::new(TclRingState { descs: VecDeque::new(), faults: VecDeque::new() }) }; 3],
            tables: [const { RingLock::new(Slab::new()) }; 3],
            fw: RingLock::new(Firmware {
                now: Instant::ZERO,
                in_flight: VecDeque::new(),
                statuses: VecDeque::new(),
                rings_held: false,
                completions_paused: false,
                peers: Vec::new(),
            }),
            completions: RingLock::new(VecDeque::new()),
            ppdus: RingLock::new(VecDeque::new()),
            rx: RingLock::new(VecDeque::new()),
            done: RingLock::new(Returned { frames: Vec::new(), tags: Vec::new() }),
            counters: AtomicCounters::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// Changes the configuration (takes effect from the next operation).
    pub fn config_mut(&mut self) -> &mut SimConfig {
        &mut self.config
    }

    /// The time of the last [`advance`](Self::advance).
    pub fn now(&self) -> Instant {
        self.fw.lock().now
    }

    /// Counters so far.
    pub fn counters(&self) -> SimCounters {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        SimCounters {
            enqueued: get(&c.enqueued),
            refused: get(&c.refused),
            taken: get(&c.taken),
            completed: get(&c.completed),
            ppdus: get(&c.ppdus),
        }
    }

    /// Sets a peer's airtime per frame and tx rate, as its PPDU stats will report them.
    pub fn set_peer(&self, peer_id: u16, frame_airtime_us: u32, rate: Option<Rate>) {
        let p = Peer { peer_id, frame_airtime_us, rate };
        let mut fw = self.fw.lock();
        match fw.peers.iter_mut().find(|q| q.peer_id == peer_id) {
            Some(q) => *q = p,
            None => fw.peers.push(p),
        }
    }

    /// The next completions get these statuses, in order (then the default).
    pub fn script_statuses(&self, statuses: impl IntoIterator<Item = TxStatus>) {
        self.fw.lock().statuses.extend(statuses);
    }

    /// The next enqueues on `ring` are refused with these kinds, in order.
    pub fn fail_enqueues(&self, ring: RingId, kinds: impl IntoIterator<Item = RingErrorKind>) {
        if let Some(r) = self.rings.get(ring.index()) {
            r.lock().faults.extend(kinds);
        }
    }

    /// While held, the firmware takes no descriptor, so the rings fill up.
    pub fn hold_rings(&self, held: bool) {
        self.fw.lock().rings_held = held;
    }

    /// While paused, the firmware completes nothing (frames become due meanwhile, so
    /// resuming releases a burst).
    pub fn pause_completions(&self, paused: bool) {
        self.fw.lock().completions_paused = paused;
    }

    /// Queues a completion as if the hardware wrote it (e.g. for an id never sent).
    pub fn inject_completion(&self, c: TxCompletion) {
        self.completions.lock().push_back(c);
    }

    /// Queues a PPDU stats record.
    pub fn inject_ppdu(&self, p: PpduStats) {
        self.ppdus.lock().push_back(p);
    }

    /// Queues a received PPDU's monitor status.
    pub fn inject_rx(&self, r: RxPpdu) {
        self.rx.lock().push_back(r);
    }

    /// Runs `f` over the frames handed back through [`StatusSink`] so far, with their
    /// statuses, in order (the sink's lock is held meanwhile: `f` must not call the HAL).
    pub fn with_done<R>(&self, f: impl FnOnce(&[(F, TxStatus)]) -> R) -> R {
        f(&self.done.lock().frames)
    }

    /// Frames handed back so far.
    pub fn done_len(&self) -> usize {
        self.done.lock().frames.len()
    }

    /// Takes the frames handed back so far.
    pub fn take_done(&self) -> Vec<(F, TxStatus)> {
        let mut done = self.done.lock();
        done.tags.clear();
        core::mem::take(&mut done.frames)
    }

    /// Takes the frames handed back so far, each with the tag of the completion that
    /// finished it ([`StatusSink::tx_completed`]), or `None` if something else handed
    /// it back (a removal, teardown). The firmware tags its completions with their
    /// number, counted from 0 (wrapping); injected ones keep their own tag.
    pub fn take_done_tagged(&self) -> Vec<(F, TxStatus, Option<u32>)> {
        let mut done = self.done.lock();
        let tags = core::mem::take(&mut done.tags);
        core::mem::take(&mut done.frames).into_iter().zip(tags).map(|((f, s), t)| (f, s, t)).collect()
    }

    /// Descriptors waiting in `ring` for the firmware.
    pub fn ring_len(&self, ring: RingId) -> u32 {
        self.rings.get(ring.index()).map_or(0, |r| r.lock().descs.len() as u32)
    }

    /// Frames the firmware took and has not completed.
    pub fn in_flight(&self) -> u32 {
        self.fw.lock().in_flight.len() as u32
    }

    /// Completions written and not yet reaped.
    pub fn completions_waiting(&self) -> u32 {
        self.completions.lock().len() as u32
    }

    /// Moves the firmware to `now` (never backwards): takes descriptors from the
    /// rings, completes every frame due by `now`, and writes PPDU stats for the frames
    /// transmitted. Safe to call while the adapter runs in other threads (the
    /// firmware runs beside the driver).
    pub fn advance(&self, now: Instant) {
        let mut fw = self.fw.lock();
        if now > fw.now {
            fw.now = now;
        }
        let now = fw.now;
        if !fw.rings_held {
            let due = now.add_micros(self.config.completion_delay_us);
            for ring in RingId::ALL {
                let Some(lock) = self.rings.get(ring.index()) else { continue };
                let mut q = lock.lock();
                let mut n = 0;
                while n < self.config.fw_take_per_advance {
                    let Some(desc) = q.descs.pop_front() else { break };
                    fw.in_flight.push_back(InFlight { ring, desc, due });
                    bump(&self.counters.taken);
                    n = n.saturating_add(1);
                }
            }
        }
        if fw.completions_paused {
            return;
        }
        let mut sent: Vec<Sent> = Vec::new();
        while fw.in_flight.front().is_some_and(|f| f.due <= now) {
            let Some(f) = fw.in_flight.pop_front() else { break };
            let status = fw.statuses.pop_front().unwrap_or(self.config.default_status);
            // Tagged with its number (the firmware lock orders them; wrapping by design).
            let tag = self.counters.completed.fetch_add(1, Ordering::Relaxed) as u32;
            self.completions.lock().push_back(TxCompletion::new(f.ring, f.desc.msdu_id, status).with_tag(tag));
            if let (true, Some(peer)) = (status.transmitted(), f.desc.peer_id) {
                let user = match sent.iter().position(|s| s.peer_id == peer && s.ac == f.desc.ac) {
                    Some(i) => sent.get_mut(i),
                    None => {
                        sent.push(Sent { peer_id: peer, ac: f.desc.ac, frames: 0, acked_msdus: 0, acked_bytes: 0 });
                        sent.last_mut()
                    }
                };
                if let Some(s) = user {
                    s.frames = s.frames.saturating_add(1);
                    if status == TxStatus::Acked {
                        s.acked_msdus = s.acked_msdus.saturating_add(1);
                        s.acked_bytes = s.acked_bytes.saturating_add(f.desc.len_bytes);
                    }
                }
            }
        }
        if self.config.ppdu_stats {
            self.write_ppdus(&fw.peers, &sent);
        }
    }

    /// One PPDU per group of up to `mu_max_users` (peer, AC) users. A user's own
    /// duration is its frames times its peer's frame airtime (the airtime of a frame as
    /// sent, on whatever RU it gets); the PPDU lasts as long as its longest user. Each
    /// user is reported the whole PPDU's duration as its tx duration, as ath11k's
    /// firmware does for MU, and, in an MU PPDU, an equal RU of
    /// [`SimConfig::mu_bandwidth`] and its own duration. Each user carries the count
    /// and bytes of its *acknowledged* frames only, as ath11k's ACK/BA status TLV does
    /// (its success count and bytes); not-acked frames still took their airtime.
    fn write_ppdus(&self, peers: &[Peer], sent: &[Sent]) {
        let users = usize::from(self.config.mu_max_users.clamp(1, crate::hal::MAX_PPDU_USERS as u8));
        for group in sent.chunks(users) {
            let own = |s: &Sent| s.frames.saturating_mul(self.airtime_of(peers, s.peer_id));
            let duration = group.iter().map(own).max().unwrap_or(0);
            let ru_tones = match group.len() {
                0 | 1 => 0,
                n => RuSize::equal_share(n as u16, self.config.mu_bandwidth).map_or(0, RuSize::tones),
            };
            let mut p = PpduStats::new(duration);
            for s in group {
                let &Sent { peer_id, ac, acked_msdus, acked_bytes, .. } = s;
                let rate = peers.iter().find(|q| q.peer_id == peer_id).and_then(|q| q.rate);
                let own_duration_us = if ru_tones > 0 { own(s) } else { 0 };
                let _ = p.push_user(PpduUser {
                    peer_id,
                    tid: tid_of(ac),
                    tx_duration_us: duration,
                    rate,
                    ru_tones,
                    own_duration_us,
                    msdus: u16::try_from(acked_msdus).unwrap_or(u16::MAX),
                    msdu_bytes: acked_bytes,
                });
            }
            self.ppdus.lock().push_back(p);
            bump(&self.counters.ppdus);
        }
    }

    fn airtime_of(&self, peers: &[Peer], peer_id: u16) -> u32 {
        peers.iter().find(|q| q.peer_id == peer_id).map_or(self.config.frame_airtime_us, |q| q.frame_airtime_us)
    }
}

/// One (peer, AC) user of the PPDUs an advance writes: the frames it transmitted
/// (its airtime) and those acknowledged (what its PPDU stats report).
#[derive(Clone, Copy)]
struct Sent {
    peer_id: u16,
    ac: Ac,
    frames: u32,
    acked_msdus: u32,
    acked_bytes: u32,
}

/// A TID of `ac` (the lowest of its pair).
const fn tid_of(ac: Ac) -> u8 {
    match ac {
        Ac::Vo => 6,
        Ac::Vi => 4,
        Ac::Be => 0,
        Ac::Bk => 1,
    }
}

impl<F> TclRings for SimHal<F> {
    type Error = RingErrorKind;

    fn tcl_descriptors(&self, _ring: RingId) -> u32 {
        self.config.tcl_ring_size
    }

    fn tcl_free(&self, ring: RingId) -> u32 {
        self.config.tcl_ring_size.saturating_sub(self.ring_len(ring))
    }

    fn tcl_enqueue(&self, ring: RingId, desc: TclDesc) -> Result<(), RingErrorKind> {
        let Some(lock) = self.rings.get(ring.index()) else { return Err(RingErrorKind::Other) };
        let mut q = lock.lock();
        if let Some(kind) = q.faults.pop_front() {
            bump(&self.counters.refused);
            return Err(kind);
        }
        if q.descs.len() < self.config.tcl_ring_size as usize {
            q.descs.push_back(desc);
            bump(&self.counters.enqueued);
            Ok(())
        } else {
            bump(&self.counters.refused);
            Err(RingErrorKind::Full)
        }
    }
}

impl<F> MsduTable for SimHal<F> {
    type Frame = F;

    fn msdu_capacity(&self, _ring: RingId) -> u32 {
        self.config.msdu_capacity
    }

    fn msdu_outstanding(&self, ring: RingId) -> u32 {
        self.tables.get(ring.index()).map_or(0, |t| t.lock().count)
    }

    fn msdu_insert(&self, ring: RingId, msdu: Msdu<F>) -> Result<u32, Msdu<F>> {
        let cap = self.config.msdu_capacity;
        match self.tables.get(ring.index()) {
            Some(t) => t.lock().insert(cap, msdu),
            None => Err(msdu),
        }
    }

    fn msdu_take(&self, ring: RingId, id: u32) -> Option<Msdu<F>> {
        self.tables.get(ring.index())?.lock().take(id)
    }

    fn msdu_take_any(&self, ring: RingId) -> Option<(u32, Msdu<F>)> {
        self.tables.get(ring.index())?.lock().take_any()
    }
}

impl<F> TxCompletionRing for SimHal<F> {
    fn reap_tx_completion(&self) -> Option<TxCompletion> {
        self.completions.lock().pop_front()
    }
}

impl<F> StatusSink for SimHal<F> {
    type Frame = F;

    fn tx_status(&self, frame: F, status: TxStatus) {
        self.done.lock().push(frame, status, None);
    }

    fn tx_completed(&self, frame: F, completion: &TxCompletion) {
        self.done.lock().push(frame, completion.status, Some(completion.tag));
    }
}

impl<F> PpduStatsSource for SimHal<F> {
    fn next_ppdu_stats(&self) -> Option<PpduStats> {
        self.ppdus.lock().pop_front()
    }
}

impl<F> RxStatusSource for SimHal<F> {
    fn next_rx_ppdu(&self) -> Option<RxPpdu> {
        self.rx.lock().pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(msdu_id: u32, peer: u16) -> TclDesc {
        TclDesc { frame_addr: 0, msdu_id, len_bytes: 1500, ac: Ac::Be, peer_id: Some(peer) }
    }

    #[test]
    fn the_firmware_completes_frames_after_the_configured_delay() {
        let hal: SimHal<u32> = SimHal::new(SimConfig { completion_delay_us: 500, ..SimConfig::default() });
        let r = RingId::for_cpu(0);
        let id = hal.msdu_insert(r, Msdu::new(7, None, Ac::Be)).unwrap();
        hal.tcl_enqueue(r, desc(id, 1)).unwrap();
        hal.advance(Instant::from_micros(100));
        assert_eq!(hal.reap_tx_completion(), None);
        hal.advance(Instant::from_micros(599));
        assert_eq!(hal.reap_tx_completion(), None);
        hal.advance(Instant::from_micros(600));
        assert_eq!(hal.reap_tx_completion(), Some(TxCompletion::new(r, id, TxStatus::Acked)));
        let p = hal.next_ppdu_stats().unwrap();
        assert_eq!((p.duration_us, p.n_users()), (100, 1));
    }

    #[test]
    fn the_msdu_table_holds_its_capacity_and_reuses_ids() {
        let hal: SimHal<u32> = SimHal::new(SimConfig { msdu_capacity: 2, ..SimConfig::default() });
        let r = RingId::for_cpu(1);
        let a = hal.msdu_insert(r, Msdu::new(1, None, Ac::Be)).unwrap();
        let _b = hal.msdu_insert(r, Msdu::new(2, None, Ac::Be)).unwrap();
        assert!(hal.msdu_insert(r, Msdu::new(3, None, Ac::Be)).is_err());
        assert_eq!(hal.msdu_take(r, a).map(|m| m.frame), Some(1));
        assert_eq!(hal.msdu_take(r, a), None, "an id is taken once");
        assert_eq!(hal.msdu_insert(r, Msdu::new(4, None, Ac::Be)), Ok(a));
        assert_eq!(hal.msdu_outstanding(r), 2);
    }

    #[test]
    fn injected_faults_refuse_enqueues_in_order() {
        let hal: SimHal<u32> = SimHal::new(SimConfig { tcl_ring_size: 1, ..SimConfig::default() });
        let r = RingId::for_cpu(2);
        hal.fail_enqueues(r, [RingErrorKind::OutOfMemory, RingErrorKind::Other]);
        assert_eq!(hal.tcl_enqueue(r, desc(0, 1)), Err(RingErrorKind::OutOfMemory));
        assert_eq!(hal.tcl_enqueue(r, desc(0, 1)), Err(RingErrorKind::Other));
        assert_eq!(hal.tcl_enqueue(r, desc(0, 1)), Ok(()));
        assert_eq!(hal.tcl_enqueue(r, desc(1, 1)), Err(RingErrorKind::Full));
    }

    #[test]
    fn held_rings_fill_up_and_the_firmware_takes_a_configured_number_per_advance() {
        let config = SimConfig { tcl_ring_size: 4, fw_take_per_advance: 3, ..SimConfig::default() };
        let hal: SimHal<u32> = SimHal::new(config);
        let r = RingId::for_cpu(0);
        hal.hold_rings(true);
        for i in 0..4 {
            hal.tcl_enqueue(r, desc(i, 1)).unwrap();
            hal.advance(Instant::from_micros(u64::from(i)));
        }
        assert_eq!((hal.tcl_free(r), hal.in_flight()), (0, 0));
        hal.hold_rings(false);
        hal.advance(Instant::from_micros(10));
        assert_eq!((hal.ring_len(r), hal.in_flight()), (1, 3));
        hal.advance(Instant::from_micros(11));
        assert_eq!((hal.ring_len(r), hal.in_flight()), (0, 4));
        hal.advance(Instant::from_micros(5)); // time never goes back
        assert_eq!(hal.now(), Instant::from_micros(11));
    }

    #[test]
    fn mu_ppdus_report_every_user_the_whole_duration() {
        let hal: SimHal<u32> = SimHal::new(SimConfig { mu_max_users: 4, ..SimConfig::default() });
        hal.set_peer(1, 100, None);
        hal.set_peer(2, 300, None);
        let r = RingId::for_cpu(0);
        for (i, peer) in [1u16, 2, 2].into_iter().enumerate() {
            let id = hal.msdu_insert(r, Msdu::new(i as u32, None, Ac::Be)).unwrap();
            hal.tcl_enqueue(r, desc(id, peer)).unwrap();
        }
        hal.advance(Instant::ZERO);
        hal.advance(Instant::from_micros(1000));
        let p = hal.next_ppdu_stats().unwrap();
        assert_eq!((p.duration_us, p.n_users()), (600, 2));
        assert!(p.users().all(|u| u.tx_duration_us == 600));
        // Two users of an 80 MHz channel: a 484-tone RU each, and their own durations.
        assert!(p.users().all(|u| u.ru_tones == 484));
        let own: Vec<u32> = p.users().map(|u| u.own_duration_us).collect();
        assert_eq!(own, [100, 600]);
    }
}
