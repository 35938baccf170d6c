//! # airtime-benches
//!
//! Benchmarks of [`airtime_sched::Scheduler`] against a baseline built the way Linux
//! mac80211 builds its scheduler: one lock per access category around an intrusive
//! doubly linked list of txqs, walked as `ieee80211_next_txq` walks it
//! ([`baseline::Baseline`]).
//!
//! ## The layers, top-down
//!
//! 1. **[`SchedulerUnderTest`]** — the operations a driver calls on either scheduler
//!    (wake, start a round, next txq, AQL check, charge, return, release, register
//!    airtime), in one small trait so that the *same* workload code drives both.
//! 2. **[`ours`]** — the trait for `airtime_sched::Scheduler`, a thin mapping.
//! 3. **[`baseline`]** — mainline's design in Rust, for comparison only, with unit tests
//!    that pin its behaviour to mainline's (`__ieee80211_schedule_txq` to `ieee80211_txq_schedule_airtime_check`, `ieee80211_sta_update_pending_airtime`, `ieee80211_sta_register_airtime`).
//! 4. **[`workload`]** — the workloads: the single-threaded frame cycle at any number of
//!    stations, the many-laps round of E6, and the two-thread (wake context +
//!    completion context) run, whose contexts hand frames over through [`spsc`].
//! 5. **[`end_to_end`]** — the two-thread workload with the txq work included: frames
//!    through FQ-CoDel txqs into a ring, ours as a `TxqTable` against a baseline with
//!    mainline's radio-wide `fq->lock` ([`spinlock`], a lock that spins as the
//!    kernel's does) around the same FQ-CoDel txqs and the per-AC-locked scheduler.
//! 6. **Measurement aids** — [`affinity`] pins the two contexts to two CPUs,
//!    [`padded`] keeps the harness's own shared values on lines of their own, and
//!    [`line_transfer`] measures what moving a cache line between the two CPUs costs.
//!
//! The criterion benches in `benches/benches/`, the instruction-count example
//! `examples/frame_cycle.rs` (run by `instructions.sh` under valgrind) and the
//! interleaved two-thread example `examples/two_contexts.rs` are thin drivers of
//! [`workload`], and `examples/end_to_end.rs` of [`end_to_end`]; `/BENCHMARKS.md` has
//! the numbers and how to reproduce them.

pub mod affinity;
pub mod baseline;
pub mod end_to_end;
pub mod line_transfer;
pub mod ours;
pub mod padded;
pub mod spinlock;
pub mod spsc;
pub mod tx_ring;
pub mod workload;

use airtime_sched::{Ac, Tid};

/// The operations a driver performs on a scheduler, as both the airtime scheduler and the
/// mac80211-style baseline offer them. Times are microseconds since an arbitrary epoch,
/// passed in (neither scheduler reads a clock).
///
/// Setup (`new`, `add_station`, `add_txq`, `set_weight`) takes `&mut self`; everything
/// the data path uses takes `&self`, so two threads can drive one scheduler.
pub trait SchedulerUnderTest: Sync + Sized {
    /// A station handle.
    type Station: Copy + Send + Sync;
    /// A txq handle.
    type Txq: Copy + Send + Sync;
    /// Sole service of a txq, from `next_txq` to `return_txq`.
    type Held<'a>
    where
        Self: 'a;
    /// An AQL charge, released once at completion.
    type Charge;
    /// One context's round on one AC, from `start_round` to the `next_txq` calls of it.
    type Round: Copy;

    /// Short name used in benchmark ids: `ours` or `baseline`.
    const NAME: &'static str;

    /// A scheduler with room for `max_stations` stations and as many txqs.
    fn new(max_stations: u16) -> Self;
    /// Registers a station of airtime weight `weight` (1..=65535).
    fn add_station(&mut self, weight: u16) -> Self::Station;
    /// Registers a txq of `station` on `tid`.
    fn add_txq(&mut self, station: Self::Station, tid: Tid) -> Self::Txq;

    /// A frame was enqueued on `txq` (mac80211's `ieee80211_schedule_txq`).
    fn wake(&self, txq: Self::Txq, now: u64);
    /// Starts a round on `ac`; `None` if it did not open (the AC is over its PHY limit).
    fn start_round(&self, ac: Ac) -> Option<Self::Round>;
    /// The next txq to serve in `round`, if any.
    fn next_txq(&self, round: Self::Round, now: u64) -> Option<Self::Held<'_>>;
    /// The registration index (0, 1, ...) of a held txq, to find the workload's queue.
    fn held_index(held: &Self::Held<'_>) -> usize;
    /// The station AQL check for a held txq (`ieee80211_txq_airtime_check`).
    fn airtime_check(&self, held: &Self::Held<'_>) -> bool;
    /// Returns a held txq; `backlogged` says whether it still has frames.
    fn return_txq(&self, held: Self::Held<'_>, backlogged: bool, now: u64);
    /// Charges `airtime_us` of expected airtime to `station` on `ac` at dequeue.
    fn charge(&self, station: Self::Station, ac: Ac, airtime_us: u32) -> Option<Self::Charge>;
    /// [`charge`](Self::charge) for a frame dequeued from the held txq `held` (`station`
    /// and `ac` are that txq's), the way a
    /// driver's round charges. The default is `charge` (mac80211 charges in
    /// `ieee80211_tx_dequeue`, whatever holds the txq); ours charges through the
    /// `Serving` handle, which writes the AC's counter once per service.
    fn charge_held(
        &self,
        held: &mut Self::Held<'_>,
        station: Self::Station,
        ac: Ac,
        airtime_us: u32,
    ) -> Option<Self::Charge> {
        let _ = held;
        self.charge(station, ac, airtime_us)
    }
    /// Releases a charge at completion.
    fn release(&self, charge: Self::Charge);
    /// Releases a completion pass's charges (draining `charges`). The default releases
    /// them one by one, as mac80211 does (it has no batch call); ours overrides it with
    /// `Scheduler::release_batch`.
    fn release_pass(&self, charges: &mut Vec<Self::Charge>) {
        for c in charges.drain(..) {
            self.release(c);
        }
    }
    /// Registers measured tx airtime (`ieee80211_sta_register_airtime`).
    fn register_airtime(&self, station: Self::Station, ac: Ac, tx_us: u32, now: u64);
    /// Resets a station's deficits to its weight (the debugfs `airtime` write).
    fn reset_deficit(&self, station: Self::Station);

    /// A charge as one `u32`, to carry it to another thread (a frame's control block).
    fn charge_into_raw(charge: Self::Charge) -> u32;
    /// A charge back from [`charge_into_raw`](Self::charge_into_raw).
    fn charge_from_raw(raw: u32) -> Option<Self::Charge>;
}
