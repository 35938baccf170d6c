//! The wake path and the tx-free path on two CPUs at once (mt76's tx worker and its
//! tx-free NAPI), with station churn, weight and rate changes, and every fault the
//! simulated HAL injects, power save on and off, over FQ-CoDel txqs that drop: once the
//! hardware has finished (a reset flushing what lost events left), no frame is left in a
//! txq, and at the end every frame is accounted for and no airtime is pending.
//!
//! The no-frame-left check runs during the run too, not only after it: every few admin
//! steps both threads park between two of their calls, and the admin drains the radio
//! with no wake at all (the hardware finishes, tx-free passes and the rounds they and
//! the rerun bits ask for, a reset for lost events). A txq left with frames then is a
//! lost wake: the wake thread, which wakes every live txq over and over, would have
//! hidden it from a check made only after the run.

mod common;

use airtime_est::{Bandwidth, Rate};
use airtime_mt76::hal::DmaError;
use airtime_mt76::sim_hal::{SimConfig, SimHal};
use airtime_mt76::{Config, Mt76};
use airtime_sched::fq_codel::{FqCodelConfig, FqCodelTxq};
use airtime_sched::{Ac, Instant, StationId, Tid, TxqId, Weight};
use common::Pkt;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Radio = Mt76<SimHal<Pkt>, FqCodelTxq<Pkt>>;

struct Shared {
    radio: Radio,
    /// Simulated time in us, moved by the tx-free thread.
    clock: AtomicU64,
    live: Mutex<Vec<(StationId, TxqId, u16)>>,
    seq: AtomicU64,
    stop: AtomicBool,
    /// The admin asks both threads to park between two calls (see the module docs).
    pause: AtomicBool,
    /// Threads parked.
    parked: AtomicU32,
    /// The wake thread sends one frame a wake, and pauses between passes (the admin
    /// switches it at every other pause).
    trickle: AtomicBool,
}

impl Shared {
    fn now(&self) -> Instant {
        Instant::from_micros(self.clock.load(Ordering::Acquire))
    }

    fn add(&self, wcid: u16, weight: u16) {
        let sta = self.radio.add_station(wcid, Weight::new(weight).unwrap()).expect("station");
        let mut fq = FqCodelConfig::default();
        fq.packet_limit = 48;
        let queue = FqCodelTxq::new(fq).unwrap();
        let txq = self.radio.add_txq(Some(sta), Tid::BE, queue).map_err(|e| e.0).expect("txq");
        self.live.lock().unwrap().push((sta, txq, wcid));
    }

    fn remove(&self, sta: StationId) {
        self.live.lock().unwrap().retain(|&(s, _, _)| s != sta);
        self.radio.remove_station(sta, self.now()).expect("remove");
    }

    /// Called by the two threads between their calls: parks while the admin asks.
    fn park_if_asked(&self) {
        if self.pause.load(Ordering::Acquire) {
            self.parked.fetch_add(1, Ordering::AcqRel);
            while self.pause.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            self.parked.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Frames accepted and in a txq (queue or retry slot): neither handed back nor
    /// written to the hardware. Exact while no other thread runs.
    fn in_txqs(&self) -> u64 {
        let s = self.radio.stats();
        s.enqueued - s.completed - s.flushed - s.purged - s.dropped - u64::from(self.radio.tokens_in_use())
    }

    /// With no other thread running, lets the radio finish on its own, with no wake: every
    /// dozing station wakes, the hardware finishes, late events come; when only lost
    /// events are left, the hang check finds their tokens and a reset flushes them (and
    /// restarts tx, as mt76's reset work does). Returns the time reached and the resets.
    fn drain_without_wakes(&self, mut now: Instant) -> (Instant, u32) {
        let live = self.live.lock().unwrap().clone();
        for &(sta, _, _) in &live {
            self.radio.sta_ps(sta, false, now).expect("wake");
        }
        let mut resets = 0u32;
        for _ in 0..4000 {
            now = now.add_micros(1000);
            self.radio.hal().advance(now);
            self.radio.tx_free(1024, now);
            if self.radio.rounds_waiting() {
                self.radio.schedule_all(now);
            }
            if self.radio.hal().events_in_flight() == 0 && self.radio.tokens_in_use() > 0 {
                // The hardware owes events it will never send: the hang, and its reset.
                let t = now.add_micros(airtime_mt76::hal::MT_TX_STATUS_SKB_TIMEOUT_US);
                assert!(self.radio.tokens_overdue(t) > 0);
                self.radio.stop_tx();
                self.radio.hal().reset_dma();
                self.radio.reset_tokens().expect("the other threads are parked: the flush proceeds");
                resets += 1;
                self.radio.start_tx(now).expect("the other threads are parked: tx restarts");
            }
            if self.radio.hal().events_in_flight() == 0 && self.radio.tokens_in_use() == 0 && self.in_txqs() == 0 {
                break;
            }
        }
        (now, resets)
    }
}

#[test]
fn wake_and_tx_free_on_two_threads_with_churn_and_faults_lose_no_frame() {
    let config = Config { token_size: 512, ..Config::default() };
    let sim = SimConfig { ndesc: 128, tx_free_delay_us: 400, ..SimConfig::default() };
    let shared = Arc::new(Shared {
        radio: Mt76::new(SimHal::new(sim), config).unwrap(),
        clock: AtomicU64::new(1000),
        live: Mutex::new(Vec::new()),
        seq: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        pause: AtomicBool::new(false),
        parked: AtomicU32::new(0),
        trickle: AtomicBool::new(false),
    });
    for wcid in 1..=4 {
        shared.add(wcid, 256);
    }

    let wake = {
        let sh = shared.clone();
        std::thread::spawn(move || {
            let mut refused = 0u64;
            while !sh.stop.load(Ordering::Relaxed) {
                sh.park_if_asked();
                let targets = sh.live.lock().unwrap().clone();
                for (_, txq, _) in targets {
                    // Flooding, txqs stay backlogged (listed) and FQ-CoDel drops;
                    // trickling, one frame a wake, they drain between wakes, so that
                    // wakes list them and the last before a pause is a lone frame's,
                    // which no later wake would cover if it were lost.
                    let burst = if sh.trickle.load(Ordering::Relaxed) { 1 } else { 6 };
                    for _ in 0..burst {
                        let seq = sh.seq.fetch_add(1, Ordering::Relaxed);
                        // A frame refused for a txq removed meanwhile is ours again.
                        if sh.radio.enqueue(txq, Pkt { seq, txq, len: 1500 }, sh.now()).is_err() {
                            refused += 1;
                        }
                    }
                    let _ = sh.radio.wake_tx_queue(txq, sh.now());
                }
                if sh.trickle.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_micros(100));
                }
                std::thread::yield_now();
            }
            refused
        })
    };

    let tx_free = {
        let sh = shared.clone();
        std::thread::spawn(move || {
            let mut i = 0u64;
            let mut overdue = 0u32;
            while !sh.stop.load(Ordering::Relaxed) {
                sh.park_if_asked();
                let now = Instant::from_micros(sh.clock.fetch_add(200, Ordering::AcqRel) + 200);
                sh.radio.hal().advance(now);
                let _ = sh.radio.tx_free(64, now);
                // A driver schedules its tx worker again when rounds wait for one.
                if sh.radio.rounds_waiting() {
                    sh.radio.schedule_all(now);
                }
                i += 1;
                if i.is_multiple_of(50) {
                    // The hang check releases nothing: a lost event's token waits for
                    // the reset at the end.
                    overdue = overdue.max(sh.radio.tokens_overdue(now));
                }
                std::thread::yield_now();
            }
            overdue
        })
    };

    // The admin: churn, weights, rates and faults while both paths run. At least 80
    // steps, and on until the paths whose turn depends on how the two threads are
    // scheduled have run (a DMA refusal, an FQ-CoDel drop, a purge at removal): on a
    // loaded machine a starved thread may not meet the faults in 80 steps.
    let mut next_wcid = 5u16;
    // The checks made while the run goes on: how many, the resets they needed, and the
    // most frames they found in txqs before draining (so that they checked something).
    let (mut pauses, mut pause_resets, mut found_in_txqs) = (0u32, 0u32, 0u64);
    for step in 0..4000u32 {
        let s = shared.radio.stats();
        if step >= 80 && s.dma_refused > 0 && s.dropped > 0 && s.purged > 0 {
            break;
        }
        if step % 4 == 3 {
            shared.pause.store(true, Ordering::Release);
            while shared.parked.load(Ordering::Acquire) < 2 {
                std::thread::yield_now();
            }
            found_in_txqs = found_in_txqs.max(shared.in_txqs());
            let (now, resets) = shared.drain_without_wakes(shared.now());
            let s = shared.radio.stats();
            assert_eq!(
                shared.in_txqs(),
                0,
                "step {step}: frames left in txqs with no wake to come: a lost wake; {s:?}"
            );
            assert_eq!(
                shared.radio.scheduler().total_pending_us(),
                0,
                "step {step}: pending airtime, nothing in flight"
            );
            shared.radio.scheduler().check_invariants().expect("invariants at a pause");
            shared.clock.store(now.micros(), Ordering::Release);
            (pauses, pause_resets) = (pauses + 1, pause_resets + resets);
            shared.trickle.store(pauses % 4 >= 2, Ordering::Relaxed);
            shared.pause.store(false, Ordering::Release);
        }
        std::thread::sleep(Duration::from_millis(2));
        let live = shared.live.lock().unwrap().clone();
        let Some(&(sta, _, wcid)) = live.get(step as usize % live.len().max(1)) else { continue };
        match step % 4 {
            0 => shared.radio.set_weight(sta, Weight::new(128 + (step as u16 % 5) * 128).unwrap()).unwrap(),
            1 => {
                shared.remove(sta);
                shared.add(next_wcid, 256);
                // The next free index (a long run comes round to indices still live).
                next_wcid = next_wcid % 200 + 5;
                while shared.live.lock().unwrap().iter().any(|&(_, _, w)| w == next_wcid) {
                    next_wcid = next_wcid % 200 + 5;
                }
            }
            2 => {
                shared.radio.hal().fail_dma(Ac::Be, [DmaError::MapFailed, DmaError::Full]);
                shared.radio.hal().lose_tx_free(2);
                shared.radio.hal().delay_tx_free(3, 300_000);
            }
            _ => {
                shared.radio.hal().set_rate(wcid, Rate::ht((step % 8) as u8, Bandwidth::Mhz20, false).ok());
                // Power save on and off (the station may be removed meanwhile).
                let _ = shared.radio.sta_ps(sta, step % 8 == 3, shared.now());
            }
        }
    }
    shared.stop.store(true, Ordering::Relaxed);
    let refused = wake.join().expect("wake thread");
    let overdue = tx_free.join().expect("tx-free thread");

    // Drain with every station still there, as the driver's own events would: nothing
    // may stay in a txq then (a frame left there with nothing in flight is a lost wake).
    let (now, resets) = shared.drain_without_wakes(shared.now());
    let live = shared.live.lock().unwrap().clone();
    let s = shared.radio.stats();
    assert_eq!(shared.in_txqs(), 0, "frames left in txqs with nothing in flight: a lost wake; {s:?}");
    assert_eq!(shared.radio.scheduler().total_pending_us(), 0, "pending airtime with nothing in flight");
    for (sta, _, _) in live {
        shared.remove(sta);
    }
    shared.radio.reap(now);

    let s = shared.radio.stats();
    let done = shared.radio.hal().take_done();
    assert_eq!(shared.radio.scheduler().total_pending_us(), 0, "pending airtime after drain");
    assert_eq!(shared.radio.tokens_in_use(), 0);
    assert_eq!(s.enqueued, s.completed + s.flushed + s.purged + s.dropped, "no frame lost: {s:?}");
    assert_eq!(s.enqueued + refused, shared.seq.load(Ordering::Relaxed), "every frame made was accepted or refused");
    assert_eq!(done.len() as u64, s.enqueued, "every accepted frame handed back once");
    let mut seqs: Vec<u64> = done.iter().map(|(p, _)| p.seq).collect();
    seqs.sort_unstable();
    seqs.dedup();
    assert_eq!(seqs.len(), done.len(), "no frame handed back twice");
    println!(
        "{s:?}, refused {refused}, overdue at most {overdue}, resets {resets}; \
         {pauses} pauses ({pause_resets} resets, at most {found_in_txqs} frames in txqs at one)"
    );
    // The run exercised what it claims to.
    assert!(s.completed > 1000, "{s:?}");
    assert!(s.purged > 0 && s.dropped > 0 && s.dma_refused > 0 && s.flushed > 0, "{s:?}");
    assert!(pauses >= 20 && found_in_txqs > 0, "{pauses} pauses, at most {found_in_txqs} frames found");
}
