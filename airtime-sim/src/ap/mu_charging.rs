//! What the users of a downlink MU (OFDMA) PPDU are charged: the PPDU-stats record the
//! firmware writes for it, and the charging policy (`[ap] mu_charging`) that turns it
//! into per-station airtime ([`airtime_ath11k::MuCharging`], shared by every design
//! that registers airtime: the adapter applies it itself, the simulator's own designs
//! through [`Ap::mu_ppdu_stats`]).

use super::Ap;
use crate::engine::Nanos;
use airtime_ath11k::MuCharging;
use airtime_ath11k::hal::{PpduStats, PpduUser};
use airtime_sched::Ac;

/// The charging policy, as a scenario names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MuChargingName {
    /// Every user the whole PPDU (ath11k and the series).
    #[default]
    WholePpdu,
    /// The PPDU split by RU tones.
    RuShare,
    /// Each user its own data duration at its RU rate.
    OwnDuration,
}

impl MuChargingName {
    /// The adapter's policy.
    pub fn policy(self) -> MuCharging {
        match self {
            MuChargingName::WholePpdu => MuCharging::WholePpdu,
            MuChargingName::RuShare => MuCharging::RuShare,
            MuChargingName::OwnDuration => MuCharging::OwnDuration,
        }
    }
}

/// One user of an MU PPDU as the firmware reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MuReportUser {
    /// The station.
    pub station: u16,
    /// Tones of its RU.
    pub ru_tones: u16,
    /// Its own exchange (its PPDU without padding, SIFS, BlockAck), in us.
    pub own_us: u32,
}

/// The PPDU-stats report of an MU PPDU.
#[derive(Clone, Debug, PartialEq)]
pub struct MuReport {
    /// The exchange, in us (what each user's `tx_duration` says, as ath11k's firmware
    /// reports it).
    pub duration_us: u32,
    /// Its users (at most 8: more are refused when the scenario is loaded).
    pub users: Vec<MuReportUser>,
}

impl Ap {
    fn reported_rate(&self, s: u16) -> Option<airtime_est::Rate> {
        let id = self.sta_ids.get(usize::from(s))?;
        self.stations.get(id.index())?.as_ref().map(|st| st.rate)
    }

    /// The HTT PPDU-stats record of `report`, users at their reported rates.
    fn ppdu_record(&self, report: &MuReport) -> PpduStats {
        let mut p = PpduStats::new(report.duration_us);
        for u in &report.users {
            let rate = self.reported_rate(u.station);
            // No MSDU counts: the estimate's calibration takes SU users only.
            let user = PpduUser {
                ru_tones: u.ru_tones,
                own_duration_us: u.own_us,
                ..PpduUser::su(u.station, 0, report.duration_us, rate)
            };
            // The scenario limits users to the record's 8.
            let _ = p.push_user(user);
        }
        p
    }

    /// A PPDU-stats report of an MU PPDU: each user charged as `[ap] mu_charging` says,
    /// and priced for AQL accordingly.
    pub fn mu_ppdu_stats(&mut self, report: &MuReport, now: Nanos) {
        let record = self.ppdu_record(report);
        if let Some(a) = self.adapter.as_mut() {
            a.ppdu_record(record, now);
            return;
        }
        if !self.config.design.registers_airtime() {
            return;
        }
        let policy = self.config.mu_charging.policy();
        for (i, u) in record.users().enumerate() {
            let us = policy.charge_us(&record, i);
            if let Some(st) = self
                .sta_ids
                .get(usize::from(u.peer_id))
                .and_then(|id| self.stations.get_mut(id.index()))
                .and_then(Option::as_mut)
            {
                st.mu_scale_q8 = policy.aql_scale_q8(&record, i);
            }
            super::ath11k_like::ppdu_stats(self, u.peer_id, Ac::Be, us, now);
        }
    }

    /// A PPDU-stats report of an SU PPDU: its station's AQL price is a whole-channel
    /// one again.
    pub(super) fn su_ppdu_seen(&mut self, s: u16) {
        if let Some(st) =
            self.sta_ids.get(usize::from(s)).and_then(|id| self.stations.get_mut(id.index())).and_then(Option::as_mut)
        {
            st.mu_scale_q8 = airtime_ath11k::mu_charging::SCALE_ONE_Q8;
        }
    }
}
