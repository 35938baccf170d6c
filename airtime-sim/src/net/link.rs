//! A wired point-to-point link in one direction: serialisation at a fixed rate, then a
//! propagation delay. Its sender's queue is unbounded (the wired side is never the
//! bottleneck in the seed's setup; a bounded qdisc belongs to the AP designs).

use crate::engine::Nanos;

/// One direction of a wired link.
#[derive(Clone, Debug)]
pub struct WiredLink {
    rate_bps: u64,
    delay_ns: Nanos,
    busy_until: Nanos,
}

impl WiredLink {
    /// A link of `rate_bps` bits per second and `delay_ns` one-way propagation delay.
    pub fn new(rate_bps: u64, delay_ns: Nanos) -> WiredLink {
        WiredLink { rate_bps: rate_bps.max(1), delay_ns, busy_until: 0 }
    }

    /// Sends `len_bytes` at `now`; returns when the last bit arrives at the far end.
    pub fn send(&mut self, now: Nanos, len_bytes: u32) -> Nanos {
        let start = now.max(self.busy_until);
        let tx_ns = u64::from(len_bytes) * 8 * 1_000_000_000 / self.rate_bps;
        self.busy_until = start + tx_ns;
        self.busy_until + self.delay_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_to_back_packets_serialise_then_propagate() {
        let mut l = WiredLink::new(1_000_000_000, 500_000);
        assert_eq!(l.send(0, 1500), 12_000 + 500_000);
        assert_eq!(l.send(0, 1500), 24_000 + 500_000);
        assert_eq!(l.send(1_000_000, 1500), 1_012_000 + 500_000);
    }
}
