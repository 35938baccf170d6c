//! Creation, stations and txqs, knobs, statistics and teardown.

use super::tables::{StationSlots, TxqEntry, TxqSlots};
use super::{AcSet, Ath11k, Ath11kError, Config, Held, StationRecord};
use crate::hal::{FrameOf, Hal, RingId, TxStatus};
use crate::stats::DpStats;
use airtime_sched::traits::Frame;
use airtime_sched::{Ac, AqlLimits, Scheduler, StationId, Tid, Txq, TxqId, Weight};
use core::fmt;

impl<H, T> Ath11k<H, T>
where
    H: Hal,
    T: Txq<Frame = FrameOf<H>>,
    FrameOf<H>: Frame,
{
    /// Creates the adapter for one radio over `hal` (process context; allocates every
    /// table here, never on the data path). Sets the scheduler's TX_NO_PUSHBACK from
    /// `config.tx_no_pushback` and turns AQL on per `config.aql` (patch 2).
    // Never inlined: building the adapter takes about twice its size of stack, which
    // must stay out of callers' frames (the kernel module checks for 2 KiB frames).
    #[inline(never)]
    pub fn new(hal: H, config: Config) -> Result<Self, Ath11kError> {
        let mut sched_config = config.sched;
        sched_config.tx_no_pushback = config.tx_no_pushback;
        let sched = Scheduler::new(sched_config)?;
        sched.set_aql_enabled(config.aql);
        let txqs = TxqSlots::new(usize::from(sched_config.max_txqs))?;
        let stations = StationSlots::new(usize::from(sched_config.max_stations))?;
        Ok(Ath11k {
            hal,
            sched,
            config: Config { sched: sched_config, ..config },
            txqs,
            stations,
            held: [None, None, None, None],
            blocked: AcSet::EMPTY,
            counters: DpStats::default(),
        })
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The core scheduler (for its statistics and invariant checks).
    pub fn scheduler(&self) -> &Scheduler {
        &self.sched
    }

    /// The core scheduler, exclusively (for [`Scheduler::check_invariants_quiescent`]).
    pub fn scheduler_mut(&mut self) -> &mut Scheduler {
        &mut self.sched
    }

    /// The HAL.
    pub fn hal(&self) -> &H {
        &self.hal
    }

    /// The HAL, mutably (the simulator advances its firmware through this).
    pub fn hal_mut(&mut self) -> &mut H {
        &mut self.hal
    }

    /// Adds a station with firmware peer id `peer_id` (mac80211 `sta_add` /
    /// `sta_state` to associated).
    pub fn add_station(&mut self, peer_id: u16, weight: Weight) -> Result<StationId, Ath11kError> {
        self.stations.check_insert(peer_id)?;
        let id = self.sched.add_station(weight)?;
        if !self.stations.insert(id, peer_id) {
            let _ = self.sched.remove_station(id);
            return Err(Ath11kError::UnknownStation);
        }
        Ok(id)
    }

    /// Removes a station and its txqs; each txq is handed to `on_txq` (to purge its
    /// frames). A frame of theirs waiting in a retry slot is released and given to the
    /// status sink as [`TxStatus::Removed`]. Frames in the rings complete later and
    /// release normally.
    pub fn remove_station(&mut self, id: StationId, mut on_txq: impl FnMut(T)) -> Result<(), Ath11kError> {
        self.stations.get(id).ok_or(Ath11kError::UnknownStation)?;
        self.sched.remove_station(id)?;
        loop {
            let next = self.txqs.of_station(id).next();
            let Some(txq) = next else { break };
            if let Some(entry) = self.txqs.remove(txq) {
                self.flush_held(Some(txq));
                on_txq(entry.txq);
            } else {
                break;
            }
        }
        self.stations.remove(id);
        Ok(())
    }

    /// Adds a txq for `station` (or a station-less one) on `tid`. On refusal the txq
    /// comes back with the error.
    pub fn add_txq(&mut self, station: Option<StationId>, tid: Tid, txq: T) -> Result<TxqId, (Ath11kError, T)> {
        if let Some(sta) = station {
            match self.stations.get(sta) {
                None => return Err((Ath11kError::UnknownStation, txq)),
                Some(rec) if rec.txq(tid).is_some() => return Err((Ath11kError::TxqInUse, txq)),
                Some(_) => {}
            }
        }
        let id = match self.sched.add_txq(station, tid) {
            Ok(id) => id,
            Err(e) => return Err((e.into(), txq)),
        };
        match self.txqs.put(TxqEntry { id, station, tid, ac: tid.ac(), txq }) {
            Ok(()) => {
                if let Some(rec) = station.and_then(|s| self.stations.get_mut(s)) {
                    rec.set_txq(tid, Some(id));
                }
                Ok(id)
            }
            Err(entry) => {
                let _ = self.sched.remove_txq(id);
                Err((Ath11kError::UnknownTxq, entry.txq))
            }
        }
    }

    /// Removes a txq and gives it back; a frame of it in a retry slot is released and
    /// reported [`TxStatus::Removed`].
    pub fn remove_txq(&mut self, id: TxqId) -> Result<T, Ath11kError> {
        let entry = self.txqs.remove(id).ok_or(Ath11kError::UnknownTxq)?;
        let _ = self.sched.remove_txq(id);
        if let Some(rec) = entry.station.and_then(|s| self.stations.get_mut(s)) {
            rec.set_txq(entry.tid, None);
        }
        self.flush_held(Some(id));
        Ok(entry.txq)
    }

    /// The txq `id`, to enqueue into (then call [`wake_tx_queue`](Self::wake_tx_queue)).
    pub fn txq_mut(&mut self, id: TxqId) -> Option<&mut T> {
        self.txqs.get_mut(id).map(|e| &mut e.txq)
    }

    /// The txq `id`.
    pub fn txq(&self, id: TxqId) -> Option<&T> {
        self.txqs.get(id).map(|e| &e.txq)
    }

    /// The txq of station `id` on `tid` (the C API names txqs by peer id and TID).
    pub fn txq_for(&self, id: StationId, tid: Tid) -> Option<TxqId> {
        self.stations.get(id)?.txq(tid)
    }

    /// The station record `id`.
    pub fn station(&self, id: StationId) -> Option<&StationRecord> {
        self.stations.get(id)
    }

    /// The station with firmware peer id `peer_id`.
    pub fn station_by_peer(&self, peer_id: u16) -> Option<StationId> {
        self.stations.by_peer(peer_id)
    }

    /// Sets a station's airtime weight (`airtime_weight`; with TX_NO_PUSHBACK its AQL
    /// limits scale by weight/256).
    pub fn set_weight(&mut self, id: StationId, weight: Weight) -> Result<(), Ath11kError> {
        Ok(self.sched.set_weight(id, weight)?)
    }

    /// Sets a station's AQL limits on `ac` (the station `aql` file's write).
    pub fn set_station_limits(&mut self, id: StationId, ac: Ac, limits: AqlLimits) -> Result<(), Ath11kError> {
        Ok(self.sched.set_station_limits(id, ac, limits)?)
    }

    /// Sets the radio's default AQL limits on `ac` (`aql_txq_limit`).
    pub fn set_default_limits(&mut self, ac: Ac, limits: AqlLimits) {
        self.sched.set_default_limits(ac, limits);
    }

    /// Sets the radio's AQL threshold (`aql_threshold`): below this much pending
    /// airtime on the radio, stations may use their high limit.
    pub fn set_aql_threshold_us(&mut self, threshold_us: u32) {
        self.sched.set_aql_threshold_us(threshold_us);
    }

    /// Turns the AQL checks on or off (`aql_enable`).
    pub fn set_aql_enabled(&mut self, on: bool) {
        self.sched.set_aql_enabled(on);
    }

    /// The data path statistics with the outstanding MSDU count per ring (patch 3).
    pub fn dp_stats(&self) -> DpStats {
        let mut s = self.counters;
        for ring in RingId::ALL {
            if let Some(p) = s.pending_msdus.get_mut(ring.index()) {
                *p = self.hal.msdu_outstanding(ring);
            }
        }
        s.held_now = self.held.iter().filter(|h| h.is_some()).count() as u32;
        s
    }

    /// Outstanding MSDUs over all rings: frames in the hardware.
    pub fn outstanding_msdus(&self) -> u32 {
        RingId::ALL.iter().fold(0u32, |n, r| n.saturating_add(self.hal.msdu_outstanding(*r)))
    }

    /// Frames waiting in the retry slots.
    pub fn held_frames(&self) -> u32 {
        self.held.iter().filter(|h| h.is_some()).count() as u32
    }

    /// ACs whose last round ended on a full or refusing ring.
    pub fn blocked_acs(&self) -> AcSet {
        self.blocked
    }

    /// Writes a station's `aql` debugfs file (the core's `StationAql` text).
    pub fn write_station_aql(&self, id: StationId, out: &mut dyn fmt::Write) -> Result<(), Ath11kError> {
        let aql = self.sched.station_aql(id)?;
        let _ = write!(out, "{aql}");
        Ok(())
    }

    /// Writes a station's `airtime` debugfs file (the core's `StationAirtime` text).
    pub fn write_station_airtime(&self, id: StationId, out: &mut dyn fmt::Write) -> Result<(), Ath11kError> {
        let airtime = self.sched.station_airtime(id)?;
        let _ = write!(out, "{airtime}");
        Ok(())
    }

    /// Writes the `soc_dp_stats`-like file ([`DpStats`]'s text).
    pub fn write_dp_stats(&self, out: &mut dyn fmt::Write) {
        let _ = write!(out, "{}", self.dp_stats());
    }

    /// Teardown (`ath11k_dp_tx_pending_cleanup`): takes every outstanding MSDU out of
    /// the tables and every held frame, releases their charges and reports them
    /// [`TxStatus::Removed`]. Afterwards pending airtime is 0. Returns the frames freed.
    pub fn flush_outstanding(&mut self) -> u32 {
        let mut n = self.flush_held(None);
        for ring in RingId::ALL {
            while let Some((_, msdu)) = self.hal.msdu_take_any(ring) {
                let (frame, charge, _) = msdu.into_parts();
                self.finish_unsent(frame, charge);
                n += 1;
            }
        }
        n
    }

    /// Consumes the adapter after flushing, giving the HAL back.
    pub fn into_hal(mut self) -> H {
        self.flush_outstanding();
        self.hal
    }

    /// Releases and reports `Removed` the held frames of `txq` (all with `None`).
    fn flush_held(&mut self, txq: Option<TxqId>) -> u32 {
        let mut n = 0;
        for i in 0..self.held.len() {
            let Some(slot) = self.held.get_mut(i) else { continue };
            if slot.as_ref().is_some_and(|h| txq.is_none_or(|t| h.txq == t))
                && let Some(Held { frame, charge, .. }) = slot.take()
            {
                self.finish_unsent(frame, charge);
                n += 1;
            }
        }
        n
    }

    fn finish_unsent(&mut self, frame: FrameOf<H>, charge: Option<airtime_sched::Charge>) {
        if let Some(c) = charge
            && self.sched.release(c).is_err()
        {
            self.counters.release_errors = self.counters.release_errors.saturating_add(1);
        }
        self.counters.flushed = self.counters.flushed.saturating_add(1);
        self.hal.tx_status(frame, TxStatus::Removed);
    }
}
