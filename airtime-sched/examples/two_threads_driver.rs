//! A driver with two contexts: the file a driver author copies when the wake path and
//! the tx-status path run on different CPUs.
//!
//! * The **wake thread** is the stack's transmit path: it enqueues frames for the
//!   stations from any context with [`TxqTable::enqueue`] (it never waits: straight
//!   into the txq's FQ-CoDel queue when no other context holds it, else into the txq's
//!   lock-free intake) and runs a round.
//! * The **tx-status thread** is the completion interrupt's bottom half: it takes the
//!   frames the radio finished and completes each with [`Scheduler::complete_frame`]
//!   (releases its charge, registers the airtime it used), then runs a round — on the
//!   same AC, at the same time as the wake thread.
//! * The **admin** (here, the main thread) removes stations and adds new ones while
//!   their frames are queued and in flight, and changes weights, as `iw` and hostapd do.
//!
//! The radio sends one frame at a time, each for the airtime its rate takes, and the
//! stack offers more than it can carry (as a bulk sender does, up to a cap on the
//! frames the driver holds), so the stations keep a backlog: nearly every station
//! leaves with frames queued (handed back to the driver) and frames in flight
//! (completed after it left, their airtime still accounted), and the example checks
//! that some did.
//!
//! The scheduler hands each txq to one context at a time, and that turn is the only way
//! to its queue, so nothing here takes a lock except the hardware ring's own (one per
//! ring, as ath11k has one per TCL ring). Both threads run rounds on the same AC at
//! once; with `--gated`, a [`RoundGate`] lets one of them run the rounds at a time,
//! and the other leaves it a note and goes on (fewer lines passed between the CPUs). At the end every frame is accounted for (sent
//! and completed, dropped and counted by FQ-CoDel, or handed back when its station
//! left) and no airtime is pending. Run it with
//! `cargo run --release -p airtime-sched --example two_threads_driver [-- [--gated] [MILLISECONDS]]`
//! (1000 ms of churn by default; the run takes about as long).

use airtime_est::{Bandwidth, Rate};
use airtime_sched::driver_loop::StationTable;
use airtime_sched::fq_codel::{DropReason, FqCodelConfig, FqCodelTxq, FqFrame};
use airtime_sched::traits::{PushError, RingErrorKind, StationErrorKind, price_from_rate};
use airtime_sched::txqs::{EnqueueError, RemovedTxq, TurnBudget};
use airtime_sched::{
    Ac, Charge, Config, DepartingStation, Frame, FrameStatus, GateOutcome, Instant, Ring, RoundGate, Scheduler,
    Station, StationId, Tid, TxqId, TxqTable, Weight,
};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A frame: who it is for, and which flow.
struct Packet {
    station: StationId,
    flow: u32,
}

impl Frame for Packet {
    fn len_bytes(&self) -> u32 {
        1500
    }
}

impl FqFrame for Packet {
    fn flow_hash(&self) -> u32 {
        self.flow
    }
}

/// The driver's station slot, indexed by `StationId::index` and read by both threads
/// (a real driver's `sta` array under RCU): its occupant and last tx rate in atomics.
struct Peer {
    /// Raw `StationId` of the occupant, `u64::MAX` if none.
    id: AtomicU64,
    /// Last reported VHT80 MCS.
    mcs: AtomicU32,
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

/// Descriptors in the hardware ring.
const RING_SIZE: usize = 64;

/// A frame the hardware holds, with what it will report when done.
struct InFlight {
    frame: Packet,
    charge: Option<Charge>,
    /// The rate it goes out at and its tries, as the tx status will say.
    status: FrameStatus,
    /// When the radio finishes it: it sends one frame at a time, in ring order.
    done_at: Instant,
}

/// The hardware: one ring with its own lock, which the radio sends in order.
#[derive(Default)]
struct Hw {
    ring: Mutex<HwRing>,
}

#[derive(Default)]
struct HwRing {
    frames: VecDeque<InFlight>,
    /// When the radio finishes the last frame in the ring.
    busy_until: Instant,
    /// Frames pushed so far (every fourth needs a second try).
    pushed: u64,
}

/// One context's access to the ring: locks it per call.
struct RingAccess<'a> {
    hw: &'a Hw,
    peers: &'a Peers,
    now: Instant,
    /// The rate of the current turn's frames: a turn's frames go out as one A-MPDU,
    /// at the rate rate control picked for its station when the turn started.
    turn_rate: Option<Rate>,
}

impl Ring for RingAccess<'_> {
    type Frame = Packet;
    type Error = RingErrorKind;

    fn has_room(&self, _ac: Ac) -> bool {
        self.hw.ring.lock().map(|r| r.frames.len() < RING_SIZE).unwrap_or(false)
    }

    /// Every push until `end_turn` is of this turn's txq and station: look up its rate once.
    fn start_turn(&mut self, _txq: TxqId, station: Option<StationId>, _ac: Ac) {
        self.turn_rate = station.and_then(|s| self.peers.station(s)).and_then(Station::last_tx_rate);
    }

    fn push(&mut self, frame: Packet, charge: Option<Charge>) -> Result<(), PushError<Packet, RingErrorKind>> {
        let Ok(mut ring) = self.hw.ring.lock() else {
            return Err(PushError { frame, charge, error: RingErrorKind::Other });
        };
        if ring.frames.len() >= RING_SIZE {
            return Err(PushError { frame, charge, error: RingErrorKind::Full });
        }
        let rate = self.turn_rate;
        ring.pushed += 1;
        let tries = if ring.pushed % 4 == 0 { 2 } else { 1 };
        let status = FrameStatus { len_bytes: frame.len_bytes(), rate, tries, aggregated: true };
        let airtime_us = status.airtime_us(charge.as_ref().map_or(0, Charge::airtime_us));
        let done_at = ring.busy_until.max(self.now).add_micros(u64::from(airtime_us));
        ring.busy_until = done_at;
        ring.frames.push_back(InFlight { frame, charge, status, done_at });
        Ok(())
    }
}

/// Frames the stack lets the driver hold (queued and in the hardware) before it stops.
const FRAMES_IN_DRIVER: u64 = 256;

/// Frame counts by fate, for the final check.
#[derive(Default)]
struct Counts {
    enqueued: AtomicU64,
    completed: AtomicU64,
    /// Dropped by FQ-CoDel (CoDel, its limits).
    dropped: AtomicU64,
    /// Handed back because their station left: queued, in a retry slot or in an
    /// intake when it was removed, or enqueued while it was being removed.
    handed_back: AtomicU64,
    /// Completions whose release or airtime registration failed (a driver bug).
    status_errors: AtomicU64,
    /// Rounds asked for while the other thread ran them (`--gated`).
    handed_off: AtomicU64,
}

impl Counts {
    /// Frames the driver holds: enqueued, not yet completed, dropped or handed back.
    fn in_driver(&self) -> u64 {
        let out = self.completed.load(Ordering::Relaxed)
            + self.dropped.load(Ordering::Relaxed)
            + self.handed_back.load(Ordering::Relaxed);
        self.enqueued.load(Ordering::Relaxed).saturating_sub(out)
    }
}

/// Everything the two threads share.
struct Radio {
    txqs: TxqTable<FqCodelTxq<Packet>>,
    peers: Peers,
    hw: Hw,
    /// With `--gated`: one thread at a time runs the rounds.
    gate: Option<RoundGate>,
    /// The live stations' txqs, for the wake thread to pick from.
    live: Mutex<Vec<(StationId, TxqId)>>,
    start: std::time::Instant,
    counts: Counts,
}

impl Radio {
    fn now(&self) -> Instant {
        Instant::from_micros(self.start.elapsed().as_micros() as u64)
    }

    /// A round on BE: here, or, with the gate, here or by the context running them.
    fn round(&self) {
        match &self.gate {
            None => self.run_round(),
            Some(gate) => {
                // At most 8 rounds, this thread's own included, before it goes back to its
                // own work; if notes are left then (`Deferred`), either thread's next
                // round serves them (within 200 us while the threads run; after they
                // stop, their frames are handed back when the stations leave).
                if gate.run(Ac::Be, 8, || self.run_round()) == GateOutcome::HandedOff {
                    // The other thread is running rounds: it runs one more for us, or
                    // leaves it to the next round.
                    self.counts.handed_off.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    fn run_round(&self) {
        let now = self.now();
        let mut ring = RingAccess { hw: &self.hw, peers: &self.peers, now, turn_rate: None };
        // At the end of each turn, while this context alone holds the txq, free the
        // frames FQ-CoDel dropped (CoDel, limits): it keeps them until taken.
        let report = self.txqs.run_round_with(Ac::Be, now, &self.peers, &mut ring, TurnBudget::frames(16), |turn| {
            if let Some(queue) = turn.queue() {
                let dropped = queue.drain_drops().count() as u64;
                self.counts.dropped.fetch_add(dropped, Ordering::Relaxed);
            }
        });
        // The loop keeps a refused frame in its txq; only an impossible double refusal
        // comes back here.
        if let Some(refused) = report.refused {
            self.counts.handed_back.fetch_add(1, Ordering::Relaxed);
            if let Some(charge) = refused.charge {
                // Never sent: given back, not released as a completion.
                self.check_status(self.txqs.scheduler().give_back(charge));
            }
        }
    }

    /// The tx status of one frame: release its charge and register the airtime it
    /// used, in one call. A station removed since still gets its airtime accounted (the
    /// scheduler keeps it for the departed station).
    fn complete(&self, done: InFlight, now: Instant) {
        let sched = self.txqs.scheduler();
        match done.charge {
            // No calibrator here: a driver that opts in passes its station's.
            Some(charge) => {
                let c = sched.complete_frame(charge, &done.status, now, None);
                self.check_status(c.released);
                self.check_status(c.registered);
            }
            // Sent uncharged (no station frame here is; multicast could be): nothing to
            // release, but its airtime still counts for the station.
            None => {
                let used = done.status.airtime_us(0);
                let registered = sched.register_airtime(done.frame.station, Ac::Be, used, 0, now);
                self.check_status(registered);
            }
        }
        self.counts.completed.fetch_add(1, Ordering::Relaxed);
    }

    /// A release or registration that failed is a driver bug (a charge released twice,
    /// a station handle never issued): a kernel driver warns once and counts it.
    fn check_status<E: std::fmt::Display>(&self, result: Result<(), E>) {
        if let Err(e) = result {
            if self.counts.status_errors.fetch_add(1, Ordering::Relaxed) == 0 {
                eprintln!("tx status: {e}");
            }
        }
    }

    /// Counts a removed txq's frames (a real driver frees them, or reroutes them to
    /// another interface) and gives back the charge of the frame its retry slot held
    /// (never sent: no completion).
    /// Returns how many frames it handed back.
    fn reap(&self, removed: RemovedTxq<FqCodelTxq<Packet>>) -> u64 {
        let RemovedTxq { mut queue, retry, intake, .. } = removed;
        let mut back = intake.count() as u64;
        if let Some(retry) = retry {
            back += 1;
            if let Some(charge) = retry.charge {
                self.check_status(self.txqs.scheduler().give_back(charge));
            }
        }
        // The purge joins the queued frames to FQ-CoDel's own drops (CoDel, limits),
        // which it kept until taken.
        queue.purge();
        let mut dropped = 0;
        for frame in queue.drain_drops() {
            if frame.reason == DropReason::Purged {
                back += 1;
            } else {
                dropped += 1;
            }
        }
        self.counts.dropped.fetch_add(dropped, Ordering::Relaxed);
        self.counts.handed_back.fetch_add(back, Ordering::Relaxed);
        back
    }

    fn add_station(&self, weight: u16, mcs: u32) -> Result<(StationId, TxqId), Box<dyn std::error::Error>> {
        let sched = self.txqs.scheduler();
        let sta = sched.add_station(Weight::new(weight)?)?;
        let peer = &self.peers.0[sta.index()];
        peer.mcs.store(mcs, Ordering::Relaxed);
        peer.id.store(sta.to_raw(), Ordering::Release);
        let queue = FqCodelTxq::new(FqCodelConfig::default())?;
        let txq = self.txqs.add_txq(Some(sta), Tid::BE, queue).map_err(|e| e.error)?;
        self.live.lock().map_err(|_| "poisoned")?.push((sta, txq));
        Ok((sta, txq))
    }

    /// Removes a station with whatever it has queued and in flight. Returns its
    /// departure (which says when its frames in flight have completed, so the
    /// hardware's station index can be reused) and how many queued frames came back.
    fn remove_station(&self, sta: StationId) -> Result<(DepartingStation, u64), Box<dyn std::error::Error>> {
        self.live.lock().map_err(|_| "poisoned")?.retain(|&(s, _)| s != sta);
        let departing = self.txqs.remove_station(sta)?;
        // The driver's record goes last: the rounds stop charging to it.
        self.peers.0[sta.index()].id.store(u64::MAX, Ordering::Release);
        // A txq a round is serving comes back when that round returns it: a later call
        // (here, the next removal's or the final one) hands its frames back; one whose
        // queue an enqueue held, at that enqueue's end (the wake thread's check).
        Ok((departing, self.reap_removed()))
    }

    /// Hands back every removed txq no context holds any more; how many frames.
    fn reap_removed(&self) -> u64 {
        let mut back = 0;
        while let Some(removed) = self.txqs.take_removed() {
            back += self.reap(removed);
        }
        back
    }
}

/// What the admin saw of the stations it removed.
#[derive(Default)]
struct Departures {
    removed: u32,
    /// Removed with frames still queued (handed back by the removal).
    with_queued: u32,
    /// Removed with frames still in the hardware (completed after it left).
    with_in_flight: u32,
    departing: Vec<DepartingStation>,
}

impl Departures {
    fn record(&mut self, sched: &Scheduler, departing: DepartingStation, queued: u64) {
        self.removed += 1;
        self.with_queued += u32::from(queued > 0);
        self.with_in_flight += u32::from(departing.total_pending_us(sched) > 0);
        self.departing.push(departing);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // How long the admin churns: 1 s by default (the run takes about that long).
    let usage = "usage: two_threads_driver [--gated] [MILLISECONDS >= 100]";
    let (mut gated, mut churn_ms) = (false, 1000u64);
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--gated" => gated = true,
            ms => churn_ms = ms.parse().ok().filter(|&ms| ms >= 100).ok_or(usage)?,
        }
    }
    let mut config = Config::default();
    config.max_stations = 16;
    config.max_txqs = 64;
    let radio = Arc::new(Radio {
        txqs: TxqTable::new(Scheduler::new(config)?),
        peers: Peers((0..16).map(|_| Peer { id: AtomicU64::new(u64::MAX), mcs: AtomicU32::new(9) }).collect()),
        hw: Hw::default(),
        gate: gated.then(RoundGate::new),
        live: Mutex::new(Vec::new()),
        start: std::time::Instant::now(),
        counts: Counts::default(),
    });
    for mcs in [9, 9, 4, 0] {
        radio.add_station(256, mcs)?;
    }
    let stop = Arc::new(AtomicBool::new(false));

    let wake = {
        let (radio, stop) = (radio.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0u32;
            while !stop.load(Ordering::Relaxed) {
                // A bulk sender: 8 frames per station every 200 us or so, more than the
                // radio carries, held back only while the driver holds FRAMES_IN_DRIVER
                // (as a qdisc over BQL would): the stations keep a backlog.
                let targets = if radio.counts.in_driver() < FRAMES_IN_DRIVER {
                    radio.live.lock().map(|l| l.clone()).unwrap_or_default()
                } else {
                    Vec::new()
                };
                for (sta, txq) in targets {
                    for _ in 0..8 {
                        n = n.wrapping_add(1);
                        match radio.txqs.enqueue(txq, Packet { station: sta, flow: n % 4 }, radio.now()) {
                            Ok(()) => {
                                radio.counts.enqueued.fetch_add(1, Ordering::Relaxed);
                            }
                            // The station left meanwhile: the frame is ours again (freed here).
                            Err(EnqueueError::UnknownTxq(_)) => break,
                            Err(EnqueueError::Removed(back)) => {
                                // Ours, and any other late enqueue's, for the removed txq.
                                radio.counts.enqueued.fetch_add(1, Ordering::Relaxed);
                                radio.counts.handed_back.fetch_add(back.count() as u64, Ordering::Relaxed);
                                break;
                            }
                            Err(e) => panic!("enqueue: {e}"),
                        }
                    }
                }
                // One load: a txq removed while one of these enqueues held its queue
                // was left to that enqueue, and comes back here rather than at the next
                // removal.
                if radio.txqs.has_removed() {
                    radio.reap_removed();
                }
                radio.round();
                std::thread::sleep(Duration::from_micros(200));
            }
        })
    };

    let tx_status = {
        let (radio, stop) = (radio.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                // The interrupt: the frames the radio finished since the last one.
                let now = radio.now();
                let done: Vec<InFlight> = radio
                    .hw
                    .ring
                    .lock()
                    .map(|mut r| {
                        let n = r.frames.iter().take_while(|f| f.done_at <= now).count();
                        r.frames.drain(..n).collect()
                    })
                    .unwrap_or_default();
                for frame in done {
                    radio.complete(frame, now);
                }
                radio.round();
                std::thread::sleep(Duration::from_micros(100));
            }
        })
    };

    // The admin: every 20 ms a station leaves and a new one joins (with its frames
    // queued and in flight), or a weight changes.
    let mut departures = Departures::default();
    for step in 0..churn_ms / 20 {
        std::thread::sleep(Duration::from_millis(20));
        let live = radio.live.lock().map_err(|_| "poisoned")?.clone();
        let Some(&(sta, _)) = live.get(step as usize % live.len().max(1)) else { continue };
        if step % 3 == 0 {
            radio.txqs.scheduler().set_weight(sta, Weight::new(128 + (step % 4) as u16 * 128)?)?;
        } else {
            let (departing, queued) = radio.remove_station(sta)?;
            departures.record(radio.txqs.scheduler(), departing, queued);
            radio.add_station(256, (step % 10) as u32)?;
        }
    }
    stop.store(true, Ordering::Relaxed);
    wake.join().map_err(|_| "wake thread panicked")?;
    tx_status.join().map_err(|_| "tx-status thread panicked")?;

    // Shutdown: every station leaves with what it has queued, then the radio finishes
    // the frames it holds and reports their status.
    let live = radio.live.lock().map_err(|_| "poisoned")?.clone();
    for (sta, _) in live {
        let (departing, queued) = radio.remove_station(sta)?;
        departures.record(radio.txqs.scheduler(), departing, queued);
    }
    let leftovers: Vec<InFlight> = radio.hw.ring.lock().map_err(|_| "poisoned")?.frames.drain(..).collect();
    for frame in leftovers {
        let now = frame.done_at;
        radio.complete(frame, now);
    }

    let sched = radio.txqs.scheduler();
    let count = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let c = &radio.counts;
    let (enqueued, completed, dropped, back) =
        (count(&c.enqueued), count(&c.completed), count(&c.dropped), count(&c.handed_back));
    let pending = sched.total_pending_us();
    println!(
        "stations removed {}: with frames queued {}, with frames in flight {}; airtime completed after removal {} us",
        departures.removed,
        departures.with_queued,
        departures.with_in_flight,
        sched.ac_counters(Ac::Be).departed_tx_us
    );
    println!(
        "frames enqueued {enqueued}, completed {completed}, dropped by FQ-CoDel {dropped}, handed back at removal \
         {back}; pending airtime {pending} us"
    );
    if radio.gate.is_some() {
        println!("rounds handed to the thread running them: {}", count(&c.handed_off));
    }
    assert_eq!(count(&c.status_errors), 0, "every charge released once, every airtime registered");
    assert_eq!(pending, 0, "every charge was released");
    assert!(departures.departing.iter().all(|d| d.is_drained(sched)), "every departed station drained");
    assert_eq!(enqueued, completed + dropped + back, "every frame is accounted for");
    assert!(
        departures.with_queued > 0 && departures.with_in_flight > 0,
        "stations left with frames queued and frames in flight"
    );
    Ok(())
}
