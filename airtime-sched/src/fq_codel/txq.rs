//! [`FqCodelTxq`]: enqueue with limits, DRR++ dequeue through CoDel, purge.

use super::codel::{CodelParams, CodelQueue, CodelVars, codel_dequeue};
use super::flows::{FlowTable, ListId};
use super::{DropReason, Dropped, EnqueueOutcome, FqCodelConfig, FqCodelConfigError, FqCodelStats, FqFrame, Queued};
use crate::{Instant, Txq};
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::convert::Infallible;

/// Most DRR credit one frame takes (a frame longer than this is charged this much).
const MAX_DEBIT_BYTES: u32 = 65_535;

/// Most frames the limit path drops from a flow at a time.
const MAX_DROP_BATCH: usize = 32;

/// Counters of frames, and the kept drops: everything a frame's exit has to update.
struct Books<F> {
    backlog_packets: u64,
    backlog_bytes: u64,
    memory_usage: u64,
    flows_active: u32,
    keep_dropped: bool,
    drops: Vec<Dropped<F>>,
    stats: FqCodelStats,
}

impl<F> Books<F> {
    /// Accounts a frame leaving a flow (sent or dropped).
    fn on_exit(&mut self, q: &Queued<F>, flow_emptied: bool) {
        self.backlog_packets = self.backlog_packets.saturating_sub(1);
        self.backlog_bytes = self.backlog_bytes.saturating_sub(u64::from(q.len));
        self.memory_usage = self.memory_usage.saturating_sub(u64::from(q.truesize));
        if flow_emptied {
            self.flows_active = self.flows_active.saturating_sub(1);
        }
    }

    /// Counts a drop and keeps the frame for `drain_drops` (or releases it).
    fn drop_frame(&mut self, q: Queued<F>, reason: DropReason) {
        let s = &mut self.stats;
        let counter = match reason {
            DropReason::Codel => &mut s.codel_drops,
            DropReason::PacketLimit => &mut s.overlimit_drops,
            DropReason::MemoryLimit => &mut s.overmemory_drops,
            DropReason::OutOfMemory => &mut s.alloc_drops,
            DropReason::Purged => &mut s.purged,
        };
        *counter = counter.saturating_add(1);
        if !self.keep_dropped {
            return;
        }
        if self.drops.try_reserve(1).is_ok() {
            self.drops.push(Dropped { frame: q.frame, reason, enqueued: q.enqueued });
        } else {
            self.stats.unkept_drops = self.stats.unkept_drops.saturating_add(1);
        }
    }
}

/// Takes the head frame of a flow, keeping every counter exact. Returns it with the
/// bytes left in the flow.
fn pop_head<F>(
    frames: &mut VecDeque<Queued<F>>,
    flow_backlog: &mut u64,
    books: &mut Books<F>,
) -> Option<(Queued<F>, u64)> {
    let q = frames.pop_front()?;
    *flow_backlog = flow_backlog.saturating_sub(u64::from(q.len));
    books.on_exit(&q, frames.is_empty());
    Some((q, *flow_backlog))
}

/// One flow as CoDel sees it.
struct FlowView<'a, F> {
    frames: &'a mut VecDeque<Queued<F>>,
    backlog: &'a mut u64,
    books: &'a mut Books<F>,
}

impl<F> CodelQueue<F> for FlowView<'_, F> {
    fn pop(&mut self) -> Option<(Queued<F>, u64)> {
        pop_head(self.frames, self.backlog, self.books)
    }

    fn drop_frame(&mut self, frame: Queued<F>) {
        self.books.drop_frame(frame, DropReason::Codel);
    }

    fn count_mark(&mut self) {
        let marks = &mut self.books.stats.codel_ce_marks;
        *marks = marks.saturating_add(1);
    }
}

/// An FQ-CoDel software queue for one (station, TID): hashed flows, byte DRR++ between
/// them, CoDel per flow, packet and memory limits that drop from the fattest flow. See
/// the [module docs](super) for the algorithm.
///
/// Not thread-safe by itself (`&mut self`): the scheduler guarantees one server per txq;
/// enqueue and dequeue from two contexts need the owner's lock around the txq.
pub struct FqCodelTxq<F> {
    config: FqCodelConfig,
    params: CodelParams,
    table: FlowTable<F>,
    books: Books<F>,
}

impl<F> core::fmt::Debug for FqCodelTxq<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FqCodelTxq")
            .field("config", &self.config)
            .field("backlog_packets", &self.books.backlog_packets)
            .field("backlog_bytes", &self.books.backlog_bytes)
            .field("kept_drops", &self.books.drops.len())
            .finish_non_exhaustive()
    }
}

impl<F: FqFrame> FqCodelTxq<F> {
    /// An empty txq; allocates its flow table once, here.
    pub fn new(config: FqCodelConfig) -> Result<Self, FqCodelConfigError> {
        config.validate()?;
        let table = FlowTable::try_new(config.flows).ok_or(FqCodelConfigError::OutOfMemory)?;
        let stats = FqCodelStats {
            codel_target_us: config.codel_target_us,
            codel_interval_us: config.codel_interval_us,
            ecn: config.ecn,
            ..FqCodelStats::default()
        };
        Ok(FqCodelTxq {
            config,
            params: CodelParams {
                target_us: config.codel_target_us,
                interval_us: config.codel_interval_us,
                ecn: config.ecn,
            },
            table,
            books: Books {
                backlog_packets: 0,
                backlog_bytes: 0,
                memory_usage: 0,
                flows_active: 0,
                keep_dropped: config.keep_dropped,
                drops: Vec::new(),
                stats,
            },
        })
    }

    /// The parameters this txq was built with.
    pub fn config(&self) -> &FqCodelConfig {
        &self.config
    }

    /// Frames queued.
    pub fn backlog_packets(&self) -> u64 {
        self.books.backlog_packets
    }

    /// Bytes queued (sum of frame lengths).
    pub fn backlog_bytes(&self) -> u64 {
        self.books.backlog_bytes
    }

    /// The counters now.
    pub fn stats(&self) -> FqCodelStats {
        FqCodelStats {
            backlog_packets: self.books.backlog_packets,
            backlog_bytes: self.books.backlog_bytes,
            memory_usage: self.books.memory_usage,
            flows_active: self.books.flows_active,
            ..self.books.stats
        }
    }

    /// Dropped frames not yet drained.
    pub fn pending_drops(&self) -> usize {
        self.books.drops.len()
    }

    /// Takes the dropped frames kept since the last call, oldest first (keeps the
    /// buffer's capacity). Frames left in the iterator when it is dropped are released.
    pub fn drain_drops(&mut self) -> alloc::vec::Drain<'_, Dropped<F>> {
        self.books.drops.drain(..)
    }

    /// Queues `frame`, stamped with `now` for CoDel, then enforces the packet and memory
    /// limits by dropping batches from the head of the fattest flow. Never loses a frame
    /// silently: the outcome says how many frames were dropped, and whether `frame`
    /// itself was (it then goes to the drop buffer like any drop).
    pub fn enqueue(&mut self, frame: F, now: Instant) -> EnqueueOutcome {
        let s = &mut self.books.stats;
        s.enqueued = s.enqueued.saturating_add(1);
        let hash = frame.flow_hash();
        let q = Queued { len: frame.len_bytes(), truesize: frame.truesize(), frame, enqueued: now };
        let index = self.table.index_of(hash);

        // The index is scaled below the table length, so the flow exists; an allocation
        // failure of its frame store drops the frame instead of aborting.
        let Some(flow) = self.table.get_mut(index).and_then(|f| f.frames.try_reserve(1).is_ok().then_some(f)) else {
            self.books.drop_frame(q, DropReason::OutOfMemory);
            return EnqueueOutcome::Dropped { reason: DropReason::OutOfMemory, dropped: 1 };
        };
        let s = &mut self.books.stats;
        if flow.frames.is_empty() {
            self.books.flows_active = self.books.flows_active.saturating_add(1);
        } else if flow.hash != hash {
            s.collisions = s.collisions.saturating_add(1);
        }
        flow.hash = hash;
        flow.backlog_bytes = flow.backlog_bytes.saturating_add(u64::from(q.len));
        self.books.backlog_packets = self.books.backlog_packets.saturating_add(1);
        self.books.backlog_bytes = self.books.backlog_bytes.saturating_add(u64::from(q.len));
        self.books.memory_usage = self.books.memory_usage.saturating_add(u64::from(q.truesize));
        flow.frames.push_back(q);
        if flow.list().is_none() {
            flow.deficit = i64::from(self.config.quantum_bytes);
            self.table.push_back(ListId::New, index);
            s.new_flows = s.new_flows.saturating_add(1);
        }

        let (dropped, own_reason) = self.enforce_limits(index);
        if self.books.backlog_packets == 0 {
            // Limits below one frame dropped everything: no dequeue may come to find
            // the flows empty (a round asks `is_known_empty` first).
            self.unlist_drained();
        }
        let own_dropped = self.table.get(index).is_none_or(|f| f.frames.is_empty());
        match own_reason {
            Some(reason) if own_dropped => EnqueueOutcome::Dropped { reason, dropped },
            _ => EnqueueOutcome::Queued { dropped },
        }
    }

    /// While over a limit, drops a batch from the head of the fattest flow. Returns the
    /// frames dropped and the reason of the last batch taken from flow `watched`.
    fn enforce_limits(&mut self, watched: u32) -> (u32, Option<DropReason>) {
        let mut dropped = 0u32;
        let mut watched_reason = None;
        loop {
            let reason = if self.books.memory_usage > self.config.memory_limit_bytes {
                DropReason::MemoryLimit
            } else if self.books.backlog_packets > u64::from(self.config.packet_limit) {
                DropReason::PacketLimit
            } else {
                break;
            };
            let Some(fattest) = self.fattest_flow() else {
                break;
            };
            let Some(flow) = self.table.get_mut(fattest) else {
                break;
            };
            let batch = (flow.frames.len() / 2).clamp(1, MAX_DROP_BATCH);
            for _ in 0..batch {
                let Some((q, _)) = pop_head(&mut flow.frames, &mut flow.backlog_bytes, &mut self.books) else {
                    break;
                };
                self.books.drop_frame(q, reason);
                dropped = dropped.saturating_add(1);
            }
            if fattest == watched {
                watched_reason = Some(reason);
            }
        }
        (dropped, watched_reason)
    }

    /// The backlogged flow with the most bytes queued (the first such on ties; by
    /// packets among flows of zero-length frames). O(listed flows): every backlogged
    /// flow is listed.
    fn fattest_flow(&self) -> Option<u32> {
        let mut best: Option<(u32, (u64, usize))> = None;
        for (index, flow) in self.table.iter_listed() {
            let size = (flow.backlog_bytes, flow.frames.len());
            if size.1 > 0 && best.is_none_or(|(_, b)| size > b) {
                best = Some((index, size));
            }
        }
        best.map(|(index, _)| index)
    }

    /// Drops every queued frame (reason [`DropReason::Purged`]), resets every flow, and
    /// returns how many frames it dropped. Counters other than the backlog are kept.
    pub fn purge(&mut self) -> usize {
        let mut purged = 0usize;
        for list in [ListId::New, ListId::Old] {
            while let Some(index) = self.table.pop_front(list) {
                let Some(flow) = self.table.get_mut(index) else {
                    continue;
                };
                while let Some((q, _)) = pop_head(&mut flow.frames, &mut flow.backlog_bytes, &mut self.books) {
                    self.books.drop_frame(q, DropReason::Purged);
                    purged = purged.saturating_add(1);
                }
                flow.codel = CodelVars::new();
                flow.deficit = 0;
            }
        }
        purged
    }

    /// Ends the txq (its station left, or the driver removes it from the scheduler):
    /// every frame still queued is purged and handed back, with the drops not yet
    /// drained, and its final counters, so that nothing it counted or held is lost with
    /// it. The frames come back even with [`FqCodelConfig::keep_dropped`] off. Add the
    /// counters to a radio-wide total with [`FqCodelStats::accumulate`].
    pub fn retire(mut self) -> RetiredTxq<F> {
        self.books.keep_dropped = true;
        self.purge();
        let frames = core::mem::take(&mut self.books.drops);
        RetiredTxq { frames, stats: self.stats() }
    }

    /// Unlists every flow once the last frame is out, each as a dequeue that finds it
    /// empty would (its CoDel state leaves dropping mode): the state mac80211's
    /// `fq_tin_dequeue` leaves after the call that returns nothing, which a driver makes
    /// when it dequeues until the txq is empty, but for the deficits that walk tops up
    /// (an unlisted flow's deficit is reset when it is listed again). A round that ends
    /// a turn on the queue's emptiness ([`Txq::is_known_empty`]) makes no such call, and
    /// the drained flows must not stay listed: a frame of one of them would then lose
    /// the new-flow place and fresh quantum a sparse flow gets.
    fn unlist_drained(&mut self) {
        for list in [ListId::New, ListId::Old] {
            while let Some(index) = self.table.pop_front(list) {
                if let Some(flow) = self.table.get_mut(index) {
                    flow.codel.on_empty();
                }
            }
        }
    }
}

/// What [`FqCodelTxq::retire`] returns: the frames it held and its final counters.
#[derive(Debug)]
#[non_exhaustive]
pub struct RetiredTxq<F> {
    /// The frames still queued (reason [`DropReason::Purged`]) and the drops not yet
    /// drained, oldest drops first.
    pub frames: Vec<Dropped<F>>,
    /// The final counters: `backlog_packets` is 0, and
    /// `enqueued = tx_packets + dropped()` (the purged frames counted in `purged`).
    pub stats: FqCodelStats,
}

impl<F: FqFrame> crate::traits::Enqueue for FqCodelTxq<F> {
    /// [`FqCodelTxq::enqueue`]: a drop it makes is counted in the statistics and kept in
    /// the drop buffer, so the outcome has nothing more to say.
    fn enqueue(&mut self, frame: F, enqueued: Instant) {
        let _ = FqCodelTxq::enqueue(self, frame, enqueued);
    }

    /// FQ-CoDel's enqueue runs on the enqueuing context, as mainline's does.
    const DIRECT_ENQUEUE: bool = true;

    /// Room under both limits: one more packet, and the frame's `truesize` more bytes.
    /// (A frame store that cannot grow still drops the frame there, counted as
    /// [`DropReason::OutOfMemory`] and kept for `drain_drops` like any drop.)
    #[inline]
    fn has_room_for(&self, frame: &F) -> bool {
        self.books.backlog_packets < u64::from(self.config.packet_limit)
            && self.books.memory_usage.saturating_add(u64::from(frame.truesize())) <= self.config.memory_limit_bytes
    }
}

impl<F: FqFrame> Txq for FqCodelTxq<F> {
    type Frame = F;
    type Error = Infallible;

    /// DRR++ over the new then the old flows, CoDel per flow (see the module docs).
    /// Frames CoDel drops on the way are counted and kept for
    /// [`drain_drops`](FqCodelTxq::drain_drops). Amortised cost: O(1) per frame, plus
    /// one rotation per quantum of credit a flow earns back while other flows wait on
    /// the old list (a lone flow's laps are added at once).
    fn dequeue(&mut self, now: Instant) -> Result<Option<F>, Infallible> {
        let quantum = i64::from(self.config.quantum_bytes);
        loop {
            let (list, index) = match self.table.front(ListId::New) {
                Some(index) => (ListId::New, index),
                None => match self.table.front(ListId::Old) {
                    Some(index) => (ListId::Old, index),
                    None => return Ok(None),
                },
            };
            let Some(flow) = self.table.get_mut(index) else {
                // Unreachable (listed flows exist); unlink rather than spin.
                self.table.pop_front(list);
                continue;
            };
            if flow.deficit <= 0 {
                // mac80211's `fq_tin_dequeue`: a quantum, and to the back of the old
                // flows. For a new flow that is one step. With the new list empty, a
                // dequeue adds to neither list, so the old list's rotations run in a
                // loop of their own.
                match list {
                    ListId::Old => self.table.rotate_until_positive(quantum),
                    ListId::New => {
                        flow.deficit = flow.deficit.saturating_add(quantum);
                        self.table.pop_front(ListId::New);
                        self.table.push_back(ListId::Old, index);
                    }
                }
                continue;
            }
            let mut view =
                FlowView { frames: &mut flow.frames, backlog: &mut flow.backlog_bytes, books: &mut self.books };
            match codel_dequeue(&mut flow.codel, &self.params, now, &mut view) {
                Some(q) => {
                    flow.deficit = flow.deficit.saturating_sub(i64::from(q.len.min(MAX_DEBIT_BYTES)));
                    let s = &mut self.books.stats;
                    s.tx_packets = s.tx_packets.saturating_add(1);
                    s.tx_bytes = s.tx_bytes.saturating_add(u64::from(q.len));
                    if self.books.backlog_packets == 0 {
                        self.unlist_drained();
                    }
                    return Ok(Some(q.frame));
                }
                None => {
                    // The flow is empty. A new flow goes behind the old ones if there
                    // are any (so it cannot stay new forever); otherwise it leaves.
                    self.table.pop_front(list);
                    if list == ListId::New && !self.table.is_list_empty(ListId::Old) {
                        self.table.push_back(ListId::Old, index);
                    }
                }
            }
        }
    }

    /// The head frame of the first flow that can send now (new list first), or of the
    /// first backlogged flow; O(1) unless empty flows wait at the front of the lists.
    fn peek_len(&self) -> Option<u32> {
        if self.books.backlog_packets == 0 {
            return None;
        }
        let mut fallback = None;
        for (_, flow) in self.table.iter_listed() {
            let Some(head) = flow.frames.front() else {
                continue;
            };
            if flow.deficit > 0 {
                return Some(head.len);
            }
            fallback = fallback.or(Some(head.len));
        }
        fallback
    }

    fn is_empty(&self) -> bool {
        self.books.backlog_packets == 0
    }

    fn is_known_empty(&self) -> bool {
        self.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Frame;
    use proptest::prelude::*;

    #[derive(Debug)]
    struct Pkt {
        hash: u32,
        len: u32,
    }

    impl Frame for Pkt {
        fn len_bytes(&self) -> u32 {
            self.len
        }
    }

    impl FqFrame for Pkt {
        fn flow_hash(&self) -> u32 {
            self.hash
        }
        fn truesize(&self) -> u32 {
            self.len.saturating_add(256)
        }
    }

    impl<F: FqFrame> FqCodelTxq<F> {
        /// Checks the internal invariants: each backlogged flow is listed; a listed
        /// flow's byte count is the sum of its frames; the totals are the sums of the
        /// flows; each flow is listed at most once.
        fn check_invariants(&self) -> Result<(), alloc::string::String> {
            let (mut packets, mut bytes, mut memory, mut active) = (0u64, 0u64, 0u64, 0u32);
            let mut listed = alloc::vec![false; self.table_len()];
            for (index, flow) in self.table.iter_listed() {
                let seen = listed.get_mut(index as usize).ok_or("listed index out of range")?;
                if core::mem::replace(seen, true) {
                    return Err(alloc::format!("flow {index} listed twice"));
                }
                let sum: u64 = flow.frames.iter().map(|q| u64::from(q.len)).sum();
                if sum != flow.backlog_bytes {
                    return Err(alloc::format!("flow {index}: backlog {} != {sum}", flow.backlog_bytes));
                }
                packets += flow.frames.len() as u64;
                bytes += sum;
                memory += flow.frames.iter().map(|q| u64::from(q.truesize)).sum::<u64>();
                active += u32::from(!flow.frames.is_empty());
            }
            for index in 0..self.table_len() as u32 {
                let flow = self.table.get(index).ok_or("missing flow")?;
                if !flow.frames.is_empty() && flow.list().is_none() {
                    return Err(alloc::format!("backlogged flow {index} is on no list"));
                }
            }
            if self.books.backlog_packets == 0 && listed.contains(&true) {
                return Err("an empty txq keeps flows listed (no dequeue will unlist them)".into());
            }
            let b = &self.books;
            if (packets, bytes, memory, active) != (b.backlog_packets, b.backlog_bytes, b.memory_usage, b.flows_active)
            {
                return Err(alloc::format!(
                    "totals {:?} != books {:?}",
                    (packets, bytes, memory, active),
                    (b.backlog_packets, b.backlog_bytes, b.memory_usage, b.flows_active)
                ));
            }
            Ok(())
        }

        fn table_len(&self) -> usize {
            self.config.flows as usize
        }
    }

    #[test]
    fn an_emptied_new_flow_moves_behind_waiting_old_flows_and_loses_its_priority() {
        let config = FqCodelConfig { quantum_bytes: 2000, ..FqCodelConfig::default() };
        let mut txq = FqCodelTxq::new(config).unwrap();
        let t = Instant::ZERO;
        let (bulk, sparse) = (0, 1 << 31);
        let sparse_index = txq.table.index_of(sparse);
        for _ in 0..4 {
            assert!(txq.enqueue(Pkt { hash: bulk, len: 1500 }, t).is_queued());
        }
        assert_eq!(txq.dequeue(t).unwrap().map(|p| p.len), Some(1500)); // credit 500
        assert_eq!(txq.dequeue(t).unwrap().map(|p| p.len), Some(1500)); // credit -1000
        assert!(txq.enqueue(Pkt { hash: sparse, len: 64 }, t).is_queued());
        // Bulk gets a quantum and goes to the old list; the new sparse flow sends.
        assert_eq!(txq.dequeue(t).unwrap().map(|p| p.len), Some(64));
        assert_eq!(txq.table.get(sparse_index).unwrap().list(), Some(ListId::New));
        // The sparse flow is found empty while bulk waits: it moves behind it.
        assert_eq!(txq.dequeue(t).unwrap().map(|p| p.len), Some(1500));
        assert_eq!(txq.table.get(sparse_index).unwrap().list(), Some(ListId::Old));
        // A frame arriving now does not make the flow new again.
        assert!(txq.enqueue(Pkt { hash: sparse, len: 64 }, t).is_queued());
        assert_eq!(txq.stats().new_flows, 2);
        assert!(txq.table.is_list_empty(ListId::New));
        txq.check_invariants().unwrap();
    }

    #[test]
    fn a_frame_of_absurd_length_is_debited_at_most_65_535_bytes() {
        let config = FqCodelConfig { quantum_bytes: 1, memory_limit_bytes: u64::MAX, ..FqCodelConfig::default() };
        let mut txq = FqCodelTxq::new(config).unwrap();
        let t = Instant::ZERO;
        for _ in 0..3 {
            assert!(txq.enqueue(Pkt { hash: 0, len: u32::MAX }, t).is_queued());
        }
        assert!(txq.dequeue(t).unwrap().is_some());
        assert_eq!(txq.table.get(0).unwrap().deficit, 1 - i64::from(MAX_DEBIT_BYTES));
        assert!(txq.dequeue(t).unwrap().is_some());
    }

    proptest! {
        #[test]
        fn internal_invariants_hold_after_every_operation(
            flows in 1u32..8,
            packet_limit in 0u32..40,
            memory_limit in 0u64..20_000,
            ops in proptest::collection::vec((0u8..5, 0u32..16, 0u32..2000, 0u64..50_000), 0..300),
        ) {
            let config = FqCodelConfig {
                flows,
                packet_limit,
                memory_limit_bytes: memory_limit,
                keep_dropped: false,
                ..FqCodelConfig::default()
            };
            let mut txq = FqCodelTxq::new(config).unwrap();
            let mut now = Instant::ZERO;
            for (kind, hash, len, dt) in ops {
                match kind {
                    0 | 1 => {
                        let _ = txq.enqueue(Pkt { hash: hash.wrapping_mul(0x9E37_79B9), len }, now);
                    }
                    2 | 3 => {
                        let _ = txq.dequeue(now);
                    }
                    _ => now = now.add_micros(dt),
                }
                let checked = txq.check_invariants();
                prop_assert!(checked.is_ok(), "{:?}", checked);
            }
            txq.purge();
            prop_assert!(txq.check_invariants().is_ok());
            prop_assert!(txq.table.is_list_empty(ListId::New) && txq.table.is_list_empty(ListId::Old));
        }
    }
}
