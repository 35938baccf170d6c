//! Per-station and per-txq state, all in atomics so the data path takes no lock.
//!
//! # Invariants
//! * A station slot's `pending_us[ac]` is the sum of the outstanding charges made
//!   against that slot's current generation (A1). A slot is reused only when every
//!   `pending_us` is 0, so a charge can never be released against a later occupant.
//! * A txq slot's word has `QUEUED` set iff exactly one entry for it sits in one of its
//!   AC's queues or is held by a `next_txq` call that popped it and has not yet decided
//!   (S2); `SERVING` iff one context holds a `Serving` handle for it (S3).

use crate::config::AqlLimits;
use crate::sync::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use crate::{Ac, StationId, TxqId};

/// Station slot states (low bits of `StationSlot::word`; the generation is the high half).
pub(crate) mod sta {
    pub(crate) const FREE: u32 = 0;
    /// Claimed by `add_station`, fields being written.
    pub(crate) const INIT: u32 = 1;
    pub(crate) const LIVE: u32 = 2;
    /// Removed; kept until every charge against it is released.
    pub(crate) const RETIRED: u32 = 3;
    pub(crate) const STATE_MASK: u32 = 0xffff;
}

/// Txq word bits (the generation is the high half).
pub(crate) mod txq {
    /// Registered and not removed.
    pub(crate) const LIVE: u32 = 1 << 0;
    /// One entry is in a queue (or popped and being looked at).
    pub(crate) const QUEUED: u32 = 1 << 1;
    /// Held by exactly one context between `next_txq`/`may_transmit` and its return.
    pub(crate) const SERVING: u32 = 1 << 2;
    /// A wake arrived while SERVING: requeue on return even if the server saw it empty.
    pub(crate) const WOKEN: u32 = 1 << 3;
    /// Claimed by `add_txq`, fields being written.
    pub(crate) const INIT: u32 = 1 << 4;
    pub(crate) const FLAG_MASK: u32 = 0xffff;
}

#[inline]
pub(crate) const fn gen_of(word: u32) -> u16 {
    (word >> 16) as u16
}

#[inline]
pub(crate) const fn with_gen(generation: u16, low: u32) -> u32 {
    ((generation as u32) << 16) | (low & 0xffff)
}

pub(crate) struct StationAc {
    /// DRR deficit in us (mainline's s32, widened so no sum of charges can wrap it).
    pub(crate) deficit_us: AtomicI64,
    /// AQL pending airtime in us (`aql_tx_pending`).
    pub(crate) pending_us: AtomicU32,
    /// Packed [`AqlLimits`] (one word, so readers never see half a change).
    pub(crate) limits: AtomicU64,
    /// Last time this AC had frames scheduled, in us (`last_active`).
    pub(crate) last_active_us: AtomicU64,
    /// Registered airtime statistics, in us.
    pub(crate) tx_airtime_us: AtomicU64,
    pub(crate) rx_airtime_us: AtomicU64,
}

pub(crate) struct StationSlot {
    pub(crate) word: AtomicU32,
    pub(crate) weight: AtomicU32,
    pub(crate) ac: [StationAc; Ac::COUNT],
}

impl StationSlot {
    pub(crate) fn new() -> StationSlot {
        StationSlot {
            word: AtomicU32::new(sta::FREE),
            weight: AtomicU32::new(256),
            ac: core::array::from_fn(|_| StationAc {
                deficit_us: AtomicI64::new(0),
                pending_us: AtomicU32::new(0),
                limits: AtomicU64::new(AqlLimits::DEFAULT.pack()),
                last_active_us: AtomicU64::new(0),
                tx_airtime_us: AtomicU64::new(0),
                rx_airtime_us: AtomicU64::new(0),
            }),
        }
    }

    /// Whether `id` names this slot's live occupant.
    #[inline]
    pub(crate) fn is_live(&self, id: StationId) -> bool {
        // Acquire: pairs with the Release that published the slot's fields in add_station.
        self.word.load(Ordering::Acquire) == with_gen(id.generation, sta::LIVE)
    }

    #[inline]
    pub(crate) fn limits(&self, ac: Ac) -> AqlLimits {
        // Relaxed: limits are a configuration value read whole; no other data depends on it.
        AqlLimits::unpack(self.ac[ac.index()].limits.load(Ordering::Relaxed))
    }

    #[inline]
    pub(crate) fn weight(&self) -> u32 {
        // Relaxed: a weight change takes effect at the next top-up, whichever that is.
        self.weight.load(Ordering::Relaxed)
    }

    /// Effective deficit: stored deficit minus airtime already in flight (reference 3.4).
    #[inline]
    pub(crate) fn effective_deficit(&self, ac: Ac) -> i64 {
        let a = &self.ac[ac.index()];
        a.deficit_us.load(Ordering::Relaxed) - i64::from(a.pending_us.load(Ordering::Relaxed))
    }
}

/// No station (a per-interface multicast txq).
pub(crate) const NO_STATION: u32 = u32::MAX;

pub(crate) struct TxqSlot {
    pub(crate) word: AtomicU32,
    /// Raw [`StationId`] or [`NO_STATION`]; written before the slot is published LIVE.
    pub(crate) station: AtomicU32,
    /// TID number (0..=16); written before LIVE.
    pub(crate) tid: AtomicU32,
    /// The round number in which `next_txq` last handed this txq out (`schedule_round`).
    pub(crate) round: AtomicU32,
}

impl TxqSlot {
    pub(crate) fn new() -> TxqSlot {
        TxqSlot {
            word: AtomicU32::new(0),
            station: AtomicU32::new(NO_STATION),
            tid: AtomicU32::new(0),
            round: AtomicU32::new(0),
        }
    }

    #[inline]
    pub(crate) fn station(&self) -> Option<StationId> {
        // Relaxed: written before the Release that published LIVE, which every reader
        // has Acquired through the word.
        let raw = self.station.load(Ordering::Relaxed);
        (raw != NO_STATION).then(|| StationId::from_raw(raw))
    }

    #[inline]
    pub(crate) fn tid(&self) -> u8 {
        self.tid.load(Ordering::Relaxed) as u8
    }

    #[inline]
    pub(crate) fn id(&self, index: usize, word: u32) -> TxqId {
        TxqId { index: index as u16, generation: gen_of(word) }
    }
}
