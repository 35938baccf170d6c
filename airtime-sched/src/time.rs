//! Passed-in time. The scheduler never reads a clock (smoltcp's rule): tests, loom,
//! fuzzing and the simulator are deterministic because every operation is told `now`.

use core::fmt;

/// A point in time, in microseconds since an arbitrary epoch chosen by the caller
/// (a driver passes e.g. `ktime_get_ns() / 1000`; the simulator its virtual clock).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    micros: u64,
}

impl Instant {
    /// The epoch.
    pub const ZERO: Instant = Instant { micros: 0 };

    /// A time `micros` microseconds after the epoch.
    #[inline]
    pub const fn from_micros(micros: u64) -> Instant {
        Instant { micros }
    }

    /// A time `millis` milliseconds after the epoch (saturating).
    #[inline]
    pub const fn from_millis(millis: u64) -> Instant {
        Instant { micros: millis.saturating_mul(1000) }
    }

    /// Microseconds since the epoch.
    #[inline]
    pub const fn micros(self) -> u64 {
        self.micros
    }

    /// Microseconds from `earlier` to `self`, or 0 if `earlier` is later (time passed in
    /// by two contexts may be slightly out of order; that is not an error).
    #[inline]
    pub const fn micros_since(self, earlier: Instant) -> u64 {
        self.micros.saturating_sub(earlier.micros)
    }

    /// This time plus `micros` (saturating).
    #[inline]
    pub const fn add_micros(self, micros: u64) -> Instant {
        Instant { micros: self.micros.saturating_add(micros) }
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:06}s", self.micros / 1_000_000, self.micros % 1_000_000)
    }
}
