//! The access point's queueing designs, over one timed hardware model.
//!
//! * [`mac80211`]: the per-station FQ-CoDel txqs and stations registered with the
//!   `airtime-sched` scheduler (shared by every design).
//! * [`hardware`]: the radio (TCL rings, firmware queues and transmitter choice,
//!   completions); [`tcl_port`] presents one ring as the scheduler's `Ring`.
//! * The designs, one file each: [`stock`] (mac80211's default wake handler on ath11k,
//!   no AQL, no airtime reports), [`ath11k_like`] (the seed's series: driver rounds on
//!   wake and on completion, AQL, airtime from PPDU stats, received airtime to BE, a round
//!   ended by a full ring, NAPI-budgeted completions, optional TX_NO_PUSHBACK).
//! * The host-aggregating designs: [`ath9k_like`], ath9k's driver over the crate's
//!   `TxqTable` (the mac80211 designs: round robin, airtime fairness, AQL) or under a
//!   [`qdisc`] with per-TID buffers (the qdisc designs), forming A-MPDUs per txq into
//!   [`host_ampdu`]'s hardware queue of two aggregates.
//!
//! The ath11k adapter crate (`airtime-ath11k`) plugs in through [`ath11k_adapter`] and
//! [`sim_hal`] behind [`Ap`]'s four entry points (enqueue, tx status, PPDU stats, rx
//! airtime); [`ath11k_like`] plays the same role without the crate, as a cross-check.

pub mod ath11k_adapter;
pub mod ath11k_like;
pub mod ath9k_like;
pub mod completion_irq;
pub mod hardware;
pub mod host_ampdu;
pub mod mac80211;
pub mod mu_charging;
pub mod qdisc;
pub mod sim_hal;
pub mod stock;
pub mod tcl_port;
pub mod tid_retry;

use crate::engine::Nanos;
use crate::engine::time::instant;
use crate::net::{Node, Packet};
use crate::wifi::PhyTiming;
use airtime_est::Rate;
use airtime_sched::fq_codel::FqCodelConfig;
use airtime_sched::{Ac, AirtimeFlags, AqlLimits, Config, RoundPolicy, Scheduler, StationId, Tid, TxqId, Weight};
use hardware::{Hardware, HardwareConfig, HwFrame, TxStatus};
use mac80211::{SimStation, SimTxq};

/// A queueing design of the access point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Design {
    /// Upstream ath11k: mac80211's default wake handler pushes until the txq is empty;
    /// a full ring drops the frame. No AQL, no airtime fairness.
    Stock,
    /// The seed's ath11k series (see [`ath11k_like`]).
    Ath11kSeries,
    /// The seed's series through the `airtime-ath11k` adapter crate (see
    /// [`ath11k_adapter`]).
    Ath11kAdapter,
    /// ath9k over mac80211's intermediate queues, scheduled round robin (no airtime
    /// reports, no AQL): one A-MPDU per txq turn, two aggregates in the hardware queue,
    /// rounds on wake and on completion (see [`ath9k_like`]).
    Mac80211Rr,
    /// The same with airtime fairness: transmit airtime registered, DRR by airtime.
    Mac80211Atf,
    /// The same with airtime fairness and AQL.
    Mac80211Aql,
    /// A `pfifo_fast` qdisc (1000 packets) over ath9k's per-TID buffers; no mac80211
    /// txqs.
    QdiscPfifo,
    /// An `fq_codel` qdisc over ath9k's per-TID buffers; no mac80211 txqs.
    QdiscFqCodel,
}

impl Design {
    /// A short name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Design::Stock => "stock",
            Design::Ath11kSeries => "ath11k series",
            Design::Ath11kAdapter => "ath11k series (adapter crate)",
            Design::Mac80211Rr => "mac80211 txqs, round robin",
            Design::Mac80211Atf => "mac80211 txqs, airtime fairness",
            Design::Mac80211Aql => "mac80211 txqs, airtime fairness and AQL",
            Design::QdiscPfifo => "pfifo_fast qdisc",
            Design::QdiscFqCodel => "fq_codel qdisc",
        }
    }

    /// Whether the design runs driver rounds through the scheduler (wake and completion).
    fn driver_rounds(self) -> bool {
        matches!(self, Design::Ath11kSeries)
    }

    /// Whether the host forms the aggregates (the ath9k-shaped designs).
    pub fn host_aggregates(self) -> bool {
        matches!(
            self,
            Design::Mac80211Rr | Design::Mac80211Atf | Design::Mac80211Aql | Design::QdiscPfifo | Design::QdiscFqCodel
        )
    }

    /// Whether transmit airtime is registered with the scheduler.
    fn registers_airtime(self) -> bool {
        matches!(self, Design::Ath11kSeries | Design::Mac80211Atf | Design::Mac80211Aql)
    }
}

/// The scheduler's round policy, as a scenario names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundPolicyName {
    /// The seed's fix (a closed round keeps its number).
    #[default]
    Fixed,
    /// mac80211 before the fix (a closed round resets the number).
    ResetOnClose,
}

/// Access point configuration.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ApConfig {
    /// The queueing design.
    pub design: Design,
    /// BE `aql_txq_limit` low and high, in us (default 5000/12000).
    #[serde(default)]
    pub aql_be_us: Option<[u32; 2]>,
    /// BK `aql_txq_limit` low and high, in us (default 5000/12000).
    #[serde(default)]
    pub aql_bk_us: Option<[u32; 2]>,
    /// VI `aql_txq_limit` low and high, in us (default 5000/12000).
    #[serde(default)]
    pub aql_vi_us: Option<[u32; 2]>,
    /// VO `aql_txq_limit` low and high, in us (default 5000/12000).
    #[serde(default)]
    pub aql_vo_us: Option<[u32; 2]>,
    /// Scale per-station AQL limits by weight/256 (the proposed TX_NO_PUSHBACK).
    #[serde(default)]
    pub tx_no_pushback: bool,
    /// Adaptive per-station AQL limits (airtime-sched's `Config::adaptive_aql`).
    #[serde(default)]
    pub aql_adaptive: bool,
    /// Round policy.
    #[serde(default)]
    pub round_policy: RoundPolicyName,
    /// The hardware model.
    #[serde(default)]
    pub hardware: HardwareConfig,
    /// CoDel target of the mac80211 txqs, in us.
    #[serde(default = "default_codel_target")]
    pub codel_target_us: u64,
    /// What each user of an MU PPDU is charged (with `[ap.hardware] ofdma`).
    #[serde(default)]
    pub mu_charging: mu_charging::MuChargingName,
    /// Calibrate each station's AQL estimate against PPDU stats (the adapter's
    /// `Config::calibration`); set (either way), the run reports the estimate against
    /// the air.
    #[serde(default)]
    pub calibrate: Option<bool>,
}

fn default_codel_target() -> u64 {
    20_000
}

/// Round and drop counters of the AP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApCounters {
    /// Frames dropped because a ring had no descriptor (stock only).
    pub ring_drops: u64,
    /// Frames dropped by FQ-CoDel (CoDel or limits).
    pub txq_drops: u64,
    /// Driver rounds run.
    pub driver_rounds: u64,
}

/// The access point.
pub struct Ap {
    /// Configuration.
    pub config: ApConfig,
    /// The scheduler (AQL, DRR, rounds).
    pub sched: Scheduler,
    stations: Vec<Option<SimStation>>,
    txqs: Vec<Option<SimTxq>>,
    /// Scheduler handle of each station, by station number.
    pub sta_ids: Vec<StationId>,
    /// BE txq of each station, by station number.
    pub txq_ids: Vec<TxqId>,
    /// Each station's txq per TID (user priority 0..=7), where one is registered:
    /// TID 0 is its BE txq; the others are added when a packet of that user priority
    /// first comes (mac80211 has them from the station's start, `sta_info_alloc`).
    tid_txqs: Vec<[Option<TxqId>; 8]>,
    /// The txqs beside the BE ones, for drop collection.
    other_txqs: Vec<TxqId>,
    /// The radio.
    pub hw: Hardware,
    /// Packets the AP dropped since the owner last took them.
    pub dropped: Vec<Packet>,
    /// Counters.
    pub counters: ApCounters,
    /// The ath9k-shaped driver of the host-aggregating designs.
    pub ath9k: Option<ath9k_like::Ath9kAp>,
    /// The adapter crate, for [`Design::Ath11kAdapter`].
    pub adapter: Option<ath11k_adapter::AdapterAp>,
}

/// Why an AP could not be built.
#[derive(Debug)]
pub struct ApError(pub String);

/// A refused registration, with the capacity it ran into and the setting that holds it.
pub fn capacity_error(what: &str, e: impl std::fmt::Debug, limit: u16, setting: &str) -> ApError {
    ApError(format!("adding a {what}: {e:?} (room for {limit}: `airtime_sched::Config::{setting}`)"))
}

/// Gives the scheduler room for `stations` stations and their BE txqs (one each) when
/// the defaults (128 stations, 1024 txqs) are too small: a scenario is not limited by a
/// default, only by the scheduler's hard range (ath11k alone serves 512 peers per radio,
/// `TARGET_NUM_STATIONS` in ath11k's hw.h; enterprise APs more).
pub fn size_for_stations(sc: &mut Config, stations: usize) -> Result<(), ApError> {
    let max = usize::from(Config::MAX_STATIONS);
    if stations > max {
        return Err(ApError(format!(
            "{stations} stations: the scheduler holds at most {max} (`airtime_sched::Config::max_stations`, \
             the compact charge encoding's range)"
        )));
    }
    // Both fit in u16: stations <= 4096.
    sc.max_stations = sc.max_stations.max(stations as u16);
    sc.max_txqs = sc.max_txqs.max(stations as u16);
    Ok(())
}

impl ApConfig {
    /// The AQL limits the scenario sets, per access category (`ap.aql_bk_us` to
    /// `ap.aql_vo_us`), checked; the others stay mac80211's defaults.
    pub(crate) fn aql_limits(&self) -> Result<Vec<(Ac, AqlLimits)>, ApError> {
        let keys = [
            (Ac::Bk, "aql_bk_us", self.aql_bk_us),
            (Ac::Be, "aql_be_us", self.aql_be_us),
            (Ac::Vi, "aql_vi_us", self.aql_vi_us),
            (Ac::Vo, "aql_vo_us", self.aql_vo_us),
        ];
        let set = keys.into_iter().filter_map(|(ac, key, limits)| limits.map(|[low, high]| (ac, key, low, high)));
        set.map(|(ac, key, low, high)| {
            AqlLimits::new(low, high).map(|l| (ac, l)).map_err(|e| ApError(format!("{key}: {e}")))
        })
        .collect()
    }
}

impl Ap {
    /// An AP for stations whose transmissions take `rates` on the air, reported to
    /// mac80211 as `reported` (AQL prices at those), with `weights`.
    pub fn new(config: ApConfig, rates: &[Rate], reported: &[Rate], weights: &[u16]) -> Result<Ap, ApError> {
        let (sched, sc) = Self::scheduler(&config, reported.len())?;
        if !(1..=airtime_ath11k::hal::MAX_PPDU_USERS as u8).contains(&config.hardware.ofdma_max_users) {
            return Err(ApError(format!(
                "ap.hardware.ofdma_max_users: {} is not 1 to {} (the users one PPDU-stats record carries)",
                config.hardware.ofdma_max_users,
                airtime_ath11k::hal::MAX_PPDU_USERS
            )));
        }
        let charges = config.design.registers_airtime() || config.design == Design::Ath11kAdapter;
        if config.mu_charging != mu_charging::MuChargingName::WholePpdu && !charges {
            return Err(ApError(format!(
                "ap.mu_charging: the design ({}) registers no airtime, so no MU charge is made",
                config.design.name()
            )));
        }
        let mut fq = FqCodelConfig::MAC80211;
        fq.codel_target_us = config.codel_target_us;
        let timings: Vec<PhyTiming> = rates.iter().map(|r| PhyTiming::new(*r)).collect();
        let ath9k = if config.design.host_aggregates() {
            let (own, _) = Self::scheduler(&config, reported.len())?;
            Some(match config.design {
                Design::QdiscPfifo | Design::QdiscFqCodel => ath9k_like::Ath9kAp::under_qdisc(
                    ath9k_like::Ath9k::new(
                        own,
                        ath9k_like::ScheduleShape::RoundRobinLaps,
                        &timings,
                        reported,
                        weights,
                        ath9k_like::TidFifo::default,
                    )
                    .map_err(ApError)?,
                    if config.design == Design::QdiscPfifo { qdisc::Qdisc::pfifo } else { qdisc::Qdisc::fq_codel },
                ),
                // The round robin arm is ath9k before its airtime fairness; the airtime
                // arms are ath9k over mac80211's airtime scheduler.
                design => {
                    let shape = if design == Design::Mac80211Rr {
                        ath9k_like::ScheduleShape::RoundRobinLaps
                    } else {
                        ath9k_like::ScheduleShape::Mac80211Round
                    };
                    ath9k_like::Ath9kAp::Txqs(Box::new(
                        ath9k_like::Ath9k::new(own, shape, &timings, reported, weights, move || mac80211::new_txq(fq))
                            .map_err(ApError)?,
                    ))
                }
            })
        } else {
            None
        };
        let cap = usize::from(sc.max_txqs);
        let mut stations: Vec<Option<SimStation>> = (0..usize::from(sc.max_stations)).map(|_| None).collect();
        let mut txqs: Vec<Option<SimTxq>> = (0..cap).map(|_| None).collect();
        let (mut sta_ids, mut txq_ids) = (Vec::new(), Vec::new());
        if ath9k.is_none() {
            for (rate, w) in reported.iter().zip(weights) {
                let weight = Weight::new(*w).map_err(|e| ApError(format!("weight: {e}")))?;
                let id = sched
                    .add_station(weight)
                    .map_err(|e| capacity_error("station", e, sc.max_stations, "max_stations"))?;
                let txq =
                    sched.add_txq(Some(id), Tid::BE).map_err(|e| capacity_error("txq", e, sc.max_txqs, "max_txqs"))?;
                stations[id.index()] =
                    Some(SimStation { id, rate: *rate, mu_scale_q8: airtime_ath11k::mu_charging::SCALE_ONE_Q8 });
                txqs[txq.index()] = Some(mac80211::new_txq(fq));
                sta_ids.push(id);
                txq_ids.push(txq);
            }
        }
        let mut hw = Hardware::new(config.hardware, &timings);
        // Every design's downlink has the four access categories, but the MU path.
        hw.set_access_categories(!config.hardware.ofdma);
        let adapter = if config.design == Design::Ath11kAdapter {
            let mut hw = Hardware::new(config.hardware, &timings);
            hw.set_access_categories(!config.hardware.ofdma);
            Some(ath11k_adapter::AdapterAp::new(&config, hw, reported, weights)?)
        } else {
            None
        };
        Ok(Ap {
            config,
            sched,
            stations,
            txqs,
            sta_ids,
            tid_txqs: txq_ids.iter().map(|&be| std::array::from_fn(|tid| (tid == 0).then_some(be))).collect(),
            txq_ids,
            other_txqs: Vec::new(),
            hw,
            dropped: Vec::new(),
            counters: ApCounters::default(),
            ath9k,
            adapter,
        })
    }

    /// A scheduler configured as the design asks.
    fn scheduler(config: &ApConfig, stations: usize) -> Result<(Scheduler, Config), ApError> {
        let mut sc = Config::default();
        sc.round_policy = match config.round_policy {
            RoundPolicyName::Fixed => RoundPolicy::KeepNumber,
            RoundPolicyName::ResetOnClose => RoundPolicy::ResetOnClose,
        };
        sc.tx_no_pushback = config.tx_no_pushback;
        sc.adaptive_aql = config.aql_adaptive;
        size_for_stations(&mut sc, stations)?;
        let sched = Scheduler::new(sc).map_err(|e| ApError(e.to_string()))?;
        for (ac, limits) in config.aql_limits()? {
            sched.set_default_limits(ac, limits);
        }
        let aql = matches!(config.design, Design::Ath11kSeries | Design::Mac80211Aql);
        sched.set_aql_enabled(aql);
        if !config.design.registers_airtime() {
            sched.set_airtime_flags(AirtimeFlags::new(false, false));
        }
        Ok((sched, sc))
    }

    /// The network stack hands a packet for a station to mac80211 (`ieee80211_tx`): it
    /// is queued in the station's txq, the txq is woken, and the driver's wake handler
    /// runs on the packet's CPU.
    pub fn enqueue(&mut self, mut pkt: Packet, now: Nanos) {
        if let Some(a) = self.adapter.as_mut() {
            let Node::Station(s) = pkt.dst else {
                self.dropped.push(pkt);
                return;
            };
            pkt.enqueue_ns = now;
            let cpu = pkt.cpu;
            self.counters.txq_drops += a.enqueue(s, pkt, cpu, now, &mut self.dropped);
            return;
        }
        if let Some(d) = self.ath9k.as_mut() {
            pkt.enqueue_ns = now;
            let Node::Station(s) = pkt.dst else {
                self.dropped.push(pkt);
                return;
            };
            let before = self.dropped.len();
            d.enqueue(s, pkt, now, &mut self.dropped);
            self.counters.txq_drops += (self.dropped.len() - before) as u64;
            return;
        }
        let Node::Station(s) = pkt.dst else {
            self.dropped.push(pkt);
            return;
        };
        let Some(txq) = self.txq_of(s, &pkt) else {
            self.counters.txq_drops += 1;
            self.dropped.push(pkt);
            return;
        };
        let ac = if self.downlink_acs() { pkt.ac() } else { Ac::Be };
        let cpu = pkt.cpu;
        pkt.enqueue_ns = now;
        if let Some(q) = self.txqs.get_mut(txq.index()).and_then(Option::as_mut) {
            let _ = q.enqueue(pkt, instant(now));
        }
        self.collect_txq_drops();
        let _ = self.sched.wake_txq(txq, instant(now));
        if self.config.design.driver_rounds() {
            ath11k_like::wake_tx_queue(self, cpu, ac, now);
        } else {
            stock::wake_tx_queue(self, cpu, ac, now);
        }
        self.collect_txq_drops();
    }

    /// Whether this AP's downlink queues by access category: a txq per (station, TID),
    /// rounds per access category, hardware or firmware queues per access category and
    /// an EDCA function each; every design does, but the MU path of
    /// `ap.hardware.ofdma` is best effort only.
    pub fn downlink_acs(&self) -> bool {
        self.ath9k.is_some() || self.hw().access_categories()
    }

    /// The txq of station `s` that `pkt` goes into: its user priority's
    /// (`cfg80211_classify8021d`) under [`Ap::downlink_acs`], registered with the
    /// scheduler on first use; else the station's BE txq. `None` if the scheduler has
    /// no room for another txq (the packet is then dropped and counted).
    fn txq_of(&mut self, s: u16, pkt: &Packet) -> Option<TxqId> {
        let tids = self.tid_txqs.get(usize::from(s))?;
        if !self.downlink_acs() {
            return tids[0];
        }
        let up = crate::net::udp::user_priority_of_dscp(pkt.dscp).unwrap_or(0);
        if let Some(id) = tids[usize::from(up)] {
            return Some(id);
        }
        let tid = Tid::new(up).ok()?;
        let id = self.sched.add_txq(Some(*self.sta_ids.get(usize::from(s))?), tid).ok()?;
        let slot = self.txqs.get_mut(id.index())?;
        let mut fq = FqCodelConfig::MAC80211;
        fq.codel_target_us = self.config.codel_target_us;
        *slot = Some(mac80211::new_txq(fq));
        self.tid_txqs[usize::from(s)][usize::from(up)] = Some(id);
        self.other_txqs.push(id);
        Some(id)
    }

    /// Registers station `s`'s txq for DSCP `dscp` ahead of its first packet, so a
    /// scheduler without room says so before the run (with OFDMA, whose downlink is best
    /// effort only, that is the BE txq every station has).
    pub fn prepare_txq(&mut self, s: u16, dscp: u8) -> Result<(), ApError> {
        if self.ath9k.is_some() {
            // The ath9k-shaped driver adds a TID's queue on its first frame (and counts
            // a frame its table has no room for as dropped).
            return Ok(());
        }
        if let Some(a) = self.adapter.as_mut() {
            return a.prepare_txq(s, dscp);
        }
        let probe = Packet {
            payload: crate::net::Payload::Ip(Vec::new()),
            len_bytes: 0,
            src: Node::Wired,
            dst: Node::Station(s),
            flow: crate::net::packet::FlowTag::Ping(s),
            dscp,
            cpu: 0,
            enqueue_ns: 0,
            tries: 0,
            mpdu_seq: 0,
        };
        if self.txq_of(s, &probe).is_none() {
            let max = self.sched.config().max_txqs;
            return Err(capacity_error("txq", format!("station {s}, DSCP {dscp}"), max, "max_txqs"));
        }
        Ok(())
    }

    /// Completions reaped by the host, in the order the hardware wrote them.
    pub fn tx_status(&mut self, statuses: &mut [TxStatus], now: Nanos) {
        if let Some(a) = self.adapter.as_mut() {
            self.counters.txq_drops += a.tx_status(statuses, now, &mut self.dropped);
            return;
        }
        if let Some(d) = self.ath9k.as_mut() {
            let before = self.dropped.len();
            d.tx_status(statuses, now, &mut self.dropped);
            self.counters.txq_drops += (self.dropped.len() - before) as u64;
            return;
        }
        if self.config.design.driver_rounds() {
            ath11k_like::tx_status(self, statuses, now);
        } else {
            stock::tx_status(self, statuses);
        }
        self.collect_txq_drops();
    }

    /// Whether the host forms the PPDUs (the ath9k-shaped designs): their completions go
    /// through [`Ap::host_ppdu_done`], one per PPDU.
    pub fn host_aggregates(&self) -> bool {
        self.ath9k.is_some()
    }

    /// A host-aggregating driver's PPDU of `ac` to `station` completed: `statuses` for
    /// its frames that completed, `failed` those its BlockAck missed, which the driver
    /// resends.
    pub fn host_ppdu_done(
        &mut self,
        ac: Ac,
        station: u16,
        statuses: &mut [TxStatus],
        failed: Vec<HwFrame>,
        now: Nanos,
    ) {
        if let Some(d) = self.ath9k.as_mut() {
            let before = self.dropped.len();
            d.ppdu_done(ac, station, statuses, failed, now, &mut self.dropped);
            self.counters.txq_drops += (self.dropped.len() - before) as u64;
        }
    }

    /// The numbered frames a host-aggregating driver gave up outside the retry limit
    /// since the last call (station, access category, number).
    pub fn take_given_up(&mut self) -> Vec<(u16, Ac, u32)> {
        self.ath9k.as_mut().map(|d| d.take_given_up()).unwrap_or_default()
    }

    /// A PPDU-stats report: `airtime_us` of transmit airtime to station `s` in `ac`, which
    /// had `acked` MSDUs acknowledged (only the adapter reads them).
    pub fn ppdu_stats(&mut self, s: u16, ac: Ac, airtime_us: u32, acked: sim_hal::AckedMsdus, now: Nanos) {
        if let Some(a) = self.adapter.as_mut() {
            a.ppdu_stats(s, ac, airtime_us, acked, now);
        } else if let Some(d) = self.ath9k.as_ref() {
            // `ath_tx_count_airtime`, under airtime fairness.
            if self.config.design.registers_airtime() {
                d.register_airtime(s, ac, airtime_us, 0, now);
            }
        } else if self.config.design.registers_airtime() {
            self.su_ppdu_seen(s);
            ath11k_like::ppdu_stats(self, s, ac, airtime_us, now);
        }
    }

    /// The receive path saw a PPDU of `airtime_us` from station `s`.
    pub fn rx_airtime(&mut self, s: u16, airtime_us: u32, now: Nanos) {
        if let Some(a) = self.adapter.as_mut() {
            a.rx_airtime(s, airtime_us, now);
        } else if let Some(d) = self.ath9k.as_ref() {
            // `ath_rx_count_airtime`, under airtime fairness.
            if self.config.design.registers_airtime() {
                d.register_airtime(s, Ac::Be, 0, airtime_us, now);
            }
        } else if self.config.design.registers_airtime() {
            ath11k_like::rx_airtime(self, s, airtime_us, now);
        }
    }

    /// Station `s`'s driver now reports `rate` (rate control moved): frames are priced
    /// at it from now on.
    pub fn set_reported_rate(&mut self, s: u16, rate: Rate) {
        if let Some(a) = self.adapter.as_mut() {
            a.set_reported_rate(s, rate);
        }
        let Some(id) = self.sta_ids.get(usize::from(s)) else { return };
        if let Some(st) = self.stations.get_mut(id.index()).and_then(Option::as_mut) {
            st.rate = rate;
        }
    }

    /// The scheduler handles of the stations, by station number.
    fn station_ids(&self) -> &[StationId] {
        match (self.adapter.as_ref(), self.ath9k.as_ref()) {
            (Some(a), _) => &a.sta_ids[..],
            (None, Some(d)) => d.sta_ids(),
            (None, None) => &self.sta_ids[..],
        }
    }

    /// Transmit airtime registered with the scheduler, summed over stations, per
    /// access category in mac80211's order (`Ac::index`), in us.
    pub fn registered_tx_us_per_ac(&self) -> [u64; Ac::COUNT] {
        let mut sum = [0u64; Ac::COUNT];
        for id in self.station_ids() {
            if let Ok(a) = self.sched().station_airtime(*id) {
                for (t, v) in sum.iter_mut().zip(a.tx_us_per_ac) {
                    *t += v;
                }
            }
        }
        sum
    }

    /// Station `s`'s BE pending airtime, as its `aql` file reads, in us.
    pub fn aql_pending_us(&self, s: u16) -> u32 {
        let ids = self.station_ids();
        ids.get(usize::from(s)).and_then(|id| self.sched().station_pending_us(*id, Ac::Be).ok()).unwrap_or(0)
    }

    /// The scheduler in use (the adapter's, under [`Design::Ath11kAdapter`]).
    pub fn sched(&self) -> &Scheduler {
        match (self.adapter.as_ref(), self.ath9k.as_ref()) {
            (Some(a), _) => a.sched(),
            (None, Some(d)) => d.sched(),
            (None, None) => &self.sched,
        }
    }

    /// Whether a PPDU waits in the hardware (the medium's readiness of the AP).
    pub fn hw_has_frames(&self) -> bool {
        match self.ath9k.as_ref() {
            Some(d) => Ac::ALL.iter().any(|&ac| d.hwq(ac).has_frames()),
            None => self.hw().has_frames(),
        }
    }

    /// Whether a PPDU of `ac` waits in the hardware (that access category's EDCA
    /// function is ready); BE's is [`Ap::hw_has_frames`] where the downlink is best
    /// effort only.
    pub fn hw_has_frames_ac(&self, ac: Ac) -> bool {
        match (ac, self.downlink_acs(), self.ath9k.as_ref()) {
            (Ac::Be, false, _) => self.hw_has_frames(),
            (_, false, _) => false,
            (ac, true, Some(d)) => d.hwq(ac).has_frames(),
            (ac, true, None) => self.hw().has_frames_ac(ac),
        }
    }

    /// The PPDU the hardware sends on a won channel access: station, frames, PSDU bytes.
    /// The firmware forms it (ath11k) or takes the next the host formed (ath9k).
    pub fn next_ppdu(&mut self, timings: &[PhyTiming]) -> Option<(u16, Vec<HwFrame>, u32)> {
        match self.ath9k.as_mut() {
            Some(d) => d.next_ppdu(Ac::Be),
            None => self.hw_mut().next_ampdu(timings),
        }
    }

    /// The PPDU of `ac` the hardware sends when that access category won the access.
    pub fn next_ppdu_ac(&mut self, ac: Ac, timings: &[PhyTiming]) -> Option<(u16, Vec<HwFrame>, u32)> {
        if ac == Ac::Be && !self.downlink_acs() {
            return self.next_ppdu(timings);
        }
        match self.ath9k.as_mut() {
            Some(d) => d.next_ppdu(ac),
            None => self.hw_mut().next_ampdu_ac(ac, timings),
        }
    }

    /// A PPDU that collided goes back to the head of its queue.
    pub fn requeue_ppdu(&mut self, station: u16, frames: Vec<HwFrame>) {
        match self.ath9k.as_mut() {
            Some(d) => d.requeue_front(station, frames),
            None => self.hw_mut().requeue_front(station, frames),
        }
    }

    /// The radio (behind the adapter's HAL under [`Design::Ath11kAdapter`]).
    pub fn hw(&self) -> HwRef<'_> {
        match self.adapter.as_ref() {
            Some(a) => HwRef::Adapter(a.hw()),
            None => HwRef::Plain(&self.hw),
        }
    }

    /// The radio, mutably.
    pub fn hw_mut(&mut self) -> &mut Hardware {
        match self.adapter.as_mut() {
            Some(a) => a.hw_mut(),
            None => &mut self.hw,
        }
    }

    /// Frames waiting in station `s`'s txq.
    pub fn txq_backlog(&self, s: u16) -> u64 {
        self.txq_ids
            .get(usize::from(s))
            .and_then(|id| self.txqs.get(id.index()))
            .and_then(Option::as_ref)
            .map_or(0, SimTxq::backlog_packets)
    }

    fn collect_txq_drops(&mut self) {
        for id in self.txq_ids.iter().chain(&self.other_txqs) {
            let Some(q) = self.txqs.get_mut(id.index()).and_then(Option::as_mut) else { continue };
            if q.pending_drops() > 0 {
                for d in q.drain_drops() {
                    self.counters.txq_drops += 1;
                    self.dropped.push(d.frame);
                }
            }
        }
    }
}

/// The radio, borrowed from the AP or from the adapter's HAL (whose parts sit in
/// `RefCell`s, since the adapter's HAL roles take `&self`).
pub enum HwRef<'a> {
    /// The AP's own radio.
    Plain(&'a Hardware),
    /// The radio inside the adapter's HAL.
    Adapter(std::cell::Ref<'a, Hardware>),
}

impl std::ops::Deref for HwRef<'_> {
    type Target = Hardware;
    fn deref(&self) -> &Hardware {
        match self {
            HwRef::Plain(h) => h,
            HwRef::Adapter(h) => h,
        }
    }
}
