//! The sequential reference model of the scheduler and the harness that runs it beside
//! the real [`Scheduler`], step by step. Shared by the proptest state machine
//! (tests/model.rs) and the `scheduler_ops` fuzz target (fuzz/fuzz_targets), which
//! includes this same file with `#[path = ...]`: keep it free of test-framework
//! dependencies (no proptest), and refer to the crate only as `airtime_sched`.
//!
//! # The model is mainline's algorithm
//! [`Model`] is Linux mac80211's airtime scheduler written out plainly, not a copy of
//! this crate's lock-free design, so that the design is checked against the algorithm
//! it claims to implement:
//! * each AC has ONE ordered list of txqs (`active_txqs[ac]`), a `VecDeque` of txq
//!   indices; a txq is on it at most once;
//! * [`Model::schedule_txq`] is `__ieee80211_schedule_txq`: a txq on no list is listed if
//!   it has frames or `ieee80211_txq_keep_active` says so, at the head if it has a
//!   station, airtime flags are set and it has frames (`list_add`), else at the tail
//!   (`list_add_tail`); only then, and only with frames, is the station marked active
//!   (`ieee80211_txq_set_active`). A txq already listed: nothing happens;
//! * [`Model::start_round`] is `ieee80211_txq_schedule_start` with the per-AC PHY check
//!   (`ieee80211_txq_schedule_airtime_check`: `high + (n - 1) * low / 2` over the n
//!   txqs on the list);
//! * [`Model::next_txq`] is `ieee80211_next_txq`, walked one entry at a time: a head
//!   marker and `found_eligible`; a station txq is topped up by the weight when its
//!   effective deficit (deficit - pending, `ieee80211_sta_deficit`) is negative, and
//!   moved to the tail (`list_move_tail`) if that deficit was negative or its AQL check
//!   (`ieee80211_txq_airtime_check`) fails; meeting the head marker again ends the call
//!   unless some station passed its AQL check in the lap; a txq already served in this
//!   round ends the round and stays at the head; otherwise it leaves the list
//!   (`list_del_init`), is stamped and handed out. No shortcut over laps: a large debt at
//!   weight 1 is walked lap by lap;
//! * removing a txq takes it off the list at once (`ieee80211_txq_purge`,
//!   `ieee80211_unschedule_txq`).
//!
//! Where this crate differs from mainline on purpose, the model follows the crate, and
//! says so where it does:
//! * `TxqReturn::Stalled` (frames left, no progress) lists the txq at the tail, where
//!   `ieee80211_return_txq` would put a station txq back at the head and pin the round;
//! * a wake while the txq is served is recorded (`woken`) and acted on when the server
//!   returns it, instead of listing the txq under the server's feet;
//! * removing a txq frees its slot at once but leaves its entry on the list (a lock-free
//!   list cannot unlink from the middle): a round that meets the entry drops it, and a
//!   txq added meanwhile into the same slot on the same AC takes the entry over when it
//!   is woken, keeping its place (`inherit_entry`), where mainline would list the new
//!   txq at the head or the tail;
//! * a station's activity stamp (`last_active`) is written only once it is a grain old
//!   (`Config::active_stamp_grain_us`, 1/128 of the window), so a station counts as
//!   active for between the window less a grain and the window after it was last
//!   scheduled; mainline's stamp, in jiffies, gives it the window and up to a jiffy more;
//! * [`Model::may_transmit`] is the crate's pull-mode check, not mainline's
//!   `ieee80211_txq_may_transmit`, which rotates the txqs listed ahead of the asked one;
//! * rounds: closing keeps the round number (`RoundPolicy::KeepNumber`), or, with
//!   `RoundPolicy::ResetOnClose`, resets it to 0 as mainline does; the round ends at a
//!   txq stamped with this round's number or a later one (mainline: equal; the same here,
//!   where one context starts every round).
//!
//! The harness drives the scheduler like a driver would: per-txq frame counters stand in
//! for the queues, every dequeued frame of a station txq is charged after the AQL check,
//! and charges are released at "completion". [`Harness::compare`] checks every
//! `next_txq` answer, every counter and the round state against the model, and runs
//! `check_invariants`; [`Harness::drain`] completes and serves everything and checks that
//! no airtime stays pending.

use airtime_sched::MayTransmit;
use airtime_sched::aql;
use airtime_sched::{
    Ac, AirtimeFlags, AqlLimits, Charge, Config, DEFAULT_AQL_THRESHOLD_US, Instant, OverLimitPolicy, Round,
    RoundPolicy, SchedError, Scheduler, Serving, StationId, Tid, TxqId, TxqReturn, Weight,
};
use std::collections::VecDeque;
pub const MAX_STATIONS: u16 = 4;
pub const MAX_TXQS: u16 = 6;
/// The ACs the test uses, and the TIDs it registers txqs on (two on BE, one on VO).
pub const ACS: [Ac; 2] = [Ac::Be, Ac::Vo];
pub const TIDS: [u8; 3] = [0, 3, 6];
/// mac80211's `IEEE80211_NUM_TIDS`: the management txq's TID, never AQL-limited.
const MGMT_TID: u8 = 16;

// ------------------------------------------------------------------------ the model

#[derive(Clone, Debug)]
struct ModelStation {
    id: StationId,
    live: bool,
    weight: i64,
    limits: [AqlLimits; Ac::COUNT],
    deficit: [i64; Ac::COUNT],
    pending: [u32; Ac::COUNT],
    last_active: [u64; Ac::COUNT],
}

#[derive(Clone, Debug)]
struct ModelTxq {
    id: TxqId,
    station: Option<usize>,
    tid: u8,
    ac: Ac,
    live: bool,
    /// Held by a server (only inside a Serve or Pull step).
    serving: bool,
    /// Woken while served: the server's return lists it.
    woken: bool,
    /// The round in which it was last handed out (`txqi->schedule_round`).
    round: u64,
    /// The test's stand-in for the txq's frames.
    frames: u32,
    /// Its list entry stands for nothing (not counted, dropped when `next_txq` meets it)
    /// until the txq is listed again, when it takes that place. Two ways to get one:
    /// taken through `may_transmit` while listed, or added into a slot whose removed txq
    /// left its entry on this AC's list. Mainline unlinks a pulled or removed txq at once
    /// and inserts it afresh (head or tail) when it is listed again; a lock-free list
    /// cannot unlink from the middle, so this is the crate's deliberate difference.
    orphan_entry: bool,
    /// Not part of the algorithm: the scheduler may still hold this txq's slot for a list
    /// entry it drops lazily (the txq left the model's list other than through
    /// `next_txq`: removed or pulled while listed). Mainline frees at once; when the
    /// crate reuses such a slot is its own business, so the harness accepts either
    /// answer from `add_txq` while such a slot could make the difference.
    maybe_slot: bool,
}

#[derive(Clone, Debug, Default)]
struct ModelAc {
    /// `local->active_txqs[ac]`: front = head.
    list: VecDeque<usize>,
    round: u64,
    open: bool,
    skipped: u64,
    /// Airtime registered for removed stations (tx, rx), in us: counted per AC.
    departed_us: (u64, u64),
}

/// What the scheduler charges for an estimate: a multiple of 4 in [4, Charge::MAX_US].
fn quantise(us: u32) -> u32 {
    (us.min(Charge::MAX_US) & !3).max(4)
}

#[derive(Clone, Debug)]
pub struct Model {
    config: Config,
    stations: Vec<ModelStation>,
    txqs: Vec<ModelTxq>,
    acs: [ModelAc; Ac::COUNT],
    now: u64,
    aql_enabled: bool,
    threshold_us: u32,
    /// PHY default limits per AC: new stations start with them; the per-AC PHY limit uses them.
    default_limits: [AqlLimits; Ac::COUNT],
    flags: AirtimeFlags,
}

impl Model {
    fn new(config: Config, now: u64) -> Model {
        Model {
            config,
            stations: Vec::new(),
            txqs: Vec::new(),
            acs: Default::default(),
            now,
            aql_enabled: true,
            threshold_us: DEFAULT_AQL_THRESHOLD_US,
            default_limits: [AqlLimits::DEFAULT; Ac::COUNT],
            flags: AirtimeFlags::default(),
        }
    }

    fn ac_pending(&self, ac: Ac) -> u32 {
        self.stations.iter().map(|s| s.pending[ac.index()]).sum()
    }

    fn total_pending(&self) -> u32 {
        Ac::ALL.iter().map(|&ac| self.ac_pending(ac)).sum()
    }

    /// Txqs on the AC's list: the per-AC PHY limit's n.
    fn listed(&self, ac: Ac) -> usize {
        self.acs[ac.index()].list.iter().filter(|&&t| self.stands(t)).count()
    }

    /// Whether an entry of txq `t` on a list stands for it: mainline's list holds no
    /// other entries (those of removed txqs, orphans: see `ModelTxq::orphan_entry`).
    fn stands(&self, t: usize) -> bool {
        self.txqs[t].live && !self.txqs[t].orphan_entry
    }

    /// Whether txq `t` is on its AC's list (`!list_empty(&txqi->schedule_order)`).
    fn is_listed(&self, t: usize) -> bool {
        self.stands(t) && self.acs[self.txqs[t].ac.index()].list.contains(&t)
    }

    /// A txq added into slot `index` on `ac` takes over, as an orphan, the entry a
    /// removed txq of that slot left on `ac`'s list.
    fn inherit_entry(&mut self, t: usize) {
        let (ac, index) = (self.txqs[t].ac, self.txqs[t].id.index());
        let txqs = &self.txqs;
        let old = self.acs[ac.index()].list.iter().position(|&o| o != t && txqs[o].id.index() == index);
        if let Some(i) = old {
            self.acs[ac.index()].list[i] = t;
            self.txqs[t].orphan_entry = true;
        }
    }

    /// Takes txq `t` off its AC's list (`list_del_init`); true if it was on it.
    fn unlist(&mut self, t: usize) -> bool {
        let list = &mut self.acs[self.txqs[t].ac.index()].list;
        let Some(i) = list.iter().position(|&x| x == t) else { return false };
        list.remove(i);
        true
    }

    /// The per-AC PHY limit (`ieee80211_txq_schedule_airtime_check`), None when nothing
    /// is listed.
    fn phy_limit(&self, ac: Ac) -> Option<u32> {
        aql::phy_limit_us(self.listed(ac) as u32, self.default_limits[ac.index()])
    }

    fn effective_limits(&self, s: usize, ac: Ac) -> AqlLimits {
        let st = &self.stations[s];
        let limits = st.limits[ac.index()];
        if self.config.tx_no_pushback {
            limits.scaled_by_weight(Weight::new(st.weight as u16).unwrap(), self.config.no_pushback_floor_us)
        } else {
            limits
        }
    }

    /// The station AQL check (`ieee80211_txq_airtime_check` for a station txq).
    fn station_may_send(&self, s: usize, ac: Ac) -> bool {
        !self.aql_enabled
            || aql::station_may_send(
                self.stations[s].pending[ac.index()],
                self.effective_limits(s, ac),
                self.total_pending(),
                self.threshold_us,
            )
    }

    /// `ieee80211_sta_deficit`: the deficit less the pending airtime.
    fn effective_deficit(&self, s: usize, ac: Ac) -> i64 {
        let st = &self.stations[s];
        st.deficit[ac.index()] - i64::from(st.pending[ac.index()])
    }

    fn is_active(&self, s: usize, ac: Ac) -> bool {
        self.now.saturating_sub(self.stations[s].last_active[ac.index()]) < self.config.active_window_us
    }

    /// `ieee80211_txq_set_active`, its stamp written only once it is a grain old
    /// (`Config::active_stamp_grain_us`): see the module's list of differences.
    fn mark_active(&mut self, s: usize, ac: Ac) {
        let grain = self.config.active_stamp_grain_us();
        let last = &mut self.stations[s].last_active[ac.index()];
        if self.now.saturating_sub(*last) >= grain {
            *last = self.now;
        }
    }

    fn live_station_of(&self, t: usize) -> Option<usize> {
        self.txqs[t].station.filter(|&s| self.stations[s].live)
    }

    /// `ieee80211_txq_keep_active`: a station txq whose station is still paying off debt
    /// and was active within the window.
    fn keep_active(&self, t: usize) -> bool {
        let ac = self.txqs[t].ac;
        self.live_station_of(t).is_some_and(|s| self.effective_deficit(s, ac) < 0 && self.is_active(s, ac))
    }

    fn occupied_station_slots(&self) -> usize {
        self.stations.iter().filter(|s| s.live || s.pending.iter().any(|&p| p > 0)).count()
    }

    /// `__ieee80211_schedule_txq(txq, has_queue)` for a txq nobody serves.
    fn schedule_txq(&mut self, t: usize, has_queue: bool) {
        if !self.txqs[t].live || self.is_listed(t) || !(has_queue || self.keep_active(t)) {
            return;
        }
        let ac = self.txqs[t].ac;
        let station = self.live_station_of(t);
        let airtime_flags = self.flags.charge_tx || self.flags.charge_rx;
        if std::mem::take(&mut self.txqs[t].orphan_entry) {
            // The entry left while it was pulled stands for it again, in its place.
        } else if station.is_some() && airtime_flags && has_queue {
            self.acs[ac.index()].list.push_front(t);
        } else {
            self.acs[ac.index()].list.push_back(t);
        }
        if let (true, Some(s)) = (has_queue, station) {
            self.mark_active(s, ac);
        }
    }

    /// A wake after an enqueue (`ieee80211_schedule_txq`, i.e. with force). While the txq
    /// is served it is only recorded; the server's return lists it.
    fn wake(&mut self, t: usize) -> Result<(), SchedError> {
        if !self.txqs[t].live {
            return Err(SchedError::UnknownTxq);
        }
        if self.txqs[t].serving {
            if !self.txqs[t].woken {
                // Mainline would list it here, with frames: the station is active now.
                self.txqs[t].woken = true;
                if let Some(s) = self.live_station_of(t) {
                    self.mark_active(s, self.txqs[t].ac);
                }
            }
        } else {
            self.schedule_txq(t, true);
        }
        Ok(())
    }

    /// `ieee80211_txq_schedule_start`: under the per-AC PHY limit (or with AQL off) a new
    /// round number, never 0; otherwise the AC closes.
    fn start_round(&mut self, ac: Ac) -> bool {
        let open = !self.aql_enabled || self.phy_limit(ac).is_none_or(|limit| self.ac_pending(ac) < limit);
        let a = &mut self.acs[ac.index()];
        if open {
            a.round = a.round.wrapping_add(1).max(1);
        } else if self.config.round_policy == RoundPolicy::ResetOnClose {
            a.round = 0;
        }
        a.open = open;
        open
    }

    /// Whether a txq stamped `stamp` was served in round `number`: mainline's equality;
    /// with `KeepNumber`, "this round or a later one" (the same thing sequentially).
    fn served_in(&self, stamp: u64, number: u64) -> bool {
        match self.config.round_policy {
            RoundPolicy::ResetOnClose => stamp == number,
            _ => stamp >= number,
        }
    }

    /// `ieee80211_next_txq`, literally.
    fn next_txq(&mut self, ac: Ac) -> Option<usize> {
        if !self.acs[ac.index()].open {
            return None;
        }
        let number = self.acs[ac.index()].round;
        let mut head: Option<usize> = None;
        let mut found_eligible = false;
        loop {
            let t = *self.acs[ac.index()].list.front()?;
            if !self.stands(t) {
                // An entry that stands for no listed txq: mainline's list has none.
                self.txqs[t].orphan_entry = false;
                self.acs[ac.index()].list.pop_front();
                continue;
            }
            if head == Some(t) {
                if !found_eligible {
                    return None;
                }
                found_eligible = false;
            }
            if head.is_none() {
                head = Some(t);
            }
            if let Some(s) = self.live_station_of(t) {
                let aql_ok = self.txqs[t].tid == MGMT_TID || self.station_may_send(s, ac);
                let deficit = self.effective_deficit(s, ac);
                if aql_ok {
                    found_eligible = true;
                }
                if deficit < 0 {
                    let st = &mut self.stations[s];
                    st.deficit[ac.index()] += st.weight;
                }
                if deficit < 0 || !aql_ok {
                    let list = &mut self.acs[ac.index()].list;
                    list.pop_front();
                    list.push_back(t);
                    continue;
                }
            }
            if self.served_in(self.txqs[t].round, number) {
                // The round ends here; the txq stays at the head.
                self.acs[ac.index()].skipped += 1;
                return None;
            }
            self.acs[ac.index()].list.pop_front();
            let txq = &mut self.txqs[t];
            txq.round = number;
            txq.serving = true;
            txq.woken = false;
            return Some(t);
        }
    }

    /// `ieee80211_return_txq` with the outcome the server reports.
    fn return_txq(&mut self, t: usize, outcome: TxqReturn) {
        let txq = &mut self.txqs[t];
        let woken = std::mem::take(&mut txq.woken);
        txq.serving = false;
        match outcome {
            // Frames left after progress: `__ieee80211_schedule_txq` with frames.
            TxqReturn::Backlogged => self.schedule_txq(t, true),
            // Frames left, no progress: the tail, where mainline's head insertion would
            // pin the round on a txq that cannot move (a deliberate difference).
            TxqReturn::Stalled => {
                if self.txqs[t].live && !self.is_listed(t) {
                    let ac = self.txqs[t].ac;
                    if !std::mem::take(&mut self.txqs[t].orphan_entry) {
                        self.acs[ac.index()].list.push_back(t);
                    }
                    if let Some(s) = self.live_station_of(t) {
                        self.mark_active(s, ac);
                    }
                }
            }
            // Empty: listed only if woken meanwhile (newly backlogged) or kept active.
            TxqReturn::Empty => self.schedule_txq(t, woken),
        }
    }

    /// Removes a txq: off its list at once (`ieee80211_txq_purge`), as far as anything
    /// observable goes; its entry stays, standing for nothing, until met or inherited.
    fn remove_txq(&mut self, t: usize) {
        let txq = &mut self.txqs[t];
        txq.live = false;
        txq.woken = false;
        txq.orphan_entry = false;
    }

    fn register_airtime(&mut self, s: usize, ac: Ac, tx_us: u32, rx_us: u32) -> Result<(), SchedError> {
        if !self.stations[s].live {
            let departed = &mut self.acs[ac.index()].departed_us;
            departed.0 += u64::from(tx_us);
            departed.1 += u64::from(rx_us);
            return Ok(());
        }
        // The airtime flags choose what is charged; only stations active within the window
        // are charged at all.
        if self.is_active(s, ac) {
            let tx = if self.flags.charge_tx { i64::from(tx_us) } else { 0 };
            let rx = if self.flags.charge_rx { i64::from(rx_us) } else { 0 };
            self.stations[s].deficit[ac.index()] -= tx + rx;
        }
        Ok(())
    }

    /// Pull mode: the crate's `Scheduler::may_transmit`, a deliberate difference from
    /// mainline's `ieee80211_txq_may_transmit` (which moves every txq listed ahead of the
    /// asked one to the tail, topping them up, and looks at the raw deficit). A station
    /// txq with a negative effective deficit is topped up by the weight and refused, and
    /// stays where it is; while the AC is over its PHY limit the deficit is not looked at
    /// and the txq is refused or allowed by `Config::over_limit`; a txq being served is
    /// refused. An allowed txq is held like one from `next_txq` until returned; its list
    /// entry, if any, stands for nothing meanwhile (see `ModelTxq::orphan_entry`).
    fn may_transmit(&mut self, t: usize) -> Result<bool, SchedError> {
        if !self.txqs[t].live {
            return Err(SchedError::UnknownTxq);
        }
        let ac = self.txqs[t].ac;
        let over = self.aql_enabled && self.phy_limit(ac).is_some_and(|limit| self.ac_pending(ac) >= limit);
        if over && self.config.over_limit == OverLimitPolicy::Refuse {
            return Ok(false);
        }
        if !over
            && let Some(s) = self.txqs[t].station
            && self.effective_deficit(s, ac) < 0
        {
            let st = &mut self.stations[s];
            st.deficit[ac.index()] += st.weight;
            return Ok(false);
        }
        if self.txqs[t].serving {
            return Ok(false);
        }
        if self.is_listed(t) {
            self.txqs[t].orphan_entry = true;
        }
        self.txqs[t].serving = true;
        Ok(true)
    }

    /// The PHY default limits change; stations still on the old default follow.
    fn set_default_limits(&mut self, ac: Ac, limits: AqlLimits) {
        let old = std::mem::replace(&mut self.default_limits[ac.index()], limits);
        for st in &mut self.stations {
            if st.limits[ac.index()] == old {
                st.limits[ac.index()] = limits;
            }
        }
    }
}

// ------------------------------------------------------------------------ operations

#[derive(Clone, Debug)]
pub enum Op {
    AddStation {
        weight: u16,
    },
    RemoveStation {
        sta: usize,
    },
    AddTxq {
        sta: Option<usize>,
        tid: usize,
    },
    RemoveTxq {
        txq: usize,
    },
    /// Frames arrive in a txq and it is woken.
    Enqueue {
        txq: usize,
        frames: u32,
    },
    StartRound {
        ac: usize,
    },
    /// One server (optionally a second one at the same time) takes a txq, dequeues up to
    /// `max_frames` (checking AQL before each), optionally sees a wake meanwhile, returns it.
    Serve {
        ac: usize,
        start: bool,
        max_frames: u32,
        airtime_us: u32,
        backlogged: bool,
        wake: Option<usize>,
        second: bool,
    },
    /// The hardware completes a frame: its charge is released, its airtime maybe registered.
    Complete {
        which: usize,
        register: bool,
    },
    RegisterAirtime {
        sta: usize,
        ac: usize,
        tx_us: u32,
        rx_us: u32,
    },
    SetWeight {
        sta: usize,
        weight: u16,
    },
    SetLimits {
        sta: usize,
        ac: usize,
        a: u32,
        b: u32,
    },
    Advance {
        us: u64,
    },
    SetAqlEnabled(bool),
    /// Pull mode: `may_transmit` on a txq, then dequeue and return like a server.
    Pull {
        txq: usize,
        max_frames: u32,
        airtime_us: u32,
        backlogged: bool,
    },
    SetDefaultLimits {
        ac: usize,
        a: u32,
        b: u32,
    },
    SetThreshold {
        us: u32,
    },
    SetAirtimeFlags {
        tx: bool,
        rx: bool,
    },
    ResetAirtime {
        sta: usize,
    },
}

// ------------------------------------------------------------------------ the harness

struct Held {
    charge: Charge,
    station: usize,
}

pub struct Harness {
    sched: Scheduler,
    model: Model,
    held: Vec<Held>,
    /// The driver's latest round per AC (index as in `ACS`).
    rounds: [Option<Round>; 4],
}

/// What one server did.
struct Served {
    txq: usize,
    outcome: TxqReturn,
}

impl Harness {
    pub fn new(config: Config, now: u64) -> Harness {
        Harness {
            sched: Scheduler::new(config).unwrap(),
            model: Model::new(config, now),
            held: Vec::new(),
            rounds: [None; 4],
        }
    }

    fn now(&self) -> Instant {
        Instant::from_micros(self.model.now)
    }

    fn pick<T>(items: &[T], i: usize) -> Option<usize> {
        (!items.is_empty()).then(|| i % items.len())
    }

    pub fn apply(&mut self, op: &Op) {
        let now = self.now();
        match *op {
            Op::AddStation { weight } => {
                let got = self.sched.add_station(Weight::new(weight).unwrap());
                if self.model.occupied_station_slots() < usize::from(MAX_STATIONS) {
                    let id = got.expect("a free station slot");
                    assert!(self.model.stations.iter().all(|s| !(s.live && s.id == id)), "a live id reissued");
                    self.model.stations.push(ModelStation {
                        id,
                        live: true,
                        weight: i64::from(weight),
                        limits: self.model.default_limits,
                        deficit: [i64::from(weight); Ac::COUNT],
                        pending: [0; Ac::COUNT],
                        last_active: [0; Ac::COUNT],
                    });
                } else {
                    let draining = self.model.stations.iter().any(|s| !s.live && s.pending.iter().any(|&p| p > 0));
                    let expected = if draining { SchedError::StationsDraining } else { SchedError::StationsFull };
                    assert_eq!(got, Err(expected));
                }
            }
            Op::RemoveStation { sta } => {
                let Some(s) = Self::pick(&self.model.stations, sta) else { return };
                let got = self.sched.remove_station(self.model.stations[s].id);
                if self.model.stations[s].live {
                    got.unwrap();
                    self.model.stations[s].live = false;
                    for t in 0..self.model.txqs.len() {
                        if self.model.txqs[t].station == Some(s) && self.model.txqs[t].live {
                            self.model.remove_txq(t);
                        }
                    }
                } else {
                    assert_eq!(got, Err(SchedError::UnknownStation));
                }
            }
            Op::AddTxq { sta, tid } => {
                let s = sta.and_then(|i| Self::pick(&self.model.stations, i));
                let tid = Tid::new(TIDS[tid]).unwrap();
                let got = self.sched.add_txq(s.map(|s| self.model.stations[s].id), tid);
                if s.is_some_and(|s| !self.model.stations[s].live) {
                    assert_eq!(got, Err(SchedError::UnknownStation));
                    return;
                }
                // Slots certainly taken, and those the scheduler may still hold for a list
                // entry it drops lazily (see `ModelTxq::maybe_slot`).
                let taken = self.model.txqs.iter().filter(|t| t.live || t.serving).count();
                let maybe = self.model.txqs.iter().filter(|t| !t.live && !t.serving && t.maybe_slot).count();
                match got {
                    Ok(id) => {
                        assert!(taken < usize::from(MAX_TXQS), "a txq slot given out twice");
                        assert!(
                            self.model.txqs.iter().all(|t| !((t.live || t.serving) && t.id.index() == id.index())),
                            "a taken txq slot reissued"
                        );
                        for t in self.model.txqs.iter_mut().filter(|t| t.id.index() == id.index()) {
                            t.maybe_slot = false;
                        }
                        assert_eq!(self.sched.txq_info(id).unwrap(), (s.map(|s| self.model.stations[s].id), tid));
                        self.model.txqs.push(ModelTxq {
                            id,
                            station: s,
                            tid: tid.get(),
                            ac: tid.ac(),
                            live: true,
                            serving: false,
                            woken: false,
                            round: 0,
                            frames: 0,
                            orphan_entry: false,
                            maybe_slot: false,
                        });
                        let t = self.model.txqs.len() - 1;
                        self.model.inherit_entry(t);
                    }
                    Err(e) => {
                        // A removed txq still served holds its slot until returned.
                        let draining = self.model.txqs.iter().any(|t| !t.live && t.serving);
                        assert_eq!(e, if draining { SchedError::TxqsDraining } else { SchedError::TxqsFull });
                        assert!(taken + maybe >= usize::from(MAX_TXQS), "a free txq slot refused");
                    }
                }
            }
            Op::RemoveTxq { txq } => {
                let Some(t) = Self::pick(&self.model.txqs, txq) else { return };
                let got = self.sched.remove_txq(self.model.txqs[t].id);
                if self.model.txqs[t].live {
                    got.unwrap();
                    self.model.remove_txq(t);
                } else {
                    assert_eq!(got, Err(SchedError::UnknownTxq));
                }
            }
            Op::Enqueue { txq, frames } => {
                let Some(t) = Self::pick(&self.model.txqs, txq) else { return };
                if self.model.txqs[t].live {
                    self.model.txqs[t].frames += frames;
                }
                assert_eq!(self.sched.wake_txq(self.model.txqs[t].id, now), self.model.wake(t));
            }
            Op::StartRound { ac } => {
                let round = self.sched.start_round(ACS[ac]);
                assert_eq!(round.is_open(), self.model.start_round(ACS[ac]), "start_round");
                self.rounds[ac] = Some(round);
            }
            Op::Serve { ac, start, max_frames, airtime_us, backlogged, wake, second } => {
                if start {
                    self.apply(&Op::StartRound { ac });
                }
                self.serve(ACS[ac], max_frames, airtime_us, backlogged, wake, second)
            }
            Op::Complete { which, register } => {
                let Some(i) = Self::pick(&self.held, which) else { return };
                let Held { charge, station } = self.held.swap_remove(i);
                let (ac, us) = (charge.ac(), charge.airtime_us());
                assert_eq!(charge.station(), Some(self.model.stations[station].id));
                self.sched.release(charge).expect("a clean release");
                self.model.stations[station].pending[ac.index()] -= us;
                if register {
                    let id = self.model.stations[station].id;
                    let got = self.sched.register_airtime(id, ac, us, 0, now);
                    assert_eq!(got, self.model.register_airtime(station, ac, us, 0));
                }
            }
            Op::RegisterAirtime { sta, ac, tx_us, rx_us } => {
                let Some(s) = Self::pick(&self.model.stations, sta) else { return };
                let got = self.sched.register_airtime(self.model.stations[s].id, ACS[ac], tx_us, rx_us, now);
                assert_eq!(got, self.model.register_airtime(s, ACS[ac], tx_us, rx_us));
            }
            Op::SetWeight { sta, weight } => {
                let Some(s) = Self::pick(&self.model.stations, sta) else { return };
                let got = self.sched.set_weight(self.model.stations[s].id, Weight::new(weight).unwrap());
                if self.model.stations[s].live {
                    got.unwrap();
                    self.model.stations[s].weight = i64::from(weight);
                } else {
                    assert_eq!(got, Err(SchedError::UnknownStation));
                }
            }
            Op::SetLimits { sta, ac, a, b } => {
                let Some(s) = Self::pick(&self.model.stations, sta) else { return };
                let limits = AqlLimits::new(a.min(b), a.max(b)).unwrap();
                let got = self.sched.set_station_limits(self.model.stations[s].id, ACS[ac], limits);
                if self.model.stations[s].live {
                    got.unwrap();
                    self.model.stations[s].limits[ACS[ac].index()] = limits;
                } else {
                    assert_eq!(got, Err(SchedError::UnknownStation));
                }
            }
            Op::Advance { us } => self.model.now += us,
            Op::SetAqlEnabled(on) => {
                self.sched.set_aql_enabled(on);
                self.model.aql_enabled = on;
            }
            Op::Pull { txq, max_frames, airtime_us, backlogged } => {
                let Some(t) = Self::pick(&self.model.txqs, txq) else { return };
                let sched: &Scheduler = &self.sched;
                let mut d = Driver { sched, model: &mut self.model, held: &mut self.held, round: None };
                let real = sched.may_transmit(d.model.txqs[t].id, now);
                let expected = d.model.may_transmit(t);
                assert_eq!(real.as_ref().map(MayTransmit::is_granted).map_err(|e| *e), expected, "may_transmit");
                if let Ok(MayTransmit::Granted(mut serving)) = real {
                    let served = d.dequeue(&mut serving, t, max_frames, airtime_us, airtime_us % 2 == 0);
                    d.give_back(serving, served, backlogged, now);
                }
            }
            Op::SetDefaultLimits { ac, a, b } => {
                let limits = AqlLimits::new(a.min(b), a.max(b)).unwrap();
                self.sched.set_default_limits(ACS[ac], limits);
                self.model.set_default_limits(ACS[ac], limits);
            }
            Op::SetThreshold { us } => {
                self.sched.set_aql_threshold_us(us);
                self.model.threshold_us = us;
            }
            Op::SetAirtimeFlags { tx, rx } => {
                self.sched.set_airtime_flags(AirtimeFlags::new(tx, rx));
                self.model.flags = AirtimeFlags::new(tx, rx);
            }
            Op::ResetAirtime { sta } => {
                let Some(s) = Self::pick(&self.model.stations, sta) else { return };
                let got = self.sched.reset_airtime(self.model.stations[s].id);
                if self.model.stations[s].live {
                    got.unwrap();
                    let st = &mut self.model.stations[s];
                    st.deficit = [st.weight; Ac::COUNT];
                } else {
                    assert_eq!(got, Err(SchedError::UnknownStation));
                }
            }
        }
    }

    fn serve(&mut self, ac: Ac, max_frames: u32, airtime_us: u32, backlogged: bool, wake: Option<usize>, second: bool) {
        let now = self.now();
        // Split borrows: `Serving` handles borrow the scheduler while the driver side
        // (model, frame counters, held charges) is updated.
        let sched: &Scheduler = &self.sched;
        let round = self.rounds[ACS.iter().position(|&a| a == ac).unwrap_or(0)];
        let mut d = Driver { sched, model: &mut self.model, held: &mut self.held, round };
        let Some((mut first, t1)) = d.take(ac, now) else { return };
        // Through the handle only while it is the one held (see `dequeue`).
        let served1 = d.dequeue(&mut first, t1, max_frames, airtime_us, !second && airtime_us % 2 == 0);
        let inner = if second {
            d.take(ac, now).map(|(mut other, t2)| {
                let served2 = d.dequeue(&mut other, t2, 1, airtime_us, false);
                (other, served2)
            })
        } else {
            None
        };
        if let Some(w) = wake.and_then(|w| Harness::pick(&d.model.txqs, w)) {
            if d.model.txqs[w].live {
                d.model.txqs[w].frames += 1;
            }
            assert_eq!(sched.wake_txq(d.model.txqs[w].id, now), d.model.wake(w), "wake while serving");
        }
        if let Some((other, served2)) = inner {
            d.give_back(other, served2, backlogged, now);
        }
        d.give_back(first, served1, backlogged, now);
    }

    /// Every observable counter agrees with the model, and the invariants hold.
    pub fn compare(&mut self) {
        let m = &self.model;
        for (i, st) in m.stations.iter().enumerate() {
            if !st.live {
                assert_eq!(self.sched.station_pending_us(st.id, Ac::Be), Err(SchedError::UnknownStation));
                continue;
            }
            assert_eq!(self.sched.weight(st.id).unwrap().get() as i64, st.weight);
            for ac in ACS {
                assert_eq!(self.sched.station_pending_us(st.id, ac).unwrap(), st.pending[ac.index()], "sta {i} {ac}");
                assert_eq!(self.sched.deficit_us(st.id, ac).unwrap(), st.deficit[ac.index()], "deficit sta {i} {ac}");
                assert_eq!(self.sched.station_limits(st.id, ac).unwrap(), st.limits[ac.index()]);
                assert_eq!(self.sched.effective_limits(st.id, ac).unwrap(), m.effective_limits(i, ac));
                assert_eq!(self.sched.airtime_check(st.id, ac).unwrap(), m.station_may_send(i, ac), "check sta {i}");
            }
        }
        for ac in ACS {
            assert_eq!(self.sched.ac_pending_us(ac), m.ac_pending(ac), "{ac} pending");
            assert_eq!(self.sched.phy_limit_us(ac), m.phy_limit(ac), "{ac} listed");
            let a = &m.acs[ac.index()];
            assert_eq!(self.sched.round(ac), (a.open, a.round), "{ac} round");
            let counters = self.sched.ac_counters(ac);
            assert_eq!(counters.skipped_selections, a.skipped, "{ac} skipped");
            assert_eq!((counters.departed_tx_us, counters.departed_rx_us), a.departed_us, "{ac} departed");
        }
        assert_eq!(self.sched.total_pending_us(), m.total_pending());
        assert_eq!(self.sched.aql_threshold_us(), m.threshold_us);
        assert_eq!(self.sched.airtime_flags(), m.flags);
        for ac in ACS {
            assert_eq!(self.sched.default_limits(ac), m.default_limits[ac.index()]);
        }
        for (i, t) in m.txqs.iter().enumerate() {
            assert_eq!(self.sched.txq_info(t.id).is_ok(), t.live);
            // S1: a live txq with frames is always listed (nothing is held between steps).
            assert!(!t.serving);
            assert!(!t.live || t.frames == 0 || m.is_listed(i), "lost backlog: {t:?}");
        }
        self.sched.check_invariants_quiescent().unwrap();
    }

    /// Completes everything and serves every frame left, then checks that nothing is pending.
    ///
    /// Limits of 0 stop a station (or, as PHY defaults, a whole AC) for good, as in
    /// mainline, so the drain first puts every limit back to the default.
    pub fn drain(&mut self) {
        let (low, high) = (AqlLimits::DEFAULT.low_us(), AqlLimits::DEFAULT.high_us());
        for ac in 0..ACS.len() {
            self.apply(&Op::SetDefaultLimits { ac, a: low, b: high });
            for sta in 0..self.model.stations.len() {
                self.apply(&Op::SetLimits { sta, ac, a: low, b: high });
            }
        }
        self.compare();
        for _ in 0..10_000 {
            while !self.held.is_empty() {
                self.apply(&Op::Complete { which: 0, register: true });
            }
            let busy: Vec<Ac> = ACS
                .into_iter()
                .filter(|&ac| self.model.txqs.iter().any(|t| t.live && t.frames > 0 && t.ac == ac))
                .collect();
            if busy.is_empty() {
                break;
            }
            self.apply(&Op::SetAqlEnabled(true));
            self.apply(&Op::SetAirtimeFlags { tx: true, rx: true });
            for ac in busy {
                let ac = ACS.iter().position(|&a| a == ac).unwrap();
                self.apply(&Op::StartRound { ac });
                for _ in 0..4 {
                    self.apply(&Op::Serve {
                        ac,
                        start: false,
                        max_frames: 8,
                        airtime_us: 500,
                        backlogged: true,
                        wake: None,
                        second: false,
                    });
                }
                self.compare();
            }
            self.apply(&Op::Advance { us: 1000 });
        }
        while !self.held.is_empty() {
            self.apply(&Op::Complete { which: 0, register: true });
        }
        assert!(self.model.txqs.iter().all(|t| !t.live || t.frames == 0), "every frame was served");
        for ac in Ac::ALL {
            assert_eq!(self.sched.ac_pending_us(ac), 0);
        }
        assert_eq!(self.sched.total_pending_us(), 0);
        for st in self.model.stations.iter().filter(|s| s.live) {
            for ac in Ac::ALL {
                assert_eq!(self.sched.station_pending_us(st.id, ac).unwrap(), 0);
            }
        }
        assert_eq!(self.sched.underflows(), 0);
        self.compare();
    }
}

/// The driver's side of a Serve step: the model and the held charges, with the
/// scheduler borrowed shared (as `Serving` handles need it).
struct Driver<'a> {
    sched: &'a Scheduler,
    model: &'a mut Model,
    held: &'a mut Vec<Held>,
    /// The driver's latest round on the AC served (one driver context: rounds follow
    /// one another).
    round: Option<Round>,
}

impl<'a> Driver<'a> {
    /// Takes the next txq from both; they must agree.
    fn take(&mut self, ac: Ac, now: Instant) -> Option<(Serving<'a>, usize)> {
        let real = self.round.and_then(|round| self.sched.next_txq(round, now));
        let expected = self.model.next_txq(ac);
        assert_eq!(real.as_ref().map(Serving::txq), expected.map(|t| self.model.txqs[t].id), "next_txq on {ac}");
        Some((real?, expected?))
    }

    /// Dequeues up to `max` frames of a held txq the way a driver does: the AQL check
    /// before each frame, then the charge (station txqs only; multicast is not charged).
    /// Serves up to `max` frames of txq `t`. With `through_handle`, charges go through the
    /// `Serving` handle (the AC's counter gets them on return; the handle's own check
    /// counts them), else through the scheduler; the model sees no difference, as long as
    /// the context holds no other handle with charges (each handle counts only its own).
    fn dequeue(
        &mut self,
        serving: &mut Serving<'_>,
        t: usize,
        max: u32,
        airtime_us: u32,
        through_handle: bool,
    ) -> Served {
        let ac = self.model.txqs[t].ac;
        let mut moved = 0;
        while moved < max && self.model.txqs[t].frames > 0 {
            let check = serving.airtime_check();
            let station = self.model.live_station_of(t);
            assert_eq!(check, station.is_none_or(|s| self.model.station_may_send(s, ac)), "airtime_check");
            if !check {
                break;
            }
            if let Some(s) = station {
                let id = self.model.stations[s].id;
                let charge = if through_handle {
                    serving.charge_us(airtime_us)
                } else {
                    self.sched.charge_us(id, ac, airtime_us)
                };
                let charge = charge.unwrap();
                assert_eq!(charge.airtime_us(), quantise(airtime_us));
                self.model.stations[s].pending[ac.index()] += charge.airtime_us();
                self.held.push(Held { charge, station: s });
            }
            self.model.txqs[t].frames -= 1;
            moved += 1;
        }
        let outcome = if moved > 0 { TxqReturn::Backlogged } else { TxqReturn::Stalled };
        Served { txq: t, outcome }
    }

    /// Returns a txq with the outcome a driver reports: Empty iff no frames are left; with
    /// frames left, Backlogged after progress (or Stalled, when the test says so), Stalled
    /// without progress.
    fn give_back(&mut self, serving: Serving<'_>, served: Served, backlogged: bool, now: Instant) {
        let outcome = match served.outcome {
            _ if self.model.txqs[served.txq].frames == 0 => TxqReturn::Empty,
            TxqReturn::Backlogged if !backlogged => TxqReturn::Stalled,
            other => other,
        };
        self.sched.return_txq(serving, outcome, now);
        self.model.return_txq(served.txq, outcome);
    }
}

/// The configuration the harness runs: [`MAX_STATIONS`] stations and [`MAX_TXQS`] txqs,
/// with the three policy switches chosen by the caller.
pub fn config(reset_on_close: bool, tx_no_pushback: bool, allow_over_limit: bool) -> Config {
    let mut c = Config::default();
    c.max_stations = MAX_STATIONS;
    c.max_txqs = MAX_TXQS;
    c.round_policy = if reset_on_close { RoundPolicy::ResetOnClose } else { RoundPolicy::KeepNumber };
    c.tx_no_pushback = tx_no_pushback;
    c.over_limit = if allow_over_limit { OverLimitPolicy::AllowLikeMainline } else { OverLimitPolicy::Refuse };
    c
}
