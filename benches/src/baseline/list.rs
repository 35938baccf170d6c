//! The per-AC txq list of mainline (`local->active_txqs[ac]`, a `list_head` threaded
//! through each txq's `schedule_order` node), with txq indices for pointers.
//!
//! Each txq owns one node (its `schedule_order` and `schedule_round`); a node that
//! is on no list is "empty" (mainline's self-linked node), here `linked == false`. The
//! caller holds the AC's lock for every operation, as mainline does.

/// The "no txq" index (mainline's list head sentinel).
pub const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    prev: u32,
    next: u32,
    linked: bool,
    /// `txqi->schedule_round`: the round in which `next_txq` last handed the txq out.
    schedule_round: u16,
}

/// One AC's list of txqs, doubly linked through per-txq nodes.
#[derive(Debug)]
pub struct TxqList {
    head: u32,
    tail: u32,
    nodes: Box<[Node]>,
}

impl TxqList {
    /// An empty list for txq indices `0..capacity`.
    pub fn new(capacity: usize) -> TxqList {
        let node = Node { prev: NIL, next: NIL, linked: false, schedule_round: 0 };
        TxqList { head: NIL, tail: NIL, nodes: vec![node; capacity].into_boxed_slice() }
    }

    /// Whether txq `t` is on the list (`!list_empty(&txqi->schedule_order)`).
    #[inline]
    pub fn is_linked(&self, t: u32) -> bool {
        self.nodes[t as usize].linked
    }

    /// The first txq (`list_first_entry_or_null`).
    #[inline]
    pub fn first(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }

    /// Inserts an unlinked txq at the head (`list_add`).
    #[inline]
    pub fn push_front(&mut self, t: u32) {
        let old = self.head;
        self.nodes[t as usize] = Node { prev: NIL, next: old, linked: true, ..self.nodes[t as usize] };
        if old == NIL {
            self.tail = t;
        } else {
            self.nodes[old as usize].prev = t;
        }
        self.head = t;
    }

    /// Inserts an unlinked txq at the tail (`list_add_tail`).
    #[inline]
    pub fn push_back(&mut self, t: u32) {
        let old = self.tail;
        self.nodes[t as usize] = Node { prev: old, next: NIL, linked: true, ..self.nodes[t as usize] };
        if old == NIL {
            self.head = t;
        } else {
            self.nodes[old as usize].next = t;
        }
        self.tail = t;
    }

    /// Removes a linked txq (`list_del_init`).
    #[inline]
    pub fn unlink(&mut self, t: u32) {
        let Node { prev, next, .. } = self.nodes[t as usize];
        if prev == NIL {
            self.head = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
        let n = &mut self.nodes[t as usize];
        n.prev = NIL;
        n.next = NIL;
        n.linked = false;
    }

    /// Moves a linked txq to the tail (`list_move_tail`).
    #[inline]
    pub fn move_tail(&mut self, t: u32) {
        self.unlink(t);
        self.push_back(t);
    }

    /// The number of listed txqs, counted by walking the list as mainline's per-AC PHY
    /// check does (`list_for_each` under the lock): O(n).
    #[inline]
    pub fn count(&self) -> u32 {
        let mut n = 0u32;
        let mut t = self.head;
        while t != NIL {
            n = n.wrapping_add(1);
            t = self.nodes[t as usize].next;
        }
        n
    }

    /// `txqi->schedule_round`.
    #[inline]
    pub fn schedule_round(&self, t: u32) -> u16 {
        self.nodes[t as usize].schedule_round
    }

    /// Stamps `txqi->schedule_round`.
    #[inline]
    pub fn set_schedule_round(&mut self, t: u32, round: u16) {
        self.nodes[t as usize].schedule_round = round;
    }

    /// The listed txqs, head first (for tests).
    pub fn order(&self) -> Vec<u32> {
        let mut v = Vec::new();
        let mut t = self.head;
        while t != NIL {
            v.push(t);
            t = self.nodes[t as usize].next;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_insertion_and_removal_keep_the_links_consistent() {
        let mut l = TxqList::new(4);
        l.push_back(0);
        l.push_back(1);
        l.push_front(2);
        assert_eq!(l.order(), [2, 0, 1]);
        l.move_tail(2);
        assert_eq!(l.order(), [0, 1, 2]);
        l.unlink(1);
        assert_eq!(l.order(), [0, 2]);
        assert!(!l.is_linked(1));
        assert_eq!(l.count(), 2);
        l.unlink(0);
        l.unlink(2);
        assert_eq!(l.first(), None);
        assert_eq!(l.count(), 0);
        l.push_front(3);
        assert_eq!((l.order(), l.first()), (vec![3], Some(3)));
    }
}
