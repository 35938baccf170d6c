//! The ranges a run's length, warm-up, run count and sample interval must lie in, shared
//! by the command line and the scenario parser so both refuse the same values with the
//! same words. A value outside its range is refused, never clamped.

/// The longest simulated run: one day. Longer runs are a typo (milliseconds written as
/// seconds), and their per-run samples would not fit in memory.
pub const MAX_DURATION_S: f64 = 86_400.0;
/// The most runs of one arm: a 95 % confidence interval is within 1 % of its limit
/// (the normal quantile) long before this.
pub const MAX_RUNS: u32 = 1000;
/// The shortest time-series sample interval: 1 ms, the AQL pending sampling period.
pub const MIN_SAMPLE_INTERVAL_MS: f64 = 1.0;
/// The longest time-series sample interval: 60 s.
pub const MAX_SAMPLE_INTERVAL_MS: f64 = 60_000.0;

/// The fastest ping: 1000 a second per station, one every millisecond. Faster is a
/// typo (an interval written as a rate); at 1e9 Hz and above the interval rounds to 0 ns
/// and the run would never leave its first instant.
pub const MAX_PING_HZ: f64 = 1000.0;

/// Checks a ping rate, in Hz: 0 (no ping) or `(0, MAX_PING_HZ]`; not negative, NaN or
/// infinite.
pub fn ping_rate_hz(v: f64) -> Result<f64, String> {
    if v == 0.0 || (v > 0.0 && v <= MAX_PING_HZ) {
        Ok(v)
    } else {
        Err(format!("{v} is not a ping rate; give pings per second in (0, {MAX_PING_HZ}], or 0 for none"))
    }
}

/// Checks a run's simulated length, in s: `(0, MAX_DURATION_S]`.
pub fn duration_s(v: f64) -> Result<f64, String> {
    if v > 0.0 && v <= MAX_DURATION_S {
        Ok(v)
    } else {
        Err(format!("{v} is not a run length; give simulated seconds in (0, {MAX_DURATION_S}] (one day at most)"))
    }
}

/// Checks a warm-up, in s, against the run length `duration_s`: `[0, duration_s)`.
pub fn warmup_s(v: f64, duration_s: f64) -> Result<f64, String> {
    if v >= 0.0 && v < duration_s {
        Ok(v)
    } else {
        Err(format!("{v} is not a warm-up for a {duration_s} s run; give seconds in [0, {duration_s})"))
    }
}

/// Checks a warm-up, in s, on its own: `[0, MAX_DURATION_S)`.
pub fn warmup_alone_s(v: f64) -> Result<f64, String> {
    warmup_s(v, MAX_DURATION_S)
}

/// Checks a run count: `1..=MAX_RUNS`.
pub fn runs(v: u32) -> Result<u32, String> {
    if (1..=MAX_RUNS).contains(&v) { Ok(v) } else { Err(format!("{v} runs cannot run; give 1..={MAX_RUNS}")) }
}

/// Checks a sample interval, in ms: `[MIN_SAMPLE_INTERVAL_MS, MAX_SAMPLE_INTERVAL_MS]`.
pub fn sample_interval_ms(v: f64) -> Result<f64, String> {
    if (MIN_SAMPLE_INTERVAL_MS..=MAX_SAMPLE_INTERVAL_MS).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "{v} is not a sample interval; give milliseconds in [{MIN_SAMPLE_INTERVAL_MS}, {MAX_SAMPLE_INTERVAL_MS}]"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_values_are_refused_not_clamped() {
        for d in [0.0, -1.0, f64::NAN, f64::INFINITY, 86_400.5] {
            assert!(duration_s(d).is_err(), "{d}");
        }
        assert_eq!(duration_s(86_400.0), Ok(86_400.0));
        assert!(warmup_s(2.0, 2.0).is_err() && warmup_s(-0.1, 2.0).is_err() && warmup_s(f64::NAN, 2.0).is_err());
        assert_eq!(warmup_s(0.0, 2.0), Ok(0.0));
        assert!(runs(0).is_err() && runs(1001).is_err());
        assert_eq!(runs(1000), Ok(1000));
        assert!(sample_interval_ms(0.5).is_err() && sample_interval_ms(f64::NAN).is_err());
        for hz in [-1.0, f64::NAN, f64::INFINITY, 1000.5, 1e10] {
            assert!(ping_rate_hz(hz).is_err(), "{hz}");
        }
        assert_eq!((ping_rate_hz(0.0), ping_rate_hz(1000.0)), (Ok(0.0), Ok(1000.0)));
    }
}
