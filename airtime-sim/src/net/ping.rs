//! The ping: an ICMP echo from the wired host to each station at a fixed rate (20 Hz in
//! the seed), answered at once by the station. 84 bytes of IPv4 each way.

use super::packet::{FlowTag, Node, Packet, Payload};
use crate::engine::Nanos;

/// IPv4 length of an ICMP echo with 56 bytes of data.
pub const PING_BYTES: u32 = 84;

/// The echo request number `seq` to `station`, sent at `now`.
pub fn request(station: u16, seq: u64, now: Nanos, cpu: u8) -> Packet {
    Packet {
        payload: Payload::PingRequest { seq, sent_ns: now },
        len_bytes: PING_BYTES,
        src: Node::Wired,
        dst: Node::Station(station),
        flow: FlowTag::Ping(station),
        dscp: 0,
        cpu,
        enqueue_ns: now,
        tries: 0,
        mpdu_seq: 0,
    }
}

/// The station's reply to `req`, or `None` if `req` is not an echo request.
pub fn reply(req: &Packet) -> Option<Packet> {
    let Payload::PingRequest { seq, sent_ns } = req.payload else { return None };
    Some(Packet {
        payload: Payload::PingReply { seq, sent_ns },
        len_bytes: PING_BYTES,
        src: req.dst,
        dst: req.src,
        flow: req.flow,
        dscp: req.dscp,
        cpu: req.cpu,
        enqueue_ns: 0,
        tries: 0,
        mpdu_seq: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_goes_back_to_the_sender_with_the_request_time() {
        let r = request(3, 7, 1_000, 1);
        let p = reply(&r).unwrap();
        assert_eq!((p.src, p.dst), (Node::Station(3), Node::Wired));
        assert!(matches!(p.payload, Payload::PingReply { seq: 7, sent_ns: 1_000 }));
        assert!(reply(&p).is_none());
    }
}
