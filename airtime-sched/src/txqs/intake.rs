//! A txq's intake: where any context enqueues without a lock, and the txq's server
//! takes everything at once.
//!
//! Producers push nodes on a Treiber stack with one compare-and-swap; a consumer takes
//! the whole stack with one swap and reverses it into arrival order. There is no pop of
//! a single node, so no ABA: a node leaves the stack only inside a whole batch, and any
//! number of consumers may take batches at once (each gets a disjoint one). A push
//! preempted before its compare-and-swap hides nothing; one preempted after it is done.
//!
//! **Nodes are reused.** The server's drain ([`Intake::drain`]) keeps each emptied node
//! in the intake's node cache, [`NODE_CACHE`] places that each hold one node or none, and
//! an enqueue builds its frame into a cached node before it asks the allocator. A place
//! changes hands whole: an enqueue takes its node with one swap (no two can take the
//! same one), and the drain puts a node only into an empty place, with one
//! compare-and-swap from null; a place's value says all there is to know about it, so
//! a stale read of it costs a failed compare-and-swap, never an ABA. A txq in steady
//! state so allocates nothing per frame: in a kernel build that is one atomic
//! allocation (and its chance of failing) less per frame, and across CPUs one less
//! trip through the allocator's shared state (measured in BENCHMARKS.md, "the intake's
//! node cache").

use crate::Instant;
use crate::sync::{AtomicPtr, Ordering, UnsafeCell};
use alloc::alloc::{Layout, alloc, dealloc};
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr;

/// Emptied nodes an intake keeps for its next enqueues: as many as a txq's turn
/// usually takes in at once (8 pointers, 64 bytes on 64-bit targets). Two under loom,
/// which is enough to reach every path (a take, a put, a full cache) and keeps the
/// models' branch points down.
#[cfg(not(loom))]
pub(crate) const NODE_CACHE: usize = 8;
#[cfg(loom)]
pub(crate) const NODE_CACHE: usize = 2;

struct Node<F> {
    /// Initialised while the node is in a chain, an intake or a batch; not while it is
    /// cached. A cell, so that loom checks that a reused node's next frame is written
    /// only after the drain read the last one out.
    frame: UnsafeCell<MaybeUninit<F>>,
    enqueued: Instant,
    next: *mut Node<F>,
}

impl<F> Node<F> {
    /// A new empty node, or `None` with no memory.
    fn alloc() -> Option<*mut Node<F>> {
        // SAFETY: a node has a nonzero size (it holds a pointer).
        let node = unsafe { alloc(Layout::new::<Node<F>>()) }.cast::<Node<F>>();
        if node.is_null() {
            return None;
        }
        let empty =
            Node { frame: UnsafeCell::new(MaybeUninit::uninit()), enqueued: Instant::ZERO, next: ptr::null_mut() };
        // SAFETY: freshly allocated for a `Node<F>`, not yet shared.
        unsafe { node.write(empty) };
        Some(node)
    }

    /// Frees an empty node.
    ///
    /// # Safety
    /// `node` came from [`Node::alloc`], holds no frame, and is the caller's alone.
    unsafe fn free(node: *mut Node<F>) {
        // SAFETY: the caller's. Dropping the node drops its cell, not a frame
        // (`MaybeUninit`).
        unsafe {
            ptr::drop_in_place(node);
            dealloc(node.cast(), Layout::new::<Node<F>>());
        }
    }

    /// Writes a frame into an empty node.
    ///
    /// # Safety
    /// `node` holds no frame and is the caller's alone.
    unsafe fn fill(node: *mut Node<F>, frame: F, enqueued: Instant, next: *mut Node<F>) {
        // SAFETY: the caller's.
        unsafe {
            (*node).frame.with_mut(|f| (*f).write(frame));
            (*node).enqueued = enqueued;
            (*node).next = next;
        }
    }

    /// Moves the frame out of a node, leaving it empty; with its time and its link.
    ///
    /// # Safety
    /// `node` holds a frame and is the caller's alone.
    unsafe fn take(node: *mut Node<F>) -> (F, Instant, *mut Node<F>) {
        // SAFETY: the caller's. A write access for loom: the frame moves out, and must be
        // ordered before the node's next fill.
        unsafe { ((*node).frame.with_mut(|f| (*f).assume_init_read()), (*node).enqueued, (*node).next) }
    }
}

pub(crate) struct Intake<F> {
    top: AtomicPtr<Node<F>>,
    /// The node cache: each place holds one empty node, or null.
    cache: [AtomicPtr<Node<F>>; NODE_CACHE],
    /// Nodes taken from the cache (tests only; not a modelled atomic).
    #[cfg(test)]
    reused: core::sync::atomic::AtomicUsize,
    /// Owns `F`s: `Send`/`Sync` only as `F` allows (below).
    _frames: PhantomData<*mut F>,
}

// SAFETY: the intake owns its frames and hands each out once; sharing it moves frames
// between threads, so `F: Send` is all it needs (as for a channel).
unsafe impl<F: Send> Send for Intake<F> {}
// SAFETY: as above; every access to the nodes goes through the atomics `top` and
// `cache`, each of which hands a node to one context at a time.
unsafe impl<F: Send> Sync for Intake<F> {}

impl<F> Intake<F> {
    pub(crate) fn new() -> Intake<F> {
        Intake {
            top: AtomicPtr::new(ptr::null_mut()),
            cache: core::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
            #[cfg(test)]
            reused: core::sync::atomic::AtomicUsize::new(0),
            _frames: PhantomData,
        }
    }

    /// Adds `frame`, enqueued at `now`. `Err(frame)` if no memory is left for its node.
    #[cfg(test)]
    pub(crate) fn push(&self, frame: F, now: Instant) -> Result<(), F> {
        let mut chain = Chain::new();
        chain.add(self, frame, now)?;
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

    /// Takes every frame pushed so far, tells `taken` how many, then hands each to
    /// `sink`, oldest first, keeping the emptied nodes in the cache (freeing those it has
    /// no place for). `taken` runs before the sink: a sink that unwinds cannot leave the
    /// frames counted as still in the intake.
    pub(crate) fn drain(&self, taken: impl FnOnce(usize), mut sink: impl FnMut(F, Instant)) {
        let mut batch = self.take_all();
        taken(batch.len);
        while !batch.head.is_null() {
            let node = batch.head;
            // SAFETY: the batch owns its nodes; each is read out once.
            let (frame, enqueued, next) = unsafe { Node::take(node) };
            batch.head = next;
            // Before the sink runs: if it unwinds, the batch's drop frees what is left.
            self.cache_node(node);
            sink(frame, enqueued);
        }
    }

    /// An empty node from the cache, if it holds one: the caller's alone.
    fn cached_node(&self) -> Option<*mut Node<F>> {
        // Weakened variant, only to prove the loom model catches it: a node taken
        // without ordering the drain's read of its last frame before this context's fill.
        let take = if cfg!(airtime_weakened = "node_cache_relaxed") { Ordering::Relaxed } else { Ordering::Acquire };
        for place in &self.cache {
            // A load first: an empty place costs no write to the line.
            if !place.load(Ordering::Relaxed).is_null() {
                // Acquire: the drain that emptied the node read its frame out before its
                // Release put the node here.
                let node = if cfg!(airtime_weakened = "cache_take_load_store") {
                    // Weakened variant, only to prove the loom model catches it: a load
                    // and a store instead of one swap, so two enqueues can take one node.
                    let node = place.load(take);
                    place.store(ptr::null_mut(), Ordering::Relaxed);
                    node
                } else {
                    place.swap(ptr::null_mut(), take)
                };
                if !node.is_null() {
                    #[cfg(test)]
                    self.reused.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
                    return Some(node);
                }
            }
        }
        None
    }

    /// Keeps an empty node (the caller's alone) in the cache, or frees it if the cache
    /// is full.
    fn cache_node(&self, node: *mut Node<F>) {
        let put = if cfg!(airtime_weakened = "node_cache_relaxed") { Ordering::Relaxed } else { Ordering::Release };
        for place in &self.cache {
            // Release: the frame was read out of the node before an enqueue that takes
            // it (Acquire) fills it again.
            if place.load(Ordering::Relaxed).is_null()
                && place.compare_exchange(ptr::null_mut(), node, put, Ordering::Relaxed).is_ok()
            {
                return;
            }
        }
        // SAFETY: empty, and ours alone.
        unsafe { Node::free(node) };
    }

    /// Frees every node in the cache (a removed txq's: its slot may never be reused).
    pub(crate) fn free_cache(&self) {
        while let Some(node) = self.cached_node() {
            // SAFETY: cached nodes are empty; taken, it is ours alone.
            unsafe { Node::free(node) };
        }
    }

    /// Nodes in the cache now (a snapshot, for tests).
    #[cfg(all(test, not(loom)))]
    fn cached(&self) -> usize {
        self.cache.iter().filter(|p| !p.load(Ordering::Relaxed).is_null()).count()
    }

    /// Whether nothing was pushed since the last take (a snapshot).
    pub(crate) fn is_empty(&self) -> bool {
        self.top.load(Ordering::Acquire).is_null()
    }
}

impl<F> Drop for Intake<F> {
    fn drop(&mut self) {
        drop(self.take_all());
        self.free_cache();
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

    /// Links `frame` as the newest, in a node from `intake`'s cache or else a new one.
    /// `Err(frame)` if no memory is left for its node.
    pub(crate) fn add(&mut self, intake: &Intake<F>, frame: F, now: Instant) -> Result<(), F> {
        let Some(node) = intake.cached_node().or_else(Node::alloc) else { return Err(frame) };
        // SAFETY: an empty node, ours alone until the chain is pushed.
        unsafe { Node::fill(node, frame, now, self.newest) };
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
            let (frame, _, next) = unsafe { Node::take(node) };
            drop(frame);
            unsafe { Node::free(node) };
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
        let (frame, enqueued, next) = unsafe { Node::take(node) };
        unsafe { Node::free(node) };
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
            chain.add(&intake, i, Instant::ZERO).unwrap();
        }
        assert_eq!(chain.len(), 3);
        intake.push_chain(chain);
        intake.push_chain(Chain::new());
        intake.push(4, Instant::ZERO).unwrap();
        let got: Vec<u32> = intake.take_all().map(|(f, _)| f).collect();
        assert_eq!(got, [0, 1, 2, 3, 4]);
        // A chain dropped unpushed frees its frames.
        let counted = alloc::rc::Rc::new(());
        let rcs = Intake::new();
        let mut chain = Chain::new();
        chain.add(&rcs, counted.clone(), Instant::ZERO).unwrap();
        chain.add(&rcs, counted.clone(), Instant::ZERO).unwrap();
        drop(chain);
        assert_eq!(alloc::rc::Rc::strong_count(&counted), 1);
    }

    #[test]
    fn a_drain_keeps_its_nodes_for_the_next_enqueues() {
        let intake = Intake::new();
        for i in 0..3u32 {
            intake.push(i, Instant::from_micros(u64::from(i))).unwrap();
        }
        assert_eq!(intake.cached(), 0);
        let mut got = Vec::new();
        intake.drain(|n| assert_eq!(n, 3), |f, at| got.push((f, at)));
        assert_eq!(got, (0..3).map(|i| (i, Instant::from_micros(u64::from(i)))).collect::<Vec<_>>());
        assert_eq!(intake.cached(), 3);
        // Two enqueues take two of them; a drain puts them back.
        intake.push(10, Instant::ZERO).unwrap();
        let mut chain = Chain::new();
        chain.add(&intake, 11, Instant::ZERO).unwrap();
        intake.push_chain(chain);
        assert_eq!(intake.cached(), 1);
        got.clear();
        intake.drain(|n| assert_eq!(n, 2), |f, at| got.push((f, at)));
        assert_eq!(got, [(10, Instant::ZERO), (11, Instant::ZERO)]);
        assert_eq!(intake.cached(), 3);
        // An empty drain changes nothing.
        intake.drain(|n| assert_eq!(n, 0), |_, _| unreachable!());
        assert_eq!(intake.cached(), 3);
    }

    #[test]
    fn a_full_cache_frees_the_nodes_it_cannot_keep_and_every_frame_is_dropped_once() {
        let counted = alloc::rc::Rc::new(());
        let intake = Intake::new();
        let n = NODE_CACHE + 5;
        for _ in 0..n {
            intake.push(counted.clone(), Instant::ZERO).unwrap();
        }
        let mut frames = Vec::new();
        intake.drain(|k| assert_eq!(k, n), |f, _| frames.push(f));
        assert_eq!(intake.cached(), NODE_CACHE);
        drop(frames);
        assert_eq!(alloc::rc::Rc::strong_count(&counted), 1);
        // Reused nodes carry new frames; dropping the intake drops them and frees the
        // cache (Miri and the sanitiser runs check for leaks).
        for _ in 0..3 {
            intake.push(counted.clone(), Instant::ZERO).unwrap();
        }
        assert_eq!(intake.cached(), NODE_CACHE - 3);
        drop(intake);
        assert_eq!(alloc::rc::Rc::strong_count(&counted), 1);
    }

    #[test]
    fn a_sink_that_unwinds_leaves_the_count_taken_and_drops_every_frame_once() {
        let counted = alloc::rc::Rc::new(());
        let intake = Intake::new();
        for _ in 0..4 {
            intake.push(counted.clone(), Instant::ZERO).unwrap();
        }
        let mut taken = 0;
        let mut calls = 0;
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            intake.drain(
                |n| taken = n,
                |_, _| {
                    calls += 1;
                    assert!(calls < 2, "the queue refuses the second frame");
                },
            )
        }));
        assert!(unwound.is_err());
        // Counted before the sink ran; the frames the sink never saw were dropped.
        assert_eq!(taken, 4);
        assert_eq!(alloc::rc::Rc::strong_count(&counted), 1);
        assert!(intake.is_empty());
    }

    #[test]
    fn freeing_the_cache_empties_it() {
        let intake = Intake::new();
        for i in 0..3u32 {
            intake.push(i, Instant::ZERO).unwrap();
        }
        intake.drain(|_| (), |_, _| ());
        assert_eq!(intake.cached(), 3);
        intake.free_cache();
        assert_eq!(intake.cached(), 0);
        intake.push(9, Instant::ZERO).unwrap();
        assert_eq!(intake.take_all().map(|(f, _)| f).collect::<Vec<_>>(), [9]);
    }

    /// Two producers push 0.. while `take` empties the intake into `seen` (by producer)
    /// until they are done and once more; each producer's frames must arrive complete
    /// and in its order.
    fn two_producers_racing(mut take: impl FnMut(&Intake<(u32, u32)>, &mut [Vec<u32>; 2])) {
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
        while producers.iter().any(|p| !p.is_finished()) {
            take(&intake, &mut seen);
        }
        for p in producers {
            p.join().unwrap();
        }
        take(&intake, &mut seen);
        for s in seen {
            assert_eq!(s, (0..per_thread).collect::<Vec<_>>());
        }
    }

    #[test]
    fn racing_pushes_and_drains_reuse_nodes_and_lose_nothing() {
        two_producers_racing(|intake, seen| intake.drain(|_| (), |(t, i), _| seen[t as usize].push(i)));
    }

    #[test]
    fn racing_pushes_and_takes_lose_and_duplicate_nothing() {
        two_producers_racing(|intake, seen| {
            for ((t, i), _) in intake.take_all() {
                seen[t as usize].push(i);
            }
        });
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use loom::sync::Arc;
    use loom::sync::atomic::AtomicBool;
    use loom::thread;

    /// Model intake1: an enqueuer pushes frame 1; the server drains it; the enqueuer,
    /// told so through a Relaxed flag (which orders nothing), pushes frame 2, which may
    /// be built into the very node that carried frame 1. Loom's cell checks that the
    /// fill of a reused node comes after the drain's read of its last frame (the cache's
    /// Release and Acquire alone order them); both frames arrive once and in order; the
    /// intake frees every node when dropped; and some execution must really reuse a node.
    #[test]
    fn intake1_a_reused_node_is_filled_only_after_its_last_frame_was_read() {
        static REUSED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        loom::model(|| {
            let intake = Arc::new(Intake::new());
            let drained = Arc::new(AtomicBool::new(false));
            let producer = {
                let (intake, drained) = (intake.clone(), drained.clone());
                thread::spawn(move || {
                    intake.push(1u32, Instant::ZERO).unwrap();
                    while !drained.load(Ordering::Relaxed) {
                        thread::yield_now();
                    }
                    intake.push(2u32, Instant::ZERO).unwrap();
                })
            };
            let server = {
                let (intake, drained) = (intake.clone(), drained.clone());
                thread::spawn(move || {
                    let mut got = Vec::new();
                    while got.is_empty() {
                        intake.drain(|_| (), |f, _| got.push(f));
                        thread::yield_now();
                    }
                    assert_eq!(got, [1]);
                    drained.store(true, Ordering::Relaxed);
                    while got.len() < 2 {
                        intake.drain(|_| (), |f, _| got.push(f));
                        thread::yield_now();
                    }
                    got
                })
            };
            producer.join().unwrap();
            assert_eq!(server.join().unwrap(), [1, 2]);
            REUSED.fetch_add(
                intake.reused.load(std::sync::atomic::Ordering::Relaxed),
                std::sync::atomic::Ordering::Relaxed,
            );
        });
        assert!(
            REUSED.load(std::sync::atomic::Ordering::Relaxed) > 0,
            "no execution reused a node: the model checks nothing"
        );
    }

    /// Model intake2: the server drains three frames into a cache of two places (the
    /// third node is freed), then two enqueuers race for the cached nodes. No node may
    /// go to both (loom's cell checks the fills), both frames arrive, and the intake
    /// frees every node when dropped; some execution must have both enqueuers take a
    /// cached node.
    #[test]
    fn intake2_two_enqueuers_never_take_the_same_cached_node() {
        static BOTH: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        loom::model(|| {
            let intake = Arc::new(Intake::new());
            for f in 0..3u32 {
                intake.push(f, Instant::ZERO).unwrap();
            }
            let mut got = Vec::new();
            intake.drain(|n| assert_eq!(n, 3), |f, _| got.push(f));
            assert_eq!(got, [0, 1, 2]);
            let enqueuers: Vec<_> = [10u32, 20]
                .into_iter()
                .map(|f| {
                    let intake = intake.clone();
                    thread::spawn(move || intake.push(f, Instant::ZERO).unwrap())
                })
                .collect();
            for e in enqueuers {
                e.join().unwrap();
            }
            let mut got: Vec<u32> = intake.take_all().map(|(f, _)| f).collect();
            got.sort_unstable();
            assert_eq!(got, [10, 20]);
            if intake.reused.load(std::sync::atomic::Ordering::Relaxed) == 2 {
                BOTH.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
        assert!(BOTH.load(std::sync::atomic::Ordering::Relaxed) > 0, "no execution had both enqueuers reuse a node");
    }
}
