//! Handles for registered stations and txqs.
//!
//! A handle is a slot index plus the slot's generation, so a handle kept after its
//! station or txq was removed is refused with a typed error instead of reaching the
//! slot's next occupant.

use core::fmt;

/// A registered station (a peer), as returned by [`Scheduler::add_station`](crate::Scheduler::add_station).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StationId {
    pub(crate) index: u16,
    pub(crate) generation: u16,
}

/// A registered txq (one station-TID queue, or a station-less queue such as the
/// per-interface multicast queue), as returned by [`Scheduler::add_txq`](crate::Scheduler::add_txq).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TxqId {
    pub(crate) index: u16,
    pub(crate) generation: u16,
}

macro_rules! handle_impls {
    ($t:ident, $what:literal) => {
        impl $t {
            /// The slot index, `0..capacity`: stable while the handle is valid, so a
            /// driver can use it to index its own per-slot array.
            #[inline]
            pub const fn index(self) -> usize {
                self.index as usize
            }

            /// The whole handle as a `u32` (index in the low half, generation in the high
            /// half), for C drivers that store it.
            #[inline]
            pub const fn to_raw(self) -> u32 {
                (self.index as u32) | ((self.generation as u32) << 16)
            }

            /// A handle from [`to_raw`](Self::to_raw). A forged value is harmless: the
            /// scheduler refuses it unless it names a live slot of the same generation.
            #[inline]
            pub const fn from_raw(raw: u32) -> Self {
                $t { index: raw as u16, generation: (raw >> 16) as u16 }
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($what, "{}.{}"), self.index, self.generation)
            }
        }
    };
}

handle_impls!(StationId, "sta");
handle_impls!(TxqId, "txq");
