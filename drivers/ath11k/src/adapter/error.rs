//! The adapter's error type.

use airtime_sched::{ConfigError, SchedError};
use core::fmt;

/// Why an adapter operation was refused. Nothing changed when it is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ath11kError {
    /// The core scheduler refused (unknown handle, capacity, configuration).
    Sched(SchedError),
    /// The station handle is unknown to the adapter.
    UnknownStation,
    /// The txq handle is unknown to the adapter.
    UnknownTxq,
    /// No station has this firmware peer id.
    UnknownPeer(u16),
    /// A station with this firmware peer id exists already.
    PeerInUse(u16),
    /// The station has a txq on this TID already.
    TxqInUse,
    /// Memory for the tables could not be reserved at creation.
    OutOfMemory,
    /// [`Config::max_tx_ring`](crate::Config::max_tx_ring) is not 1 to 3.
    TxRings(u8),
}

impl Ath11kError {
    /// The errno a kernel entry point returns for it.
    pub const fn errno(self) -> i32 {
        const ENOENT: i32 = 2;
        const ENOMEM: i32 = 12;
        const EBUSY: i32 = 16;
        const EEXIST: i32 = 17;
        const EINVAL: i32 = 22;
        const ENOSPC: i32 = 28;
        let errno = match self {
            Ath11kError::Sched(SchedError::StationsFull | SchedError::TxqsFull) => ENOSPC,
            // Slots of departed stations free once their frames complete, and slots of
            // removed txqs once no CPU serves them and they are handed back: try again.
            Ath11kError::Sched(SchedError::StationsDraining | SchedError::TxqsDraining) => EBUSY,
            Ath11kError::Sched(SchedError::Config(ConfigError::OutOfMemory)) => ENOMEM,
            Ath11kError::Sched(SchedError::Config(_)) => EINVAL,
            Ath11kError::Sched(_) => ENOENT,
            Ath11kError::UnknownStation | Ath11kError::UnknownTxq | Ath11kError::UnknownPeer(_) => ENOENT,
            Ath11kError::PeerInUse(_) | Ath11kError::TxqInUse => EEXIST,
            Ath11kError::OutOfMemory => ENOMEM,
            Ath11kError::TxRings(_) => EINVAL,
        };
        // Small positive constants: the negation cannot wrap.
        errno.wrapping_neg()
    }
}

impl fmt::Display for Ath11kError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ath11kError::Sched(e) => write!(f, "scheduler: {e}"),
            Ath11kError::UnknownStation => f.write_str("unknown station"),
            Ath11kError::UnknownTxq => f.write_str("unknown txq"),
            Ath11kError::UnknownPeer(p) => write!(f, "no station has peer id {p}"),
            Ath11kError::PeerInUse(p) => write!(f, "peer id {p} is in use"),
            Ath11kError::TxqInUse => f.write_str("the station has a txq on this TID"),
            Ath11kError::OutOfMemory => f.write_str("out of memory"),
            Ath11kError::TxRings(n) => write!(f, "{n} TX rings: ath11k hardware has 1 to 3"),
        }
    }
}

impl core::error::Error for Ath11kError {}

impl From<SchedError> for Ath11kError {
    fn from(e: SchedError) -> Self {
        Ath11kError::Sched(e)
    }
}

impl From<ConfigError> for Ath11kError {
    fn from(e: ConfigError) -> Self {
        match e {
            // The scheduler's tables: -ENOMEM, as the adapter's own.
            ConfigError::OutOfMemory => Ath11kError::OutOfMemory,
            e => Ath11kError::Sched(SchedError::Config(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_map_to_kernel_errnos() {
        assert_eq!(Ath11kError::Sched(SchedError::StationsFull).errno(), -28);
        assert_eq!(Ath11kError::Sched(SchedError::StationsDraining).errno(), -16);
        assert_eq!(Ath11kError::Sched(SchedError::TxqsFull).errno(), -28);
        assert_eq!(Ath11kError::Sched(SchedError::TxqsDraining).errno(), -16, "not -ENOENT: try again");
        assert_eq!(Ath11kError::from(ConfigError::ZeroWeight).errno(), -22);
        assert_eq!(Ath11kError::UnknownPeer(3).errno(), -2);
        assert_eq!(Ath11kError::PeerInUse(3).errno(), -17);
        assert_eq!(Ath11kError::OutOfMemory.errno(), -12);
        assert_eq!(Ath11kError::from(ConfigError::OutOfMemory).errno(), -12, "the scheduler's tables too");
        assert_eq!(Ath11kError::from(ConfigError::Capacity).errno(), -22);
    }
}
