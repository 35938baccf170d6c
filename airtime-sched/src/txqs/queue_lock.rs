//! The lock on a table txq's queue: a word that its server, an enqueuer writing straight
//! into the queue, and the table handing a removed txq back take in turn, without ever
//! waiting on one another unboundedly.
//!
//! - An **enqueuer** only tries: the word must be 0. Taken, it writes its frames into the
//!   queue itself (FQ-CoDel's enqueue moves off the server's context, as mainline does it
//!   on the transmit path under `fq->lock`); refused, it pushes them into the txq's
//!   lock-free intake, as it always could.
//! - A **server** (a [`TxqTurn`](super::TxqTurn)) holds it for its whole turn. Finding
//!   it held, the server sets `SERVER_WAITING` and spins a bounded number of times: the
//!   holder stops writing after its current frame (the rest of its burst goes through
//!   the intake) and later enqueuers use the intake, so the server waits for about one
//!   frame's enqueue (two holders at most: one may lock between the server's load and
//!   its flag). A holder preempted for longer costs the txq that turn (returned
//!   `Stalled`, still listed, and the round reports it), never the round.
//! - The **hand-back** of a removed txq ([`TxqTable::take_removed`](super::TxqTable::take_removed))
//!   sets `HANDBACK`. Unlocked, that is its lock; locked (an enqueue that checked the
//!   txq live before its removal, or one whose id was already stale when it took the
//!   lock and has yet to check it), the holder's unlock sees `HANDBACK` and puts the
//!   txq back on the scheduler's retired stack, so a later hand-back takes it. An
//!   enqueue filters stale ids before it tries the lock, so only one that races the
//!   removal can be that holder.

use crate::Scheduler;
use crate::sync::{AtomicU32, Ordering, spin_loop};

/// Held by a server, an enqueuer, or (with `HANDBACK`) the hand-back.
const LOCKED: u32 = 1;
/// A server waits, or gave up waiting: enqueuers use the intake until a server takes it.
const SERVER_WAITING: u32 = 2;
/// The hand-back holds the queue (without `LOCKED`), or waits for the holder (with it).
const HANDBACK: u32 = 4;

/// Loads of the word a server makes before it gives up its turn: a holder that sees the
/// server wait finishes one frame's enqueue (FQ-CoDel's is about 120 instructions), so
/// this is reached only when the holder is preempted. Under loom, one retry.
#[cfg(not(loom))]
const SERVER_SPINS: u32 = 256;
#[cfg(loom)]
const SERVER_SPINS: u32 = 2;

/// The lock word, on the line of the txq's inbox, which enqueuers write anyway.
pub(super) struct QueueLock(AtomicU32);

impl QueueLock {
    pub(super) fn new() -> QueueLock {
        QueueLock(AtomicU32::new(0))
    }

    /// An enqueuer's try: taken only if nobody holds it, waits for it or hands it back.
    #[inline]
    pub(super) fn try_enqueuer<'a>(&'a self, sched: &'a Scheduler, index: usize) -> Option<QueueGuard<'a>> {
        // Acquire: the queue as its last holder left it.
        let acquire = if weakened!("queue_lock_relaxed") { Ordering::Relaxed } else { Ordering::Acquire };
        self.0.compare_exchange(0, LOCKED, acquire, Ordering::Relaxed).ok()?;
        Some(QueueGuard { lock: self, sched, index })
    }

    /// A server's acquisition: a bounded spin; `None` if the holder kept it throughout.
    #[inline]
    pub(super) fn server(&self) -> Option<ServerGuard<'_>> {
        // Acquire: the queue as its last holder left it.
        if self.0.compare_exchange(0, LOCKED, Ordering::Acquire, Ordering::Relaxed).is_ok() {
            return Some(ServerGuard(self));
        }
        self.server_wait()
    }

    /// [`server`](Self::server)'s wait for a holder.
    #[cold]
    fn server_wait(&self) -> Option<ServerGuard<'_>> {
        for _ in 0..SERVER_SPINS {
            let word = self.0.load(Ordering::Relaxed);
            if word & (LOCKED | HANDBACK) == 0 {
                // Clears SERVER_WAITING: enqueuers may write the queue again after this turn.
                // Acquire: the queue as its last holder left it.
                if self.0.compare_exchange(word, LOCKED, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                    return Some(ServerGuard(self));
                }
                continue;
            }
            if word & SERVER_WAITING == 0 {
                // Relaxed: a hint to enqueuers; the lock itself orders the queue.
                self.0.fetch_or(SERVER_WAITING, Ordering::Relaxed);
            }
            spin_loop();
        }
        None
    }

    /// The hand-back's claim on a removed txq's queue: `true` if it now holds it (until
    /// [`end_handback`](Self::end_handback)); `false` if a holder has it, and will put
    /// the txq back on the retired stack when it unlocks.
    pub(super) fn handback(&self) -> bool {
        // Acquire: the queue as its last holder left it (its unlock Released it).
        self.0.fetch_or(HANDBACK, Ordering::Acquire) & LOCKED == 0
    }

    /// Ends the hand-back: the slot's next txq starts with the word at 0.
    pub(super) fn end_handback(&self) {
        // Release: the take of the queue comes before anything a later holder does.
        self.0.store(0, Ordering::Release);
    }

    /// Whether a server is waiting, or gave up waiting: an enqueue that holds the lock
    /// sends the rest of its burst through the intake (behind what it queued, so in
    /// order), so that a server waits for one frame's enqueue, not a whole burst.
    #[inline]
    pub(super) fn server_waits(&self) -> bool {
        // Relaxed: a hint; the lock orders the queue.
        self.0.load(Ordering::Relaxed) & SERVER_WAITING != 0
    }

    /// Whether nobody holds the lock and no hand-back is under way: what must hold
    /// while no operation runs (a server that gave up waiting may leave its bit).
    pub(super) fn is_at_rest(&self) -> bool {
        self.0.load(Ordering::Acquire) & (LOCKED | HANDBACK) == 0
    }

    /// Unlocks; whether a hand-back came meanwhile and must be redone.
    #[inline]
    fn unlock(&self) -> bool {
        if weakened!("handback_forgotten") {
            self.0.fetch_and(!LOCKED, Ordering::Release);
            return false;
        }
        // Release: this holder's writes to the queue, for the next holder's Acquire.
        self.0.fetch_and(!(LOCKED | HANDBACK), Ordering::Release) & HANDBACK != 0
    }
}

/// The lock, held by an enqueue: unlocked on drop (also by unwinding out of the queue's
/// enqueue or the caller's iterator), then the txq handed back if a hand-back came
/// meanwhile.
pub(super) struct QueueGuard<'a> {
    lock: &'a QueueLock,
    sched: &'a Scheduler,
    index: usize,
}

impl Drop for QueueGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        if self.lock.unlock() {
            // The hand-back popped the txq and left it to this holder: push it again.
            self.sched.retire_kept_again(self.index);
        }
    }
}

/// The lock, held by a server for its turn: unlocked on drop (by
/// [`TxqTurn::finish`](super::TxqTurn::finish), or a turn dropped or unwound).
pub(super) struct ServerGuard<'a>(&'a QueueLock);

impl Drop for ServerGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // A plain store: while a server holds the lock the word is exactly LOCKED.
        // Enqueuers only take it from 0; a server is the txq's only one (the scheduler
        // hands it out once); and no hand-back comes, as a txq is retired only once its
        // server has returned it, after this unlock.
        debug_assert_eq!(self.0.0.load(Ordering::Relaxed), LOCKED, "a server's lock word changed under it");
        // Release: this turn's writes to the queue, for the next holder's Acquire.
        self.0.0.store(0, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::Config;

    /// Under Miri a small table: the interpreter's cost grows with the slots (the tests
    /// use txq index 3 at most).
    fn sched() -> Scheduler {
        let mut config = Config::default();
        if cfg!(miri) {
            (config.max_stations, config.max_txqs) = (4, 4);
        }
        Scheduler::new(config).unwrap()
    }

    #[test]
    fn a_server_that_gave_up_turns_enqueuers_to_the_intake_until_it_takes_the_lock() {
        let sched = sched();
        let lock = QueueLock::new();
        let held = lock.try_enqueuer(&sched, 0).expect("free");
        assert!(lock.try_enqueuer(&sched, 0).is_none(), "one holder at a time");
        assert!(lock.server().is_none(), "the holder kept it throughout the wait");
        drop(held);
        assert!(lock.try_enqueuer(&sched, 0).is_none(), "a server waits: enqueuers use the intake");
        let turn = lock.server().expect("free for the server");
        assert!(lock.try_enqueuer(&sched, 0).is_none(), "the server holds it");
        drop(turn);
        assert!(lock.try_enqueuer(&sched, 0).is_some(), "the server's lock cleared its wait");
    }

    #[test]
    fn a_hand_back_that_finds_the_queue_locked_is_redone_by_the_holder() {
        let sched = sched();
        let lock = QueueLock::new();
        let held = lock.try_enqueuer(&sched, 3).expect("free");
        assert!(!lock.handback(), "the enqueuer holds the queue");
        assert!(sched.pop_retired().is_none());
        drop(held);
        assert_eq!(sched.pop_retired().map(|(index, _)| index), Some(3), "the holder's unlock pushed it again");
        assert!(lock.handback(), "unlocked: the hand-back holds it now");
        assert!(lock.try_enqueuer(&sched, 3).is_none(), "nobody else while it is handed back");
        assert!(lock.server().is_none(), "not even a server");
        lock.end_handback();
        assert!(lock.try_enqueuer(&sched, 3).is_some(), "the slot's next txq starts unlocked");
    }
}
