//! A wake thread and a completion thread drive rounds on the same AC at the same time
//! (std threads, not loom): every frame enqueued is served exactly once, no backlog is
//! lost (the run finishes), a txq never has two servers, and at the end nothing is
//! pending and the invariants hold.

mod common;

use airtime_sched::{Ac, Charge, Config, Instant, Scheduler, StationId, Tid, TxqId, TxqReturn};
use common::*;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant as WallClock};

const FRAME_US: u32 = 300;
const RING_FRAMES: usize = 64;

struct Queue {
    id: TxqId,
    station: Option<StationId>,
    frames: Mutex<VecDeque<u32>>,
    in_service: AtomicBool,
}

/// A frame in the hardware ring: its number and, for station txqs, its charge.
type InFlight = (u32, Option<(StationId, Charge)>);

struct World {
    s: Scheduler,
    queues: Vec<Queue>,
    ring: Mutex<VecDeque<InFlight>>,
    served: Vec<AtomicU8>,
    completed: AtomicUsize,
    clock_us: AtomicU64,
    double_service: AtomicBool,
}

impl World {
    fn now(&self) -> Instant {
        Instant::from_micros(self.clock_us.load(Ordering::Relaxed))
    }

    fn ring_has_room(&self) -> bool {
        self.ring.lock().unwrap().len() < RING_FRAMES
    }

    /// One scheduling round on BE, the way a driver runs it from either context.
    fn round(&self) -> usize {
        let now = self.now();
        let round = self.s.start_round(Ac::Be);
        if !round.is_open() {
            return 0;
        }
        let mut total = 0;
        while self.ring_has_room() {
            let Some(serving) = self.s.next_txq(round, now) else { break };
            let q = self.queues.iter().find(|q| q.id == serving.txq()).expect("a known txq");
            if q.in_service.swap(true, Ordering::AcqRel) {
                self.double_service.store(true, Ordering::Relaxed);
            }
            let mut moved = 0;
            while self.ring_has_room() && serving.airtime_check() {
                let Some(frame) = q.frames.lock().unwrap().pop_front() else { break };
                let charge = q.station.map(|sta| (sta, self.s.charge_us(sta, Ac::Be, FRAME_US).unwrap()));
                self.ring.lock().unwrap().push_back((frame, charge));
                moved += 1;
            }
            let empty = q.frames.lock().unwrap().is_empty();
            let outcome = match (empty, moved > 0) {
                (true, _) => TxqReturn::Empty,
                (false, true) => TxqReturn::Backlogged,
                (false, false) => TxqReturn::Stalled,
            };
            q.in_service.store(false, Ordering::Release);
            self.s.return_txq(serving, outcome, now);
            total += moved;
        }
        total
    }

    /// The hardware completes up to `batch` frames: release, register, count.
    fn complete(&self, batch: usize) -> usize {
        let mut done = 0;
        while done < batch {
            let Some((frame, charge)) = self.ring.lock().unwrap().pop_front() else { break };
            let now = Instant::from_micros(self.clock_us.fetch_add(u64::from(FRAME_US), Ordering::Relaxed));
            if let Some((sta, charge)) = charge {
                self.s.release(charge).unwrap();
                self.s.register_airtime(sta, Ac::Be, FRAME_US, 0, now).unwrap();
            }
            self.served[frame as usize].fetch_add(1, Ordering::Relaxed);
            self.completed.fetch_add(1, Ordering::Release);
            done += 1;
        }
        done
    }
}

fn run(total_frames: u32, stations: &[u16], multicast: bool, max_txqs: u16) {
    let s = sched_with(|c| {
        c.max_stations = 8;
        c.max_txqs = max_txqs;
    });
    let mut queues = Vec::new();
    for &weight in stations {
        let (sta, txq) = station_with_txq(&s, weight, Ac::Be);
        queues.push(Queue {
            id: txq,
            station: Some(sta),
            frames: Mutex::default(),
            in_service: AtomicBool::new(false),
        });
    }
    if multicast {
        let txq = s.add_txq(None, Tid::BE).unwrap();
        queues.push(Queue { id: txq, station: None, frames: Mutex::default(), in_service: AtomicBool::new(false) });
    }
    let world = Arc::new(World {
        s,
        queues,
        ring: Mutex::default(),
        served: (0..total_frames).map(|_| AtomicU8::new(0)).collect(),
        completed: AtomicUsize::new(0),
        clock_us: AtomicU64::new(T0.micros()),
        double_service: AtomicBool::new(false),
    });
    let total = total_frames as usize;
    let deadline = WallClock::now() + Duration::from_secs(20);

    let waker = {
        let world = world.clone();
        std::thread::spawn(move || {
            for frame in 0..total_frames {
                let q = &world.queues[frame as usize % world.queues.len()];
                q.frames.lock().unwrap().push_back(frame);
                world.s.wake_txq(q.id, world.now()).unwrap();
                if frame % 4 == 0 {
                    world.round();
                }
                // Keep the backlog bounded so that both contexts keep meeting.
                while world.completed.load(Ordering::Acquire) + 2048 < frame as usize {
                    world.round();
                    std::thread::yield_now();
                }
            }
            while world.completed.load(Ordering::Acquire) < total && WallClock::now() < deadline {
                world.round();
                std::thread::yield_now();
            }
        })
    };
    let completer = {
        let world = world.clone();
        std::thread::spawn(move || {
            while world.completed.load(Ordering::Acquire) < total {
                assert!(WallClock::now() < deadline, "no progress: a backlog was lost");
                world.complete(8);
                world.round();
            }
        })
    };
    // A debugfs-style reader: the live check runs throughout and finds nothing.
    let checker = {
        let world = world.clone();
        std::thread::spawn(move || {
            while world.completed.load(Ordering::Acquire) < total && WallClock::now() < deadline {
                world.s.check_invariants().expect("what holds at every instant");
                std::thread::yield_now();
            }
        })
    };
    completer.join().expect("completion thread");
    waker.join().expect("wake thread");
    checker.join().expect("checker thread");

    let mut world = Arc::try_unwrap(world).ok().expect("threads joined");
    assert!(!world.double_service.load(Ordering::Relaxed), "a txq had two servers at once (S3)");
    for (frame, count) in world.served.iter().enumerate() {
        assert_eq!(count.load(Ordering::Relaxed), 1, "frame {frame} served once");
    }
    assert!(world.queues.iter().all(|q| q.frames.lock().unwrap().is_empty()));
    assert!(world.ring.lock().unwrap().is_empty());
    assert_eq!(world.s.total_pending_us(), 0);
    for q in &world.queues {
        if let Some(sta) = q.station {
            assert_eq!(world.s.station_pending_us(sta, Ac::Be).unwrap(), 0);
        }
    }
    assert_eq!(world.s.underflows(), 0);
    world.s.check_invariants_quiescent().unwrap();
}

#[test]
fn wake_and_completion_rounds_at_once_serve_every_frame_exactly_once() {
    run(100_000, &[256, 256, 1024, 64], true, Config::default().max_txqs);
}

#[test]
fn two_stations_at_weight_one_under_concurrent_rounds_lose_nothing() {
    // Weight 1 against 300 us frames: every selection needs the lap skip.
    run(40_000, &[1, 1], false, Config::default().max_txqs);
}

/// The same run with a table of 8 txqs, so that the AC list's ring wraps around
/// constantly (with the Vyukov queue it replaced, a push that met the cell of a pop one
/// lap back, claimed but not yet released, answered "full"; an early version dropped the
/// entry and lost the txq).
#[test]
fn small_queues_that_wrap_constantly_lose_no_txq() {
    for _ in 0..5 {
        run(100_000, &[256, 256, 1024, 64], true, 8);
    }
}

/// Control operations race too: a txq being added for a station while the station is
/// removed must either be refused or be removed with the station, never left registered
/// for a removed station (it would then be served like a station-less txq, uncharged).
/// Measured: 4 runs in 10 leave 2 to 4 orphans per 2000 tries.
#[test]
fn removing_a_station_while_txqs_are_added_for_it_leaves_no_orphan_txq() {
    let s = Arc::new(sched_with(|c| {
        c.max_stations = 4;
        c.max_txqs = 64;
    }));
    let mut orphans = 0;
    // Under Miri (which checks these threads' accesses, not their timing) a few races
    // suffice: each costs seconds in the interpreter.
    let races = if cfg!(miri) { 8 } else { 2000 };
    for _ in 0..races {
        let sta = s.add_station(w(256)).unwrap();
        let adder = {
            let s = s.clone();
            std::thread::spawn(move || {
                // Keep adding (and dropping the previous) until the station is refused.
                let mut last: Option<TxqId> = None;
                while let Ok(txq) = s.add_txq(Some(sta), Tid::BE) {
                    if let Some(prev) = last.replace(txq) {
                        let _ = s.remove_txq(prev);
                    }
                }
                last
            })
        };
        for _ in 0..50 {
            std::hint::spin_loop();
        }
        s.remove_station(sta).unwrap();
        if let Some(txq) = adder.join().unwrap()
            && s.txq_info(txq).is_ok()
        {
            orphans += 1;
            s.remove_txq(txq).unwrap();
        }
    }
    assert_eq!(orphans, 0, "txqs left registered for a removed station");
}

/// `check_invariants` is what a debugfs file runs on a radio in use: while stations
/// come and go (their slots retiring with charges in flight, then reused) and rounds
/// charge through held txqs, it must report nothing.
#[test]
fn check_invariants_on_a_live_scheduler_reports_nothing_under_station_churn() {
    let s = Arc::new(sched_with(|c| {
        c.max_stations = 4;
        c.max_txqs = 16;
    }));
    let done = Arc::new(AtomicBool::new(false));
    let churners: Vec<_> = (0..2)
        .map(|_| {
            let s = s.clone();
            std::thread::spawn(move || {
                for i in 0..if cfg!(miri) { 4 } else { 3000 } {
                    let Ok(sta) = s.add_station(w(256)) else { continue };
                    let txq = s.add_txq(Some(sta), Tid::BE).unwrap();
                    s.wake_txq(txq, T0).unwrap();
                    let mut charges = Vec::new();
                    let round = s.start_round(Ac::Be);
                    while let Some(mut serving) = s.next_txq(round, T0) {
                        while serving.airtime_check() && charges.len() < 4 {
                            match serving.charge_us(FRAME_US) {
                                Ok(c) => charges.push(c),
                                Err(_) => break,
                            }
                        }
                        s.return_txq(serving, TxqReturn::Empty, T0);
                    }
                    // Half the time the station leaves with frames in flight.
                    if i % 2 == 0 {
                        s.remove_station(sta).unwrap();
                    }
                    for c in charges {
                        s.release(c).unwrap();
                    }
                    let _ = s.remove_station(sta);
                }
            })
        })
        .collect();
    let checker = {
        let (s, done) = (s.clone(), done.clone());
        std::thread::spawn(move || {
            let mut checks = 0u64;
            loop {
                s.check_invariants().expect("what holds at every instant");
                checks += 1;
                if done.load(Ordering::Acquire) {
                    break;
                }
            }
            checks
        })
    };
    for c in churners {
        c.join().expect("churn thread");
    }
    done.store(true, Ordering::Release);
    assert!(checker.join().expect("checker thread") > 0);
    let mut s = Arc::try_unwrap(s).expect("threads joined");
    assert_eq!(s.total_pending_us(), 0);
    s.check_invariants_quiescent().unwrap();
}
