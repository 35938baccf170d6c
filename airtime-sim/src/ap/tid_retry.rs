//! A host-aggregating driver's TID queue with its software retry queue in front: the
//! subframes a BlockAck missed wait here and go before any new frame into the TID's
//! next aggregate (ath9k: `ath_tx_complete_aggr` puts them on `tid->retry_q`,
//! `ath_tid_dequeue` takes that queue first, `ath_tx_form_aggr` forms the aggregate
//! from what it hands out). They wait oldest sequence number first, a simplification:
//! ath9k appends each completion's missed subframes at the queue's tail (the two
//! orders measured the same on a lossy VHT80 link).
//!
//! A frame is told a resend by its number: this holds while every frame the AP sends
//! reaches it unnumbered (from the wired side or the AP's own stack); a frame forwarded
//! between stations would carry its uplink number and must be cleared first.
//!
//! A resent frame reaches the queue through the txq table's enqueue, which wakes the
//! txq as `ath_tx_complete_aggr`'s `ath_tx_queue_tid` schedules the TID again.

use crate::net::Packet;
use airtime_sched::Instant;
use airtime_sched::traits::{Enqueue, Txq};
use std::collections::VecDeque;

/// Queue `Q` (the TID's new frames) behind its resent frames.
#[derive(Debug, Default)]
pub struct RetryFirst<Q> {
    /// Resent frames, by increasing sequence number.
    resend: VecDeque<Packet>,
    /// New frames.
    pub fresh: Q,
}

impl<Q> RetryFirst<Q> {
    /// `fresh` with no frame to resend.
    pub fn new(fresh: Q) -> RetryFirst<Q> {
        RetryFirst { resend: VecDeque::new(), fresh }
    }

    /// Whether the next frame is one to resend.
    pub fn resend_next(&self) -> bool {
        !self.resend.is_empty()
    }

    /// Frames waiting to be resent.
    pub fn resend_len(&self) -> usize {
        self.resend.len()
    }
}

impl<Q: Txq<Frame = Packet>> Txq for RetryFirst<Q> {
    type Frame = Packet;
    type Error = Q::Error;
    fn dequeue(&mut self, now: Instant) -> Result<Option<Packet>, Self::Error> {
        match self.resend.pop_front() {
            Some(p) => Ok(Some(p)),
            None => self.fresh.dequeue(now),
        }
    }
    fn peek_len(&self) -> Option<u32> {
        self.resend.front().map(airtime_sched::Frame::len_bytes).or_else(|| self.fresh.peek_len())
    }
    fn is_empty(&self) -> bool {
        self.resend.is_empty() && self.fresh.is_empty()
    }
    fn is_known_empty(&self) -> bool {
        self.resend.is_empty() && self.fresh.is_known_empty()
    }
}

impl<Q: Enqueue + Txq<Frame = Packet>> Enqueue for RetryFirst<Q> {
    fn enqueue(&mut self, frame: Packet, enqueued: Instant) {
        if frame.mpdu_seq == 0 {
            self.fresh.enqueue(frame, enqueued);
            return;
        }
        // Numbered: sent before. Its place is by number, ahead of every new frame and
        // outside the queue's AQM (ath9k's retry queue is the driver's, not mac80211's).
        let at = self.resend.partition_point(|p| p.mpdu_seq < frame.mpdu_seq);
        self.resend.insert(at, frame);
    }

    const DIRECT_ENQUEUE: bool = Q::DIRECT_ENQUEUE;

    fn has_room_for(&self, frame: &Packet) -> bool {
        frame.mpdu_seq != 0 || self.fresh.has_room_for(frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::FlowTag;
    use crate::net::{Node, Payload};

    fn frame(seq: u64, mpdu_seq: u32) -> Packet {
        Packet {
            payload: Payload::Udp { seq, sent_ns: 0 },
            len_bytes: 1500,
            src: Node::Wired,
            dst: Node::Station(0),
            flow: FlowTag::Udp(0),
            dscp: 0,
            cpu: 0,
            enqueue_ns: 0,
            tries: u8::from(mpdu_seq != 0),
            mpdu_seq,
        }
    }

    #[test]
    fn resent_frames_go_first_oldest_number_first() {
        let mut q = RetryFirst::new(super::super::ath9k_like::TidFifo::default());
        let now = Instant::from_micros(0);
        q.enqueue(frame(10, 0), now);
        q.enqueue(frame(3, 7), now);
        q.enqueue(frame(1, 2), now);
        q.enqueue(frame(11, 0), now);
        let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(now).ok().flatten()).map(|p| p.mpdu_seq).collect();
        assert_eq!(order, vec![2, 7, 0, 0]);
        assert!(q.is_empty());
    }
}
