//! The seed's series through the real adapter crate, `airtime-ath11k`, over the
//! simulated HAL ([`super::sim_hal`]): the AP's txqs and scheduler live inside the
//! adapter, and the simulator calls the adapter's entry points as ath11k's C side would
//! (wake_tx_queue, the tx completion NAPI poll, PPDU stats and rx status).

use super::hardware::{Hardware, TxStatus};
use super::mac80211::SimTxq;
use super::sim_hal::{AckedMsdus, AdapterHal};
use super::{ApConfig, ApError, RoundPolicyName};
use crate::engine::Nanos;
use crate::engine::time::instant;
use crate::net::Packet;
use airtime_ath11k::hal::{PpduStats, PpduUser, RingId, RxPpdu, TxCompletion, TxStatus as HalTxStatus};
use airtime_ath11k::{Ath11k, Config};
use airtime_est::{CalibratorConfig, Rate};
use airtime_sched::fq_codel::FqCodelConfig;
use airtime_sched::{Ac, Enqueue, Instant, RoundPolicy, Scheduler, StationId, Tid, Txq, TxqId, Weight};
use std::cell::{Ref, RefCell};
use std::rc::Rc;

/// The simulator's FQ-CoDel txq as the adapter holds it (in the core's txq table, where
/// only a turn reaches the queue): every frame FQ-CoDel drops, at enqueue or dequeue,
/// is moved to a list the simulator shares, so that it can still account for them.
pub struct TappedTxq {
    inner: SimTxq,
    drops: Rc<RefCell<Vec<Packet>>>,
}

impl TappedTxq {
    fn tap(&mut self) {
        self.drops.borrow_mut().extend(self.inner.drain_drops().map(|d| d.frame));
    }
}

impl Txq for TappedTxq {
    type Frame = Packet;
    type Error = core::convert::Infallible;

    fn dequeue(&mut self, now: Instant) -> Result<Option<Packet>, Self::Error> {
        let frame = self.inner.dequeue(now);
        self.tap();
        frame
    }

    fn peek_len(&self) -> Option<u32> {
        self.inner.peek_len()
    }

    fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    fn is_known_empty(&self) -> bool {
        self.inner.is_known_empty()
    }
}

impl Enqueue for TappedTxq {
    fn enqueue(&mut self, frame: Packet, enqueued: Instant) {
        Enqueue::enqueue(&mut self.inner, frame, enqueued);
        self.tap();
    }
}

/// The AQL estimate against the air over a run: what the adapter charged per MSDU
/// (the charges of the MSDUs completed) and what an MSDU took on the air (PPDU
/// durations over the MSDUs they had acknowledged). Kept when `ap.calibrate` is set.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct EstimateVsAir {
    /// Whether the calibration was on.
    pub calibrated: bool,
    /// Charged airtime of the MSDUs completed, us.
    pub charged_us: u64,
    /// MSDUs completed with a charge.
    pub charged_msdus: u64,
    /// Airtime of the SU PPDUs reported, us.
    pub air_us: u64,
    /// MSDUs those PPDUs had acknowledged.
    pub air_msdus: u64,
    /// The stations' calibration ratios at the end, mean, Q16 (65536 = 1).
    pub mean_ratio_q16: u32,
}

impl EstimateVsAir {
    /// Charged us per MSDU.
    pub fn charged_us_per_msdu(&self) -> f64 {
        self.charged_us as f64 / self.charged_msdus.max(1) as f64
    }

    /// Airtime us per MSDU.
    pub fn air_us_per_msdu(&self) -> f64 {
        self.air_us as f64 / self.air_msdus.max(1) as f64
    }
}

/// The adapter and what the simulator keeps beside it.
pub struct AdapterAp {
    adapter: Box<Ath11k<AdapterHal, TappedTxq>>,
    /// Frames FQ-CoDel dropped inside the adapter's txqs, not yet collected.
    drops: Rc<RefCell<Vec<Packet>>>,
    /// Scheduler handle of each station.
    pub sta_ids: Vec<StationId>,
    /// BE txq of each station.
    pub txq_ids: Vec<TxqId>,
    /// Each station's txq per TID (user priority 0..=7), where one is registered (TID 0
    /// from the start, the others on their first frame).
    tid_txqs: Vec<[Option<TxqId>; 8]>,
    /// The txqs' FQ-CoDel configuration.
    fq: FqCodelConfig,
    reported: Vec<Rate>,
    /// The estimate against the air, if `ap.calibrate` is set.
    estimate_vs_air: Option<EstimateVsAir>,
}

impl AdapterAp {
    /// The adapter for stations whose frames are priced at `reported` rates.
    pub fn new(config: &ApConfig, hw: Hardware, reported: &[Rate], weights: &[u16]) -> Result<AdapterAp, ApError> {
        let mut c = Config::default();
        c.sched.round_policy = match config.round_policy {
            RoundPolicyName::Fixed => RoundPolicy::KeepNumber,
            RoundPolicyName::ResetOnClose => RoundPolicy::ResetOnClose,
        };
        c.sched.tx_no_pushback = config.tx_no_pushback;
        c.sched.adaptive_aql = config.aql_adaptive;
        c.tx_no_pushback = config.tx_no_pushback;
        c.mu_charging = config.mu_charging.policy();
        c.calibration = (config.calibrate == Some(true)).then(CalibratorConfig::default);
        super::size_for_stations(&mut c.sched, weights.len())?;
        let (max_stations, max_txqs) = (c.sched.max_stations, c.sched.max_txqs);
        let adapter =
            Box::new(Ath11k::new(AdapterHal::new(hw), c).map_err(|e| ApError(format!("ath11k adapter: {e:?}")))?);
        for (ac, limits) in config.aql_limits()? {
            adapter.set_default_limits(ac, limits);
        }
        let mut fq = FqCodelConfig::MAC80211;
        fq.codel_target_us = config.codel_target_us;
        let (mut sta_ids, mut txq_ids) = (Vec::new(), Vec::new());
        let drops = Rc::new(RefCell::new(Vec::new()));
        for (s, w) in weights.iter().enumerate() {
            let weight = Weight::new(*w).map_err(|e| ApError(format!("weight: {e}")))?;
            let id = adapter
                .add_station(s as u16, weight)
                .map_err(|e| super::capacity_error("station", e, max_stations, "max_stations"))?;
            let txq = adapter
                .add_txq(Some(id), Tid::BE, TappedTxq { inner: super::mac80211::new_txq(fq), drops: drops.clone() })
                .map_err(|(e, _)| super::capacity_error("txq", e, max_txqs, "max_txqs"))?;
            sta_ids.push(id);
            txq_ids.push(txq);
        }
        let tid_txqs = txq_ids.iter().map(|&be| std::array::from_fn(|tid| (tid == 0).then_some(be))).collect();
        let estimate_vs_air =
            config.calibrate.map(|calibrated| EstimateVsAir { calibrated, ..EstimateVsAir::default() });
        Ok(AdapterAp { adapter, drops, sta_ids, txq_ids, tid_txqs, fq, reported: reported.to_vec(), estimate_vs_air })
    }

    /// Station `s`'s txq for DSCP `dscp` (its user priority's TID,
    /// `cfg80211_classify8021d`), added to the adapter on first use; its BE txq where
    /// the radio queues best effort only (the OFDMA MU path). `None` if the adapter has
    /// no room for it.
    fn txq_of(&mut self, s: u16, dscp: u8) -> Option<TxqId> {
        let tids = self.tid_txqs.get(usize::from(s))?;
        if !self.hw().access_categories() {
            return tids[0];
        }
        let up = crate::net::udp::user_priority_of_dscp(dscp).unwrap_or(0);
        if let Some(id) = tids[usize::from(up)] {
            return Some(id);
        }
        let id = *self.sta_ids.get(usize::from(s))?;
        let txq = TappedTxq { inner: super::mac80211::new_txq(self.fq), drops: self.drops.clone() };
        let txq = self.adapter.add_txq(Some(id), Tid::new(up).ok()?, txq).ok()?;
        self.tid_txqs[usize::from(s)][usize::from(up)] = Some(txq);
        Some(txq)
    }

    /// Registers station `s`'s txq for DSCP `dscp` ahead of its first frame.
    pub fn prepare_txq(&mut self, s: u16, dscp: u8) -> Result<(), ApError> {
        match self.txq_of(s, dscp) {
            Some(_) => Ok(()),
            None => Err(ApError(format!(
                "adding a txq for station {s}, DSCP {dscp}: the adapter has no room (`airtime_sched::Config::max_txqs`)"
            ))),
        }
    }

    /// The radio.
    pub fn hw(&self) -> Ref<'_, Hardware> {
        self.adapter.hal().hw.borrow()
    }

    /// The radio, mutably.
    pub fn hw_mut(&mut self) -> &mut Hardware {
        self.adapter.hal_mut().hw.get_mut()
    }

    /// The scheduler inside the adapter.
    pub fn sched(&self) -> &Scheduler {
        self.adapter.scheduler()
    }

    /// Enqueues into station `s`'s txq and calls `wake_tx_queue` from `cpu`; frames
    /// FQ-CoDel drops go to `dropped`.
    pub fn enqueue(&mut self, s: u16, pkt: Packet, cpu: u8, now: Nanos, dropped: &mut Vec<Packet>) -> u64 {
        let Some(txq) = self.txq_of(s, pkt.dscp) else {
            dropped.push(pkt);
            return 1;
        };
        let mut drops = 0;
        if let Err(e) = self.adapter.enqueue(txq, pkt, instant(now)) {
            // Refused (unknown txq, intake full, no memory): the frames come back and are
            // dropped here.
            let back: Vec<Packet> = e.into_frames().collect();
            drops += back.len() as u64;
            dropped.extend(back);
        }
        let _ = self.adapter.wake_tx_queue(txq, u32::from(cpu), instant(now));
        drops + self.drain_all(dropped)
    }

    fn drain_all(&mut self, dropped: &mut Vec<Packet>) -> u64 {
        let mut drops = self.drops.borrow_mut();
        let n = drops.len() as u64;
        dropped.append(&mut drops);
        n
    }

    /// The hardware wrote completions for `statuses`; the NAPI poll reaps them in
    /// budgets from the CPU of their ring.
    pub fn tx_status(&mut self, statuses: &[TxStatus], now: Nanos, dropped: &mut Vec<Packet>) -> u64 {
        let budget = self.hw().config.napi_budget.max(1);
        let mut cpu = 0u32;
        for st in statuses {
            let (Some(ring), Some(msdu_id)) = (RingId::new(st.ring), st.msdu_id) else { continue };
            cpu = u32::from(st.ring);
            if let Some(e) = self.estimate_vs_air.as_mut()
                && let Some(us) = self.adapter.hal().charged_us(ring, msdu_id)
            {
                e.charged_us += u64::from(us);
                e.charged_msdus += 1;
            }
            // The hardware frees the descriptor when it writes the completion.
            self.hw_mut().free_descriptor(st.ring);
            self.adapter.hal_mut().completions.get_mut().push_back(TxCompletion::new(
                ring,
                msdu_id,
                HalTxStatus::Acked,
            ));
        }
        while !self.adapter.hal().completions.borrow().is_empty() {
            let pass = self.adapter.poll_tx_completions(budget, cpu, instant(now));
            if pass.work_done == 0 {
                break;
            }
        }
        // The stack frees the originals; the simulator accounts them through the
        // statuses it already has.
        self.adapter.hal_mut().finished.get_mut().clear();
        self.drain_all(dropped)
    }

    /// Station `s` is now reported at `rate` (a rate step): the PPDU statistics carry it
    /// from now on, and the adapter prices the station's frames there.
    pub fn set_reported_rate(&mut self, s: u16, rate: Rate) {
        if let Some(r) = self.reported.get_mut(usize::from(s)) {
            *r = rate;
        }
    }

    /// A PPDU-stats record for station `s`, whose PPDU carried access category `ac`
    /// (the user record's TID: that AC's lower user priority, as `ieee802_1d_to_ac`
    /// maps it back), with the MSDUs it had acknowledged.
    pub fn ppdu_stats(&mut self, s: u16, ac: Ac, airtime_us: u32, acked: AckedMsdus, now: Nanos) {
        let mut p = PpduStats::new(airtime_us);
        let rate = self.reported.get(usize::from(s)).copied();
        let tid = match ac {
            Ac::Bk => Tid::BK,
            Ac::Be => Tid::BE,
            Ac::Vi => Tid::CL,
            Ac::Vo => Tid::VO,
        };
        let _ = p.push_user(PpduUser::su(s, tid.get(), airtime_us, rate).with_msdus(acked.count, acked.bytes));
        if let Some(e) = self.estimate_vs_air.as_mut() {
            e.air_us += u64::from(airtime_us);
            e.air_msdus += u64::from(acked.count);
        }
        self.ppdu_record(p, now);
    }

    /// A PPDU-stats record, SU or MU, through the HAL.
    pub fn ppdu_record(&mut self, p: PpduStats, now: Nanos) {
        self.adapter.hal_mut().ppdu_stats.get_mut().push_back(p);
        let _ = self.adapter.poll_airtime_reports(8, instant(now));
    }

    /// An rx status record for a PPDU from station `s`.
    pub fn rx_airtime(&mut self, s: u16, airtime_us: u32, now: Nanos) {
        let rate = self.reported.get(usize::from(s)).copied();
        self.adapter.hal_mut().rx_ppdus.get_mut().push_back(RxPpdu { peer_id: s, rx_duration_us: airtime_us, rate });
        let _ = self.adapter.poll_airtime_reports(8, instant(now));
    }
}

impl AdapterAp {
    /// The estimate against the air so far, with the stations' mean calibration ratio
    /// now (`None` unless `ap.calibrate` is set).
    pub fn estimate_vs_air(&self) -> Option<EstimateVsAir> {
        let mut e = self.estimate_vs_air?;
        let ratios: Vec<u64> = self
            .sta_ids
            .iter()
            .filter_map(|id| self.adapter.station(*id))
            .map(|r| u64::from(r.calibration_ratio_q16()))
            .collect();
        e.mean_ratio_q16 = (ratios.iter().sum::<u64>() / (ratios.len().max(1) as u64)) as u32;
        Some(e)
    }
}
