//! Virtual time: nanoseconds since the start of a run, as a plain `u64`.

/// A point in virtual time or a duration, in nanoseconds.
pub type Nanos = u64;

/// `n` microseconds in nanoseconds.
pub const fn us(n: u64) -> Nanos {
    n * 1_000
}

/// `n` milliseconds in nanoseconds.
pub const fn ms(n: u64) -> Nanos {
    n * 1_000_000
}

/// Virtual time as the scheduler crate's [`airtime_sched::Instant`] (microseconds).
pub fn instant(now: Nanos) -> airtime_sched::Instant {
    airtime_sched::Instant::from_micros(now / 1_000)
}

/// Virtual time as smoltcp's clock (microseconds).
pub fn smol_instant(now: Nanos) -> smoltcp::time::Instant {
    smoltcp::time::Instant::from_micros((now / 1_000) as i64)
}

/// smoltcp's clock back in nanoseconds (never before 0).
pub fn from_smol(t: smoltcp::time::Instant) -> Nanos {
    (t.total_micros().max(0) as u64) * 1_000
}
