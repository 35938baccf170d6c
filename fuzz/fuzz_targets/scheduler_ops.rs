//! Sequences of scheduler operations run on the real `Scheduler` and, step by step, on
//! the sequential reference model shared with the proptest state machine (the same
//! file, airtime-sched/tests/common/reference_model.rs). After every operation the
//! harness compares every answer and counter with the model and runs
//! `check_invariants`; at the end it completes and serves everything and checks that
//! no airtime stays pending.
//!
//! The ranges are wider than the proptest strategy's (weights to 65535, charges and
//! registered airtime to 65535 us, limits to 65535 us, thresholds to 65535 us).

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[allow(dead_code, unreachable_pub)]
#[path = "../../airtime-sched/tests/common/reference_model.rs"]
mod reference_model;

use reference_model::{ACS, Harness, Op, TIDS, config};

/// Most operations per input: keeps one execution short.
const MAX_OPS: usize = 256;

#[derive(Arbitrary, Debug)]
struct Input {
    reset_on_close: bool,
    tx_no_pushback: bool,
    allow_over_limit: bool,
    /// Start time: 0, small, or past the activity window.
    start: Start,
    ops: Vec<FuzzOp>,
}

#[derive(Arbitrary, Debug)]
enum Start {
    Zero,
    Small(u16),
    Late(u32),
}

#[derive(Arbitrary, Debug)]
enum FuzzOp {
    AddStation { weight: u16 },
    RemoveStation { sta: u8 },
    AddTxq { sta: Option<u8>, tid: u8 },
    RemoveTxq { txq: u8 },
    Enqueue { txq: u8, frames: u8 },
    StartRound { ac: bool },
    Serve { ac: bool, start: bool, max_frames: u8, airtime_us: u16, backlogged: bool, wake: Option<u8>, second: bool },
    Complete { which: u8, register: bool },
    RegisterAirtime { sta: u8, ac: bool, tx_us: u16, rx_us: u16 },
    SetWeight { sta: u8, weight: u16 },
    SetLimits { sta: u8, ac: bool, a: u16, b: u16 },
    Advance { us: u32 },
    SetAqlEnabled(bool),
    Pull { txq: u8, max_frames: u8, airtime_us: u16, backlogged: bool },
    SetDefaultLimits { ac: bool, a: u16, b: u16 },
    SetThreshold { us: u16 },
    SetAirtimeFlags { tx: bool, rx: bool },
    ResetAirtime { sta: u8 },
}

fn ac(b: bool) -> usize {
    usize::from(b) % ACS.len()
}

impl FuzzOp {
    fn to_op(&self) -> Op {
        match *self {
            FuzzOp::AddStation { weight } => Op::AddStation { weight: weight.max(1) },
            FuzzOp::RemoveStation { sta } => Op::RemoveStation { sta: sta.into() },
            FuzzOp::AddTxq { sta, tid } => Op::AddTxq { sta: sta.map(usize::from), tid: usize::from(tid) % TIDS.len() },
            FuzzOp::RemoveTxq { txq } => Op::RemoveTxq { txq: txq.into() },
            FuzzOp::Enqueue { txq, frames } => Op::Enqueue { txq: txq.into(), frames: u32::from(frames % 8) + 1 },
            FuzzOp::StartRound { ac: a } => Op::StartRound { ac: ac(a) },
            FuzzOp::Serve { ac: a, start, max_frames, airtime_us, backlogged, wake, second } => Op::Serve {
                ac: ac(a),
                start,
                max_frames: u32::from(max_frames % 8),
                airtime_us: u32::from(airtime_us.max(1)),
                backlogged,
                wake: wake.map(usize::from),
                second,
            },
            FuzzOp::Complete { which, register } => Op::Complete { which: which.into(), register },
            FuzzOp::RegisterAirtime { sta, ac: a, tx_us, rx_us } => {
                Op::RegisterAirtime { sta: sta.into(), ac: ac(a), tx_us: tx_us.into(), rx_us: rx_us.into() }
            }
            FuzzOp::SetWeight { sta, weight } => Op::SetWeight { sta: sta.into(), weight: weight.max(1) },
            FuzzOp::SetLimits { sta, ac: a, a: x, b: y } => {
                Op::SetLimits { sta: sta.into(), ac: ac(a), a: x.into(), b: y.into() }
            }
            FuzzOp::Advance { us } => Op::Advance { us: u64::from(us % 250_000) },
            FuzzOp::SetAqlEnabled(on) => Op::SetAqlEnabled(on),
            FuzzOp::Pull { txq, max_frames, airtime_us, backlogged } => Op::Pull {
                txq: txq.into(),
                max_frames: u32::from(max_frames % 5),
                airtime_us: u32::from(airtime_us.max(1)),
                backlogged,
            },
            FuzzOp::SetDefaultLimits { ac: a, a: x, b: y } => {
                Op::SetDefaultLimits { ac: ac(a), a: x.into(), b: y.into() }
            }
            FuzzOp::SetThreshold { us } => Op::SetThreshold { us: us.into() },
            FuzzOp::SetAirtimeFlags { tx, rx } => Op::SetAirtimeFlags { tx, rx },
            FuzzOp::ResetAirtime { sta } => Op::ResetAirtime { sta: sta.into() },
        }
    }
}

fuzz_target!(|input: Input| {
    let start = match input.start {
        Start::Zero => 0,
        Start::Small(us) => u64::from(us),
        Start::Late(us) => 1_000_000 + u64::from(us),
    };
    let mut h = Harness::new(config(input.reset_on_close, input.tx_no_pushback, input.allow_over_limit), start);
    h.compare();
    for op in input.ops.iter().take(MAX_OPS) {
        h.apply(&op.to_op());
        h.compare();
    }
    h.drain();
});
