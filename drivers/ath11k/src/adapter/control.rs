//! Creation, stations and txqs, knobs, statistics and teardown.
//!
//! Control operations take `&self` and may run while the wake and completion contexts
//! run, and alongside each other: the scheduler's registry is lock-free, the station
//! records are claimed and published with compare-and-swap (see `tables`), and a
//! removed txq's frames come back from the core's table only once no context holds it.

use super::counters::{AtomicAcSet, DpCounters, HeldGauge};
use super::tables::StationSlots;
use super::{AcSet, Ath11k, Ath11kError, Config, StationRecord, TxqMark};
use crate::hal::{FrameOf, Hal, RingId, TxStatus};
use crate::stats::DpStats;
use airtime_sched::traits::Frame;
use airtime_sched::txqs::{AddTxqError, RemovedTxq, Retry};
use airtime_sched::{
    Ac, AqlLimits, Charge, Enqueue, RoundGate, Scheduler, StationId, Tid, Txq, TxqId, TxqTable, Weight,
};
use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// "No txq" in a [`TxqMark`].
const NO_TXQ: u64 = u64::MAX;

impl<H, T> Ath11k<H, T>
where
    H: Hal,
    T: Txq<Frame = FrameOf<H>> + Enqueue,
    FrameOf<H>: Frame,
{
    /// Creates the adapter for one radio over `hal` (process context; allocates every
    /// table here, never on the data path except a txq intake's node for an enqueued
    /// frame when the txq has neither its own free nor an emptied one to reuse, which the core's table allocates
    /// and refuses without aborting). Sets the
    /// scheduler's TX_NO_PUSHBACK from `config.tx_no_pushback` and turns AQL on per
    /// `config.aql` (patch 2).
    // Never inlined: building the adapter takes about twice its size of stack, which
    // must stay out of callers' frames (the kernel module checks for 2 KiB frames).
    #[inline(never)]
    pub fn new(hal: H, config: Config) -> Result<Self, Ath11kError> {
        if config.max_tx_ring == 0 || usize::from(config.max_tx_ring) > crate::hal::DP_TCL_NUM_RING_MAX {
            return Err(Ath11kError::TxRings(config.max_tx_ring));
        }
        let mut sched_config = config.sched;
        sched_config.tx_no_pushback = config.tx_no_pushback;
        let stations =
            StationSlots::new(usize::from(sched_config.max_stations), config.calibration.unwrap_or_default())?;
        let n = usize::from(sched_config.max_txqs);
        let mut txq_marks = Vec::new();
        txq_marks.try_reserve_exact(n).map_err(|_| Ath11kError::OutOfMemory)?;
        txq_marks.resize_with(n, || TxqMark { id: AtomicU64::new(NO_TXQ), holding: AtomicU8::new(0) });
        Ok(Ath11k {
            hal,
            txqs: Self::table(sched_config, config.aql)?,
            config: Config { sched: sched_config, ..config },
            stations,
            txq_marks,
            held: HeldGauge::default(),
            blocked: AtomicAcSet::default(),
            rerun: AtomicAcSet::default(),
            gate: RoundGate::new(),
            counters: DpCounters::default(),
        })
    }

    /// The scheduler and its txq table. Out of line: built inside `new`, the scheduler
    /// and the table were each one more copy in its stack frame, past the kernel's 2 KiB
    /// frame limit.
    #[inline(never)]
    fn table(sched_config: airtime_sched::Config, aql: bool) -> Result<TxqTable<T>, Ath11kError> {
        let sched = Scheduler::new(sched_config)?;
        sched.set_aql_enabled(aql);
        TxqTable::try_new(sched).map_err(|_| Ath11kError::OutOfMemory)
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The core scheduler (statistics, and every `&self` operation of its own).
    pub fn scheduler(&self) -> &Scheduler {
        self.txqs.scheduler()
    }

    /// The core's invariant check ([`TxqTable::check_invariants`]: the scheduler's
    /// quiescent check, then no txq left held or locked and every intake's count
    /// exact), with the radio at rest.
    pub fn check_invariants(&mut self) -> Result<(), airtime_sched::InvariantViolation> {
        self.txqs.check_invariants()
    }

    /// The core's txq table the adapter serves from.
    pub fn txq_table(&self) -> &TxqTable<T> {
        &self.txqs
    }

    /// The HAL (its role traits take `&self`; the simulated HAL's firmware is
    /// advanced through this while the adapter runs).
    pub fn hal(&self) -> &H {
        &self.hal
    }

    /// The HAL, exclusively (configuration changes of a simulated HAL).
    pub fn hal_mut(&mut self) -> &mut H {
        &mut self.hal
    }

    /// Adds a station with firmware peer id `peer_id` (mac80211 `sta_add` /
    /// `sta_state` to associated). Process context; safe beside the data path and
    /// other control operations (a peer id is published once).
    pub fn add_station(&self, peer_id: u16, weight: Weight) -> Result<StationId, Ath11kError> {
        self.stations.check_peer(peer_id)?;
        let id = self.scheduler().add_station(weight)?;
        if let Err(e) = self.stations.publish(id, peer_id) {
            // Nothing else knows the station yet: no txq, no frame.
            let _ = self.txqs.remove_station(id);
            return Err(e);
        }
        Ok(id)
    }

    /// Removes a station and its txqs; each txq is handed to `on_txq` (to purge its
    /// frames) once no context serves it. A frame of theirs kept in a retry slot is
    /// released and given to the status sink as [`TxStatus::Removed`], and so are
    /// frames enqueued but not yet in the queue. Frames in the rings complete later and
    /// release normally. A txq another context is serving at this moment comes back
    /// at its return, through the next [`reap_removed`](Self::reap_removed) (which
    /// every control operation that removes runs). The returned handle says when the
    /// station's frames in the rings have all completed (its firmware peer can go).
    ///
    /// The departure is also recorded for [`reap_departed`](Self::reap_departed); a
    /// driver that reaps departures that way removes with
    /// [`remove_station_with`](Self::remove_station_with) instead.
    pub fn remove_station(
        &self,
        id: StationId,
        on_txq: impl FnMut(T),
    ) -> Result<airtime_sched::DepartingStation, Ath11kError> {
        self.remove_station_with(id, on_txq, |_| ())
    }

    /// [`remove_station`](Self::remove_station) for a driver that learns departures
    /// from [`reap_departed`](Self::reap_departed) (the C API): `on_drained` gets the
    /// peer id of an earlier departure of the same station slot that no reap reported
    /// yet (it is drained: the slot was reused), which the new departure's record
    /// replaces. The new departure is reported by a later reap, once drained — or here,
    /// if this removal freed the slot and was overtaken, before recording, by the
    /// removal of the slot's next occupant (then this one is the drained record).
    pub fn remove_station_with(
        &self,
        id: StationId,
        mut on_txq: impl FnMut(T),
        mut on_drained: impl FnMut(u16),
    ) -> Result<airtime_sched::DepartingStation, Ath11kError> {
        let peer_id = self.stations.get(id).map(|r| r.peer_id());
        self.stations.unpublish(id)?;
        let removed = self.txqs.remove_station(id);
        if let (Ok(_), Some(peer_id)) = (&removed, peer_id) {
            if let Some(earlier) = self.stations.record_departure(id, peer_id) {
                on_drained(earlier);
            }
        }
        self.reap_removed(&mut on_txq);
        Ok(removed?)
    }

    /// Reports each removed station whose frames have all completed (released: nothing
    /// of it is in the rings, none can be charged) to `on_drained`, with its firmware
    /// peer id, once: the driver may reuse that peer's hardware index now (ath11k's
    /// `ath11k_peer_delete` after the tx flush). Returns the stations reported. Any
    /// context; two reaps at once report each departure once.
    pub fn reap_departed(&self, on_drained: impl FnMut(u16)) -> u32 {
        let sched = self.scheduler();
        self.stations.reap_departed(|id| airtime_sched::DepartingStation::of(id).is_drained(sched), on_drained)
    }

    /// Adds a txq for `station` (or a station-less one) on `tid`. On refusal the txq
    /// comes back with the error; it is `None` only if the station was removed while
    /// the txq was being added, and then comes back through
    /// [`reap_removed`](Self::reap_removed).
    pub fn add_txq(&self, station: Option<StationId>, tid: Tid, txq: T) -> Result<TxqId, (Ath11kError, Option<T>)> {
        if let Some(sta) = station {
            if let Err(e) = self.stations.reserve_txq(sta, tid, |q| self.scheduler().txq_info(q).is_ok()) {
                return Err((e, Some(txq)));
            }
        }
        // The mark before the txq is live: a removal of its station racing this add
        // (another context) can only see the txq once it is live, so its hand-back
        // always finds the mark and clears it; stored after, it would outlive that
        // hand-back, and on a reused slot overwrite the next txq's.
        let marked = |id: TxqId| {
            if let Some(mark) = self.txq_marks.get(id.index()) {
                mark.id.store(id.to_raw(), Ordering::Release);
            }
        };
        match self.txqs.add_txq_with(station, tid, txq, marked) {
            Ok(id) => {
                if let Some(sta) = station {
                    self.stations.settle_txq(sta, tid, Some(id));
                }
                Ok(id)
            }
            Err(AddTxqError { error, queue }) => {
                if let Some(sta) = station {
                    self.stations.settle_txq(sta, tid, None);
                }
                Err((error.into(), queue))
            }
        }
    }

    /// Removes a txq; it is handed to `on_txq` once no context serves it, and a frame
    /// of it kept in its retry slot (or enqueued but not yet in the queue) is released
    /// and reported [`TxStatus::Removed`].
    pub fn remove_txq(&self, id: TxqId, mut on_txq: impl FnMut(T)) -> Result<(), Ath11kError> {
        let (station, tid) = self.scheduler().txq_info(id)?;
        self.txqs.remove_txq(id)?;
        if let Some(sta) = station {
            self.stations.clear_txq(sta, tid, id);
        }
        self.reap_removed(&mut on_txq);
        Ok(())
    }

    /// Whether a removed txq waits for [`reap_removed`](Self::reap_removed)
    /// ([`TxqTable::has_removed`]: one load). A txq removed while an enqueue held its
    /// queue is left to that enqueue, which puts it back as it unlocks: a driver asks
    /// this after its enqueues (whatever they returned) and, when true, runs
    /// `reap_removed` or schedules the work item that does.
    #[inline]
    pub fn has_removed(&self) -> bool {
        self.txqs.has_removed()
    }

    /// Takes back every removed txq no context holds any more: its queue goes to
    /// `on_txq`; its kept frame (charge released) and the frames still in its intake
    /// go to the status sink as [`TxStatus::Removed`]. Returns the txqs taken back.
    /// Any context; the removal calls run it, and a driver whose wake or completion
    /// context may be serving a txq, or enqueuing into its queue, at its removal runs
    /// it again later (a work item; [`has_removed`](Self::has_removed) says when).
    pub fn reap_removed(&self, mut on_txq: impl FnMut(T)) -> u32 {
        let mut n = 0u32;
        // The slot's marks are settled inside the hand-back, before the slot can take a
        // new txq: its next occupant's turns never see this one's retry mark, and its add
        // never overwrites the id mark before `on_txq` returned.
        while let Some(()) = self.txqs.take_removed_with(|RemovedTxq { id, queue, retry, intake }| {
            let mark = self.txq_marks.get(id.index());
            if let Some(mark) = mark {
                let h = mark.holding.swap(0, Ordering::AcqRel);
                if let Some(ac) = h.checked_sub(1).and_then(|i| Ac::from_index(usize::from(i))) {
                    self.held.down(ac);
                }
            }
            if let Some(Retry { frame, charge }) = retry {
                self.finish_unsent(frame, charge, TxStatus::Removed);
            }
            for frame in intake {
                self.finish_unsent(frame, None, TxStatus::Removed);
            }
            on_txq(queue);
            // Only now, and the slot still ours: `txq_handed_back` says true once
            // `on_txq` has returned (Release: after everything it did).
            if let Some(mark) = mark {
                let _ = mark.id.compare_exchange(id.to_raw(), NO_TXQ, Ordering::AcqRel, Ordering::Acquire);
            }
        }) {
            n = n.saturating_add(1);
        }
        n
    }

    /// Whether txq `id` is no longer the adapter's: never added, or removed and handed
    /// back, [`reap_removed`](Self::reap_removed)'s `on_txq` for it returned. A driver
    /// whose txqs' memory its stack frees at a station's removal (mac80211's
    /// `struct ieee80211_txq`) waits for this before letting it go: a context serving
    /// the txq at the removal may dequeue from it until its turn ends.
    pub fn txq_handed_back(&self, id: TxqId) -> bool {
        self.txq_marks.get(id.index()).is_none_or(|m| m.id.load(Ordering::Acquire) != id.to_raw())
    }

    /// The txq of station `id` on `tid` (the C API names txqs by peer id and TID).
    pub fn txq_for(&self, id: StationId, tid: Tid) -> Option<TxqId> {
        self.stations.get(id)?.txq(tid)
    }

    /// The station record `id` (its fields are atomics: read any time). Checked
    /// against `id` when looked up; if the station is removed and its slot reused while
    /// the reference is held, the fields read are the new occupant's (there is no RCU
    /// here), which the scheduler's own checks of `id` make harmless.
    pub fn station(&self, id: StationId) -> Option<&StationRecord> {
        self.stations.get(id)
    }

    /// The station with firmware peer id `peer_id`.
    pub fn station_by_peer(&self, peer_id: u16) -> Option<StationId> {
        self.stations.by_peer(peer_id)
    }

    /// Sets a station's airtime weight (`airtime_weight`; with TX_NO_PUSHBACK its AQL
    /// limits scale by weight/256). Any context.
    pub fn set_weight(&self, id: StationId, weight: Weight) -> Result<(), Ath11kError> {
        Ok(self.scheduler().set_weight(id, weight)?)
    }

    /// Sets a station's AQL limits on `ac` (the station `aql` file's write).
    pub fn set_station_limits(&self, id: StationId, ac: Ac, limits: AqlLimits) -> Result<(), Ath11kError> {
        Ok(self.scheduler().set_station_limits(id, ac, limits)?)
    }

    /// Sets the radio's default AQL limits on `ac` (`aql_txq_limit`).
    pub fn set_default_limits(&self, ac: Ac, limits: AqlLimits) {
        self.scheduler().set_default_limits(ac, limits);
    }

    /// Sets the radio's AQL threshold (`aql_threshold`): below this much pending
    /// airtime on the radio, stations may use their high limit.
    pub fn set_aql_threshold_us(&self, threshold_us: u32) {
        self.scheduler().set_aql_threshold_us(threshold_us);
    }

    /// Prices station-less (multicast) frames at `rate` from now on and charges them to
    /// their AC's multicast budget ([`Scheduler::set_multicast_limit_us`]), which then
    /// bounds them in flight; `None` (the default) sends them uncharged, as mainline did
    /// before its multicast AQL. Mainline prices them at the vif's lowest basic rate.
    /// Any context.
    pub fn set_multicast_rate(&self, rate: Option<airtime_est::Rate>) {
        self.stations.set_multicast_rate(rate);
    }

    /// The rate station-less frames are priced at, if any.
    pub fn multicast_rate(&self) -> Option<airtime_est::Rate> {
        self.stations.multicast_rate()
    }

    /// The TCL rings the hardware has ([`Config::max_tx_ring`]).
    pub fn tx_rings(&self) -> impl Iterator<Item = RingId> + use<H, T> {
        RingId::ALL.into_iter().take(usize::from(self.config.max_tx_ring))
    }

    /// Turns the AQL checks on or off (`aql_enable`).
    pub fn set_aql_enabled(&self, on: bool) {
        self.scheduler().set_aql_enabled(on);
    }

    /// The data path statistics with the outstanding MSDU count per ring (patch 3). A
    /// snapshot of atomics: exact at rest, a moment's view while both contexts run.
    pub fn dp_stats(&self) -> DpStats {
        let mut s = self.counters.snapshot();
        for ring in self.tx_rings() {
            if let Some(p) = s.pending_msdus.get_mut(ring.index()) {
                *p = self.hal.msdu_outstanding(ring);
            }
        }
        s.held_now = self.held.total();
        s
    }

    /// The calibration's sample counters ([`Config::calibration`]; all 0 while it is
    /// off).
    pub fn calibration_stats(&self) -> crate::CalibrationStats {
        self.counters.calibration.snapshot()
    }

    /// Outstanding MSDUs over all rings: frames in the hardware.
    pub fn outstanding_msdus(&self) -> u32 {
        self.tx_rings().fold(0u32, |n, r| n.saturating_add(self.hal.msdu_outstanding(r)))
    }

    /// Frames waiting in the txqs' retry slots (refused by the ring, kept uncharged
    /// until sent).
    pub fn held_frames(&self) -> u32 {
        self.held.total()
    }

    /// ACs a round found the ring full for (or refusing) since the last completion
    /// pass that resumed them ([`Config::resume_blocked_acs`](crate::Config::resume_blocked_acs)):
    /// rounds only add to it, so that no round erases another context's mark.
    ///
    /// Only this radio's completion passes that reap something resume a blocked AC. A
    /// driver whose TCL rings also carry other radios' frames (ath11k's `dp.tx_ring[]`
    /// is the SoC's, shared by its pdevs), or whose `tcl_enqueue` can refuse for
    /// another reason than a full ring (no memory), with none of this radio's frames in
    /// flight, is not woken by them: it runs [`run_rounds`](Self::run_rounds) on these
    /// ACs from a timer, or its txqs wait for the next wake. Only such a pass clears the
    /// set, so the timer stops on the radio's own state (no frames held back or queued
    /// on those ACs), not on this set emptying.
    pub fn blocked_acs(&self) -> AcSet {
        self.blocked.load()
    }

    /// Writes a station's `aql` debugfs file (the core's `StationAql` text), and with
    /// [`Config::calibration`] on, the ratio its estimates are priced at.
    ///
    /// [`Config::calibration`]: crate::Config::calibration
    pub fn write_station_aql(&self, id: StationId, out: &mut dyn fmt::Write) -> Result<(), Ath11kError> {
        let aql = self.scheduler().station_aql(id)?;
        let _ = write!(out, "{aql}");
        if self.config.calibration.is_some() {
            if let Some(rec) = self.stations.get(id) {
                let q16 = rec.calibration_ratio_q16();
                // Three decimals of the Q16 ratio, in integers (a u32 times 1000 fits a
                // u64: no wrap).
                let milli = u64::from(q16).wrapping_mul(1000).wrapping_add(32768) >> 16;
                let _ = writeln!(out, "Calibration ratio: {}.{:03} (Q16 {q16})", milli / 1000, milli % 1000);
            }
        }
        Ok(())
    }

    /// Writes a station's `airtime` debugfs file (the core's `StationAirtime` text).
    pub fn write_station_airtime(&self, id: StationId, out: &mut dyn fmt::Write) -> Result<(), Ath11kError> {
        let airtime = self.scheduler().station_airtime(id)?;
        let _ = write!(out, "{airtime}");
        Ok(())
    }

    /// Writes the `soc_dp_stats`-like file: [`DpStats`]'s text, then the
    /// calibration's sample counters ([`CalibrationStats`](crate::CalibrationStats)'s
    /// text; all 0 while [`Config::calibration`] is off).
    ///
    /// [`Config::calibration`]: crate::Config::calibration
    pub fn write_dp_stats(&self, out: &mut dyn fmt::Write) {
        let _ = write!(out, "{}{}", self.dp_stats(), self.calibration_stats());
    }

    /// `ath11k_dp_tx_pending_cleanup`: takes every outstanding MSDU out of the rings'
    /// tables, releases its charge and reports it [`TxStatus::Removed`]. Frames kept in
    /// retry slots stay with their txqs (they come back at the txqs' removal; see
    /// [`shutdown`](Self::shutdown)). Returns the frames freed. Run it when the
    /// hardware will complete nothing more (teardown, firmware restart).
    pub fn flush_outstanding(&self) -> u32 {
        let mut n = 0u32;
        for ring in self.tx_rings() {
            while let Some((_, msdu)) = self.hal.msdu_take_any(ring) {
                let (frame, charge, _) = msdu.into_parts();
                self.finish_unsent(frame, charge, TxStatus::Removed);
                n = n.saturating_add(1);
            }
        }
        n
    }

    /// Radio teardown: removes every station and every txq (each txq to `on_txq`, its
    /// kept and intake frames to the status sink as [`TxStatus::Removed`], charges
    /// released), then flushes the rings ([`flush_outstanding`](Self::flush_outstanding)).
    /// Afterwards pending airtime is 0. Returns the frames given to the status sink.
    /// Call it with the data path stopped (a txq still being served is taken back by a
    /// later [`reap_removed`](Self::reap_removed)).
    pub fn shutdown(&self, on_txq: impl FnMut(T)) -> u32 {
        self.shutdown_with(on_txq, |_| ())
    }

    /// [`shutdown`](Self::shutdown), reporting every departed station (those removed
    /// before and those it removes) to `on_drained` once the rings are flushed, as
    /// [`reap_departed`](Self::reap_departed) does.
    pub fn shutdown_with(&self, mut on_txq: impl FnMut(T), mut on_drained: impl FnMut(u16)) -> u32 {
        let before = self.counters.flushed.get();
        for i in 0..self.txq_marks.len() {
            let Some(raw) = self.txq_marks.get(i).map(|m| m.id.load(Ordering::Acquire)) else { continue };
            if raw != NO_TXQ {
                let id = TxqId::from_raw(raw);
                if let Ok((station, tid)) = self.scheduler().txq_info(id) {
                    let _ = self.txqs.remove_txq(id);
                    if let Some(sta) = station {
                        self.stations.clear_txq(sta, tid, id);
                    }
                }
            }
        }
        for sta in self.stations.live() {
            let peer_id = self.stations.get(sta).map(|r| r.peer_id());
            let _ = self.stations.unpublish(sta);
            if self.txqs.remove_station(sta).is_ok() {
                if let Some(earlier) = peer_id.and_then(|p| self.stations.record_departure(sta, p)) {
                    on_drained(earlier);
                }
            }
        }
        self.reap_removed(&mut on_txq);
        self.flush_outstanding();
        self.reap_departed(&mut on_drained);
        u32::try_from(self.counters.flushed.get().saturating_sub(before)).unwrap_or(u32::MAX)
    }

    /// Consumes the adapter after [`shutdown`](Self::shutdown) (queues dropped), giving
    /// the HAL back.
    pub fn into_hal(self) -> H {
        self.shutdown(drop);
        self.hal
    }

    /// Gives back the charge (if any) of a frame that will not be sent, no completion
    /// for adaptive AQL to learn from, and hands the frame to the status sink with
    /// `status`, counted as flushed.
    pub(crate) fn finish_unsent(&self, frame: FrameOf<H>, charge: Option<Charge>, status: TxStatus) {
        if charge.is_some_and(|c| self.scheduler().give_back(c).is_err()) {
            self.counters.release_errors.bump();
        }
        self.counters.flushed.bump();
        self.hal.tx_status(frame, status);
    }
}
