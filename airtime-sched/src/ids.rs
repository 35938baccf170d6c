//! Handles for registered stations and txqs.
//!
//! A handle is a slot index plus the slot's generation, so a handle kept after its
//! station or txq was removed is refused with a typed error instead of reaching the
//! slot's next occupant.
//!
//! The generation is 32 bits: a stale handle aliases the live one only after 2^32
//! reuses of its slot, and slots are allocated next-fit (the search starts after the
//! slot allocated last), so a table of `n` slots reuses one slot only once every `n`
//! allocations. (With 16 bits, 65,536 add/remove cycles of one slot made a stale handle
//! equal the live one, and first-fit allocation put all the churn on slot 0.)

use core::fmt;

/// A registered station (a peer), as returned by [`Scheduler::add_station`](crate::Scheduler::add_station).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StationId {
    pub(crate) index: u16,
    pub(crate) generation: u32,
}

/// A registered txq (one station-TID queue, or a station-less queue such as the
/// per-interface multicast queue), as returned by [`Scheduler::add_txq`](crate::Scheduler::add_txq).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TxqId {
    pub(crate) index: u16,
    pub(crate) generation: u32,
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

            /// The whole handle as a `u64`, for C drivers that store it: bits 0..16 the
            /// index, 16..32 zero, 32..64 the generation. There is no shorter form: a
            /// handle cut to 32 bits could keep only 16 bits of generation, and would
            /// alias its slot's occupant 65,536 reuses later.
            #[inline]
            pub const fn to_raw(self) -> u64 {
                (self.index as u64) | ((self.generation as u64) << 32)
            }

            /// A handle from [`to_raw`](Self::to_raw) (bits 16..32 are ignored). A forged
            /// value is harmless: the scheduler refuses it unless it names a live slot of
            /// the same generation.
            #[inline]
            pub const fn from_raw(raw: u64) -> Self {
                $t { index: raw as u16, generation: (raw >> 32) as u32 }
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
