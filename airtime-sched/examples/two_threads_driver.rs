//! A driver with two contexts: the file a driver author copies when the wake path and
//! the tx-status path run on different CPUs.
//!
//! * The **wake thread** is the stack's transmit path: it enqueues frames for the
//!   stations from any context with [`TxqTable::enqueue`] (no lock: each txq has a
//!   lock-free intake) and runs a round.
//! * The **tx-status thread** is the completion interrupt's bottom half: it takes the
//!   frames the hardware finished, releases their charges, registers their airtime and
//!   runs a round — on the same AC, at the same time as the wake thread.
//! * The **admin** (here, the main thread) adds and removes stations while frames are in
//!   flight and changes a weight, as `iw` and hostapd do.
//!
//! The scheduler hands each txq to one context at a time, and that turn is the only way
//! to its queue, so nothing here takes a lock except the hardware ring's own (one per
//! ring, as ath11k has one per TCL ring). At the end every frame is accounted for (sent
//! and completed, dropped and counted by FQ-CoDel, or handed back when its station
//! left) and no airtime is pending. Run it with
//! `cargo run --release -p airtime-sched --example two_threads_driver`.

use airtime_est::{Bandwidth, Rate};
use airtime_sched::driver_loop::StationTable;
use airtime_sched::fq_codel::{FqCodelConfig, FqCodelTxq, FqFrame};
use airtime_sched::traits::{PushError, RingErrorKind, StationErrorKind, price_from_rate};
use airtime_sched::txqs::{EnqueueError, RemovedTxq, TurnBudget};
use airtime_sched::{
    Ac, Charge, Config, Frame, Instant, Ring, Scheduler, Station, StationId, Tid, TxqId, TxqTable, Weight,
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

/// The hardware: one ring of 64 descriptors with its own lock, which the radio empties
/// in order.
#[derive(Default)]
struct Hw {
    ring: Mutex<VecDeque<(Packet, Option<Charge>)>>,
}

/// One context's access to the ring: locks it per call.
struct RingAccess<'a>(&'a Hw);

impl Ring for RingAccess<'_> {
    type Frame = Packet;
    type Error = RingErrorKind;

    fn has_room(&self, _ac: Ac) -> bool {
        self.0.ring.lock().map(|r| r.len() < 64).unwrap_or(false)
    }

    fn push(&mut self, frame: Packet, charge: Option<Charge>) -> Result<(), PushError<Packet, RingErrorKind>> {
        match self.0.ring.lock() {
            Ok(mut ring) if ring.len() < 64 => {
                ring.push_back((frame, charge));
                Ok(())
            }
            _ => Err(PushError { frame, charge, error: RingErrorKind::Full }),
        }
    }
}

/// Everything the two threads share.
struct Radio {
    txqs: TxqTable<FqCodelTxq<Packet>>,
    peers: Peers,
    hw: Hw,
    /// The live stations' txqs, for the wake thread to pick from.
    live: Mutex<Vec<(StationId, TxqId)>>,
    start: std::time::Instant,
    /// Frames in each fate, for the final check.
    enqueued: AtomicU64,
    completed: AtomicU64,
    handed_back: AtomicU64,
}

impl Radio {
    fn now(&self) -> Instant {
        Instant::from_micros(self.start.elapsed().as_micros() as u64)
    }

    fn round(&self) {
        // At the end of each turn, while this context alone holds the txq, free the
        // frames FQ-CoDel dropped (CoDel, limits): it keeps them until taken.
        let report = self.txqs.run_round_with(
            Ac::Be,
            self.now(),
            &self.peers,
            &mut RingAccess(&self.hw),
            TurnBudget::frames(16),
            |turn| {
                if let Some(queue) = turn.queue() {
                    let dropped = queue.drain_drops().count() as u64;
                    self.handed_back.fetch_add(dropped, Ordering::Relaxed);
                }
            },
        );
        // The loop keeps a refused frame in its txq; only an impossible double refusal
        // comes back here.
        if let Some(refused) = report.refused {
            self.handed_back.fetch_add(1, Ordering::Relaxed);
            if let Some(charge) = refused.charge {
                let _ = self.txqs.scheduler().release(charge);
            }
        }
    }

    /// Counts a removed txq's frames (a real driver frees them, or reroutes them to
    /// another interface) and releases the charge of the frame its retry slot held.
    fn reap(&self, removed: RemovedTxq<FqCodelTxq<Packet>>) {
        let RemovedTxq { mut queue, retry, intake, .. } = removed;
        let mut back = intake.count() as u64;
        if let Some(retry) = retry {
            back += 1;
            if let Some(charge) = retry.charge {
                let _ = self.txqs.scheduler().release(charge);
            }
        }
        // Purged frames join FQ-CoDel's own drops (CoDel, limits), which it kept.
        queue.purge();
        back += queue.drain_drops().count() as u64;
        self.handed_back.fetch_add(back, Ordering::Relaxed);
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

    fn remove_station(&self, sta: StationId) -> Result<(), Box<dyn std::error::Error>> {
        self.live.lock().map_err(|_| "poisoned")?.retain(|&(s, _)| s != sta);
        self.txqs.remove_station(sta)?;
        // The driver's record goes last: frames still in flight complete against it.
        self.peers.0[sta.index()].id.store(u64::MAX, Ordering::Release);
        while let Some(removed) = self.txqs.take_removed() {
            self.reap(removed);
        }
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = Config::default();
    config.max_stations = 16;
    config.max_txqs = 64;
    let radio = Arc::new(Radio {
        txqs: TxqTable::new(Scheduler::new(config)?),
        peers: Peers((0..16).map(|_| Peer { id: AtomicU64::new(u64::MAX), mcs: AtomicU32::new(9) }).collect()),
        hw: Hw::default(),
        live: Mutex::new(Vec::new()),
        start: std::time::Instant::now(),
        enqueued: AtomicU64::new(0),
        completed: AtomicU64::new(0),
        handed_back: AtomicU64::new(0),
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
                let targets = radio.live.lock().map(|l| l.clone()).unwrap_or_default();
                for (sta, txq) in targets {
                    n = n.wrapping_add(1);
                    let now = radio.now();
                    match radio.txqs.enqueue(txq, Packet { station: sta, flow: n % 4 }, now) {
                        Ok(()) => {
                            radio.enqueued.fetch_add(1, Ordering::Relaxed);
                        }
                        // The station left meanwhile: the frame is ours again (freed here).
                        Err(EnqueueError::UnknownTxq(_)) => {}
                        Err(EnqueueError::Removed(back)) => {
                            // Ours, and any other late enqueue's, for the removed txq.
                            radio.enqueued.fetch_add(1, Ordering::Relaxed);
                            radio.handed_back.fetch_add(back.count() as u64, Ordering::Relaxed);
                        }
                        Err(e) => panic!("enqueue: {e}"),
                    }
                }
                radio.round();
                // A paced sender: about 10,000 frames per second per station.
                std::thread::sleep(Duration::from_micros(100));
            }
        })
    };

    let tx_status = {
        let (radio, stop) = (radio.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                // The radio finished up to 8 frames since the last interrupt.
                let done: Vec<_> = radio
                    .hw
                    .ring
                    .lock()
                    .map(|mut r| {
                        let n = r.len().min(8);
                        r.drain(..n).collect()
                    })
                    .unwrap_or_default();
                let now = radio.now();
                for (frame, charge) in done {
                    let airtime_us = charge.as_ref().map_or(0, Charge::airtime_us);
                    if let Some(charge) = charge {
                        radio.txqs.scheduler().release(charge).expect("every charge is released once");
                    }
                    // Airtime of a station removed meanwhile is refused, not lost silently.
                    let _ = radio.txqs.scheduler().register_airtime(frame.station, Ac::Be, airtime_us, 0, now);
                    radio.completed.fetch_add(1, Ordering::Relaxed);
                }
                radio.round();
                std::thread::sleep(Duration::from_micros(50));
            }
        })
    };

    // The admin: station churn and a weight change, with frames in flight.
    for step in 0..40 {
        std::thread::sleep(Duration::from_millis(10));
        let live = radio.live.lock().map_err(|_| "poisoned")?.clone();
        if let Some(&(sta, _)) = live.get(step % live.len().max(1)) {
            if step % 3 == 0 {
                radio.txqs.scheduler().set_weight(sta, Weight::new(512)?)?;
            } else {
                radio.remove_station(sta)?;
                radio.add_station(256, (step % 10) as u32)?;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    wake.join().map_err(|_| "wake thread panicked")?;
    tx_status.join().map_err(|_| "tx-status thread panicked")?;

    // Drain: the hardware completes what it holds, then every station leaves.
    let leftovers: Vec<_> = radio.hw.ring.lock().map_err(|_| "poisoned")?.drain(..).collect();
    for (_, charge) in leftovers {
        if let Some(charge) = charge {
            radio.txqs.scheduler().release(charge)?;
        }
        radio.completed.fetch_add(1, Ordering::Relaxed);
    }
    let live = radio.live.lock().map_err(|_| "poisoned")?.clone();
    for (sta, _) in live {
        radio.remove_station(sta)?;
    }

    let (enqueued, completed, back) = (
        radio.enqueued.load(Ordering::Relaxed),
        radio.completed.load(Ordering::Relaxed),
        radio.handed_back.load(Ordering::Relaxed),
    );
    let pending = radio.txqs.scheduler().total_pending_us();
    println!(
        "frames enqueued {enqueued}, completed {completed}, handed back or dropped {back}; pending airtime {pending} us"
    );
    assert_eq!(pending, 0, "every charge was released");
    assert_eq!(enqueued, completed + back, "every frame is accounted for");
    Ok(())
}
