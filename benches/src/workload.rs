//! The workloads, written once over [`SchedulerUnderTest`] so that ours and the baseline
//! run exactly the same driver code.
//!
//! * [`FrameCycle`]: one frame's whole life per call, on one AC with every station
//!   backlogged: enqueue a frame on the next station in turn and wake its txq, start a
//!   round, take the next txq, run the AQL check, dequeue from a counter txq, charge,
//!   return the txq, release the charge and register the measured airtime.
//! * [`DebtRound`]: E6: every station at weight 1 owes airtime and has airtime
//!   in flight, so mainline walks many laps before it finds a txq to serve.
//! * [`TwoContexts`]: a wake context and a completion context drive the same AC at once
//!   on two threads, with a ring of charged frames between them.

use crate::SchedulerUnderTest;
use crate::padded::Padded;
use crate::spsc::Spsc;
use airtime_est::{Bandwidth, Rate, expected_tx_airtime_us};
use airtime_sched::{Ac, Tid};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The AC every workload drives.
pub const AC: Ac = Ac::Be;
/// Frames each counter txq starts with: far more than any run dequeues, so every
/// station stays backlogged.
pub const BACKLOG: u32 = 1 << 28;

/// The rate the workloads price frames at: VHT80, 1 stream, MCS 9, short GI.
pub fn bench_rate() -> Rate {
    match Rate::vht(9, 1, Bandwidth::Mhz80, true) {
        Ok(r) => r,
        Err(e) => panic!("VHT80 MCS9 is a valid rate: {e:?}"),
    }
}

/// The charge of one 1500-byte frame at [`bench_rate`], aggregated, rounded down to
/// 4 us (both schedulers charge multiples of 4): what every workload charges and
/// registers per frame.
pub fn frame_airtime_us() -> u32 {
    (expected_tx_airtime_us(bench_rate(), 1500, true) & !3).max(4)
}

/// A scheduler with `n` stations of weight `weight`, one BE txq each, txq i of station i.
fn populate<S: SchedulerUnderTest>(n: usize, weight: u16) -> (S, Vec<S::Station>, Vec<S::Txq>) {
    let n16 = u16::try_from(n).unwrap_or(u16::MAX);
    let mut sched = S::new(n16);
    let stations: Vec<_> = (0..n).map(|_| sched.add_station(weight)).collect();
    let txqs: Vec<_> = stations.iter().map(|&s| sched.add_txq(s, Tid::BE)).collect();
    (sched, stations, txqs)
}

/// The single-threaded frame cycle at a fixed number of backlogged stations.
pub struct FrameCycle<S: SchedulerUnderTest> {
    sched: S,
    stations: Vec<S::Station>,
    txqs: Vec<S::Txq>,
    /// The counter txqs: frames queued per txq.
    frames: Vec<u32>,
    /// Frames served per txq.
    served: Vec<u64>,
    cursor: usize,
    now: u64,
    airtime_us: u32,
}

impl<S: SchedulerUnderTest> FrameCycle<S> {
    /// `n` stations of weight 256 (mainline's default), all backlogged and woken.
    pub fn new(n: usize) -> Self {
        Self::with_weights(&vec![256; n.max(1)])
    }

    /// One station per weight, all backlogged and woken.
    pub fn with_weights(weights: &[u16]) -> Self {
        let n = weights.len().max(1);
        let mut sched = S::new(u16::try_from(n).unwrap_or(u16::MAX));
        let stations: Vec<_> = weights.iter().map(|&w| sched.add_station(w)).collect();
        let txqs: Vec<_> = stations.iter().map(|&s| sched.add_txq(s, Tid::BE)).collect();
        let now = 1_000_000;
        for &t in &txqs {
            sched.wake(t, now);
        }
        FrameCycle {
            sched,
            stations,
            frames: vec![BACKLOG; txqs.len()],
            served: vec![0; txqs.len()],
            txqs,
            cursor: 0,
            now,
            airtime_us: frame_airtime_us(),
        }
    }

    /// One frame cycle; whether a frame was sent. Time advances 1 us per cycle.
    #[inline]
    pub fn cycle(&mut self) -> bool {
        let s = &self.sched;
        let now = self.now;
        self.now += 1;
        // The stack enqueues a frame for the next station in turn and wakes its txq.
        let i = self.cursor;
        self.cursor = if i + 1 == self.txqs.len() { 0 } else { i + 1 };
        self.frames[i] += 1;
        s.wake(self.txqs[i], now);
        // The driver runs a round and sends one frame.
        let Some(round) = s.start_round(AC) else { return false };
        let Some(mut held) = s.next_txq(round, now) else { return false };
        let t = S::held_index(&held);
        if !s.airtime_check(&held) || self.frames[t] == 0 {
            s.return_txq(held, self.frames[t] > 0, now);
            return false;
        }
        self.frames[t] -= 1;
        let station = self.stations[t];
        let charge = s.charge_held(&mut held, station, AC, self.airtime_us);
        s.return_txq(held, self.frames[t] > 0, now);
        self.served[t] += 1;
        // The hardware completes it: release, then register the measured airtime.
        if let Some(c) = charge {
            s.release(c);
        }
        s.register_airtime(station, AC, self.airtime_us, now);
        true
    }

    /// Frames served so far, per station.
    pub fn served(&self) -> &[u64] {
        &self.served
    }

    /// The scheduler.
    pub fn scheduler(&self) -> &S {
        &self.sched
    }
}

/// E6: `n` stations at weight 1, each with `pending_us` in flight and a
/// registered debt of `debt_us`, every txq listed. Mainline needs about
/// `(pending_us + debt_us) / 1` laps over all `n` txqs before it serves one.
pub struct DebtRound<S: SchedulerUnderTest> {
    sched: S,
    stations: Vec<S::Station>,
    txqs: Vec<S::Txq>,
    /// The in-flight charges (released when the workload is dropped).
    in_flight: Vec<S::Charge>,
    debt_us: u32,
}

/// The moment every [`DebtRound`] operation runs at: inside the stations' active window.
const DEBT_NOW: u64 = 1_000_000;

impl<S: SchedulerUnderTest> DebtRound<S> {
    /// `n` stations of weight 1 with `pending_us` in flight each; [`prepare`](Self::prepare)
    /// sets the debt.
    pub fn new(n: usize, pending_us: u32, debt_us: u32) -> Self {
        let (sched, stations, txqs) = populate::<S>(n.max(1), 1);
        let in_flight = stations.iter().filter_map(|&s| sched.charge(s, AC, pending_us)).collect();
        let w = DebtRound { sched, stations, txqs, in_flight, debt_us };
        w.prepare();
        w
    }

    /// Puts every station back at the same debt (deficit reset to the weight, then the
    /// debt registered) and makes sure every txq is listed (a wake of a listed txq is a
    /// no-op in both schedulers).
    pub fn prepare(&self) {
        for (&s, &t) in self.stations.iter().zip(&self.txqs) {
            self.sched.wake(t, DEBT_NOW);
            self.sched.reset_deficit(s);
            self.sched.register_airtime(s, AC, self.debt_us, DEBT_NOW);
        }
    }

    /// One selection from the debt state: start a round, take the next txq, return it
    /// backlogged. Whether one was served.
    #[inline]
    pub fn select(&self) -> bool {
        let Some(round) = self.sched.start_round(AC) else { return false };
        match self.sched.next_txq(round, DEBT_NOW) {
            Some(held) => {
                self.sched.return_txq(held, true, DEBT_NOW);
                true
            }
            None => false,
        }
    }

    /// A whole round from the debt state: serve every station once (each txq returned
    /// empty, so it leaves the list once its debt is paid). The number served.
    pub fn drain(&self) -> usize {
        let Some(round) = self.sched.start_round(AC) else { return 0 };
        let mut served = 0;
        while let Some(held) = self.sched.next_txq(round, DEBT_NOW) {
            self.sched.return_txq(held, false, DEBT_NOW);
            served += 1;
        }
        served
    }

    /// The scheduler.
    pub fn scheduler(&self) -> &S {
        &self.sched
    }
}

impl<S: SchedulerUnderTest> Drop for DebtRound<S> {
    fn drop(&mut self) {
        for c in self.in_flight.drain(..) {
            self.sched.release(c);
        }
    }
}

/// Two contexts on two threads driving one AC: the wake context enqueues, wakes, runs a
/// round that sends one frame and hands the frame to the completion context through a
/// ring; the completion context reaps the ring (up to [`REAP_BUDGET`] per pass, like a
/// NAPI budget), releases the charges and registers the airtime, then, as completion
/// handlers do, runs rounds to refill what it reaped, so both contexts run rounds.
///
/// [`Completion`] says how faithfully to ath11k: frame by frame (the stress case), or a
/// PPDU's completions at a time, released and registered per pass, one round per budget
/// (the seed's patches 6 and 9). [`pinned`](Self::pinned) puts the contexts on two CPUs.
pub struct TwoContexts<S: SchedulerUnderTest> {
    completion: Completion,
    sched: S,
    stations: Vec<S::Station>,
    txqs: Vec<S::Txq>,
    /// The counter txqs, each on its own lines as a driver's txqs are separate objects.
    frames: Vec<Padded<AtomicU32>>,
    ring: Spsc,
    clock: AtomicU64,
    airtime_us: u32,
    /// CPUs of the wake and completion contexts ([`pinned`](Self::pinned)).
    cpus: Option<[usize; 2]>,
}

/// How the completion context of [`TwoContexts`] handles a pass of reaped completions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completion {
    /// Each frame handed to the completion context on its own; its charge released and
    /// its airtime registered as it is reaped, and each refilled by a round of its own
    /// that sends one frame: the most rounds and the most shared writes.
    PerFrame,
    /// As ath11k runs with the seed's patches 6 and 9: completions arrive a PPDU at a
    /// time ([`PPDU_FRAMES`]); the pass's charges are handed to
    /// [`SchedulerUnderTest::release_pass`] together and each station's airtime is
    /// registered once per pass (as PPDU statistics report it); then one round per
    /// budget of completions, each txq it hands out dequeued while its station's AQL
    /// check passes (as ath11k's round does), until as many frames as were reaped are
    /// sent or the round ends.
    PerBudget,
}

impl Completion {
    /// Frames whose completions reach the completion context together: one per frame,
    /// or a PPDU's worth, as a BlockAck completes an A-MPDU's frames at once.
    pub const fn ppdu_frames(self) -> usize {
        match self {
            Completion::PerFrame => 1,
            Completion::PerBudget => PPDU_FRAMES,
        }
    }
}

/// Frames per PPDU in [`Completion::PerBudget`]: 32 frames of 28 us, a 0.9 ms A-MPDU
/// (VHT80 MCS 9), whose BlockAck completes them together.
pub const PPDU_FRAMES: usize = 32;

/// Completions the completion context reaps per pass.
pub const REAP_BUDGET: usize = 64;
/// Frames the ring between the contexts holds.
pub const RING_FRAMES: usize = 256;

impl<S: SchedulerUnderTest> TwoContexts<S> {
    /// `n` backlogged stations of weight 256, every txq woken; charges released per frame.
    pub fn new(n: usize) -> Self {
        Self::with_completion(n, Completion::PerFrame)
    }

    /// [`new`](Self::new), with the completion context working as `completion` says.
    pub fn with_completion(n: usize, completion: Completion) -> Self {
        let (sched, stations, txqs) = populate::<S>(n.max(1), 256);
        let now = 1_000_000;
        for &t in &txqs {
            sched.wake(t, now);
        }
        TwoContexts {
            completion,
            frames: txqs.iter().map(|_| Padded(AtomicU32::new(BACKLOG))).collect(),
            sched,
            stations,
            txqs,
            ring: Spsc::new(RING_FRAMES),
            clock: AtomicU64::new(now),
            airtime_us: frame_airtime_us(),
            cpus: None,
        }
    }

    /// The same workload with its wake context pinned to the first CPU this process may
    /// use and its completion context to the second ([`affinity`](crate::affinity)), so
    /// that every run has the contexts on two CPUs, as a driver's are. Unchanged (left
    /// to the OS) where fewer than two CPUs are allowed or pinning is unavailable.
    pub fn pinned(mut self) -> Self {
        if let [wake, completion, ..] = crate::affinity::allowed_cpus()[..] {
            self.cpus = Some([wake, completion]);
        }
        self
    }

    /// The CPUs the wake and completion contexts are pinned to, if they are.
    pub fn cpus(&self) -> Option<[usize; 2]> {
        self.cpus
    }

    /// Pins the calling context's thread to the `which`-th CPU (0 wake, 1 completion).
    fn pin(&self, which: usize) {
        if let Some(cpus) = self.cpus {
            // Unpinned if refused: the run still completes, on the OS's choice of CPU.
            let _ = crate::affinity::pin_current_thread(cpus[which]);
        }
    }

    /// One round that sends up to `quota` frames, each txq it hands out dequeued while
    /// its station's AQL check passes; the frames sent go to `sent`. Returns their number.
    #[inline]
    fn send_round(&self, now: u64, quota: usize, sent: &mut Vec<(usize, S::Charge)>) -> usize {
        let s = &self.sched;
        let mut n = 0;
        let Some(round) = s.start_round(AC) else { return 0 };
        while n < quota {
            let Some(mut held) = s.next_txq(round, now) else { break };
            let t = S::held_index(&held);
            let mut left = 1;
            while n < quota && left > 0 && s.airtime_check(&held) {
                left = self.frames[t].fetch_sub(1, Ordering::Relaxed).saturating_sub(1);
                if let Some(c) = s.charge_held(&mut held, self.stations[t], AC, self.airtime_us) {
                    sent.push((t, c));
                    n += 1;
                }
            }
            s.return_txq(held, left > 0, now);
        }
        n
    }

    /// A frame's completion: per frame, its charge released and its airtime registered
    /// now; per budget, both kept in `pass` for the end of the pass.
    #[inline]
    fn complete(&self, t: usize, charge: S::Charge, now: u64, pass: &mut Pass<S>) {
        match self.completion {
            Completion::PerFrame => {
                self.sched.release(charge);
                self.sched.register_airtime(self.stations[t], AC, self.airtime_us, now);
            }
            Completion::PerBudget => {
                pass.charges.push(charge);
                if pass.airtime_us[t] == 0 {
                    pass.touched.push(t);
                }
                pass.airtime_us[t] += self.airtime_us;
            }
        }
    }

    /// The end of a completion pass: its charges released together, and each station's
    /// airtime registered once, as PPDU statistics report a station's aggregate.
    fn finish_pass(&self, pass: &mut Pass<S>, now: u64) {
        self.sched.release_pass(&mut pass.charges);
        for t in pass.touched.drain(..) {
            let us = core::mem::take(&mut pass.airtime_us[t]);
            self.sched.register_airtime(self.stations[t], AC, us, now);
        }
    }

    /// Runs both contexts: the wake context runs `rounds` rounds; the completion context
    /// reaps until the wake context is done and everything sent has completed, and after
    /// each reap sends as many frames as it reaped (a completion-triggered round per
    /// frame). Returns the wall time from both threads ready to the last completion.
    pub fn run(&self, rounds: u64) -> Duration {
        self.run_counted(rounds).elapsed
    }

    /// [`run`](Self::run), with counts of what each context did.
    pub fn run_counted(&self, rounds: u64) -> RunCounts {
        let start_clock = self.clock.load(Ordering::Relaxed);
        let wake_done = AtomicBool::new(false);
        let ready = Barrier::new(3);
        std::thread::scope(|scope| {
            let wake = scope.spawn(|| {
                self.pin(0);
                ready.wait();
                // Timed by the contexts themselves: the spawning thread is not pinned and
                // may wait for a CPU while both pinned contexts run.
                let t0 = Instant::now();
                let mut now = start_clock;
                let mut sent = 0u64;
                let ppdu_frames = self.completion.ppdu_frames();
                let mut ppdu: Vec<u64> = Vec::with_capacity(ppdu_frames);
                let mut one: Vec<(usize, S::Charge)> = Vec::with_capacity(1);
                for k in 0..rounds {
                    now += 1;
                    let i = (k % self.txqs.len() as u64) as usize;
                    self.frames[i].fetch_add(1, Ordering::Relaxed);
                    self.sched.wake(self.txqs[i], now);
                    if self.send_round(now, 1, &mut one) == 1 {
                        sent += 1;
                    }
                    for (t, c) in one.drain(..) {
                        ppdu.push(((t as u64) << 32) | u64::from(S::charge_into_raw(c)));
                    }
                    if ppdu.len() == ppdu_frames || (k + 1 == rounds && !ppdu.is_empty()) {
                        let mut spins = 0u32;
                        while !self.ring.push_all(&ppdu) {
                            spins = backoff(spins);
                        }
                        ppdu.clear();
                    }
                }
                // Release: the ring's last pushes happen before the flag is seen.
                wake_done.store(true, Ordering::Release);
                (sent, t0)
            });
            let completion = scope.spawn(|| {
                self.pin(1);
                ready.wait();
                let mut now = start_clock;
                let (mut rounds, mut sent, mut completed) = (0u64, 0u64, 0u64);
                let mut own: Vec<(usize, S::Charge)> = Vec::with_capacity(REAP_BUDGET);
                let mut pass = Pass::<S>::new(self.txqs.len());
                let mut idle = 0u32;
                loop {
                    now += 1;
                    // Acquire: pairs with the wake context's Release of its done flag.
                    let finished = wake_done.load(Ordering::Acquire);
                    let mut reaped = 0;
                    while reaped < REAP_BUDGET {
                        let Some(v) = self.ring.pop() else { break };
                        if let Some(c) = S::charge_from_raw(v as u32) {
                            self.complete((v >> 32) as usize, c, now, &mut pass);
                        }
                        reaped += 1;
                    }
                    completed += reaped as u64 + own.len() as u64;
                    for (t, c) in own.drain(..) {
                        self.complete(t, c, now, &mut pass);
                    }
                    self.finish_pass(&mut pass, now);
                    if reaped == 0 && finished {
                        break;
                    }
                    if reaped == 0 {
                        idle = backoff(idle);
                    } else {
                        idle = 0;
                    }
                    match self.completion {
                        Completion::PerFrame => {
                            for _ in 0..reaped {
                                rounds += 1;
                                sent += self.send_round(now, 1, &mut own) as u64;
                            }
                        }
                        Completion::PerBudget if reaped > 0 => {
                            rounds += 1;
                            sent += self.send_round(now, reaped, &mut own) as u64;
                        }
                        Completion::PerBudget => {}
                    }
                }
                (now, rounds, sent, completed, Instant::now())
            });
            ready.wait();
            let (end_now, completion_rounds, completion_sent, completed, end) =
                completion.join().unwrap_or_else(|_| (start_clock, 0, 0, 0, Instant::now()));
            let (wake_sent, t0) = wake.join().unwrap_or((0, end));
            let elapsed = end.saturating_duration_since(t0);
            self.clock.store(end_now.max(start_clock + rounds) + 1, Ordering::Relaxed);
            RunCounts { elapsed, wake_rounds: rounds, wake_sent, completion_rounds, completion_sent, completed }
        })
    }

    /// The scheduler.
    pub fn scheduler(&self) -> &S {
        &self.sched
    }
}

/// What a completion pass keeps for its end ([`Completion::PerBudget`]).
struct Pass<S: SchedulerUnderTest> {
    charges: Vec<S::Charge>,
    /// Airtime completed per txq (one txq per station here) in this pass, in us.
    airtime_us: Vec<u32>,
    /// The txqs with airtime in `airtime_us`, in first-completion order.
    touched: Vec<usize>,
}

impl<S: SchedulerUnderTest> Pass<S> {
    fn new(txqs: usize) -> Self {
        Pass { charges: Vec::with_capacity(2 * REAP_BUDGET), airtime_us: vec![0; txqs], touched: Vec::new() }
    }
}

/// Waits a little for the other context: spins first, then yields the CPU, so that on a
/// machine with fewer free cores than threads a waiting context does not burn the time
/// slice the other one needs. Returns the new spin count.
#[inline]
fn backoff(spins: u32) -> u32 {
    if spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
    spins.saturating_add(1)
}

/// What one [`TwoContexts::run_counted`] did.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunCounts {
    /// Wall time from both threads ready to the last completion.
    pub elapsed: Duration,
    /// Rounds the wake context started.
    pub wake_rounds: u64,
    /// Frames the wake context sent.
    pub wake_sent: u64,
    /// Rounds the completion context started.
    pub completion_rounds: u64,
    /// Frames the completion context sent.
    pub completion_sent: u64,
    /// Frames completed (released and registered): every frame sent.
    pub completed: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::Baseline;
    use airtime_sched::Scheduler;

    fn shares<S: SchedulerUnderTest>(weights: &[u16], cycles: usize) -> Vec<f64> {
        let mut w = FrameCycle::<S>::with_weights(weights);
        let mut sent = 0;
        for _ in 0..cycles {
            sent += usize::from(w.cycle());
        }
        assert!(sent * 10 >= cycles * 9, "{}: only {sent} of {cycles} cycles sent a frame", S::NAME);
        let total: u64 = w.served().iter().sum();
        w.served().iter().map(|&s| s as f64 / total as f64).collect()
    }

    fn assert_shares_follow_weights<S: SchedulerUnderTest>() {
        let weights = [256, 256, 512, 1024];
        let got = shares::<S>(&weights, 200_000);
        let sum: f64 = weights.iter().map(|&w| f64::from(w)).sum();
        for (g, &w) in got.iter().zip(&weights) {
            let want = f64::from(w) / sum;
            assert!((g - want).abs() < 0.02, "{}: share {g:.3}, weight share {want:.3} ({got:?})", S::NAME);
        }
    }

    #[test]
    fn the_frame_cycle_gives_both_schedulers_airtime_shares_in_proportion_to_weight() {
        assert_shares_follow_weights::<Scheduler>();
        assert_shares_follow_weights::<Baseline>();
    }

    #[test]
    fn the_frame_cycle_sends_a_frame_every_cycle_and_leaves_nothing_pending() {
        fn check<S: SchedulerUnderTest>(n: usize, pending: impl Fn(&S) -> i64) {
            let mut w = FrameCycle::<S>::new(n);
            let sent = (0..10_000).filter(|_| w.cycle()).count();
            assert_eq!(sent, 10_000, "{} at {n} stations", S::NAME);
            assert_eq!(pending(w.scheduler()), 0);
        }
        for n in [1, 16, 4096] {
            check::<Scheduler>(n, |s| i64::from(s.total_pending_us()));
            check::<Baseline>(n, |b| i64::from(b.total_pending()));
        }
    }

    #[test]
    fn the_debt_round_serves_one_txq_per_selection_in_both_schedulers() {
        fn check<S: SchedulerUnderTest>() {
            let w = DebtRound::<S>::new(8, 100, 100);
            for _ in 0..5 {
                w.prepare();
                assert!(w.select(), "{}", S::NAME);
            }
            w.prepare();
            assert_eq!(w.drain(), 8, "{}: a round from debt serves every station once", S::NAME);
        }
        check::<Scheduler>();
        check::<Baseline>();
    }

    #[test]
    fn two_contexts_complete_every_frame_sent_and_release_and_register_every_one() {
        fn check<S: SchedulerUnderTest>(
            completion: Completion,
            pending: impl Fn(&S) -> i64,
            tx_us: impl Fn(&S, S::Station) -> u64,
        ) {
            let w = TwoContexts::<S>::with_completion(16, completion).pinned();
            let c = w.run_counted(20_000);
            let name = (S::NAME, completion);
            assert_eq!(c.wake_rounds, 20_000);
            assert!(c.wake_sent > 0 && c.completion_sent > 0, "{name:?}: {c:?}");
            assert_eq!(c.completed, c.wake_sent + c.completion_sent, "{name:?}");
            assert_eq!(pending(w.scheduler()), 0, "{name:?}");
            let registered: u64 = w.stations.iter().map(|&sta| tx_us(w.scheduler(), sta)).sum();
            assert_eq!(registered, c.completed * u64::from(w.airtime_us), "{name:?}: every frame's airtime, once");
        }
        for completion in [Completion::PerFrame, Completion::PerBudget] {
            check::<Scheduler>(
                completion,
                |s| i64::from(s.total_pending_us()),
                |s, sta| s.station_airtime(sta).map_or(0, |a| a.tx_us),
            );
            check::<Baseline>(completion, |b| i64::from(b.total_pending()), |b, sta| b.tx_airtime(sta, AC));
        }
    }
}
