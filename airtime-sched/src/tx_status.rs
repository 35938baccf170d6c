//! The tx-status helper: what a driver does with each completion, in one call.
//!
//! From the charge a frame carried and what the hardware reported (the rate it used,
//! its tries, whether it went in an A-MPDU), [`Scheduler::complete_frame`] releases the
//! charge, registers the airtime the frame used for its station's deficit
//! (`ieee80211_sta_register_airtime`), and, when the driver opts in, teaches the
//! station's [`Calibrator`] how far the estimate was from that airtime. Hardware that
//! reports PPDU durations instead (ath11k's PPDU statistics, mt7915's per-station
//! counters) uses [`Scheduler::complete_ppdu`]: one release pass for the PPDU's frames,
//! the measured duration registered, the calibrator fed with the pair.

use crate::{Ac, BatchRelease, Charge, Instant, ReleaseError, SchedError, Scheduler, StationId};
use airtime_est::{Calibrator, Rate, RetryStage, SampleRejected, expected_tx_airtime_us, tx_airtime_us};

/// What the hardware reported for one completed frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameStatus {
    /// Bytes as transmitted.
    pub len_bytes: u32,
    /// The rate the frame went out at, if the hardware said (`None`: the charge is taken
    /// as the airtime used).
    pub rate: Option<Rate>,
    /// Transmissions, the first included (at least 1; 0 is taken as 1).
    pub tries: u8,
    /// Whether it went in an A-MPDU: it then shared its PPDU's overhead with the other
    /// frames, as the AQL estimate assumes.
    pub aggregated: bool,
}

impl FrameStatus {
    /// The airtime the frame used, in us: each try of an aggregated frame costs its share
    /// of an A-MPDU (the AQL estimate at that rate), each try of a single frame a whole
    /// PPDU (mainline's `ieee80211_calc_tx_airtime`); without a rate, `charged_us`.
    pub fn airtime_us(&self, charged_us: u32) -> u32 {
        let tries = self.tries.max(1);
        match self.rate {
            None => charged_us,
            Some(rate) if self.aggregated => {
                expected_tx_airtime_us(rate, self.len_bytes, true).saturating_mul(u32::from(tries))
            }
            Some(rate) => tx_airtime_us(&[RetryStage { rate, tries }], self.len_bytes),
        }
    }
}

/// What [`Scheduler::complete_frame`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a release or registration that failed reports a charge handed back wrongly or a station gone"]
pub struct FrameCompletion {
    /// The airtime registered (or that would have been), in us.
    pub airtime_us: u32,
    /// The release of the charge.
    pub released: Result<(), ReleaseError>,
    /// The registration of the airtime (a removed station's goes to the AC's departed
    /// counters; multicast frames have no station and register nothing, `Ok`).
    pub registered: Result<(), SchedError>,
    /// The calibrator's verdict on the sample, if one was given and the frame had a rate.
    pub calibrated: Option<Result<(), SampleRejected>>,
}

/// What [`Scheduler::complete_ppdu`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a release or registration that failed reports a charge handed back wrongly or a station gone"]
pub struct PpduCompletion {
    /// The release pass over the PPDU's charges.
    pub released: BatchRelease,
    /// Airtime the PPDU's charges carried, in us (the station's only).
    pub charged_us: u64,
    /// Charges of other stations or multicast in the PPDU's list: released, but not part
    /// of the station's sample.
    pub foreign: u32,
    /// The registration of the PPDU's duration.
    pub registered: Result<(), SchedError>,
    /// The calibrator's verdict on the sample, if one was given.
    pub calibrated: Option<Result<(), SampleRejected>>,
}

impl Scheduler {
    /// Completes one frame (every exit: acked, failed, expired, flushed): releases its
    /// charge, registers the airtime its status says it used for its station on its AC
    /// (see [`FrameStatus::airtime_us`]), and feeds `calibrator` with (charged, used)
    /// when the status carries a rate.
    ///
    /// The charge is fed to the calibrator as the estimate: pass a calibrator only if the
    /// frame was charged the unscaled estimate, not one scaled by that calibrator
    /// ([`Calibrator::scale_us`]). Fed its own scaled charges, a calibrator learns the
    /// square root of the true ratio (see [`Calibrator::record`]); a driver that charges
    /// scaled estimates passes `None` and records the unscaled estimate itself.
    pub fn complete_frame(
        &self,
        charge: Charge,
        status: &FrameStatus,
        now: Instant,
        calibrator: Option<&mut Calibrator>,
    ) -> FrameCompletion {
        let (station, ac) = (charge.station(), charge.ac());
        let mut done = self.release_with_status(charge, status, calibrator);
        // Another radio's charge names a station of that radio: nothing is registered
        // here, where the same handle may name another station.
        if let (Some(sta), false) = (station, done.released == Err(ReleaseError::OtherRadio)) {
            done.registered = self.register_airtime(sta, ac, done.airtime_us, 0, now);
        }
        done
    }

    /// [`complete_frame`](Self::complete_frame) for a driver whose airtime reaches the
    /// scheduler another way (per-station counters it polls, as mt7915's WTBL airtime
    /// counters; PPDU statistics): releases the charge and feeds `calibrator`, registers
    /// nothing (`registered` is `Ok`), so the airtime is not counted twice.
    ///
    /// As for [`complete_frame`](Self::complete_frame), the calibrator takes the charge as
    /// the unscaled estimate: pass `None` if the charge was scaled by the calibrator.
    pub fn release_with_status(
        &self,
        charge: Charge,
        status: &FrameStatus,
        calibrator: Option<&mut Calibrator>,
    ) -> FrameCompletion {
        let charged_us = charge.airtime_us();
        let airtime_us = status.airtime_us(charged_us);
        let released = self.release(charge);
        if released == Err(ReleaseError::OtherRadio) {
            // Not this radio's frame: no sample for its calibrator either.
            return FrameCompletion { airtime_us, released, registered: Ok(()), calibrated: None };
        }
        let calibrated = match (calibrator, status.rate) {
            (Some(cal), Some(_)) => Some(cal.record(u64::from(charged_us), u64::from(airtime_us))),
            _ => None,
        };
        FrameCompletion { airtime_us, released, registered: Ok(()), calibrated }
    }

    /// Completes a PPDU of `station` on `ac` whose duration the hardware measured: one
    /// release pass over its frames' `charges` ([`release_batch`](Self::release_batch)),
    /// `ppdu_us` registered as the station's airtime, and `calibrator` fed with the sum
    /// of the station's charges against `ppdu_us`.
    ///
    /// That sum stands for the unscaled estimate ([`Calibrator::record`]'s `charged_us`):
    /// pass a calibrator only if the charges were not scaled by it. A driver that charges
    /// calibrated estimates passes `None` and feeds the calibrator the PPDU's frames priced
    /// without the scale (as the ath11k adapter does), else the calibrator would settle at
    /// the square root of the true ratio.
    pub fn complete_ppdu<I: IntoIterator<Item = Charge>>(
        &self,
        station: StationId,
        ac: Ac,
        charges: I,
        ppdu_us: u32,
        now: Instant,
        calibrator: Option<&mut Calibrator>,
    ) -> PpduCompletion {
        let (mut charged_us, mut foreign) = (0u64, 0u32);
        let released = self.release_batch(charges.into_iter().inspect(|c| {
            if self.made(c) && c.station() == Some(station) && c.ac() == ac {
                charged_us = charged_us.saturating_add(u64::from(c.airtime_us()));
            } else {
                foreign = foreign.saturating_add(1);
            }
        }));
        let registered = self.register_airtime(station, ac, ppdu_us, 0, now);
        let calibrated = calibrator.map(|cal| cal.record(charged_us, u64::from(ppdu_us)));
        PpduCompletion { released, charged_us, foreign, registered, calibrated }
    }
}
