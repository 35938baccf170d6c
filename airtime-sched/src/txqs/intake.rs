//! A txq's intake: where any context enqueues without a lock, and the txq's server
//! takes everything at once.
//!
//! Producers push nodes on a Treiber stack with one compare-and-swap; a consumer takes
//! the whole stack with one swap and reverses it into arrival order. There is no pop of
//! a single node, so no ABA: a node leaves the stack only inside a whole batch, and any
//! number of consumers may take batches at once (each gets a disjoint one). A push
//! preempted before its compare-and-swap hides nothing; one preempted after it is done.

use crate::Instant;
use crate::sync::{AtomicPtr, Ordering};
use alloc::alloc::{Layout, alloc, dealloc};
use core::marker::PhantomData;
use core::ptr;

struct Node<F> {
    frame: F,
    enqueued: Instant,
    next: *mut Node<F>,
}

pub(crate) struct Intake<F> {
    top: AtomicPtr<Node<F>>,
    /// Owns `F`s: `Send`/`Sync` only as `F` allows (below).
    _frames: PhantomData<*mut F>,
}

// SAFETY: the intake owns its frames and hands each out once; sharing it moves frames
// between threads, so `F: Send` is all it needs (as for a channel).
unsafe impl<F: Send> Send for Intake<F> {}
// SAFETY: as above; every access to the nodes goes through the atomic `top`.
unsafe impl<F: Send> Sync for Intake<F> {}

impl<F> Intake<F> {
    pub(crate) fn new() -> Intake<F> {
        Intake { top: AtomicPtr::new(ptr::null_mut()), _frames: PhantomData }
    }

    /// Adds `frame`, enqueued at `now`. `Err(frame)` if no memory is left for its node.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn push(&self, frame: F, now: Instant) -> Result<(), F> {
        let mut chain = Chain::new();
        chain.add(frame, now)?;
        self.push_chain(chain);
        Ok(())
    }

    /// Adds a chain of frames at once, with one compare-and-swap.
    pub(crate) fn push_chain(&self, chain: Chain<F>) {
        let (newest, oldest) = (chain.newest, chain.oldest);
        // The nodes now belong to the intake (or nobody, for an empty chain).
        core::mem::forget(chain);
        if newest.is_null() {
            return;
        }
        let mut top = self.top.load(Ordering::Relaxed);
        loop {
            // SAFETY: the chain is ours until the compare-and-swap below publishes it.
            unsafe { (*oldest).next = top };
            // Release: the nodes' contents come before a consumer's Acquire swap.
            match self.top.compare_exchange_weak(top, newest, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(seen) => top = seen,
            }
        }
    }

    /// Takes every frame pushed so far, oldest first.
    pub(crate) fn take_all(&self) -> Batch<F> {
        // Acquire: the contents of every node pushed before this swap.
        let mut node = self.top.swap(ptr::null_mut(), Ordering::Acquire);
        // Reverse the stack (newest first) into arrival order.
        let mut oldest = ptr::null_mut();
        let mut len = 0usize;
        while !node.is_null() {
            len += 1;
            // SAFETY: the swap made this chain ours alone.
            let next = unsafe { (*node).next };
            unsafe { (*node).next = oldest };
            oldest = node;
            node = next;
        }
        Batch { head: oldest, len, _frames: PhantomData }
    }

    /// Whether nothing was pushed since the last take (a snapshot).
    pub(crate) fn is_empty(&self) -> bool {
        self.top.load(Ordering::Acquire).is_null()
    }
}

impl<F> Drop for Intake<F> {
    fn drop(&mut self) {
        drop(self.take_all());
    }
}

/// Frames built into nodes and linked, newest first, not yet in an intake: what a
/// burst pushes with one compare-and-swap. Dropping it drops its frames.
pub(crate) struct Chain<F> {
    newest: *mut Node<F>,
    oldest: *mut Node<F>,
    len: usize,
}

impl<F> Chain<F> {
    pub(crate) fn new() -> Chain<F> {
        Chain { newest: ptr::null_mut(), oldest: ptr::null_mut(), len: 0 }
    }

    /// Frames in the chain.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Links `frame` as the newest. `Err(frame)` if no memory is left for its node.
    pub(crate) fn add(&mut self, frame: F, now: Instant) -> Result<(), F> {
        let layout = Layout::new::<Node<F>>();
        // SAFETY: a node has a nonzero size (it holds a pointer).
        let node = unsafe { alloc(layout) }.cast::<Node<F>>();
        if node.is_null() {
            return Err(frame);
        }
        // SAFETY: freshly allocated for a `Node<F>`, not yet shared.
        unsafe { node.write(Node { frame, enqueued: now, next: self.newest }) };
        if self.oldest.is_null() {
            self.oldest = node;
        }
        self.newest = node;
        self.len += 1;
        Ok(())
    }
}

impl<F> Drop for Chain<F> {
    fn drop(&mut self) {
        let mut node = self.newest;
        while !node.is_null() {
            // SAFETY: the chain owns its nodes; each is read out and freed once.
            let Node { next, .. } = unsafe { node.read() };
            unsafe { dealloc(node.cast(), Layout::new::<Node<F>>()) };
            node = next;
        }
    }
}

/// Frames taken from an intake, oldest first, each with the time it was enqueued.
/// Dropping the batch drops the frames left in it.
pub(crate) struct Batch<F> {
    head: *mut Node<F>,
    /// Frames the batch was taken with.
    len: usize,
    _frames: PhantomData<F>,
}

// SAFETY: the batch owns its nodes alone.
unsafe impl<F: Send> Send for Batch<F> {}
// SAFETY: `&Batch` gives access to nothing.
unsafe impl<F: Sync> Sync for Batch<F> {}

impl<F> Batch<F> {
    pub(crate) fn empty() -> Batch<F> {
        Batch { head: ptr::null_mut(), len: 0, _frames: PhantomData }
    }

    /// Frames the batch was taken with (those iterated out included).
    pub(crate) fn taken_len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_null()
    }
}

impl<F> Iterator for Batch<F> {
    type Item = (F, Instant);

    fn next(&mut self) -> Option<(F, Instant)> {
        if self.head.is_null() {
            return None;
        }
        let node = self.head;
        // SAFETY: the batch owns the chain; each node is read out once and freed.
        let Node { frame, enqueued, next } = unsafe { node.read() };
        unsafe { dealloc(node.cast(), Layout::new::<Node<F>>()) };
        self.head = next;
        Some((frame, enqueued))
    }
}

impl<F> Drop for Batch<F> {
    fn drop(&mut self) {
        for _ in self.by_ref() {}
    }
}

impl<F> core::fmt::Debug for Batch<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Batch").field("empty", &self.is_empty()).finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn a_batch_comes_out_in_arrival_order() {
        let intake = Intake::new();
        for i in 0..5u32 {
            intake.push(i, Instant::from_micros(u64::from(i))).unwrap();
        }
        let got: Vec<_> = intake.take_all().collect();
        assert_eq!(got, (0..5).map(|i| (i, Instant::from_micros(u64::from(i)))).collect::<Vec<_>>());
        assert!(intake.is_empty());
        assert!(intake.take_all().is_empty());
    }

    #[test]
    fn dropping_a_batch_or_the_intake_frees_every_frame() {
        let counted = alloc::rc::Rc::new(());
        let intake = Intake::new();
        for _ in 0..4 {
            intake.push(counted.clone(), Instant::ZERO).unwrap();
        }
        let mut batch = intake.take_all();
        assert!(batch.next().is_some());
        drop(batch);
        intake.push(counted.clone(), Instant::ZERO).unwrap();
        drop(intake);
        assert_eq!(alloc::rc::Rc::strong_count(&counted), 1);
    }

    #[test]
    fn a_chain_goes_in_whole_and_in_order() {
        let intake = Intake::new();
        intake.push(0u32, Instant::ZERO).unwrap();
        let mut chain = Chain::new();
        for i in 1..4u32 {
            chain.add(i, Instant::ZERO).unwrap();
        }
        assert_eq!(chain.len(), 3);
        intake.push_chain(chain);
        intake.push_chain(Chain::new());
        intake.push(4, Instant::ZERO).unwrap();
        let got: Vec<u32> = intake.take_all().map(|(f, _)| f).collect();
        assert_eq!(got, [0, 1, 2, 3, 4]);
        // A chain dropped unpushed frees its frames.
        let counted = alloc::rc::Rc::new(());
        let mut chain = Chain::new();
        chain.add(counted.clone(), Instant::ZERO).unwrap();
        chain.add(counted.clone(), Instant::ZERO).unwrap();
        drop(chain);
        assert_eq!(alloc::rc::Rc::strong_count(&counted), 1);
    }

    #[test]
    fn racing_pushes_and_takes_lose_and_duplicate_nothing() {
        let intake = std::sync::Arc::new(Intake::new());
        let per_thread = if cfg!(miri) { 50 } else { 20_000u32 };
        let producers: Vec<_> = (0..2u32)
            .map(|t| {
                let intake = intake.clone();
                std::thread::spawn(move || {
                    for i in 0..per_thread {
                        intake.push((t, i), Instant::ZERO).unwrap();
                    }
                })
            })
            .collect();
        let mut seen = [Vec::new(), Vec::new()];
        let mut collect = |batch: Batch<(u32, u32)>| {
            for ((t, i), _) in batch {
                seen[t as usize].push(i);
            }
        };
        while producers.iter().any(|p| !p.is_finished()) {
            collect(intake.take_all());
        }
        for p in producers {
            p.join().unwrap();
        }
        collect(intake.take_all());
        for s in seen {
            // Each producer's frames arrive complete and in its order.
            assert_eq!(s, (0..per_thread).collect::<Vec<_>>());
        }
    }
}
