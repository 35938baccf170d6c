//! A driver's whole data path over the scheduler, at the scale of a busy AP: the ready
//! driver loop (`driver_loop::run_round`) and the hand-written one a driver may use
//! instead (`start_round`/`next_txq`, pull mode through `may_transmit`, charges
//! through the held txq or the scheduler, the handle finished, returned or dropped),
//! against a fault-injecting ring: a ring that fills up, says it has room and then
//! refuses (full, out of memory, other), with stations whose pricing fails, txqs that
//! stop, from a handful of stations to hundreds (every TID 0..=16, the management TID
//! included, and station-less txqs), stations and txqs added and removed while frames
//! are in flight, and completion passes released one by one or together
//! (`release_batch`, in passes of any size over any number of (station, AC) groups,
//! with the tokens kept raw as a C driver keeps them or not).
//!
//! After every operation: no frame is lost or duplicated (each is in exactly one
//! place: its txq, the ring, the driver's hands after a refusal, or completed), no
//! charge is lost (the charges in hand add up to the scheduler's pending airtime per
//! AC and per station), every release and every batch is clean, the station AQL check
//! answers what the AQL rule says, and `check_invariants` holds. At the end everything
//! is served and completed and no airtime stays pending.

#![no_main]

use airtime_sched::driver_loop::{RoundEnd, StationTable, TxqTable, run_round};
use airtime_sched::{
    Ac, AirtimeFlags, AqlLimits, BatchRelease, Charge, ChargeError, Config, Frame, Instant, OverLimitPolicy, PushError,
    Refusal, Ring, RingErrorKind, RoundPolicy, Scheduler, Serving, Station, StationErrorKind, StationId, Tid, Txq,
    TxqId, TxqReturn, Weight,
};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[path = "common/mod.rs"]
#[allow(dead_code)] // each target uses part of it
mod common;
use common::StoppedErr;
use std::collections::VecDeque;
use std::fmt::Write;

#[derive(Debug, PartialEq, Eq)]
struct F {
    id: u64,
    len: u32,
}

impl Frame for F {
    fn len_bytes(&self) -> u32 {
        self.len
    }
}

struct Q {
    frames: VecDeque<F>,
    stopped: bool,
}

impl Txq for Q {
    type Frame = F;
    type Error = StoppedErr;
    fn dequeue(&mut self, _: Instant) -> Result<Option<F>, StoppedErr> {
        if self.stopped {
            return Err(StoppedErr);
        }
        Ok(self.frames.pop_front())
    }
    fn peek_len(&self) -> Option<u32> {
        self.frames.front().map(|f| f.len)
    }
    // A field read, so the ready loop's turn ends on it (the default, "not known", is
    // the path of a queue behind a driver's callback: the C API's self-tests run it).
    fn is_known_empty(&self) -> bool {
        self.frames.is_empty()
    }
}

struct Sta {
    id: StationId,
    price_us: u32,
    fails: bool,
}

impl Station for Sta {
    type Error = StationErrorKind;
    fn station_id(&self) -> StationId {
        self.id
    }
    fn last_tx_rate(&self) -> Option<airtime_est::Rate> {
        None
    }
    fn expected_airtime_us(&self, _: u32, _: Ac) -> Result<u32, StationErrorKind> {
        if self.fails { Err(StationErrorKind::Other) } else { Ok(self.price_us) }
    }
}

struct Txqs(Vec<Option<Q>>);
impl TxqTable for Txqs {
    type Txq = Q;
    fn txq_mut(&mut self, id: TxqId) -> Option<&mut Q> {
        self.0.get_mut(id.index())?.as_mut()
    }
}

struct Stas(Vec<Option<Sta>>);
impl StationTable for Stas {
    type Station = Sta;
    fn station(&self, id: StationId) -> Option<&Sta> {
        self.0.get(id.index())?.as_ref().filter(|s| s.id == id)
    }
}

/// A ring of `room` slots whose pushes follow a fault script; `lie` makes `has_room`
/// say yes while full (a race with another path), so the push itself refuses.
struct FaultRing {
    room: usize,
    held: VecDeque<(F, Option<Charge>)>,
    faults: VecDeque<Fault>,
    lie: bool,
    refused: u64,
    /// The turn `start_turn` opened and `end_turn` has yet to close: every push is
    /// inside one.
    open: Option<TxqId>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Fault {
    Accept,
    Full,
    OutOfMemory,
    Other,
    /// The ring takes no more of the pushing txq's frames now (`RingErrorKind::TxqFull`).
    TxqFull,
}

impl Ring for FaultRing {
    type Frame = F;
    type Error = RingErrorKind;
    fn has_room(&self, _: Ac) -> bool {
        self.lie || self.held.len() < self.room
    }
    fn start_turn(&mut self, txq: TxqId, _: Option<StationId>, _: Ac) {
        assert_eq!(self.open.replace(txq), None, "a turn started inside another");
    }
    fn end_turn(&mut self, txq: TxqId, _: Ac) {
        assert_eq!(self.open.take(), Some(txq), "a turn ended that had not started");
    }
    fn push(&mut self, frame: F, charge: Option<Charge>) -> Result<(), PushError<F, RingErrorKind>> {
        assert!(self.open.is_some(), "a push outside a turn");
        self.push_frame(frame, charge)
    }
}

impl FaultRing {
    /// A push as the fault script says, from a turn or from the driver itself (a frame
    /// charged through the scheduler, outside any round).
    fn push_frame(&mut self, frame: F, charge: Option<Charge>) -> Result<(), PushError<F, RingErrorKind>> {
        let kind = match self.faults.pop_front().unwrap_or(Fault::Accept) {
            _ if self.held.len() >= self.room => Some(RingErrorKind::Full),
            Fault::Accept => None,
            Fault::Full => Some(RingErrorKind::Full),
            Fault::OutOfMemory => Some(RingErrorKind::OutOfMemory),
            Fault::Other => Some(RingErrorKind::Other),
            Fault::TxqFull => Some(RingErrorKind::TxqFull),
        };
        match kind {
            Some(error) => {
                self.refused += 1;
                Err(PushError { frame, charge, error })
            }
            None => {
                self.held.push_back((frame, charge));
                Ok(())
            }
        }
    }
}

/// One station as the input describes it.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct StaSpec {
    weight: u16,
    /// Airtime per frame in us (0: the station cannot price yet).
    price: u16,
    fails: bool,
    /// Bit t (0..=16): a txq on TID t (16 is the management TID).
    tids: u32,
}

const DEFAULT_SPEC: StaSpec = StaSpec { weight: 256, price: 100, fails: false, tids: 1 };

#[derive(Arbitrary, Debug)]
enum Population {
    /// Up to 8 stations, each described.
    Few(Vec<StaSpec>),
    /// `count` stations (up to 300), their descriptions cycled from `specs`.
    Many { count: u16, specs: Vec<StaSpec> },
}

#[derive(Arbitrary, Debug)]
struct Input {
    reset_on_close: bool,
    allow_over_limit: bool,
    tx_no_pushback: bool,
    room: u16,
    population: Population,
    /// TIDs of station-less txqs (at most 4).
    stationless: Vec<u8>,
    ops: Vec<Op>,
}

/// How a hand-written loop charges a dequeued frame.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Charging {
    /// `Serving::charge_frame` (priced by the station).
    Frame,
    /// `Serving::charge_us` with this many us.
    Us(u16),
    /// `Scheduler::charge_frame` while holding the handle (the AC counter at once).
    Scheduler,
    /// `Serving::charge_frame` with another station first (refused), then its own.
    WrongStationFirst,
}

/// How a hand-written loop ends its service.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum End {
    /// `Scheduler::return_txq` with what it saw.
    Return,
    /// `Serving::finish` with what it saw.
    Finish,
    /// `Serving::finish` with this outcome whatever it saw.
    Claim(Outcome),
    /// The handle is dropped (returned stalled at time 0).
    Drop,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Outcome {
    Backlogged,
    Stalled,
    Empty,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Enqueue {
        txq: u16,
        n: u8,
        len: u16,
    },
    /// `n` frames into each of `count` txqs from `first` on: traffic to many stations.
    EnqueueSpan {
        first: u16,
        count: u16,
        n: u8,
        len: u16,
    },
    Round {
        ac: u8,
        lie: bool,
    },
    /// A hand-written round: `start_round`, `next_txq` up to `txqs` times.
    /// `second`: pull mode asks for the held txq meanwhile (it must be refused).
    Serve {
        ac: u8,
        txqs: u8,
        frames: u8,
        charging: Charging,
        end: End,
        second: bool,
    },
    /// Pull mode: `may_transmit` on one txq, then the same service.
    Pull {
        txq: u16,
        frames: u8,
        charging: Charging,
        end: End,
    },
    /// A frame charged with no txq held (`Scheduler::charge_us`/`charge_frame`), pushed.
    ChargeDirect {
        sta: u16,
        ac: u8,
        us: Option<u16>,
        len: u16,
    },
    Faults(Vec<Fault>),
    /// The hardware completes `n` frames from the `skip`-th oldest on; `pass` 0
    /// releases them one by one, otherwise `release_batch` over passes of `pass`.
    Complete {
        n: u16,
        skip: u8,
        pass: u8,
        raw: bool,
        register: bool,
    },
    Resize {
        room: u16,
    },
    Stop {
        txq: u16,
        stopped: bool,
    },
    PriceFails {
        sta: u16,
        fails: bool,
    },
    AddStation(StaSpec),
    RemoveStation {
        sta: u16,
    },
    AddTxq {
        sta: Option<u16>,
        tid: u8,
    },
    RemoveTxq {
        txq: u16,
    },
    Advance {
        us: u32,
    },
    SetAql(bool),
    SetThreshold {
        us: u16,
    },
    SetWeight {
        sta: u16,
        weight: u16,
    },
    SetLimits {
        sta: u16,
        ac: u8,
        a: u16,
        b: u16,
    },
    SetDefaultLimits {
        ac: u8,
        a: u16,
        b: u16,
    },
    SetAirtimeFlags {
        tx: bool,
        rx: bool,
    },
    ResetAirtime {
        sta: u16,
    },
    RegisterAirtime {
        sta: u16,
        ac: u8,
        tx_us: u16,
        rx_us: u16,
    },
    AirtimeCheck {
        sta: u16,
        ac: u8,
    },
    Stats {
        sta: u16,
    },
    /// The driver gives a refused frame back to its txq (head) and releases its charge.
    Requeue,
    /// The driver drops its txq (its frames) without telling the scheduler: rounds
    /// still hand it out and must let it go.
    ForgetTxq {
        txq: u16,
    },
    /// The driver drops its record of a station without telling the scheduler: its
    /// txqs' frames cannot be priced and stay queued (the drain purges them).
    ForgetStation {
        sta: u16,
    },
    /// A handle of a removed txq or station is used: every call refuses it.
    Stale {
        k: u16,
    },
}

/// Most frames one input creates: bounds the run time of an input.
const MAX_FRAMES: u64 = 8192;
/// Most txqs the initial population gets (stations past it get none).
const MAX_SETUP_TXQS: usize = 640;

struct World {
    sched: Scheduler,
    d: Driver,
    ids: Vec<TxqId>,
    sta_ids: Vec<StationId>,
    /// Handles of removed txqs and stations.
    gone_txqs: Vec<TxqId>,
    gone_stas: Vec<StationId>,
    next_id: u64,
    created: u64,
    completed: u64,
    discarded: u64,
}

/// The driver's side: what a hand-written loop uses while it holds a txq (a handle
/// borrows the scheduler, so this is kept apart from it).
struct Driver {
    txqs: Txqs,
    stas: Stas,
    ring: FaultRing,
    /// Frames refused and not yet given back: (frame, charge, txq; none for a frame
    /// sent without a txq).
    refused: Vec<(F, Option<Charge>, Option<TxqId>)>,
    now: Instant,
}

fn ac_of(v: u8) -> Ac {
    Ac::ALL[usize::from(v) % Ac::COUNT]
}

fn limits(a: u16, b: u16) -> AqlLimits {
    AqlLimits::new(u32::from(a.min(b)), u32::from(a.max(b))).unwrap()
}

impl World {
    fn queued(&self) -> u64 {
        self.d.txqs.0.iter().flatten().map(|q| q.frames.len() as u64).sum()
    }

    fn frame(&mut self, len: u32) -> F {
        let f = F { id: self.next_id, len };
        self.next_id += 1;
        self.created += 1;
        f
    }

    fn pick_sta(&self, v: u16) -> Option<StationId> {
        (!self.sta_ids.is_empty()).then(|| self.sta_ids[usize::from(v) % self.sta_ids.len()])
    }

    fn pick_txq(&self, v: u16) -> Option<TxqId> {
        (!self.ids.is_empty()).then(|| self.ids[usize::from(v) % self.ids.len()])
    }

    /// Every frame is in exactly one place, and the charges in hand add up to the
    /// scheduler's pending airtime on each AC and for each station.
    fn check(&mut self) {
        let places = self.queued()
            + self.d.ring.held.len() as u64
            + self.d.refused.len() as u64
            + self.completed
            + self.discarded;
        assert_eq!(places, self.created, "a frame was lost or duplicated");
        let mut by_ac = [0u64; Ac::COUNT];
        // By slot: a slot takes a new station only once its charges are all released.
        let mut by_sta = vec![[0u64; Ac::COUNT]; self.d.stas.0.len()];
        for c in self
            .d
            .ring
            .held
            .iter()
            .filter_map(|(_, c)| c.as_ref())
            .chain(self.d.refused.iter().filter_map(|r| r.1.as_ref()))
        {
            by_ac[c.ac().index()] += u64::from(c.airtime_us());
            if let Some(sta) = c.station() {
                by_sta[sta.index()][c.ac().index()] += u64::from(c.airtime_us());
            }
        }
        for ac in Ac::ALL {
            assert_eq!(u64::from(self.sched.ac_pending_us(ac)), by_ac[ac.index()], "charges lost on {ac}");
        }
        for sta in &self.sta_ids {
            let held = by_sta[sta.index()];
            for ac in Ac::ALL {
                let pending = self.sched.station_pending_us(*sta, ac).unwrap();
                assert_eq!(u64::from(pending), held[ac.index()], "charges of {sta} lost on {ac}");
            }
        }
        assert_eq!(self.sched.underflows(), 0);
        self.sched.check_invariants_quiescent().unwrap();
    }

    /// Completes `n` frames from the `skip`-th oldest on: released one by one (`pass`
    /// 0) or in `release_batch` passes of `pass` charges.
    fn complete(&mut self, n: usize, skip: usize, pass: usize, raw: bool, register: bool) {
        let len = self.d.ring.held.len();
        let n = n.min(len);
        if n == 0 {
            return;
        }
        let from = skip % (len - n + 1);
        let done: Vec<(F, Option<Charge>)> = self.d.ring.held.drain(from..from + n).collect();
        self.completed += n as u64;
        let mut reports = Vec::new();
        let mut charges = Vec::new();
        for (_, charge) in done {
            let Some(c) = charge else { continue };
            if let Some(sta) = c.station() {
                reports.push((sta, c.ac(), c.airtime_us()));
            }
            // A C driver keeps the token raw in the frame's control block.
            let c = if raw { Charge::from_raw(c.into_raw()).expect("a raw token is never 0") } else { c };
            charges.push(c);
        }
        if pass == 0 {
            for c in charges {
                self.sched.release(c).expect("a clean release");
            }
        } else {
            let mut charges = charges.into_iter().peekable();
            while charges.peek().is_some() {
                let chunk: Vec<Charge> = charges.by_ref().take(pass).collect();
                let n = chunk.len() as u32;
                let done = self.sched.release_batch(chunk);
                assert_eq!(done, BatchRelease { released: n, unknown_station: 0, underflows: 0, other_radio: 0 }, "a pass of {n}");
                assert!(done.is_clean());
            }
        }
        if register {
            for (sta, ac, us) in reports {
                let _ = self.sched.register_airtime(sta, ac, us, 0, self.d.now);
            }
        }
    }

    fn round(&mut self, ac: Ac) {
        let before = self.d.ring.held.len();
        let uncharged_before = self.sched.ac_counters(ac).uncharged_frames;
        // The crate's own tables over slices, as a simple driver keeps them.
        let r = run_round(&self.sched, ac, self.d.now, &mut self.d.txqs.0[..], &self.d.stas.0[..], &mut self.d.ring);
        assert_eq!(r.frames as usize, self.d.ring.held.len() - before, "frames counted");
        // Every frame pushed without a charge (station-less ones: the table prices no
        // multicast) is counted by the scheduler, and no other uncharged frame is.
        let uncharged = self.d.ring.held.range(before..).filter(|(_, c)| c.is_none()).count() as u64;
        assert_eq!(self.sched.ac_counters(ac).uncharged_frames - uncharged_before, uncharged, "uncharged frames counted");
        match r.end {
            RoundEnd::Closed => assert_eq!((r.frames, r.txqs_served), (0, 0)),
            RoundEnd::RingFull => assert!(r.refused.is_none() && !self.d.ring.has_room(ac)),
            RoundEnd::Refused(kind) => {
                let refused = r.refused.as_ref().expect("a refused round hands the frame back");
                assert_eq!(refused.kind, kind);
            }
            RoundEnd::Exhausted => assert!(r.refused.is_none()),
            _ => {}
        }
        if let Some(x) = r.refused {
            self.d.refused.push((x.frame, x.charge, Some(x.txq)));
        }
    }

    fn requeue(&mut self) {
        let Some((frame, charge, txq)) = self.d.refused.pop() else { return };
        if let Some(c) = charge {
            self.sched.release(c).expect("a clean release");
        }
        match txq.and_then(|t| Some((t, self.d.txqs.0.get_mut(t.index())?.as_mut()?))) {
            Some((t, q)) => {
                q.frames.push_front(frame);
                let _ = self.sched.wake_txq(t, self.d.now);
            }
            None => self.discarded += 1,
        }
    }

    fn add_station(&mut self, spec: StaSpec) -> Option<StationId> {
        let id = self.sched.add_station(Weight::new(spec.weight.max(1)).unwrap()).ok()?;
        self.d.stas.0[id.index()] = Some(Sta { id, price_us: u32::from(spec.price), fails: spec.fails });
        self.sta_ids.push(id);
        for tid in 0..=16u8 {
            if spec.tids & (1 << tid) != 0 {
                self.add_txq(Some(id), tid);
            }
        }
        Some(id)
    }

    fn add_txq(&mut self, station: Option<StationId>, tid: u8) {
        let Ok(id) = self.sched.add_txq(station, Tid::new(tid % 17).unwrap()) else { return };
        self.d.txqs.0[id.index()] = Some(Q { frames: VecDeque::new(), stopped: false });
        self.ids.push(id);
    }

    /// Drops the driver's txqs the scheduler no longer has (their frames are discarded).
    fn forget_removed_txqs(&mut self) {
        let sched = &self.sched;
        let mut gone = Vec::new();
        self.ids.retain(|t| {
            let live = sched.txq_info(*t).is_ok();
            if !live {
                gone.push(*t);
            }
            live
        });
        for t in gone {
            if let Some(q) = self.d.txqs.0[t.index()].take() {
                self.discarded += q.frames.len() as u64;
            }
            self.gone_txqs.push(t);
        }
    }

    fn stats(&self, sta: Option<StationId>) {
        let mut text = String::new();
        let _ = write!(text, "{}{}", self.sched.phy_aql_pending(), self.sched.phy_aql_limits());
        for ac in Ac::ALL {
            let c = self.sched.ac_counters(ac);
            assert!(c.rounds_started >= self.sched.round(ac).1.min(1));
            let _ = self.sched.phy_limit_us(ac);
        }
        if let Some(sta) = sta {
            let aql = self.sched.station_aql(sta).unwrap();
            let airtime = self.sched.station_airtime(sta).unwrap();
            let _ = write!(text, "{aql}{airtime}");
            for ac in Ac::ALL {
                assert_eq!(aql.pending_us[ac], self.sched.station_pending_us(sta, ac).unwrap());
                assert_eq!(aql.limits[ac], self.sched.effective_limits(sta, ac).unwrap());
                assert_eq!(airtime.deficit_us[ac], self.sched.deficit_us(sta, ac).unwrap());
                let _ = self.sched.station_limits(sta, ac).unwrap();
            }
            assert_eq!(airtime.weight, self.sched.weight(sta).unwrap().get());
        }
        assert!(!text.is_empty());
    }
}

impl Driver {
    /// A hand-written service of a held txq: dequeue while the handle's AQL check
    /// allows, charge as `charging` says, push; then end it as `end` says. Returns
    /// whether the ring refused a frame (the caller's round stops then).
    fn serve(&mut self, sched: &Scheduler, mut serving: Serving<'_>, frames: u8, charging: Charging, end: End) -> bool {
        let id = serving.txq();
        let ac = serving.ac();
        let station = serving.station();
        assert_eq!(sched.txq_info(id).map(|(s, t)| (s, t.ac())), Ok((station, ac)));
        let mut progressed = false;
        let mut refused = false;
        self.ring.start_turn(id, station, ac);
        for _ in 0..frames % 16 {
            if !serving.airtime_check() {
                break;
            }
            let Some(q) = self.txqs.0.get_mut(id.index()).and_then(Option::as_mut) else { break };
            let Ok(Some(frame)) = q.dequeue(self.now) else { break };
            let sta = station.and_then(|s| self.stas.station(s));
            let charge = match (station, sta) {
                (None, _) if serving.station_removed() => {
                    assert_eq!(serving.charge_us(100), Err(ChargeError::StationRemoved));
                    None
                }
                (None, _) => {
                    // A station-less txq's frame goes to its AC's multicast budget, apart
                    // from the unicast counters this target checks; given straight back.
                    let before = sched.multicast_pending_us(ac);
                    let mc = serving.charge_us(100).expect("the multicast budget takes a charge");
                    assert!(mc.is_multicast() && mc.station().is_none());
                    sched.release(mc).expect("a multicast charge releases");
                    assert_eq!(sched.multicast_pending_us(ac), before);
                    None
                }
                // The driver has no record of it (never the case here).
                (Some(_), None) => None,
                (Some(_), Some(sta)) => {
                    let charged = match charging {
                        Charging::Frame => serving.charge_frame(sta, frame.len),
                        Charging::Us(us) => serving.charge_us(u32::from(us)),
                        Charging::Scheduler => sched.charge_frame(sta, ac, frame.len),
                        Charging::WrongStationFirst => {
                            let other = self.stas.0.iter().flatten().find(|o| o.id != sta.id);
                            if let Some(other) = other {
                                assert_eq!(serving.charge_frame(other, frame.len), Err(ChargeError::OtherStation));
                            }
                            serving.charge_frame(sta, frame.len)
                        }
                    };
                    Some(charged.expect("a live station is charged"))
                }
            };
            match self.ring.push(frame, charge) {
                Ok(()) => progressed = true,
                Err(PushError { frame, charge, .. }) => {
                    self.refused.push((frame, charge, Some(id)));
                    refused = true;
                    break;
                }
            }
        }
        self.ring.end_turn(id, ac);
        let backlogged =
            refused || self.txqs.0.get(id.index()).and_then(Option::as_ref).is_some_and(|q| !q.frames.is_empty());
        let seen = TxqReturn::after_turn(backlogged, progressed);
        match end {
            End::Return => sched.return_txq(serving, seen, self.now),
            End::Finish => serving.finish(seen, self.now),
            End::Claim(o) => serving.finish(
                match o {
                    Outcome::Backlogged => TxqReturn::Backlogged,
                    Outcome::Stalled => TxqReturn::Stalled,
                    Outcome::Empty => TxqReturn::Empty,
                },
                self.now,
            ),
            End::Drop => drop(serving),
        }
        refused
    }
}

fuzz_target!(|input: Input| {
    let specs: Vec<StaSpec> = match &input.population {
        Population::Few(v) => v.iter().take(8).copied().collect(),
        Population::Many { count, specs } => {
            let specs = if specs.is_empty() { &[DEFAULT_SPEC][..] } else { &specs[..] };
            (0..usize::from(*count % 301)).map(|i| specs[i % specs.len()]).collect()
        }
    };
    // `add_txq` looks for a free slot from the first one: thousands of txqs would make
    // the setup quadratic, so the population gets at most `MAX_SETUP_TXQS`.
    let txqs: usize = specs.iter().map(|s| (s.tids & 0x1ffff).count_ones() as usize).sum::<usize>().min(MAX_SETUP_TXQS);
    let mut config = Config::default();
    // Room for the population and some churn; the invariant check after every
    // operation is linear in the capacity.
    config.max_stations = specs.len() as u16 + 8;
    config.max_txqs = (txqs + 4 + 64) as u16;
    config.round_policy = if input.reset_on_close { RoundPolicy::ResetOnClose } else { RoundPolicy::KeepNumber };
    config.over_limit =
        if input.allow_over_limit { OverLimitPolicy::AllowLikeMainline } else { OverLimitPolicy::Refuse };
    config.tx_no_pushback = input.tx_no_pushback;
    let sched = Scheduler::new(config).unwrap();
    let mut w = World {
        sched,
        d: Driver {
            txqs: Txqs((0..config.max_txqs).map(|_| None).collect()),
            stas: Stas((0..config.max_stations).map(|_| None).collect()),
            ring: FaultRing {
                room: usize::from(input.room % 1025),
                held: VecDeque::new(),
                faults: VecDeque::new(),
                lie: false,
                refused: 0,
                open: None,
            },
            refused: Vec::new(),
            now: Instant::from_micros(1_000_000),
        },
        ids: Vec::new(),
        sta_ids: Vec::new(),
        gone_txqs: Vec::new(),
        gone_stas: Vec::new(),
        next_id: 0,
        created: 0,
        completed: 0,
        discarded: 0,
    };
    for spec in specs {
        let room = MAX_SETUP_TXQS.saturating_sub(w.ids.len());
        let mut tids = spec.tids & 0x1ffff;
        while tids.count_ones() as usize > room {
            tids &= tids - 1;
        }
        w.add_station(StaSpec { tids, ..spec }).expect("room for the population");
    }
    for &tid in input.stationless.iter().take(4) {
        w.add_txq(None, tid);
    }
    w.check();
    for op in input.ops.iter().take(256) {
        match *op {
            Op::Enqueue { txq, n, len } => {
                let Some(id) = w.pick_txq(txq) else { continue };
                let n = u64::from(n % 16).min(MAX_FRAMES - w.created);
                for _ in 0..n {
                    let f = w.frame(u32::from(len));
                    w.d.txqs.0[id.index()].as_mut().unwrap().frames.push_back(f);
                }
                w.sched.wake_txq(id, w.d.now).unwrap();
            }
            Op::EnqueueSpan { first, count, n, len } => {
                if w.ids.is_empty() {
                    continue;
                }
                for i in 0..usize::from(count).min(w.ids.len()) {
                    let id = w.ids[(usize::from(first) + i) % w.ids.len()];
                    let n = u64::from(n % 8 + 1).min(MAX_FRAMES - w.created);
                    for _ in 0..n {
                        let f = w.frame(u32::from(len));
                        w.d.txqs.0[id.index()].as_mut().unwrap().frames.push_back(f);
                    }
                    w.sched.wake_txq(id, w.d.now).unwrap();
                }
            }
            Op::Round { ac, lie } => {
                w.d.ring.lie = lie;
                w.round(ac_of(ac));
                w.d.ring.lie = false;
            }
            Op::Serve { ac, txqs, frames, charging, end, second } => {
                let ac = ac_of(ac);
                let round = w.sched.start_round(ac);
                assert_eq!(round.ac(), ac);
                assert_eq!(round.is_open(), round.number() != 0);
                for _ in 0..txqs % 8 + 1 {
                    let Some(serving) = w.sched.next_txq(round, w.d.now) else { break };
                    assert!(round.is_open());
                    if second {
                        // Another context's pull for the same txq: one server at a time (the
                        // single-server invariant). Refused; the PHY limit is checked before
                        // the holder, the deficit after it, so it is never topped up here.
                        let deficit = serving.station().map(|sta| w.sched.deficit_us(sta, ac));
                        let over = !common::under_phy_limit(&w.sched, ac);
                        let expected = if over && w.sched.config().over_limit == OverLimitPolicy::Refuse { Refusal::OverPhyLimit } else { Refusal::Served };
                        let why = w.sched.may_transmit(serving.txq(), w.d.now).unwrap().refusal();
                        assert_eq!(why, Some(expected), "a second server, or refused for another reason");
                        assert_eq!(serving.station().map(|sta| w.sched.deficit_us(sta, ac)), deficit, "a refused ask topped a deficit up");
                    }
                    if w.d.serve(&w.sched, serving, frames, charging, end) {
                        break;
                    }
                }
            }
            Op::Pull { txq, frames, charging, end } => {
                let Some(id) = w.pick_txq(txq) else { continue };
                if let Some(serving) = w.sched.may_transmit(id, w.d.now).expect("a live txq").granted() {
                    w.d.serve(&w.sched, serving, frames, charging, end);
                }
            }
            Op::ChargeDirect { sta, ac, us, len } => {
                let Some(id) = w.pick_sta(sta) else { continue };
                if w.created >= MAX_FRAMES {
                    continue;
                }
                let ac = ac_of(ac);
                let charge = match us {
                    Some(us) => w.sched.charge_us(id, ac, u32::from(us)),
                    None => w.sched.charge_frame(w.d.stas.station(id).unwrap(), ac, u32::from(len)),
                }
                .expect("a live station is charged");
                let f = w.frame(u32::from(len));
                if let Err(PushError { frame, charge, .. }) = w.d.ring.push_frame(f, Some(charge)) {
                    w.d.refused.push((frame, charge, None));
                }
            }
            Op::Faults(ref f) => w.d.ring.faults.extend(f.iter().take(16).copied()),
            Op::Complete { n, skip, pass, raw, register } => {
                w.complete(usize::from(n), usize::from(skip), usize::from(pass), raw, register)
            }
            Op::Resize { room } => w.d.ring.room = usize::from(room % 1025),
            Op::Stop { txq, stopped } => {
                if let Some(id) = w.pick_txq(txq) {
                    w.d.txqs.0[id.index()].as_mut().unwrap().stopped = stopped;
                }
            }
            Op::PriceFails { sta, fails } => {
                if let Some(id) = w.pick_sta(sta) {
                    w.d.stas.0[id.index()].as_mut().unwrap().fails = fails;
                }
            }
            Op::AddStation(spec) => {
                let _ = w.add_station(spec);
            }
            Op::RemoveStation { sta } => {
                if w.sta_ids.is_empty() {
                    continue;
                }
                let id = w.sta_ids.swap_remove(usize::from(sta) % w.sta_ids.len());
                w.sched.remove_station(id).unwrap();
                w.d.stas.0[id.index()] = None;
                w.gone_stas.push(id);
                // Its txqs go with it (the scheduler removed them).
                w.forget_removed_txqs();
                assert!(w.sched.station_pending_us(id, Ac::Be).is_err());
            }
            Op::AddTxq { sta, tid } => {
                let station = sta.and_then(|s| w.pick_sta(s));
                w.add_txq(station, tid);
            }
            Op::RemoveTxq { txq } => {
                if w.ids.is_empty() {
                    continue;
                }
                let id = w.ids.swap_remove(usize::from(txq) % w.ids.len());
                w.sched.remove_txq(id).unwrap();
                if let Some(q) = w.d.txqs.0[id.index()].take() {
                    w.discarded += q.frames.len() as u64;
                }
                w.gone_txqs.push(id);
            }
            Op::Advance { us } => w.d.now = w.d.now.add_micros(u64::from(us % 1_000_000)),
            Op::SetAql(on) => {
                w.sched.set_aql_enabled(on);
                assert_eq!(w.sched.aql_enabled(), on);
            }
            Op::SetThreshold { us } => {
                w.sched.set_aql_threshold_us(u32::from(us));
                assert_eq!(w.sched.aql_threshold_us(), u32::from(us));
            }
            Op::SetWeight { sta, weight } => {
                let Some(id) = w.pick_sta(sta) else { continue };
                let weight = Weight::new(weight.max(1)).unwrap();
                w.sched.set_weight(id, weight).unwrap();
                assert_eq!(w.sched.weight(id), Ok(weight));
            }
            Op::SetLimits { sta, ac, a, b } => {
                let Some(id) = w.pick_sta(sta) else { continue };
                w.sched.set_station_limits(id, ac_of(ac), limits(a, b)).unwrap();
                assert_eq!(w.sched.station_limits(id, ac_of(ac)), Ok(limits(a, b)));
            }
            Op::SetDefaultLimits { ac, a, b } => {
                w.sched.set_default_limits(ac_of(ac), limits(a, b));
                assert_eq!(w.sched.default_limits(ac_of(ac)), limits(a, b));
            }
            Op::SetAirtimeFlags { tx, rx } => {
                w.sched.set_airtime_flags(AirtimeFlags::new(tx, rx));
                assert_eq!(w.sched.airtime_flags(), AirtimeFlags::new(tx, rx));
            }
            Op::ResetAirtime { sta } => {
                let Some(id) = w.pick_sta(sta) else { continue };
                w.sched.reset_airtime(id).unwrap();
                let airtime = w.sched.station_airtime(id).unwrap();
                assert_eq!((airtime.tx_us, airtime.rx_us), (0, 0));
            }
            Op::RegisterAirtime { sta, ac, tx_us, rx_us } => {
                let Some(id) = w.pick_sta(sta) else { continue };
                w.sched.register_airtime(id, ac_of(ac), u32::from(tx_us), u32::from(rx_us), w.d.now).unwrap();
            }
            Op::AirtimeCheck { sta, ac } => {
                let Some(id) = w.pick_sta(sta) else { continue };
                let ac = ac_of(ac);
                // Nothing is held between operations: the check is the AQL rule over
                // the counters as they stand.
                let expected = !w.sched.aql_enabled()
                    || airtime_sched::aql::station_may_send(
                        w.sched.station_pending_us(id, ac).unwrap(),
                        w.sched.effective_limits(id, ac).unwrap(),
                        w.sched.total_pending_us(),
                        w.sched.aql_threshold_us(),
                    );
                assert_eq!(w.sched.airtime_check(id, ac), Ok(expected));
            }
            Op::Stats { sta } => w.stats(w.pick_sta(sta)),
            Op::Requeue => w.requeue(),
            Op::ForgetTxq { txq } => {
                if w.ids.is_empty() {
                    continue;
                }
                let id = w.ids.swap_remove(usize::from(txq) % w.ids.len());
                if let Some(q) = w.d.txqs.0[id.index()].take() {
                    w.discarded += q.frames.len() as u64;
                }
            }
            Op::ForgetStation { sta } => {
                if w.sta_ids.is_empty() {
                    continue;
                }
                // Its charges in hand stay counted per AC; it is no longer compared alone.
                let id = w.sta_ids.swap_remove(usize::from(sta) % w.sta_ids.len());
                w.d.stas.0[id.index()] = None;
            }
            Op::Stale { k } => {
                use airtime_sched::SchedError;
                if let Some(&t) = w.gone_txqs.get(usize::from(k) % w.gone_txqs.len().max(1)) {
                    // The slot may hold a new txq by now: only its own handle answers.
                    assert_eq!(w.sched.wake_txq(t, w.d.now), Err(SchedError::UnknownTxq));
                    assert_eq!(w.sched.may_transmit(t, w.d.now).err(), Some(SchedError::UnknownTxq));
                    assert_eq!(w.sched.remove_txq(t), Err(SchedError::UnknownTxq));
                    assert_eq!(w.sched.txq_info(t), Err(SchedError::UnknownTxq));
                }
                if let Some(&st) = w.gone_stas.get(usize::from(k) % w.gone_stas.len().max(1)) {
                    assert_eq!(w.sched.remove_station(st), Err(SchedError::UnknownStation));
                    assert_eq!(w.sched.add_txq(Some(st), Tid::BE), Err(SchedError::UnknownStation));
                    // Removed: its slot still draining (StationRemoved) or reused (UnknownStation).
                    let refused = w.sched.charge_us(st, Ac::Be, 100);
                    assert!(matches!(refused, Err(ChargeError::UnknownStation | ChargeError::StationRemoved)));
                    assert_eq!(w.sched.airtime_check(st, Ac::Be), Err(SchedError::UnknownStation));
                    assert_eq!(w.sched.set_weight(st, Weight::DEFAULT), Err(SchedError::UnknownStation));
                }
            }
        }
        w.check();
    }
    // Drain: a reliable ring, everything completed (in passes of a NAPI budget) and
    // served.
    w.d.ring.faults.clear();
    w.d.ring.room = 256;
    w.sched.set_aql_enabled(true);
    // Limits of 0 would hold a station back for good: the drain runs on the defaults.
    w.sched.set_aql_threshold_us(airtime_sched::DEFAULT_AQL_THRESHOLD_US);
    for ac in Ac::ALL {
        w.sched.set_default_limits(ac, AqlLimits::DEFAULT);
        for sta in &w.sta_ids {
            w.sched.set_station_limits(*sta, ac, AqlLimits::DEFAULT).unwrap();
        }
    }
    for q in w.d.txqs.0.iter_mut().flatten() {
        q.stopped = false;
    }
    for s in w.d.stas.0.iter_mut().flatten() {
        s.fails = false;
    }
    // Frames the ring refused go back to their txqs first: a txq whose station the
    // driver forgot cannot be priced, so the loop never sends its frames, and the driver
    // purges them, as it would with the station (refused ones included).
    while !w.d.refused.is_empty() {
        w.requeue();
    }
    for id in w.ids.clone() {
        let Ok((Some(st), _)) = w.sched.txq_info(id) else { continue };
        if w.d.stas.0[st.index()].is_none() {
            if let Some(q) = w.d.txqs.0[id.index()].as_mut() {
                w.discarded += q.frames.len() as u64;
                q.frames.clear();
            }
        }
    }
    for _ in 0..20_000 {
        while !w.d.refused.is_empty() {
            w.requeue();
        }
        w.complete(usize::MAX, 0, 64, true, true);
        if w.queued() == 0 {
            break;
        }
        for ac in Ac::ALL {
            w.round(ac);
        }
        for id in w.ids.clone() {
            if w.d.txqs.0[id.index()].as_ref().is_some_and(|q| !q.frames.is_empty()) {
                let _ = w.sched.wake_txq(id, w.d.now);
            }
        }
        w.d.now = w.d.now.add_micros(1000);
        w.check();
    }
    w.complete(usize::MAX, 0, 64, true, true);
    w.check();
    assert_eq!(w.queued(), 0, "frames left after the drain");
    assert_eq!(w.sched.total_pending_us(), 0);
    assert_eq!(w.completed + w.discarded, w.created);
});
