//! Constant-bit-rate UDP streams: a sender emits a packet of a fixed IPv4 length at a
//! fixed interval from its start time to its stop time; the receiver counts what
//! arrives and how late. No feedback, no retransmission: what the queues drop is lost.
//!
//! The DSCP marking picks the access category as Linux does for a QoS station:
//! `cfg80211_classify8021d` (net/wireless/util.c) takes the 802.1d user priority from the
//! DSCP's precedence bits, except for the codepoints RFC 8325 maps otherwise (AF11-AF13
//! and CS2 to 0, AF21-AF23 to 3, CS3 to 4, CS5 to 5, VA and EF to 6, CS6 to 7), and
//! mac80211's `ieee802_1d_to_ac` maps priorities 1 and 2 to BK, 0 and 3 to BE, 4 and 5
//! to VI, 6 and 7 to VO.

use super::packet::{FlowTag, Node, Packet, Payload};
use crate::engine::Nanos;
use airtime_sched::Ac;

/// The 802.1d user priority of DSCP `dscp` (`cfg80211_classify8021d`), or `None` if it
/// is not a DSCP (above 63).
pub fn user_priority_of_dscp(dscp: u8) -> Option<u8> {
    Some(match dscp {
        10 | 12 | 14 | 16 => 0, // AF11-AF13 (high-throughput data), CS2 (OAM)
        18 | 20 | 22 => 3,      // AF21-AF23 (low-latency data)
        24 => 4,                // CS3 (broadcast video)
        40 => 5,                // CS5 (signalling)
        44 | 46 => 6,           // VA (voice admit), EF (telephony)
        48 => 7,                // CS6 (network control)
        0..=63 => dscp >> 3,
        _ => return None,
    })
}

/// The access category of DSCP `dscp`, or `None` if it is not a DSCP (above 63).
pub fn ac_of_dscp(dscp: u8) -> Option<Ac> {
    Some(match user_priority_of_dscp(dscp)? {
        1 | 2 => Ac::Bk,
        0 | 3 => Ac::Be,
        4 | 5 => Ac::Vi,
        _ => Ac::Vo,
    })
}

/// One UDP stream: its schedule and what its receiver counted.
#[derive(Clone, Debug)]
pub struct CbrFlow {
    /// The sending node.
    pub src: Node,
    /// The receiving node.
    pub dst: Node,
    /// IPv4 bytes per packet.
    pub packet_bytes: u32,
    /// The DSCP its packets carry (0 until the owner sets the flow's).
    pub dscp: u8,
    /// Time between packets, in ns (fractional, so long runs do not drift).
    pub interval_ns: f64,
    /// The first send.
    pub start_ns: Nanos,
    /// No send at or after this.
    pub stop_ns: Nanos,
    /// Packets sent so far.
    pub seq: u64,
    /// Packets sent after the warm-up.
    pub sent: u64,
    /// Packets received that were sent after the warm-up.
    pub received: u64,
    /// One-way delays of those, in ms.
    pub delays_ms: Vec<f64>,
}

impl CbrFlow {
    /// A stream of `rate_bps` in packets of `packet_bytes`, from `start_ns` to `stop_ns`.
    pub fn new(src: Node, dst: Node, rate_bps: f64, packet_bytes: u32, start_ns: Nanos, stop_ns: Nanos) -> CbrFlow {
        CbrFlow {
            src,
            dst,
            packet_bytes,
            dscp: 0,
            interval_ns: f64::from(packet_bytes) * 8.0 / rate_bps * 1e9,
            start_ns,
            stop_ns,
            seq: 0,
            sent: 0,
            received: 0,
            delays_ms: Vec::new(),
        }
    }

    /// The packet to send at `now` (flow number `flow`, AP CPU `cpu`), and when the next
    /// one is due, if before the stop time.
    pub fn send(&mut self, flow: u16, cpu: u8, now: Nanos, counted: bool) -> (Packet, Option<Nanos>) {
        let pkt = Packet {
            payload: Payload::Udp { seq: self.seq, sent_ns: now },
            len_bytes: self.packet_bytes,
            src: self.src,
            dst: self.dst,
            flow: FlowTag::Udp(flow),
            dscp: self.dscp,
            cpu,
            enqueue_ns: now,
            tries: 0,
            mpdu_seq: 0,
        };
        self.seq += 1;
        if counted {
            self.sent += 1;
        }
        // Float to integer saturates: a stream too slow to send again never does.
        let next = self.start_ns.saturating_add((self.seq as f64 * self.interval_ns).round() as Nanos);
        (pkt, (next < self.stop_ns).then_some(next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dscp_picks_the_access_category_as_cfg80211_classify8021d_does() {
        assert_eq!(ac_of_dscp(0), Some(Ac::Be)); // CS0
        assert_eq!(ac_of_dscp(8), Some(Ac::Bk)); // CS1
        assert_eq!(ac_of_dscp(10), Some(Ac::Be)); // AF11: RFC 8325, not its precedence
        assert_eq!(ac_of_dscp(18), Some(Ac::Be)); // AF21: priority 3
        assert_eq!(ac_of_dscp(24), Some(Ac::Vi)); // CS3: priority 4
        assert_eq!(ac_of_dscp(34), Some(Ac::Vi)); // AF41
        assert_eq!(ac_of_dscp(40), Some(Ac::Vi)); // CS5
        assert_eq!(ac_of_dscp(46), Some(Ac::Vo)); // EF: priority 6
        assert_eq!(ac_of_dscp(48), Some(Ac::Vo)); // CS6
        assert_eq!(ac_of_dscp(56), Some(Ac::Vo)); // CS7
        assert_eq!(user_priority_of_dscp(46), Some(6));
        assert_eq!(ac_of_dscp(64), None);
    }

    #[test]
    fn a_stream_sends_at_its_rate_until_its_stop_time() {
        // 12 Mbit/s of 1500-byte packets: one per ms.
        let mut f = CbrFlow::new(Node::Wired, Node::Station(0), 12e6, 1500, 1_000_000, 11_000_000);
        let mut at = Some(1_000_000);
        let mut n = 0;
        while let Some(now) = at {
            let (p, next) = f.send(0, 0, now, true);
            assert_eq!(p.len_bytes, 1500);
            n += 1;
            at = next;
        }
        assert_eq!(n, 10);
    }
}
