//! The adapter: mt76's transmit path over a [`Hal`] and the core's [`TxqTable`].

use crate::hal::{
    DmaError, Hal, LEGACY_AMPDU_BURST, MT_TX_STATUS_SKB_TIMEOUT_US, MT_TXQ_FREE_THR, MT76_TOKEN_FREE_THR,
    MT7915_TOKEN_SIZE, Token, TxDesc, TxFree, TxOutcome, TxReport, WTBL_AIRTIME_CLEAR_BIT,
};
use crate::lock::SpinLock;
use crate::station::{StationRecord, Stations};
use crate::tokens::{Entry, TokenTable};
use airtime_est::Rate;
use airtime_sched::driver_loop::{RoundEnd, StationTable};
use airtime_sched::traits::{Enqueue, Frame, PushError, Ring, RingError, RingErrorKind, Txq};
use airtime_sched::txqs::{EnqueueError, RemovedTxq, TurnBudget, TurnStart};
use airtime_sched::{
    Ac, Charge, ConfigError, DepartingStation, FqCodelTxq, FqFrame, FrameStatus, GateOutcome, Instant, PerAc,
    RoundGate, SchedError, Scheduler, StationId, Tid, TxqId, TxqTable, Weight,
};
use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering, fence};

/// A txq the adapter can serve: the core's [`Txq`] and [`Enqueue`], plus the frames the
/// queue dropped itself (an AQM's drops, its limits), which the adapter hands back to
/// the stack as [`TxOutcome::Dropped`] at the end of each turn and when the txq is
/// removed, so that no frame is lost from the books. A queue that never drops
/// implements it with an empty body.
pub trait DriverTxq: Txq + Enqueue {
    /// Gives each frame dropped since the last call to `each`.
    fn take_dropped(&mut self, each: &mut dyn FnMut(Self::Frame)) {
        let _ = each;
    }

    /// Gives every frame the queue still holds to `each`, whatever would stop a
    /// [`dequeue`](Txq::dequeue) (mac80211's `ieee80211_purge_txq` frees a txq's frames
    /// whatever its stop flags): what the adapter does with a removed txq, handing each
    /// frame back as purged. The default dequeues until the queue is empty or refuses;
    /// a queue whose `dequeue` can refuse while it holds frames
    /// ([`TxqErrorKind::Stopped`](airtime_sched::traits::TxqErrorKind::Stopped), a
    /// BlockAck session being set up) must override it. Frames a removed txq's queue
    /// still holds after this call go down with it, counted in
    /// [`Mt76Stats::unpurged_txqs`].
    fn purge(&mut self, now: Instant, each: &mut dyn FnMut(Self::Frame)) {
        while let Ok(Some(frame)) = self.dequeue(now) {
            each(frame);
        }
    }
}

impl<F: FqFrame> DriverTxq for FqCodelTxq<F> {
    fn take_dropped(&mut self, each: &mut dyn FnMut(F)) {
        for dropped in self.drain_drops() {
            each(dropped.frame);
        }
    }
}

/// Where a station's airtime (its DRR deficit) comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AirtimeSource {
    /// The WTBL's per-station counters, read by [`Mt76::sta_poll`] (mt7915, mt7615,
    /// mt7921, mt7996: `mt7915_mac_sta_poll` → `ieee80211_sta_register_airtime`); a
    /// tx-free releases the frame's charge and registers nothing.
    WtblPoll,
    /// Each frame's tx status: its rate and tries priced by the core
    /// ([`Scheduler::complete_frame`]), as mt76x02's `mt76x02_send_tx_status` does with
    /// `ieee80211_calc_tx_airtime`.
    TxStatus,
}

/// The adapter's configuration.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// The core scheduler's configuration (stations, txqs, AQL limits).
    pub sched: airtime_sched::Config,
    /// How much one txq may send per turn. mt76 has bounded bursts only by AQL and the
    /// DMA queue's free threshold since commit e861cb05 ("rely on AQL for burst size
    /// limits on tx queueing"): [`TurnBudget::UNLIMITED`], the default. The earlier
    /// bound is [`Config::legacy_burst`].
    pub burst: TurnBudget,
    /// Tokens (`token_size`; [`MT7915_TOKEN_SIZE`]).
    pub token_size: u32,
    /// Tx is blocked while `token_size - token_free_thr` tokens are in use
    /// ([`MT76_TOKEN_FREE_THR`]).
    pub token_free_thr: u32,
    /// A DMA queue is stopped while `queued + txq_free_thr >= ndesc` ([`MT_TXQ_FREE_THR`]).
    pub txq_free_thr: u32,
    /// Where airtime comes from.
    pub airtime: AirtimeSource,
    /// A token with no tx-free after this long counts as overdue
    /// ([`Mt76::tokens_overdue`]: the hang a driver answers with a reset;
    /// [`MT_TX_STATUS_SKB_TIMEOUT_US`]). Not zero.
    pub tx_status_timeout_us: u64,
    /// The rate multicast frames are priced at for the core's multicast AQL budget
    /// (6 Mbit/s OFDM, the usual lowest basic rate); `None` sends them uncharged.
    pub multicast_rate: Option<Rate>,
    /// The most rounds one [`Mt76::schedule`] runs, those run for other contexts'
    /// requests included (mt76's `mt76_txq_schedule` repeats while a round sent
    /// anything; this bounds it when other contexts keep enqueueing). Not zero.
    pub max_rounds: u32,
}

impl Config {
    /// The burst bound mt76 used before e861cb05: 16 frames per turn
    /// ([`LEGACY_AMPDU_BURST`], the A-MPDU case of `limit = ampdu ? 16 : 3`).
    pub const fn legacy_burst() -> TurnBudget {
        TurnBudget::frames(LEGACY_AMPDU_BURST)
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            sched: airtime_sched::Config::default(),
            burst: TurnBudget::UNLIMITED,
            token_size: MT7915_TOKEN_SIZE,
            token_free_thr: MT76_TOKEN_FREE_THR,
            txq_free_thr: MT_TXQ_FREE_THR,
            airtime: AirtimeSource::WtblPoll,
            tx_status_timeout_us: MT_TX_STATUS_SKB_TIMEOUT_US,
            multicast_rate: Rate::legacy_ofdm(60).ok(),
            max_rounds: 64,
        }
    }
}

/// Why an adapter operation was refused. Nothing changed when it is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mt76Error {
    /// The core scheduler refused (unknown handle, capacity, configuration).
    Sched(SchedError),
    /// A station with this WTBL index exists already.
    WcidInUse(u16),
    /// The txq handle is unknown.
    UnknownTxq,
    /// Memory for the tables could not be reserved at creation.
    OutOfMemory,
    /// The token table's size or threshold cannot work (zero tokens, or a threshold
    /// that blocks at once).
    BadTokenConfig,
    /// [`Config::max_rounds`] is 0: no round would ever run.
    NoRounds,
    /// [`Config::tx_status_timeout_us`] is 0: every token would be overdue at once.
    NoStatusTimeout,
    /// The DMA queue of this AC has no more descriptors than [`Config::txq_free_thr`]:
    /// it would read stopped while empty (`queued + txq_free_thr >= ndesc`), and no
    /// frame would ever be written to it.
    DmaQueueTooSmall(Ac),
    /// A removed station on this WTBL index still has frames in flight (or a turn
    /// writing one): the index is free once they complete (mt76 frees a wcid only
    /// after its RCU grace period).
    WcidDraining(u16),
    /// [`Mt76::reset_tokens`] before [`Mt76::stop_tx`] has returned (or after
    /// [`Mt76::start_tx`]): a round could be writing a descriptor for a token the flush
    /// completes. `stop_tx` running on another context, still waiting for a round,
    /// counts as not stopped.
    TxNotStopped,
    /// [`Mt76::reset_tokens`] while a tx-free pass is inside
    /// [`TxFreeSource::next_tx_free`](crate::hal::TxFreeSource::next_tx_free) or holds
    /// an event it read and has not yet freed its token: read before the DMA reset,
    /// that event is for a token the flush would complete, and the pass would then free
    /// whatever frame takes the id after the reset. Retry once the pass moves on: it
    /// is counted for the whole `next_tx_free` call and one token release, no callback,
    /// so it moves on as long as the HAL keeps `next_tx_free`'s contract (it never
    /// waits there on anything held across `reset_tokens`).
    TxFreeBusy,
    /// [`Mt76::start_tx`] or a second [`Mt76::reset_tokens`] while a `reset_tokens`
    /// flushes the tokens: new frames could be written, or a frame flushed, while the
    /// flush runs. Retry once it returns.
    TxFlushing,
    /// [`Mt76::start_tx`] while [`Mt76::stop_tx`] still waits for running rounds: the
    /// stop would return with tx running. Retry once it returns.
    TxStopping,
}

impl fmt::Display for Mt76Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mt76Error::Sched(e) => write!(f, "scheduler: {e}"),
            Mt76Error::WcidInUse(w) => write!(f, "wcid {w} is in use"),
            Mt76Error::UnknownTxq => f.write_str("unknown txq"),
            Mt76Error::OutOfMemory => f.write_str("out of memory"),
            Mt76Error::BadTokenConfig => f.write_str("token_size must exceed token_free_thr"),
            Mt76Error::NoRounds => f.write_str("max_rounds must not be 0"),
            Mt76Error::NoStatusTimeout => f.write_str("tx_status_timeout_us must not be 0"),
            Mt76Error::DmaQueueTooSmall(ac) => {
                write!(f, "the {ac:?} DMA queue has no more descriptors than txq_free_thr: it would never take a frame")
            }
            Mt76Error::WcidDraining(w) => write!(f, "wcid {w} still has a removed station's frames in flight"),
            Mt76Error::TxNotStopped => f.write_str("tx is not stopped: call stop_tx before reset_tokens"),
            Mt76Error::TxFreeBusy => {
                f.write_str("a tx-free pass is reading or holds an event it read: retry reset_tokens")
            }
            Mt76Error::TxFlushing => f.write_str("reset_tokens is flushing the tokens: retry once it returns"),
            Mt76Error::TxStopping => f.write_str("stop_tx is waiting for running rounds: retry once it returns"),
        }
    }
}

impl core::error::Error for Mt76Error {}

impl From<SchedError> for Mt76Error {
    fn from(e: SchedError) -> Mt76Error {
        Mt76Error::Sched(e)
    }
}

impl From<ConfigError> for Mt76Error {
    fn from(e: ConfigError) -> Mt76Error {
        match e {
            // The scheduler's tables, as the adapter's own.
            ConfigError::OutOfMemory => Mt76Error::OutOfMemory,
            e => Mt76Error::Sched(SchedError::Config(e)),
        }
    }
}

/// Counters of the frames' fates and the data path's events (monotonic).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mt76Stats {
    /// Frames accepted by [`Mt76::enqueue`].
    pub enqueued: u64,
    /// Frames completed by a tx-free event (acked or failed).
    pub completed: u64,
    /// Frames completed as failed because a reset flushed their tokens
    /// ([`Mt76::reset_tokens`]).
    pub flushed: u64,
    /// Frames handed back unsent: their txq or station was removed.
    pub purged: u64,
    /// Frames dropped, handed back: by their txq (its AQM or limits), or because their
    /// DMA mapping failed.
    pub dropped: u64,
    /// Frames written to a DMA queue.
    pub queued_to_dma: u64,
    /// Bursts: turns that ended with a kick.
    pub bursts: u64,
    /// Descriptors a DMA queue refused: full (the frame waits in its txq's retry slot)
    /// or the mapping failed (the frame is dropped, as mt76 frees it).
    pub dma_refused: u64,
    /// Tx-free entries for tokens that held nothing (a duplicate, or after a reset).
    pub stale_tx_free: u64,
    /// WTBL polls that cleared a station's counters (`BIT(30)` reached).
    pub wtbl_clears: u64,
    /// Removed txqs whose queue still held frames after [`DriverTxq::purge`]: a queue
    /// whose `dequeue` refused and that does not override `purge`. Their frames went
    /// down with the queue, in no other count; 0 in a correct driver.
    pub unpurged_txqs: u64,
}

#[derive(Default)]
struct Counters {
    enqueued: AtomicU64,
    completed: AtomicU64,
    flushed: AtomicU64,
    purged: AtomicU64,
    dropped: AtomicU64,
    queued_to_dma: AtomicU64,
    bursts: AtomicU64,
    dma_refused: AtomicU64,
    stale_tx_free: AtomicU64,
    wtbl_clears: AtomicU64,
    unpurged_txqs: AtomicU64,
}

fn bump(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

/// What one [`Mt76::schedule`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScheduleReport {
    /// Rounds run.
    pub rounds: u32,
    /// Frames written to the DMA queues (a frame dropped at its write, unmapped, is
    /// not counted).
    pub frames: u32,
    /// Turns (bursts) served.
    pub bursts: u32,
    /// Why the last round ended, as the core reports it (`None` if no round ran). A
    /// burst that ended at a frame that could not be mapped ends its txq's turn only
    /// (the txq keeps its frames, listed), and the round goes on with the next txq: such
    /// a round usually reads [`RoundEnd::Exhausted`], not a refusal. The drop shows in
    /// [`Mt76Stats::dropped`] and in `frames`, which counts only frames written.
    pub end: Option<RoundEnd>,
    /// Another context was running rounds on the AC when this call asked for one (its
    /// first, or one more after a round that wrote frames): that context runs one more
    /// round for it (mt76's tx worker, scheduled while it runs, runs again).
    pub handed_off: bool,
    /// Rounds wait with no context running them: the rounds reached
    /// [`Config::max_rounds`] while other contexts still asked for more, or a rerun bit
    /// is left set (a write refused, its token given back unwritten, with no written
    /// token outstanding). A rerun bit is set only when no written token is
    /// outstanding, so no interrupt will bring a tx-free pass to run it: the driver must
    /// call [`Mt76::schedule`] again or poll [`Mt76::rounds_waiting`] (from its MAC work,
    /// as mt76 drivers run periodic work) and schedule the tx worker when it is true.
    /// [`Mt76::schedule_all`] (used by [`Mt76::start_tx`], [`Mt76::sta_ps`] and the
    /// tx-free pass) discards this flag: `rounds_waiting` is how it shows there. A bit
    /// may be set spuriously (one empty round follows). A written token that never gets
    /// its tx-free (a hang) keeps such rounds from being run by a tx-free until the
    /// reset path ([`Mt76::tokens_overdue`], [`Mt76::stop_tx`], the DMA reset,
    /// [`Mt76::reset_tokens`], [`Mt76::start_tx`]), as in mt76.
    pub deferred: bool,
}

/// What one [`Mt76::tx_free`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxFreePass {
    /// Tx-free entries handled.
    pub entries: u32,
    /// Frames completed.
    pub completed: u32,
    /// Entries for tokens that held nothing.
    pub stale: u32,
    /// Whether the pass unblocked tx (the token table fell below its threshold).
    pub unblocked: bool,
    /// Frames the rounds run after it wrote to the DMA queues.
    pub frames_sent: u32,
    /// Requests for rounds wait with no context running them ([`Mt76::rounds_waiting`]
    /// after the pass): the driver schedules its tx worker again.
    pub rounds_waiting: bool,
}

/// The mt76 adapter for one radio: mt76's transmit path (`mt76_txq_schedule`,
/// `mt76_txq_send_burst`, the token table, the tx-free event and the WTBL poll) over a
/// HAL `H` and txqs `Q` (any [`DriverTxq`] whose frames are `Q::Frame`).
///
/// Every entry point takes `&self`: the wake path and the tx-free path run at once on
/// two CPUs. The only locks are the token table's (`token_lock`), each DMA queue's
/// (inside the HAL, `q->lock`), each station's WTBL snapshot, and one admin lock that
/// serialises station and txq management (mac80211 already does, under the wiphy
/// mutex). An AC's rounds run in one context at a time, as mt76 runs them all from its
/// one tx worker, through a [`RoundGate`] that no context waits on. The README lists
/// each entry point's context.
pub struct Mt76<H, Q: Txq> {
    hal: H,
    txqs: TxqTable<Q>,
    stations: Stations,
    tokens: TokenTable<Q::Frame>,
    config: Config,
    gate: RoundGate,
    /// `MT76_RESET`, in the states of a reset: [`TX_RUNNING`], [`TX_STOPPING`] (set by
    /// [`Mt76::stop_tx`] before it waits for running rounds), [`TX_STOPPED`] (published
    /// after the wait), [`TX_FLUSHING`] ([`Mt76::reset_tokens`]), in the low bits
    /// ([`TX_MASK`]); above them, the epoch, which [`Mt76::start_tx`] advances, so that a
    /// `stop_tx` that waited in one stop does not publish `TX_STOPPED` over the
    /// `TX_STOPPING` of a later one (whose rounds it did not wait for). Rounds write
    /// nothing unless the state is `TX_RUNNING`.
    tx_state: AtomicU32,
    /// Tx-free passes between reading an event ([`TxFreeSource::next_tx_free`]) and
    /// freeing its token: [`Mt76::reset_tokens`] refuses to flush while one is
    /// (`napi_disable` of the tx-free NAPI, in mt76's reset work).
    ///
    /// [`TxFreeSource::next_tx_free`]: crate::hal::TxFreeSource::next_tx_free
    events_held: AtomicU32,
    /// ACs on which a round must follow with no context running it and no tx-free to
    /// come: set only when no written token is outstanding, after a round gave a token
    /// back unwritten (a refused write): on that round's AC if its call's rounds reached
    /// [`Config::max_rounds`], and on every other AC (whose rounds may have met the
    /// table blocked by that token), which the same call then runs. It may be set when
    /// no round is owed (one empty round follows). Shown by [`Mt76::rounds_waiting`];
    /// cleared by the next [`Mt76::schedule`] on the AC.
    rerun: AcBits,
    admin: SpinLock<Admin>,
    counters: Counters,
}

/// Tx runs: rounds write descriptors.
const TX_RUNNING: u32 = 0;
/// [`Mt76::stop_tx`] is waiting for the rounds that may be writing: rounds that start
/// write nothing, but one already running may still write.
const TX_STOPPING: u32 = 1;
/// No round writes a descriptor until [`Mt76::start_tx`]: the tokens may be flushed.
const TX_STOPPED: u32 = 2;
/// [`Mt76::reset_tokens`] is flushing the tokens: as stopped, and neither
/// [`Mt76::start_tx`] nor another flush may start.
const TX_FLUSHING: u32 = 3;
/// The state's bits in [`Mt76::tx_state`]; the epoch is above them.
const TX_MASK: u32 = 3;

/// The tx state of `word`, epoch left out.
const fn tx_state(word: u32) -> u32 {
    word & TX_MASK
}

/// `word` with its state replaced by `state`, its epoch kept.
const fn with_tx_state(word: u32, state: u32) -> u32 {
    (word & !TX_MASK) | state
}

/// Puts the tx state back to `.1` ([`TX_STOPPED`], the flush's epoch) when a flush
/// ends, however it ends (a status callback that unwinds in a std build included).
/// Nothing else changes the word while it is [`TX_FLUSHING`].
struct EndFlush<'a>(&'a AtomicU32, u32);

impl Drop for EndFlush<'_> {
    fn drop(&mut self) {
        // Release: a `start_tx` that acquires it sees the tokens flushed.
        self.0.store(self.1, Ordering::Release);
    }
}

/// A set of ACs in one atomic byte, set and cleared by any context.
#[derive(Debug, Default)]
struct AcBits(AtomicU8);

impl AcBits {
    fn bit(ac: Ac) -> u8 {
        1 << ac.index()
    }

    /// AcqRel: the context that takes the bit (and runs the round) sees what the one
    /// that set it did before.
    fn insert(&self, ac: Ac) {
        self.0.fetch_or(Self::bit(ac), Ordering::AcqRel);
    }

    fn take(&self, ac: Ac) {
        // A load first: most calls find it clear and need no write to the shared line.
        if self.contains(ac) {
            self.0.fetch_and(!Self::bit(ac), Ordering::AcqRel);
        }
    }

    fn contains(&self, ac: Ac) -> bool {
        self.0.load(Ordering::Acquire) & Self::bit(ac) != 0
    }

    fn any(&self) -> bool {
        self.0.load(Ordering::Acquire) != 0
    }
}

/// What [`Mt76::one_round`] asks of the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// Nothing: the round wrote nothing, or tx is stopped.
    Done,
    /// The round wrote frames: run the next round (`mt76_txq_schedule`'s loop). Should
    /// the budget end first, the written frames' tx-free runs the tx worker.
    More,
    /// The round only dropped frames it could not map, and no written token is
    /// outstanding: no tx-free will run the tx worker, so a round must follow, here or
    /// (budget spent) by a later call ([`Mt76::rounds_waiting`]).
    Rerun,
}

/// What the admin lock guards: the removed stations whose WTBL index may still carry
/// frames, with room for every station slot reserved at creation.
struct Admin {
    departing: Vec<(u16, DepartingStation)>,
}

impl<H, Q: Txq> fmt::Debug for Mt76<H, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mt76").field("config", &self.config).finish_non_exhaustive()
    }
}

/// Why a round's [`DmaRing`] refused a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    /// The DMA queue (or the token table) had no room.
    Dma(DmaError),
    /// An earlier frame of the turn could not be mapped and was dropped: as
    /// `mt76_txq_send_burst` ends its loop at a failed `__mt76_tx_queue_skb`, the turn
    /// ends here. Of the txq alone ([`RingErrorKind::TxqFull`]): the frame goes to the
    /// txq's retry slot, its charge given back, the txq stays listed (at the tail) and
    /// the round goes on with the next txq.
    BurstEnded,
}

impl RingError for Refusal {
    fn kind(&self) -> RingErrorKind {
        match self {
            Refusal::Dma(e) => e.kind(),
            Refusal::BurstEnded => RingErrorKind::TxqFull,
        }
    }
}

/// One round's view of the hardware: the DMA queue of `ac` and the token table, as the
/// core's [`Ring`].
struct DmaRing<'a, H, F> {
    hal: &'a H,
    tokens: &'a TokenTable<F>,
    stations: &'a Stations,
    counters: &'a Counters,
    sched: &'a Scheduler,
    /// `MT76_RESET`: the tx state ([`Mt76::stop_tx`]).
    tx_state: &'a AtomicU32,
    ac: Ac,
    free_thr: u32,
    now: Instant,
    bursts: u32,
    /// Whether the current turn wrote a descriptor.
    wrote: bool,
    /// Frames of this round dropped at their DMA write (the core counts them sent).
    unmapped: u32,
    /// A write of this round failed (`Full` or `MapFailed`) and its token was given back
    /// unwritten: no tx-free will come for it (see `one_round`).
    released_unwritten: bool,
    /// A frame of the current turn could not be mapped: the burst is over, and the
    /// turn's next frame is refused ([`Refusal::BurstEnded`]).
    burst_ended: bool,
    /// The current turn's station (`None` for a station-less txq) and its WTBL index,
    /// looked up once per turn, as `mt76_txq_schedule_list` does before each burst.
    turn_station: Option<StationId>,
    turn_wcid: Option<u16>,
}

impl<H: Hal<F>, F: Frame> DmaRing<'_, H, F> {
    /// `!mt76_txq_stopped(q)`, with the token table's block (`q->blocked`).
    fn open(&self, ac: Ac) -> bool {
        !self.tokens.blocked() && self.hal.queued(ac).saturating_add(self.free_thr) < self.hal.ndesc(ac)
    }
}

impl<H: Hal<F>, F: Frame> Ring for DmaRing<'_, H, F> {
    type Frame = F;
    type Error = Refusal;

    /// `mt76_txq_stopped`, and `MT76_RESET`, which `mt76_txq_schedule_list` checks
    /// before each txq and `mt76_txq_send_burst` before each frame: a stop ends the
    /// running burst and round at the next frame (it reads as a full ring), the txqs
    /// keeping their frames for [`Mt76::start_tx`] rather than writing them for the
    /// reset to flush. Relaxed: an early exit only; the guarantee is `one_round`'s
    /// check and [`Mt76::stop_tx`]'s wait.
    fn has_room(&self, ac: Ac) -> bool {
        tx_state(self.tx_state.load(Ordering::Relaxed)) == TX_RUNNING && self.open(ac)
    }

    /// `mt76_txq_schedule_list`'s look-up of the txq's wcid, before its burst: of the
    /// station the turn holds (a look-up by txq would fail once the txq is removed,
    /// while its turn may still send).
    fn start_turn(&mut self, _txq: TxqId, station: Option<StationId>, _ac: Ac) {
        self.burst_ended = false;
        self.turn_station = station;
        self.turn_wcid = station.and_then(|s| self.stations.station(s)).and_then(StationRecord::wcid);
    }

    /// `__mt76_tx_queue_skb`: a token for the frame and its charge, then the descriptor.
    fn push(&mut self, frame: F, charge: Option<Charge>) -> Result<(), PushError<F, Refusal>> {
        if self.burst_ended {
            return Err(PushError { frame, charge, error: Refusal::BurstEnded });
        }
        let (station, wcid) = (self.turn_station, self.turn_wcid);
        debug_assert!(charge.as_ref().and_then(Charge::station).is_none_or(|s| Some(s) == station));
        let len_bytes = frame.len_bytes();
        let entry = Entry {
            frame,
            charge,
            station,
            wcid,
            ac: self.ac,
            len_bytes,
            consumed_at: self.now,
            written: false,
            generation: 0,
        };
        let (token, generation) = match self.tokens.consume(entry) {
            Ok(taken) => taken,
            Err(e) => return Err(PushError { frame: e.frame, charge: e.charge, error: Refusal::Dma(DmaError::Full) }),
        };
        let error = match self.hal.queue_desc(TxDesc { token, wcid, len_bytes, ac: self.ac }) {
            Ok(()) => {
                // Counted only now: a token taken for a frame whose write then fails
                // is released with no tx-free to come (see `one_round`).
                self.tokens.mark_written(token, generation);
                bump(&self.counters.queued_to_dma, 1);
                self.wrote = true;
                return Ok(());
            }
            Err(error) => error,
        };
        bump(&self.counters.dma_refused, 1);
        // Unreachable `None`: only a tx-free for a token never written frees it.
        let Some(e) = self.tokens.release(token) else { return Ok(()) };
        // No tx-free will come for this token: `one_round` reads the written tokens
        // after the round and, with none, has the rounds run again (its own AC's, and
        // every other AC's, whose rounds may have met the table blocked by this token).
        self.released_unwritten = true;
        match error {
            // The queue filled since `has_room` (a HAL with other writers): the frame
            // waits in its txq's retry slot. If a written token is outstanding its
            // tx-free runs the tx worker; if none is, `one_round` answers `Rerun` (the
            // queue is full of descriptors that are not this adapter's, and nothing
            // here would run the round again).
            DmaError::Full => Err(PushError { frame: e.frame, charge: e.charge, error: Refusal::Dma(error) }),
            // `mt76_dma_tx_queue_skb` frees a frame it cannot map, with its status:
            // kept instead, it could wait for good on a radio with nothing in flight.
            // `mt76_txq_send_burst` then ends the burst: the turn's next frame, if it
            // gets one, is held back.
            DmaError::MapFailed => {
                self.burst_ended = true;
                let charged_us = e.charge.as_ref().map_or(0, Charge::airtime_us);
                if let Some(charge) = e.charge {
                    let _ = self.sched.give_back(charge);
                }
                bump(&self.counters.dropped, 1);
                self.unmapped = self.unmapped.saturating_add(1);
                let report = TxReport { outcome: TxOutcome::Dropped, tries: 0, rate: None, charged_us, airtime_us: 0 };
                self.hal.tx_status(e.frame, report);
                Ok(())
            }
        }
    }

    /// The end of `mt76_txq_send_burst`: the doorbell, if the burst wrote anything
    /// (mt76 returns before the kick when its first dequeue finds nothing, or its
    /// first frame fails).
    fn end_turn(&mut self, _txq: TxqId, ac: Ac) {
        self.burst_ended = false;
        if core::mem::take(&mut self.wrote) {
            self.hal.kick(ac);
            self.bursts = self.bursts.saturating_add(1);
            bump(&self.counters.bursts, 1);
        }
    }
}

impl<H, Q> Mt76<H, Q>
where
    H: Hal<Q::Frame>,
    Q: DriverTxq,
{
    /// A radio over `hal`. Every table is allocated here.
    pub fn new(hal: H, config: Config) -> Result<Mt76<H, Q>, Mt76Error> {
        // Tx blocks at `token_size - token_free_thr` tokens in use: at least one.
        let block_at = match config.token_size.checked_sub(config.token_free_thr) {
            Some(n) if n > 0 => n,
            _ => return Err(Mt76Error::BadTokenConfig),
        };
        if config.max_rounds == 0 {
            return Err(Mt76Error::NoRounds);
        }
        if config.tx_status_timeout_us == 0 {
            return Err(Mt76Error::NoStatusTimeout);
        }
        // A queue is stopped while `queued + txq_free_thr >= ndesc`: with no more
        // descriptors than the threshold it is stopped while empty, and every round
        // would end at once with nothing sent.
        if let Some(ac) = Ac::ALL.into_iter().find(|&ac| hal.ndesc(ac) <= config.txq_free_thr) {
            return Err(Mt76Error::DmaQueueTooSmall(ac));
        }
        let sched = Scheduler::new(config.sched)?;
        let max_stations = usize::from(config.sched.max_stations);
        let stations = Stations::new(max_stations, config.multicast_rate).ok_or(Mt76Error::OutOfMemory)?;
        let tokens = TokenTable::new(config.token_size, block_at).ok_or(Mt76Error::OutOfMemory)?;
        let mut departing = Vec::new();
        departing.try_reserve_exact(max_stations).map_err(|_| Mt76Error::OutOfMemory)?;
        let txqs = TxqTable::try_new(sched).map_err(|_| Mt76Error::OutOfMemory)?;
        Ok(Mt76 {
            hal,
            txqs,
            stations,
            tokens,
            config,
            gate: RoundGate::new(),
            tx_state: AtomicU32::new(TX_RUNNING),
            events_held: AtomicU32::new(0),
            rerun: AcBits::default(),
            admin: SpinLock::new(Admin { departing }),
            counters: Counters::default(),
        })
    }

    /// The HAL.
    pub fn hal(&self) -> &H {
        &self.hal
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The core scheduler (pending airtime, deficits, limits).
    pub fn scheduler(&self) -> &Scheduler {
        self.txqs.scheduler()
    }

    /// The station record of `id`, if live.
    pub fn station(&self, id: StationId) -> Option<&StationRecord> {
        self.stations.station(id)
    }

    /// Tokens in use: frames between their DMA write and their tx-free.
    pub fn tokens_in_use(&self) -> u32 {
        self.tokens.count()
    }

    /// The token table's size.
    pub fn token_size(&self) -> u32 {
        self.tokens.size()
    }

    /// Whether tx is blocked by the token table (`__mt76_set_tx_blocked`).
    pub fn tx_blocked(&self) -> bool {
        self.tokens.blocked()
    }

    /// The counters.
    pub fn stats(&self) -> Mt76Stats {
        let c = &self.counters;
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Mt76Stats {
            enqueued: l(&c.enqueued),
            completed: l(&c.completed),
            flushed: l(&c.flushed),
            purged: l(&c.purged),
            dropped: l(&c.dropped),
            queued_to_dma: l(&c.queued_to_dma),
            bursts: l(&c.bursts),
            dma_refused: l(&c.dma_refused),
            stale_tx_free: l(&c.stale_tx_free),
            wtbl_clears: l(&c.wtbl_clears),
            unpurged_txqs: l(&c.unpurged_txqs),
        }
    }

    // ---- station and txq management (mac80211's sta_state / sta_add; admin context) ----

    /// Adds a station at WTBL index `wcid` with `weight` (`mt76_sta_add`): its WTBL
    /// airtime words are cleared and its rate read from the WTBL. Refused while a live
    /// station has the index ([`Mt76Error::WcidInUse`]), or a removed one still has
    /// frames in flight on it ([`Mt76Error::WcidDraining`]: they would meet the new
    /// station's WTBL entry, its keys and rate).
    pub fn add_station(&self, wcid: u16, weight: Weight) -> Result<StationId, Mt76Error> {
        let mut admin = self.admin.lock();
        if self.stations.by_wcid(wcid).is_some() {
            return Err(Mt76Error::WcidInUse(wcid));
        }
        let sched = self.scheduler();
        admin.departing.retain(|(_, d)| !d.is_drained(sched));
        if admin.departing.iter().any(|&(w, _)| w == wcid) {
            return Err(Mt76Error::WcidDraining(wcid));
        }
        let id = self.scheduler().add_station(weight)?;
        self.hal.clear_airtime(wcid);
        self.stations.install(id, wcid, self.hal.tx_rate(wcid));
        Ok(id)
    }

    /// Adds a txq for `station` (or a station-less one) on `tid` with its `queue`; the
    /// queue comes back on error.
    pub fn add_txq(&self, station: Option<StationId>, tid: Tid, queue: Q) -> Result<TxqId, (Mt76Error, Option<Q>)> {
        let _admin = self.admin.lock();
        self.txqs.add_txq(station, tid, queue).map_err(|e| (Mt76Error::Sched(e.error), e.queue))
    }

    /// Removes a station while its frames may still be in the token table
    /// (`mt76_sta_pre_rcu_remove`, then `mt76_wcid_cleanup`): its txqs leave the
    /// scheduler, their frames are handed back to the stack as
    /// [`TxOutcome::Purged`], and its tokens stay: each completes at its tx-free and
    /// releases its charge (the core keeps the station's slot until then). Its WTBL
    /// index takes a new station once they have ([`wcid_draining`](Self::wcid_draining)).
    pub fn remove_station(&self, station: StationId, now: Instant) -> Result<(), Mt76Error> {
        {
            let mut admin = self.admin.lock();
            let wcid = self.stations.station(station).and_then(StationRecord::wcid);
            let departing = self.txqs.remove_station(station)?;
            self.stations.clear(station);
            if let Some(wcid) = wcid {
                let sched = self.scheduler();
                admin.departing.retain(|(_, d)| !d.is_drained(sched));
                // Within the capacity reserved at creation: a departing station keeps
                // its scheduler slot until drained, so live and departing stations
                // together never outnumber the slots.
                if admin.departing.len() < admin.departing.capacity() {
                    admin.departing.push((wcid, departing));
                }
            }
        }
        self.reap(now);
        Ok(())
    }

    /// Whether a removed station still has frames in flight on WTBL index `wcid` (or a
    /// turn that may write one): [`add_station`](Self::add_station) refuses the index
    /// until they complete, so a driver picking a free index skips it.
    pub fn wcid_draining(&self, wcid: u16) -> bool {
        let admin = self.admin.lock();
        let sched = self.scheduler();
        admin.departing.iter().any(|&(w, d)| w == wcid && !d.is_drained(sched))
    }

    /// Removes one txq; its frames are handed back as for a station's removal.
    pub fn remove_txq(&self, txq: TxqId, now: Instant) -> Result<(), Mt76Error> {
        {
            let _admin = self.admin.lock();
            self.txqs.remove_txq(txq)?;
        }
        self.reap(now);
        Ok(())
    }

    /// Changes a station's airtime weight at run time (`sta->airtime_weight`, set by
    /// hostapd through `NL80211_ATTR_AIRTIME_WEIGHT`). Takes effect at its next top-up.
    pub fn set_weight(&self, station: StationId, weight: Weight) -> Result<(), Mt76Error> {
        Ok(self.scheduler().set_weight(station, weight)?)
    }

    /// A station's power-save transition (`mt76_sta_ps_transition`, from the PM bit of
    /// its frames): while asleep its txqs are skipped — a turn ends before anything is
    /// charged or written, and the txq stays listed — and when it wakes the tx worker
    /// runs ([`schedule_all`](Self::schedule_all)): a round that starts after the wake
    /// serves its txqs, here or in the context running the AC's rounds (one that is
    /// skipping the station's txq as it wakes runs one more), or, if that context's
    /// rounds reach [`Config::max_rounds`] first, the next call's
    /// ([`rounds_waiting`](Self::rounds_waiting) then says so). Frames already written
    /// stay in the DMA queue (the hardware's own power-save handling). Returns the
    /// frames the wake sent here; rounds it left owed show only in
    /// [`rounds_waiting`](Self::rounds_waiting). Refused
    /// ([`SchedError::UnknownStation`]) for a station no longer in its slot, checked as
    /// the flag is set, so a station removed and its slot reused meanwhile does not
    /// pass its flag to the newcomer.
    pub fn sta_ps(&self, station: StationId, asleep: bool, now: Instant) -> Result<u32, Mt76Error> {
        let record = self.stations.station(station).ok_or(Mt76Error::Sched(SchedError::UnknownStation))?;
        // Checked again as the flag is set: the station may have been removed and its
        // slot reused since the look-up.
        if !record.set_asleep(station, asleep) {
            return Err(Mt76Error::Sched(SchedError::UnknownStation));
        }
        Ok(if asleep { 0 } else { self.schedule_all(now) })
    }

    /// Hands back the frames of txqs removed and no longer held by any context. A txq
    /// served at its removal comes back at the end of the round that served it (the
    /// rounds reap), one whose queue an enqueue held at the end of that enqueue
    /// (whatever it returned). So [`remove_station`](Self::remove_station) may return
    /// before every frame of its txqs is handed back, on another CPU.
    pub fn reap(&self, now: Instant) -> u32 {
        let mut n = 0u32;
        while let Some(removed) = self.txqs.take_removed() {
            n = n.saturating_add(self.purge(removed, now));
        }
        n
    }

    fn purge(&self, removed: RemovedTxq<Q>, now: Instant) -> u32 {
        let RemovedTxq { mut queue, retry, intake, .. } = removed;
        let mut n = 0u32;
        if let Some(retry) = retry {
            let charged_us = retry.charge.as_ref().map_or(0, Charge::airtime_us);
            if let Some(charge) = retry.charge {
                let _ = self.scheduler().give_back(charge);
            }
            self.hand_back(retry.frame, charged_us);
            n = n.saturating_add(1);
        }
        queue.purge(now, &mut |frame| {
            self.hand_back(frame, 0);
            n = n.saturating_add(1);
        });
        queue.take_dropped(&mut |frame| {
            self.drop_frame(frame);
            n = n.saturating_add(1);
        });
        if !queue.is_empty() {
            bump(&self.counters.unpurged_txqs, 1);
        }
        for frame in intake {
            self.hand_back(frame, 0);
            n = n.saturating_add(1);
        }
        n
    }

    fn drop_frame(&self, frame: Q::Frame) {
        bump(&self.counters.dropped, 1);
        let report = TxReport { outcome: TxOutcome::Dropped, tries: 0, rate: None, charged_us: 0, airtime_us: 0 };
        self.hal.tx_status(frame, report);
    }

    fn hand_back(&self, frame: Q::Frame, charged_us: u32) {
        bump(&self.counters.purged, 1);
        let report = TxReport { outcome: TxOutcome::Purged, tries: 0, rate: None, charged_us, airtime_us: 0 };
        self.hal.tx_status(frame, report);
    }

    // ---- the transmit path ----

    /// Queues `frame` on `txq` from any context, without a lock (mac80211's
    /// `ieee80211_queue_skb` into the txq). `Err` hands the frame back if the txq is
    /// unknown, its intake full or out of memory; a frame whose txq is removed meanwhile is
    /// accepted and handed back to the stack as purged (here, if the removal came while
    /// this enqueue was writing the txq's queue: the removal could not take it then).
    pub fn enqueue(&self, txq: TxqId, frame: Q::Frame, now: Instant) -> Result<(), Q::Frame> {
        let result = match self.txqs.enqueue(txq, frame, now) {
            Ok(()) => {
                bump(&self.counters.enqueued, 1);
                Ok(())
            }
            Err(
                EnqueueError::UnknownTxq(f) | EnqueueError::NoMemory(f) | EnqueueError::Busy(f) | EnqueueError::Full(f),
            ) => Err(f),
            Err(EnqueueError::Removed(back)) => {
                bump(&self.counters.enqueued, 1);
                // The frames not yet in the queue; those written into it come back with
                // the queue, below.
                for frame in back {
                    self.hand_back(frame, 0);
                }
                Ok(())
            }
        };
        // On every path, a refused frame's too: a removal that found this enqueue
        // holding the txq's queue (writing it, or finding it full or the txq gone) left
        // the txq to it, which put it back for a later hand-back as it unlocked, and no
        // later call is sure to come on a quiet radio. One load when none waits.
        if self.txqs.has_removed() {
            self.reap(now);
        }
        result
    }

    /// mac80211's `wake_tx_queue` (`mt76_wake_tx_queue`, which schedules the tx worker):
    /// runs [`schedule`](Self::schedule) on the txq's AC.
    pub fn wake_tx_queue(&self, txq: TxqId, now: Instant) -> Result<ScheduleReport, Mt76Error> {
        let (_, tid) = self.scheduler().txq_info(txq).map_err(|_| Mt76Error::UnknownTxq)?;
        Ok(self.schedule(tid.ac(), now))
    }

    /// `mt76_txq_schedule`: rounds on `ac` while the last one sent anything (or, with
    /// no written token outstanding, had a write refused: a frame it could not map, or
    /// a DMA queue answering full). Each round is `mt76_txq_schedule_list`: for each txq
    /// the scheduler hands out, while the DMA queue is not stopped (`mt76_txq_stopped`:
    /// `queued + MT_TXQ_FREE_THR >= ndesc`, or tx blocked by the token table), one burst
    /// (`mt76_txq_send_burst`): frames dequeued, charged, given a token and written,
    /// until the station's AQL budget, the burst bound ([`Config::burst`]), the queue or
    /// a frame that cannot be mapped stops it; then the kick.
    ///
    /// One context at a time runs an AC's rounds, as mt76's one tx worker does: a call
    /// that finds another context running them leaves it a note and returns at once
    /// ([`ScheduleReport::handed_off`]), and that context runs one more round, which
    /// starts after the note. Two rounds on one AC at once could each miss a txq the
    /// other holds: a station's wake or a tx-free that empties the queue, meeting a
    /// turn that is skipping that txq or has just read the queue full, would leave its
    /// frames with nothing in flight to run the worker again.
    ///
    /// Then the other ACs whose rerun bit is set (a refused write of this call gave a
    /// token back unwritten with no written token left, so a round of theirs may have
    /// met the table blocked by it, and no tx-free will come): one call each, added to
    /// the report's `frames` and `bursts` (`rounds` and `end` stay this AC's). Any bit still
    /// set after that is reported as [`ScheduleReport::deferred`].
    pub fn schedule(&self, ac: Ac, now: Instant) -> ScheduleReport {
        let mut report = self.schedule_ac(ac, now);
        for other in Ac::ALL {
            if other != ac && self.rerun.contains(other) {
                let r = self.schedule_ac(other, now);
                report.frames = report.frames.saturating_add(r.frames);
                report.bursts = report.bursts.saturating_add(r.bursts);
                report.deferred |= r.deferred;
            }
        }
        report.deferred |= self.rerun.any();
        report
    }

    /// [`schedule`](Self::schedule) on `ac` alone.
    fn schedule_ac(&self, ac: Ac, now: Instant) -> ScheduleReport {
        let mut report = ScheduleReport::default();
        // A round asked for by an earlier call that could not run it: this call's is it
        // (run here, or by the runner this call hands off to, whose next round starts
        // after this call's note; if that runner's budget ends first, the gate shows
        // the note waiting). Cleared before the round, so the round comes after.
        self.rerun.take(ac);
        loop {
            let budget = self.config.max_rounds.saturating_sub(report.rounds);
            let mut next = Next::Done;
            let gated = self.gate.run(ac, budget, || next = self.one_round(ac, now, &mut report));
            match gated {
                GateOutcome::Ran { .. } => {}
                GateOutcome::HandedOff => {
                    report.handed_off = true;
                    break;
                }
                GateOutcome::Deferred { .. } => {
                    report.deferred = true;
                    if next == Next::Rerun {
                        self.rerun.insert(ac);
                    }
                    break;
                }
            }
            if next == Next::Done {
                break;
            }
            if report.rounds >= self.config.max_rounds {
                // The budget ends with a round asked for. After written frames their
                // tx-free runs the tx worker; after a drop-only round with no written
                // token nothing would: leave it waiting, and say so.
                if next == Next::Rerun {
                    self.rerun.insert(ac);
                    report.deferred = true;
                }
                break;
            }
        }
        self.reap(now);
        report
    }

    /// One `mt76_txq_schedule_list` on `ac`, added to `report`; returns whether
    /// [`schedule`](Self::schedule) should run the next: the round wrote frames, or it
    /// only dropped frames it could not map while no written token is outstanding.
    /// Such a drop ends its burst and leaves the txq's other frames listed; with a
    /// written token outstanding, its tx-free runs the tx worker, which serves them
    /// (mt76 leaves `mt76_txq_schedule` at such a drop and waits for that), but with
    /// none nothing would, so the next round serves them now.
    fn one_round(&self, ac: Ac, now: Instant, report: &mut ScheduleReport) -> Next {
        // Dekker with `stop_tx`: the gate's RUNNING bit (set before this closure runs),
        // then this fence, then the flag; `stop_tx` sets the flag, fences, then reads
        // RUNNING. Either this round sees the flag and writes nothing, or `stop_tx` sees
        // it running and waits for it to end.
        fence(Ordering::SeqCst);
        if tx_state(self.tx_state.load(Ordering::Relaxed)) != TX_RUNNING {
            return Next::Done;
        }
        let mut ring = DmaRing {
            hal: &self.hal,
            tokens: &self.tokens,
            stations: &self.stations,
            counters: &self.counters,
            sched: self.scheduler(),
            tx_state: &self.tx_state,
            ac,
            free_thr: self.config.txq_free_thr,
            now,
            bursts: 0,
            wrote: false,
            unmapped: 0,
            released_unwritten: false,
            burst_ended: false,
            turn_station: None,
            turn_wcid: None,
        };
        let round = self.txqs.run_round_hooked(
            ac,
            now,
            &self.stations,
            &mut ring,
            self.config.burst,
            // `mt76_txq_schedule_list` skips a station in power save
            // (`MT_WCID_FLAG_PS`): nothing is dequeued or charged, and the txq stays
            // listed for the round after its wake.
            |turn| match turn.station() {
                Some(sta) if self.stations.asleep(sta) => TurnStart::Skip,
                _ => TurnStart::Serve,
            },
            |turn| {
                // While this context alone holds the txq, served or skipped: the
                // frames its queue dropped (a sleeping station's too, as its
                // enqueues go on).
                if let Some(queue) = turn.queue() {
                    queue.take_dropped(&mut |frame| self.drop_frame(frame));
                }
            },
        );
        // The core counts a frame dropped at its DMA write as sent; it was not written.
        let written = round.frames.saturating_sub(ring.unmapped);
        report.rounds = report.rounds.saturating_add(1);
        report.frames = report.frames.saturating_add(written);
        report.bursts = report.bursts.saturating_add(ring.bursts);
        report.end = Some(round.end);
        if let Some(refused) = round.refused {
            // Unreachable with the table's retry slots; never lose it anyway.
            let charged_us = refused.charge.as_ref().map_or(0, Charge::airtime_us);
            if let Some(charge) = refused.charge {
                let _ = self.scheduler().give_back(charge);
            }
            self.hand_back(refused.frame, charged_us);
        }
        // A round that gave a token back unwritten (a write refused, `Full` or
        // `MapFailed`) with no written token outstanding afterwards: no tx-free will come
        // to run the tx worker. Two kinds of round are owed one:
        // * this AC's, for the frames the refusal left listed (a drop ends its burst; a
        //   `Full` keeps the frame in the retry slot): `Rerun`;
        // * every other AC's: a round of theirs may have been turned away while the
        //   table was blocked by this token (`has_room`, or `consume` finding the table
        //   full of tokens taken and not yet written) and ended with nothing written
        //   and nothing dropped: their rerun bits, which `schedule` runs after this
        //   AC's rounds (or reports `deferred`).
        //
        // Correct under every interleaving. "A tx-free will come" is read from the
        // tokens whose descriptor was written (marked after `queue_desc` returned Ok,
        // unmarked at their release), not from every token in use. Take a round R on
        // any AC turned away by the token block (or, on this AC, by a refused write):
        // at that moment the table held tokens, each either written or taken unwritten
        // by a round in progress. A written token's release comes after R took its
        // gate, by a tx-free pass (which then runs `schedule_all`) or a reset's flush
        // (followed by `start_tx`); either asks R's gate for a round after R took it
        // (the gate word's writes are all read-modify-writes), and the gate runs one
        // that starts after. An unwritten token is either marked written later (the
        // same, by its tx-free) or given back unwritten by its round, which then reads
        // the written count here, under the token lock: if it sees one, that token's
        // release is later still (the previous case); if it sees none, it sets R's
        // AC's bit (or answers `Rerun` for its own) after the release, so the round it
        // brings starts after R took the gate. A write not yet marked reads as none:
        // one round more, nothing lost. So a bit is set only when no written token is
        // outstanding, but it may be set when no round was turned away (one empty
        // round).
        let lone = ring.released_unwritten && self.tokens.written() == 0;
        if lone {
            for other in Ac::ALL {
                if other != ac {
                    self.rerun.insert(other);
                }
            }
        }
        if written > 0 {
            return Next::More;
        }
        if lone { Next::Rerun } else { Next::Done }
    }

    /// Whether requests for rounds wait with no context running them: a call's rounds
    /// reached [`Config::max_rounds`] while others asked for more, or after a round
    /// that only dropped unmapped frames with no written token outstanding
    /// ([`ScheduleReport::deferred`]). A rerun bit is set only when no written token is
    /// outstanding, so no interrupt brings a tx-free pass for it: a driver that cannot
    /// act on each report (and every [`schedule_all`](Self::schedule_all) discards
    /// them) must poll this (at the end of a tx-free pass, from its MAC work) and
    /// schedule the tx worker when it is true: the worker's `schedule_all` serves them.
    /// It may be true spuriously (one empty round).
    pub fn rounds_waiting(&self) -> bool {
        Ac::ALL.into_iter().any(|ac| self.gate.is_waiting(ac) || self.rerun.contains(ac))
    }

    /// After a DMA cleanup that ran apart from the tx-free events (a DMA-done interrupt
    /// that lowers [`DmaQueues::queued`](crate::hal::DmaQueues::queued) after the events of
    /// those descriptors were handled): runs [`schedule`](Self::schedule) on `ac`. A
    /// HAL that cleans up before it reports the events, as mt7915's
    /// `mt7915_mac_tx_free` does (`mt76_queue_tx_cleanup` first), never needs it: the
    /// tx-free pass's own rounds then see the room. Without it, a round that the last
    /// pass ran may read the queue stopped and end, and no later event would run the
    /// AC again.
    pub fn tx_cleanup_done(&self, ac: Ac, now: Instant) -> ScheduleReport {
        self.schedule(ac, now)
    }

    /// `mt76_txq_schedule_all`: [`schedule`](Self::schedule) on every AC, VO first.
    /// Returns the frames written; each call's [`ScheduleReport::deferred`] is
    /// discarded: [`rounds_waiting`](Self::rounds_waiting) shows it.
    pub fn schedule_all(&self, now: Instant) -> u32 {
        Ac::ALL.iter().map(|&ac| self.schedule(ac, now).frames).fold(0u32, u32::saturating_add)
    }

    // ---- the tx-free path ----

    /// `mt7915_mac_tx_free` and `mt7915_mac_tx_free_done`: handles up to `budget`
    /// tx-free entries — each token released (`mt76_token_release`), its frame's charge
    /// released and its status (tries, ack, rate) given to the stack — then, as the
    /// event's end does, polls the WTBL airtime of the stations
    /// ([`sta_poll`](Self::sta_poll), with [`AirtimeSource::WtblPoll`]), unblocks tx if
    /// the token table fell below its threshold, and runs the tx worker
    /// ([`schedule_all`](Self::schedule_all)).
    pub fn tx_free(&self, budget: u32, now: Instant) -> TxFreePass {
        let mut pass = TxFreePass::default();
        let was_blocked = self.tokens.blocked();
        while pass.entries < budget {
            // Dekker with `reset_tokens`: this count, a SeqCst fence, then the read of
            // the event; `reset_tokens` follows the DMA reset with a SeqCst fence, then
            // reads the count. The two fences are ordered in SeqCst's single total
            // order: either `reset_tokens` sees this count and refuses to flush, or this
            // read comes after the DMA reset and finds only events of descriptors
            // written since, none before `start_tx`. The fence, not the SeqCst of the
            // increment alone: a SeqCst read-modify-write followed by a non-SeqCst read
            // (the HAL's) does not pair with `reset_tokens`'s fence unless the HAL's
            // own lock orders them; with the fence it holds for a lock-free HAL too.
            // The count covers the whole `next_tx_free` call (so the HAL must not wait
            // there on anything held across `reset_tokens`: `TxFreeSource`) and the
            // token's release, not the frame's status (a callback that may reset).
            self.events_held.fetch_add(1, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            let Some(event) = self.hal.next_tx_free() else {
                self.events_held.fetch_sub(1, Ordering::Release);
                break;
            };
            let released = self.tokens.release_for(event.token, event.wcid);
            self.events_held.fetch_sub(1, Ordering::Release);
            pass.entries = pass.entries.saturating_add(1);
            match released {
                Some(entry) => {
                    self.complete(entry, &event, now);
                    pass.completed = pass.completed.saturating_add(1);
                }
                None => {
                    pass.stale = pass.stale.saturating_add(1);
                    bump(&self.counters.stale_tx_free, 1);
                }
            }
        }
        if pass.entries == 0 {
            // No event, but rounds may wait (a call's budget ended with a round asked
            // for): the tx worker runs them.
            for ac in Ac::ALL {
                if self.gate.is_waiting(ac) || self.rerun.contains(ac) {
                    pass.frames_sent = pass.frames_sent.saturating_add(self.schedule(ac, now).frames);
                }
            }
            pass.rounds_waiting = self.rounds_waiting();
            return pass;
        }
        if self.config.airtime == AirtimeSource::WtblPoll {
            self.sta_poll(now);
        }
        pass.unblocked = was_blocked && !self.tokens.blocked();
        pass.frames_sent = self.schedule_all(now);
        pass.rounds_waiting = self.rounds_waiting();
        pass
    }

    /// One frame's tx status (`mt76_tx_status_*` → `ieee80211_tx_status_ext`).
    fn complete(&self, entry: Entry<Q::Frame>, event: &TxFree, now: Instant) {
        let Entry { frame, charge, station, ac, len_bytes, .. } = entry;
        let tries = event.tries.max(1);
        let status = FrameStatus { len_bytes, rate: event.rate, tries, aggregated: ac.aggregated() };
        let charged_us = charge.as_ref().map_or(0, Charge::airtime_us);
        let airtime_us = match (self.config.airtime, charge) {
            (AirtimeSource::TxStatus, Some(charge)) => {
                self.scheduler().complete_frame(charge, &status, now, None).airtime_us
            }
            (_, charge) => {
                if let Some(charge) = charge {
                    let _ = self.scheduler().release(charge);
                }
                status.airtime_us(charged_us)
            }
        };
        if let (Some(rate), Some(record)) = (event.rate, station.and_then(|s| self.stations.station(s))) {
            record.set_rate(Some(rate));
        }
        bump(&self.counters.completed, 1);
        let outcome = if event.acked { TxOutcome::Acked } else { TxOutcome::Failed };
        self.hal.tx_status(frame, TxReport { outcome, tries, rate: event.rate, charged_us, airtime_us });
    }

    /// `mt7915_mac_sta_poll`: for every station, reads its WTBL airtime words, registers
    /// what each AC gained since the last reading (`ieee80211_sta_register_airtime`)
    /// when the airtime comes from the WTBL ([`AirtimeSource::WtblPoll`]), clears the
    /// words once the last reading had [`WTBL_AIRTIME_CLEAR_BIT`] set, and reads its tx
    /// rate. Returns the registrations made. A station another poll is reading is
    /// skipped (that poll registers its delta): no poll spins on another's WTBL
    /// accesses, which can busy-wait on the hardware (`MT_WTBL_UPDATE`).
    pub fn sta_poll(&self, now: Instant) -> u32 {
        let register = self.config.airtime == AirtimeSource::WtblPoll;
        let mut registered = 0u32;
        for (id, record) in self.stations.live() {
            let Some(wcid) = record.wcid() else { continue };
            let Some(mut last) = record.try_last_words() else { continue };
            // Still this station's record (a removal and an `add_station` may have
            // reused the slot since the walk read it: `install` fills the slot under
            // this lock).
            if self.stations.station(id).is_none() {
                continue;
            }
            let cur = self.hal.airtime(wcid);
            let tx = PerAc::from_fn(|ac| cur.tx_us[ac].saturating_sub(last.tx_us[ac]));
            let rx = PerAc::from_fn(|ac| cur.rx_us[ac].saturating_sub(last.rx_us[ac]));
            let clear = Ac::ALL.into_iter().any(|ac| (last.tx_us[ac] | last.rx_us[ac]) & WTBL_AIRTIME_CLEAR_BIT != 0);
            *last = cur;
            if clear {
                self.hal.clear_airtime(wcid);
                *last = Default::default();
                bump(&self.counters.wtbl_clears, 1);
            }
            record.set_rate(self.hal.tx_rate(wcid));
            drop(last);
            if register {
                for ac in Ac::ALL {
                    let (t, r) = (tx[ac], rx[ac]);
                    if (t | r) != 0 && self.scheduler().register_airtime(id, ac, t, r, now).is_ok() {
                        registered = registered.saturating_add(1);
                    }
                }
            }
        }
        registered
    }

    /// Stops tx for a reset (`MT76_RESET`, then `mt76_worker_disable` of the tx
    /// worker): from its return until [`start_tx`](Self::start_tx) no round writes a
    /// descriptor, from any context. A round already running ends at its next frame, as
    /// mt76's burst does at `MT76_RESET` (its txqs keep their frames; its end reads
    /// [`RoundEnd::RingFull`]), and this waits for it, spinning, so call it from the
    /// reset work (process context). Never call it from a HAL callback or a
    /// [`DriverTxq`] method (a round calls every [`DmaQueues`](crate::hal::DmaQueues)
    /// method, and [`StatusSink::tx_status`](crate::hal::StatusSink::tx_status) for the
    /// frames it drops: there it would wait for its own round), nor from a context that
    /// can preempt a round on its CPU without being preempted by it (a softirq, against
    /// a round in process context). Calling it again while stopped is harmless (it
    /// returns at once; while another `stop_tx` waits, it waits too). Rounds asked for
    /// meanwhile write nothing and their txqs stay listed; tx-free passes still complete
    /// tokens. Tx counts as stopped for [`reset_tokens`](Self::reset_tokens) only once
    /// the wait is over ([`Mt76Error::TxNotStopped`] before). A reset is: `stop_tx`,
    /// stop and empty the DMA queues (and the tx-free events with them),
    /// [`reset_tokens`](Self::reset_tokens) (again while it answers
    /// [`Mt76Error::TxFreeBusy`]), restart DMA, [`start_tx`](Self::start_tx).
    pub fn stop_tx(&self) {
        // Until this call's own last step finds tx not running: a `start_tx` between
        // another `stop_tx`'s publication and that step would leave rounds writing.
        while !self.stop_tx_once() {}
    }

    /// One attempt of [`stop_tx`](Self::stop_tx): `false` if `start_tx` ran while it
    /// waited (tx runs again), and it must start over.
    fn stop_tx_once(&self) -> bool {
        // SeqCst, the load and the compare-exchange (its failure too): the Dekker with
        // `one_round` below needs this context's fence to come, in SeqCst's single total
        // order S, after the SeqCst write of `TX_STOPPING`, whoever made it. For the
        // context that made it, the write is sequenced before its fence. For one that
        // finds `TX_STOPPING` written by another `stop_tx`, a SeqCst read of that SeqCst
        // write follows it in S, and the read is sequenced before the fence; with a
        // Relaxed read nothing would order the fence after the write, and this context
        // could read the gate idle while a round read `TX_RUNNING`. (A round's Relaxed
        // read R of the state after its fence F_R that missed the write W is
        // coherence-ordered before W, so F_R precedes W in S; then F_R < W < this read
        // < this fence in S: the round's fence comes first, and this context's read of
        // the gate, after its fence, sees the round's RUNNING bit.)
        let seen = self.tx_state.load(Ordering::SeqCst);
        // The word of the stop this call waits in.
        let mine = match tx_state(seen) {
            TX_RUNNING => {
                let stopping = with_tx_state(seen, TX_STOPPING);
                match self.tx_state.compare_exchange(seen, stopping, Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(_) => stopping,
                    // Changed meanwhile: look again.
                    Err(_) => return false,
                }
            }
            // Another `stop_tx` waits: wait as well, so this one too returns only once
            // no round writes.
            TX_STOPPING => seen,
            // Stopped (or flushing, which is stopped): no round writes. The SeqCst load
            // acquires the Release that published it: what the rounds the publisher
            // waited for wrote is ordered before the caller's next steps.
            _ => return true,
        };
        // Dekker with `one_round` (see there, and the argument above).
        fence(Ordering::SeqCst);
        // Each AC once: a round that starts on it after it was seen idle sees the flag.
        // (Waiting for one look at all four idle at once could spin for as long as
        // other contexts keep starting rounds, which then write nothing.)
        for ac in Ac::ALL {
            while self.gate.is_running(ac) {
                core::hint::spin_loop();
            }
        }
        // The gate's word, read Relaxed, was last written by the exit of the runner
        // seen running (a Release read-modify-write): this orders what its rounds
        // wrote before the caller's DMA reset.
        fence(Ordering::Acquire);
        // Stopped, published only now that no round writes: a `reset_tokens` that reads
        // it (Acquire) sees what the waited-for rounds wrote. A read-modify-write from
        // this stop's `TX_STOPPING` (its epoch included) only: another `stop_tx` that
        // waited may have published it first, and then a flush and a `start_tx` may
        // have run (`start_tx` refuses only while the state is `TX_STOPPING`), and even
        // a new `stop_tx` set `TX_STOPPING` again, in the next epoch, whose rounds this
        // call did not wait for. So the failure is read: stopped or flushing (every
        // `TX_STOPPED` is published after a wait in its epoch), no round writes until a
        // `start_tx` (Acquire: what the publisher's rounds wrote is seen); running, or
        // stopping in a later epoch, this call starts over. (The epoch has 30 bits: a
        // wrong publication needs 2^30 `start_tx` during one wait.)
        match self.tx_state.compare_exchange(
            mine,
            with_tx_state(mine, TX_STOPPED),
            Ordering::Release,
            Ordering::Acquire,
        ) {
            Ok(_) => true,
            Err(now) => matches!(tx_state(now), TX_STOPPED | TX_FLUSHING),
        }
    }

    /// Restarts tx after a reset and runs the tx worker ([`schedule_all`](Self::schedule_all)),
    /// which serves every txq left listed. Returns the frames it wrote; rounds it left
    /// owed ([`Config::max_rounds`] reached while others asked, a rerun bit) show only
    /// in [`rounds_waiting`](Self::rounds_waiting): poll it after this call, as after a
    /// tx-free pass. Without a
    /// [`stop_tx`](Self::stop_tx) before, it only runs the tx worker. Refused, with
    /// nothing changed, while [`reset_tokens`](Self::reset_tokens) flushes
    /// ([`Mt76Error::TxFlushing`]: a frame written now could be flushed while the
    /// hardware holds its descriptor) and while `stop_tx` waits for running rounds
    /// ([`Mt76Error::TxStopping`]: it would return with tx running).
    pub fn start_tx(&self, now: Instant) -> Result<u32, Mt76Error> {
        // AcqRel: acquires the flush's end (`EndFlush`'s Release), and releases it with
        // this write. A round reads the state Relaxed after its SeqCst fence, which
        // orders nothing after this write: what the flush touched (the token table, the
        // DMA queues) is behind the token lock, the HAL's queue locks and atomics, which
        // order it for the round themselves. The next epoch: a `stop_tx` still at its last step of an earlier stop does not
        // publish over a later one (see there).
        let mut seen = self.tx_state.load(Ordering::Acquire);
        loop {
            match tx_state(seen) {
                TX_STOPPED => {
                    // The epoch is the bits above the state: adding one past the mask
                    // advances it, wrapping (the state's bits are replaced after).
                    let next = with_tx_state(seen.wrapping_add(TX_MASK + 1), TX_RUNNING);
                    match self.tx_state.compare_exchange(seen, next, Ordering::AcqRel, Ordering::Acquire) {
                        Ok(_) => return Ok(self.schedule_all(now)),
                        Err(now_seen) => seen = now_seen,
                    }
                }
                TX_RUNNING => return Ok(self.schedule_all(now)),
                TX_FLUSHING => return Err(Mt76Error::TxFlushing),
                _ => return Err(Mt76Error::TxStopping),
            }
        }
    }

    /// Tokens whose tx-free has not come within [`Config::tx_status_timeout_us`]: a
    /// hang, which a driver answers with a reset: [`stop_tx`](Self::stop_tx), the DMA
    /// reset (stop and empty the DMA queues and their tx-free events), then
    /// [`reset_tokens`](Self::reset_tokens) (which refuses without `stop_tx`), then
    /// [`start_tx`](Self::start_tx). Releases nothing: a token's frame may still
    /// be in a DMA queue, or held by the hardware for a dozing station, and its buffer
    /// must stay mapped until the hardware is done with it (mt76 releases a token only
    /// at its tx-free or at a reset).
    pub fn tokens_overdue(&self, now: Instant) -> u32 {
        match now.micros().checked_sub(self.config.tx_status_timeout_us) {
            Some(cutoff) => self.tokens.count_older(Instant::from_micros(cutoff)),
            None => 0,
        }
    }

    /// `mt76_connac2_tx_token_put`, the reset path: completes every token as
    /// [`TxOutcome::Flushed`] and releases its frame's charge (no airtime is registered
    /// for it). Call it after [`stop_tx`](Self::stop_tx) and once the DMA queues are
    /// stopped and emptied with their tx-free events, so the hardware holds no
    /// descriptor for these frames and no round writes a new one. Returns the frames
    /// completed.
    ///
    /// Refused, with nothing flushed: while tx runs or [`stop_tx`](Self::stop_tx) still
    /// waits for running rounds ([`Mt76Error::TxNotStopped`]); while another
    /// `reset_tokens` flushes ([`Mt76Error::TxFlushing`]); and while a tx-free pass is
    /// inside [`TxFreeSource::next_tx_free`] or holds an event it read but has not yet
    /// freed its token ([`Mt76Error::TxFreeBusy`]: retry; the pass is counted for the
    /// whole `next_tx_free` call and one token release). That event may predate the
    /// DMA reset: flushed under it, its token id would be handed out again after
    /// [`start_tx`](Self::start_tx), and the pass would free the new frame while the
    /// hardware still holds its descriptor. mt76 disables its tx-free NAPI
    /// (`napi_disable`, which waits for a running poll and keeps new ones out) for the
    /// same reason; a driver does the same around the reset, as nothing here keeps new
    /// passes out: a tx-free poll that runs back to back can keep every retry
    /// answering `TxFreeBusy`. The event
    /// source's reset and `next_tx_free` must be ordered (the simulated HAL takes one
    /// lock for both, held only while events are dropped or read), so that a pass that
    /// reads after the DMA reset finds only events for descriptors written since; and
    /// `next_tx_free` must never wait on anything the caller holds across
    /// `reset_tokens`, or every retry answers `TxFreeBusy` (see [`TxFreeSource`]).
    /// While it flushes, [`start_tx`](Self::start_tx) is refused
    /// ([`Mt76Error::TxFlushing`]).
    ///
    /// [`TxFreeSource::next_tx_free`]: crate::hal::TxFreeSource::next_tx_free
    /// [`TxFreeSource`]: crate::hal::TxFreeSource
    pub fn reset_tokens(&self) -> Result<u32, Mt76Error> {
        // Acquire: pairs with `stop_tx`'s Release of `TX_STOPPED`, published after its
        // wait, so no round is writing and what the rounds wrote is seen here (the
        // compare-exchange below acquires it again from the same value).
        let stopped = self.tx_state.load(Ordering::Acquire);
        match tx_state(stopped) {
            TX_STOPPED => {}
            TX_FLUSHING => return Err(Mt76Error::TxFlushing),
            _ => return Err(Mt76Error::TxNotStopped),
        }
        // Changed since the load: refused as it now reads (a `start_tx` ran, or another
        // flush began); the caller retries.
        if let Err(now) = self.tx_state.compare_exchange(
            stopped,
            with_tx_state(stopped, TX_FLUSHING),
            Ordering::Acquire,
            Ordering::Relaxed,
        ) {
            return Err(if tx_state(now) == TX_FLUSHING { Mt76Error::TxFlushing } else { Mt76Error::TxNotStopped });
        }
        let _end = EndFlush(&self.tx_state, stopped);
        // Dekker with `tx_free` (see there); Acquire: a pass seen done freed its token
        // before this flush looks at it.
        fence(Ordering::SeqCst);
        if self.events_held.load(Ordering::Acquire) != 0 {
            return Err(Mt76Error::TxFreeBusy);
        }
        let mut n = 0u32;
        self.tokens.release_all(|_token: Token, entry| {
            let charged_us = entry.charge.as_ref().map_or(0, Charge::airtime_us);
            if let Some(charge) = entry.charge {
                let _ = self.scheduler().release(charge);
            }
            bump(&self.counters.flushed, 1);
            let report = TxReport { outcome: TxOutcome::Flushed, tries: 0, rate: None, charged_us, airtime_us: 0 };
            self.hal.tx_status(entry.frame, report);
            n = n.saturating_add(1);
        });
        Ok(n)
    }
}
