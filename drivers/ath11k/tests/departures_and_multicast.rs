//! What the C API's reap and multicast budget stand on: a removed station is reported
//! drained once, only after its frames in the rings completed; station-less frames
//! priced at the multicast rate are bounded by their AC's multicast budget and kept
//! out of the stations' pending airtime.

mod common;

use airtime_ath11k::Config;
use airtime_est::Rate;
use airtime_sched::{Ac, Tid};
use common::{Bench, BenchTxq, Q, Shared};
use std::sync::Arc;

#[test]
fn a_removed_station_is_reported_drained_once_after_its_frames_complete() {
    let mut b = Bench::default();
    let (busy, idle) = (b.station(7, 256), b.station(9, 256));
    let q = b.txq(busy, 0);
    b.send(q, 4, 1500, 0);
    assert!(b.radio.outstanding_msdus() > 0);
    let mut reported = Vec::new();
    b.radio.remove_station_with(idle, drop, |p| reported.push(p)).unwrap();
    b.radio.remove_station_with(busy, drop, |p| reported.push(p)).unwrap();
    assert!(reported.is_empty(), "no earlier departure of these slots to report");
    // The idle one is drained already; the busy one has frames in the rings.
    assert_eq!(b.radio.reap_departed(|p| reported.push(p)), 1);
    assert_eq!(reported, [9]);
    b.drain(64, 0);
    assert_eq!(b.radio.reap_departed(|p| reported.push(p)), 1);
    assert_eq!(reported, [9, 7]);
    assert_eq!(b.radio.reap_departed(|p| reported.push(p)), 0, "each departure once");
}

#[test]
fn a_departure_no_reap_reported_is_reported_by_the_slots_next_removal() {
    // One station slot, so the next station takes the departed one's.
    let mut config = Config::default();
    config.sched.max_stations = 1;
    let mut b = Bench::new(config, Default::default());
    let first = b.station(3, 256);
    b.radio.remove_station_with(first, drop, |_| panic!("nothing earlier")).unwrap();
    // Drained at once (nothing in flight): the slot is reused by the next station.
    let second = b.station(4, 256);
    assert_eq!(second.index(), first.index(), "the scheduler reused the drained slot");
    let mut reported = Vec::new();
    b.radio.remove_station_with(second, drop, |p| reported.push(p)).unwrap();
    assert_eq!(reported, [3], "the displaced departure, reported by the removal");
    b.radio.reap_departed(|p| reported.push(p));
    assert_eq!(reported, [3, 4]);
}

/// A station-less txq on BE, registered with the bench.
fn multicast_txq(b: &mut Bench) -> airtime_sched::TxqId {
    let shared = Arc::new(Shared::default());
    let id = b.radio.add_txq(None, Tid::BE, Q(shared.clone())).map_err(|e| e.0).unwrap();
    b.txqs.push(BenchTxq { id, shared, accepted: 0 });
    id
}

#[test]
fn multicast_frames_at_the_multicast_rate_are_bounded_by_the_acs_budget() {
    let mut b = Bench::new(Config::default(), Default::default());
    let mc = multicast_txq(&mut b);
    // Uncharged by default, as mainline long did.
    b.send(mc, 4, 1500, 0);
    assert_eq!(b.radio.scheduler().multicast_pending_us(Ac::Be), 0);
    b.drain(64, 0);

    b.radio.set_multicast_rate(Some(Rate::legacy_ofdm(60).unwrap()));
    assert_eq!(b.radio.multicast_rate(), Some(Rate::legacy_ofdm(60).unwrap()));
    b.radio.scheduler().set_multicast_limit_us(Ac::Be, 5000);
    let round = b.send(mc, 32, 1500, 0);
    let pending = b.radio.scheduler().multicast_pending_us(Ac::Be);
    let per_frame = pending / round.frames;
    assert!(round.frames > 0 && round.frames < 32, "{round:?}");
    assert!(pending >= 5000 && pending - per_frame < 5000, "{} frames, {pending} us", round.frames);
    assert_eq!(b.radio.scheduler().txq_aql_pending_us(mc).unwrap(), pending);
    assert_eq!(b.radio.scheduler().total_pending_us(), 0, "kept out of the stations' airtime");
    b.drain(64, 0);
    assert_eq!(b.radio.scheduler().multicast_pending_us(Ac::Be), 0);
    assert!(b.idle());
}
