//! The RTT a TCP sender sees, per acknowledged segment: the time from a data segment's
//! (last) transmission to the first ACK that covers it. Retransmitted segments give no
//! sample (Karn's rule). Also a smoothed RTT and the bytes in flight, which the TCP
//! small queues model uses as Linux uses `sk_pacing_rate`.

use crate::engine::Nanos;
use std::collections::VecDeque;

/// `a` is after `b` in 32-bit sequence space.
fn seq_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

#[derive(Clone, Copy, Debug)]
struct Sent {
    start: u32,
    end: u32,
    at: Nanos,
    retransmitted: bool,
}

/// Per-flow segment clock at the sender.
#[derive(Clone, Debug, Default)]
pub struct SegmentClock {
    sent: VecDeque<Sent>,
    highest_end: Option<u32>,
    acked: Option<u32>,
    srtt_ns: Option<f64>,
}

impl SegmentClock {
    /// A data segment `[seq, seq + len)` left the sender at `now`.
    pub fn on_send(&mut self, seq: u32, len: u32, now: Nanos) {
        if len == 0 {
            return;
        }
        let end = seq.wrapping_add(len);
        match self.highest_end {
            Some(h) if !seq_after(end, h) => {
                // A retransmission: every segment it overlaps gives no sample.
                for s in self.sent.iter_mut() {
                    if seq_after(s.end, seq) && seq_after(end, s.start) {
                        s.retransmitted = true;
                    }
                }
            }
            _ => {
                self.highest_end = Some(end);
                self.sent.push_back(Sent { start: seq, end, at: now, retransmitted: false });
            }
        }
    }

    /// An ACK for `ack` arrived at `now`; pushes one RTT sample per newly acknowledged,
    /// never retransmitted segment into `samples`.
    pub fn on_ack(&mut self, ack: u32, now: Nanos, samples: &mut Vec<Nanos>) {
        if self.acked.is_some_and(|a| !seq_after(ack, a)) {
            return;
        }
        self.acked = Some(ack);
        while let Some(s) = self.sent.front() {
            if seq_after(s.end, ack) {
                break;
            }
            if !s.retransmitted {
                let rtt = now.saturating_sub(s.at);
                samples.push(rtt);
                let r = rtt as f64;
                self.srtt_ns = Some(self.srtt_ns.map_or(r, |s| 0.875 * s + 0.125 * r));
            }
            self.sent.pop_front();
        }
    }

    /// Bytes sent and not yet acknowledged.
    pub fn flight_bytes(&self) -> u64 {
        match (self.highest_end, self.acked) {
            (Some(h), Some(a)) if seq_after(h, a) => u64::from(h.wrapping_sub(a)),
            _ => 0,
        }
    }

    /// Smoothed RTT, once there is a sample.
    pub fn srtt_ns(&self) -> Option<f64> {
        self.srtt_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_acknowledged_segment_gives_one_sample_and_retransmissions_none() {
        let mut c = SegmentClock::default();
        c.on_send(1000, 100, 0);
        c.on_send(1100, 100, 10);
        c.on_send(1200, 100, 20);
        c.on_send(1100, 100, 50); // retransmits the second segment
        let mut s = Vec::new();
        c.on_ack(1300, 100, &mut s);
        assert_eq!(s, vec![100, 80], "the first and third segments; the second was sent twice");
        assert_eq!(c.flight_bytes(), 0);
    }
}
