//! # airtime-mt76
//!
//! The mt76 adapter of the airtime workspace: the transmit path of OpenWrt's mt76
//! driver (mt7603 to mt7996) written over the core's concurrent txq table
//! ([`airtime_sched::TxqTable`]) and a hardware abstraction ([`hal`]), so that the same
//! code runs on the simulated HAL ([`sim_hal`]) and, later, behind a C shim.
//!
//! mt76 is the other driver shape next to ath11k: the host picks the transmitter. Each
//! turn the driver takes one txq from mac80211's scheduler and pushes a *burst* of its
//! frames into the AC's DMA queue; the hardware aggregates what it finds there. That is
//! where airtime fairness reaches the air.
//!
//! ## The transmit path, function by function
//!
//! | mt76 | here |
//! |---|---|
//! | `mt76_wake_tx_queue` → tx worker → `mt76_txq_schedule_all` | [`Mt76::wake_tx_queue`], [`Mt76::schedule_all`] |
//! | `mt76_txq_schedule` (rounds while one sends), from the one tx worker | [`Mt76::schedule`], one context at a time per AC ([`airtime_sched::RoundGate`]) |
//! | `mt76_txq_schedule_list` (`ieee80211_next_txq`, one burst per txq, `ieee80211_return_txq`) | [`TxqTable::run_round`](airtime_sched::TxqTable::run_round) inside [`Mt76::schedule`] |
//! | `mt76_txq_stopped` (`queued + MT_TXQ_FREE_THR >= ndesc`, `q->blocked`), and `MT76_RESET` | the round's [`Ring::has_room`](airtime_sched::Ring::has_room), checked before each txq and each frame |
//! | `mt76_txq_send_burst` (dequeue, `__mt76_tx_queue_skb`, kick) | one turn: charge, token, descriptor; [`Ring::end_turn`](airtime_sched::Ring::end_turn) kicks |
//! | `mt76_token_consume` / `mt76_token_release`, `MT76_TOKEN_FREE_THR` | the token table: a token owns the frame and its charge until tx-free |
//! | `mt7915_mac_tx_free` (+ `_done`) | [`Mt76::tx_free`] |
//! | `mt76_tx_status_*` → `ieee80211_tx_status_ext` | per-frame [`hal::TxReport`] (tries, ack, rate) to [`hal::StatusSink`] |
//! | `mt7915_mac_sta_poll` → `ieee80211_sta_register_airtime` | [`Mt76::sta_poll`] ([`AirtimeSource::WtblPoll`], the default) |
//! | `mt76x02_send_tx_status` (`ieee80211_calc_tx_airtime` per frame) | [`AirtimeSource::TxStatus`]: [`Scheduler::complete_frame`](airtime_sched::Scheduler::complete_frame) |
//! | a tx hang (tokens with no tx-free after `MT_TX_STATUS_SKB_TIMEOUT`), the cue for a reset | [`Mt76::tokens_overdue`] (releases nothing) |
//! | `MT76_RESET` and `mt76_worker_disable`, `napi_disable` of the tx-free NAPI, then `mt76_connac2_tx_token_put`, at a reset | [`Mt76::stop_tx`], [`Mt76::reset_tokens`] once DMA has stopped (refused before `stop_tx` has returned, [`Mt76Error::TxNotStopped`], and while a tx-free pass is inside `next_tx_free` or holds an event it read: [`Mt76Error::TxFreeBusy`]), [`Mt76::start_tx`] (refused during the flush, [`Mt76Error::TxFlushing`]) |
//! | `mt76_sta_pre_rcu_remove`, `mt76_wcid_cleanup` | [`Mt76::remove_station`] |
//! | `mt76_sta_ps_transition` (`MT_WCID_FLAG_PS`) | [`Mt76::sta_ps`] |
//!
//! ## Burst bounds
//! Since mt76 commit e861cb05 ("rely on AQL for burst size limits on tx queueing") a
//! burst has no frame count: it ends when the txq is empty, the DMA queue reaches its
//! free threshold ([`hal::MT_TXQ_FREE_THR`]) or the token table blocks tx
//! ([`hal::MT76_TOKEN_FREE_THR`]); AQL bounds the airtime a station has in flight.
//! That is [`Config::default`]. The older bound, `limit = ampdu ? 16 : 3` in
//! `mt76_txq_send_burst`, is [`Config::legacy_burst`] ([`hal::LEGACY_AMPDU_BURST`]).
//! Any [`TurnBudget`](airtime_sched::txqs::TurnBudget) (frames and charged airtime per
//! turn) can be set in [`Config::burst`].
//!
//! ## Where this differs from mt76, on purpose
//! * **Non-AQL frames**: mt76 caps a station's frames sent without an airtime estimate
//!   at `MT_MAX_NON_AQL_PKT` (16). The core charges such frames its conservative
//!   unknown-rate charge instead, so AQL bounds them and no cap is needed.
//! * **AQL per frame**: mac80211 checks a station's AQL budget once, when
//!   `ieee80211_next_txq` hands out its txq; the core's round checks it before every
//!   frame of the burst, so a burst stops at the limit.
//! * **A full DMA queue at the write**: mt76 checks the queue before each frame and
//!   frees a frame whose write still fails. Here a queue found full at the write keeps
//!   the frame in its txq's retry slot (its charge given back until it is sent), and it
//!   goes first at the txq's next turn: the tx-free of a written token runs the tx
//!   worker, or, with no written token outstanding, the refused write makes the same
//!   [`Mt76::schedule`] run the AC again, as after a map failure below. A queue that
//!   reads full ([`queued`](hal::DmaQueues::queued) at its `ndesc`) with none of this
//!   adapter's descriptors in it, filled by another user, ends the round with nothing
//!   to run it again; a HAL whose queues carry only this adapter's frames, as mt76's
//!   data queues do, and that cleans up descriptors no later than it reports their
//!   tx-free events ([`queued`](hal::DmaQueues::queued), or
//!   [`Mt76::tx_cleanup_done`] after a cleanup that runs apart), never reads full so. A frame that cannot be mapped is dropped, as mt76
//!   drops it, and, as mt76 does, the burst ends there: the txq keeps its other frames
//!   (the next one held in its retry slot) and stays listed, and the round goes on with
//!   the next txq. Those frames wait for the tx worker's next run, which the tx-free of
//!   a written token brings, as in mt76; with no written token outstanding (a token
//!   taken for a frame whose write then fails brings no tx-free), [`Mt76::schedule`]
//!   runs the next round at once instead (mt76 would wait for the next wake), and if
//!   its [`Config::max_rounds`] ends first, says so ([`ScheduleReport::deferred`],
//!   [`Mt76::rounds_waiting`]).
//! * **Token ids** are handed out cyclically (mt76's `idr_alloc` takes the lowest free
//!   id), and a tx-free whose WCID names another station than the token's frees
//!   nothing (checked only when both name one: a station-less (multicast) frame's token
//!   has no WCID, and an event without a WCID pair names none), so a stray tx-free (a
//!   duplicate, a late one) finds the token empty instead of completing a newer frame —
//!   unless the cyclic search has reached the id again since it was freed (or neither
//!   names a station): about one pass of the table for a frame's usual tx-free,
//!   but possibly the next frame for an id held while the search went round (a hung
//!   token). A reset relies on the DMA reset emptying the tx-free events, as mt76
//!   does, and [`Mt76::reset_tokens`] waits for a pass holding one it read before.
//! * **A WTBL index is reused** only once the removed station's frames have completed
//!   ([`Mt76Error::WcidDraining`]), where mt76 waits for an RCU grace period.
//! * **Power save**: a sleeping station's txq ([`Mt76::sta_ps`]) is skipped before
//!   anything is dequeued, as mt76 skips it. Buffered-frame release
//!   (`mt76_release_buffered_frames`, PS-Poll and U-APSD) is not modelled.
//!
//! ## Concurrency
//! Every entry point takes `&self`: the wake path ([`Mt76::enqueue`],
//! [`Mt76::wake_tx_queue`]) and the tx-free path ([`Mt76::tx_free`], [`Mt76::sta_poll`])
//! run at once on two CPUs. The scheduler and the txq table are lock-free; the locks are
//! where mt76 has them: the token table (`token_lock`), each DMA queue (`q->lock`,
//! inside the HAL), each station's last WTBL reading, and station management
//! (serialised by mac80211's wiphy mutex in the kernel, by an admin lock here). mt76
//! takes its locks with `spin_lock_bh`, and the tx-free path runs in softirq: in the
//! kernel, call the entry points from process context with bottom halves disabled
//! (the crate's locks cannot disable them). An AC's
//! rounds run in one context at a time, as mt76 runs them all from one tx worker: a
//! call that finds another context running them leaves a note for it and returns
//! ([`airtime_sched::RoundGate`]): no request for a round is lost, and one that the
//! running context's [`Config::max_rounds`] leaves over waits, shown by
//! [`Mt76::rounds_waiting`] (and [`TxFreePass::rounds_waiting`]), for the driver to
//! schedule its tx worker again. A reset stops tx first ([`Mt76::stop_tx`]), so no
//! round writes a descriptor between the DMA reset and [`Mt76::reset_tokens`], and the
//! flush waits for a tx-free pass inside [`hal::TxFreeSource::next_tx_free`] or holding
//! an event it read before the DMA reset ([`Mt76Error::TxFreeBusy`]; so `next_tx_free`
//! must never wait on anything held across the flush).
//!
//! ## Time, memory, panics
//! Time is passed in; nothing reads a clock. The tables are allocated in [`Mt76::new`]
//! with `try_reserve`; the data path allocates only the txq table's intake nodes, when a
//! txq has neither its own node free nor an emptied one to reuse. No
//! floating point, no panics on any input.
//!
//! ## Example
//! ```
//! use airtime_mt76::sim_hal::{SimConfig, SimHal};
//! use airtime_mt76::{Config, DriverTxq, Mt76};
//! use airtime_sched::traits::{Enqueue, Frame};
//! use airtime_sched::{Ac, Instant, Tid, Txq, Weight};
//! use std::collections::VecDeque;
//!
//! struct Pkt(u32);
//! impl Frame for Pkt {
//!     fn len_bytes(&self) -> u32 {
//!         self.0
//!     }
//! }
//! #[derive(Default)]
//! struct Fifo(VecDeque<Pkt>);
//! impl Txq for Fifo {
//!     type Frame = Pkt;
//!     type Error = core::convert::Infallible;
//!     fn dequeue(&mut self, _: Instant) -> Result<Option<Pkt>, Self::Error> {
//!         Ok(self.0.pop_front())
//!     }
//!     fn peek_len(&self) -> Option<u32> {
//!         self.0.front().map(|p| p.0)
//!     }
//! }
//! impl Enqueue for Fifo {
//!     fn enqueue(&mut self, frame: Pkt, _: Instant) {
//!         self.0.push_back(frame)
//!     }
//! }
//! impl DriverTxq for Fifo {} // it never drops
//!
//! let radio: Mt76<SimHal<Pkt>, Fifo> = Mt76::new(SimHal::new(SimConfig::default()), Config::default()).unwrap();
//! let sta = radio.add_station(1, Weight::DEFAULT).unwrap(); // WTBL index 1
//! let txq = radio.add_txq(Some(sta), Tid::BE, Fifo::default()).map_err(|e| e.0).unwrap();
//!
//! let mut now = Instant::from_millis(1);
//! for _ in 0..4 {
//!     radio.enqueue(txq, Pkt(1500), now).map_err(|_| "enqueue").unwrap();
//! }
//! let burst = radio.wake_tx_queue(txq, now).unwrap();
//! assert_eq!((burst.frames, burst.bursts), (4, 1)); // one burst, one kick
//! assert_eq!(radio.tokens_in_use(), 4);
//!
//! // The hardware sends them; 1 ms later the tx-free event frees the tokens, the
//! // charges are released, and the WTBL poll registers the airtime they used.
//! radio.hal().advance(now);
//! now = now.add_micros(1000);
//! radio.hal().advance(now);
//! let pass = radio.tx_free(64, now);
//! assert_eq!(pass.completed, 4);
//! assert_eq!(radio.scheduler().total_pending_us(), 0);
//! assert!(radio.scheduler().station_airtime(sta).unwrap().tx_us_per_ac[Ac::Be] > 0);
//! ```

#![cfg_attr(not(test), no_std)]
#![deny(clippy::float_arithmetic)]
// This code runs inside kernel modules and is fuzzed. Outside tests, run-time code may not
// index unchecked (per-AC state is a `PerAc`, indexed by `Ac`), do arithmetic that can
// overflow, unwrap, or call a panicking macro; an exception names why its index is in
// bounds. A kernel build with CONFIG_RUST_OVERFLOW_CHECKS (drivers/ath11k/rfl builds
// this crate so, as a check; no module links it yet) makes an overflow a BUG():
// arithmetic wraps, saturates or is checked, and says why.
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

mod adapter;
pub mod hal;
mod lock;
pub mod sim_hal;
mod station;
mod tokens;

pub use adapter::{AirtimeSource, Config, DriverTxq, Mt76, Mt76Error, Mt76Stats, ScheduleReport, TxFreePass};
pub use airtime_sched::driver_loop::RoundEnd;
pub use hal::Hal;
pub use station::StationRecord;
