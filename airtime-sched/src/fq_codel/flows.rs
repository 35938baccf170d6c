//! The flow table of one txq and its two schedule lists, linked through the flows.

use super::Queued;
use super::codel::CodelVars;
use alloc::collections::VecDeque;
use alloc::vec::Vec;

/// "No flow" in a link.
const NIL: u32 = u32::MAX;

/// Which schedule list a flow is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListId {
    /// Flows that became backlogged since their last turn: served first.
    New,
    /// Flows that used up their quantum (or emptied while others waited).
    Old,
}

/// One hash bucket: its frames in arrival order, its DRR credit and its CoDel state.
///
/// # Invariants
/// A flow holding frames is on a list (`list.is_some()`). `backlog_bytes` is the sum of
/// the `len` of its frames.
pub(crate) struct Flow<F> {
    pub(crate) frames: VecDeque<Queued<F>>,
    pub(crate) backlog_bytes: u64,
    /// Byte credit; the flow may send while it is positive.
    pub(crate) deficit: i64,
    /// Hash of the last frame enqueued, to count distinct flows sharing this bucket.
    pub(crate) hash: u32,
    pub(crate) codel: CodelVars,
    next: u32,
    list: Option<ListId>,
}

impl<F> Flow<F> {
    fn new() -> Self {
        Flow {
            frames: VecDeque::new(),
            backlog_bytes: 0,
            deficit: 0,
            hash: 0,
            codel: CodelVars::new(),
            next: NIL,
            list: None,
        }
    }

    /// The schedule list this flow is on.
    pub(crate) fn list(&self) -> Option<ListId> {
        self.list
    }
}

#[derive(Clone, Copy, Debug)]
struct Ends {
    head: u32,
    tail: u32,
}

impl Ends {
    const EMPTY: Ends = Ends { head: NIL, tail: NIL };
}

/// The flows (allocated once) and the `new_flows` / `old_flows` lists, singly linked
/// through `Flow::next` so that push-back and pop-front are O(1) without allocation.
pub(crate) struct FlowTable<F> {
    flows: Vec<Flow<F>>,
    new: Ends,
    old: Ends,
}

impl<F> FlowTable<F> {
    /// A table of `count` idle flows, or `None` if it cannot be allocated.
    pub(crate) fn try_new(count: u32) -> Option<Self> {
        let count = usize::try_from(count).ok()?;
        let mut flows = Vec::new();
        flows.try_reserve_exact(count).ok()?;
        flows.extend((0..count).map(|_| Flow::new()));
        Some(FlowTable { flows, new: Ends::EMPTY, old: Ends::EMPTY })
    }

    /// The flow a hash maps to: the hash scaled to `0..len` (uniform for uniform hashes,
    /// no division).
    pub(crate) fn index_of(&self, hash: u32) -> u32 {
        let len = u64::try_from(self.flows.len()).unwrap_or(u64::MAX);
        // Both below 2^32 (the count is a `u32`): the product fits.
        u32::try_from(u64::from(hash).wrapping_mul(len) >> 32).unwrap_or(0)
    }

    pub(crate) fn get(&self, index: u32) -> Option<&Flow<F>> {
        self.flows.get(usize::try_from(index).ok()?)
    }

    pub(crate) fn get_mut(&mut self, index: u32) -> Option<&mut Flow<F>> {
        self.flows.get_mut(usize::try_from(index).ok()?)
    }

    fn ends_mut(&mut self, list: ListId) -> &mut Ends {
        match list {
            ListId::New => &mut self.new,
            ListId::Old => &mut self.old,
        }
    }

    fn ends(&self, list: ListId) -> Ends {
        match list {
            ListId::New => self.new,
            ListId::Old => self.old,
        }
    }

    /// The first flow of `list`.
    pub(crate) fn front(&self, list: ListId) -> Option<u32> {
        let head = self.ends(list).head;
        (head != NIL).then_some(head)
    }

    /// Whether `list` holds no flow.
    pub(crate) fn is_list_empty(&self, list: ListId) -> bool {
        self.ends(list).head == NIL
    }

    /// Appends an unlisted flow to `list`; false (and nothing changes) if the flow is
    /// already on a list or does not exist.
    pub(crate) fn push_back(&mut self, list: ListId, index: u32) -> bool {
        match self.get_mut(index) {
            Some(flow) if flow.list.is_none() => {
                flow.list = Some(list);
                flow.next = NIL;
            }
            _ => return false,
        }
        let tail = self.ends(list).tail;
        if tail == NIL {
            self.ends_mut(list).head = index;
        } else if let Some(prev) = self.get_mut(tail) {
            prev.next = index;
        }
        self.ends_mut(list).tail = index;
        true
    }

    /// Unlinks and returns the first flow of `list`.
    pub(crate) fn pop_front(&mut self, list: ListId) -> Option<u32> {
        let head = self.front(list)?;
        let next = match self.get_mut(head) {
            Some(flow) => {
                let next = flow.next;
                flow.next = NIL;
                flow.list = None;
                next
            }
            None => NIL,
        };
        let ends = self.ends_mut(list);
        ends.head = next;
        if next == NIL {
            ends.tail = NIL;
        }
        Some(head)
    }

    /// Takes, in one call, the steps of mac80211's `fq_tin_dequeue` that send nothing
    /// while only old flows wait: while the front flow's deficit is not positive, it
    /// gets one `quantum` and goes to the back of the old list. For the caller to call only
    /// with the new list empty (the steps are mac80211's only then). A single flow
    /// finds itself at the front again after every lap, so its laps are added at once:
    /// its deficit becomes the one in `1..=quantum` that the laps reach. Nothing
    /// happens if `quantum` is not positive.
    pub(crate) fn rotate_until_positive(&mut self, quantum: i64) {
        if quantum <= 0 {
            return;
        }
        let Ends { mut head, mut tail } = self.old;
        if head == tail {
            if let Some(only) = self.get_mut(head).filter(|f| f.deficit <= 0) {
                only.deficit = match only.deficit.rem_euclid(quantum) {
                    0 => quantum,
                    rest => rest,
                };
            }
            return;
        }
        while let Some(front) = self.get_mut(head).filter(|f| f.deficit <= 0) {
            front.deficit = front.deficit.saturating_add(quantum);
            let next = core::mem::replace(&mut front.next, NIL);
            if let Some(last) = self.get_mut(tail) {
                last.next = head;
            }
            (head, tail) = (next, head);
        }
        self.old = Ends { head, tail };
    }

    /// The flows on `list`, front to back.
    pub(crate) fn iter(&self, list: ListId) -> impl Iterator<Item = (u32, &Flow<F>)> + '_ {
        let mut cursor = self.ends(list).head;
        core::iter::from_fn(move || {
            let index = cursor;
            let flow = self.get(index)?;
            cursor = flow.next;
            Some((index, flow))
        })
    }

    /// Every listed flow: `new_flows` then `old_flows`.
    pub(crate) fn iter_listed(&self) -> impl Iterator<Item = (u32, &Flow<F>)> + '_ {
        self.iter(ListId::New).chain(self.iter(ListId::Old))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use proptest::strategy::Strategy as _;

    fn listed(t: &FlowTable<()>, list: ListId) -> Vec<u32> {
        t.iter(list).map(|(i, _)| i).collect()
    }

    #[test]
    fn lists_keep_fifo_order_and_refuse_double_insertion() {
        let mut t = FlowTable::<()>::try_new(8).unwrap();
        assert!(t.push_back(ListId::New, 3));
        assert!(t.push_back(ListId::New, 1));
        assert!(!t.push_back(ListId::Old, 3), "a listed flow is on one list only");
        assert!(!t.push_back(ListId::Old, 8), "no such flow");
        assert!(t.push_back(ListId::Old, 5));
        assert_eq!(listed(&t, ListId::New), [3, 1]);
        assert_eq!(t.pop_front(ListId::New), Some(3));
        assert!(t.push_back(ListId::Old, 3));
        assert_eq!(listed(&t, ListId::Old), [5, 3]);
        assert_eq!(t.pop_front(ListId::New), Some(1));
        assert!(t.is_list_empty(ListId::New));
        assert_eq!(t.pop_front(ListId::New), None);
        assert!(t.push_back(ListId::New, 1));
        assert_eq!(t.iter_listed().map(|(i, _)| i).collect::<Vec<_>>(), [1, 5, 3]);
    }

    /// The steps `rotate_until_positive` takes, one dequeue pass each, as mac80211
    /// takes them: the front flow popped and pushed back, a single flow onto itself.
    fn step_until_positive(t: &mut FlowTable<()>, quantum: i64) {
        while let Some(front) = t.front(ListId::Old) {
            if t.get(front).unwrap().deficit > 0 {
                return;
            }
            t.get_mut(front).unwrap().deficit += quantum;
            t.pop_front(ListId::Old);
            assert!(t.push_back(ListId::Old, front));
        }
    }

    /// A deficit a dequeue can leave, often on the edges the loop decides on: a whole
    /// number of quanta below zero, give or take one byte.
    fn deficit(quantum: i64) -> impl proptest::strategy::Strategy<Value = i64> {
        use proptest::prelude::*;
        prop_oneof![
            (0i64..=218, -1i64..=1).prop_map(move |(k, d)| (-k * quantum + d).max(-65_535)),
            -65_535i64..=3000,
            Just(0i64),
            Just(1i64),
            Just(-65_534i64),
        ]
    }

    proptest::proptest! {
        /// The loop leaves the old list's order, its links and every deficit as the
        /// steps do, and the new list as it was: flows at any deficit a dequeue leaves
        /// (down to one frame's largest debit below zero), positive ones anywhere in
        /// the list, any quantum.
        #[test]
        fn rotating_until_positive_leaves_what_the_steps_leave(
            // Quanta from 64 up: a deficit of -65 535 costs a flow 65 535 / quantum
            // steps, and the test also runs under Miri.
            (quantum, deficits) in proptest::prop_oneof![proptest::strategy::Just(300i64), 64i64..4000]
                .prop_flat_map(|q| (proptest::strategy::Just(q), proptest::collection::vec(deficit(q), 1..12))),
        ) {
            use proptest::prelude::*;
            // Flows 0..16 take the old list; 16 and 17 sit on the new list; flow 18 is
            // pushed afterwards.
            let mut looped = FlowTable::<()>::try_new(19).unwrap();
            let mut stepped = FlowTable::<()>::try_new(19).unwrap();
            for t in [&mut looped, &mut stepped] {
                for (i, d) in deficits.iter().enumerate() {
                    // Listed in a scrambled order, so that index and place differ.
                    let index = (i as u32 * 7) % 16;
                    assert!(t.push_back(ListId::Old, index));
                    t.get_mut(index).unwrap().deficit = *d;
                }
                for index in [16, 17] {
                    assert!(t.push_back(ListId::New, index));
                    t.get_mut(index).unwrap().deficit = -5;
                }
            }
            looped.rotate_until_positive(quantum);
            step_until_positive(&mut stepped, quantum);
            let state = |t: &FlowTable<()>, list| t.iter(list).map(|(i, f)| (i, f.deficit)).collect::<Vec<_>>();
            prop_assert_eq!(state(&looped, ListId::Old), state(&stepped, ListId::Old));
            prop_assert_eq!(state(&looped, ListId::New), [(16, -5), (17, -5)]);
            let tail = looped.ends(ListId::Old).tail;
            prop_assert_eq!(looped.get(tail).unwrap().next, NIL);
            prop_assert!(looped.iter(ListId::Old).all(|(_, f)| f.list() == Some(ListId::Old)));
            prop_assert!(looped.get(looped.front(ListId::Old).unwrap()).unwrap().deficit > 0);
            // Still linked as pushes leave it: a push and a pop see the same order.
            for t in [&mut looped, &mut stepped] {
                assert!(t.push_back(ListId::Old, 18));
                t.pop_front(ListId::Old);
            }
            prop_assert_eq!(state(&looped, ListId::Old), state(&stepped, ListId::Old));
            prop_assert_eq!(looped.ends(ListId::Old).tail, 18);
        }
    }

    #[test]
    fn rotating_an_empty_list_or_with_no_quantum_changes_nothing() {
        let mut t = FlowTable::<()>::try_new(4).unwrap();
        t.rotate_until_positive(300);
        assert!(t.is_list_empty(ListId::Old));
        assert!(t.push_back(ListId::Old, 2));
        t.get_mut(2).unwrap().deficit = -10;
        t.rotate_until_positive(0);
        assert_eq!(t.iter(ListId::Old).map(|(i, f)| (i, f.deficit)).collect::<Vec<_>>(), [(2, -10)]);
        assert!(t.push_back(ListId::Old, 0));
        t.get_mut(0).unwrap().deficit = -10;
        t.rotate_until_positive(0);
        t.rotate_until_positive(-300);
        assert_eq!(t.iter(ListId::Old).map(|(i, f)| (i, f.deficit)).collect::<Vec<_>>(), [(2, -10), (0, -10)]);
    }

    #[test]
    fn a_single_flow_takes_all_its_laps_at_once() {
        let mut t = FlowTable::<()>::try_new(4).unwrap();
        assert!(t.push_back(ListId::Old, 1));
        for (before, after) in [(-10, 290), (0, 300), (-300, 300), (-301, 299), (-65_535, 165), (5, 5), (i64::MIN, 292)]
        {
            t.get_mut(1).unwrap().deficit = before;
            t.rotate_until_positive(300);
            assert_eq!(t.iter(ListId::Old).map(|(i, f)| (i, f.deficit)).collect::<Vec<_>>(), [(1, after)], "{before}");
        }
    }

    #[test]
    fn rotating_two_flows_at_zero_gives_each_a_quantum_in_their_order() {
        let mut t = FlowTable::<()>::try_new(4).unwrap();
        for i in [2, 0] {
            assert!(t.push_back(ListId::Old, i));
        }
        t.rotate_until_positive(300);
        assert_eq!(t.iter(ListId::Old).map(|(i, f)| (i, f.deficit)).collect::<Vec<_>>(), [(2, 300), (0, 300)]);
    }

    #[test]
    fn a_flow_costs_about_a_hundred_bytes_on_64_bit_targets() {
        // What the FqCodelConfig docs promise about the table's size.
        if cfg!(target_pointer_width = "64") {
            assert!(core::mem::size_of::<Flow<u64>>() <= 112, "{}", core::mem::size_of::<Flow<u64>>());
        }
    }

    #[test]
    fn hashes_scale_into_the_table() {
        let t = FlowTable::<()>::try_new(1024).unwrap();
        assert_eq!(t.index_of(0), 0);
        assert_eq!(t.index_of(u32::MAX), 1023);
        assert_eq!(t.index_of(1 << 31), 512);
        let one = FlowTable::<()>::try_new(1).unwrap();
        assert_eq!(one.index_of(u32::MAX), 0);
    }
}
