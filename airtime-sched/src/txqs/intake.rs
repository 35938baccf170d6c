//! A txq's intake: where any context enqueues without a lock, and the txq's server
//! takes everything at once.
//!
//! Producers push nodes on a Treiber stack with one compare-and-swap; a consumer takes
//! the whole stack with one swap and reverses it into arrival order. There is no pop of
//! a single node, so no ABA on the values: a node leaves the stack only inside a whole
//! batch, and any number of consumers may take batches at once (each gets a disjoint
//! one). A push can still meet a top freed and reallocated at the same address; its
//! link is right by address but not by provenance, so the consumer takes each link to
//! the node now at its address (`live_link`; Miri runs with its default permissive
//! provenance, not `-Zmiri-strict-provenance`, for it). A push
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
//! trip through the allocator's shared state (measured in the workspace's
//! `benches/LOG.md`, "False sharing and the per-frame allocation removed").
//!
//! **The server asks for its nodes' lines before it walks them.** A node's address is
//! read from the node pushed after it, which the enqueuing CPU wrote last, so a walk of
//! a stack of 16 would wait for 16 line transfers one after the other (two thirds of a
//! backlogged server's pull, by perf, on a guest whose CPUs move a line in 250 ns). The
//! server remembers which node its drain put in each place of the cache ([`NodeHints`],
//! kept with its queue); a place found empty at the next drain was taken by an enqueue
//! (or by one still filling it, whose line the hint then takes away early), and its node
//! is asked for before the walk ([`prefetch`](crate::prefetch)), so the transfers
//! overlap. An enqueue likewise asks for the next place's node while it fills its own.
//! Both are hints: what they name is never read through them. The loads of the places
//! they make are not in loom builds, which ask for nothing: they only decide what to ask
//! for.
//!
//! **One node lives in the intake itself**, on the line the enqueue and the drain touch
//! anyway (the stack's top). An enqueue takes it first, so a frame that finds
//! it free (always, when the server keeps up with the enqueues and each turn sends the
//! one frame its wake brought) travels on those lines, instead of in a node of its own
//! that the enqueue and then the drain would each fetch from the other's CPU. It changes
//! hands as a cached node does, by a flag that only its owner sets (`inline_free`: an
//! enqueue takes it with one swap; the context that reads its frame out gives it back
//! with a Release store). In a chain or the stack it is named by a sentinel link
//! (`inline_link`), not by its address, so an intake may be moved (it is built, then
//! placed in its table). The consumer moves its frame into the batch as it takes the
//! stack and gives the node back at once, so a batch never points into an intake.

use crate::Instant;
use crate::sync::{AtomicBool, AtomicPtr, Ordering, UnsafeCell};
use alloc::alloc::{Layout, alloc, dealloc};
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr;

/// Emptied nodes an intake keeps for its next enqueues: as many as a turn sends (16
/// pointers, 128 bytes on 64-bit targets, on lines of their own after the ones an
/// enqueue and a drain touch when the server keeps up). With 8, a txq whose turns send
/// 16 frames allocated a node for 56 % of its frames (callgrind, the end-to-end
/// benchmark with stations backlogged). Two under loom, which is enough to reach every
/// path (a take, a put, a full cache) and keeps the models' branch points down.
#[cfg(not(loom))]
pub(crate) const NODE_CACHE: usize = 16;
#[cfg(loom)]
pub(crate) const NODE_CACHE: usize = 2;

/// The link that names the intake's own node: misaligned, so no allocated node has it,
/// and not null, so it never reads as the end of a chain.
#[inline]
fn inline_link<F>() -> *mut Node<F> {
    const { assert!(core::mem::align_of::<Node<F>>() > 1, "the sentinel must be misaligned for a node") };
    ptr::without_provenance_mut(1)
}

/// `link`, read from a node in the stack, as a pointer to the node now at its address.
///
/// A push links its chain to the top it loaded, then publishes the chain with a
/// compare-and-swap from that top. If meanwhile the top node was taken, freed, and a
/// new node allocated at the same address was pushed, the compare-and-swap succeeds
/// (the address matches, and the link is right: a Treiber push needs no ABA guard), but
/// the link carries the freed node's provenance, and Rust's memory model (and Miri)
/// forbids reaching the new node through it. Every allocated node exposes its
/// provenance, so the link is taken by its address to whichever node lives there.
#[inline]
fn live_link<F>(link: *mut Node<F>) -> *mut Node<F> {
    if link.is_null() || link == inline_link() { link } else { ptr::with_exposed_provenance_mut(link.addr()) }
}

struct Node<F> {
    /// Initialised while the node is in a chain, an intake or a batch; not while it is
    /// cached. A cell, so that loom checks that a reused node's next frame is written
    /// only after the drain read the last one out.
    frame: UnsafeCell<MaybeUninit<F>>,
    enqueued: Instant,
    next: *mut Node<F>,
}

impl<F> Node<F> {
    /// A node holding no frame.
    fn empty() -> Node<F> {
        Node { frame: UnsafeCell::new(MaybeUninit::uninit()), enqueued: Instant::ZERO, next: ptr::null_mut() }
    }

    /// A new empty node, or `None` with no memory.
    fn alloc() -> Option<*mut Node<F>> {
        // SAFETY: a node has a nonzero size (it holds a pointer).
        let node = unsafe { alloc(Layout::new::<Node<F>>()) }.cast::<Node<F>>();
        if node.is_null() {
            return None;
        }
        // SAFETY: freshly allocated for a `Node<F>`, not yet shared.
        unsafe { node.write(Node::empty()) };
        // For `live_link`: a link read from the stack may carry the provenance of a freed
        // node at this address.
        let _ = node.expose_provenance();
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

/// In declaration order (`repr(C)`), so that the stack's top, the own node and its flag
/// come first, on the first lines the table gives the inbox (tested below), and the
/// cache, which only a txq with a backlog touches, after them.
#[repr(C)]
pub(crate) struct Intake<F> {
    top: AtomicPtr<Node<F>>,
    /// The intake's own node, named by `inline_link` wherever it is linked.
    inline: UnsafeCell<Node<F>>,
    /// Whether the intake's own node is free (empty, nobody's): set only by its owner.
    inline_free: AtomicBool,
    /// The node cache: each place holds one empty node, or null.
    cache: [AtomicPtr<Node<F>>; NODE_CACHE],
    /// Nodes taken from the cache (tests only; not a modelled atomic).
    #[cfg(test)]
    reused: core::sync::atomic::AtomicUsize,
    /// Times the intake's own node was taken (tests only; not a modelled atomic).
    #[cfg(test)]
    inline_taken: core::sync::atomic::AtomicUsize,
    /// Owns `F`s: `Send`/`Sync` only as `F` allows (below).
    _frames: PhantomData<*mut F>,
}

// SAFETY: the intake owns its frames and hands each out once; sharing it moves frames
// between threads, so `F: Send` is all it needs (as for a channel).
unsafe impl<F: Send> Send for Intake<F> {}
// SAFETY: as above; every access to the nodes goes through the atomics `top`, `cache`
// and `inline_free`, each of which hands a node to one context at a time.
unsafe impl<F: Send> Sync for Intake<F> {}

impl<F> Intake<F> {
    pub(crate) fn new() -> Intake<F> {
        Intake {
            top: AtomicPtr::new(ptr::null_mut()),
            cache: core::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
            inline: UnsafeCell::new(Node::empty()),
            inline_free: AtomicBool::new(true),
            #[cfg(test)]
            reused: core::sync::atomic::AtomicUsize::new(0),
            #[cfg(test)]
            inline_taken: core::sync::atomic::AtomicUsize::new(0),
            _frames: PhantomData,
        }
    }

    /// An intake whose own node is never free, so that every frame rides in a cached or
    /// allocated node (tests of the node cache).
    #[cfg(test)]
    pub(crate) fn without_own_node() -> Intake<F> {
        let intake = Intake::new();
        intake.inline_free.store(false, Ordering::Relaxed);
        intake
    }

    /// Runs `f` on the node `link` names: the intake's own for `inline_link`.
    ///
    /// # Safety
    /// The node is the caller's alone (taken from a place or a flag, or in a chain,
    /// stack or batch the caller owns).
    #[inline]
    unsafe fn with_node<R>(&self, link: *mut Node<F>, f: impl FnOnce(*mut Node<F>) -> R) -> R {
        if link == inline_link() { self.inline.with_mut(f) } else { f(link) }
    }

    /// Takes the intake's own node if it is free: the caller's alone until given back.
    #[inline]
    fn take_inline(&self) -> bool {
        // Weakened variant, only to prove the loom model catches it: the node taken
        // without ordering the last reader's read of its frame before this fill.
        let take = if weakened!("inline_relaxed") { Ordering::Relaxed } else { Ordering::Acquire };
        // A load first: a taken node costs no write to the line. Loom models go without
        // it. Relaxed and writing nothing, all it can do is skip the swap, and the
        // enqueue then takes a cached or new node as when the swap finds the node taken;
        // a stale `false` skips it even after a give-back nothing orders before this
        // enqueue, which loom then does not explore. No property depends on which node a
        // frame rides in: the node changes hands only by the swap and the Release store,
        // and `take_all` places its frame by its position in the stack. Each atomic
        // access loom checks multiplies the interleavings of every model that enqueues.
        let taken = (cfg!(loom) || self.inline_free.load(Ordering::Relaxed))
            && if weakened!("inline_take_load_store") {
                // Weakened variant, only to prove the loom model catches it: a load and a
                // store instead of one swap, so two enqueues can take the node.
                let free = self.inline_free.load(take);
                self.inline_free.store(false, Ordering::Relaxed);
                free
            } else {
                self.inline_free.swap(false, take)
            };
        #[cfg(test)]
        if taken {
            self.inline_taken.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        }
        taken
    }

    /// Gives the intake's own node back, its frame read out.
    #[inline]
    fn give_back_inline(&self) {
        let put = if weakened!("inline_relaxed") { Ordering::Relaxed } else { Ordering::Release };
        // Release: the frame was read out before an enqueue that takes the node (Acquire)
        // fills it again.
        self.inline_free.store(true, put);
    }

    /// Adds `frame`, enqueued at `now`. `Err(frame)` if no memory is left for its node.
    #[cfg(test)]
    pub(crate) fn push(&self, frame: F, now: Instant) -> Result<(), F> {
        let mut chain = Chain::new(self);
        chain.add(frame, now)?;
        chain.push();
        Ok(())
    }

    /// Frames in the stack, counted up to `limit + 1` at most (a stack corrupted into
    /// a cycle then reads as too long, rather than hanging the check).
    ///
    /// # Safety
    /// No context pushes or takes meanwhile (the caller has the intake's owner
    /// borrowed mutably).
    pub(crate) unsafe fn len_at_rest(&self, limit: usize) -> usize {
        let mut frames = 0;
        let mut link = self.top.load(Ordering::Acquire);
        while !link.is_null() && frames <= limit {
            frames = frames.saturating_add(1);
            // SAFETY: nothing pushes or takes meanwhile (the caller's promise), so each
            // node in the stack holds a frame and its link, and stays.
            link = live_link(unsafe { self.with_node(link, |n| (*n).next) });
        }
        frames
    }

    /// Takes every frame pushed so far, oldest first. The frame of the intake's own node,
    /// if the stack holds it, moves into the batch and the node is given back.
    pub(crate) fn take_all(&self) -> Batch<F> {
        self.batch_of(self.take_stack())
    }

    /// Takes the whole stack: its top, the chain below ours alone.
    #[inline]
    fn take_stack(&self) -> *mut Node<F> {
        // Acquire: the contents of every node pushed before this swap.
        self.top.swap(ptr::null_mut(), Ordering::Acquire)
    }

    /// The stack at `top` (taken, ours alone) as a batch, oldest first.
    fn batch_of(&self, top: *mut Node<F>) -> Batch<F> {
        let mut link = top;
        // Reverse the stack (newest first) into arrival order, leaving the intake's own
        // node out of the chain.
        let mut oldest = ptr::null_mut();
        let mut len = 0usize;
        // The intake's own frame, and how many frames are newer than it.
        let mut inline = None;
        while !link.is_null() {
            if link == inline_link() {
                // SAFETY: the swap made this chain ours alone; the frame is read out once
                // and the node given back only after.
                let (frame, enqueued, next) = unsafe { self.with_node(link, |n| Node::take(n)) };
                self.give_back_inline();
                inline = Some((frame, enqueued, len));
                // Nodes in memory: the count cannot reach usize::MAX.
                len = len.wrapping_add(1);
                link = live_link(next);
                continue;
            }
            len = len.wrapping_add(1);
            // SAFETY: the swap made this chain ours alone.
            let next = live_link(unsafe { (*link).next });
            unsafe { (*link).next = oldest };
            oldest = link;
            link = next;
        }
        // Weakened variant, only to prove loom model intake6 catches it: the own node's
        // frame put as many places from the oldest as it was from the newest.
        // newer < len: no borrow.
        let at = |newer: usize| {
            if weakened!("inline_at_newer") { newer } else { len.wrapping_sub(1).wrapping_sub(newer) }
        };
        let inline = inline.map(|(frame, enqueued, newer)| Inline { frame, enqueued, at: at(newer) });
        Batch { head: oldest, len, yielded: 0, inline, _frames: PhantomData }
    }

    /// Asks for the lines of the nodes the enqueues took from the cache since the
    /// server's last drain (`hints`), before the walk of the stack at `top` reads them:
    /// each node's address comes from the node pushed after it, so unasked, each would
    /// cost a line transfer of its own in turn. A stack whose newest frame rides the
    /// intake's own node is left unasked (it usually holds that frame alone).
    #[inline]
    fn prefetch_taken(&self, top: *mut Node<F>, hints: &NodeHints<F>) {
        #[cfg(not(loom))]
        if !top.is_null() && top != inline_link() {
            for (place, &node) in self.cache.iter().zip(&hints.cached) {
                // The places the drains filled are a prefix (each fills the first empty
                // one), and so are the hints.
                if node.is_null() {
                    break;
                }
                // Relaxed: a hint. An empty place was taken since the drain filled it.
                if place.load(Ordering::Relaxed).is_null() {
                    crate::prefetch::for_write(node);
                }
            }
        }
        #[cfg(loom)]
        let _ = (top, hints);
    }

    /// Asks for the line of the node in the cache's place after `taken`, which the next
    /// enqueue most likely takes (enqueues take the first full place): the server's drain
    /// read it last, on its CPU, and the enqueue that just took the node at `taken` fills
    /// that one meanwhile.
    #[inline]
    fn prefetch_next_cached(&self, taken: usize) {
        #[cfg(not(loom))]
        if let Some(next) = self.cache.get(taken.wrapping_add(1)) {
            // Relaxed: a hint; the enqueue that takes the node swaps it out (Acquire).
            let node = next.load(Ordering::Relaxed);
            if !node.is_null() {
                crate::prefetch::for_write(node);
            }
        }
        #[cfg(loom)]
        let _ = taken;
    }

    /// Takes every frame pushed so far, tells `taken` how many, then hands each to
    /// `sink`, oldest first, keeping the emptied nodes in the cache (freeing those it has
    /// no place for). `taken` runs before the sink: a sink that unwinds cannot leave the
    /// frames counted as still in the intake.
    ///
    /// `hints` is the server's: what its drains cached, for the next one to prefetch.
    pub(crate) fn drain_hinted(
        &self,
        hints: &mut NodeHints<F>,
        taken: impl FnOnce(usize),
        mut sink: impl FnMut(F, Instant),
    ) {
        let top = self.take_stack();
        self.prefetch_taken(top, hints);
        let mut batch = self.batch_of(top);
        taken(batch.len);
        // Each node is cached before the sink runs: if it unwinds, the batch's drop frees
        // what is left.
        while let Some((frame, enqueued)) = batch.pop(|node| {
            if let Some(hint) = self.cache_node(node).and_then(|place| hints.cached.get_mut(place)) {
                *hint = node;
            }
        }) {
            sink(frame, enqueued);
        }
    }

    /// [`drain_hinted`](Self::drain_hinted) with hints of its own, for tests.
    #[cfg(test)]
    pub(crate) fn drain(&self, taken: impl FnOnce(usize), sink: impl FnMut(F, Instant)) {
        self.drain_hinted(&mut NodeHints::new(), taken, sink);
    }

    /// An empty node from the cache, if it holds one: the caller's alone.
    fn cached_node(&self) -> Option<*mut Node<F>> {
        // Weakened variant, only to prove the loom model catches it: a node taken
        // without ordering the drain's read of its last frame before this context's fill.
        let take = if weakened!("node_cache_relaxed") { Ordering::Relaxed } else { Ordering::Acquire };
        for (i, place) in self.cache.iter().enumerate() {
            // A load first: an empty place costs no write to the line.
            if !place.load(Ordering::Relaxed).is_null() {
                // Acquire: the drain that emptied the node read its frame out before its
                // Release put the node here.
                let node = if weakened!("cache_take_load_store") {
                    // Weakened variant, only to prove the loom model catches it: a load
                    // and a store instead of one swap, so two enqueues can take one node.
                    let node = place.load(take);
                    place.store(ptr::null_mut(), Ordering::Relaxed);
                    node
                } else {
                    place.swap(ptr::null_mut(), take)
                };
                if !node.is_null() {
                    self.prefetch_next_cached(i);
                    #[cfg(test)]
                    self.reused.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
                    return Some(node);
                }
            }
        }
        None
    }

    /// Keeps an empty node (the caller's alone) in the cache, or frees it if the cache
    /// is full. The place it went to, if any.
    fn cache_node(&self, node: *mut Node<F>) -> Option<usize> {
        let put = if weakened!("node_cache_relaxed") { Ordering::Relaxed } else { Ordering::Release };
        for (i, place) in self.cache.iter().enumerate() {
            // Release: the frame was read out of the node before an enqueue that takes
            // it (Acquire) fills it again.
            if place.load(Ordering::Relaxed).is_null()
                && place.compare_exchange(ptr::null_mut(), node, put, Ordering::Relaxed).is_ok()
            {
                return Some(i);
            }
        }
        // SAFETY: empty, and ours alone.
        unsafe { Node::free(node) };
        None
    }

    /// Frees every node in the cache (a removed txq's: its slot may never be reused).
    /// The intake's own node needs no freeing.
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

/// What a txq's server remembers of its drains: the node each put in each place of the
/// intake's cache, where the enqueues that empty the place build their frames, so the
/// lines its next drain walks ([`Intake::drain_hinted`]). Only ever prefetched, never
/// read through: a node named here may since have been freed.
pub(crate) struct NodeHints<F> {
    cached: [*mut Node<F>; NODE_CACHE],
}

// SAFETY: the pointers are addresses to prefetch, never dereferenced.
unsafe impl<F> Send for NodeHints<F> {}
// SAFETY: as above.
unsafe impl<F> Sync for NodeHints<F> {}

impl<F> NodeHints<F> {
    /// Hints of no node (a txq never drained, or whose cache was freed).
    pub(crate) const fn new() -> NodeHints<F> {
        NodeHints { cached: [ptr::null_mut(); NODE_CACHE] }
    }
}

/// Frames built into nodes of one intake and linked, newest first, not yet pushed: what
/// a burst pushes with one compare-and-swap. Dropping it drops its frames. Bound to its
/// intake, because its nodes (the intake's own among them) may go nowhere else. A chain
/// forgotten (`mem::forget`) keeps the intake's own node from it for good (its frames
/// leak, as any forgotten value's do); the crate never forgets one.
pub(crate) struct Chain<'a, F> {
    intake: &'a Intake<F>,
    newest: *mut Node<F>,
    oldest: *mut Node<F>,
    len: usize,
}

impl<'a, F> Chain<'a, F> {
    pub(crate) fn new(intake: &'a Intake<F>) -> Chain<'a, F> {
        Chain { intake, newest: ptr::null_mut(), oldest: ptr::null_mut(), len: 0 }
    }

    /// Frames in the chain.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Links `frame` as the newest, in the intake's own node if it is free, else in one
    /// from its cache, else in a new one. `Err(frame)` if no memory is left for its node.
    pub(crate) fn add(&mut self, frame: F, now: Instant) -> Result<(), F> {
        let intake = self.intake;
        let link = if intake.take_inline() {
            inline_link()
        } else {
            let Some(node) = intake.cached_node().or_else(Node::alloc) else { return Err(frame) };
            node
        };
        let newest = self.newest;
        // SAFETY: an empty node, ours alone until the chain is pushed.
        unsafe { intake.with_node(link, |n| Node::fill(n, frame, now, newest)) };
        if self.oldest.is_null() {
            self.oldest = link;
        }
        self.newest = link;
        self.len = self.len.wrapping_add(1); // nodes in memory
        Ok(())
    }

    /// Pushes the chain onto its intake, with one compare-and-swap.
    pub(crate) fn push(self) {
        let (intake, newest, oldest) = (self.intake, self.newest, self.oldest);
        // The nodes now belong to the intake (or nobody, for an empty chain).
        core::mem::forget(self);
        if newest.is_null() {
            return;
        }
        let mut top = intake.top.load(Ordering::Relaxed);
        loop {
            // SAFETY: the chain is ours until the compare-and-swap below publishes it.
            unsafe { intake.with_node(oldest, |n| (*n).next = top) };
            // Release: the nodes' contents come before a consumer's Acquire swap.
            match intake.top.compare_exchange_weak(top, newest, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(seen) => top = seen,
            }
        }
    }
}

impl<F> Drop for Chain<'_, F> {
    fn drop(&mut self) {
        let mut link = self.newest;
        while !link.is_null() {
            let own = link == inline_link();
            // Weakened variant, only to prove loom model intake5 catches it: the own node
            // given back before its frame is read out.
            if own && weakened!("chain_drop_early_give_back") {
                self.intake.give_back_inline();
            }
            // SAFETY: the chain owns its nodes; each is read out once, then freed or, the
            // intake's own, given back.
            let (frame, _, next) = unsafe { self.intake.with_node(link, |n| Node::take(n)) };
            // The node first, then the frame: a frame whose drop unwinds cannot keep the
            // intake's own node from it for good.
            if !own {
                unsafe { Node::free(link) };
            } else if !weakened!("chain_drop_early_give_back") {
                self.intake.give_back_inline();
            }
            drop(frame);
            link = next;
        }
    }
}

/// The frame of an intake's own node, moved into a batch, and its place in it.
struct Inline<F> {
    frame: F,
    enqueued: Instant,
    /// Frames of the batch older than it.
    at: usize,
}

/// Frames taken from an intake, oldest first, each with the time it was enqueued.
/// Dropping the batch drops the frames left in it. It holds no node of the intake's
/// (the frame of the intake's own node is moved into it), so it may outlive the intake.
pub(crate) struct Batch<F> {
    head: *mut Node<F>,
    /// Frames the batch was taken with.
    len: usize,
    /// Frames handed out so far.
    yielded: usize,
    inline: Option<Inline<F>>,
    _frames: PhantomData<F>,
}

// SAFETY: the batch owns its nodes and frames alone.
unsafe impl<F: Send> Send for Batch<F> {}
// SAFETY: `&Batch` gives access to nothing.
unsafe impl<F: Sync> Sync for Batch<F> {}

impl<F> Batch<F> {
    pub(crate) fn empty() -> Batch<F> {
        Batch { head: ptr::null_mut(), len: 0, yielded: 0, inline: None, _frames: PhantomData }
    }

    /// Frames the batch was taken with (those iterated out included).
    pub(crate) fn taken_len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_null() && self.inline.is_none()
    }

    /// The next frame, oldest first; its emptied node (never the intake's own) goes to
    /// `emptied`, before the frame is returned.
    #[inline]
    fn pop(&mut self, emptied: impl FnOnce(*mut Node<F>)) -> Option<(F, Instant)> {
        if self.inline.as_ref().is_some_and(|i| i.at == self.yielded) {
            self.yielded = self.yielded.wrapping_add(1); // frames in memory
            return self.inline.take().map(|i| (i.frame, i.enqueued));
        }
        if self.head.is_null() {
            return None;
        }
        let node = self.head;
        // SAFETY: the batch owns the chain; each node is read out once.
        let (frame, enqueued, next) = unsafe { Node::take(node) };
        self.head = next;
        self.yielded = self.yielded.wrapping_add(1);
        emptied(node);
        Some((frame, enqueued))
    }
}

impl<F> Iterator for Batch<F> {
    type Item = (F, Instant);

    fn next(&mut self) -> Option<(F, Instant)> {
        // SAFETY: emptied, and the batch's alone.
        self.pop(|node| unsafe { Node::free(node) })
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
    fn the_hints_name_the_nodes_the_next_drain_walks() {
        let intake = Intake::without_own_node();
        let mut hints = NodeHints::new();
        for i in 0..5u32 {
            assert!(intake.push(i, Instant::ZERO).is_ok());
        }
        intake.drain_hinted(&mut hints, |n| assert_eq!(n, 5), |_, _| ());
        // Cached in the first five places, and hinted there: a prefix.
        assert!(hints.cached[..5].iter().all(|p| !p.is_null()));
        assert!(hints.cached[5..].iter().all(|p| p.is_null()));
        for i in 10..13u32 {
            assert!(intake.push(i, Instant::ZERO).is_ok());
        }
        // The enqueues took the first three places' nodes: the places are empty, and
        // every node of the stack is one the hints name there.
        assert!(intake.cache[..3].iter().all(|p| p.load(Ordering::Relaxed).is_null()));
        assert!(intake.cache[3..5].iter().all(|p| !p.load(Ordering::Relaxed).is_null()));
        let mut link = intake.top.load(Ordering::Acquire);
        let mut walked = 0;
        while !link.is_null() {
            assert!(hints.cached[..3].contains(&link), "a node of the stack the hints do not name");
            // SAFETY: the stack's nodes stay allocated until drained; nothing runs at once.
            link = unsafe { (*link).next };
            walked += 1;
        }
        assert_eq!(walked, 3);
        let mut got = Vec::new();
        intake.drain_hinted(&mut hints, |n| assert_eq!(n, 3), |f, _| got.push(f));
        assert_eq!(got, [10, 11, 12], "the hints change nothing of the order");
    }

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
        let mut chain = Chain::new(&intake);
        for i in 1..4u32 {
            chain.add(i, Instant::ZERO).unwrap();
        }
        assert_eq!(chain.len(), 3);
        chain.push();
        Chain::new(&intake).push();
        intake.push(4, Instant::ZERO).unwrap();
        let got: Vec<u32> = intake.take_all().map(|(f, _)| f).collect();
        assert_eq!(got, [0, 1, 2, 3, 4]);
        // A chain dropped unpushed frees its frames.
        let counted = alloc::rc::Rc::new(());
        let rcs = Intake::new();
        let mut chain = Chain::new(&rcs);
        chain.add(counted.clone(), Instant::ZERO).unwrap();
        chain.add(counted.clone(), Instant::ZERO).unwrap();
        drop(chain);
        assert_eq!(alloc::rc::Rc::strong_count(&counted), 1);
        // It gave the intake's own node back: the next frame rides in it again.
        rcs.push(counted.clone(), Instant::ZERO).unwrap();
        assert_eq!(rcs.inline_taken.load(core::sync::atomic::Ordering::Relaxed), 2);
        drop(rcs);
        assert_eq!(alloc::rc::Rc::strong_count(&counted), 1);
    }

    #[test]
    fn a_drain_keeps_its_nodes_for_the_next_enqueues() {
        let intake = Intake::without_own_node();
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
        let mut chain = Chain::new(&intake);
        chain.add(11, Instant::ZERO).unwrap();
        chain.push();
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
        let intake = Intake::without_own_node();
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
        let intake = Intake::without_own_node();
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

    #[test]
    fn the_first_frame_rides_in_the_intakes_own_node_and_the_rest_in_nodes() {
        let intake = Intake::new();
        let taken = |i: &Intake<u32>| i.inline_taken.load(core::sync::atomic::Ordering::Relaxed);
        intake.push(0u32, Instant::ZERO).unwrap();
        intake.push(1, Instant::ZERO).unwrap();
        assert_eq!(taken(&intake), 1, "the second frame found the own node taken");
        let mut got = Vec::new();
        intake.drain(|n| assert_eq!(n, 2), |f, _| got.push(f));
        assert_eq!(got, [0, 1]);
        // The own node came back (and is taken first); the other node went to the cache.
        assert_eq!(intake.cached(), 1);
        intake.push(2, Instant::ZERO).unwrap();
        assert_eq!((taken(&intake), intake.cached()), (2, 1));
        assert_eq!(intake.take_all().map(|(f, _)| f).collect::<Vec<_>>(), [2]);
    }

    #[test]
    fn the_own_nodes_frame_keeps_its_place_anywhere_in_a_batch() {
        // A chain takes the own node and waits; frames behind it in time ride in nodes.
        let intake = Intake::new();
        let mut chain = Chain::new(&intake);
        chain.add(1u32, Instant::from_micros(1)).unwrap();
        intake.push(0, Instant::ZERO).unwrap();
        chain.push();
        intake.push(2, Instant::from_micros(2)).unwrap();
        let batch = intake.take_all();
        assert_eq!(batch.taken_len(), 3);
        let got: Vec<_> = batch.collect();
        assert_eq!(got, (0..3).map(|i| (i, Instant::from_micros(u64::from(i)))).collect::<Vec<_>>());
        // Newest and oldest too.
        for own_first in [true, false] {
            let intake = Intake::new();
            let mut chain = Chain::new(&intake);
            chain.add(if own_first { 0u32 } else { 2 }, Instant::ZERO).unwrap();
            if own_first {
                chain.push();
                intake.push(1, Instant::ZERO).unwrap();
                intake.push(2, Instant::ZERO).unwrap();
            } else {
                intake.push(0, Instant::ZERO).unwrap();
                intake.push(1, Instant::ZERO).unwrap();
                chain.push();
            }
            let mut got = Vec::new();
            intake.drain(|n| assert_eq!(n, 3), |f, _| got.push(f));
            assert_eq!(got, [0, 1, 2], "own node first: {own_first}");
        }
    }

    #[test]
    fn a_batch_holding_the_own_nodes_frame_outlives_its_intake() {
        let counted = alloc::rc::Rc::new(());
        let intake = Intake::new();
        intake.push(counted.clone(), Instant::ZERO).unwrap();
        intake.push(counted.clone(), Instant::ZERO).unwrap();
        let batch = intake.take_all();
        // Moved and dropped: the batch points into neither.
        let moved = intake;
        drop(moved);
        assert_eq!(batch.count(), 2);
        assert_eq!(alloc::rc::Rc::strong_count(&counted), 1);
        // A batch dropped unread drops the own node's frame too.
        let intake = Intake::new();
        intake.push(counted.clone(), Instant::ZERO).unwrap();
        drop(intake.take_all());
        assert_eq!(alloc::rc::Rc::strong_count(&counted), 1);
        // So does an intake dropped with it in the stack, after being moved.
        let intake = Intake::new();
        intake.push(counted.clone(), Instant::ZERO).unwrap();
        let moved = Some(intake);
        drop(moved);
        assert_eq!(alloc::rc::Rc::strong_count(&counted), 1);
    }

    #[test]
    fn an_intake_moved_with_its_own_node_in_the_stack_still_finds_the_frame() {
        let intake = Intake::new();
        intake.push(7u32, Instant::ZERO).unwrap();
        let boxed = alloc::boxed::Box::new(intake);
        let got: Vec<_> = boxed.take_all().map(|(f, _)| f).collect();
        assert_eq!(got, [7]);
    }

    #[test]
    fn the_own_node_and_its_flag_sit_on_the_inboxs_first_line() {
        // A driver's frame is a pointer or a small handle: for one the size of a pointer,
        // everything an enqueue and a drain write when the server keeps up fits the
        // first 64 bytes, with the inbox's count before it (8 bytes with padding); the
        // node cache comes after.
        let end = core::mem::offset_of!(Intake<usize>, inline_free) + 1;
        assert!(8 + end <= 64, "the intake's hot fields end at byte {end}");
        assert!(core::mem::offset_of!(Intake<usize>, inline) < core::mem::offset_of!(Intake<usize>, inline_free));
        assert!(core::mem::offset_of!(Intake<usize>, cache) > core::mem::offset_of!(Intake<usize>, inline_free));
    }

    #[test]
    fn a_chain_whose_frame_unwinds_on_drop_still_gives_the_own_node_back() {
        struct Bomb;
        impl Drop for Bomb {
            fn drop(&mut self) {
                panic!("the frame's destructor unwinds");
            }
        }
        let intake = Intake::new();
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut chain = Chain::new(&intake);
            chain.add(Bomb, Instant::ZERO).unwrap_or_else(|_| unreachable!());
            drop(chain);
        }));
        assert!(unwound.is_err());
        intake.push(Bomb, Instant::ZERO).unwrap_or_else(|_| unreachable!());
        assert_eq!(intake.inline_taken.load(core::sync::atomic::Ordering::Relaxed), 2, "the own node came back");
        let batch = intake.take_all();
        core::mem::forget(batch);
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
    use std::sync::atomic::AtomicUsize;

    /// Counts an execution that reached the path a model checks.
    fn reached(executions: &AtomicUsize, yes: bool) {
        if yes {
            executions.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Fails a model no execution of which reached its path: it checked nothing.
    fn assert_reached(executions: &AtomicUsize, what: &str) {
        assert!(executions.load(std::sync::atomic::Ordering::Relaxed) > 0, "{what}");
    }

    /// Runs `f` on its own thread, with a handle on the shared intake.
    fn on(intake: &Arc<Intake<u32>>, f: impl FnOnce(&Intake<u32>) + Send + 'static) -> thread::JoinHandle<()> {
        let intake = intake.clone();
        thread::spawn(move || f(&intake))
    }

    /// Times the intake's own node was taken.
    fn taken(intake: &Intake<u32>) -> usize {
        intake.inline_taken.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Model intake1: an enqueuer pushes frame 1; the server drains it; the enqueuer,
    /// told so through a Relaxed flag (which orders nothing), pushes frame 2, which may
    /// be built into the very node that carried frame 1. Loom's cell checks that the
    /// fill of a reused node comes after the drain's read of its last frame (the cache's
    /// Release and Acquire alone order them); both frames arrive once and in order; the
    /// intake frees every node when dropped; and some execution must really reuse a node.
    /// The intake's own node is kept out (model intake3 checks it), so that the frames
    /// ride in cached nodes.
    #[test]
    fn intake1_a_reused_node_is_filled_only_after_its_last_frame_was_read() {
        static REUSED: AtomicUsize = AtomicUsize::new(0);
        crate::loom_model::model(|| {
            let intake = push_drain_push(Intake::without_own_node());
            REUSED.fetch_add(
                intake.reused.load(std::sync::atomic::Ordering::Relaxed),
                std::sync::atomic::Ordering::Relaxed,
            );
        });
        assert_reached(&REUSED, "no execution reused a node: the model checks nothing");
    }

    /// Models intake1 and intake3: an enqueuer pushes frame 1; the server drains it and
    /// tells the enqueuer through a Relaxed flag (which orders nothing), which then
    /// pushes frame 2; both must arrive once and in order. Returns the intake.
    fn push_drain_push(intake: Intake<u32>) -> Arc<Intake<u32>> {
        let intake = Arc::new(intake);
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
        intake
    }

    /// Model intake2: the server drains three frames into a cache of two places (the
    /// third node is freed), then two enqueuers race for the cached nodes. No node may
    /// go to both (loom's cell checks the fills), both frames arrive, and the intake
    /// frees every node when dropped; some execution must have both enqueuers take a
    /// cached node. Without the intake's own node (model intake4 races for it).
    #[test]
    fn intake2_two_enqueuers_never_take_the_same_cached_node() {
        static BOTH: AtomicUsize = AtomicUsize::new(0);
        crate::loom_model::model(|| {
            let intake = Arc::new(Intake::without_own_node());
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
            reached(&BOTH, intake.reused.load(std::sync::atomic::Ordering::Relaxed) == 2);
        });
        assert_reached(&BOTH, "no execution had both enqueuers reuse a node");
    }

    /// Model intake3: model intake1 with the intake's own node. The enqueuer's frame 1
    /// rides in it; the server takes it out and gives the node back; frame 2, told of the
    /// drain only through a Relaxed flag, rides in it again. Loom's cells check that the
    /// second fill comes after the first frame's read (the flag's Release and Acquire
    /// alone order them); both frames arrive once and in order; some execution must
    /// really take the own node twice.
    #[test]
    fn intake3_the_own_node_is_filled_again_only_after_its_frame_was_read() {
        static TWICE: AtomicUsize = AtomicUsize::new(0);
        crate::loom_model::model(|| {
            let intake = push_drain_push(Intake::new());
            reached(&TWICE, taken(&intake) == 2);
        });
        assert_reached(&TWICE, "no execution took the own node twice: the model checks nothing");
    }

    /// Model intake4: two enqueuers race for the intake's own node while a server
    /// drains. At most one holds it at a time (loom's cells check the fills) and every
    /// frame arrives once; some execution must have both enqueuers ride in the own node
    /// (the drain gave it back in between).
    #[test]
    fn intake4_two_enqueuers_never_hold_the_own_node_at_once() {
        static BOTH: AtomicUsize = AtomicUsize::new(0);
        crate::loom_model::model(|| {
            let intake = Arc::new(Intake::new());
            let enqueuers: Vec<_> =
                [10u32, 20].into_iter().map(|f| on(&intake, move |i| i.push(f, Instant::ZERO).unwrap())).collect();
            let mut got = Vec::new();
            intake.drain(|_| (), |f, _| got.push(f));
            for e in enqueuers {
                e.join().unwrap();
            }
            got.extend(intake.take_all().map(|(f, _)| f));
            got.sort_unstable();
            assert_eq!(got, [10, 20]);
            reached(&BOTH, taken(&intake) == 2);
        });
        assert_reached(&BOTH, "no execution had both enqueuers ride in the own node");
    }

    /// Model intake5: an enqueuer builds a frame into the intake's own node and drops
    /// the chain unpushed (a burst that unwinds) while another enqueuer pushes. The own
    /// node goes back only after its frame is read out (loom's cells check the other
    /// enqueuer's fill), only the pushed frame is in the intake, and some execution must
    /// have the second enqueuer ride in the node the first gave back.
    #[test]
    fn intake5_a_dropped_chain_gives_the_own_node_back_once_its_frame_is_out() {
        static TWICE: AtomicUsize = AtomicUsize::new(0);
        crate::loom_model::model(|| {
            let intake = Arc::new(Intake::new());
            let dropper = on(&intake, |i| {
                let mut chain = Chain::new(i);
                chain.add(1u32, Instant::ZERO).unwrap();
                drop(chain);
            });
            let pusher = on(&intake, |i| i.push(2u32, Instant::ZERO).unwrap());
            dropper.join().unwrap();
            pusher.join().unwrap();
            let got: Vec<u32> = intake.take_all().map(|(f, _)| f).collect();
            assert_eq!(got, [2]);
            reached(&TWICE, taken(&intake) == 2);
        });
        assert_reached(&TWICE, "no execution reused the own node a dropped chain gave back");
    }

    /// Model intake6: one enqueuer pushes 1, 2, 3 while the server drains in a loop, so
    /// the own node's frame may be the oldest, a middle or the newest of a batch: the
    /// frames must come out in order. Some execution must drain a batch of two or more
    /// holding the own node's frame after it was reused.
    #[test]
    fn intake6_one_enqueuers_frames_keep_their_order_around_the_own_node() {
        static MIXED: AtomicUsize = AtomicUsize::new(0);
        crate::loom_model::model(|| {
            let intake = Arc::new(Intake::new());
            let producer = on(&intake, |i| {
                for f in 1..=3u32 {
                    i.push(f, Instant::ZERO).unwrap();
                }
            });
            let mut got = Vec::new();
            let mut widest = 0;
            while got.len() < 3 {
                let mut n = 0;
                intake.drain(|k| n = k, |f, _| got.push(f));
                widest = widest.max(n);
                thread::yield_now();
            }
            producer.join().unwrap();
            assert_eq!(got, [1, 2, 3]);
            reached(&MIXED, taken(&intake) >= 2 && widest >= 2);
        });
        assert_reached(&MIXED, "no execution drained the reused own node with other frames");
    }
}
