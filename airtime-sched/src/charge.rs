//! AQL charge tokens.
//!
//! Charging a frame at dequeue returns a [`Charge`]; releasing it at completion
//! consumes it. The token is `#[must_use]` and neither `Clone` nor `Copy`, so the
//! exactly-once release that mac80211 keeps by convention (and has broken: reference
//! B2, invariant A2) is kept by the type system here.

use crate::{Ac, StationId};
use core::fmt;

/// The airtime charged for one frame, to be released exactly once when the frame
/// leaves the hardware (completed, dropped, or freed: every exit, invariant A5).
///
/// Dropping a `Charge` without releasing it leaks pending airtime (the station would
/// throttle for good, B3); the `#[must_use]` attribute and the absence of
/// `Clone` make that visible at compile time in ordinary code.
#[must_use = "a charge must be released with Scheduler::release when its frame completes"]
#[derive(Debug, PartialEq, Eq)]
pub struct Charge {
    pub(crate) station: StationId,
    pub(crate) ac: Ac,
    pub(crate) airtime_us: u32,
    /// Whether `station` carries the whole generation (a token from a charge) or only
    /// the four bits the raw form keeps (a token from [`Charge::from_raw`]).
    pub(crate) full_generation: bool,
    /// The scheduler that made the charge (its `radio` number), checked at release; 0
    /// for a token from [`Charge::from_raw`], which the raw form has no room to say.
    pub(crate) radio: u16,
}

impl Charge {
    /// Largest charge, in us: 14 bits of 4 us units (mainline stores 10 bits and
    /// clamps at 4092 us, under-charging slow frames, E2).
    pub const MAX_US: u32 = ((1 << RAW_UNITS_BITS) - 1) * 4;

    /// The station charged; `None` for a multicast charge (a frame of a station-less
    /// txq, counted against its AC's multicast budget).
    #[inline]
    pub fn station(&self) -> Option<StationId> {
        (!self.is_multicast()).then_some(self.station)
    }

    /// Whether this charges the multicast budget of its AC rather than a station.
    #[inline]
    pub fn is_multicast(&self) -> bool {
        // Minted with generation 0: a garbled token with other generation bits names the
        // (nonexistent) station slot 4095 and is refused as unknown.
        self.station.index == MULTICAST_INDEX && self.station.generation == 0
    }

    /// A multicast charge of `airtime_us` (already quantised) on `ac`.
    #[inline]
    pub(crate) const fn multicast(ac: Ac, airtime_us: u32, radio: u16) -> Charge {
        Charge {
            station: StationId { index: MULTICAST_INDEX, generation: 0 },
            ac,
            airtime_us,
            full_generation: true,
            radio,
        }
    }

    /// The access category charged.
    #[inline]
    pub fn ac(&self) -> Ac {
        self.ac
    }

    /// The charged airtime in us: a multiple of 4 in `[4, MAX_US]` (invariant A3).
    #[inline]
    pub fn airtime_us(&self) -> u32 {
        self.airtime_us
    }

    /// The token as one `u32`, for a driver that must keep it in a C frame's control
    /// block. The value must come back through [`Charge::from_raw`] exactly once.
    ///
    /// Layout: bits 0..14 the charge in 4 us units, 14..16 the AC, 16..28 the station
    /// slot (4095 with generation 0 for a multicast charge), 28..32 the low four bits of
    /// the station's generation. A raw value is never 0.
    #[inline]
    pub fn into_raw(self) -> u32 {
        (self.airtime_us / 4)
            | ((self.ac as u32) << RAW_UNITS_BITS)
            | (u32::from(self.station.index) << 16)
            | ((self.station.generation & 0xf) << 28)
    }

    /// A token back from [`Charge::into_raw`]. The raw form does not say which scheduler
    /// made the charge, so any scheduler takes the token back: a driver with several
    /// radios must release it on the one that charged it. Calling this twice for one stored value
    /// would release twice; the scheduler then detects the underflow and reports it
    /// ([`ReleaseError`](crate::ReleaseError)), but conservation is the caller's duty here.
    /// Returns `None` for a value no `into_raw` can produce (a zero charge).
    #[inline]
    pub fn from_raw(raw: u32) -> Option<Charge> {
        let units = raw & ((1 << RAW_UNITS_BITS) - 1);
        if units == 0 {
            return None;
        }
        let ac = Ac::from_index(((raw >> RAW_UNITS_BITS) & 3) as usize)?;
        Some(Charge {
            station: StationId { index: ((raw >> 16) & 0xfff) as u16, generation: raw >> 28 },
            ac,
            airtime_us: units.wrapping_mul(4), // 14 bits of units: at most MAX_US
            full_generation: false,
            radio: 0,
        })
    }
}

const RAW_UNITS_BITS: u32 = 14;

/// The station slot a multicast charge names, with generation 0. Slot 4095's stations
/// never take a generation whose low four bits (all the raw form keeps) are 0
/// (`add_station`), so no station's token, raw or not, looks like a multicast one.
pub(crate) const MULTICAST_INDEX: u16 = 0xfff;

/// Whether a token's station generation matches a slot's: all of it for a token that
/// never left Rust (`full`), the 4 bits that survive the raw encoding otherwise.
#[inline]
pub(crate) const fn gen_matches(token_gen: u32, full: bool, slot_gen: u32) -> bool {
    if full { token_gen == slot_gen } else { (token_gen & 0xf) == (slot_gen & 0xf) }
}

/// Rounds an estimate to a chargeable amount: a multiple of 4 us, at least 4, at most
/// [`Charge::MAX_US`] (invariant A3, with a wider range than mainline's 4092).
#[inline]
pub(crate) const fn quantise_us(estimate_us: u32) -> u32 {
    let us = if estimate_us > Charge::MAX_US { Charge::MAX_US } else { estimate_us };
    let us = us & !3;
    if us < 4 { 4 } else { us }
}

impl fmt::Display for Charge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.station() {
            Some(station) => write!(f, "{} us on {} {}", self.airtime_us, station, self.ac),
            None => write!(f, "{} us on multicast {}", self.airtime_us, self.ac),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_encoding_round_trips() {
        for (index, generation, ac, us) in [
            (0u16, 0u32, Ac::Vo, 4u32),
            (4094, 15, Ac::Bk, Charge::MAX_US),
            (17, 3, Ac::Be, 1912),
            (9, 0xffff_fffe, Ac::Vi, 8),
        ] {
            let c = Charge {
                station: StationId { index, generation },
                ac,
                airtime_us: us,
                full_generation: true,
                radio: 1,
            };
            let raw = c.into_raw();
            assert_ne!(raw, 0);
            let back = Charge::from_raw(raw).unwrap();
            assert_eq!((back.station.index, back.ac, back.airtime_us), (index, ac, us));
            assert!(gen_matches(back.station.generation, back.full_generation, generation));
            assert!(!back.full_generation, "only four bits of the generation survive");
        }
        assert_eq!(Charge::from_raw(0), None);
        let mc = Charge::from_raw(Charge::multicast(Ac::Vi, 400, 1).into_raw()).unwrap();
        assert!(mc.is_multicast());
        assert_eq!((mc.station(), mc.ac(), mc.airtime_us()), (None, Ac::Vi, 400));
    }

    #[test]
    fn charges_are_multiples_of_four_within_range() {
        assert_eq!(quantise_us(0), 4);
        assert_eq!(quantise_us(29), 28);
        assert_eq!(quantise_us(12506), 12504);
        assert_eq!(quantise_us(u32::MAX), Charge::MAX_US);
        assert_eq!(Charge::MAX_US, 65532);
    }
}
