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

/// Station slot word: bits 0..32 count the station's outstanding charges, bits 32..40
/// hold the state, bits 48..64 the generation. Charges and releases change the count
/// with compare-and-swap on the same word that a slot reuse must swap from "retired
/// with no charge", so a charge can never land on a later occupant (loom model 6)
/// without relying on sequential-consistency fences.
pub(crate) mod sta {
    pub(crate) const FREE: u64 = 0;
    /// Claimed by `add_station`, fields being written.
    pub(crate) const INIT: u64 = 1;
    pub(crate) const LIVE: u64 = 2;
    /// Removed; kept until every charge against it is released.
    pub(crate) const RETIRED: u64 = 3;

    #[inline]
    pub(crate) const fn word(generation: u16, state: u64, refs: u32) -> u64 {
        ((generation as u64) << 48) | (state << 32) | refs as u64
    }

    #[inline]
    pub(crate) const fn state(word: u64) -> u64 {
        (word >> 32) & 0xff
    }

    #[inline]
    pub(crate) const fn generation(word: u64) -> u16 {
        (word >> 48) as u16
    }

    #[inline]
    pub(crate) const fn refs(word: u64) -> u32 {
        word as u32
    }
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

/// The generation of a txq word.
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
    /// See [`sta`].
    pub(crate) word: AtomicU64,
    pub(crate) weight: AtomicU32,
    pub(crate) ac: [StationAc; Ac::COUNT],
}

impl StationSlot {
    pub(crate) fn new() -> StationSlot {
        StationSlot {
            word: AtomicU64::new(sta::FREE),
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
        let word = self.word.load(Ordering::Acquire);
        sta::state(word) == sta::LIVE && sta::generation(word) == id.generation
    }

    /// Counts one more outstanding charge for `id`, if it is the live occupant.
    #[inline]
    pub(crate) fn acquire_charge(&self, id: StationId) -> bool {
        let mut word = self.word.load(Ordering::Relaxed);
        loop {
            #[cfg(airtime_weakened = "charge_order")]
            let ok = sta::state(word) == sta::LIVE;
            #[cfg(not(airtime_weakened = "charge_order"))]
            let ok = sta::state(word) == sta::LIVE && sta::generation(word) == id.generation;
            if !ok || sta::refs(word) == u32::MAX {
                return false;
            }
            // Acquire: the slot's fields as published; the count pins the generation.
            match self.word.compare_exchange_weak(word, word + 1, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => word = now,
            }
        }
    }

    /// Whether a token of generation `token_gen` (4 bits survive the raw form) belongs
    /// to this slot: live or retired, of that generation. A slot is reused only with no
    /// charge outstanding, so a genuine token always finds its slot.
    #[inline]
    pub(crate) fn owns_token(&self, token_gen: u16) -> bool {
        let word = self.word.load(Ordering::Acquire);
        matches!(sta::state(word), sta::LIVE | sta::RETIRED)
            && crate::charge::gen_matches(token_gen, sta::generation(word))
    }

    /// Counts `n` charges fewer; false if fewer than `n` were outstanding (a double
    /// release), in which case the count goes to zero.
    #[inline]
    pub(crate) fn release_charges(&self, n: u32) -> bool {
        let mut word = self.word.load(Ordering::Relaxed);
        loop {
            let refs = sta::refs(word);
            if refs == 0 {
                return n == 0;
            }
            // Release: the pending-airtime subtraction before it is visible to a reuse
            // that Acquires a zero count.
            match self.word.compare_exchange_weak(
                word,
                word - u64::from(refs.min(n)),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return refs >= n,
                Err(now) => word = now,
            }
        }
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

    /// Adds a top-up to the deficit. One atomic add, so a concurrent
    /// `register_airtime` charge is never lost (loom model 4).
    #[inline]
    pub(crate) fn top_up(&self, ac: Ac, amount: i64) {
        let deficit = &self.ac[ac.index()].deficit_us;
        #[cfg(not(airtime_weakened = "topup"))]
        deficit.fetch_add(amount, Ordering::Relaxed);
        // Weakened variant, only to prove the loom model catches a lost update.
        #[cfg(airtime_weakened = "topup")]
        deficit.store(deficit.load(Ordering::Relaxed) + amount, Ordering::Relaxed);
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
