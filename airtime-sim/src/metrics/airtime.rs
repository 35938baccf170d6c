//! Where the air went during the measured time: the AP's downlink, each station's
//! uplink (data and TCP ACKs alike), exchanges lost to collisions, and idle air (AIFS,
//! backoff and nothing to send). The AP's downlink share per station
//! (`StationResult::airtime_share_pct`) says nothing about uplink; this ledger does.

use crate::engine::Nanos;
use serde::Serialize;

/// Air time by use, per cent of the measured time (they sum to 100).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct AirtimeBreakdown {
    /// The AP's successful exchanges.
    pub downlink_pct: f64,
    /// The stations' successful exchanges.
    pub uplink_pct: f64,
    /// Exchanges that collided (the longest of the colliding transmissions).
    pub collided_pct: f64,
    /// No exchange on the air.
    pub idle_pct: f64,
}

/// Accumulates successful air time per station and direction, and collided time.
#[derive(Clone, Debug, Default)]
pub struct AirtimeLedger {
    downlink_ns: Vec<Nanos>,
    uplink_ns: Vec<Nanos>,
    collided_ns: Nanos,
}

impl AirtimeLedger {
    /// A ledger for `stations` stations.
    pub fn new(stations: usize) -> AirtimeLedger {
        AirtimeLedger { downlink_ns: vec![0; stations], uplink_ns: vec![0; stations], collided_ns: 0 }
    }

    /// The AP's exchange with `station` succeeded and took `ns`.
    pub fn downlink(&mut self, station: usize, ns: Nanos) {
        if let Some(a) = self.downlink_ns.get_mut(station) {
            *a += ns;
        }
    }

    /// `station`'s exchange succeeded and took `ns`.
    pub fn uplink(&mut self, station: usize, ns: Nanos) {
        if let Some(a) = self.uplink_ns.get_mut(station) {
            *a += ns;
        }
    }

    /// An exchange of several transmitters collided; the medium was busy for `ns`.
    pub fn collided(&mut self, ns: Nanos) {
        self.collided_ns += ns;
    }

    /// The breakdown over a measured time of `window_ns`.
    pub fn breakdown(&self, window_ns: Nanos) -> AirtimeBreakdown {
        let pct = |ns: Nanos| if window_ns > 0 { 100.0 * ns as f64 / window_ns as f64 } else { 0.0 };
        let down: Nanos = self.downlink_ns.iter().sum();
        let up: Nanos = self.uplink_ns.iter().sum();
        let busy = down + up + self.collided_ns;
        AirtimeBreakdown {
            downlink_pct: pct(down),
            uplink_pct: pct(up),
            collided_pct: pct(self.collided_ns),
            idle_pct: pct(window_ns.saturating_sub(busy)),
        }
    }

    /// `station`'s successful downlink and uplink air time, per cent of `window_ns`.
    pub fn station_pct(&self, station: usize, window_ns: Nanos) -> (f64, f64) {
        let pct = |v: &[Nanos]| match (v.get(station), window_ns) {
            (Some(&ns), w) if w > 0 => 100.0 * ns as f64 / w as f64,
            _ => 0.0,
        };
        (pct(&self.downlink_ns), pct(&self.uplink_ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_breakdown_sums_to_the_measured_time() {
        let mut l = AirtimeLedger::new(2);
        l.downlink(0, 300);
        l.uplink(1, 200);
        l.collided(100);
        let b = l.breakdown(1000);
        assert_eq!((b.downlink_pct, b.uplink_pct, b.collided_pct, b.idle_pct), (30.0, 20.0, 10.0, 40.0));
        assert_eq!(l.station_pct(1, 1000), (0.0, 20.0));
        assert_eq!(l.station_pct(7, 1000), (0.0, 0.0), "an unknown station has no air");
    }
}
