//! Time series of one run, sampled on a timer (`sample_interval_ms`) over the measured
//! interval: per station the AQL pending airtime, per flow the congestion window, the
//! smoothed RTT and the throughput over the last interval. Sampling on a timer keeps the
//! per-packet path free of it: a sample costs O(stations + flows) once per interval.

use crate::engine::Nanos;

/// What the world reports about a flow at a sample.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowSample {
    /// Bytes delivered and counted since the warm-up.
    pub bytes: u64,
    /// Congestion window, segments (Linux-like TCP only).
    pub cwnd_segments: Option<f64>,
    /// Smoothed RTT, ns (Linux-like TCP only, once measured).
    pub srtt_ns: Option<f64>,
}

/// The recorder.
#[derive(Clone, Debug, Default)]
pub struct SeriesRecorder {
    /// The sample interval.
    pub interval_ns: Nanos,
    /// Sample times, s.
    pub t_s: Vec<f32>,
    /// Per station, AQL pending (BE), us.
    pub aql_pending_us: Vec<Vec<f32>>,
    /// Per flow, cwnd in segments (NaN where the stack has none).
    pub cwnd_segments: Vec<Vec<f32>>,
    /// Per flow, smoothed RTT in ms (NaN before the first measurement or without one).
    pub srtt_ms: Vec<Vec<f32>>,
    /// Per flow, throughput over the interval before the sample, Mbit/s.
    pub throughput_mbps: Vec<Vec<f32>>,
    last_bytes: Vec<u64>,
    last_ns: Option<Nanos>,
}

impl SeriesRecorder {
    /// A recorder for `stations` and `flows` sampled every `interval_ns`.
    pub fn new(interval_ns: Nanos, stations: usize, flows: usize) -> SeriesRecorder {
        SeriesRecorder {
            interval_ns: interval_ns.max(1),
            aql_pending_us: vec![Vec::new(); stations],
            cwnd_segments: vec![Vec::new(); flows],
            srtt_ms: vec![Vec::new(); flows],
            throughput_mbps: vec![Vec::new(); flows],
            last_bytes: vec![0; flows],
            ..SeriesRecorder::default()
        }
    }

    /// Takes a sample at `now`: `aql(s)` is station `s`'s pending airtime in us,
    /// `flow(f)` flow `f`'s state. The first sample only sets the byte baseline.
    pub fn sample(&mut self, now: Nanos, aql: impl Fn(usize) -> u32, flow: impl Fn(usize) -> FlowSample) {
        let Some(last) = self.last_ns.replace(now) else {
            for (f, b) in self.last_bytes.iter_mut().enumerate() {
                *b = flow(f).bytes;
            }
            return;
        };
        let secs = (now.saturating_sub(last)) as f64 / 1e9;
        self.t_s.push(now as f32 / 1e9);
        for (s, v) in self.aql_pending_us.iter_mut().enumerate() {
            v.push(aql(s) as f32);
        }
        for f in 0..self.last_bytes.len() {
            let st = flow(f);
            let delta = st.bytes.saturating_sub(self.last_bytes[f]);
            self.last_bytes[f] = st.bytes;
            let mbps = if secs > 0.0 { delta as f64 * 8.0 / secs / 1e6 } else { 0.0 };
            self.throughput_mbps[f].push(mbps as f32);
            self.cwnd_segments[f].push(st.cwnd_segments.map_or(f32::NAN, |c| c as f32));
            self.srtt_ms[f].push(st.srtt_ns.map_or(f32::NAN, |r| (r / 1e6) as f32));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_is_the_byte_delta_over_the_interval_and_the_first_sample_is_the_baseline() {
        let mut r = SeriesRecorder::new(100_000_000, 1, 1);
        let bytes = std::cell::Cell::new(1_000_000u64);
        let flow = |_| FlowSample { bytes: bytes.get(), cwnd_segments: Some(10.0), srtt_ns: None };
        r.sample(1_000_000_000, |_| 7, flow);
        assert!(r.t_s.is_empty());
        bytes.set(1_000_000 + 1_250_000);
        r.sample(1_100_000_000, |_| 7, flow);
        assert_eq!(r.t_s, vec![1.1]);
        assert!((r.throughput_mbps[0][0] - 100.0).abs() < 1e-3, "{:?}", r.throughput_mbps);
        assert_eq!((r.aql_pending_us[0][0], r.cwnd_segments[0][0]), (7.0, 10.0));
        assert!(r.srtt_ms[0][0].is_nan());
    }
}
