//! The driver's plug-in points: [`Txq`], [`Station`] and [`Ring`].
//!
//! # For driver authors
//! Implement the three traits over your data structures: a [`Txq`] is one
//! (station, TID) software queue the scheduler pulls frames from (the crate's
//! [`FqCodelTxq`](crate::fq_codel::FqCodelTxq) is a ready one); a [`Station`] prices a
//! frame from the peer's last reported tx rate; a [`Ring`] is the hardware descriptor
//! ring, which says whether it has room *before* a frame is dequeued and hands a frame
//! back when it refuses it. Each trait has its own error type whose `kind()` maps to a
//! small `#[non_exhaustive]` enum, so generic code (the ready
//! [driver loop](crate::driver_loop)) can react to "ring full" without knowing your
//! error type (embedded-hal's pattern). Blanket impls for `&mut T` let you pass
//! borrowed objects.
//!
//! # For users of the traits
//! Code generic over the traits (the driver loop, the simulator, the ath11k adapter)
//! should only rely on the documented contracts: `Ring::has_room` is a hint checked
//! before each dequeue, `Ring::push` may still refuse and must then return the frame
//! and its charge; `Txq::dequeue` returning `Ok(None)` means empty right now.

mod ring;
mod station;
mod txq;

pub use ring::{PushError, Ring, RingError, RingErrorKind};
pub use station::{Station, StationError, StationErrorKind, price_from_rate};
pub use txq::{Enqueue, Frame, Txq, TxqError, TxqErrorKind};
