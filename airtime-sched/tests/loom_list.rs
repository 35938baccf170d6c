//! Loom models of the AC list (`src/list`) and the txq word that guards it, run on the
//! real code: the paths a context preempted in the middle of a push, a pop or a wake
//! exposes. Run like `loom_models.rs`:
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 tools/loom/cargo-loom test --release -p airtime-sched --test loom_list`.
//!
//! Each model has a weakened variant CI proves it catches: `ring_claim_first` (list 1),
//! `listed_torn` (list 2), `wake_plain_load` (list 3), `remove_ac_late` (list 4).
#![cfg(loom)]

mod loom_common;

use airtime_sched::{Ac, Tid, TxqReturn, Weight};
use loom::sync::Arc;
use loom::sync::atomic::{AtomicU32, Ordering};
use loom::thread;
use loom_common::{NOW, small};

/// List 1: a waker's own round serves its txq, whatever another pusher is preempted
/// doing. Two station-less txqs (tail insertions: the ring); one thread wakes A while
/// the other wakes B and runs its round. That round must hand out B (it may hand out A
/// too): nothing may hide B behind A's half-done push. Checked in the waker's round
/// itself, not in a drain afterwards.
#[test]
fn list1_a_wakers_own_round_serves_its_txq_while_another_push_is_preempted() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 2));
        let a = sched.add_txq(None, Tid::BE).unwrap();
        let b = sched.add_txq(None, Tid::BE).unwrap();
        let other = {
            let sched = sched.clone();
            thread::spawn(move || sched.wake_txq(a, NOW).unwrap())
        };
        sched.wake_txq(b, NOW).unwrap();
        let round = sched.start_round(Ac::Be);
        let mut served_b = false;
        let mut handed_out = 0;
        while let Some(serving) = sched.next_txq(round, NOW) {
            handed_out += 1;
            assert!(handed_out <= 2, "a round hands out each of two txqs at most once");
            served_b |= serving.txq() == b;
            sched.return_txq(serving, TxqReturn::Empty, NOW);
        }
        assert!(served_b, "the waker's own round did not serve the txq it woke");
        other.join().unwrap();
    });
}

/// List 2: the per-AC PHY limit read while another context moves entries between the
/// list's two parts (a station txq taken from the head and returned stalled to the
/// tail) never counts more txqs than are listed: with two txqs, at most
/// `high + low / 2`. Checked at every read.
#[test]
fn list2_the_phy_limit_never_counts_an_entry_twice() {
    loom_common::model(|| {
        let sched = Arc::new(small(2, 2));
        for _ in 0..2 {
            let sta = sched.add_station(Weight::DEFAULT).unwrap();
            let t = sched.add_txq(Some(sta), Tid::BE).unwrap();
            sched.wake_txq(t, NOW).unwrap();
        }
        let reader = {
            let sched = sched.clone();
            thread::spawn(move || {
                for _ in 0..2 {
                    let limit = sched.phy_limit_us(Ac::Be).expect("two txqs listed or held");
                    assert!(limit <= 14_500, "PHY limit {limit} us counts more than two txqs");
                }
            })
        };
        let round = sched.start_round(Ac::Be);
        if let Some(serving) = sched.next_txq(round, NOW) {
            sched.return_txq(serving, TxqReturn::Stalled, NOW);
        }
        reader.join().unwrap();
    });
}

/// List 3: a wake that finds its txq listed already must not be lost to a server that
/// takes the txq at the same time and misses the frame. The enqueue is a plain Release
/// store (a driver's lock-free ring); the server reads the frame count after taking the
/// txq, returns it empty if it saw none. Checked at each step: the live invariants
/// after the wake and after the return; and, by whichever of the two contexts finishes
/// last, at its own last step (the other one is done): a frame left means the txq is
/// listed, so a round hands it out.
#[test]
fn list3_a_wake_of_a_listed_txq_is_not_lost_to_a_concurrent_take() {
    /// Run by the context that finishes second: a frame left must be listed.
    fn no_frame_stranded(sched: &airtime_sched::Scheduler, frames: &AtomicU32) {
        if frames.load(Ordering::Acquire) != 0 {
            let round = sched.start_round(Ac::Be);
            let again = sched.next_txq(round, NOW);
            assert!(again.is_some(), "a frame is left and its txq is not listed: the wake was lost");
            if let Some(serving) = again {
                sched.return_txq(serving, TxqReturn::Empty, NOW);
            }
        }
    }
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let a = sched.add_txq(None, Tid::BE).unwrap();
        sched.wake_txq(a, NOW).unwrap(); // listed, nothing to send yet
        let frames = Arc::new(AtomicU32::new(0));
        let finished = Arc::new(AtomicU32::new(0));
        let producer = {
            let (sched, frames, finished) = (sched.clone(), frames.clone(), finished.clone());
            thread::spawn(move || {
                frames.store(1, Ordering::Release);
                sched.wake_txq(a, NOW).unwrap();
                sched.check_invariants().expect("after the wake");
                if finished.fetch_add(1, Ordering::AcqRel) == 1 {
                    no_frame_stranded(&sched, &frames);
                }
            })
        };
        let round = sched.start_round(Ac::Be);
        if let Some(serving) = sched.next_txq(round, NOW) {
            // Dequeue whatever this server sees.
            let seen = frames.load(Ordering::Acquire);
            if seen != 0 {
                frames.store(0, Ordering::Relaxed);
            }
            sched.return_txq(serving, TxqReturn::Empty, NOW);
            sched.check_invariants().expect("after the return");
        }
        if finished.fetch_add(1, Ordering::AcqRel) == 1 {
            no_frame_stranded(&sched, &frames);
        }
        producer.join().unwrap();
    });
}

/// List 4: a txq removed while listed, its slot taken at once by a txq of another AC:
/// the removed txq's entry is counted dead on its own AC, exactly once, so every AC's
/// listed count (the PHY limit's `n`) stays exact (found in review: the removal read
/// the AC after freeing the slot, and counted the entry on the new txq's AC).
#[test]
fn list4_a_removal_counts_its_dead_entry_on_its_own_ac_while_the_slot_is_reused() {
    loom_common::model(|| {
        let vi = Tid::new(4).unwrap();
        let sched = Arc::new(small(1, 1));
        // An older VI entry already dead on VI's list.
        let ancient = sched.add_txq(None, vi).unwrap();
        sched.wake_txq(ancient, NOW).unwrap();
        sched.remove_txq(ancient).unwrap();
        let old = sched.add_txq(None, Tid::BE).unwrap();
        sched.wake_txq(old, NOW).unwrap();
        // Both racing operations on spawned threads: with one of them on the model's
        // main thread, loom explored a single interleaving here.
        let adder = {
            let sched = sched.clone();
            thread::spawn(move || {
                let new = sched.add_txq(None, vi).ok();
                sched.check_invariants().expect("after the add");
                new
            })
        };
        let remover = {
            let sched = sched.clone();
            thread::spawn(move || {
                sched.remove_txq(old).unwrap();
                // At once, whatever the adder is doing (it lists nothing): both entries
                // are dead, so neither AC counts a listed txq in its PHY limit.
                assert_eq!(sched.phy_limit_us(Ac::Be), None, "BE's dead entry still counted");
                assert_eq!(sched.phy_limit_us(Ac::Vi), None, "VI counts a dead entry");
                sched.check_invariants().expect("after the removal");
            })
        };
        remover.join().unwrap();
        let new = adder.join().unwrap();
        if let Some(new) = new {
            sched.wake_txq(new, NOW).unwrap();
            assert!(sched.phy_limit_us(Ac::Vi).is_some(), "one VI txq listed, but VI's PHY limit is gone");
        }
        let mut sched = Arc::try_unwrap(sched).unwrap_or_else(|_| panic!("joined"));
        sched.check_invariants_quiescent().expect("dead counts exact after a remove racing a reuse");
    });
}
