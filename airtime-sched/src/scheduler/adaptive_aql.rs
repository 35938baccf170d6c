//! Adaptive AQL: a per-station, per-AC limit learnt from completions, in airtime.
//!
//! A fixed AQL limit is a compromise: large enough for the slowest station to keep the
//! hardware busy across the turnaround between a completion and the driver's next
//! frames reaching it, it queues many milliseconds of a fast station's traffic below
//! the AQM. This module learns, per station and AC, the pending airtime the station
//! needs, the way BQL's dynamic queue limits (`dql_completed` in
//! `lib/dynamic_queue_limits.c`) learn bytes for a NIC ring:
//!
//! * **Grow** when the hardware is about to run dry while the station was held back: a
//!   completion (a release, or one station's part of a [`release_batch`] pass) leaves
//!   the station no more pending on the AC than that completion released, although its
//!   limit refused it since the last adjustment (its txq had frames the limit kept
//!   back): one more such completion and the hardware idles until the driver's next
//!   frames reach it. The limit grows by half (at least 4 us), up to the configured
//!   limit. A round's refused visit of a txq listed only for its station's debt
//!   (returned empty and kept listed, as mainline's `ieee80211_txq_keep_active` keeps
//!   it, and not woken since) keeps no frame back, and does not count.
//! * **Shrink** while there was slack: over a hold window of [`HOLD_US`] of the
//!   station's released airtime with no growth, the least pending airtime a completion
//!   left beyond one more such completion is airtime the hardware never needed. At the
//!   window's end the limit loses it, at most an eighth of the limit, down to the floor.
//!
//! A driver that releases each frame on its own shows a completion of one frame: the
//! growth test is then "at most one such frame pending". Releasing a completion pass with
//! [`release_batch`] lets the rule see a whole aggregate.
//!
//! [`release_batch`]: crate::Scheduler::release_batch
//!
//! The window is counted in the station's own released airtime, not in time, so the
//! scheduler still reads no clock, and a station sending little adjusts slowly while a
//! busy one adjusts every [`HOLD_US`] of its airtime. A rate drop shows at once as a run
//! dry (grow); a rate rise as slack, one window later (shrink).
//!
//! The learnt limit `L` bounds the configured high limit (after TX_NO_PUSHBACK
//! scaling); the low limit scales with it (`low * L / high`, at least 1 us when the
//! configured low is not 0), so the threshold rule keeps its meaning, `L` stays in
//! `[min(floor, high), high]`, and a station with nothing pending may always send
//! whenever its configured limits would let it (no starvation). A station at its
//! configured limit (it never shrank, or grew back) holds none learnt, so it follows
//! the configured limit when that changes, as with adaptive AQL off; a learnt limit
//! below it stays until the rule moves it.
//!
//! Concurrency: one word per (station, AC) ([`StationAc::adaptive`]), written by a
//! compare-and-swap at each release (completion context) and by a compare-and-swap
//! setting the limited flag when the station check refuses (any context), read with one
//! relaxed load by the check. Nothing is published with it; a stale limit costs one
//! adjustment, never a charge. The word carries the low 8 bits of its occupant's
//! generation, as the slot's other per-occupant words do (`slots::tagged`): both writes
//! check it in their compare-and-swap, so a release or a refusal of a removed station
//! that lands after the slot's reuse (which retags the word) is dropped instead of
//! teaching the next occupant the old one's lesson (its window, its refusal). The loom
//! model `tests/loom_adaptive.rs` checks that a refusal racing a release is never lost,
//! that the limit stays in its bounds, that neither write of a removed station
//! reaches the slot's next occupant, and that a wake racing the empty return of a txq
//! kept listed for its debt makes that txq's refusals count again.
//!
//! [`StationAc::adaptive`]: crate::slots::StationAc

use crate::config::AqlLimits;
use crate::sync::{AtomicU64, Ordering};

/// Released airtime per hold window, in us: 100 ms of the station's own airtime. As
/// DQL's hold time (one second) spans many completions, so does this: an A-MPDU lasts at
/// most 5.484 ms (VHT's `aPPDUMaxTime`, IEEE 802.11-2020 Table 21-29), so a window
/// holds at least 18 completions, and the least slack seen over it is a worst case,
/// not one aggregate's.
pub(crate) const HOLD_US: u32 = 100_000;

/// The largest limit below the configured one the word learns, in us (about one
/// second). A station at its configured limit holds none learnt, so it applies the
/// configured limit whatever its size, and follows it when it changes. A configured
/// limit above this one is the only case where a shrink gives back more than an eighth
/// (to this limit at once).
pub(crate) const LIMIT_MAX_US: u32 = (1 << 20) - 1;

/// Layout: bits 0..20 the learnt limit (0: none, the configured one applies), 20..38 the least slack seen in the
/// window, 38..55 the window's released airtime (below [`HOLD_US`] < 2^17 when stored),
/// bit 55 the limited flag, 56..64 the occupant's tag.
const FIELD: u64 = (1 << 20) - 1;
const MIN_SHIFT: u32 = 20;
/// The slack field: more than any give (an eighth of [`LIMIT_MAX_US`] is below 2^17).
const MIN_FIELD: u64 = (1 << 18) - 1;
const WINDOW_SHIFT: u32 = 38;
const WINDOW_FIELD: u64 = (1 << 17) - 1;
/// The station's limit refused it since the last adjustment.
pub(crate) const LIMITED: u64 = 1 << 55;
const TAG_SHIFT: u32 = 56;
const TAG: u64 = 0xff << TAG_SHIFT;
/// "No release seen in this window" in the slack field.
const NO_SLACK: u64 = MIN_FIELD;

const _: () = assert!((HOLD_US as u64) <= WINDOW_FIELD && ((LIMIT_MAX_US / 8) as u64) < MIN_FIELD);

/// The tag of occupant `generation` (its low 8 bits): a late write for an earlier
/// occupant meets the same tag only if the slot was reused 256 times between its check
/// and its compare-and-swap, a few instructions apart, and even then only moves a
/// heuristic's limit within its bounds.
#[inline]
const fn tag(generation: u32) -> u64 {
    ((generation & 0xff) as u64) << TAG_SHIFT
}

/// Whether `word` counts for occupant `generation`.
#[inline]
fn is_for(word: u64, generation: u32) -> bool {
    // Weakened variant, only to prove loom model adaptive2 catches it: every write lands
    // on whichever occupant holds the word.
    weakened!("adaptive_untagged") || word & TAG == tag(generation)
}

/// A fresh word for occupant `generation`: no learnt limit yet (the configured one
/// applies), an empty window.
#[inline]
pub(crate) const fn fresh(generation: u32) -> u64 {
    tag(generation) | NO_SLACK << MIN_SHIFT
}

/// The learnt limit of `word`, in us, within `[min(floor, ceiling), ceiling]`; the
/// ceiling (the configured high limit) while nothing is learnt.
#[inline]
pub(crate) const fn limit_us(word: u64, floor_us: u32, ceiling_us: u32) -> u32 {
    let floor = if floor_us < ceiling_us { floor_us } else { ceiling_us };
    let l = (word & FIELD) as u32;
    if l == 0 || l > ceiling_us {
        ceiling_us
    } else if l < floor {
        floor
    } else {
        l
    }
}

/// The limit field for a limit of `limit_us` under `ceiling_us`: 0 (none learnt) at or
/// above the ceiling, so that the station follows its configured limit; at most
/// [`LIMIT_MAX_US`] below it.
#[inline]
const fn learnt(limit_us: u32, ceiling_us: u32) -> u32 {
    if limit_us >= ceiling_us {
        0
    } else if limit_us > LIMIT_MAX_US {
        LIMIT_MAX_US
    } else {
        limit_us
    }
}

/// The configured limits bounded by the learnt limit `limit_us`: high at most it, low
/// scaled with it, and never 0 unless configured 0.
#[inline]
pub(crate) const fn bounded(limits: AqlLimits, limit_us: u32) -> AqlLimits {
    let high = limits.high_us();
    if limit_us >= high {
        return limits;
    }
    let low = limits.low_us();
    // low <= high, so the quotient is at most limit_us (high > limit_us, so not 0).
    let mut scaled = match (low as u64).wrapping_mul(limit_us as u64).checked_div(high as u64) {
        Some(v) => v as u32,
        None => return limits,
    };
    if scaled == 0 && low != 0 {
        scaled = 1;
    }
    // scaled <= limit_us: never inverted.
    match AqlLimits::new(scaled, limit_us) {
        Ok(l) => l,
        Err(_) => limits,
    }
}

/// The word after a release that left `pending_after_us` pending and released
/// `released_us`, for limits in `[floor_us, ceiling_us]`.
#[inline]
pub(crate) const fn after_release(
    word: u64,
    pending_after_us: u32,
    released_us: u32,
    floor_us: u32,
    ceiling_us: u32,
) -> u64 {
    let l = limit_us(word, floor_us, ceiling_us);
    let floor = if floor_us < ceiling_us { floor_us } else { ceiling_us };
    if pending_after_us < released_us.saturating_add(1) && word & LIMITED != 0 {
        // Left with no more than this completion released (at most one frame, for one
        // frame's release) while held back: one more such completion and the hardware
        // runs dry before the driver's next frames reach it. Grow, and start a new window.
        let step = if l / 2 > 4 { l / 2 } else { 4 };
        return pack(word, learnt(l.saturating_add(step), ceiling_us), NO_SLACK, 0, false);
    }
    // Slack: what the release left beyond one more such completion.
    let slack = pending_after_us.saturating_sub(released_us) as u64;
    let seen = if slack > MIN_FIELD - 1 { MIN_FIELD - 1 } else { slack };
    let old_min = (word >> MIN_SHIFT) & MIN_FIELD;
    let min = if seen < old_min { seen } else { old_min };
    // The field's bits plus 32: no carry out of 64.
    let window = ((word >> WINDOW_SHIFT) & WINDOW_FIELD).wrapping_add(released_us as u64);
    if window >= HOLD_US as u64 {
        // A window without running dry is over: give back the slack it never needed,
        // at most an eighth, so that a wrong guess costs one turnaround, not many.
        let eighth = (l / 8) as u64;
        let give = if min < eighth { min } else { eighth } as u32;
        let shrunk = if l.saturating_sub(floor) > give { l.saturating_sub(give) } else { floor };
        return pack(word, learnt(shrunk, ceiling_us), NO_SLACK, 0, false);
    }
    // Nothing learnt by this release: the limit field stays as it was (none learnt
    // stays none, following the configured limit).
    pack(word, (word & FIELD) as u32, min, window, word & LIMITED != 0)
}

/// A word of `word`'s occupant (its tag kept) holding the fields given.
#[inline]
const fn pack(word: u64, limit_us: u32, min: u64, window: u64, limited: bool) -> u64 {
    (word & TAG)
        | (limit_us as u64 & FIELD)
        | (min & MIN_FIELD) << MIN_SHIFT
        | (if window > WINDOW_FIELD { WINDOW_FIELD } else { window }) << WINDOW_SHIFT
        | if limited { LIMITED } else { 0 }
}

/// Records a release of occupant `generation` in `word` (one compare-and-swap loop);
/// nothing if the slot was reused meanwhile.
#[inline]
pub(crate) fn record_release(
    word: &AtomicU64,
    generation: u32,
    pending_after_us: u32,
    released_us: u32,
    floor_us: u32,
    ceiling_us: u32,
) {
    // Relaxed: a heuristic's state; nothing else is read through it.
    let mut now = word.load(Ordering::Relaxed);
    loop {
        if !is_for(now, generation) {
            return;
        }
        let next = after_release(now, pending_after_us, released_us, floor_us, ceiling_us);
        if next == now {
            return;
        }
        // Weakened variant, only to prove loom model adaptive1 catches it: a load and a
        // store, which loses a limited flag set between them.
        if weakened!("adaptive_store") {
            word.store(next, Ordering::Relaxed);
            return;
        }
        match word.compare_exchange_weak(now, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return,
            Err(seen) => now = seen,
        }
    }
}

/// Records that occupant `generation`'s limit refused it: a load, and a
/// compare-and-swap only when the flag is not set yet, so a station refused again and
/// again does not write the line; nothing if the slot was reused meanwhile.
// Out of line: the check's common path (allowed, or adaptive AQL off) stays as it was.
#[cold]
#[inline(never)]
pub(crate) fn record_refusal(word: &AtomicU64, generation: u32) {
    // Relaxed: as in `record_release`; the tag check is in the compare-and-swap, which
    // orders the write against the reuse's reset of the word (its modification order).
    let mut now = word.load(Ordering::Relaxed);
    while now & LIMITED == 0 && is_for(now, generation) {
        match word.compare_exchange_weak(now, now | LIMITED, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return,
            Err(seen) => now = seen,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLOOR: u32 = 500;
    const CEIL: u32 = 12_000;

    fn limited(w: u64) -> u64 {
        w | LIMITED
    }

    #[test]
    fn fresh_word_applies_configured_limit() {
        assert_eq!(limit_us(fresh(7), FLOOR, CEIL), CEIL);
        assert_eq!(bounded(AqlLimits::DEFAULT, CEIL), AqlLimits::DEFAULT);
    }

    #[test]
    fn bounded_scales_low_and_never_zero() {
        let l = bounded(AqlLimits::DEFAULT, 1200);
        assert_eq!((l.low_us(), l.high_us()), (500, 1200));
        let l = bounded(AqlLimits::new(1, 12_000).unwrap(), 4);
        assert_eq!((l.low_us(), l.high_us()), (1, 4));
        let l = bounded(AqlLimits::new(0, 12_000).unwrap(), 4);
        assert_eq!((l.low_us(), l.high_us()), (0, 4));
    }

    #[test]
    fn dry_while_limited_grows_by_half_up_to_ceiling() {
        let w = pack(0, 1000, NO_SLACK, 0, true);
        // Less left than the completion released: grow.
        let w = after_release(w, 99, 100, FLOOR, CEIL);
        assert_eq!(limit_us(w, FLOOR, CEIL), 1500);
        assert_eq!(w & LIMITED, 0);
        // Not limited: running dry is just no traffic.
        assert_eq!(limit_us(after_release(w, 0, 100, FLOOR, CEIL), FLOOR, CEIL), 1500);
        let w = pack(0, 10_000, NO_SLACK, 0, true);
        assert_eq!(limit_us(after_release(w, 0, 100, FLOOR, CEIL), FLOOR, CEIL), CEIL);
    }

    #[test]
    fn slack_over_a_window_shrinks_by_at_most_an_eighth_down_to_floor() {
        // 4000 left, 1000 released each time: 3000 of slack, more than an eighth of 12000.
        let mut w = fresh(7);
        for _ in 0..(HOLD_US / 1000) {
            w = after_release(limited(w), 4000, 1000, FLOOR, CEIL);
        }
        assert_eq!(limit_us(w, FLOOR, CEIL), CEIL - CEIL / 8);
        // 100 of slack: exactly that.
        let mut w = pack(0, 8000, NO_SLACK, 0, false);
        for _ in 0..(HOLD_US / 1000) {
            w = after_release(w, 1100, 1000, FLOOR, CEIL);
        }
        assert_eq!(limit_us(w, FLOOR, CEIL), 7900);
        let mut w = pack(0, 520, NO_SLACK, 0, false);
        for _ in 0..(HOLD_US / 10) {
            w = after_release(w, 500, 10, FLOOR, CEIL);
        }
        assert_eq!(limit_us(w, FLOOR, CEIL), FLOOR);
    }

    #[test]
    fn floor_above_ceiling_keeps_configured() {
        let w = pack(0, 100, NO_SLACK, 0, false);
        assert_eq!(limit_us(w, 20_000, CEIL), CEIL);
        let w = after_release(w, 5000, HOLD_US, 20_000, CEIL);
        assert_eq!(limit_us(w, 20_000, CEIL), CEIL);
    }

    #[test]
    fn writes_for_another_occupant_are_dropped() {
        // Occupant 7 learnt 1000 and was refused; occupant 8 holds a fresh word.
        let word = AtomicU64::new(fresh(8));
        record_refusal(&word, 7);
        assert_eq!(word.load(Ordering::Relaxed), fresh(8));
        record_release(&word, 7, 0, 1000, FLOOR, 2000);
        assert_eq!(word.load(Ordering::Relaxed), fresh(8));
        // Its own writes land, and keep its tag.
        record_refusal(&word, 8);
        assert_eq!(word.load(Ordering::Relaxed), fresh(8) | LIMITED);
        record_release(&word, 8, 0, 1000, FLOOR, 2000);
        let w = word.load(Ordering::Relaxed);
        assert!(is_for(w, 8) && w & LIMITED == 0);
        // The tag survives every field at its largest.
        let w = after_release(
            pack(fresh(0xff), LIMIT_MAX_US, NO_SLACK, HOLD_US as u64 - 1, true),
            u32::MAX,
            0,
            4,
            u32::MAX,
        );
        assert!(is_for(w, 0xff));
    }
}
