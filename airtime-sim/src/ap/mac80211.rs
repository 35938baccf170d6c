//! mac80211's layer of the access point: per-station, per-TID FQ-CoDel txqs (the crate's
//! [`FqCodelTxq`]) and stations that price frames from their rate, registered with the
//! scheduler. Tables are indexed by the scheduler's handles, as the ready driver loop
//! ([`airtime_sched::driver_loop`]) expects.

use crate::net::Packet;
use airtime_ath11k::mu_charging::SCALE_ONE_Q8;
use airtime_est::Rate;
use airtime_sched::fq_codel::{FqCodelConfig, FqCodelTxq, FqFrame};
use airtime_sched::traits::StationErrorKind;
use airtime_sched::{Ac, StationId};

impl FqFrame for Packet {
    fn flow_hash(&self) -> u32 {
        Packet::flow_hash(self)
    }
}

/// A station as the scheduler sees it: its handle and the rate it is last sent at.
#[derive(Clone, Copy, Debug)]
pub struct SimStation {
    /// Scheduler handle.
    pub id: StationId,
    /// Last reported tx rate (the rate the hardware uses in this model).
    pub rate: Rate,
    /// The AQL price scale of its next frames in Q8, from its last PPDU record (256
    /// unless a share-based MU charging policy saw it in an MU PPDU; see
    /// [`airtime_ath11k::MuCharging::aql_scale_q8`]).
    pub mu_scale_q8: u32,
}

impl airtime_sched::Station for SimStation {
    type Error = StationErrorKind;
    fn station_id(&self) -> StationId {
        self.id
    }
    fn last_tx_rate(&self) -> Option<Rate> {
        Some(self.rate)
    }
    /// The price at its rate (the trait's default), scaled by its MU scale.
    fn expected_airtime_us(&self, frame_len: u32, ac: Ac) -> Result<u32, StationErrorKind> {
        let us = airtime_sched::price_from_rate(Some(self.rate), frame_len, ac)?;
        if self.mu_scale_q8 == SCALE_ONE_Q8 {
            return Ok(us);
        }
        Ok(u32::try_from((u64::from(us) * u64::from(self.mu_scale_q8)).div_ceil(u64::from(SCALE_ONE_Q8)))
            .unwrap_or(u32::MAX))
    }
}

/// A mac80211 txq: FQ-CoDel with mac80211's parameters.
pub type SimTxq = FqCodelTxq<Packet>;

/// A new txq with `config`.
pub fn new_txq(config: FqCodelConfig) -> SimTxq {
    // The configuration comes from FqCodelConfig::MAC80211 with validated overrides;
    // fall back to mac80211's own if a scenario's values are refused.
    FqCodelTxq::new(config).unwrap_or_else(|_| {
        FqCodelTxq::new(FqCodelConfig::MAC80211).unwrap_or_else(|_| unreachable!("mac80211 defaults are valid"))
    })
}
