//! # airtime-sched
//!
//! Airtime Queue Limits (AQL) and weighted airtime fairness for Wi-Fi drivers: what
//! Linux mac80211 gives its C drivers, as a lock-free, `no_std` Rust core.
//!
//! ## The layers, top-down
//!
//! 1. **[`Txq`]** — one (station, TID) software queue the scheduler pulls from. The
//!    crate ships an FQ-CoDel one. Frames wait here, where an AQM can manage them.
//! 2. **[`Station`]** — a peer: it prices a frame in microseconds of airtime from its
//!    last reported tx rate (with `airtime-est`).
//! 3. **[`Scheduler`]** — per radio. For each access category it runs *rounds*: a
//!    round picks txqs by weighted deficit round robin (each station's deficit is
//!    topped up by its weight and charged with the airtime the hardware reports; the
//!    *effective* deficit subtracts the airtime still in flight), skips stations over
//!    their AQL limit, and closes the AC when its total pending airtime is over the
//!    per-AC PHY limit. Every frame dequeued is *charged* its expected airtime; the
//!    charge is a token ([`Charge`]) released when the hardware completes the frame.
//! 4. **[`Ring`]** — the hardware descriptor ring. It says whether it has room before
//!    a frame is dequeued, takes a frame with its charge, or hands both back.
//!
//! 5. **[`TxqTable`]** — the txqs, owned by the crate for drivers that serve them from
//!    more than one context: any context enqueues without waiting
//!    ([`TxqTable::enqueue`]), straight into the txq's queue when nobody holds it (an
//!    FQ-CoDel enqueue on the transmit path, as in mainline), else into its lock-free
//!    intake; the context the scheduler hands the txq to holds a [`TxqTurn`], the only
//!    way to take frames from its queue; and
//!    [`TxqTable::run_round`] is the ready loop (`&self`: the wake and completion
//!    contexts run it at once), with a retry slot per txq, a per-turn budget
//!    ([`txqs::TurnBudget`], or a txq's own from a pre-turn hook), and each turn
//!    bracketed by [`Ring::start_turn`] and [`Ring::end_turn`]; a pull-mode driver
//!    serves the turn its firmware asked for ([`TxqTable::may_transmit`]) with the same
//!    loop ([`TxqTurn::serve`]). Completions go through
//!    [`Scheduler::complete_frame`] or [`Scheduler::complete_ppdu`] ([`tx_status`]).
//!
//! A frame's path: enqueue into a txq and [`Scheduler::wake_txq`] (a [`TxqTable`] user
//! calls only [`TxqTable::enqueue`], which wakes the txq itself; a `wake_txq` after it
//! is not needed: harmless, since a listed txq is listed once (S2), but one more atomic
//! read-modify-write per frame) →
//! [`Scheduler::start_round`] (a [`Round`]) → [`Scheduler::next_txq`] → dequeue, price,
//! [`Serving::charge_frame`] (through the held txq; [`Scheduler::charge_frame`] without
//! one) → [`Ring::push`] → completion:
//! [`Scheduler::release`] (or [`Scheduler::release_batch`] for a whole completion pass)
//! and [`Scheduler::register_airtime`] → a new round.
//!
//! Short ids in these docs — invariants (A1–A6 accounting, S1–S8 scheduling, L1–L4
//! limits), mainline behaviours (E*n*) and mainline bugs (B*n*) — are defined in the
//! crate's `INVARIANTS.md`, each with the mac80211 function it concerns.
//!
//! ## Time
//! The scheduler never reads a clock: operations take `now` ([`Instant`]), so tests,
//! loom models, fuzzing and the simulator are deterministic.
//!
//! ## Concurrency
//! Every data-path operation takes `&self` and no lock (atomics only, through one
//! crate-private `sync` module that maps to loom under `cfg(loom)`). Rounds may run at
//! once from the wake context and the completion context for the same AC, each with its
//! own [`Round`]: a per-txq state word (listed per AC / serving / woken-while-serving)
//! makes sure a txq has one server at a time and that no wake is lost, and each AC's
//! list of waiting txqs is a lock-free stack (mainline's head insertions) followed by a
//! lock-free ring (its tail insertions).
//!
//! A txq held by one round is off its AC's list, and so is an entry a round's
//! [`Scheduler::next_txq`] only looks at and rotates to the tail (its station over its
//! AQL limit or in deficit), so a round another context runs meanwhile cannot serve it,
//! and that round may be the one meant to follow the event that made the txq servable
//! again (a completion that released its station's AQL charges or freed the ring).
//! Keeping the txq listed (S1) is not enough for liveness: the ready loops
//! ([`TxqTable::run_round`], [`driver_loop::run_round`]) therefore ask, after a round
//! that visited the list, whether a round started on the AC since
//! ([`Scheduler::round_started_since`], a read-modify-write ordered with every round
//! start), and run another if one did (bounded: [`driver_loop::RoundReport::overlapped`]
//! says when the caller must ask again). Loom models `txq17` to `txq23`
//! (`tests/loom_txqs.rs`) check it. A driver that runs its own loop over `next_txq`
//! concurrently does the same: after a round in which it called `next_txq`, once it
//! returned the round's last txq, it calls `round_started_since(round)`; if that says
//! yes, it runs another round (two more at most, so that others' starts cannot keep
//! it), and if it still says yes after the last, it makes sure another round runs (as
//! after a [`RoundGate`]'s `Deferred`). Or it gates its rounds. A turn taken outside a
//! round ([`Scheduler::may_transmit`], [`TxqTable::may_transmit`], [`TxqTable::claim`])
//! has no round to ask about: a driver that takes those beside concurrent rounds runs a
//! round on the AC after each such call (whatever it returned: a refusal may have held
//! the txq a moment; after a granted turn, once the turn is returned) if the txq may
//! still have frames, asked after the return ([`TxqTable::may_have_frames`]; a driver
//! that owns its queues asks them) — not "if the turn saw frames left": a wake that
//! landed during the turn lists the txq at its return (loom model `txq24`).
//! `Err(UnknownTxq)` from that question means the txq was removed: its frames come
//! back with it ([`TxqTable::take_removed`]), and no round is owed for it. Several
//! turns in a row on one AC (the records of one firmware fetch indication) need one
//! round, if any of their txqs may still have frames, started after the last of them
//! returned: each turn's wake was listed by its return, so that round, like any round
//! started after those returns, finds every one of them listed (the argument the ready
//! loops' re-check rests on: [`Scheduler::round_started_since`]); its report is handled
//! as any round's (another round after `TurnBudget`, say). A round run between the
//! records covers only the turns returned before it started.
//!
//! Concurrent rounds are allowed, not required, and not always the fastest: two rounds
//! on one AC at once pass the same lines (the AC's list, the txqs, the ring) between
//! the CPUs. A [`RoundGate`] lets one context at a time run an AC's rounds while the
//! others leave it a note in one atomic step instead of waiting, as mt76 runs every
//! round from one tx worker (mac80211 forbids a driver concurrent rounds; this crate
//! does not). What it gives up is that a preempted runner delays the rounds asked of
//! it; a budget bounds how long others' requests keep a runner (see its docs).
//!
//! ### Progress guarantee
//! The data path is **lock-free**: whatever any thread is preempted doing, at any
//! instruction, every other thread's operation completes in a bounded number of its own
//! steps, except for retries of a compare-and-swap that another thread's *completed*
//! operation made fail. No operation waits for another thread to finish a step: a push
//! that finds the ring's tail lagging moves it on, a push that finds a cell a stalled
//! pop has taken frees it, and nothing spins but a server's bounded wait for a txq's
//! queue (below). Each `next_txq` call is bounded (at most
//! three laps over the listed txqs, the idle ones applied at once, plus one more look
//! at an entry each time another context completes the removal of its txq and the
//! addition of a new one in its slot); a round ends when it meets a txq handed out in it
//! or in any later round, so a round ends even while other contexts keep starting
//! rounds. Whatever a round decides from a slot (a take, a top-up of the station's
//! debt, the end of the round) is for the txq it looked at: a txq that took the slot
//! meanwhile is looked at, and checked, on its own.
//!
//! The [`TxqTable`] adds one word per txq that acts as a lock on its queue, but nobody
//! waits on it for long: an enqueue only tries it (taken, it writes its frames straight
//! into the queue; refused, it pushes them into the txq's lock-free intake), a server
//! spins a bounded number of times for it while the holder stops after its current
//! frame, and the hand-back of a removed txq leaves the txq to the holder to put back.
//! A txq whose queue a preempted enqueue holds is passed over, still listed, and the
//! round says so ([`driver_loop::RoundEnd::QueueBusy`]). A removed txq's queue is handed
//! back only under that lock, so an enqueue that writes straight into the queue checks
//! the txq live once it holds the lock, and needs nothing more; one that pushes into the
//! intake holds its txq (a count in the txq's word) from its check that the txq lives to
//! its wake, which ends the hold in the same compare-and-swap. Either way a removed
//! txq's slot is reused only once no enqueue can still put a frame into it; the removed
//! txq's queue, retry frame and intake are handed back by [`TxqTable::take_removed`]
//! once no context holds it or its queue (loom models in `tests/loom_txqs.rs`). A
//! removal that finds an enqueue holding the queue leaves the txq to that enqueue,
//! which puts it back for `take_removed` as it unlocks: a driver asks
//! [`TxqTable::has_removed`] (one load) after its enqueues, or those frames wait for its
//! next call to `take_removed`.
//!
//! What a preempted thread can delay is only the one txq it holds:
//! * a txq being served (between `next_txq`, `may_transmit` or [`TxqTable::claim`] and
//!   its return): a wake
//!   marks it, and the server lists it when it returns — as in mainline, where the
//!   driver holds it;
//! * a txq whose entry a `next_txq` has popped and not yet served or put back, or whose
//!   wake has set its listed bit and not yet pushed the entry: it is listed again when
//!   that thread resumes. Meanwhile another context's wake of it finds it listed and its
//!   round does not meet it;
//! * a table txq whose queue an enqueue holds (it writes its frames into it): servers
//!   pass it over, still listed, until that enqueue resumes and unlocks it.
//!
//! No wake is lost in any interleaving (every txq with frames is listed, held, or being
//! served with its wake recorded); no txq but the one a preempted thread holds waits for
//! it. On PREEMPT_RT, where a preempted low-priority thread may not run for a long time,
//! that one txq waits with it, with no priority inheritance (nobody sleeps on its
//! queue's lock: servers pass the txq over). A queue type that does not opt in to
//! enqueues on the transmit path ([`Enqueue::DIRECT_ENQUEUE`]) is never locked by one.
//! The loom models in `tests/loom_list.rs`, `tests/loom_models.rs`, `tests/loom_txqs.rs`
//! and (for the list's ring and the intake's nodes, which are not exported, and the
//! round gate) `src/list/ring.rs`, `src/txqs/intake.rs` and `src/round_gate.rs` check
//! these claims on the real code;
//! every model of a lock-free path has a deliberately broken
//! variant that CI proves it catches (the few without one check a behaviour no single
//! weakening maps to, and say so).
//!
//! ## Where this differs from mainline, on purpose
//! * Charges are tokens released exactly once, not a field in the frame's control block.
//! * A frame sent before the station's first rate report is charged
//!   [`Config::unknown_rate_charge_us`], not nothing (mainline's
//!   `ieee80211_calc_expected_tx_airtime` returns 0 without a rate).
//! * Charges are multiples of 4 us up to 65532 us, not clamped at 4092 (mainline's
//!   10-bit `tx_time_est` field); the estimator computes in 64 bits.
//! * The per-AC PHY limit is defined (unlimited) with no listed txq instead of wrapping
//!   (`ieee80211_txq_schedule_airtime_check` computes `n - 1` unsigned), and its txq
//!   count is read in O(1) instead of walking the list.
//! * A closed round keeps its number by default (the seed's fix, [`RoundPolicy`]).
//! * `may_transmit` refuses while the AC is over its PHY limit by default
//!   ([`OverLimitPolicy`]), and uses the effective deficit for the asked txq where
//!   mainline reads its stored deficit, so a station with more airtime in flight than
//!   its deficit is refused ([`Refusal::Deficit`]) until completions or repeated asks
//!   cover it ([`Scheduler::may_transmit`] says what a pull-mode driver does); it does
//!   not rotate the txqs listed ahead of the asked one (mainline's
//!   `ieee80211_txq_may_transmit` moves each to the tail, an O(n) walk per ask):
//!   pull-mode fairness comes from the asked
//!   station's own top-ups, so weights shape the shares only as far as each ask's
//!   airtime exceeds the weights (mainline's walk has the same limit: a firmware asking
//!   for a frame or two at a time gets shares nearer to equal than its weights).
//!   A listed txq it allows keeps its place on the list, standing for nothing until
//!   returned (mainline unlinks and re-inserts it).
//! * `next_txq` applies the laps in which nobody would be served at once, leaving the
//!   deficits and list order that walking them leaves (mainline walks them under the AC
//!   lock: at weight 1 and a large debt, many laps).
//! * Removing a txq frees its slot at once but leaves its entry on the AC's list (a
//!   lock-free list cannot unlink from the middle; mainline's `ieee80211_txq_purge`
//!   does `list_del_init` under the AC lock): a round that meets the entry drops it,
//!   and a txq added into the same slot on the same AC takes the entry over when first
//!   woken, in its place, not at the head or the tail as a newly listed txq would be.
//! * Under a concurrent completion, the lap skip is not exactly the walk it replaces:
//!   it reads the lap's deficits in passes, so when a release makes the station it
//!   serves eligible meanwhile, the other stations may keep the top-ups of laps the
//!   walk would have stopped before. The difference is at most the skipped laps' weights
//!   per station, never lifts a deficit above 0, and each station's deficit stays
//!   within what some walk interleaved with the completion leaves (loom models 15, 16).
//! * A txq returned [`TxqReturn::Stalled`] goes to the tail, where mainline's head
//!   insertion would end every later round at it.
//! * Weight 0 and inverted limits cannot be expressed ([`Weight`], [`AqlLimits`]).
//! * With [`Config::tx_no_pushback`], per-station limits scale by weight/256 with a
//!   floor, so that weights reach the air where firmware picks the transmitter (the
//!   `IEEE80211_HW_TX_NO_PUSHBACK` flag proposed with the ath11k AQL series).
//! * Charges are counted even while the AQL checks are off, so toggling them with
//!   frames in flight keeps every counter exact.
//! * Multicast (station-less) frames can be charged to a budget per AC
//!   ([`Scheduler::charge_multicast_us`], 50 ms by default), kept out of the unicast
//!   counters and totals; mac80211's multicast AQL patches (v3, 2026:
//!   `aql_mc_pending_airtime`, `aql_bc_pending_airtime` in their versions before May 2026) keep one
//!   budget for the radio. The ready loops charge a station-less frame only when the
//!   driver prices it ([`StationTable::multicast_airtime_us`]);
//!   by default they send it uncharged and count it
//!   ([`AcCounters::uncharged_frames`]), as mainline does (those patches are not merged).
//! * With [`Config::adaptive_aql`] (off by default), each station's limit on each AC is
//!   learnt from its completions within `[floor, configured]`, as BQL's dynamic queue
//!   limits learn bytes; mainline has one hand-set limit per AC for every station.
//! * Frames charged through a held txq ([`Serving::charge_frame`]) reach the AC's
//!   pending counter once, when the txq is returned, not once per frame, so the wake
//!   and completion contexts do not pass that line back and forth for every frame;
//!   the serving context's own checks count them at once.
//!
//! ## Example
//! ```
//! use airtime_sched::{Ac, Config, Instant, Scheduler, Tid, TxqReturn, Weight};
//!
//! let sched = Scheduler::new(Config::default()).unwrap();
//! let sta = sched.add_station(Weight::DEFAULT).unwrap();
//! let txq = sched.add_txq(Some(sta), Tid::BE).unwrap();
//! let now = Instant::from_millis(1);
//!
//! sched.wake_txq(txq, now).unwrap(); // a frame was enqueued
//! let round = sched.start_round(Ac::Be); // this context's round
//! assert!(round.is_open());
//! let mut serving = sched.next_txq(round, now).expect("the woken txq is served");
//! assert_eq!(serving.txq(), txq);
//! assert!(serving.airtime_check()); // the station's AQL budget allows a frame
//! let charge = serving.charge_us(28).unwrap(); // dequeued and priced: charged through the handle
//! sched.return_txq(serving, TxqReturn::Empty, now);
//! assert_eq!(sched.station_pending_us(sta, Ac::Be).unwrap(), 28);
//!
//! sched.release(charge).unwrap(); // the hardware completed the frame
//! sched.register_airtime(sta, Ac::Be, 91, 0, now).unwrap(); // measured airtime
//! assert_eq!(sched.total_pending_us(), 0);
//! ```

//!
//! ## A station leaving
//! [`Scheduler::remove_station`] may run while one of the station's txqs is held and
//! its frames are in the air. The handle then says so ([`Serving::station_removed`];
//! [`Serving::airtime_check`] is false, charges fail with
//! [`ChargeError::StationRemoved`]): purge the txq's frames. A frame sent without a
//! charge is recorded with [`Serving::send_uncharged`], so it shows in
//! [`AcCounters::uncharged_frames`]. The [`DepartingStation`] returned tells when the
//! last of its airtime has completed; until then a full table answers
//! [`SchedError::StationsDraining`], and airtime reported for it is counted in
//! [`AcCounters::departed_tx_us`].
//! ```
//! use airtime_sched::{Ac, ChargeError, Config, Instant, Scheduler, Tid, TxqReturn, Weight};
//!
//! let sched = Scheduler::new(Config::default()).unwrap();
//! let sta = sched.add_station(Weight::DEFAULT).unwrap();
//! let txq = sched.add_txq(Some(sta), Tid::VI).unwrap();
//! let now = Instant::from_millis(1);
//! sched.wake_txq(txq, now).unwrap();
//! let mut serving = sched.next_txq(sched.start_round(Ac::Vi), now).unwrap();
//! let in_flight = serving.charge_us(300).unwrap();
//!
//! let departing = sched.remove_station(sta).unwrap(); // another context, meanwhile
//! assert!(serving.station_removed() && !serving.airtime_check());
//! assert_eq!(serving.charge_us(300), Err(ChargeError::StationRemoved));
//! sched.return_txq(serving, TxqReturn::Empty, now); // its frames are purged
//!
//! assert_eq!(departing.pending_us(&sched, Ac::Vi), 300);
//! sched.release(in_flight).unwrap(); // the last completion
//! sched.register_airtime(sta, Ac::Vi, 310, 0, now).unwrap();
//! assert!(departing.is_drained(&sched)); // the hardware's station index is free
//! assert_eq!(sched.ac_counters(Ac::Vi).departed_tx_us, 310);
//! ```

// Never std outside tests: a std user elsewhere in a build (the simulator) must not be
// able to pull std into the kernel module's staticlib through feature unification.
#![cfg_attr(not(test), no_std)]
#![deny(clippy::float_arithmetic)]
// This code runs inside kernel modules and is fuzzed. Outside tests, run-time code may not
// index unchecked (per-AC state is a `PerAc`, indexed by `Ac`), unwrap, or call a
// panicking macro; an exception names why its index is in bounds. Nor may it do arithmetic
// that can overflow: the Rust-for-Linux module builds this crate with overflow checks on,
// where an overflow is a BUG(). Each operation says how it stays in range: it wraps by
// design (the ring's 48-bit cell sequences, hints), cannot carry (packed fields whose bound
// is checked, u64 positions that never reach 2^64), saturates (counts, statistics), or is
// checked (caller input). `Iterator::sum` escapes the lint: sums fold with
// `saturating_add` where a term is not small.
#![cfg_attr(
    not(test),
    deny(
        clippy::arithmetic_side_effects,
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]
#![warn(missing_docs)]

extern crate alloc;
// The weakened variants read their switch from the environment (`weakened`); the loom
// model runner counts executions (`loom_model`).
#[cfg(all(loom, not(test)))]
extern crate std;

/// A deliberately weakened variant's switch, for the loom models' proof that they can
/// fail: `true` only in a loom build run with `AIRTIME_WEAKENED=<name>` (see
/// `weakened`), the constant `false` in every other build. An undeclared name does not
/// compile.
macro_rules! weakened {
    ($name:literal) => {{
        const _: () = assert!($crate::weakened::declared($name), "undeclared weakened variant");
        $crate::weakened::is($name)
    }};
}

mod ac;
pub mod aql;
mod cache_line;
mod charge;
mod config;
// Its tests still bind the scheduler `mut` for the `&mut self` check this crate had;
// the loop's rewrite drops that.
#[cfg_attr(test, allow(unused_mut))]
pub mod driver_loop;
pub mod fq_codel;
mod ids;
mod list;
/// The runner of every loom model: `loom::model`, failing a collapsed search.
#[cfg(loom)]
#[doc(hidden)]
pub mod loom_model;
#[cfg(not(loom))]
mod prefetch;
pub mod round_gate;
mod scheduler;
mod slots;
mod sync;
mod time;
pub mod traits;
mod try_alloc;
pub mod tx_status;
pub mod txqs;
mod weakened;
/// A test-side variant's switch (a recipe a loom model follows), as the crate's own.
#[cfg(loom)]
#[doc(hidden)]
pub use weakened::is as weakened_variant;

/// The airtime estimator this crate's API speaks in ([`Station::last_tx_rate`]'s
/// [`Rate`](airtime_est::Rate), the [`Calibrator`](airtime_est::Calibrator) a tx-status
/// call feeds): re-exported so that a driver names the very version this crate links.
pub use airtime_est;

pub use ac::{Ac, InvalidTid, PerAc, Tid};
pub use charge::Charge;
pub use config::{AirtimeFlags, AqlLimits, Config, ConfigBuilder, ConfigError, OverLimitPolicy, RoundPolicy, Weight};
pub use driver_loop::StationTable;
pub use fq_codel::{FqCodelConfig, FqCodelTxq, FqFrame};
pub use ids::{StationId, TxqId};
pub use round_gate::{GateOutcome, RoundGate};
pub use scheduler::{
    AcCounters, BatchRelease, ChargeError, DEFAULT_AQL_THRESHOLD_US, DEFAULT_MULTICAST_LIMIT_US, DepartingStation,
    InvariantViolation, MayTransmit, PhyAqlLimits, PhyAqlPending, PullRefusals, Refusal, ReleaseError, Round,
    SchedError, Scheduler, Serving, StationAirtime, StationAql, TxqReturn,
};
pub use time::Instant;
pub use traits::{
    Enqueue, Frame, PushError, Ring, RingError, RingErrorKind, Station, StationError, StationErrorKind, Txq, TxqError,
    TxqErrorKind, price_from_rate,
};
pub use tx_status::{FrameCompletion, FrameStatus, PpduCompletion};
pub use txqs::{TxqTable, TxqTurn};
