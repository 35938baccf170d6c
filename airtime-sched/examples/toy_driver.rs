//! A minimal driver: the file a driver author copies first.
//!
//! It implements the three plug-in traits — [`Txq`] (a FIFO per station and TID),
//! [`Station`] (prices frames from the last tx rate) and [`Ring`] (a toy hardware ring
//! of 1024 descriptors that transmits its frames in order, each taking the airtime it was
//! charged) — and runs scheduling rounds
//! from the two places a real driver does: the wake path (a frame was enqueued) and
//! the tx completion path (the hardware finished frames, so there is room and airtime
//! to account). Run it with `cargo run -p airtime-sched --example toy_driver`.

use airtime_est::{Bandwidth, Rate};
use airtime_sched::driver_loop::{Refused, run_round};
use airtime_sched::traits::{PushError, RingErrorKind, StationErrorKind};
use airtime_sched::{
    Ac, Charge, Config, Frame, Instant, ReleaseError, Ring, Scheduler, Station, StationId, Tid, Txq, Weight,
};
use std::collections::VecDeque;

/// A frame: its length and who it is for.
struct Packet {
    len: u32,
    station: StationId,
}

impl Frame for Packet {
    fn len_bytes(&self) -> u32 {
        self.len
    }
}

/// One (station, TID) queue: a plain FIFO (use `airtime_sched::fq_codel` in a real driver).
#[derive(Default)]
struct Fifo(VecDeque<Packet>);

impl Txq for Fifo {
    type Frame = Packet;
    type Error = core::convert::Infallible;

    fn dequeue(&mut self, _now: Instant) -> Result<Option<Packet>, Self::Error> {
        Ok(self.0.pop_front())
    }

    fn peek_len(&self) -> Option<u32> {
        self.0.front().map(|p| p.len)
    }
}

/// A peer with its last reported tx rate.
struct Peer {
    id: StationId,
    rate: Option<Rate>,
}

impl Station for Peer {
    type Error = StationErrorKind;

    fn station_id(&self) -> StationId {
        self.id
    }

    /// Frames are priced at it by the trait's default `expected_airtime_us`.
    fn last_tx_rate(&self) -> Option<Rate> {
        self.rate
    }
}

/// A toy ring of `depth` descriptors; the hardware sends the oldest frame first, each taking
/// the airtime it was charged (a real radio reports what it measured instead).
struct ToyRing {
    depth: usize,
    slots: VecDeque<(Packet, Option<Charge>)>,
    /// Airtime the radio has had since it finished its last frame, in us.
    air_credit_us: u32,
}

impl Ring for ToyRing {
    type Frame = Packet;
    type Error = RingErrorKind;

    fn has_room(&self, _ac: Ac) -> bool {
        self.slots.len() < self.depth
    }

    fn push(&mut self, frame: Packet, charge: Option<Charge>) -> Result<(), PushError<Packet, RingErrorKind>> {
        if self.slots.len() >= self.depth {
            return Err(PushError { frame, charge, error: RingErrorKind::Full });
        }
        self.slots.push_back((frame, charge));
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A shallow ring (16 descriptors) holds little, so the scheduler's order reaches
    // the air and the split follows the weights. A deep one (1024) lets both stations
    // keep their AQL budgets in flight, and the budgets start to decide: that is why
    // firmware-scheduled hardware needs TX_NO_PUSHBACK (`Config::tx_no_pushback`).
    for ring_depth in [16, 1024] {
        let shares = run(ring_depth, ring_depth > 16)?;
        println!(
            "ring of {ring_depth:4} descriptors: airtime fast {:.1} %, slow {:.1} % (weights 512:256)",
            shares[0], shares[1]
        );
    }
    Ok(())
}

/// Runs the toy radio with a ring of `ring_depth` descriptors for 2000 ticks of 100 us and returns each station's share of
/// the registered airtime, in per cent.
fn run(ring_depth: usize, verbose: bool) -> Result<[f64; 2], Box<dyn std::error::Error>> {
    // Config's builder starts from the defaults and refuses values out of range.
    let config = Config::builder().max_stations(8)?.max_txqs(32)?.build();
    let sched = Scheduler::new(config)?;
    // The driver's tables, indexed by the scheduler's handles (`TxqId::index`,
    // `StationId::index`); `driver_loop` implements its table traits for such slices.
    let mut txqs: Vec<Option<Fifo>> = (0..32).map(|_| None).collect();
    let mut peers: Vec<Option<Peer>> = (0..8).map(|_| None).collect();
    let mut ring = ToyRing { depth: ring_depth, slots: VecDeque::new(), air_credit_us: 0 };

    // Two stations: a fast one (VHT80 MCS9) with twice the weight, and a slow one (VHT20 MCS0).
    let mut txq_of = Vec::new();
    for (weight, rate) in
        [(512, Rate::vht(9, 1, Bandwidth::Mhz80, true)?), (256, Rate::vht(4, 1, Bandwidth::Mhz80, false)?)]
    {
        let sta = sched.add_station(Weight::new(weight)?)?;
        peers[sta.index()] = Some(Peer { id: sta, rate: Some(rate) });
        let txq = sched.add_txq(Some(sta), Tid::BE)?;
        txqs[txq.index()] = Some(Fifo::default());
        txq_of.push((sta, txq));
    }

    let mut now = Instant::ZERO;
    for tick in 0..2000u64 {
        now = Instant::from_micros(tick * 100);
        // Wake path: the stack enqueued a frame for each station; wake its txq and run a round.
        for &(sta, txq) in &txq_of {
            if let Some(q) = txqs[txq.index()].as_mut() {
                // Keep both stations backlogged (a bulk download each).
                while q.0.len() < 32 {
                    q.0.push_back(Packet { len: 1500, station: sta });
                }
            }
            sched.wake_txq(txq, now)?;
        }
        let report = run_round(&sched, Ac::Be, now, &mut txqs[..], &peers[..], &mut ring);
        drop_refused(&sched, report.refused)?;
        // Completion path: the radio had 100 us of air this tick; every frame it
        // finished has its charge released and its airtime registered, and a round
        // runs for the AC it reaped.
        ring.air_credit_us += 100;
        let mut reaped = false;
        while let Some((_, charge)) = ring.slots.front() {
            let airtime_us = charge.as_ref().map_or(0, Charge::airtime_us);
            if airtime_us > ring.air_credit_us {
                break;
            }
            ring.air_credit_us -= airtime_us;
            let Some((frame, charge)) = ring.slots.pop_front() else { break };
            if let Some(c) = charge {
                sched.release(c)?;
            }
            sched.register_airtime(frame.station, Ac::Be, airtime_us, 0, now)?;
            reaped = true;
        }
        if ring.slots.is_empty() {
            ring.air_credit_us = 0; // an idle radio banks no airtime
        }
        if reaped {
            let report = run_round(&sched, Ac::Be, now, &mut txqs[..], &peers[..], &mut ring);
            drop_refused(&sched, report.refused)?;
        }
    }

    if verbose {
        println!("after {now}, ring of {ring_depth}, the debugfs files:");
        for &(sta, _) in &txq_of {
            println!("station {sta}\n{}{}", sched.station_airtime(sta)?, sched.station_aql(sta)?);
        }
        print!("{}", sched.phy_aql_pending());
    }
    let tx =
        |i: usize| -> Result<f64, Box<dyn std::error::Error>> { Ok(sched.station_airtime(txq_of[i].0)?.tx_us as f64) };
    let (fast, slow) = (tx(0)?, tx(1)?);
    Ok([100.0 * fast / (fast + slow), 100.0 * slow / (fast + slow)])
}

/// A refused frame comes back with its charge. A real driver keeps it and pushes it
/// again after the next completion; the toy drops it, giving its charge back (no
/// completion: the frame never reached the air) so that nothing leaks.
fn drop_refused(sched: &Scheduler, refused: Option<Refused<Packet>>) -> Result<(), ReleaseError> {
    match refused.and_then(|r| r.charge) {
        Some(charge) => sched.give_back(charge),
        None => Ok(()),
    }
}
