//! The sequential reference model of the scheduler and the harness that runs it beside
//! the real [`Scheduler`], step by step. Shared by the proptest state machine
//! (tests/model.rs) and the `scheduler_ops` fuzz target (fuzz/fuzz_targets), which
//! includes this same file with `#[path = ...]`: keep it free of test-framework
//! dependencies (no proptest), and refer to the crate only as `airtime_sched`.
//!
//! The model is meant to be read as documentation of the algorithm:
//! * each AC has a *front* and a *back* FIFO of txq entries; a txq has at most one entry;
//! * a round has a number and an open flag; closing keeps the number (or, with
//!   `RoundPolicy::ResetOnClose`, resets it to 0, mainline's old behaviour);
//! * `next_txq` pops front before back; a station txq goes through the DRR and AQL step
//!   (effective deficit = deficit - pending; a negative one is topped up by the weight
//!   and rotated to the back; a station failing its AQL check is rotated too); a txq
//!   already stamped with the current round ends the round and goes back to the tail of
//!   the front queue; otherwise it is stamped and handed out;
//! * after a full lap of rotations with an AQL-eligible station, the next lap applies at
//!   once the laps the fewest-laps eligible station still needs (the "boost"), to every
//!   entry of that lap, also those after the one it serves;
//! * `return_txq` puts a txq back at the front if it made progress, at the back if it
//!   stalled (even if woken while served); an empty one is put back only if woken
//!   meanwhile (front) or if its station is still paying off recent debt (back);
//! * `may_transmit` (pull mode) holds a txq without touching its list entry, which the
//!   next `next_txq` to meet it drops.
//!
//! The harness drives the scheduler like a driver would: per-txq frame counters stand in
//! for the queues, every dequeued frame of a station txq is charged after the AQL check,
//! and charges are released at "completion". [`Harness::compare`] checks every
//! `next_txq` answer, every counter and the round state against the model, and runs
//! `check_invariants`; [`Harness::drain`] completes and serves everything and checks that
//! no airtime stays pending.

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
/// `next_txq` gives up after this many laps (only concurrent changes can get there).
pub const MAX_LAPS: u32 = 3;

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
    ac: Ac,
    live: bool,
    /// One entry for it sits in its AC's front or back queue.
    queued: bool,
    /// Held by a server (only inside a Serve step).
    serving: bool,
    /// Woken while served: requeue at the front on return.
    woken: bool,
    /// The round in which it was last handed out.
    round: u64,
    /// The test's stand-in for the txq's frames.
    frames: u32,
}

#[derive(Clone, Debug, Default)]
struct ModelAc {
    front: VecDeque<usize>,
    back: VecDeque<usize>,
    round: u64,
    open: bool,
    skipped: u64,
}

/// One lap of `next_txq` over the listed entries.
struct Lap {
    /// Rotations that complete the lap: the listed count when the lap began.
    len: usize,
    seen: usize,
    /// Some station visited in this lap passed its AQL check.
    eligible: bool,
    /// Fewest further top-ups any AQL-eligible rotated station needs to reach zero.
    min_laps: Option<i64>,
    /// Top-ups to apply at once to each negative station visited in this lap.
    boost: i64,
}

impl Lap {
    fn start(listed: usize, boost: i64) -> Lap {
        Lap { len: listed.max(1), seen: 0, eligible: false, min_laps: None, boost }
    }
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
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

    fn listed(&self, ac: Ac) -> usize {
        self.acs[ac.index()].front.len() + self.acs[ac.index()].back.len()
    }

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

    /// The station AQL check (reference 3.5).
    fn station_may_send(&self, s: usize, ac: Ac) -> bool {
        !self.aql_enabled
            || aql::station_may_send(
                self.stations[s].pending[ac.index()],
                self.effective_limits(s, ac),
                self.total_pending(),
                self.threshold_us,
            )
    }

    fn is_active(&self, s: usize, ac: Ac) -> bool {
        self.now.saturating_sub(self.stations[s].last_active[ac.index()]) < self.config.active_window_us
    }

    fn mark_active(&mut self, s: usize, ac: Ac) {
        let last = &mut self.stations[s].last_active[ac.index()];
        *last = (*last).max(self.now);
    }

    fn live_station_of(&self, t: usize) -> Option<usize> {
        self.txqs[t].station.filter(|&s| self.stations[s].live)
    }

    fn occupied_station_slots(&self) -> usize {
        self.stations.iter().filter(|s| s.live || s.pending.iter().any(|&p| p > 0)).count()
    }

    fn occupied_txq_slots(&self) -> usize {
        self.txqs.iter().filter(|t| t.live || t.queued || t.serving).count()
    }

    /// A wake (after an enqueue): queue at the front unless queued or being served.
    fn wake(&mut self, t: usize) -> Result<(), SchedError> {
        if !self.txqs[t].live {
            return Err(SchedError::UnknownTxq);
        }
        let ac = self.txqs[t].ac;
        if self.txqs[t].serving {
            self.txqs[t].woken = true;
        } else if !self.txqs[t].queued {
            self.txqs[t].queued = true;
            self.acs[ac.index()].front.push_back(t);
        }
        if let Some(s) = self.live_station_of(t) {
            self.mark_active(s, ac);
        }
        Ok(())
    }

    /// A round opens (new number, never 0) under the per-AC PHY limit, else the AC closes.
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

    /// The DRR and AQL step for a station txq; true means "serve it".
    fn deficit_step(&mut self, s: usize, ac: Ac, lap: &mut Lap) -> bool {
        let aql_ok = self.station_may_send(s, ac);
        lap.eligible |= aql_ok;
        let st = &mut self.stations[s];
        let weight = st.weight.max(1);
        let mut d = st.deficit[ac.index()] - i64::from(st.pending[ac.index()]);
        if d < 0 && lap.boost > 0 {
            // Apply the laps nobody is served in at once, never past zero.
            let extra = ceil_div(-d, weight).min(lap.boost) * weight;
            st.deficit[ac.index()] += extra;
            d += extra;
        }
        if d < 0 {
            if aql_ok {
                let needed = ceil_div(-d, weight);
                lap.min_laps = Some(lap.min_laps.map_or(needed, |m| m.min(needed)));
            }
            st.deficit[ac.index()] += weight;
            return false;
        }
        aql_ok
    }

    /// Walked laps would have topped up the entries after the served one too.
    fn finish_boosted_lap(&mut self, ac: Ac, lap: &Lap) {
        let remaining = lap.len.saturating_sub(lap.seen + 1);
        for _ in 0..remaining {
            let Some(t) = self.acs[ac.index()].back.pop_front() else { return };
            if !self.txqs[t].live || self.txqs[t].serving {
                self.txqs[t].queued = false;
                continue;
            }
            if let Some(s) = self.live_station_of(t) {
                let st = &mut self.stations[s];
                let weight = st.weight.max(1);
                let d = st.deficit[ac.index()] - i64::from(st.pending[ac.index()]);
                if d < 0 {
                    st.deficit[ac.index()] += ceil_div(-d, weight).min(lap.boost) * weight;
                }
            }
            self.acs[ac.index()].back.push_back(t);
        }
    }

    fn next_txq(&mut self, ac: Ac) -> Option<usize> {
        if !self.acs[ac.index()].open {
            return None;
        }
        let number = self.acs[ac.index()].round;
        let mut lap = Lap::start(self.listed(ac), 0);
        let mut laps = 0;
        loop {
            let a = &mut self.acs[ac.index()];
            let t = match a.front.pop_front() {
                Some(t) => t,
                None => a.back.pop_front()?,
            };
            // An entry of a removed txq (or of one held elsewhere) is dropped when met.
            if !self.txqs[t].live || self.txqs[t].serving {
                self.txqs[t].queued = false;
                continue;
            }
            let rotate = match self.live_station_of(t) {
                Some(s) => !self.deficit_step(s, ac, &mut lap),
                None => false,
            };
            if rotate {
                // Rotated to the back; a full lap of rotations ends the call unless some
                // station was AQL-eligible, and the next lap applies the laps at once.
                self.acs[ac.index()].back.push_back(t);
                lap.seen += 1;
                if lap.seen >= lap.len {
                    laps += 1;
                    if !lap.eligible || laps >= MAX_LAPS {
                        return None;
                    }
                    let boost = lap.min_laps.map_or(0, |m| (m - 1).max(0));
                    lap = Lap::start(self.listed(ac), boost);
                }
                continue;
            }
            if lap.boost > 0 && self.live_station_of(t).is_some() {
                // The entries after this one in the boosted lap get the same laps of credit.
                self.finish_boosted_lap(ac, &lap);
            }
            if self.txqs[t].round == number {
                // Already served in this round: the round ends here. The entry goes back to
                // the front queue, at its tail (behind any other front entry).
                let a = &mut self.acs[ac.index()];
                a.front.push_back(t);
                a.skipped += 1;
                return None;
            }
            let txq = &mut self.txqs[t];
            txq.queued = false;
            txq.woken = false;
            txq.serving = true;
            txq.round = number;
            return Some(t);
        }
    }

    fn return_txq(&mut self, t: usize, outcome: TxqReturn) {
        let ac = self.txqs[t].ac;
        let station = self.live_station_of(t);
        let has_frames = outcome != TxqReturn::Empty;
        if has_frames && let Some(s) = station {
            self.mark_active(s, ac);
        }
        // An empty txq of a station still paying off recent debt stays listed (at the back).
        let keep_active = !has_frames
            && station.is_some_and(|s| {
                let st = &self.stations[s];
                st.deficit[ac.index()] - i64::from(st.pending[ac.index()]) < 0 && self.is_active(s, ac)
            });
        let txq = &mut self.txqs[t];
        let woken = txq.woken;
        txq.serving = false;
        txq.woken = false;
        if txq.live && !txq.queued && (has_frames || woken || keep_active) {
            txq.queued = true;
            if outcome == TxqReturn::Backlogged || (woken && outcome == TxqReturn::Empty) {
                self.acs[ac.index()].front.push_back(t);
            } else {
                self.acs[ac.index()].back.push_back(t);
            }
        }
    }

    fn register_airtime(&mut self, s: usize, ac: Ac, tx_us: u32, rx_us: u32) -> Result<(), SchedError> {
        if !self.stations[s].live {
            return Err(SchedError::UnknownStation);
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

    /// Pull mode (`may_transmit`): a station txq with a negative effective deficit is topped
    /// up and refused; while the AC is over its PHY limit the deficit is not looked at and
    /// the txq is refused or allowed by policy; a txq being served is refused. An allowed
    /// txq is held like one from `next_txq`, but its list entry (if any) stays where it is
    /// until a `next_txq` meets and drops it.
    fn may_transmit(&mut self, t: usize) -> Result<bool, SchedError> {
        if !self.txqs[t].live {
            return Err(SchedError::UnknownTxq);
        }
        let ac = self.txqs[t].ac;
        let over = self.aql_enabled && self.phy_limit(ac).is_some_and(|limit| self.ac_pending(ac) >= limit);
        if over && self.config.over_limit == OverLimitPolicy::Refuse {
            return Ok(false);
        }
        if let (false, Some(s)) = (over, self.txqs[t].station) {
            let st = &mut self.stations[s];
            if st.deficit[ac.index()] - i64::from(st.pending[ac.index()]) < 0 {
                st.deficit[ac.index()] += st.weight;
                return Ok(false);
            }
        }
        if self.txqs[t].serving {
            return Ok(false);
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
                    assert_eq!(got, Err(SchedError::StationsFull));
                }
            }
            Op::RemoveStation { sta } => {
                let Some(s) = Self::pick(&self.model.stations, sta) else { return };
                let got = self.sched.remove_station(self.model.stations[s].id);
                if self.model.stations[s].live {
                    got.unwrap();
                    self.model.stations[s].live = false;
                    for t in &mut self.model.txqs {
                        if t.station == Some(s) {
                            t.live = false;
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
                } else if self.model.occupied_txq_slots() < usize::from(MAX_TXQS) {
                    let id = got.expect("a free txq slot");
                    assert_eq!(self.sched.txq_info(id).unwrap(), (s.map(|s| self.model.stations[s].id), tid));
                    self.model.txqs.push(ModelTxq {
                        id,
                        station: s,
                        ac: tid.ac(),
                        live: true,
                        queued: false,
                        serving: false,
                        woken: false,
                        round: 0,
                        frames: 0,
                    });
                } else {
                    assert_eq!(got, Err(SchedError::TxqsFull));
                }
            }
            Op::RemoveTxq { txq } => {
                let Some(t) = Self::pick(&self.model.txqs, txq) else { return };
                let got = self.sched.remove_txq(self.model.txqs[t].id);
                if self.model.txqs[t].live {
                    got.unwrap();
                    self.model.txqs[t].live = false;
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
                assert_eq!(charge.station(), self.model.stations[station].id);
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
                assert_eq!(real.as_ref().map(Option::is_some).map_err(|e| *e), expected, "may_transmit");
                if let Ok(Some(mut serving)) = real {
                    let served = d.dequeue(&mut serving, t, max_frames, airtime_us, airtime_us.is_multiple_of(2));
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
        let served1 = d.dequeue(&mut first, t1, max_frames, airtime_us, !second && airtime_us.is_multiple_of(2));
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
            assert_eq!(self.sched.ac_counters(ac).skipped_selections, a.skipped, "{ac} skipped");
        }
        assert_eq!(self.sched.total_pending_us(), m.total_pending());
        assert_eq!(self.sched.aql_threshold_us(), m.threshold_us);
        assert_eq!(self.sched.airtime_flags(), m.flags);
        for ac in ACS {
            assert_eq!(self.sched.default_limits(ac), m.default_limits[ac.index()]);
        }
        for t in &m.txqs {
            assert_eq!(self.sched.txq_info(t.id).is_ok(), t.live);
            // S1: a live txq with frames is always listed (nothing is held between steps).
            assert!(!t.serving);
            assert!(!t.live || t.frames == 0 || t.queued, "lost backlog: {t:?}");
        }
        self.sched.check_invariants().unwrap();
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
