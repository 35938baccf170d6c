//! Parameters of an [`FqCodelTxq`](super::FqCodelTxq) and the errors of building one.

use core::fmt;

/// The most flows one txq may hash into (`u16` range; the flow index is stored in 32 bits).
pub const MAX_FLOWS: u32 = 65_536;

/// FQ-CoDel parameters of one txq.
///
/// Built from [`Default`] (mac80211's values) and then field-set, so that adding a field
/// is not a breaking change:
///
/// ```
/// use airtime_sched::fq_codel::FqCodelConfig;
///
/// let mut config = FqCodelConfig::default();
/// config.flows = 64; // a small station: 64 flows cost less memory than 1024
/// config.ecn = false;
/// assert_eq!(config.quantum_bytes, 300);
/// ```
///
/// # Where this differs from mac80211
/// mac80211 hashes every txq of a PHY into one table of 4096 flows, with one packet
/// limit (8192) and one memory limit (16 MiB) for the whole PHY, all under `fq.lock`.
/// Here a txq owns its flows and its limits: it needs no PHY-wide lock (the scheduler
/// above it is lock-free, and a txq is served by one context at a time), and a hash
/// never lands in a flow owned by another txq, so mac80211's per-tin *default flow*
/// for such collisions does not exist. The price: the limits bound one txq rather
/// than the PHY, so a PHY with many backlogged txqs may hold more in total; set the
/// limits per txq accordingly (e.g. the PHY budget divided by the expected number of
/// backlogged txqs). The flow table costs about `flows * 100` bytes per txq on a
/// 64-bit target, allocated once at construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FqCodelConfig {
    /// Hash buckets (flows) of this txq, 1..=[`MAX_FLOWS`]. Default 1024.
    pub flows: u32,
    /// Byte-DRR quantum between flows, at least 1. Default 300 bytes.
    pub quantum_bytes: u32,
    /// Most frames queued; above it the fattest flow loses a batch. Default 8192.
    pub packet_limit: u32,
    /// Most memory (sum of [`truesize`](super::FqFrame::truesize)) queued; above it the
    /// fattest flow loses a batch. Default 16 MiB.
    pub memory_limit_bytes: u64,
    /// CoDel target sojourn time, in us. Default 20 000 (20 ms).
    pub codel_target_us: u64,
    /// CoDel interval, in us, at least 1. Default 100 000 (100 ms).
    pub codel_interval_us: u64,
    /// Mark ECN-capable frames CE instead of dropping them. Default on (as mac80211).
    pub ecn: bool,
    /// Keep dropped frames for [`drain_drops`](super::FqCodelTxq::drain_drops) (default),
    /// or release them at once and only count them. A caller that keeps them must drain
    /// them, or they stay allocated.
    pub keep_dropped: bool,
}

impl FqCodelConfig {
    /// mac80211's parameters (`ieee80211_txq_setup_flows`), with per-txq flows.
    pub const MAC80211: FqCodelConfig = FqCodelConfig {
        flows: 1024,
        quantum_bytes: 300,
        packet_limit: 8192,
        memory_limit_bytes: 16 << 20,
        codel_target_us: 20_000,
        codel_interval_us: 100_000,
        ecn: true,
        keep_dropped: true,
    };

    /// Checks the parameters [`FqCodelTxq::new`](super::FqCodelTxq::new) refuses.
    pub fn validate(&self) -> Result<(), FqCodelConfigError> {
        if self.flows == 0 {
            return Err(FqCodelConfigError::NoFlows);
        }
        if self.flows > MAX_FLOWS {
            return Err(FqCodelConfigError::TooManyFlows);
        }
        if self.quantum_bytes == 0 {
            return Err(FqCodelConfigError::ZeroQuantum);
        }
        if self.codel_interval_us == 0 {
            return Err(FqCodelConfigError::ZeroInterval);
        }
        Ok(())
    }
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        FqCodelConfig::MAC80211
    }
}

/// Why an [`FqCodelTxq`](super::FqCodelTxq) could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FqCodelConfigError {
    /// `flows` is 0.
    NoFlows,
    /// `flows` is above [`MAX_FLOWS`].
    TooManyFlows,
    /// `quantum_bytes` is 0: no flow could ever earn credit.
    ZeroQuantum,
    /// `codel_interval_us` is 0: CoDel would have no control interval.
    ZeroInterval,
    /// The flow table could not be allocated.
    OutOfMemory,
}

impl fmt::Display for FqCodelConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FqCodelConfigError::NoFlows => "an FQ-CoDel txq needs at least one flow",
            FqCodelConfigError::TooManyFlows => "too many FQ-CoDel flows for one txq",
            FqCodelConfigError::ZeroQuantum => "the FQ quantum must be at least 1 byte",
            FqCodelConfigError::ZeroInterval => "the CoDel interval must be at least 1 us",
            FqCodelConfigError::OutOfMemory => "out of memory allocating the FQ flow table",
        })
    }
}

impl core::error::Error for FqCodelConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_mac80211_with_per_txq_flows() {
        let c = FqCodelConfig::default();
        assert_eq!(
            (c.flows, c.quantum_bytes, c.packet_limit, c.memory_limit_bytes),
            (1024, 300, 8192, 16 * 1024 * 1024)
        );
        assert_eq!((c.codel_target_us, c.codel_interval_us, c.ecn), (20_000, 100_000, true));
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn validate_refuses_parameters_that_cannot_work() {
        let mut c = FqCodelConfig { flows: 0, ..FqCodelConfig::default() };
        assert_eq!(c.validate(), Err(FqCodelConfigError::NoFlows));
        c.flows = MAX_FLOWS + 1;
        assert_eq!(c.validate(), Err(FqCodelConfigError::TooManyFlows));
        c.flows = MAX_FLOWS;
        c.quantum_bytes = 0;
        assert_eq!(c.validate(), Err(FqCodelConfigError::ZeroQuantum));
        c.quantum_bytes = 1;
        c.codel_interval_us = 0;
        assert_eq!(c.validate(), Err(FqCodelConfigError::ZeroInterval));
    }
}
