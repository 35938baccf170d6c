//! The baseline: mac80211's scheduler design, in Rust, for comparison only.
//!
//! What it keeps from mainline (net/mac80211's `tx.c` and `sta_info.c`), on purpose, because
//! the benchmarks measure exactly these choices:
//! * one `parking_lot::Mutex` per AC (`active_txq_lock[ac]`) around the AC's doubly
//!   linked list of txqs ([`list::TxqList`]), the round number, every station's deficit
//!   (`s32`), `last_active` and airtime statistics on that AC (`struct airtime_info`, `struct airtime_sched_info`);
//! * `next_txq` walks the list exactly as `ieee80211_next_txq` does, laps included
//!   (`ieee80211_sta_deficit`): a station txq with a negative effective deficit is topped up by its weight and
//!   moved to the tail; the walk ends when the head comes round with nothing eligible;
//! * wake and return insert at the head (station txq with frames) or the tail (`__ieee80211_schedule_txq`), and
//!   a station with debt that was active within 100 ms stays listed (keep-active);
//! * round start runs the per-AC PHY check (`ieee80211_txq_schedule_airtime_check`) with an O(n) walk of the list and
//!   mainline's unsigned 32-bit arithmetic (n = 0 wraps to "no limit"), and resets the
//!   round number to 0 when it fails (`ieee80211_txq_schedule_start` before the seed's fix);
//! * AQL counters are atomics outside the lock (`ieee80211_sta_update_pending_airtime`)
//!   and the station check (`ieee80211_txq_airtime_check`) reads
//!   them without it;
//! * registered airtime takes the AC lock and charges the deficit only for stations
//!   active within 100 ms (`ieee80211_register_airtime`).
//!
//! Like mainline, it does not stop a second context from serving a txq that a wake
//! re-listed while it was held (invariant S3 is the driver's job there).

pub mod list;
#[cfg(test)]
mod tests;

use crate::SchedulerUnderTest;
use airtime_sched::{Ac, Tid};
use list::TxqList;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// `IEEE80211_DEFAULT_AQL_TXQ_LIMIT_L`, us.
pub const AQL_LIMIT_LOW_US: u32 = 5000;
/// `IEEE80211_DEFAULT_AQL_TXQ_LIMIT_H`, us.
pub const AQL_LIMIT_HIGH_US: u32 = 12000;
/// `IEEE80211_AQL_THRESHOLD`, us.
pub const AQL_THRESHOLD_US: u32 = 24000;
/// `HZ/10`: the active window, us.
pub const ACTIVE_WINDOW_US: u64 = 100_000;
/// `AIRTIME_USE_TX`.
pub const AIRTIME_USE_TX: u16 = 1;
/// `AIRTIME_USE_RX`.
pub const AIRTIME_USE_RX: u16 = 2;

/// A station's per-AC state kept under the AC lock (`struct airtime_info` minus the
/// atomics).
#[derive(Clone, Copy, Debug, Default)]
struct StaAirtime {
    deficit: i32,
    last_active: u64,
    tx_airtime: u64,
    rx_airtime: u64,
}

/// Everything `active_txq_lock[ac]` protects.
#[derive(Debug)]
struct ActiveTxqs {
    /// `local->schedule_round[ac]`; 0 means closed.
    schedule_round: u16,
    list: TxqList,
    /// Indexed by station.
    sta: Box<[StaAirtime]>,
}

/// A station's lock-free AQL state (`aql_tx_pending`, limits) and weight. On lines of its
/// own, as each `struct sta_info` is a separate allocation of its own in mainline: two
/// stations never share a cache line.
#[derive(Debug)]
#[repr(align(128))]
struct StaInfo {
    airtime_weight: u16,
    aql_tx_pending: [AtomicI32; 4],
    aql_limit_low: [AtomicU32; 4],
    aql_limit_high: [AtomicU32; 4],
}

/// A txq's fixed identity (`struct ieee80211_txq`).
#[derive(Clone, Copy, Debug)]
struct TxqInfo {
    sta: Option<u32>,
    tid: u8,
    ac: Ac,
}

/// mac80211's per-PHY scheduler state, one lock and one list per AC.
#[derive(Debug)]
pub struct Baseline {
    /// `NL80211_EXT_FEATURE_AQL`.
    aql: bool,
    /// `NL80211_EXT_FEATURE_AIRTIME_FAIRNESS`.
    airtime_fairness: bool,
    airtime_flags: u16,
    aql_txq_limit_low: [u32; 4],
    aql_txq_limit_high: [u32; 4],
    aql_threshold: u32,
    aql_total_pending_airtime: AtomicI32,
    aql_ac_pending_airtime: [AtomicI32; 4],
    stations: Vec<StaInfo>,
    txqs: Vec<TxqInfo>,
    max_stations: usize,
    max_txqs: usize,
    active: [Mutex<ActiveTxqs>; 4],
}

/// A charge: the station, the AC and the 4 us-rounded airtime (mainline keeps the
/// airtime in the frame's `tx_time_est` and finds the station at completion).
#[derive(Debug, PartialEq, Eq)]
pub struct BaselineCharge {
    sta: u32,
    ac: Ac,
    airtime_us: u32,
}

/// A txq handed out by [`Baseline::next_txq`] (mainline hands out the pointer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    /// The txq index.
    pub txq: u32,
}

impl Baseline {
    /// Room for `max_stations` stations and `max_txqs` txqs; AQL and airtime fairness
    /// on, mainline's default limits, threshold and airtime flags.
    pub fn with_capacity(max_stations: usize, max_txqs: usize) -> Baseline {
        let active = core::array::from_fn(|_| {
            Mutex::new(ActiveTxqs {
                schedule_round: 0,
                list: TxqList::new(max_txqs),
                sta: vec![StaAirtime::default(); max_stations].into_boxed_slice(),
            })
        });
        Baseline {
            aql: true,
            airtime_fairness: true,
            airtime_flags: AIRTIME_USE_TX | AIRTIME_USE_RX,
            aql_txq_limit_low: [AQL_LIMIT_LOW_US; 4],
            aql_txq_limit_high: [AQL_LIMIT_HIGH_US; 4],
            aql_threshold: AQL_THRESHOLD_US,
            aql_total_pending_airtime: AtomicI32::new(0),
            aql_ac_pending_airtime: Default::default(),
            stations: Vec::with_capacity(max_stations),
            txqs: Vec::with_capacity(max_txqs),
            max_stations,
            max_txqs,
            active,
        }
    }

    /// Adds a station (`__sta_info_alloc`): deficit = weight, limits = PHY defaults.
    /// Returns its index, or `None` when full or `weight` is 0 (nl80211 refuses it).
    pub fn add_station(&mut self, weight: u16) -> Option<u32> {
        if self.stations.len() >= self.max_stations || weight == 0 {
            return None;
        }
        let i = self.stations.len();
        self.stations.push(StaInfo {
            airtime_weight: weight,
            aql_tx_pending: Default::default(),
            aql_limit_low: self.aql_txq_limit_low.map(AtomicU32::new),
            aql_limit_high: self.aql_txq_limit_high.map(AtomicU32::new),
        });
        for a in &self.active {
            a.lock().sta[i].deficit = i32::from(weight);
        }
        Some(i as u32)
    }

    /// Adds a txq of `sta` (or a station-less one, like the per-vif multicast txq) on `tid`.
    pub fn add_txq(&mut self, sta: Option<u32>, tid: Tid) -> Option<u32> {
        if self.txqs.len() >= self.max_txqs || sta.is_some_and(|s| s as usize >= self.stations.len()) {
            return None;
        }
        self.txqs.push(TxqInfo { sta, tid: tid.get(), ac: tid.ac() });
        Some((self.txqs.len() - 1) as u32)
    }

    /// Sets a station's weight (`airtime_weight`, used at the next top-up).
    pub fn set_weight(&mut self, sta: u32, weight: u16) {
        if weight != 0 {
            self.stations[sta as usize].airtime_weight = weight;
        }
    }

    /// Sets a station's AQL limits on `ac` (debugfs `aql` write).
    pub fn set_station_limits(&self, sta: u32, ac: Ac, low: u32, high: u32) {
        let s = &self.stations[sta as usize];
        s.aql_limit_low[ac.index()].store(low, Ordering::Relaxed);
        s.aql_limit_high[ac.index()].store(high, Ordering::Relaxed);
    }

    /// Sets the PHY threshold between the high and the low station limit.
    pub fn set_aql_threshold(&mut self, us: u32) {
        self.aql_threshold = us;
    }

    /// `__ieee80211_schedule_txq`. `force` is the wake
    /// (`ieee80211_schedule_txq`); without it, `has_frames` says whether the txq still
    /// has frames (`ieee80211_return_txq` reads the txq; here the caller does).
    pub fn schedule_txq(&self, txq: u32, force: bool, has_frames: bool, now: u64) {
        let info = self.txqs[txq as usize];
        let mut guard = self.active[info.ac.index()].lock();
        let a = &mut *guard;
        let has_queue = force || has_frames;
        if a.list.is_linked(txq) || !(has_queue || self.keep_active(a, info, now)) {
            return;
        }
        if info.sta.is_some() && self.airtime_flags != 0 && has_queue && self.airtime_fairness {
            a.list.push_front(txq);
        } else {
            a.list.push_back(txq);
        }
        if let (true, Some(sta)) = (has_queue, info.sta) {
            a.sta[sta as usize].last_active = now;
        }
    }

    /// `ieee80211_txq_keep_active`: a station txq whose effective deficit is negative
    /// and whose station was active within 100 ms.
    fn keep_active(&self, a: &ActiveTxqs, info: TxqInfo, now: u64) -> bool {
        let Some(sta) = info.sta else { return false };
        if self.deficit_of(a, sta, info.ac) >= 0 {
            return false;
        }
        sta_active(&a.sta[sta as usize], now)
    }

    /// `ieee80211_sta_deficit`: the stored deficit minus the airtime in flight.
    #[inline]
    fn deficit_of(&self, a: &ActiveTxqs, sta: u32, ac: Ac) -> i32 {
        let pending = self.stations[sta as usize].aql_tx_pending[ac.index()].load(Ordering::Relaxed);
        a.sta[sta as usize].deficit.wrapping_sub(pending)
    }

    /// `ieee80211_txq_schedule_start`: opens a new round if the per-AC
    /// PHY check passes, otherwise closes the AC by setting the round to 0.
    pub fn schedule_start(&self, ac: Ac) -> bool {
        let mut guard = self.active[ac.index()].lock();
        let a = &mut *guard;
        if self.phy_check(a, ac) {
            a.schedule_round = a.schedule_round.wrapping_add(1);
            if a.schedule_round == 0 {
                a.schedule_round = 1;
            }
            true
        } else {
            a.schedule_round = 0;
            false
        }
    }

    /// `ieee80211_txq_schedule_airtime_check`, under the AC lock: counts
    /// the listed txqs by walking the list, then `pending < (n - 1) * low / 2 + high` in
    /// wrapping `u32` (n = 0 wraps to about 2^31: a pass).
    fn phy_check(&self, a: &ActiveTxqs, ac: Ac) -> bool {
        if !self.aql {
            return true;
        }
        let n = a.list.count();
        let limit = n
            .wrapping_sub(1)
            .wrapping_mul(self.aql_txq_limit_low[ac.index()])
            .wrapping_div(2)
            .wrapping_add(self.aql_txq_limit_high[ac.index()]);
        (self.aql_ac_pending_airtime[ac.index()].load(Ordering::Relaxed) as u32) < limit
    }

    /// `ieee80211_next_txq`: walks the list from the head, topping up
    /// and rotating station txqs with a negative effective deficit or a full AQL budget,
    /// lap after lap while some station passed its AQL check in the last lap.
    pub fn next_txq(&self, ac: Ac) -> Option<Held> {
        let mut guard = self.active[ac.index()].lock();
        let a = &mut *guard;
        if a.schedule_round == 0 {
            return None;
        }
        let mut head = None;
        let mut found_eligible = false;
        loop {
            let t = a.list.first()?;
            if head == Some(t) {
                if !found_eligible {
                    return None;
                }
                found_eligible = false;
            }
            if head.is_none() {
                head = Some(t);
            }
            let info = self.txqs[t as usize];
            if let Some(sta) = info.sta {
                let aql_ok = self.airtime_check_info(info);
                let deficit = self.deficit_of(a, sta, ac);
                if aql_ok {
                    found_eligible = true;
                }
                if deficit < 0 {
                    let w = i32::from(self.stations[sta as usize].airtime_weight);
                    let d = &mut a.sta[sta as usize].deficit;
                    *d = d.wrapping_add(w);
                }
                if deficit < 0 || !aql_ok {
                    a.list.move_tail(t);
                    continue;
                }
            }
            if a.list.schedule_round(t) == a.schedule_round {
                return None;
            }
            a.list.unlink(t);
            a.list.set_schedule_round(t, a.schedule_round);
            return Some(Held { txq: t });
        }
    }

    /// `ieee80211_txq_airtime_check`, lock-free.
    pub fn airtime_check(&self, txq: u32) -> bool {
        self.airtime_check_info(self.txqs[txq as usize])
    }

    #[inline]
    fn airtime_check_info(&self, info: TxqInfo) -> bool {
        if !self.aql {
            return true;
        }
        let Some(sta) = info.sta else { return true };
        if info.tid == Tid::MGMT.get() {
            return true;
        }
        let s = &self.stations[sta as usize];
        let ac = info.ac.index();
        let pending = s.aql_tx_pending[ac].load(Ordering::Relaxed) as u32;
        if pending < s.aql_limit_low[ac].load(Ordering::Relaxed) {
            return true;
        }
        (self.aql_total_pending_airtime.load(Ordering::Relaxed) as u32) < self.aql_threshold
            && pending < s.aql_limit_high[ac].load(Ordering::Relaxed)
    }

    /// `ieee80211_sta_update_pending_airtime`: adds a charge
    /// (`completed == false`) or releases one, clamping the station and AC counters at 0
    /// (the AC clamp adds the overshoot back to the total so that it stays the sum).
    pub fn update_pending_airtime(&self, sta: Option<u32>, ac: Ac, airtime_us: u32, completed: bool) {
        if !self.aql {
            return;
        }
        let amount = airtime_us as i32;
        let ac_pending = &self.aql_ac_pending_airtime[ac.index()];
        if !completed {
            if let Some(s) = sta {
                self.stations[s as usize].aql_tx_pending[ac.index()].fetch_add(amount, Ordering::Relaxed);
            }
            self.aql_total_pending_airtime.fetch_add(amount, Ordering::Relaxed);
            ac_pending.fetch_add(amount, Ordering::Relaxed);
            return;
        }
        if let Some(s) = sta {
            let p = &self.stations[s as usize].aql_tx_pending[ac.index()];
            let left = p.fetch_sub(amount, Ordering::Relaxed).wrapping_sub(amount);
            if left < 0 {
                let _ = p.compare_exchange(left, 0, Ordering::Relaxed, Ordering::Relaxed);
            }
        }
        self.aql_total_pending_airtime.fetch_sub(amount, Ordering::Relaxed);
        let left = ac_pending.fetch_sub(amount, Ordering::Relaxed).wrapping_sub(amount);
        if left < 0 {
            let _ = ac_pending.compare_exchange(left, 0, Ordering::Relaxed, Ordering::Relaxed);
            self.aql_total_pending_airtime.fetch_sub(left, Ordering::Relaxed);
        }
    }

    /// Charges a dequeued frame (`ieee80211_tx_dequeue`, as it stores `tx_time_est`): `4 * floor(min(est, 4095) / 4)`,
    /// nothing for a zero estimate.
    pub fn charge(&self, sta: u32, ac: Ac, estimate_us: u32) -> Option<BaselineCharge> {
        let airtime_us = estimate_us.min(4095) & !3;
        if airtime_us == 0 || sta as usize >= self.stations.len() {
            return None;
        }
        self.update_pending_airtime(Some(sta), ac, airtime_us, false);
        Some(BaselineCharge { sta, ac, airtime_us })
    }

    /// Releases a charge at completion (`ieee80211_sta_update_pending_airtime` from the tx status path).
    pub fn release(&self, charge: BaselineCharge) {
        self.update_pending_airtime(Some(charge.sta), charge.ac, charge.airtime_us, true);
    }

    /// `ieee80211_sta_register_airtime`: statistics always; the deficit
    /// is charged (per the airtime flags) only if the station was active within 100 ms.
    pub fn register_airtime(&self, sta: u32, ac: Ac, tx_us: u32, rx_us: u32, now: u64) {
        let mut airtime = 0u32;
        if self.airtime_flags & AIRTIME_USE_TX != 0 {
            airtime = airtime.wrapping_add(tx_us);
        }
        if self.airtime_flags & AIRTIME_USE_RX != 0 {
            airtime = airtime.wrapping_add(rx_us);
        }
        let mut guard = self.active[ac.index()].lock();
        let s = &mut guard.sta[sta as usize];
        s.tx_airtime = s.tx_airtime.wrapping_add(u64::from(tx_us));
        s.rx_airtime = s.rx_airtime.wrapping_add(u64::from(rx_us));
        if sta_active(s, now) {
            s.deficit = s.deficit.wrapping_sub(airtime as i32);
        }
    }

    /// Resets a station's statistics and deficits to its weight (debugfs `airtime` write).
    pub fn reset_airtime(&self, sta: u32) {
        let w = i32::from(self.stations[sta as usize].airtime_weight);
        for a in &self.active {
            let s = &mut a.lock().sta[sta as usize];
            s.deficit = w;
            s.tx_airtime = 0;
            s.rx_airtime = 0;
        }
    }

    /// The stored deficit of a station on `ac` (not minus pending).
    pub fn deficit(&self, sta: u32, ac: Ac) -> i32 {
        self.active[ac.index()].lock().sta[sta as usize].deficit
    }

    /// A station's registered tx airtime on `ac` (statistics).
    pub fn tx_airtime(&self, sta: u32, ac: Ac) -> u64 {
        self.active[ac.index()].lock().sta[sta as usize].tx_airtime
    }

    /// A station's pending airtime on `ac`.
    pub fn station_pending(&self, sta: u32, ac: Ac) -> i32 {
        self.stations[sta as usize].aql_tx_pending[ac.index()].load(Ordering::Relaxed)
    }

    /// The AC's pending airtime.
    pub fn ac_pending(&self, ac: Ac) -> i32 {
        self.aql_ac_pending_airtime[ac.index()].load(Ordering::Relaxed)
    }

    /// The PHY's pending airtime.
    pub fn total_pending(&self) -> i32 {
        self.aql_total_pending_airtime.load(Ordering::Relaxed)
    }

    /// The AC's round number (0 = closed).
    pub fn schedule_round(&self, ac: Ac) -> u16 {
        self.active[ac.index()].lock().schedule_round
    }

    /// The AC's listed txqs, head first.
    pub fn order(&self, ac: Ac) -> Vec<u32> {
        self.active[ac.index()].lock().list.order()
    }
}

/// `ieee80211_sta_keep_active`: active on this AC within the last 100 ms.
#[inline]
fn sta_active(s: &StaAirtime, now: u64) -> bool {
    now.saturating_sub(s.last_active) <= ACTIVE_WINDOW_US
}

impl SchedulerUnderTest for Baseline {
    type Station = u32;
    type Txq = u32;
    type Held<'a> = Held;
    type Charge = BaselineCharge;
    /// mac80211 keeps one round per AC: the AC is all a round needs to name.
    type Round = Ac;

    const NAME: &'static str = "baseline";

    fn new(max_stations: u16) -> Self {
        let n = usize::from(max_stations.max(1));
        Baseline::with_capacity(n, n)
    }

    fn add_station(&mut self, weight: u16) -> u32 {
        match Baseline::add_station(self, weight) {
            Some(s) => s,
            None => panic!("baseline: no room for a station of weight {weight}"),
        }
    }

    fn add_txq(&mut self, station: u32, tid: Tid) -> u32 {
        match Baseline::add_txq(self, Some(station), tid) {
            Some(t) => t,
            None => panic!("baseline: no room for a txq"),
        }
    }

    #[inline]
    fn wake(&self, txq: u32, now: u64) {
        self.schedule_txq(txq, true, true, now);
    }

    #[inline]
    fn start_round(&self, ac: Ac) -> Option<Ac> {
        self.schedule_start(ac).then_some(ac)
    }

    #[inline]
    fn next_txq(&self, ac: Ac, _now: u64) -> Option<Held> {
        Baseline::next_txq(self, ac)
    }

    #[inline]
    fn held_index(held: &Held) -> usize {
        held.txq as usize
    }

    #[inline]
    fn airtime_check(&self, held: &Held) -> bool {
        Baseline::airtime_check(self, held.txq)
    }

    #[inline]
    fn return_txq(&self, held: Held, backlogged: bool, now: u64) {
        self.schedule_txq(held.txq, false, backlogged, now);
    }

    #[inline]
    fn charge(&self, station: u32, ac: Ac, airtime_us: u32) -> Option<BaselineCharge> {
        Baseline::charge(self, station, ac, airtime_us)
    }

    #[inline]
    fn release(&self, charge: BaselineCharge) {
        Baseline::release(self, charge);
    }

    #[inline]
    fn register_airtime(&self, station: u32, ac: Ac, tx_us: u32, now: u64) {
        Baseline::register_airtime(self, station, ac, tx_us, 0, now);
    }

    fn reset_deficit(&self, station: u32) {
        self.reset_airtime(station);
    }

    #[inline]
    fn charge_into_raw(c: BaselineCharge) -> u32 {
        (c.airtime_us / 4) | ((c.ac as u32) << 10) | (c.sta << 12)
    }

    #[inline]
    fn charge_from_raw(raw: u32) -> Option<BaselineCharge> {
        let ac = Ac::from_index(((raw >> 10) & 3) as usize)?;
        Some(BaselineCharge { sta: raw >> 12, ac, airtime_us: (raw & 0x3ff) * 4 })
    }
}
