//! Hosts and wires: packets, the wired link, TCP endpoints on smoltcp, the compact
//! Linux-like TCP, constant-bit-rate UDP streams, the ping, and the per-segment RTT
//! measurement.

pub mod link;
pub mod linux_tcp;
pub mod packet;
pub mod ping;
pub mod rtt;
pub mod tcp;
pub mod udp;

pub use packet::{Node, Packet, Payload};
