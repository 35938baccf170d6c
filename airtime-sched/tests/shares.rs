//! Airtime shares: always-backlogged stations, each frame's airtime registered when the
//! (simulated, FIFO) hardware completes it, converge to their weights. And the
//! TX_NO_PUSHBACK limits scale with the weight.

mod common;

use airtime_sched::{Ac, AqlLimits, Charge, Instant, Scheduler, StationId, TxqId, TxqReturn};
use common::*;
use std::collections::VecDeque;

struct Sta {
    id: StationId,
    txq: TxqId,
    frame_us: u32,
    served_us: u64,
}

/// A driver loop over a FIFO hardware ring of `ring_frames` descriptors that sends one
/// frame at a time. Every frame dequeued is charged its airtime and, at completion,
/// released and registered as transmitted airtime. Returns each station's share of the
/// airtime sent after a warm-up, in per-mille.
fn run(weights: &[u16], frame_us: &[u32], frames: usize, ring_frames: usize) -> Vec<u64> {
    let mut s = sched();
    let mut stas: Vec<Sta> = weights
        .iter()
        .zip(frame_us)
        .map(|(&weight, &frame_us)| {
            let (id, txq) = station_with_txq(&s, weight, Ac::Be);
            Sta { id, txq, frame_us, served_us: 0 }
        })
        .collect();
    let mut now = T0;
    for sta in &stas {
        s.wake_txq(sta.txq, now).unwrap(); // always backlogged from here on
    }
    let mut ring: VecDeque<(usize, Charge)> = VecDeque::new();
    let warmup = frames / 10;
    for sent in 0..frames {
        // Fill the ring with rounds while it has room.
        let mut rounds = 0;
        while ring.len() < ring_frames && rounds < 4 {
            rounds += 1;
            let round = s.start_round(Ac::Be);
            if !round.is_open() {
                break;
            }
            while ring.len() < ring_frames {
                let Some(serving) = s.next_txq(round, now) else { break };
                let i = stas.iter().position(|st| st.txq == serving.txq()).unwrap();
                let mut moved = 0;
                while ring.len() < ring_frames && serving.airtime_check() {
                    ring.push_back((i, s.charge_us(stas[i].id, Ac::Be, stas[i].frame_us).unwrap()));
                    moved += 1;
                }
                let outcome = if moved > 0 { TxqReturn::Backlogged } else { TxqReturn::Stalled };
                s.return_txq(serving, outcome, now);
            }
        }
        // The hardware sends the oldest frame.
        let (i, charge) = ring.pop_front().expect("the ring is never left empty");
        let us = charge.airtime_us();
        now = now.add_micros(u64::from(us));
        s.release(charge).unwrap();
        s.register_airtime(stas[i].id, Ac::Be, us, 0, now).unwrap();
        if sent >= warmup {
            stas[i].served_us += u64::from(us);
        }
    }
    for (_, charge) in ring.drain(..) {
        s.release(charge).unwrap();
    }
    s.check_invariants_quiescent().unwrap();
    assert_eq!(s.total_pending_us(), 0);
    let total: u64 = stas.iter().map(|st| st.served_us).sum();
    stas.iter().map(|st| st.served_us * 1000 / total).collect()
}

fn assert_shares(got: &[u64], want: &[u64], what: &str) {
    for (g, w) in got.iter().zip(want) {
        assert!(g.abs_diff(*w) <= 20, "{what}: shares {got:?} per mille, want {want:?} within 20");
    }
}

#[test]
fn weights_1024_to_256_split_airtime_80_20() {
    assert_shares(&run(&[1024, 256], &[1000, 1000], 40_000, 8), &[800, 200], "equal frames");
}

#[test]
fn weights_1024_to_256_split_airtime_80_20_with_unequal_frame_airtimes() {
    // The slow station's frames take four times the air: airtime, not frames, is shared.
    assert_shares(&run(&[1024, 256], &[400, 1600], 40_000, 8), &[800, 200], "fast heavy");
    assert_shares(&run(&[1024, 256], &[1600, 400], 40_000, 8), &[800, 200], "slow heavy");
}

#[test]
fn equal_weights_split_airtime_50_50() {
    assert_shares(&run(&[256, 256], &[1000, 1000], 40_000, 8), &[500, 500], "equal frames");
}

/// Measured before a fix: 530:469. With laps walked one at a time (boost disabled) the
/// split is within 2 points; see the report of the `schedtests` helper.
#[test]
fn equal_weights_split_airtime_50_50_with_unequal_frame_airtimes() {
    assert_shares(&run(&[256, 256], &[300, 2400], 40_000, 8), &[500, 500], "unequal frames");
}

#[test]
fn three_stations_split_airtime_by_weight() {
    // Weights at least one frame's airtime: a lap of top-ups always makes someone eligible.
    assert_shares(&run(&[2048, 1024, 1024], &[1000, 700, 1300], 60_000, 8), &[500, 250, 250], "2048:1024:1024");
}

/// Measured before a fix: 90:272:636.
#[test]
fn three_stations_split_airtime_by_small_weights() {
    assert_shares(&run(&[100, 300, 600], &[1000, 1000, 1000], 60_000, 8), &[100, 300, 600], "100:300:600");
}

/// Measured before a fix: 526:236:236.
#[test]
fn three_stations_split_airtime_by_weight_with_unequal_frame_airtimes() {
    assert_shares(&run(&[512, 256, 256], &[1000, 700, 1300], 60_000, 8), &[500, 250, 250], "512:256:256");
}

#[test]
fn tx_no_pushback_limits_stand_four_to_one_at_weights_1024_to_256() {
    let s = sched_with(|c| c.tx_no_pushback = true);
    let heavy = s.add_station(w(1024)).unwrap();
    let light = s.add_station(w(256)).unwrap();
    for ac in Ac::ALL {
        let h = s.effective_limits(heavy, ac).unwrap();
        let l = s.effective_limits(light, ac).unwrap();
        assert_eq!(h.low_us(), 4 * l.low_us(), "{ac}");
        assert_eq!(h.high_us(), 4 * l.high_us(), "{ac}");
        assert_eq!(l, s.station_limits(light, ac).unwrap(), "weight 256 is the unscaled limit");
        assert_eq!((h.low_us(), h.high_us()), (20_000, 48_000));
        assert_eq!(s.station_aql(heavy).unwrap().limits[ac], h, "the aql file shows applied limits");
    }
    // The AQL check applies the scaled limits: the light station is gated at a quarter of
    // the pending airtime the heavy one may have (threshold raised so the high limits apply).
    s.set_aql_threshold_us(u32::MAX);
    let c1 = s.charge_us(light, Ac::Be, 12_000).unwrap();
    let c2 = s.charge_us(heavy, Ac::Be, 47_996).unwrap();
    assert!(!s.airtime_check(light, Ac::Be).unwrap());
    assert!(s.airtime_check(heavy, Ac::Be).unwrap());
    s.release(c1).unwrap();
    s.release(c2).unwrap();
    // A weight change rescales at once; the floor keeps weight 1 above zero.
    s.set_weight(light, w(1)).unwrap();
    let floor = s.config().no_pushback_floor_us;
    assert_eq!(s.effective_limits(light, Ac::Be).unwrap(), AqlLimits::new(floor, floor).unwrap());
}

#[test]
fn without_tx_no_pushback_limits_do_not_depend_on_weight() {
    let s: Scheduler = sched();
    let heavy = s.add_station(w(1024)).unwrap();
    let light = s.add_station(w(256)).unwrap();
    assert_eq!(s.effective_limits(heavy, Ac::Be).unwrap(), AqlLimits::DEFAULT);
    assert_eq!(s.effective_limits(light, Ac::Be).unwrap(), AqlLimits::DEFAULT);
    let _ = Instant::ZERO;
}
