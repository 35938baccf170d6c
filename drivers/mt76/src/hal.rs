//! The hardware abstraction the adapter runs over: mt76's transmit data path split by
//! role, one small trait each.
//!
//! | trait | mt76 | what it does |
//! |---|---|---|
//! | [`DmaQueues`] | `phy->q_tx[qid]`, `dma.c`'s `mt76_dma_tx_queue_skb` and `mt76_dma_kick_queue` | one tx DMA queue per AC: its size (`ndesc`), how many descriptors it holds (`queued`), writing a descriptor (which may fail), and the doorbell (`kick`) |
//! | [`TxFreeSource`] | mt7915's tx-free event (`mt7915_mac_tx_free`) | one freed token at a time, with the frame's tries, ack and rate |
//! | [`WtblCounters`] | the WTBL's per-AC airtime words read by `mt7915_mac_sta_poll`, and `MT_WTBL_UPDATE_ADM_COUNT_CLEAR` | cumulative tx/rx airtime per station and AC, the station's current tx rate |
//! | [`StatusSink`] | `ieee80211_tx_status_ext` / `ieee80211_free_txskb` | a finished frame back to the stack, with its status |
//!
//! Every method takes `&self`: the adapter's wake path and tx-free path call the HAL
//! from two CPUs at once. A DMA queue is the one place the hardware needs a lock (the
//! descriptor ring's head and `queued` move together): implementations take the
//! queue's own lock inside [`DmaQueues::queue_desc`] and [`DmaQueues::kick`], as mt76
//! takes `q->lock` around `__mt76_tx_queue_skb` and `kick`. The other roles read
//! hardware state (registers, an event already copied out) and need none.

use airtime_est::Rate;
use airtime_sched::{Ac, PerAc, RingError, RingErrorKind};

/// `MT_TXQ_FREE_THR` (mt76.h): a DMA queue counts as stopped while
/// `queued + MT_TXQ_FREE_THR >= ndesc` (`mt76_txq_stopped`), so no burst starts (or
/// continues) on it.
pub const MT_TXQ_FREE_THR: u32 = 32;
/// `MT76_TOKEN_FREE_THR` (mt76.h): tx is blocked once the token table holds
/// `token_size - MT76_TOKEN_FREE_THR` tokens (`mt76_token_consume` sets the queues
/// blocked), and unblocked when `mt76_token_release` falls below it again.
pub const MT76_TOKEN_FREE_THR: u32 = 64;
/// `MT7603_TX_RING_SIZE` (mt7603/mt7603.h): descriptors per tx DMA queue, the
/// simulated HAL's default (mt7915 has 2048, `MT7915_TX_RING_SIZE`).
pub const MT7603_TX_RING_SIZE: u32 = 256;
/// `MT7915_TOKEN_SIZE` (mt7915/mt7915.h): tokens (frames between DMA and tx-free).
pub const MT7915_TOKEN_SIZE: u32 = 8192;
/// `MT_MAX_NON_AQL_PKT` (mt76.h): mt76's cap on a station's frames in flight without
/// an airtime estimate. Not enforced here: the core charges such frames a conservative
/// estimate, so AQL bounds them (see the crate docs).
pub const MT_MAX_NON_AQL_PKT: u32 = 16;
/// mt76's burst limit before commit e861cb05 ("rely on AQL for burst size limits on
/// tx queueing"): `mt76_txq_send_burst` sent at most 16 frames per burst when the
/// first frame was an A-MPDU member (`limit = ampdu ? 16 : 3`).
pub const LEGACY_AMPDU_BURST: u32 = 16;
/// The same limit for frames outside an A-MPDU session.
pub const LEGACY_NON_AMPDU_BURST: u32 = 3;
/// `MT_TX_STATUS_SKB_TIMEOUT` (mt76.h, `HZ / 4`) in microseconds: how long
/// `mt76_tx_status_check` waits for a frame's status before completing it as failed;
/// here, how long a token may wait for its tx-free before it counts as overdue
/// ([`Mt76::tokens_overdue`](crate::Mt76::tokens_overdue)).
pub const MT_TX_STATUS_SKB_TIMEOUT_US: u64 = 250_000;
/// The bit of a WTBL airtime word whose presence in the last reading makes
/// `mt7915_mac_sta_poll` clear the counters (`BIT(30)`), before they can wrap.
pub const WTBL_AIRTIME_CLEAR_BIT: u32 = 1 << 30;

/// A token: the id a descriptor carries and the tx-free event hands back (mt76's
/// `msdu` id, `MT_TX_FREE_MSDU_ID`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token(pub u32);

/// One tx descriptor: what `mt7915_tx_prepare_skb` writes into the TXD/TXP for a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxDesc {
    /// The frame's token.
    pub token: Token,
    /// Its station's WTBL index (`wcid->idx`); `None` for a station-less frame.
    pub wcid: Option<u16>,
    /// Its bytes as transmitted.
    pub len_bytes: u32,
    /// Its access category (the DMA queue it is written to).
    pub ac: Ac,
}

/// Why a DMA queue refused a descriptor (`mt76_dma_tx_queue_skb` failing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DmaError {
    /// No descriptor free (`-ENOSPC`).
    Full,
    /// The buffer could not be DMA-mapped (`-ENOMEM`).
    MapFailed,
}

impl RingError for DmaError {
    fn kind(&self) -> RingErrorKind {
        match self {
            DmaError::Full => RingErrorKind::Full,
            DmaError::MapFailed => RingErrorKind::OutOfMemory,
        }
    }
}

/// The per-AC tx DMA queues.
pub trait DmaQueues {
    /// Descriptors in the queue of `ac` (`q->ndesc`).
    fn ndesc(&self, ac: Ac) -> u32;
    /// Descriptors it holds now, written and not yet cleaned up (`q->queued`).
    ///
    /// Cleaned up no later than their tx-free events are read: a descriptor whose event
    /// [`TxFreeSource::next_tx_free`] returned no longer counts here by the end of that
    /// call (mt7915's `mt7915_mac_tx_free` runs `mt76_queue_tx_cleanup` before it
    /// reads the event), so that the rounds of the tx-free pass see the room it freed.
    /// A HAL whose cleanup runs apart (a DMA-done interrupt) calls
    /// [`Mt76::tx_cleanup_done`](crate::Mt76::tx_cleanup_done) after each, or a backlog
    /// that met a stopped queue can wait with no event left to run its AC.
    fn queued(&self, ac: Ac) -> u32;
    /// Writes `desc` into the queue of `desc.ac`, under the queue's lock. On `Err` nothing
    /// was written.
    fn queue_desc(&self, desc: TxDesc) -> Result<(), DmaError>;
    /// Rings the queue's doorbell: the hardware may fetch what was written
    /// (`queue_ops->kick`, at the end of `mt76_txq_send_burst`).
    fn kick(&self, ac: Ac);
}

/// How a frame ended, as the tx-free event says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxFree {
    /// The token freed.
    pub token: Token,
    /// The station the event's WCID pair named (`MT_TX_FREE_WLAN_ID`), if any.
    pub wcid: Option<u16>,
    /// Transmissions, the first included (`MT_TX_FREE_COUNT`; 0 is read as 1).
    pub tries: u8,
    /// Whether it was acknowledged (`MT_TX_FREE_STAT` clear).
    pub acked: bool,
    /// The rate of its last try, if the hardware reported one.
    pub rate: Option<Rate>,
}

/// The source of tx-free events.
///
/// A reset's DMA part drops every event not yet read, and is ordered with
/// [`next_tx_free`](Self::next_tx_free) (one lock for both, as the simulated HAL has,
/// or the reader stopped, as mt76 disables its NAPI): a read after it finds only events
/// of descriptors written since. [`Mt76::reset_tokens`](crate::Mt76::reset_tokens)
/// relies on it, and refuses ([`TxFreeBusy`](crate::Mt76Error::TxFreeBusy)) while a
/// tx-free pass is inside `next_tx_free` or holds an event it read.
///
/// So `next_tx_free` must never wait on anything the reset work holds across
/// `reset_tokens` (its retries included): a pass waiting there would be counted for as
/// long, and every retry would answer `TxFreeBusy`. A lock shared with the DMA reset is
/// held by the reset only while it drops the events (not from the DMA reset through
/// the flush), and a reader the reset has stopped returns `None` at once rather than
/// wait for the restart.
///
/// A panic inside `next_tx_free` (in a std build that unwinds) leaves the pass counted:
/// the count stays raised and every later `reset_tokens` answers `TxFreeBusy`. A HAL
/// must not panic there.
pub trait TxFreeSource {
    /// The next freed token the hardware reported, if any. Must not wait on anything
    /// held across [`Mt76::reset_tokens`](crate::Mt76::reset_tokens) (see the trait).
    fn next_tx_free(&self) -> Option<TxFree>;
}

/// One station's WTBL airtime words: cumulative us per AC, by mac80211's AC. The
/// hardware keeps them in its LMAC order (`mt76_connac_lmac_mapping`: BK first, VO
/// last); a HAL reading them fills each AC's word from its LMAC slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AirtimeWords {
    /// Tx airtime per AC.
    pub tx_us: PerAc<u32>,
    /// Rx airtime per AC.
    pub rx_us: PerAc<u32>,
}

/// The WTBL: per-station counters the hardware keeps.
pub trait WtblCounters {
    /// The airtime words of WTBL entry `wcid` (`mt7915_mac_sta_poll`'s `mt76_rr` reads).
    fn airtime(&self, wcid: u16) -> AirtimeWords;
    /// Clears them (`mt7915_mac_wtbl_update(.., MT_WTBL_UPDATE_ADM_COUNT_CLEAR)`).
    fn clear_airtime(&self, wcid: u16);
    /// The station's current tx rate, as the poll reads it from the WTBL.
    fn tx_rate(&self, wcid: u16) -> Option<Rate>;
}

/// What the stack is told about a frame it gave the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxOutcome {
    /// Sent and acknowledged.
    Acked,
    /// Sent, never acknowledged.
    Failed,
    /// Its token was flushed at a reset, after the DMA queues stopped
    /// (`mt76_connac2_tx_token_put`): completed as failed, its fate unknown.
    Flushed,
    /// Never sent: its station or txq was removed while it waited in the txq.
    Purged,
    /// Never sent: its txq's queue dropped it (AQM, limits).
    Dropped,
}

/// A frame's status for the stack (`ieee80211_tx_status_ext`'s `ieee80211_tx_status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxReport {
    /// How it ended.
    pub outcome: TxOutcome,
    /// Transmissions (0 if never sent).
    pub tries: u8,
    /// The rate reported for it.
    pub rate: Option<Rate>,
    /// The airtime it was charged (AQL), in us.
    pub charged_us: u32,
    /// The airtime its status implies ([`airtime_sched::FrameStatus::airtime_us`]), in us.
    pub airtime_us: u32,
}

/// Where finished frames go back to the stack.
pub trait StatusSink<F> {
    /// Hands `frame` back with its status.
    fn tx_status(&self, frame: F, report: TxReport);
}

/// Every role of mt76's transmit data path, for frames of type `F`. Implemented for any
/// type that implements all the role traits.
pub trait Hal<F>: DmaQueues + TxFreeSource + WtblCounters + StatusSink<F> {}

impl<F, H: DmaQueues + TxFreeSource + WtblCounters + StatusSink<F>> Hal<F> for H {}
