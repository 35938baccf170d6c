//! The token table: mt76's `dev->token` idr under `token_lock` (`mt76_token_consume`,
//! `mt76_token_release`). A token owns its frame and the frame's AQL charge from the
//! DMA write until the tx-free event (or a reset, once DMA has stopped) gives them back.

use crate::hal::Token;
use crate::lock::SpinLock;
use airtime_sched::{Ac, Charge, Instant, StationId};
use alloc::vec::Vec;

/// What a token holds.
#[derive(Debug)]
pub(crate) struct Entry<F> {
    pub(crate) frame: F,
    pub(crate) charge: Option<Charge>,
    pub(crate) station: Option<StationId>,
    pub(crate) wcid: Option<u16>,
    pub(crate) ac: Ac,
    pub(crate) len_bytes: u32,
    pub(crate) consumed_at: Instant,
    /// Whether its descriptor was written ([`TokenTable::mark_written`]): set by the
    /// round once the DMA queue took it, so the table counts only tokens a tx-free (or
    /// a reset's flush) will release.
    pub(crate) written: bool,
    /// Which use of the token id this is (set by [`TokenTable::consume`]): a mark
    /// names it, so a mark made after a tx-free freed the entry and another frame took
    /// the id does not mark that frame.
    pub(crate) generation: u64,
}

struct Slots<F> {
    slots: Vec<Option<Entry<F>>>,
    /// Where the next search starts: ids are handed out cyclically (mt76's `idr_alloc`
    /// takes the lowest free id instead), so a stray tx-free (a duplicate, a late one)
    /// finds its slot empty unless the search has reached the id again since it was
    /// freed: about one pass of the table for an id freed soon after its use, but
    /// possibly the next consume for an id held while the search went round past it
    /// (a hung token). The WCID check ([`TokenTable::release_for`]) still catches a
    /// stray event for another station; a reset's flush relies on the DMA reset having
    /// emptied the event source ([`Mt76::reset_tokens`](crate::Mt76::reset_tokens)).
    next: usize,
    count: u32,
    /// Entries with `written` set.
    written: u32,
    /// The next entry's `generation`.
    generation: u64,
}

/// The token table (one lock: mt76's `token_lock`).
pub(crate) struct TokenTable<F> {
    inner: SpinLock<Slots<F>>,
    size: u32,
    /// Tokens at which tx is blocked (`token_size - MT76_TOKEN_FREE_THR`).
    block_at: u32,
}

impl<F> TokenTable<F> {
    /// A table of `size` tokens, blocking tx at `block_at` in use. `None` if memory for
    /// the table cannot be reserved.
    pub(crate) fn new(size: u32, block_at: u32) -> Option<TokenTable<F>> {
        let mut slots = Vec::new();
        slots.try_reserve_exact(size as usize).ok()?;
        slots.resize_with(size as usize, || None);
        Some(TokenTable {
            inner: SpinLock::new(Slots { slots, next: 0, count: 0, written: 0, generation: 0 }),
            size,
            block_at,
        })
    }

    /// Takes a free token for `entry` (`mt76_token_consume`), not yet marked written:
    /// the token and the entry's generation (for [`mark_written`](Self::mark_written));
    /// `Err(entry)` if none is free.
    pub(crate) fn consume(&self, mut entry: Entry<F>) -> Result<(Token, u64), Entry<F>> {
        let mut t = self.inner.lock();
        let len = t.slots.len();
        // From `next` to the end, then from the start: an empty table finds nothing.
        let start = t.next.checked_rem(len).unwrap_or(0);
        let found = (start..len).chain(0..start).find(|&i| t.slots.get(i).is_some_and(Option::is_none));
        let Some(i) = found else { return Err(entry) };
        let generation = t.generation;
        t.generation = generation.wrapping_add(1);
        entry.written = false;
        entry.generation = generation;
        if let Some(slot) = t.slots.get_mut(i) {
            *slot = Some(entry);
        }
        // `i < len`, a Vec's length, so `i + 1` cannot wrap.
        t.next = i.wrapping_add(1);
        t.count = t.count.saturating_add(1);
        Ok((Token(i as u32), generation))
    }

    /// Marks the entry `consume` returned `(token, generation)` for as written: its
    /// descriptor is in the DMA queue, and a tx-free or a reset's flush will release
    /// it. Nothing if that entry was released meanwhile (a tx-free that came before
    /// the mark): the table then holds no token of it to count.
    pub(crate) fn mark_written(&self, token: Token, generation: u64) {
        let mut t = self.inner.lock();
        let marked = match t.slots.get_mut(token.0 as usize) {
            Some(Some(e)) if e.generation == generation && !e.written => {
                e.written = true;
                true
            }
            _ => false,
        };
        if marked {
            t.written = t.written.saturating_add(1);
        }
    }

    /// Gives `token` back with what it held (`mt76_token_release`); `None` if it holds
    /// nothing (freed already: a late or duplicate tx-free).
    pub(crate) fn release(&self, token: Token) -> Option<Entry<F>> {
        self.release_for(token, None)
    }

    /// As [`release`](Self::release), but only if the token's frame is for `wcid` when
    /// both the event and the frame name one: a tx-free whose WCID pair names another
    /// station is for an earlier occupant of the id (a stray event, after a reset) and
    /// frees nothing. A station-less frame (no WCID) or an event without one is not
    /// checked: the id alone decides.
    pub(crate) fn release_for(&self, token: Token, wcid: Option<u16>) -> Option<Entry<F>> {
        let mut t = self.inner.lock();
        let slot = t.slots.get_mut(token.0 as usize)?;
        if let (Some(want), Some(e)) = (wcid, slot.as_ref()) {
            if e.wcid.is_some_and(|have| have != want) {
                return None;
            }
        }
        let entry = slot.take()?;
        t.count = t.count.saturating_sub(1);
        if entry.written {
            t.written = t.written.saturating_sub(1);
        }
        Some(entry)
    }

    /// Tokens consumed at or before `cutoff`: frames whose tx-free is overdue.
    pub(crate) fn count_older(&self, cutoff: Instant) -> u32 {
        let t = self.inner.lock();
        let old = t.slots.iter().flatten().filter(|e| e.consumed_at <= cutoff).count();
        u32::try_from(old).unwrap_or(u32::MAX)
    }

    /// Gives back every token, in token order, one at a time: the lock is not held
    /// while `each` runs.
    pub(crate) fn release_all(&self, mut each: impl FnMut(Token, Entry<F>)) {
        let mut i = 0usize;
        loop {
            let taken = {
                let mut t = self.inner.lock();
                let len = t.slots.len();
                let mut found = None;
                while i < len && found.is_none() {
                    let at = i;
                    // `i < len`, a Vec's length, so `i + 1` cannot wrap.
                    i = i.wrapping_add(1);
                    found = t.slots.get_mut(at).and_then(Option::take).map(|e| (Token(at as u32), e));
                }
                if let Some((_, e)) = &found {
                    t.count = t.count.saturating_sub(1);
                    if e.written {
                        t.written = t.written.saturating_sub(1);
                    }
                }
                found
            };
            match taken {
                Some((token, entry)) => each(token, entry),
                None => return,
            }
        }
    }

    /// Tokens in use.
    pub(crate) fn count(&self) -> u32 {
        self.inner.lock().count
    }

    /// Tokens marked written ([`mark_written`](Self::mark_written)) and not yet
    /// released: each will be released by a tx-free pass or a reset's flush.
    pub(crate) fn written(&self) -> u32 {
        self.inner.lock().written
    }

    /// Whether tx is blocked: the table is at its block threshold.
    pub(crate) fn blocked(&self) -> bool {
        self.count() >= self.block_at
    }

    /// Its size.
    pub(crate) fn size(&self) -> u32 {
        self.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(wcid: Option<u16>, at: u64) -> Entry<u32> {
        Entry {
            frame: at as u32,
            charge: None,
            station: None,
            wcid,
            ac: Ac::Be,
            len_bytes: 100,
            consumed_at: Instant::from_micros(at),
            written: false,
            generation: 0,
        }
    }

    fn take(t: &TokenTable<u32>, e: Entry<u32>) -> Token {
        t.consume(e).map(|(token, _)| token).unwrap()
    }

    #[test]
    fn ids_are_handed_out_cyclically_so_a_freed_id_is_not_reused_at_once() {
        let t = TokenTable::new(4, 3).unwrap();
        let a = take(&t, entry(None, 0));
        assert!(t.release(a).is_some());
        let b = take(&t, entry(None, 1));
        assert_ne!(a, b, "the next id, not the one just freed");
        assert!(t.release(a).is_none(), "a late release of the old id frees nothing");
    }

    /// The bound on a freed id's reuse is the cyclic search reaching it again: one pass
    /// of the table for an id freed soon after its use, but possibly the very next
    /// consume for an id held while the search went round (a hung token's).
    #[test]
    fn a_long_held_id_can_come_back_at_the_next_consume_after_its_release() {
        let t = TokenTable::new(4, 4).unwrap();
        let held = take(&t, entry(Some(1), 0));
        // Others come and go while it is held: the search passes over it.
        for at in 1..=3 {
            let id = take(&t, entry(Some(1), at));
            assert!(t.release(id).is_some());
        }
        assert!(t.release(held).is_some(), "its tx-free, at last");
        let next = take(&t, entry(Some(1), 9));
        assert_eq!(next, held, "the search was at its id");
        // A duplicate of the old event (same station) would free the new frame.
        assert_eq!(t.release_for(held, Some(1)).map(|e| e.frame), Some(9));
    }

    #[test]
    fn the_table_blocks_at_its_threshold_and_refuses_when_full() {
        let t = TokenTable::new(3, 2).unwrap();
        let ids: Vec<_> = (0..3).map(|i| take(&t, entry(None, i))).collect();
        assert!(t.blocked());
        assert!(t.consume(entry(None, 9)).is_err());
        assert!(t.release(ids[0]).is_some());
        assert!(t.release(ids[1]).is_some());
        assert!(!t.blocked());
        assert_eq!(t.count(), 1);
    }

    #[test]
    fn only_tokens_marked_written_count_and_a_mark_after_the_release_marks_nothing() {
        let t = TokenTable::new(2, 2).unwrap();
        let (a, gen_a) = t.consume(entry(None, 0)).unwrap();
        assert_eq!((t.count(), t.written()), (1, 0), "taken, not written");
        t.mark_written(a, gen_a);
        t.mark_written(a, gen_a);
        assert_eq!(t.written(), 1, "marked once");
        assert!(t.release(a).is_some());
        assert_eq!(t.written(), 0);
        // A tx-free before the mark, then the id taken again: the late mark names the
        // old use and leaves the new one unmarked.
        let (b, gen_b) = t.consume(entry(None, 1)).unwrap();
        assert!(t.release(b).is_some());
        let _ = take(&t, entry(None, 2));
        let (c, _) = t.consume(entry(None, 3)).unwrap();
        assert_eq!(c, b, "the cyclic search is back at the id");
        t.mark_written(b, gen_b);
        assert_eq!(t.written(), 0);
        t.release_all(|_, _| {});
        assert_eq!((t.count(), t.written()), (0, 0));
    }

    #[test]
    fn a_release_naming_another_wcid_leaves_the_token() {
        let t = TokenTable::new(4, 3).unwrap();
        let a = take(&t, entry(Some(1), 0));
        assert!(t.release_for(a, Some(2)).is_none());
        assert!(t.release_for(a, Some(1)).is_some());
    }

    #[test]
    fn count_older_counts_only_tokens_at_or_before_the_cutoff_and_release_all_takes_every_one() {
        let t = TokenTable::new(8, 7).unwrap();
        for at in [10, 20, 30] {
            take(&t, entry(None, at));
        }
        assert_eq!(t.count_older(Instant::from_micros(20)), 2);
        assert_eq!(t.count(), 3, "counting releases nothing");
        let mut got = Vec::new();
        t.release_all(|_, e| got.push(e.frame));
        assert_eq!(got, [10, 20, 30]);
        assert_eq!(t.count(), 0);
    }
}
