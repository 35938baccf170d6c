//! Per-station and per-txq state, all in atomics so the data path takes no lock.
//!
//! # Invariants
//! * A station slot's AQL word for an AC holds the sum of the outstanding charges made
//!   against that slot's current generation (A1). A slot is reused only when every AQL
//!   word is closed with nothing pending, so a charge can never be released against a
//!   later occupant.
//! * A txq slot's word has `queued(ac)` set iff exactly one entry for the slot sits on
//!   `ac`'s list or is held by a `next_txq` call that popped it and has not yet decided
//!   (S2); `SERVING` iff one context holds a `Serving` handle for it (S3). An entry
//!   stands for the live txq iff the txq is on that AC and not `ORPHAN`; every other
//!   entry is counted dead on its list until a pop drops it.

use crate::config::AqlLimits;
use crate::sync::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use crate::{Ac, StationId, TxqId};

/// Station slot word: bits 0..8 the state, bits 32..64 the whole generation. The data
/// path only reads it: charges and releases write the per-AC [`aql`] words instead, so
/// the word every operation reads is not also a line both contexts write per frame.
pub(crate) mod sta {
    pub(crate) const FREE: u64 = 0;
    /// Claimed by `add_station`, fields being written.
    pub(crate) const INIT: u64 = 1;
    pub(crate) const LIVE: u64 = 2;
    /// Removed; kept until every charge against it is released.
    pub(crate) const RETIRED: u64 = 3;

    const STATE: u64 = 0xff;

    #[inline]
    pub(crate) const fn word(generation: u32, state: u64) -> u64 {
        ((generation as u64) << 32) | state
    }

    #[inline]
    pub(crate) const fn state(word: u64) -> u64 {
        word & STATE
    }

    #[inline]
    pub(crate) const fn generation(word: u64) -> u32 {
        (word >> 32) as u32
    }

    /// The word with `state` in place of its state.
    #[inline]
    pub(crate) const fn with_state(word: u64, state: u64) -> u64 {
        (word & !STATE) | state
    }
}

/// A station's AQL word for one AC: bits 0..32 its pending airtime in us
/// (`aql_tx_pending`), bit 32 "open" (charges accepted), bits 33..64 the low 31 bits of
/// the generation of the occupant it counts for ([`tag`](aql::tag)). A charge first
/// checks the whole generation in the station word, then checks the tag and adds in one
/// compare-and-swap, so it can never land on a later occupant of the slot; a slot is
/// reused only once all four words are closed with nothing pending (loom models 6, 7).
/// Every charge is at least 4 us (A3), so nothing pending means no charge outstanding.
///
/// 31 bits are enough: the tag only has to tell the occupant a charge checked in the
/// station word from the occupants after it, and those come one at a time, each only
/// once the one before is drained. A charge meets a wrong occupant with the same tag
/// only if its slot was reused 2^31 times between its check of the station word and its
/// compare-and-swap, a few instructions later. A release carries a token that holds the
/// slot (nothing is reused while a charge is outstanding), so it always meets its own
/// occupant.
pub(crate) mod aql {
    pub(crate) const OPEN: u64 = 1 << 32;
    const TAG_SHIFT: u32 = 33;

    /// The part of `generation` an AQL word keeps.
    #[inline]
    pub(crate) const fn tag(generation: u32) -> u32 {
        generation & 0x7fff_ffff
    }

    #[inline]
    pub(crate) const fn word(generation: u32, open: bool, pending_us: u32) -> u64 {
        ((tag(generation) as u64) << TAG_SHIFT) | if open { OPEN } else { 0 } | pending_us as u64
    }

    #[inline]
    pub(crate) const fn pending_us(word: u64) -> u32 {
        word as u32
    }

    #[inline]
    pub(crate) const fn is_open(word: u64) -> bool {
        word & OPEN != 0
    }

    /// The [`tag`] of the generation the word counts for.
    #[inline]
    pub(crate) const fn generation(word: u64) -> u32 {
        (word >> TAG_SHIFT) as u32
    }

    /// The word with `pending_us` in place of its pending airtime.
    #[inline]
    pub(crate) const fn with_pending(word: u64, pending_us: u32) -> u64 {
        (word & !0xffff_ffff) | pending_us as u64
    }
}

/// Why a station slot refused a charge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChargeRefused {
    /// Not the slot's live occupant (removed, or another generation).
    NotLive,
    /// The charge would carry the AC's pending airtime past `u32::MAX` us.
    Overflow,
}

/// Txq word bits: flags in the low half, the generation in the high half.
pub(crate) mod txq {
    use crate::Ac;

    /// Registered and not removed.
    pub(crate) const LIVE: u64 = 1 << 0;
    /// Held by exactly one context between `next_txq`/`may_transmit` and its return.
    pub(crate) const SERVING: u64 = 1 << 2;
    /// A wake arrived while SERVING: requeue on return even if the server saw it empty.
    pub(crate) const WOKEN: u64 = 1 << 3;
    /// Claimed by `add_txq`, fields being written.
    pub(crate) const INIT: u64 = 1 << 4;
    /// The live txq's entry on its AC's list is one its slot's previous occupant left
    /// there: it stands for no wake of this txq, and is dropped when met unless a wake
    /// takes it over first.
    pub(crate) const ORPHAN: u64 = 1 << 5;
    /// Bits 8..12: one entry of this slot is on AC `i`'s list (or popped from it and
    /// being looked at). Per AC, because a removed txq's entry may still be on its old
    /// AC's list when the slot takes a txq of another AC (S2 is per list).
    const QUEUED_SHIFT: u32 = 8;
    pub(crate) const QUEUED_ANY: u64 = 0xf << QUEUED_SHIFT;

    /// The QUEUED bit of `ac`'s list.
    #[inline]
    pub(crate) const fn queued(ac: Ac) -> u64 {
        1 << (QUEUED_SHIFT + ac as u32)
    }

    /// Whether the slot may take a new txq: no txq lives in it or is being set up, and
    /// no context holds it. Entries its earlier txqs left on lists do not matter.
    #[inline]
    pub(crate) const fn reusable(word: u64) -> bool {
        word & (LIVE | INIT | SERVING | WOKEN) == 0
    }
}

/// The generation of a txq word.
#[inline]
pub(crate) const fn gen_of(word: u64) -> u32 {
    (word >> 32) as u32
}

#[inline]
pub(crate) const fn with_gen(generation: u32, low: u64) -> u64 {
    ((generation as u64) << 32) | (low & 0xffff_ffff)
}

pub(crate) struct StationAc {
    /// DRR deficit in us (mainline's s32, widened so no sum of charges can wrap it).
    pub(crate) deficit_us: AtomicI64,
    /// See [`aql`]: pending airtime, open bit and generation in one word.
    pub(crate) aql: AtomicU64,
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
                aql: AtomicU64::new(aql::word(0, false, 0)),
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

    /// Adds a charge of `us` to `id`'s pending airtime on `ac`, if `id` is the slot's
    /// live occupant: the whole generation checked in the station word, then one
    /// compare-and-swap checks the AQL word's [`aql::tag`] and adds.
    #[inline]
    pub(crate) fn charge(&self, id: StationId, ac: Ac, us: u32) -> Result<(), ChargeRefused> {
        if !self.is_live(id) {
            return Err(ChargeRefused::NotLive);
        }
        let word = &self.ac[ac.index()].aql;
        let mut now = word.load(Ordering::Relaxed);
        loop {
            #[cfg(airtime_weakened = "charge_order")]
            let ok = aql::is_open(now);
            #[cfg(not(airtime_weakened = "charge_order"))]
            let ok = aql::is_open(now) && aql::generation(now) == aql::tag(id.generation);
            if !ok {
                return Err(ChargeRefused::NotLive);
            }
            let Some(pending) = aql::pending_us(now).checked_add(us) else {
                return Err(ChargeRefused::Overflow);
            };
            // Acquire: pairs with the Release that opened the word for this occupant, so
            // the charge lands after the reuse's reset of the slot's fields.
            match word.compare_exchange_weak(now, aql::with_pending(now, pending), Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return Ok(()),
                Err(seen) => now = seen,
            }
        }
    }

    /// Whether a token of generation `token_gen` (`full`: all 32 bits, else the 4 that
    /// survive the raw form) belongs to this slot: live or retired, of that generation.
    /// A slot is reused only with no charge outstanding, so a genuine token always finds
    /// its slot.
    #[inline]
    pub(crate) fn owns_token(&self, token_gen: u32, full: bool) -> bool {
        let word = self.word.load(Ordering::Acquire);
        matches!(sta::state(word), sta::LIVE | sta::RETIRED)
            && crate::charge::gen_matches(token_gen, full, sta::generation(word))
    }

    /// Subtracts up to `us` of released charges of generation `token_gen` from the
    /// pending airtime on `ac`, clamping at zero (A4). `None` if the word counts for
    /// another generation (only a forged token can meet that); otherwise the amount
    /// subtracted, less than `us` only if the word held less (a charge released twice),
    /// so that the caller takes exactly that from the AC's counter (A1).
    #[inline]
    pub(crate) fn release(&self, token_gen: u32, full: bool, ac: Ac, us: u32) -> Option<u32> {
        let word = &self.ac[ac.index()].aql;
        let mut now = word.load(Ordering::Relaxed);
        loop {
            if !crate::charge::gen_matches(aql::tag(token_gen), full, aql::generation(now)) {
                return None;
            }
            let pending = aql::pending_us(now);
            let removed = pending.min(us);
            if removed == 0 {
                return Some(0);
            }
            let next = aql::with_pending(now, pending - removed);
            // Weakened variant, only to prove loom models 6 and 7 catch it: a load and a
            // store instead of one read-modify-write, which loses a racing charge.
            #[cfg(airtime_weakened = "release_store")]
            {
                word.store(next, Ordering::Release);
                return Some(removed);
            }
            // Release: a reuse that Acquires this word with nothing pending sees every
            // write the releasing context made before it.
            #[cfg(not(airtime_weakened = "release_store"))]
            match word.compare_exchange_weak(now, next, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return Some(removed),
                Err(seen) => now = seen,
            }
        }
    }

    /// Pending airtime on `ac`, in us.
    #[inline]
    pub(crate) fn pending_us(&self, ac: Ac) -> u32 {
        // Relaxed: a counter read by the AQL check and statistics.
        aql::pending_us(self.ac[ac.index()].aql.load(Ordering::Relaxed))
    }

    /// Closes the AQL words of occupant `generation`: no charge is accepted after this.
    pub(crate) fn close(&self, generation: u32) {
        for a in &self.ac {
            let mut now = a.aql.load(Ordering::Relaxed);
            while aql::is_open(now) && aql::generation(now) == aql::tag(generation) {
                match a.aql.compare_exchange_weak(now, now & !aql::OPEN, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => break,
                    Err(seen) => now = seen,
                }
            }
        }
    }

    /// Whether every AQL word is closed with nothing pending: no charge can be made or
    /// is outstanding, so the slot may take a new occupant.
    pub(crate) fn drained(&self) -> bool {
        // Acquire: pairs with the releases' Release, so a reuse sees what they wrote.
        self.ac.iter().all(|a| {
            let w = a.aql.load(Ordering::Acquire);
            // Weakened variant, only to prove loom model 8 catches it: a slot retired but
            // not yet closed looks reusable, and a late charge lands in the reuse.
            let closed = cfg!(airtime_weakened = "drained_ignores_open") || !aql::is_open(w);
            closed && aql::pending_us(w) == 0
        })
    }

    /// Opens the AQL words for occupant `generation`, nothing pending.
    pub(crate) fn open(&self, generation: u32) {
        for a in &self.ac {
            // Release: a charge that Acquires the open word sees the slot's reset fields.
            a.aql.store(aql::word(generation, true, 0), Ordering::Release);
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
        a.deficit_us.load(Ordering::Relaxed) - i64::from(aql::pending_us(a.aql.load(Ordering::Relaxed)))
    }
}

/// No station (a per-interface multicast txq): index 65535, never a slot.
pub(crate) const NO_STATION: u64 = u64::MAX;

pub(crate) struct TxqSlot {
    pub(crate) word: AtomicU64,
    /// Raw [`StationId`] or [`NO_STATION`]; written before the slot is published LIVE.
    pub(crate) station: AtomicU64,
    /// TID number (0..=16); written before LIVE.
    pub(crate) tid: AtomicU32,
    /// The round number in which `next_txq` last handed this txq out (`schedule_round`).
    pub(crate) round: AtomicU64,
}

impl TxqSlot {
    pub(crate) fn new() -> TxqSlot {
        TxqSlot {
            word: AtomicU64::new(0),
            station: AtomicU64::new(NO_STATION),
            tid: AtomicU32::new(0),
            round: AtomicU64::new(0),
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
    pub(crate) fn id(&self, index: usize, word: u64) -> TxqId {
        TxqId { index: index as u16, generation: gen_of(word) }
    }
}
