//! Hosts and wires: packets, the wired link, TCP endpoints on smoltcp, the ping, and the
//! per-segment RTT measurement.

pub mod link;
pub mod linux_tcp;
pub mod packet;
pub mod ping;
pub mod rtt;
pub mod tcp;

pub use packet::{Node, Packet, Payload};
