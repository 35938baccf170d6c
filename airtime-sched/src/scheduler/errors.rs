//! Typed errors of the scheduler's operations: small and `Copy`, one per kind of
//! operation (smoltcp's habit).

use core::fmt;

/// A control or data-path operation named something that does not exist (now).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchedError {
    /// The station handle is stale (removed) or was never issued.
    UnknownStation,
    /// The txq handle is stale (removed) or was never issued.
    UnknownTxq,
    /// Every station slot is taken by a live station (capacity fixed at construction).
    StationsFull,
    /// No station slot is free, but some hold removed stations whose frames are still
    /// in flight: a slot frees once its [`DepartingStation`](crate::DepartingStation)
    /// is drained (every charge released).
    StationsDraining,
    /// Every txq slot is taken by a live txq (or one being added).
    TxqsFull,
    /// No txq slot is free, but some hold removed txqs not yet let go of: a turn
    /// still holds one (finish it: [`TxqTurn::finish`](crate::TxqTurn::finish),
    /// [`Scheduler::return_txq`](crate::Scheduler::return_txq)), a
    /// [`TxqTable`](crate::TxqTable)'s removed txq waits for its frames to be handed
    /// back ([`TxqTable::take_removed`](crate::TxqTable::take_removed)), or an enqueue
    /// into it is still in flight. Do that, or wait for it, then try again.
    TxqsDraining,
    /// A value the configuration types refuse (weight 0, inverted limits).
    Config(crate::ConfigError),
}

impl fmt::Display for SchedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchedError::UnknownStation => f.write_str("unknown or removed station"),
            SchedError::UnknownTxq => f.write_str("unknown or removed txq"),
            SchedError::StationsFull => f.write_str("no free station slot"),
            SchedError::StationsDraining => f.write_str("no free station slot until removed stations drain"),
            SchedError::TxqsFull => f.write_str("no free txq slot"),
            SchedError::TxqsDraining => {
                f.write_str("no free txq slot until removed txqs drain (turns returned, frames handed back)")
            }
            SchedError::Config(e) => write!(f, "invalid configuration: {e}"),
        }
    }
}

impl core::error::Error for SchedError {}

impl From<crate::ConfigError> for SchedError {
    fn from(e: crate::ConfigError) -> Self {
        SchedError::Config(e)
    }
}

/// A charge that could not be made; nothing was counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChargeError {
    /// The station handle is stale (its slot reused since) or was never issued, or the
    /// txq has no station; nothing was charged. A frame sent anyway is recorded with
    /// [`Scheduler::send_uncharged`](crate::Scheduler::send_uncharged).
    UnknownStation,
    /// The station already has so much airtime pending on the AC (over 71 minutes, so
    /// only a driver that never releases can get here) that the charge would carry its
    /// counter past `u32::MAX` us; nothing was counted.
    PendingOverflow,
    /// A frame was charged through the handle of a txq of another station
    /// ([`Serving::charge_frame`](crate::Serving::charge_frame)); nothing was counted.
    OtherStation,
    /// The station was removed ([`Scheduler::remove_station`](crate::Scheduler::remove_station)):
    /// its frames are to be purged, not sent; nothing was charged. A frame already
    /// dequeued is best dropped or kept back to be purged with its txq: sent anyway
    /// (recorded with [`Serving::send_uncharged`](crate::Serving::send_uncharged)), it is
    /// in flight where the station's drain
    /// ([`DepartingStation::is_drained`](crate::DepartingStation::is_drained)) cannot see
    /// it. The crate's loops charge a frame before they dequeue it, or keep it back, so
    /// they never hold one.
    StationRemoved,
}

impl fmt::Display for ChargeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChargeError::UnknownStation => f.write_str("charge for an unknown or removed station"),
            ChargeError::PendingOverflow => f.write_str("charge would overflow the station's pending airtime"),
            ChargeError::OtherStation => f.write_str("charge for another station than the served txq's"),
            ChargeError::StationRemoved => f.write_str("charge for a removed station"),
        }
    }
}

impl core::error::Error for ChargeError {}

/// A release that did not match the accounting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReleaseError {
    /// The token names no station slot of its generation (a forged or garbled raw
    /// value); nothing was released.
    UnknownStation,
    /// A counter held less than the token carried (a token released twice through
    /// [`Charge::from_raw`](crate::Charge::from_raw)); it was clamped at 0 (A4) and
    /// counted in [`Scheduler::underflows`](crate::Scheduler::underflows).
    Underflow,
    /// The charge was made by another scheduler (another radio's): nothing was
    /// released here, and the airtime stays pending on the scheduler that charged it.
    OtherRadio,
}

impl fmt::Display for ReleaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReleaseError::UnknownStation => f.write_str("release for an unknown station slot"),
            ReleaseError::Underflow => f.write_str("pending airtime underflow (charge released twice?)"),
            ReleaseError::OtherRadio => f.write_str("charge made by another radio's scheduler"),
        }
    }
}

impl core::error::Error for ReleaseError {}
