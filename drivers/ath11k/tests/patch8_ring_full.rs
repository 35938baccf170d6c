//! Patch 8: a round ends when the ring has no room, checked before dequeue, and a
//! frame the ring refuses after dequeue is kept (its charge released while it waits,
//! so it cannot hold its own station back) and charged once when it is sent.

mod common;

use airtime_ath11k::hal::{RingId, TxStatus};
use airtime_ath11k::sim_hal::SimConfig;
use airtime_ath11k::{Config, RoundEnd};
use airtime_sched::{Ac, RingErrorKind};
use common::Bench;

fn small_ring(ring: u32) -> Bench {
    let mut sim = SimConfig::default();
    sim.tcl_ring_size = ring;
    let mut config = Config::default();
    config.aql = false;
    Bench::new(config, sim)
}

fn done_seqs(b: &Bench) -> Vec<u64> {
    b.done_seqs()
}

#[test]
fn a_full_ring_ends_the_round_loses_no_frame_and_the_txq_resumes_after_the_next_completion() {
    let mut b = small_ring(4);
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    let r = b.send(q, 10, 1500, 0);
    assert_eq!((r.frames, r.end, r.holding), (4, Some(RoundEnd::RingFull), false));
    // The frame that met the shortage was not dequeued: it heads its txq, uncharged.
    assert_eq!(b.txq_front(q), Some(4));
    assert_eq!(b.frames_accounted(), 10);
    assert_eq!(b.radio.dp_stats().flushed, 0);
    let charged = b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap();
    b.step(0, 64, 0); // the firmware takes the four descriptors
    assert_eq!(b.queued(), 6, "nothing restarts the txq before a completion");
    let pass = b.step(1000, 64, 0);
    assert_eq!(pass.work_done, 4);
    assert_eq!(pass.frames_pushed, 4, "the completion's round resumed the txq");
    assert!(b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap() <= charged);
    b.drain(64, 0);
    assert_eq!(done_seqs(&b), (0..10).collect::<Vec<_>>(), "every frame, in order");
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
}

#[test]
fn a_refused_push_keeps_the_frame_for_the_next_round_and_charges_it_once_when_sent() {
    for kind in [RingErrorKind::OutOfMemory, RingErrorKind::Other] {
        let mut b = small_ring(64);
        let s = b.station(1, 256);
        let q = b.txq(s, 0);
        b.radio.hal().fail_enqueues(RingId::for_cpu(0), [kind]);
        let r = b.send(q, 5, 1500, 0);
        assert_eq!((r.frames, r.end, r.holding), (0, Some(RoundEnd::Refused(kind)), true));
        assert_eq!(b.radio.held_frames(), 1);
        assert_eq!(b.queued(), 4);
        let one = b.radio.config().sched.unknown_rate_charge_us & !3;
        assert_eq!(
            b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap(),
            0,
            "the held frame is not in flight: its charge is released while it waits"
        );
        assert_eq!(b.radio.dp_stats().release_errors, 0);
        assert_eq!(b.radio.outstanding_msdus(), 0, "its MSDU id was given back");
        let r = b.radio.wake_tx_queue(q, 0, b.now).unwrap();
        assert_eq!((r.frames, r.holding), (5, false));
        assert_eq!(b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap(), 5 * one, "charged once each");
        b.drain(64, 0);
        assert_eq!(done_seqs(&b), (0..5).collect::<Vec<_>>(), "the held frame went first");
        assert_eq!(b.radio.scheduler().total_pending_us(), 0);
        assert_eq!(b.radio.dp_stats().held_for_retry, 1);
    }
}

#[test]
fn a_held_frame_waits_while_the_ring_has_no_room() {
    let mut b = small_ring(2);
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.radio.hal().fail_enqueues(RingId::for_cpu(0), [RingErrorKind::OutOfMemory]);
    b.send(q, 1, 1500, 0);
    assert_eq!(b.radio.held_frames(), 1);
    let q2 = b.txq(b.radio.station_by_peer(1).unwrap(), 6);
    b.send(q2, 2, 200, 0); // VO fills the ring
    let r = b.radio.wake_tx_queue(q, 0, b.now).unwrap();
    assert_eq!((r.frames, r.end, r.holding), (0, Some(RoundEnd::RingFull), true));
    b.drain(64, 0);
    assert_eq!(b.done_len(), 3);
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
}

#[test]
fn a_held_frame_of_a_removed_station_is_released_and_reported_removed() {
    let mut b = small_ring(64);
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.radio.hal().fail_enqueues(RingId::for_cpu(0), [RingErrorKind::OutOfMemory]);
    b.send(q, 3, 1500, 0);
    let mut purged = 0;
    b.radio.remove_station(s, |txq| purged += txq.len()).unwrap();
    assert_eq!(purged, 2);
    assert_eq!(b.radio.held_frames(), 0);
    assert_eq!(b.done_len(), 1);
    assert_eq!(b.done_statuses()[0], TxStatus::Removed);
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
    b.radio.check_invariants().unwrap();
}

/// A radio of `max_tx_ring` rings of two descriptors each, `tcl_ring_retry` on and AQL
/// off, and a station's BE txq.
fn small_rings_with_retry(max_tx_ring: u8) -> (Bench, airtime_sched::TxqId) {
    let mut sim = SimConfig::default();
    sim.tcl_ring_size = 2;
    let mut config = Config::default();
    config.aql = false;
    config.tcl_ring_retry = true;
    config.max_tx_ring = max_tx_ring;
    let mut b = Bench::new(config, sim);
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    (b, q)
}

#[test]
fn with_tcl_ring_retry_a_full_ring_spills_into_the_next_ones() {
    let (mut b, q) = small_rings_with_retry(3);
    let r = b.send(q, 7, 1500, 1);
    assert_eq!((r.frames, r.end), (6, Some(RoundEnd::RingFull)));
    for ring in RingId::ALL {
        assert_eq!(b.radio.hal().ring_len(ring), 2);
    }
}

/// Hardware with one TX ring (`max_tx_ring` 1, QCA6390 and WCN6855): every CPU's frames
/// go to ring 0, a retry has no other ring to spill into, and only ring 0 is counted.
#[test]
fn with_one_tx_ring_every_cpu_sends_on_ring_0() {
    let (mut b, q) = small_rings_with_retry(1);
    let r = b.send(q, 3, 1500, 2);
    assert_eq!((r.frames, r.end), (2, Some(RoundEnd::RingFull)), "no spill past the one ring");
    let rings: Vec<u32> = RingId::ALL.iter().map(|&ring| b.radio.hal().ring_len(ring)).collect();
    assert_eq!(rings, [2, 0, 0]);
    assert_eq!(b.radio.tx_rings().count(), 1);
    assert_eq!(b.radio.outstanding_msdus(), 2);
}

#[test]
fn a_radio_of_no_or_four_tx_rings_is_refused() {
    for rings in [0u8, 4] {
        let mut config = Config::default();
        config.max_tx_ring = rings;
        let made = airtime_ath11k::Ath11k::<_, common::Q>::new(
            airtime_ath11k::sim_hal::SimHal::new(SimConfig::default()),
            config,
        );
        assert_eq!(made.err(), Some(airtime_ath11k::Ath11kError::TxRings(rings)));
    }
}

/// A kept frame must not hold its own station back: with AQL limits below one frame's
/// charge, a charge kept with the refused frame would count against the station's limit
/// and its txq would never be served again (found by the fuzz target's corpus, with
/// several txqs of one station on one AC each keeping a frame).
#[test]
fn a_kept_frame_does_not_block_its_own_txq_under_tight_aql_limits() {
    let mut b = Bench::default();
    b.radio.set_aql_threshold_us(0); // always the low limit
    let s = b.station(1, 256);
    let qs = [b.txq(s, 0), b.txq(s, 3)]; // two BE txqs of one station
    for ac in Ac::ALL {
        b.radio.set_station_limits(s, ac, airtime_sched::AqlLimits::new(1000, 1500).unwrap()).unwrap();
    }
    b.radio.hal().fail_enqueues(RingId::for_cpu(0), [RingErrorKind::Other, RingErrorKind::OutOfMemory]);
    for q in qs {
        let r = b.send(q, 3, 1500, 0);
        assert!(matches!(r.end, Some(RoundEnd::Refused(_))), "{r:?}");
    }
    assert_eq!(b.radio.held_frames(), 2);
    assert_eq!(b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap(), 0);
    b.drain(64, 0);
    assert_eq!(b.done_len(), 6, "every frame went out");
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
    assert_eq!(b.radio.dp_stats().release_errors, 0);
    b.radio.check_invariants().unwrap();
}

/// A push refused as full (another context's push took the last descriptor between the
/// round's check and its own) is a full ring: once the AC is marked blocked, the round
/// reads the ring again, and here it has room, so one more round sends the kept frame
/// first, in the same call (a completion pass that freed it may have missed the mark).
#[test]
fn a_push_refused_as_full_is_retried_at_once_when_the_ring_has_room_again() {
    let mut b = small_ring(64);
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.radio.hal().fail_enqueues(RingId::for_cpu(0), [RingErrorKind::Full]);
    let r = b.send(q, 5, 1500, 0);
    assert_eq!((r.frames, r.holding), (5, false), "{r:?}");
    assert_eq!(b.radio.held_frames(), 0);
    assert_eq!(b.radio.dp_stats().held_for_retry, 1);
    let one = b.radio.config().sched.unknown_rate_charge_us & !3;
    assert_eq!(b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap(), 5 * one, "charged once each");
    b.drain(64, 0);
    assert_eq!(done_seqs(&b), (0..5).collect::<Vec<_>>(), "the held frame went first");
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
}
