//! The ready driver loop (`driver_loop::run_round`) against a fault-injecting ring: a
//! ring that fills up, says it has room and then refuses (full, out of memory, other),
//! with stations whose pricing fails, txqs that stop, and stations or txqs removed
//! while frames are in flight. No frame is lost or duplicated (each is in exactly one
//! place: its txq, the ring, the driver's hands after a refusal, or completed) and no
//! charge is lost (the ring's charges add up to the scheduler's pending airtime, and
//! everything returns to zero at the end).

#![no_main]

use airtime_sched::driver_loop::{RoundEnd, StationTable, TxqTable, run_round};
use airtime_sched::{
    Ac, Charge, Config, Frame, Instant, PushError, Ring, RingErrorKind, Scheduler, Station, StationErrorKind,
    StationId, Tid, Txq, TxqErrorKind, TxqId, Weight,
};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use std::collections::VecDeque;

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

#[derive(Debug)]
struct StoppedErr;
impl airtime_sched::TxqError for StoppedErr {
    fn kind(&self) -> TxqErrorKind {
        TxqErrorKind::Stopped
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
    held: Vec<(F, Option<Charge>)>,
    faults: VecDeque<Fault>,
    lie: bool,
    refused: u64,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Fault {
    Accept,
    Full,
    OutOfMemory,
    Other,
}

impl Ring for FaultRing {
    type Frame = F;
    type Error = RingErrorKind;
    fn has_room(&self, _: Ac) -> bool {
        self.lie || self.held.len() < self.room
    }
    fn push(&mut self, frame: F, charge: Option<Charge>) -> Result<(), PushError<F, RingErrorKind>> {
        let kind = match self.faults.pop_front().unwrap_or(Fault::Accept) {
            _ if self.held.len() >= self.room => Some(RingErrorKind::Full),
            Fault::Accept => None,
            Fault::Full => Some(RingErrorKind::Full),
            Fault::OutOfMemory => Some(RingErrorKind::OutOfMemory),
            Fault::Other => Some(RingErrorKind::Other),
        };
        match kind {
            Some(error) => {
                self.refused += 1;
                Err(PushError { frame, charge, error })
            }
            None => {
                self.held.push((frame, charge));
                Ok(())
            }
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    room: u8,
    stations: Vec<(u16, u16, bool)>,
    txqs: Vec<(u8, u8)>,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Enqueue {
        txq: u8,
        n: u8,
        len: u16,
    },
    Round {
        ac: u8,
        lie: bool,
    },
    Faults(Vec<Fault>),
    Complete {
        n: u8,
        register: bool,
    },
    Resize {
        room: u8,
    },
    Stop {
        txq: u8,
        stopped: bool,
    },
    PriceFails {
        sta: u8,
        fails: bool,
    },
    RemoveTxq {
        txq: u8,
    },
    RemoveStation {
        sta: u8,
    },
    Advance {
        us: u32,
    },
    SetAql(bool),
    /// The driver gives a refused frame back to its txq (head) and releases its charge.
    Requeue,
}

struct World {
    sched: Scheduler,
    txqs: Txqs,
    stas: Stas,
    ids: Vec<TxqId>,
    sta_ids: Vec<StationId>,
    ring: FaultRing,
    /// Frames refused and not yet given back: (frame, charge, txq).
    refused: Vec<(F, Option<Charge>, TxqId)>,
    next_id: u64,
    created: u64,
    completed: u64,
    discarded: u64,
    now: Instant,
}

impl World {
    fn queued(&self) -> u64 {
        self.txqs.0.iter().flatten().map(|q| q.frames.len() as u64).sum()
    }

    /// Every frame is in exactly one place, and the charges in hand add up to the
    /// scheduler's pending airtime.
    fn check(&mut self) {
        let places =
            self.queued() + self.ring.held.len() as u64 + self.refused.len() as u64 + self.completed + self.discarded;
        assert_eq!(places, self.created, "a frame was lost or duplicated");
        let mut by_ac = [0u64; Ac::COUNT];
        for c in self
            .ring
            .held
            .iter()
            .filter_map(|(_, c)| c.as_ref())
            .chain(self.refused.iter().filter_map(|r| r.1.as_ref()))
        {
            by_ac[c.ac().index()] += u64::from(c.airtime_us());
        }
        for ac in Ac::ALL {
            assert_eq!(u64::from(self.sched.ac_pending_us(ac)), by_ac[ac.index()], "charges lost on {ac}");
        }
        assert_eq!(self.sched.underflows(), 0);
        self.sched.check_invariants().unwrap();
    }

    fn complete(&mut self, n: usize, register: bool) {
        let n = n.min(self.ring.held.len());
        for (_, charge) in self.ring.held.drain(..n) {
            self.completed += 1;
            if let Some(c) = charge {
                let (sta, ac, us) = (c.station(), c.ac(), c.airtime_us());
                self.sched.release(c).expect("a clean release");
                if register {
                    let _ = self.sched.register_airtime(sta, ac, us, 0, self.now);
                }
            }
        }
    }

    fn round(&mut self, ac: Ac) {
        let before = self.ring.held.len();
        let r = run_round(&self.sched, ac, self.now, &mut self.txqs, &self.stas, &mut self.ring);
        assert_eq!(r.frames as usize, self.ring.held.len() - before, "frames counted");
        assert!(r.uncharged <= r.frames + u32::from(r.refused.is_some()));
        match r.end {
            RoundEnd::Closed => assert_eq!((r.frames, r.txqs_served), (0, 0)),
            RoundEnd::RingFull => assert!(r.refused.is_none() && !self.ring.has_room(ac)),
            RoundEnd::Refused(kind) => {
                let refused = r.refused.as_ref().expect("a refused round hands the frame back");
                assert_eq!(refused.kind, kind);
            }
            RoundEnd::Exhausted => assert!(r.refused.is_none()),
            _ => {}
        }
        if let Some(x) = r.refused {
            self.refused.push((x.frame, x.charge, x.txq));
        }
    }

    fn requeue(&mut self) {
        let Some((frame, charge, txq)) = self.refused.pop() else { return };
        if let Some(c) = charge {
            self.sched.release(c).expect("a clean release");
        }
        match self.txqs.0.get_mut(txq.index()).and_then(Option::as_mut) {
            Some(q) => {
                q.frames.push_front(frame);
                let _ = self.sched.wake_txq(txq, self.now);
            }
            None => self.discarded += 1,
        }
    }
}

const ACS: [Ac; 4] = [Ac::Vo, Ac::Vi, Ac::Be, Ac::Bk];

fuzz_target!(|input: Input| {
    let mut config = Config::default();
    config.max_stations = 4;
    config.max_txqs = 8;
    let sched = Scheduler::new(config).unwrap();
    let mut w = World {
        sched,
        txqs: Txqs((0..8).map(|_| None).collect()),
        stas: Stas((0..4).map(|_| None).collect()),
        ids: Vec::new(),
        sta_ids: Vec::new(),
        ring: FaultRing {
            room: usize::from(input.room % 32),
            held: Vec::new(),
            faults: VecDeque::new(),
            lie: false,
            refused: 0,
        },
        refused: Vec::new(),
        next_id: 0,
        created: 0,
        completed: 0,
        discarded: 0,
        now: Instant::from_micros(1_000_000),
    };
    for &(weight, price, fails) in input.stations.iter().take(4) {
        let id = w.sched.add_station(Weight::new(weight.max(1)).unwrap()).unwrap();
        w.stas.0[id.index()] = Some(Sta { id, price_us: u32::from(price), fails });
        w.sta_ids.push(id);
    }
    for &(sta, tid) in input.txqs.iter().take(8) {
        let station = (!w.sta_ids.is_empty() && sta < 200).then(|| w.sta_ids[usize::from(sta) % w.sta_ids.len()]);
        let Ok(id) = w.sched.add_txq(station, Tid::new(tid % 8).unwrap()) else { continue };
        w.txqs.0[id.index()] = Some(Q { frames: VecDeque::new(), stopped: false });
        w.ids.push(id);
    }
    for op in input.ops.iter().take(256) {
        match op {
            Op::Enqueue { txq, n, len } => {
                if w.ids.is_empty() {
                    continue;
                }
                let id = w.ids[usize::from(*txq) % w.ids.len()];
                if let Some(q) = w.txqs.0[id.index()].as_mut() {
                    for _ in 0..n % 16 {
                        q.frames.push_back(F { id: w.next_id, len: u32::from(*len) });
                        w.next_id += 1;
                        w.created += 1;
                    }
                    w.sched.wake_txq(id, w.now).unwrap();
                }
            }
            Op::Round { ac, lie } => {
                w.ring.lie = *lie;
                w.round(ACS[usize::from(*ac) % 4]);
                w.ring.lie = false;
            }
            Op::Faults(f) => w.ring.faults.extend(f.iter().take(16).copied()),
            Op::Complete { n, register } => w.complete(usize::from(*n), *register),
            Op::Resize { room } => w.ring.room = usize::from(room % 32),
            Op::Stop { txq, stopped } => {
                if let Some(q) = w.ids.get(usize::from(*txq)).and_then(|id| w.txqs.0[id.index()].as_mut()) {
                    q.stopped = *stopped;
                }
            }
            Op::PriceFails { sta, fails } => {
                if let Some(s) = w.stas.0.get_mut(usize::from(*sta) % 4).and_then(Option::as_mut) {
                    s.fails = *fails;
                }
            }
            Op::RemoveTxq { txq } => {
                if w.ids.is_empty() {
                    continue;
                }
                let id = w.ids.swap_remove(usize::from(*txq) % w.ids.len());
                w.sched.remove_txq(id).unwrap();
                if let Some(q) = w.txqs.0[id.index()].take() {
                    w.discarded += q.frames.len() as u64;
                }
            }
            Op::RemoveStation { sta } => {
                if w.sta_ids.is_empty() {
                    continue;
                }
                let id = w.sta_ids.swap_remove(usize::from(*sta) % w.sta_ids.len());
                w.sched.remove_station(id).unwrap();
                w.stas.0[id.index()] = None;
                // Its txqs go with it (the scheduler removed them).
                let sched = &w.sched;
                let mut gone = Vec::new();
                w.ids.retain(|t| {
                    let live = sched.txq_info(*t).is_ok();
                    if !live {
                        gone.push(*t);
                    }
                    live
                });
                for t in gone {
                    if let Some(q) = w.txqs.0[t.index()].take() {
                        w.discarded += q.frames.len() as u64;
                    }
                }
            }
            Op::Advance { us } => w.now = w.now.add_micros(u64::from(us % 1_000_000)),
            Op::SetAql(on) => w.sched.set_aql_enabled(*on),
            Op::Requeue => w.requeue(),
        }
        w.check();
    }
    // Drain: a reliable ring, everything completed and served.
    w.ring.faults.clear();
    w.ring.room = 64;
    w.sched.set_aql_enabled(true);
    for q in w.txqs.0.iter_mut().flatten() {
        q.stopped = false;
    }
    for s in w.stas.0.iter_mut().flatten() {
        s.fails = false;
    }
    for _ in 0..2_000 {
        while !w.refused.is_empty() {
            w.requeue();
        }
        w.complete(usize::MAX, true);
        if w.queued() == 0 {
            break;
        }
        for ac in ACS {
            w.round(ac);
        }
        for id in w.ids.clone() {
            if w.txqs.0[id.index()].as_ref().is_some_and(|q| !q.frames.is_empty()) {
                let _ = w.sched.wake_txq(id, w.now);
            }
        }
        w.now = w.now.add_micros(1000);
        w.check();
    }
    w.complete(usize::MAX, true);
    w.check();
    assert_eq!(w.queued(), 0, "frames left after the drain");
    assert_eq!(w.sched.total_pending_us(), 0);
    assert_eq!(w.completed + w.discarded, w.created);
});
