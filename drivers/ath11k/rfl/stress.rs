// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! `two-context-stress`: one `Scheduler` shared by two kernel work items
//! running at once, each queued on its own CPU on an SMP machine: a wake context that wakes txqs, runs
//! rounds and charges frames into a bounded "hardware ring", and a
//! completion context that takes frames off the ring and releases their
//! charges. The scheduler's data path is lock-free (`&self`); the ring is
//! the driver's own state and sits behind a `kernel::sync::SpinLock`. At the
//! end every charge is released and pending airtime is back to 0.
//!
//! `two-context-stress-lost-completion` (explicit-only) is the same run with a
//! completion context that loses one frame: its checks must catch it.

use core::fmt::Write;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use airtime_sched::{
    Ac, AqlLimits, Charge, Config, Instant, Scheduler, StationId, Tid, TxqId, TxqReturn, Weight,
};
use kernel::cpu::CpuId;
use kernel::prelude::*;
use kernel::sync::{new_spinlock, Arc, Completion, SpinLock};
use kernel::workqueue::{self, impl_has_work, new_work, RawWorkItem, Work, WorkItem};

use crate::msg::MsgBuf;
use crate::selftest::{ensure, Failed, Outcome};

const STATIONS: usize = 4;
/// Frames the wake context charges before it stops.
const TARGET: u64 = 8000;
/// Rounds after which the wake context gives up (the check then fails).
const MAX_ROUNDS: u64 = 1_000_000;
/// Spins the wake context waits for the completion context to start.
const MAX_START_SPINS: u64 = 1 << 32;
const RING: usize = 32;
const CHARGE_US: u32 = 300;
const NO_CPU: u32 = u32::MAX;

#[pin_data]
struct Stress {
    /// The completion context drops the 100th frame without releasing it.
    lose_one: bool,
    sched: Scheduler,
    stations: KVec<StationId>,
    txqs: KVec<TxqId>,
    #[pin]
    ring: SpinLock<KVec<Charge>>,
    wake_done: AtomicBool,
    charged: AtomicU64,
    released: AtomicU64,
    errors: AtomicU32,
    wake_cpu: AtomicU32,
    complete_cpu: AtomicU32,
    /// The completion context was running when the wake context started.
    overlapped: AtomicBool,
    completing: AtomicBool,
    #[pin]
    wake_finished: Completion,
    #[pin]
    complete_finished: Completion,
    #[pin]
    wake_work: Work<Stress, 1>,
    #[pin]
    complete_work: Work<Stress, 2>,
}

impl_has_work! {
    impl HasWork<Self, 1> for Stress { self.wake_work }
    impl HasWork<Self, 2> for Stress { self.complete_work }
}

impl WorkItem<1> for Stress {
    type Pointer = Arc<Stress>;
    fn run(this: Arc<Stress>) {
        this.wake_cpu
            .store(CpuId::current().as_u32(), Ordering::Relaxed);
        this.wake_loop();
        this.wake_done.store(true, Ordering::Release);
        this.wake_finished.complete_all();
    }
}

impl WorkItem<2> for Stress {
    type Pointer = Arc<Stress>;
    fn run(this: Arc<Stress>) {
        this.complete_cpu
            .store(CpuId::current().as_u32(), Ordering::Relaxed);
        this.completing.store(true, Ordering::Release);
        this.complete_loop();
        this.complete_finished.complete_all();
    }
}

impl Stress {
    fn wake_loop(&self) {
        // Start once the completion context runs, so the two overlap (the
        // ring holds only RING frames: alone, the wake context stalls).
        let mut spins: u64 = 0;
        while !self.completing.load(Ordering::Acquire) && spins < MAX_START_SPINS {
            core::hint::spin_loop();
            spins += 1;
        }
        self.overlapped
            .store(self.completing.load(Ordering::Acquire), Ordering::Relaxed);
        for i in 0..MAX_ROUNDS {
            if self.charged.load(Ordering::Relaxed) >= TARGET {
                break;
            }
            let now = Instant::from_millis(1 + i);
            for &txq in self.txqs.iter() {
                if self.sched.wake_txq(txq, now).is_err() {
                    self.errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            let round = self.sched.start_round(Ac::Be);
            while let Some(mut serving) = self.sched.next_txq(round, now) {
                let mut outcome = TxqReturn::Empty;
                if serving.airtime_check() {
                    let mut ring = self.ring.lock();
                    if ring.len() < RING {
                        match serving.charge_us(CHARGE_US) {
                            // Capacity was reserved: no allocation under the lock.
                            Ok(charge) => match ring.push_within_capacity(charge) {
                                Ok(()) => {
                                    self.charged.fetch_add(1, Ordering::Relaxed);
                                }
                                Err(kernel::alloc::kvec::PushError(charge)) => {
                                    drop(ring);
                                    let _ = self.sched.release(charge);
                                    self.errors.fetch_add(1, Ordering::Relaxed);
                                }
                            },
                            Err(_) => {
                                self.errors.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    } else {
                        outcome = TxqReturn::Stalled;
                    }
                }
                self.sched.return_txq(serving, outcome, now);
            }
        }
    }

    fn complete_loop(&self) {
        let mut n: u64 = 0;
        loop {
            // Read the flag before the ring: once it is seen set, the ring
            // holds every frame the wake context will ever push.
            let done = self.wake_done.load(Ordering::Acquire);
            let charge = self.ring.lock().pop();
            match charge {
                Some(charge) if self.lose_one && n == 100 => {
                    // Deliberately lost: never released, never counted.
                    core::mem::forget(charge);
                    n += 1;
                }
                Some(charge) => {
                    let sta = charge.station();
                    if self.sched.release(charge).is_err() {
                        self.errors.fetch_add(1, Ordering::Relaxed);
                    }
                    if let Some(sta) = sta {
                        let now = Instant::from_millis(1 + n / 8);
                        let _ = self.sched.register_airtime(sta, Ac::Be, CHARGE_US, 0, now);
                    }
                    self.released.fetch_add(1, Ordering::Relaxed);
                    n += 1;
                }
                None if done => break,
                None => core::hint::spin_loop(),
            }
        }
    }
}

/// Queues work item `ID` of `stress` on CPU `cpu` of `system_long_wq`.
fn enqueue_on<const ID: u64>(cpu: i32, stress: Arc<Stress>)
where
    Arc<Stress>: RawWorkItem<ID>,
{
    // SAFETY: as in `Queue::enqueue`, with a CPU instead of
    // `WORK_CPU_UNBOUND`: `queue_work_on` returns false only when the item is
    // already queued; `Arc<Stress>` is `Send` and `'static`; the pointer the
    // closure gets is valid for the call, and until the work function runs if
    // the item was queued (`RawWorkItem::__enqueue`'s guarantees).
    let _ = unsafe {
        stress.__enqueue(move |work| {
            kernel::bindings::queue_work_on(cpu, kernel::bindings::system_long_wq, work)
        })
    };
}

pub(crate) fn two_context_stress(msg: &mut MsgBuf<'_>) -> Outcome {
    outcome(msg, false)
}

pub(crate) fn two_context_stress_lost_completion(msg: &mut MsgBuf<'_>) -> Outcome {
    outcome(msg, true)
}

fn outcome(msg: &mut MsgBuf<'_>, lose_one: bool) -> Outcome {
    match run(msg, lose_one) {
        Ok(outcome) => outcome,
        Err(e) => {
            ensure!(msg, false, "setup failed: {e:?}");
            Ok(())
        }
    }
}

fn run(msg: &mut MsgBuf<'_>, lose_one: bool) -> Result<Outcome> {
    let sched = Scheduler::new(Config::default()).map_err(|_| EINVAL)?;
    let mut stations = KVec::with_capacity(STATIONS, GFP_KERNEL)?;
    let mut txqs = KVec::with_capacity(STATIONS, GFP_KERNEL)?;
    for i in 0..STATIONS {
        let weight = Weight::new(256 * (1 + i as u16)).map_err(|_| EINVAL)?;
        let sta = sched.add_station(weight).map_err(|_| ENOMEM)?;
        let limits = AqlLimits::new(1500, 3000).map_err(|_| EINVAL)?;
        sched
            .set_station_limits(sta, Ac::Be, limits)
            .map_err(|_| EINVAL)?;
        stations.push(sta, GFP_KERNEL)?;
        txqs.push(
            sched.add_txq(Some(sta), Tid::BE).map_err(|_| ENOMEM)?,
            GFP_KERNEL,
        )?;
    }
    let ring = KVec::with_capacity(RING, GFP_KERNEL)?;
    let stress = Arc::pin_init(
        pin_init!(Stress {
            lose_one,
            sched,
            stations,
            txqs,
            ring <- new_spinlock!(ring, "airtime_rfl::ring"),
            wake_done: AtomicBool::new(false),
            charged: AtomicU64::new(0),
            released: AtomicU64::new(0),
            errors: AtomicU32::new(0),
            wake_cpu: AtomicU32::new(NO_CPU),
            complete_cpu: AtomicU32::new(NO_CPU),
            overlapped: AtomicBool::new(false),
            completing: AtomicBool::new(false),
            wake_finished <- Completion::new(),
            complete_finished <- Completion::new(),
            wake_work <- new_work!("airtime_rfl::wake"),
            complete_work <- new_work!("airtime_rfl::complete"),
        }),
        GFP_KERNEL,
    )?;
    // On an SMP machine each context is queued on its own CPU (per-CPU
    // `system_long_wq`: long-running items); else both go to the unbound queue.
    if kernel::cpu::nr_cpu_ids() >= 2 {
        enqueue_on::<2>(1, stress.clone());
        enqueue_on::<1>(0, stress.clone());
    } else {
        let queue = workqueue::system_unbound();
        let _ = queue.enqueue::<Arc<Stress>, 2>(stress.clone());
        let _ = queue.enqueue::<Arc<Stress>, 1>(stress.clone());
    }
    stress.wake_finished.wait_for_completion();
    stress.complete_finished.wait_for_completion();

    let (charged, released) = (
        stress.charged.load(Ordering::Relaxed),
        stress.released.load(Ordering::Relaxed),
    );
    let errors = stress.errors.load(Ordering::Relaxed);
    let pending = stress.sched.total_pending_us();
    let (wcpu, ccpu) = (
        stress.wake_cpu.load(Ordering::Relaxed),
        stress.complete_cpu.load(Ordering::Relaxed),
    );
    let outcome = (|| {
        ensure!(msg, errors == 0, "{errors} scheduler errors");
        ensure!(
            msg,
            stress.overlapped.load(Ordering::Relaxed),
            "the completion context never started"
        );
        ensure!(
            msg,
            charged >= TARGET,
            "only {charged} frames charged in {MAX_ROUNDS} rounds"
        );
        ensure!(
            msg,
            charged == released,
            "{charged} charged, {released} released"
        );
        ensure!(
            msg,
            pending == 0,
            "{pending} us still pending after every completion"
        );
        ensure!(
            msg,
            stress.ring.lock().is_empty(),
            "frames left in the ring"
        );
        let _ = write!(
            msg,
            "work items on CPUs {wcpu}/{ccpu}, {charged} frames charged and released, pending 0"
        );
        Ok(())
    })();
    let _ = Failed;
    Ok(outcome)
}
