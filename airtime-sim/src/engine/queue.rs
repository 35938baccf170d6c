//! The event heap: a binary min-heap on (time, sequence number). The sequence number
//! breaks ties in insertion order, which keeps runs deterministic.

use super::Nanos;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    at: Nanos,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest event first.
        other.at.cmp(&self.at).then_with(|| other.seq.cmp(&self.seq))
    }
}

/// Pending events of type `E`, earliest first.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Nanos,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), seq: 0, now: 0, popped: 0 }
    }
}

impl<E> EventQueue<E> {
    /// The time of the event last popped (the simulation's "now").
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Schedules `event` at `at` (never before now: a past time is moved to now).
    pub fn schedule(&mut self, at: Nanos, event: E) {
        let at = at.max(self.now);
        self.seq += 1;
        self.heap.push(Entry { at, seq: self.seq, event });
    }

    /// Pops the earliest event at or before `until`, advancing the clock to it.
    pub fn pop_until(&mut self, until: Nanos) -> Option<(Nanos, E)> {
        if self.heap.peek()?.at > until {
            return None;
        }
        let e = self.heap.pop()?;
        self.now = e.at;
        self.popped += 1;
        Some((e.at, e.event))
    }

    /// Events popped so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_pop_in_time_order_and_ties_in_insertion_order() {
        let mut q = EventQueue::default();
        q.schedule(30, 'c');
        q.schedule(10, 'a');
        q.schedule(10, 'b');
        let got: Vec<char> = std::iter::from_fn(|| q.pop_until(100).map(|(_, e)| e)).collect();
        assert_eq!(got, vec!['a', 'b', 'c']);
        assert_eq!(q.now(), 30);
    }
}
