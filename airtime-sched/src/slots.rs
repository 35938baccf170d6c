//! Per-station and per-txq state, all in atomics so the data path takes no lock.
//!
//! # Invariants
//! * A station slot's AQL word for an AC holds the sum of the outstanding charges made
//!   against that slot's current generation (A1). A slot is reused only when every AQL
//!   word is closed with nothing pending, so a charge can never be released against a
//!   later occupant.
//! * A station slot's per-occupant words (deficit, airtime counters, activity stamp: see
//!   [`tagged`]) carry the generation of the occupant they count for, and the data path
//!   writes one only by a compare-and-swap that finds that tag. A write checked against
//!   one occupant therefore never lands on the next, however late it comes: the next
//!   occupant's reset retags the word first. Control writes to the untagged fields
//!   (weight, limits) hold the slot instead: a slot is reused only once no control
//!   write for its occupant is in flight (the guard count in the [`sta`] word).
//! * A txq slot's word has `queued(ac)` set iff exactly one entry for the slot sits on
//!   `ac`'s list or is held by a `next_txq` call that popped it and has not yet decided
//!   (S2); `SERVING` iff one context holds a `Serving` handle for it (S3). An entry
//!   stands for the live txq iff the txq is on that AC and not `ORPHAN`; every other
//!   entry is counted dead on its list until a pop drops it.

use crate::config::AqlLimits;
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use crate::{Ac, PerAc, StationId, TxqId};

/// Station slot word: bits 0..8 the state, bits 8..32 the number of control writes in
/// flight for the occupant (the guard count: a slot is reused only when it is 0), bits
/// 32..64 the whole generation. The data path only reads it: charges and releases write
/// the per-AC [`aql`] words instead, so the word every operation reads is not also a
/// line both contexts write per frame; only control operations write it.
pub(crate) mod sta {
    pub(crate) const FREE: u64 = 0;
    /// Claimed by `add_station`, fields being written.
    pub(crate) const INIT: u64 = 1;
    pub(crate) const LIVE: u64 = 2;
    /// Removed; kept until every charge against it is released.
    pub(crate) const RETIRED: u64 = 3;

    const STATE: u64 = 0xff;
    /// One control write in flight (see `StationSlot::hold`).
    pub(crate) const GUARD: u64 = 1 << 8;
    const GUARDS: u64 = 0xff_ff_ff << 8;

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

    /// Control writes in flight.
    #[inline]
    pub(crate) const fn guards(word: u64) -> u64 {
        (word & GUARDS) >> 8
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

/// A word that counts for one occupant of a station slot (a deficit, an airtime counter,
/// an activity stamp): bits 48..64 the low 16 bits of the occupant's generation (its
/// tag), bits 0..48 the value. `add_station` retags the words of the slot it takes; the
/// data path writes one only by a compare-and-swap that finds the tag of the occupant it
/// checked in the station word, so a write racing the slot's reuse lands before the
/// reset (which overwrites it) or finds the new tag and is dropped. That costs the data
/// path no extra read-modify-write: the compare-and-swap takes the place of an atomic add.
///
/// 16 bits are enough: the tag only has to tell that occupant from those after it
/// within the few instructions between the caller's check of the station word and its
/// compare-and-swap. A wrong occupant with the same tag needs 65,536 removals and
/// additions of stations through this slot in between, each reusing it only after
/// every other free slot was (next-fit).
pub(crate) mod tagged {
    /// The value bits.
    pub(crate) const VALUE: u64 = (1 << 48) - 1;
    /// Largest and smallest signed value (a deficit): about 4.4 years of airtime either way.
    pub(crate) const MAX: i64 = (1 << 47) - 1;
    pub(crate) const MIN: i64 = -(1 << 47);

    #[inline]
    pub(crate) const fn tag(generation: u32) -> u64 {
        ((generation & 0xffff) as u64) << 48
    }

    /// Whether the word counts for occupant `generation`.
    #[inline]
    pub(crate) const fn is_for(word: u64, generation: u32) -> bool {
        word & !VALUE == tag(generation)
    }

    /// A word for occupant `generation` holding `value` (its low 48 bits).
    #[inline]
    pub(crate) const fn word(generation: u32, value: u64) -> u64 {
        tag(generation) | (value & VALUE)
    }

    #[inline]
    pub(crate) const fn value(word: u64) -> u64 {
        word & VALUE
    }

    /// The value as a signed 48-bit number.
    #[inline]
    pub(crate) const fn signed(word: u64) -> i64 {
        ((word << 16) as i64) >> 16
    }

    /// A signed value as value bits, clamped to `MIN..=MAX`.
    #[inline]
    pub(crate) const fn from_signed(value: i64) -> u64 {
        let v = if value > MAX {
            MAX
        } else if value < MIN {
            MIN
        } else {
            value
        };
        v as u64 & VALUE
    }
}

/// The activity stamp (`last_active`) as a [`tagged`] value: the time modulo 2^48 us
/// (8.9 years), never 0 except for time 0 itself, which is what a new station holds
/// (mainline zeroes `last_active`). Times are exact while the stamp is less than 2^47 us
/// (4.4 years) away from the time it is compared with, far beyond the 100 ms window.
pub(crate) mod stamp {
    use super::tagged::VALUE;

    /// The stamp of `now_us`.
    #[inline]
    pub(crate) const fn of(now_us: u64) -> u64 {
        let v = now_us & VALUE;
        if v == 0 && now_us != 0 { 1 } else { v }
    }

    /// Microseconds from the time stamped `stamp` to `now_us`, 0 if the stamp is later
    /// (times passed in by two contexts may be slightly out of order).
    #[inline]
    pub(crate) const fn since(stamp: u64, now_us: u64) -> u64 {
        if stamp == 0 {
            return now_us;
        }
        // The difference modulo 2^48 as a signed 48-bit number (negative: past VALUE / 2).
        let d = ((now_us.wrapping_sub(stamp) << 16) as i64) >> 16;
        if d < 0 { 0 } else { d as u64 }
    }
}

/// Replaces the value of `word` by `f(value)` if the word counts for occupant
/// `generation`, by one compare-and-swap that checks the tag; false, writing nothing, if
/// it counts for a later occupant.
#[inline]
fn update_for(word: &AtomicU64, generation: u32, f: impl Fn(u64) -> u64) -> bool {
    // Relaxed: counters; the tag check is in the compare-and-swap itself, which orders
    // the write against the reuse's reset of the word (its modification order).
    let mut now = word.load(Ordering::Relaxed);
    loop {
        // Weakened variant, only to prove loom models ctl1 and ctl2 catch it: the write
        // lands on whichever occupant holds the word.
        if !weakened!("untagged_write") && !tagged::is_for(now, generation) {
            return false;
        }
        let next = (now & !tagged::VALUE) | (f(tagged::value(now)) & tagged::VALUE);
        // Weakened variant, only to prove loom model 4 catches a lost update: a load and
        // a store instead of one read-modify-write.
        if weakened!("topup") {
            word.store(next, Ordering::Relaxed);
            return true;
        }
        match word.compare_exchange_weak(now, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(seen) => now = seen,
        }
    }
}

/// Sets a [`tagged`] word outright (a control operation's reset), displacing whatever
/// the data path wrote before.
///
/// A swap rather than a store: the same under the C11 model (a compare-and-swap of the
/// data path either comes before it, and is overwritten, or reads it), but loom 0.7 lets
/// a plain store fall between the read and the write of a concurrent compare-and-swap
/// (tokio-rs/loom#254), which would report races that cannot happen. It runs only on
/// the control path.
#[inline]
pub(crate) fn reset(word: &AtomicU64, value: u64) {
    // Relaxed: published by whatever publishes the reset (add_station's Release of the
    // open words; nothing for a reset of statistics).
    word.swap(value, Ordering::Relaxed);
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
    /// Listed for its station's debt alone: returned empty, and not woken since. It has
    /// no frame a refused AQL check could keep back, so adaptive AQL does not count the
    /// refusals of its visits. Set only by the return that lists it so; cleared by every
    /// wake, every take or claim, every return and the removal. Set, the txq is live and
    /// listed (its AC's QUEUED bit), and neither SERVING, WOKEN nor ORPHAN (enqueues in
    /// flight may hold it).
    pub(crate) const IDLE: u64 = 1 << 1;
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
    /// Bits 6..8: the txq's access category (mainline's numbering), written with LIVE,
    /// so that every reader of the word has the AC of the occupant it describes.
    const AC_SHIFT: u32 = 6;
    pub(crate) const AC_MASK: u64 = 0x3 << AC_SHIFT;

    /// The AC bits for `ac`.
    #[inline]
    pub(crate) const fn ac_bits(ac: Ac) -> u64 {
        (ac as u64) << AC_SHIFT
    }

    /// The AC recorded in a txq word.
    #[inline]
    pub(crate) const fn ac(word: u64) -> Ac {
        Ac::from_low_bits((word & AC_MASK) >> AC_SHIFT)
    }

    /// Bits 8..12: one entry of this slot is on AC `i`'s list (or popped from it and
    /// being looked at). Per AC, because a removed txq's entry may still be on its old
    /// AC's list when the slot takes a txq of another AC (S2 is per list).
    const QUEUED_SHIFT: u32 = 8;
    pub(crate) const QUEUED_ANY: u64 = 0xf << QUEUED_SHIFT;

    /// The QUEUED bit of `ac`'s list.
    #[inline]
    pub(crate) const fn queued(ac: Ac) -> u64 {
        1 << QUEUED_SHIFT.wrapping_add(ac as u32)
    }

    /// The txq's frames are kept by a [`TxqTable`](crate::TxqTable) in the slot's cell:
    /// after the txq is removed, the slot is reused only once the table has handed that
    /// queue back (`TxqTable::take_removed`), so no frame of a removed txq can meet the
    /// next occupant.
    pub(crate) const KEPT: u64 = 1 << 13;

    /// Bits 16..32: enqueues in flight into the table's intake for this txq (each holds
    /// the slot against reuse from its check of LIVE to its wake; see
    /// `Scheduler::hold_txq`).
    pub(crate) const PRODUCER: u64 = 1 << 16;
    pub(crate) const PRODUCERS: u64 = 0xffff << 16;

    /// Whether the slot may take a new txq: no txq lives in it or is being set up, no
    /// context holds it, no enqueue is in flight, and a table has taken back the queue
    /// of the last one. Entries its earlier txqs left on lists do not matter.
    #[inline]
    pub(crate) const fn reusable(word: u64) -> bool {
        word & (LIVE | INIT | SERVING | WOKEN | KEPT | PRODUCERS) == 0
    }

    /// Whether the slot holds a removed txq that some context has not let go of yet
    /// (a server, a table's hand-back, an enqueue's hold): not reusable now, but it will
    /// be without a control operation.
    #[inline]
    pub(crate) const fn draining(word: u64) -> bool {
        word & (LIVE | INIT) == 0 && !reusable(word)
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

/// One 64-byte line per station and AC: charges and releases of two stations (or two ACs
/// of one) from two contexts never write the same line (see `cache_line`).
#[repr(align(64))]
pub(crate) struct StationAc {
    /// DRR deficit in us, signed, [`tagged`] (mainline's s32, widened to 48 bits and
    /// saturating there, so no sum of charges can wrap it).
    pub(crate) deficit: AtomicU64,
    /// See [`aql`]: pending airtime, open bit and generation in one word.
    pub(crate) aql: AtomicU64,
    /// Packed [`AqlLimits`] (one word, so readers never see half a change). Written by
    /// control operations only, under the slot's guard or following the default.
    pub(crate) limits: AtomicU64,
    /// Last time this AC had frames scheduled (`last_active`), a [`stamp`], [`tagged`].
    pub(crate) last_active: AtomicU64,
    /// Registered airtime statistics in us, [`tagged`] (saturating at 2^48 us).
    /// Scratch of the lap skip (`scheduler::drr`): which skip last counted this
    /// station's visits, and what it counted. Only the skip's own context reads it back.
    pub(crate) lap_stamp: AtomicU64,
    pub(crate) tx_airtime: AtomicU64,
    pub(crate) rx_airtime: AtomicU64,
    /// Adaptive AQL state (`scheduler::adaptive_aql`): the learnt limit, the window's
    /// slack, the "held back by its limit" flag and the occupant's tag, in one word.
    pub(crate) adaptive: AtomicU64,
}

pub(crate) struct StationSlot {
    /// See [`sta`].
    pub(crate) word: AtomicU64,
    /// Written by control operations only, under the slot's guard.
    pub(crate) weight: AtomicU32,
    pub(crate) ac: PerAc<StationAc>,
}

impl StationSlot {
    pub(crate) fn new() -> StationSlot {
        StationSlot {
            word: AtomicU64::new(sta::FREE),
            weight: AtomicU32::new(256),
            ac: PerAc::from_fn(|_| StationAc {
                deficit: AtomicU64::new(tagged::word(0, 0)),
                aql: AtomicU64::new(aql::word(0, false, 0)),
                limits: AtomicU64::new(AqlLimits::DEFAULT.pack()),
                last_active: AtomicU64::new(tagged::word(0, 0)),
                tx_airtime: AtomicU64::new(tagged::word(0, 0)),
                rx_airtime: AtomicU64::new(tagged::word(0, 0)),
                lap_stamp: AtomicU64::new(0),
                adaptive: AtomicU64::new(crate::scheduler::adaptive_aql::fresh(0)),
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

    /// Whether `id` is the slot's removed occupant, its charges not all released yet.
    #[inline]
    pub(crate) fn is_retired(&self, id: StationId) -> bool {
        let word = self.word.load(Ordering::Acquire);
        sta::state(word) == sta::RETIRED && sta::generation(word) == id.generation
    }

    /// Whether `id` names a station this slot held and that was removed: its retired
    /// occupant, or an earlier one (the slot was reused since). Generations count up
    /// from 1 with each occupant (0 was never issued); a handle from before the count
    /// wrapped, 2^32 occupants ago, is taken for a forged one.
    #[inline]
    pub(crate) fn has_departed(&self, id: StationId) -> bool {
        let word = self.word.load(Ordering::Acquire);
        let current = sta::generation(word);
        id.generation != 0
            && (id.generation < current || (id.generation == current && sta::state(word) == sta::RETIRED))
    }

    /// `id`'s pending airtime on `ac`, in us, while `id` is the slot's live or retired
    /// occupant; 0 once the slot holds a later one (it was reused only when drained).
    #[inline]
    pub(crate) fn pending_of(&self, id: StationId, ac: Ac) -> u32 {
        // Relaxed: a counter; the tag says whose it is.
        let w = self.ac[ac].aql.load(Ordering::Relaxed);
        if aql::generation(w) == aql::tag(id.generation) { aql::pending_us(w) } else { 0 }
    }

    /// Whether `id`, removed, has nothing pending and can take no charge: true once
    /// every AQL word is closed and empty, or the slot holds a later occupant.
    pub(crate) fn departed_drained(&self, id: StationId) -> bool {
        let word = self.word.load(Ordering::Acquire);
        sta::generation(word) != id.generation || self.drained()
    }

    /// Adds a charge of `us` to `id`'s pending airtime on `ac`, if `id` is the slot's
    /// live occupant: the whole generation checked in the station word, then one
    /// compare-and-swap checks the AQL word's [`aql::tag`] and adds.
    #[inline]
    pub(crate) fn charge(&self, id: StationId, ac: Ac, us: u32) -> Result<(), ChargeRefused> {
        if !self.is_live(id) {
            return Err(ChargeRefused::NotLive);
        }
        let word = &self.ac[ac].aql;
        let mut now = word.load(Ordering::Relaxed);
        loop {
            let ok =
                aql::is_open(now) && (weakened!("charge_order") || aql::generation(now) == aql::tag(id.generation));
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
        self.release_seen(token_gen, full, ac, us).map(|(removed, _, _)| removed)
    }

    /// [`release`](Self::release), also returning the pending airtime it left, in us
    /// (what adaptive AQL learns from: `scheduler::adaptive_aql`), and the [`aql::tag`]
    /// of the occupant it released for (the whole of it, even for a raw token's four
    /// bits: the word it subtracted from counts for that occupant).
    #[inline]
    pub(crate) fn release_seen(&self, token_gen: u32, full: bool, ac: Ac, us: u32) -> Option<(u32, u32, u32)> {
        let word = &self.ac[ac].aql;
        let mut now = word.load(Ordering::Relaxed);
        loop {
            if !crate::charge::gen_matches(aql::tag(token_gen), full, aql::generation(now)) {
                return None;
            }
            let pending = aql::pending_us(now);
            let removed = pending.min(us);
            if removed == 0 {
                return Some((0, pending, aql::generation(now)));
            }
            // removed <= pending.
            let next = aql::with_pending(now, pending.wrapping_sub(removed));
            // Weakened variant, only to prove loom models 6 and 7 catch it: a load and a
            // store instead of one read-modify-write, which loses a racing charge.
            if weakened!("release_store") {
                word.store(next, Ordering::Release);
                return Some((removed, pending.wrapping_sub(removed), aql::generation(now)));
            }
            // Release: a reuse that Acquires this word with nothing pending sees every
            // write the releasing context made before it.
            match word.compare_exchange_weak(now, next, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return Some((removed, pending.wrapping_sub(removed), aql::generation(now))),
                Err(seen) => now = seen,
            }
        }
    }

    /// Pending airtime on `ac`, in us.
    #[inline]
    pub(crate) fn pending_us(&self, ac: Ac) -> u32 {
        // Relaxed: a counter read by the AQL check and statistics.
        aql::pending_us(self.ac[ac].aql.load(Ordering::Relaxed))
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
            let closed = weakened!("drained_ignores_open") || !aql::is_open(w);
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
        AqlLimits::unpack(self.ac[ac].limits.load(Ordering::Relaxed))
    }

    #[inline]
    pub(crate) fn weight(&self) -> u32 {
        // Relaxed: a weight change takes effect at the next top-up, whichever that is.
        self.weight.load(Ordering::Relaxed)
    }

    /// The stored deficit on `ac`, in us.
    #[inline]
    pub(crate) fn deficit_us(&self, ac: Ac) -> i64 {
        // Relaxed: a counter.
        tagged::signed(self.ac[ac].deficit.load(Ordering::Relaxed))
    }

    /// Effective deficit: stored deficit minus airtime already in flight (`ieee80211_sta_deficit`).
    #[inline]
    pub(crate) fn effective_deficit(&self, ac: Ac) -> i64 {
        // A 48-bit signed deficit minus a u32: far inside i64.
        self.deficit_us(ac).wrapping_sub(i64::from(self.pending_us(ac)))
    }

    /// Registered tx and rx airtime on `ac`, in us.
    #[inline]
    pub(crate) fn airtime_us(&self, ac: Ac) -> (u64, u64) {
        let a = &self.ac[ac];
        // Relaxed: statistics.
        (tagged::value(a.tx_airtime.load(Ordering::Relaxed)), tagged::value(a.rx_airtime.load(Ordering::Relaxed)))
    }

    /// Microseconds since `ac` last had frames scheduled, as seen at `now_us`.
    #[inline]
    pub(crate) fn since_active_us(&self, ac: Ac, now_us: u64) -> u64 {
        // Relaxed: a time stamp; nothing is published with it.
        stamp::since(tagged::value(self.ac[ac].last_active.load(Ordering::Relaxed)), now_us)
    }

    /// Sets every per-occupant word to its initial value for occupant `generation`
    /// (`add_station`, before the occupant is published): deficits at `weight`, airtime
    /// counters at 0, activity stamped at time 0.
    pub(crate) fn reset_for(&self, generation: u32, weight: u16) {
        for a in &self.ac {
            reset(&a.deficit, tagged::word(generation, tagged::from_signed(i64::from(weight))));
            reset(&a.last_active, tagged::word(generation, 0));
            reset(&a.tx_airtime, tagged::word(generation, 0));
            reset(&a.rx_airtime, tagged::word(generation, 0));
            reset(&a.adaptive, crate::scheduler::adaptive_aql::fresh(generation));
        }
    }

    /// Takes a guard on the slot for a control write to occupant `id`: until
    /// [`unhold`](Self::unhold), the slot is not reused, so the write cannot reach a later
    /// occupant. False, taking nothing, if `id` is not the live occupant.
    pub(crate) fn hold(&self, id: StationId) -> bool {
        let mut word = self.word.load(Ordering::Relaxed);
        loop {
            if sta::state(word) != sta::LIVE || sta::generation(word) != id.generation {
                return false;
            }
            // Weakened variant, only to prove loom models ctl4 and ctl5 catch it: the
            // live check alone, so the slot can be reused under the write.
            if weakened!("unguarded_control") {
                return true;
            }
            // Acquire: the write that follows sees the fields add_station published.
            // One guard per control call in progress: the 24-bit count cannot fill.
            match self.word.compare_exchange_weak(
                word,
                word.wrapping_add(sta::GUARD),
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(seen) => word = seen,
            }
        }
    }

    /// Drops a guard taken by [`hold`](Self::hold).
    pub(crate) fn unhold(&self) {
        if weakened!("unguarded_control") {
            return;
        }
        // Release: the reuse that finds no guard left (its compare-and-swap Acquires the
        // word) resets the fields after the write made under this guard.
        self.word.fetch_sub(sta::GUARD, Ordering::Release);
    }
}

/// A station slot as seen by a caller that checked its occupant: what
/// `Scheduler::station_slot` returns. Reads go to the slot (`Deref`); the writes here
/// land only while the slot still holds that occupant, however late they come (see
/// [`tagged`]).
#[derive(Clone, Copy)]
pub(crate) struct LiveStation<'a> {
    slot: &'a StationSlot,
    generation: u32,
}

impl core::ops::Deref for LiveStation<'_> {
    type Target = StationSlot;

    #[inline]
    fn deref(&self) -> &StationSlot {
        self.slot
    }
}

impl<'a> LiveStation<'a> {
    /// `slot` as seen by its occupant `generation` (checked by the caller).
    #[inline]
    pub(crate) fn new(slot: &'a StationSlot, generation: u32) -> LiveStation<'a> {
        LiveStation { slot, generation }
    }

    /// The occupant's generation.
    #[inline]
    pub(crate) fn generation(self) -> u32 {
        self.generation
    }

    /// Adds `amount` (negative: charges) to the deficit on `ac`, saturating. One
    /// read-modify-write, so a concurrent top-up or `register_airtime` charge is never
    /// lost (loom model 4), and tag-checked, so it never lands on a later occupant
    /// (loom models ctl1, ctl2).
    #[inline]
    pub(crate) fn top_up(self, ac: Ac, amount: i64) {
        update_for(&self.slot.ac[ac].deficit, self.generation, |v| {
            tagged::from_signed(tagged::signed(v).saturating_add(amount))
        });
    }

    /// Tops `ac`'s deficit up by `weight` if the effective deficit (deficit minus
    /// pending) is negative, in one compare-and-swap from the deficit it read: a context
    /// whose read went stale (another context's top-up of the same debt, a registration)
    /// reads again, so two contexts meeting one debt top it up once (loom model 21), as
    /// mainline does under its AC lock. Whether the debt was there (the caller rotates)
    /// and, if so, whether the top-up paid it.
    #[inline]
    pub(crate) fn top_up_debt(self, ac: Ac, weight: i64) -> TopUp {
        self.top_up_debt_if(ac, weight, || true)
    }

    /// [`top_up_debt`](Self::top_up_debt) for a caller that found this station through
    /// a txq slot it may no longer hold: `ours` says, once a debt is found and before
    /// anything is written, whether the station was read from the txq the caller means
    /// (`Changed` if not: nothing topped up). Only the debt's path pays for the question.
    #[inline]
    pub(crate) fn top_up_debt_if(self, ac: Ac, weight: i64, ours: impl FnOnce() -> bool) -> TopUp {
        let mut ours = Some(ours);
        // Weakened variant, only to prove loom model 21 catches it: the check and the
        // top-up as two steps, so two contexts can both top up one debt.
        if weakened!("topup_stale_read") {
            let debt = self.effective_deficit(ac) < 0;
            if debt {
                self.top_up(ac, weight);
            }
            return if debt { TopUp::Owed } else { TopUp::NoDebt };
        }
        let word = &self.slot.ac[ac].deficit;
        let mut now = word.load(Ordering::Relaxed);
        loop {
            // Weakened variant, only to prove loom model ctl2 catches it: the top-up lands
            // on whichever occupant holds the word.
            if !weakened!("untagged_write") && !tagged::is_for(now, self.generation) {
                // Reused meanwhile: nothing to top up for this occupant; rotate it.
                return TopUp::Owed;
            }
            let deficit = tagged::signed(tagged::value(now));
            let effective = deficit.wrapping_sub(i64::from(self.pending_us(ac))); // 48 bits minus 32
            if effective >= 0 {
                return TopUp::NoDebt;
            }
            if ours.take().is_some_and(|ours| !ours()) {
                return TopUp::Changed;
            }
            let next = (now & !tagged::VALUE) | (tagged::from_signed(deficit.saturating_add(weight)) & tagged::VALUE);
            // Weakened variant, only to prove loom model 4 catches a lost update.
            if weakened!("topup") {
                word.store(next, Ordering::Relaxed);
                return TopUp::Owed;
            }
            // Relaxed: as in `update_for`; the compare-and-swap is what makes the read
            // and the top-up one step.
            match word.compare_exchange_weak(now, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return if effective.saturating_add(weight) >= 0 { TopUp::Paid } else { TopUp::Owed },
                Err(seen) => now = seen,
            }
        }
    }

    /// Adds registered airtime to the statistics on `ac`, saturating (a value of 48 bits
    /// plus 32 cannot wrap 64).
    #[inline]
    pub(crate) fn add_airtime(self, ac: Ac, tx_us: u32, rx_us: u32) {
        let a = &self.slot.ac[ac];
        for (counter, us) in [(&a.tx_airtime, tx_us), (&a.rx_airtime, rx_us)] {
            if us != 0 {
                update_for(counter, self.generation, |v| v.wrapping_add(u64::from(us)).min(tagged::VALUE));
            }
        }
    }

    /// Stamps `ac` active at `now_us` unless it was stamped less than `every_us` before.
    /// A load and, at most once per `every_us`, a compare-and-swap that checks the tag
    /// (loom model ctl3). A compare-and-swap that loses to another context's stamp
    /// tries again while its own time is still `every_us` later than the one it finds,
    /// so the stamp never stays more than `every_us` behind the latest time offered
    /// (a context preempted between reading its time and stamping cannot leave its old
    /// time over a later one for longer than that).
    #[inline]
    pub(crate) fn stamp_active(self, ac: Ac, now_us: u64, every_us: u64) {
        let last = &self.slot.ac[ac].last_active;
        let mut word = last.load(Ordering::Relaxed);
        loop {
            if stamp::since(tagged::value(word), now_us) < every_us {
                return;
            }
            // Weakened variant, only to prove loom model ctl3 catches it: a plain store
            // into whichever occupant holds the word (what this was before the tag).
            if weakened!("untagged_stamp") {
                last.store((word & !tagged::VALUE) | stamp::of(now_us), Ordering::Relaxed);
                return;
            }
            if !tagged::is_for(word, self.generation) {
                // The slot was reused: nothing to stamp for this occupant.
                return;
            }
            // Relaxed: a time stamp; nothing is published with it.
            match last.compare_exchange_weak(
                word,
                tagged::word(self.generation, stamp::of(now_us)),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                // Weakened variant, only to prove loom model ctl10 catches it: a lost
                // compare-and-swap gives up, leaving an older time over a later one.
                Err(_) if weakened!("stamp_no_retry") => return,
                Err(seen) => word = seen,
            }
        }
    }
}

/// What [`LiveStation::top_up_debt`] found.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum TopUp {
    /// No debt: nothing topped up.
    NoDebt,
    /// A debt, topped up by the weight and paid: the station is out of debt now.
    Paid,
    /// A debt, topped up by the weight and still owed (or the slot was reused).
    Owed,
    /// A debt, but the caller's txq left the slot it found the station through: nothing
    /// topped up ([`LiveStation::top_up_debt_if`]).
    Changed,
}

/// The orderings of a txq slot's occupant fields (station, TID, round stamp): see
/// [`TxqSlot::station`]. Weakened variant `station_relaxed`, only to prove loom models
/// 24 and 25 catch it: both Relaxed, so a reader may read a newcomer's field and still
/// see the slot's old word on its second look.
#[inline(always)]
pub(crate) fn occupant_load() -> Ordering {
    if weakened!("station_relaxed") { Ordering::Relaxed } else { Ordering::Acquire }
}
/// See [`occupant_load`].
#[inline(always)]
pub(crate) fn occupant_store() -> Ordering {
    if weakened!("station_relaxed") { Ordering::Relaxed } else { Ordering::Release }
}

/// No station (a per-interface multicast txq): index 65535, never a slot.
pub(crate) const NO_STATION: u64 = u64::MAX;

/// One 64-byte line per txq: one context's wake or take of a txq never writes the line of
/// another txq (see `cache_line`).
#[repr(align(64))]
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

    /// The occupant's station. Written before the Release that published LIVE, which
    /// every reader Acquired through the word; but a reader that saw one occupant live
    /// may read the station of the next, stored after that occupant's removal and the
    /// next one's claim of the slot. Acquire, paired with the store's Release (`add_txq`):
    /// a reader that reads the next occupant's station then sees its claim of the word,
    /// so a take or a check of the generation it read the word at fails, and nothing it
    /// decided on the wrong station stands. (Free on x86; without it a weakly ordered CPU
    /// may show the station before the claim.)
    #[inline]
    pub(crate) fn station(&self) -> Option<StationId> {
        let raw = self.station.load(occupant_load());
        (raw != NO_STATION).then(|| StationId::from_raw(raw))
    }

    /// The occupant's TID, ordered as [`station`](Self::station) is.
    #[inline]
    pub(crate) fn tid(&self) -> u8 {
        self.tid.load(occupant_load()) as u8
    }

    #[inline]
    pub(crate) fn id(&self, index: usize, word: u64) -> TxqId {
        TxqId { index: index as u16, generation: gen_of(word) }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// `stamp::since` as it was written first: the difference modulo 2^48, and 0 past
    /// half the range (a stamp later than now).
    fn since_reference(stamp: u64, now_us: u64) -> u64 {
        if stamp == 0 {
            return now_us;
        }
        let d = now_us.wrapping_sub(stamp) & tagged::VALUE;
        if d > tagged::VALUE / 2 { 0 } else { d }
    }

    #[test]
    #[cfg_attr(miri, ignore = "4 million pairs take a quarter of an hour in the interpreter; safe integer code only")]
    fn since_is_the_reference() {
        let edges = [0, 1, 2, (1 << 47) - 1, 1 << 47, (1 << 47) + 1, tagged::VALUE - 1, tagged::VALUE, 1 << 48];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut values: alloc::vec::Vec<u64> = edges.iter().flat_map(|&e| [e, e.wrapping_add(1 << 48)]).collect();
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x);
        }
        for &now in &values {
            for &s in &values {
                let stamp = s & tagged::VALUE;
                assert_eq!(stamp::since(stamp, now), since_reference(stamp, now), "stamp {stamp:#x} now {now:#x}");
            }
        }
    }
}
