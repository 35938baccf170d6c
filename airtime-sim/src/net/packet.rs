//! A packet as it travels the simulated network: an IPv4 datagram made by smoltcp, or a
//! ping that the simulator fabricates itself (it needs no stack).

use crate::engine::Nanos;
use std::net::Ipv4Addr;

/// A node: the wired host, the access point, or station `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    /// The wired host behind the access point.
    Wired,
    /// The access point itself (where a sender may also run).
    Ap,
    /// Station number `n`, in scenario order.
    Station(u16),
}

impl Node {
    /// The node's IPv4 address: 10.0.0.1 wired, 10.0.0.2 AP, 10.0.1.n stations.
    pub fn addr(self) -> Ipv4Addr {
        match self {
            Node::Wired => Ipv4Addr::new(10, 0, 0, 1),
            Node::Ap => Ipv4Addr::new(10, 0, 0, 2),
            Node::Station(n) => Ipv4Addr::new(10, 0, 1 + (n / 250) as u8, (n % 250) as u8 + 1),
        }
    }

    /// The node with address `addr`, if any.
    pub fn from_addr(addr: Ipv4Addr) -> Option<Node> {
        let o = addr.octets();
        match (o[0], o[1], o[2], o[3]) {
            (10, 0, 0, 1) => Some(Node::Wired),
            (10, 0, 0, 2) => Some(Node::Ap),
            (10, 0, hi @ 1.., lo @ 1..=250) => Some(Node::Station(u16::from(hi - 1) * 250 + u16::from(lo - 1))),
            _ => None,
        }
    }
}

/// What a packet carries.
#[derive(Debug)]
pub enum Payload {
    /// An IPv4 datagram built by smoltcp.
    Ip(Vec<u8>),
    /// A segment of a flow run by the Linux-like TCP (`net::linux_tcp`).
    Tcp(super::linux_tcp::Segment),
    /// An ICMP echo request fabricated by the ping source.
    PingRequest {
        /// Sequence number.
        seq: u64,
        /// When the request left the wired host.
        sent_ns: Nanos,
    },
    /// A datagram of a constant-bit-rate UDP stream (`net::udp`).
    Udp {
        /// Its number in the stream.
        seq: u64,
        /// When it was sent.
        sent_ns: Nanos,
    },
    /// The echo reply.
    PingReply {
        /// Sequence number of the request.
        seq: u64,
        /// When the request left the wired host.
        sent_ns: Nanos,
    },
}

/// Which traffic a packet belongs to, for queueing (FQ hash, TCL ring) and metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowTag {
    /// TCP flow number `n` (scenario order).
    Tcp(u16),
    /// The ping of station `n`.
    Ping(u16),
    /// UDP flow number `n` (scenario order).
    Udp(u16),
}

/// A packet in flight.
#[derive(Debug)]
pub struct Packet {
    /// Content.
    pub payload: Payload,
    /// IPv4 length in bytes.
    pub len_bytes: u32,
    /// Source node.
    pub src: Node,
    /// Destination node.
    pub dst: Node,
    /// The traffic it belongs to.
    pub flow: FlowTag,
    /// The DSCP of its IPv4 DS field: its flow's `dscp` (a TCP flow's ACKs carry it
    /// too, as Linux's TCP stamps a socket's TOS on every segment it sends), 0 for a
    /// ping.
    pub dscp: u8,
    /// The CPU that hands it to the AP's Wi-Fi driver (picks the TCL ring of a wake round).
    pub cpu: u8,
    /// When it entered the AP's current queue (CoDel sojourn, queueing delay).
    pub enqueue_ns: Nanos,
    /// Failed attempts: times it was sent on the air and lost (a lossy link,
    /// `wifi::link`) or in an exchange that collided; at
    /// [`crate::wifi::link::MAX_ATTEMPTS`] it is dropped.
    pub tries: u8,
    /// Its sequence number on a lossy link (0 until first sent there), by which the
    /// receiver's BlockAck reorder buffer releases frames in order.
    pub mpdu_seq: u32,
}

impl Packet {
    /// A hash of the flow (the 5-tuple in Linux), for FQ classification.
    pub fn flow_hash(&self) -> u32 {
        let (k, n) = match self.flow {
            FlowTag::Tcp(n) => (1u32, u32::from(n)),
            FlowTag::Ping(n) => (2u32, u32::from(n)),
            FlowTag::Udp(n) => (3u32, u32::from(n)),
        };
        (k.wrapping_mul(0x9E37_79B9) ^ n.wrapping_mul(0x85EB_CA6B)).rotate_left(13).wrapping_mul(0xC2B2_AE35)
    }

    /// Bytes of the 802.11 frame the AQL estimate prices: the IP packet plus a QoS data
    /// header (26), LLC/SNAP (8) and the CCMP header (8), as `skb->len` reads at dequeue.
    pub fn mac_frame_bytes(&self) -> u32 {
        self.len_bytes + 42
    }

    /// Bytes of its A-MPDU subframe: QoS header 26, LLC 8, CCMP 16, FCS 4, delimiter 4,
    /// padded to a multiple of 4 bytes as every subframe but the last of an A-MPDU is.
    pub fn ampdu_subframe_bytes(&self) -> u32 {
        (self.len_bytes + 58).div_ceil(4) * 4
    }

    /// The access category a Wi-Fi transmitter queues it in: its DSCP's user priority
    /// (`cfg80211_classify8021d`) mapped to an AC (`ieee802_1d_to_ac`), as both a
    /// station and the access point classify; BE for a DS field that is not a DSCP.
    pub fn ac(&self) -> airtime_sched::Ac {
        super::udp::ac_of_dscp(self.dscp).unwrap_or(airtime_sched::Ac::Be)
    }
}

impl Packet {
    /// A copy of the packet as it goes on the air, for a hardware model whose host side
    /// keeps the original until the completion (the ath11k MSDU table).
    pub fn air_copy(&self) -> Packet {
        let payload = match &self.payload {
            Payload::Ip(v) => Payload::Ip(v.clone()),
            Payload::Tcp(s) => Payload::Tcp(*s),
            Payload::PingRequest { seq, sent_ns } => Payload::PingRequest { seq: *seq, sent_ns: *sent_ns },
            Payload::PingReply { seq, sent_ns } => Payload::PingReply { seq: *seq, sent_ns: *sent_ns },
            Payload::Udp { seq, sent_ns } => Payload::Udp { seq: *seq, sent_ns: *sent_ns },
        };
        Packet { payload, ..*self }
    }
}

impl airtime_sched::Frame for Packet {
    fn len_bytes(&self) -> u32 {
        self.mac_frame_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_addresses_round_trip() {
        for node in
            [Node::Wired, Node::Ap, Node::Station(0), Node::Station(249), Node::Station(250), Node::Station(900)]
        {
            assert_eq!(Node::from_addr(node.addr()), Some(node));
        }
    }

    #[test]
    fn a_1500_byte_packet_is_a_1560_byte_subframe() {
        let p = Packet {
            payload: Payload::Ip(Vec::new()),
            len_bytes: 1500,
            src: Node::Wired,
            dst: Node::Station(0),
            flow: FlowTag::Tcp(0),
            dscp: 0,
            cpu: 0,
            enqueue_ns: 0,
            tries: 0,
            mpdu_seq: 0,
        };
        assert_eq!(p.ampdu_subframe_bytes(), 1560);
    }
}
