//! Measured airtime: tx from PPDU stats (patch 4; each MU user charged the whole
//! PPDU, or its share under [`Config::mu_charging`](crate::Config::mu_charging)) and rx
//! from monitor status (patch 7, charged to BE).

use super::calibration::Sample;
use super::tables::StationRecord;
use super::{Ath11k, Ath11kError};
use crate::hal::{FrameOf, Hal, PpduStats, PpduUser, RxPpdu};
use airtime_sched::traits::{Frame, price_from_rate};
use airtime_sched::{Ac, Enqueue, Instant, StationId, Tid, Txq};

/// What one PPDU record did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PpduOutcome {
    /// Users whose airtime was registered.
    pub users_charged: u32,
    /// Users naming no known peer (skipped).
    pub unknown_peers: u32,
    /// Users of a known peer naming no data TID (TID 16 and above; ath11k's
    /// `ath11k_update_per_peer_tx_stats` takes 16 when a user's record lacks its ACK/BA
    /// TLV, and still adds its duration to `arsta->tx_duration`). They are handled as
    /// any user (rate kept, MU scale set, airtime registered: on BE, where mac80211's
    /// `ieee80211_sta_register_airtime` puts TID 16 by its `tid & 7`), but are never a
    /// calibration sample (counted in
    /// [`CalibrationStats::no_tid`](crate::CalibrationStats::no_tid)).
    pub users_without_tid: u32,
}

impl<H, T> Ath11k<H, T>
where
    H: Hal,
    T: Txq<Frame = FrameOf<H>> + Enqueue,
    FrameOf<H>: Frame,
{
    /// One HTT PPDU stats record (patch 4): for each user, remembers its tx rate (the
    /// price of its next frames) and registers tx airtime on the AC of its TID. By
    /// default each user of an MU PPDU is charged the PPDU's whole duration, as
    /// ath11k's `arsta->tx_duration` already is; [`Config::mu_charging`] picks another
    /// split ([`MuCharging`](crate::MuCharging)), and sets the station's AQL price
    /// scale for its next frames. A record without a PPDU duration charges each SU
    /// user its own `tx_duration_us`. With [`Config::calibration`] on, each SU user is
    /// also a sample of the station's estimate calibration (MU users are counted and
    /// skipped). Completion context (HTT PPDU stats, softirq).
    ///
    /// [`Config::mu_charging`]: crate::Config::mu_charging
    /// [`Config::calibration`]: crate::Config::calibration
    pub fn on_ppdu_tx_stats(&self, ppdu: &PpduStats, now: Instant) -> PpduOutcome {
        let mut out = PpduOutcome::default();
        let policy = self.config.mu_charging;
        for (index, user) in ppdu.users().enumerate() {
            let Some((id, rec)) = self.stations.by_peer_record(user.peer_id) else {
                out.unknown_peers = out.unknown_peers.saturating_add(1);
                self.counters.unknown_peer_reports.bump();
                continue;
            };
            if let Some(rate) = user.rate {
                rec.set_tx_rate(rate);
            }
            rec.set_mu_scale_q8(policy.aql_scale_q8(ppdu, index));
            let no_tid = user.tid >= 16;
            if no_tid {
                out.users_without_tid = out.users_without_tid.saturating_add(1);
            }
            let ac = ac_of(user);
            if self.config.calibration.is_some() {
                if ppdu.n_users() > 1 {
                    self.counters.calibration.mu_users.bump();
                } else if no_tid {
                    self.counters.calibration.no_tid.bump();
                    self.counters.calibration.rejected.bump();
                } else {
                    self.calibrate(id, rec, user, ac, u64::from(policy.charge_us(ppdu, index)));
                }
            }
            if !self.config.tx_airtime {
                continue;
            }
            let us = policy.charge_us(ppdu, index);
            if self.txqs.scheduler().register_airtime(id, ac, us, 0, now).is_ok() {
                out.users_charged = out.users_charged.saturating_add(1);
            }
        }
        out
    }

    /// One calibration sample: what the user's acknowledged MSDUs were priced at (at
    /// the rate this very record reports for the user, without its MU or calibration
    /// scales: the calibrator learns the model's own error) against the `measured_us`
    /// the PPDU took. A user without a rate (ath11k's `ath11k_update_per_peer_tx_stats`
    /// skips a user without its rate TLV) says nothing of the rate its MSDUs went out
    /// at: it is rejected (and counted as rate-less) rather than priced at the
    /// station's previous rate, which would teach the calibrator the rate change (and
    /// which another completion context may change meanwhile). A record without MSDU
    /// count or bytes charges nothing and is rejected too.
    fn calibrate(&self, id: StationId, rec: &StationRecord, user: &PpduUser, ac: Ac, measured_us: u64) {
        let c = &self.counters.calibration;
        let Some(rate) = user.rate else {
            c.no_rate.bump();
            c.rejected.bump();
            return;
        };
        let msdus = u32::from(user.msdus);
        let charged_us = match user.msdu_bytes.checked_div(msdus) {
            Some(len) if len > 0 => {
                price_from_rate(Some(rate), len, ac).map_or(0, |us| u64::from(us).saturating_mul(u64::from(msdus)))
            }
            _ => 0,
        };
        match rec.calibrate(id, charged_us, measured_us) {
            Sample::Accepted => c.accepted.bump(),
            Sample::Rejected(_) => c.rejected.bump(),
            Sample::Busy => c.busy.bump(),
            Sample::Stale => c.stale.bump(),
        }
    }

    /// One received PPDU from rx monitor status (patch 7): remembers the rx rate and
    /// registers `rx_duration_us` as received airtime on the station's BE deficit
    /// (`register_airtime(sta, BE, 0, rx_us)`): the default monitor filter carries no
    /// TID, so BE is charged unconditionally, as the series does. Completion context
    /// (NAPI, rx monitor status).
    pub fn on_rx_ppdu(&self, rx: &RxPpdu, now: Instant) -> Result<(), Ath11kError> {
        let Some((id, rec)) = self.stations.by_peer_record(rx.peer_id) else {
            self.counters.unknown_peer_reports.bump();
            return Err(Ath11kError::UnknownPeer(rx.peer_id));
        };
        if let Some(rate) = rx.rate {
            rec.set_rx_rate(rate);
        }
        if self.config.rx_airtime {
            self.txqs.scheduler().register_airtime(id, Ac::Be, 0, rx.rx_duration_us, now)?;
        }
        Ok(())
    }

    /// Drains up to `max` records from each of the HAL's PPDU stats and rx status
    /// sources into [`on_ppdu_tx_stats`](Self::on_ppdu_tx_stats) and
    /// [`on_rx_ppdu`](Self::on_rx_ppdu). Returns the records processed.
    pub fn poll_airtime_reports(&self, max: u32, now: Instant) -> u32 {
        let mut n = 0u32;
        for _ in 0..max {
            let Some(p) = self.hal.next_ppdu_stats() else { break };
            let _ = self.on_ppdu_tx_stats(&p, now);
            n = n.saturating_add(1);
        }
        for _ in 0..max {
            let Some(r) = self.hal.next_rx_ppdu() else { break };
            let _ = self.on_rx_ppdu(&r, now);
            n = n.saturating_add(1);
        }
        n
    }
}

/// The AC a user's airtime is charged to: its TID's, 8 to 15 as 0 to 7 (mac80211's
/// `ieee80211_sta_register_airtime` takes `tid & 7`), and BE for TID 16 (the same
/// arithmetic) and the values above it no record carries.
fn ac_of(user: &PpduUser) -> Ac {
    if user.tid >= 16 {
        return Ac::Be;
    }
    Tid::new(user.tid & 7).map_or(Ac::Be, Tid::ac)
}
