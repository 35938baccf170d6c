//! A host's TCP endpoints on smoltcp 0.14, driven in virtual time.
//!
//! Each host has one smoltcp `Interface` over an in-memory IP device. A bulk sender keeps
//! its socket's send buffer full; a receiver reads everything at once, as an application
//! that sinks the data. The device may be *gated*: the access point's own sender is
//! limited like Linux TCP small queues (TSQ), so it holds no more than a pacing budget
//! of bytes below TCP (in the queues and the hardware) and sends again only as frames
//! complete.

use super::packet::Node;
use super::rtt::SegmentClock;
use crate::engine::Nanos;
use crate::engine::time::{from_smol, smol_instant};
use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet};
use smoltcp::phy::{Device, DeviceCapabilities, Medium};
use smoltcp::socket::tcp;
use smoltcp::wire::{HardwareAddress, IpAddress, IpCidr, Ipv4Packet, TcpPacket};
use std::collections::VecDeque;

/// The buffer of a socket's direction that carries only ACKs.
const SMALL_BUFFER: usize = 64 * 1024;

/// Port of flow `n` at its receiver.
pub fn receiver_port(flow: u16) -> u16 {
    5000 + flow
}
/// Port of flow `n` at its sender.
pub fn sender_port(flow: u16) -> u16 {
    40000 + flow
}
/// The flow an IPv4 TCP packet belongs to, from its ports.
pub fn flow_of(ip: &[u8]) -> Option<u16> {
    let ip = Ipv4Packet::new_checked(ip).ok()?;
    let tcp = TcpPacket::new_checked(ip.payload()).ok()?;
    let (a, b) = (tcp.src_port(), tcp.dst_port());
    [a, b].into_iter().find_map(|p| p.checked_sub(40000).or_else(|| p.checked_sub(5000).filter(|f| *f < 30000)))
}

/// Congestion control of a bulk sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CongestionControl {
    /// CUBIC (Linux's default).
    Cubic,
    /// Reno.
    Reno,
}

/// Role of an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Bulk sender.
    Sender,
    /// Sink.
    Receiver,
}

struct Endpoint {
    handle: SocketHandle,
    flow: u16,
    role: Role,
    clock: SegmentClock,
}

/// The TSQ gate of a sender on the access point.
#[derive(Clone, Debug)]
pub struct TsqGate {
    /// `sk_pacing_shift`: the budget is `pacing_rate >> shift` bytes (mac80211: 7).
    pub pacing_shift: u32,
    /// `tcp_limit_output_bytes`.
    pub limit_output_bytes: u64,
    /// Bytes handed down and not yet freed (completed or dropped).
    pub in_host_bytes: u64,
    /// Current budget in bytes.
    pub budget_bytes: u64,
}

impl TsqGate {
    /// A gate with Linux's constants for a Wi-Fi device.
    pub fn new(pacing_shift: u32) -> TsqGate {
        TsqGate { pacing_shift, limit_output_bytes: 1 << 20, in_host_bytes: 0, budget_bytes: 2 * 2304 }
    }

    /// Re-computes the budget from the flight size and smoothed RTT: Linux paces at 120 %
    /// of cwnd/srtt in congestion avoidance; the budget is that rate times 2^-shift s,
    /// at least two full-sized buffers, at most `tcp_limit_output_bytes`.
    fn update(&mut self, flight_bytes: u64, srtt_ns: Option<f64>) {
        let rate_bps = match srtt_ns {
            Some(s) if s > 0.0 => 1.2 * flight_bytes as f64 / (s * 1e-9),
            _ => 0.0,
        };
        let budget = (rate_bps / f64::from(1u32 << self.pacing_shift)) as u64;
        self.budget_bytes = budget.clamp(2 * 2304, self.limit_output_bytes);
    }

    fn open(&self) -> bool {
        self.in_host_bytes < self.budget_bytes
    }
}

/// The in-memory IP device under smoltcp.
struct SimDevice {
    rx: VecDeque<Vec<u8>>,
    tx: Vec<Vec<u8>>,
    gate: Option<TsqGate>,
}

struct RxTok(Vec<u8>);
struct TxTok<'a> {
    tx: &'a mut Vec<Vec<u8>>,
    gate: Option<&'a mut TsqGate>,
}

impl smoltcp::phy::RxToken for RxTok {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(&self.0)
    }
}

impl smoltcp::phy::TxToken for TxTok<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut buf = vec![0u8; len];
        let r = f(&mut buf);
        if let Some(g) = self.gate {
            g.in_host_bytes += len as u64;
        }
        self.tx.push(buf);
        r
    }
}

impl Device for SimDevice {
    type RxToken<'a> = RxTok;
    type TxToken<'a> = TxTok<'a>;

    fn receive(&mut self, _t: smoltcp::time::Instant) -> Option<(RxTok, TxTok<'_>)> {
        let p = self.rx.pop_front()?;
        Some((RxTok(p), TxTok { tx: &mut self.tx, gate: self.gate.as_mut() }))
    }

    fn transmit(&mut self, _t: smoltcp::time::Instant) -> Option<TxTok<'_>> {
        if self.gate.as_ref().is_some_and(|g| !g.open()) {
            return None;
        }
        Some(TxTok { tx: &mut self.tx, gate: self.gate.as_mut() })
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut caps = DeviceCapabilities::default();
        caps.medium = Medium::Ip;
        caps.max_transmission_unit = 1500;
        caps
    }
}

/// What a poll produced.
#[derive(Default, Debug)]
pub struct HostOutput {
    /// IPv4 datagrams to send, with their flow.
    pub packets: Vec<(Vec<u8>, u16)>,
    /// Bytes the receiving applications read, per flow.
    pub received: Vec<(u16, u64)>,
    /// RTT samples of acknowledged segments, per flow.
    pub rtt_samples: Vec<(u16, Nanos)>,
}

/// A host with TCP endpoints.
pub struct TcpHost {
    /// Which node it is.
    pub node: Node,
    iface: Interface,
    sockets: SocketSet<'static>,
    dev: SimDevice,
    endpoints: Vec<Endpoint>,
    samples: Vec<(u16, Nanos)>,
    scratch: Vec<Nanos>,
}

impl TcpHost {
    /// A host at `node`; `tsq` gates its sends (for a sender on the access point).
    pub fn new(node: Node, seed: u64, tsq: Option<TsqGate>) -> TcpHost {
        let mut dev = SimDevice { rx: VecDeque::new(), tx: Vec::new(), gate: tsq };
        let mut config = Config::new(HardwareAddress::Ip);
        config.random_seed = seed;
        let mut iface = Interface::new(config, &mut dev, smol_instant(0));
        let a = node.addr().octets();
        iface.update_ip_addrs(|addrs| {
            let _ = addrs.push(IpCidr::new(IpAddress::v4(a[0], a[1], a[2], a[3]), 8));
        });
        TcpHost {
            node,
            iface,
            sockets: SocketSet::new(Vec::new()),
            dev,
            endpoints: Vec::new(),
            samples: Vec::new(),
            scratch: Vec::new(),
        }
    }

    fn socket(rx_bytes: usize, tx_bytes: usize, cc: CongestionControl) -> tcp::Socket<'static> {
        let rx = tcp::SocketBuffer::new(vec![0u8; rx_bytes]);
        let tx = tcp::SocketBuffer::new(vec![0u8; tx_bytes]);
        let mut s = tcp::Socket::new(rx, tx);
        s.set_nagle_enabled(false);
        s.set_congestion_control(match cc {
            CongestionControl::Cubic => tcp::CongestionControl::Cubic,
            CongestionControl::Reno => tcp::CongestionControl::Reno,
        });
        s
    }

    /// Adds the sending end of flow `flow` towards `receiver`; it connects at the first poll.
    pub fn add_sender(&mut self, flow: u16, receiver: Node, cc: CongestionControl, buffer_bytes: usize) {
        let mut s = Self::socket(SMALL_BUFFER, buffer_bytes, cc);
        let a = receiver.addr().octets();
        let remote = (IpAddress::v4(a[0], a[1], a[2], a[3]), receiver_port(flow));
        // Cannot fail: the socket is new, both ports are non-zero, the address is set.
        let _ = s.connect(self.iface.context(), remote, sender_port(flow));
        let handle = self.sockets.add(s);
        self.endpoints.push(Endpoint { handle, flow, role: Role::Sender, clock: SegmentClock::default() });
    }

    /// Adds the receiving end of flow `flow`.
    pub fn add_receiver(&mut self, flow: u16, cc: CongestionControl, buffer_bytes: usize) {
        let mut s = Self::socket(buffer_bytes, SMALL_BUFFER, cc);
        let _ = s.listen(receiver_port(flow));
        let handle = self.sockets.add(s);
        self.endpoints.push(Endpoint { handle, flow, role: Role::Receiver, clock: SegmentClock::default() });
    }

    /// Bytes in flight of its first sending endpoint (0 without one), for traces.
    pub fn flight_bytes(&self) -> u64 {
        self.endpoints.iter().find(|e| e.role == Role::Sender).map_or(0, |e| e.clock.flight_bytes())
    }

    /// Whether the host has any endpoint.
    pub fn is_empty(&self) -> bool {
        self.endpoints.is_empty()
    }

    /// Hands an arriving datagram to the stack (processed at the next poll).
    pub fn deliver(&mut self, ip: Vec<u8>, now: Nanos) {
        // ACKs arriving at a sender clock its segments.
        if let Some(flow) = flow_of(&ip)
            && let Some(ep) = self.endpoints.iter_mut().find(|e| e.flow == flow && e.role == Role::Sender)
            && let Ok(p) = Ipv4Packet::new_checked(&ip[..])
            && let Ok(t) = TcpPacket::new_checked(p.payload())
            && t.ack()
        {
            ep.clock.on_ack(t.ack_number().0 as u32, now, &mut self.scratch);
            self.samples.extend(self.scratch.drain(..).map(|s| (flow, s)));
        }
        self.dev.rx.push_back(ip);
    }

    /// Frees `bytes` of this host's sends below TCP (a frame completed or was dropped).
    pub fn tsq_release(&mut self, bytes: u64) {
        if let Some(g) = self.dev.gate.as_mut() {
            g.in_host_bytes = g.in_host_bytes.saturating_sub(bytes);
        }
    }

    /// Runs the stack and the applications at `now`.
    pub fn poll(&mut self, now: Nanos, out: &mut HostOutput) {
        let t = smol_instant(now);
        if let Some(g) = self.dev.gate.as_mut()
            && let Some(ep) = self.endpoints.iter().find(|e| e.role == Role::Sender)
        {
            g.update(ep.clock.flight_bytes(), ep.clock.srtt_ns());
        }
        for _ in 0..3 {
            self.iface.poll(t, &mut self.dev, &mut self.sockets);
            let mut app_moved = false;
            for ep in &self.endpoints {
                let s = self.sockets.get_mut::<tcp::Socket>(ep.handle);
                match ep.role {
                    Role::Sender => {
                        if s.may_send() && s.send_capacity() > s.send_queue() {
                            // The content does not matter: claim all free space.
                            let n = s.send(|buf| (buf.len(), buf.len())).unwrap_or(0);
                            app_moved |= n > 0;
                        }
                    }
                    Role::Receiver => {
                        if s.can_recv() {
                            let n = s.recv(|buf| (buf.len(), buf.len())).unwrap_or(0);
                            if n > 0 {
                                out.received.push((ep.flow, n as u64));
                                app_moved = true;
                            }
                        }
                    }
                }
            }
            if !app_moved {
                break;
            }
        }
        for ip in self.dev.tx.drain(..) {
            let flow = flow_of(&ip).unwrap_or(0);
            if let Some(ep) = self.endpoints.iter_mut().find(|e| e.flow == flow && e.role == Role::Sender)
                && let Ok(p) = Ipv4Packet::new_checked(&ip[..])
                && let Ok(tcp) = TcpPacket::new_checked(p.payload())
            {
                let len = tcp.payload().len() as u32;
                ep.clock.on_send(tcp.seq_number().0 as u32, len, now);
            }
            out.packets.push((ip, flow));
        }
        out.rtt_samples.append(&mut self.samples);
    }

    /// When the stack next wants to be polled, if ever.
    pub fn poll_at(&mut self, now: Nanos) -> Option<Nanos> {
        self.iface.poll_at(smol_instant(now), &self.sockets).map(from_smol)
    }
}
