//! Patch 1: every completion status releases the frame's charge.

mod common;

use airtime_ath11k::hal::{Msdu, MsduTable, RingId, TxCompletion, TxCompletionRing, TxStatus};
use airtime_ath11k::sim_hal::SimConfig;
use airtime_ath11k::{Config, TextBuf};
use airtime_sched::{Ac, TxqReturn};
use common::{Bench, Pkt};
use proptest::prelude::*;

#[test]
fn every_completion_status_releases_the_charge_and_hands_the_frame_back() {
    for status in TxStatus::ALL {
        let mut b = Bench::default();
        let sta = b.station(1, 256);
        let q = b.txq(sta, 0);
        b.radio.hal().script_statuses([status]);
        let r = b.send(q, 1, 1500, 0);
        assert_eq!(r.frames, 1);
        assert!(b.radio.scheduler().total_pending_us() > 0, "the frame is charged");
        b.drain(64, 0);
        assert_eq!(b.radio.scheduler().total_pending_us(), 0, "{status:?} released the charge");
        assert_eq!(b.done_len(), 1);
        assert_eq!(b.done_statuses()[0], status);
        assert_eq!(b.radio.dp_stats().completions[status.index()], 1);
        assert_eq!(b.radio.dp_stats().release_errors, 0);
        b.radio.check_invariants().unwrap();
    }
}

#[test]
fn a_completion_for_an_unknown_msdu_id_is_counted_and_releases_nothing() {
    let mut b = Bench::default();
    let sta = b.station(1, 256);
    let q = b.txq(sta, 0);
    b.send(q, 3, 1500, 0);
    let pending = b.radio.scheduler().total_pending_us();
    b.radio.hal().inject_completion(TxCompletion::new(RingId::for_cpu(0), 9999, TxStatus::Acked));
    let pass = b.radio.poll_tx_completions(64, 0, b.now);
    assert_eq!(pass.work_done, 1);
    assert!(pass.reaped.is_empty());
    assert_eq!(b.radio.dp_stats().unknown_msdu, 1);
    assert_eq!(b.radio.scheduler().total_pending_us(), pending);
}

/// `StatusSink::tx_completed`: each frame a completion finishes comes back with that
/// completion (its tag and status), in the completions' order; frames handed back by
/// anything else come through `tx_status`, untagged.
#[test]
fn each_completed_frame_comes_back_with_its_completion_and_no_other_frame_does() {
    let mut b = Bench::default();
    let sta = b.station(1, 256);
    let q = b.txq(sta, 0);
    // Every status, twice: a completion's status says which one it was.
    let script: Vec<TxStatus> = TxStatus::ALL.iter().chain(TxStatus::ALL.iter()).copied().collect();
    b.radio.hal().script_statuses(script.iter().copied());
    b.send(q, script.len() as u32, 1500, 0);
    b.drain(4, 0);
    let done = b.radio.hal().take_done_tagged();
    assert_eq!(done.len(), script.len());
    let mut last_seq = None;
    for (k, (pkt, status, tag)) in done.iter().enumerate() {
        // The firmware numbers its completions from 0, and a pass takes them in order.
        assert_eq!(*tag, Some(k as u32), "frame {k} came back with another completion's tag");
        assert_eq!(*status, script[k], "frame {k}: the status of its own completion");
        assert!(last_seq < Some(pkt.seq), "frames come back in the order they were sent");
        last_seq = Some(pkt.seq);
    }
    // Teardown's frames are no completion's: those in the hardware, and one a refused
    // descriptor left in the txq's retry slot, handed back at the txq's removal.
    b.send(q, 3, 1500, 0);
    b.radio.hal().fail_enqueues(RingId::for_cpu(0), [airtime_sched::RingErrorKind::OutOfMemory]);
    b.send(q, 1, 1500, 0);
    assert_eq!((b.radio.outstanding_msdus(), b.radio.held_frames()), (3, 1));
    let freed = b.radio.shutdown(|_| ());
    let done = b.radio.hal().take_done_tagged();
    assert_eq!((freed, done.len()), (4, 4));
    assert!(done.iter().all(|(_, s, t)| *s == TxStatus::Removed && t.is_none()), "{done:?}");
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
}

/// `complete_tx_iter_with`: the frames of a pass over the caller's own descriptors go to
/// the caller's closure, each with its descriptor (here tagged with its place in the
/// caller's array), in order and only up to the budget; none reaches the HAL's sink,
/// and their charges are released all the same.
#[test]
fn a_pass_hands_its_frames_to_the_callers_closure_with_their_descriptors() {
    let mut b = Bench::default();
    let sta = b.station(1, 256);
    let q = b.txq(sta, 0);
    b.radio.hal().script_statuses([TxStatus::Acked, TxStatus::NotAcked, TxStatus::TtlExpired, TxStatus::Acked]);
    b.send(q, 4, 1500, 0);
    b.now = b.now.add_micros(1);
    b.radio.hal().advance(b.now);
    b.now = b.now.add_micros(1_000_000);
    b.radio.hal().advance(b.now);
    let mut array = Vec::new();
    while let Some(c) = b.radio.hal().reap_tx_completion() {
        array.push(c.with_tag(array.len() as u32));
    }
    assert_eq!(array.len(), 4);
    let mut seen = Vec::new();
    let pending = b.radio.scheduler().total_pending_us();
    let radio = &b.radio;
    let pass = radio.complete_tx_iter_with(array.iter().copied(), 3, 0, b.now, |pkt, c| {
        // Handed over before its charge is released (with the pass's others).
        assert_eq!(radio.scheduler().total_pending_us(), pending, "a charge released before its frame came back");
        seen.push((pkt.seq, *c));
    });
    assert_eq!(pass.work_done, 3);
    assert_eq!(seen.iter().map(|(_, c)| *c).collect::<Vec<_>>(), array[..3], "each frame with its own descriptor");
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "in the order sent: {seen:?}");
    assert_eq!(b.done_len(), 0, "nothing went to the HAL's sink");
    // The last one, in the next pass; then nothing is pending.
    let pass =
        b.radio.complete_tx_iter_with(array[3..].iter().copied(), 3, 0, b.now, |pkt, c| seen.push((pkt.seq, *c)));
    assert_eq!((pass.work_done, seen.len()), (1, 4));
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
    assert_eq!(b.radio.dp_stats().release_errors, 0);
    b.radio.check_invariants().unwrap();
}

#[test]
fn teardown_releases_every_outstanding_and_held_charge() {
    let mut b = Bench::default();
    let sta = b.station(1, 256);
    let q = b.txq(sta, 0);
    b.radio.hal().fail_enqueues(RingId::for_cpu(0), [airtime_sched::RingErrorKind::OutOfMemory]);
    b.send(q, 1, 1500, 0);
    assert_eq!(b.radio.held_frames(), 1);
    b.radio.wake_tx_queue(q, 1, b.now).unwrap();
    b.send(q, 5, 1500, 1);
    assert!(b.radio.outstanding_msdus() > 0);
    let freed = b.radio.flush_outstanding();
    assert_eq!(freed, 6);
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
    assert_eq!(b.radio.outstanding_msdus(), 0);
    assert!(b.done_statuses().iter().all(|s| *s == TxStatus::Removed));
    b.radio.check_invariants().unwrap();
}

fn status() -> impl Strategy<Value = TxStatus> {
    (0u8..6).prop_map(|v| TxStatus::from_u8(v).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn pending_airtime_returns_to_zero_after_any_mix_of_completion_statuses(
        statuses in proptest::collection::vec(status(), 0..200),
        frames in proptest::collection::vec((0usize..3, 1u32..4, 60u32..3000), 1..40),
        budget in 1u32..80,
        ring_size in 2u32..64,
        msdu_capacity in 1u32..64,
        ooms in 0usize..4,
    ) {
        let mut sim = SimConfig::default();
        sim.tcl_ring_size = ring_size;
        sim.msdu_capacity = msdu_capacity;
        sim.completion_delay_us = 300;
        let mut b = Bench::new(Config::default(), sim);
        let stas: Vec<_> = (0..3u16).map(|p| b.station(p, 256)).collect();
        let txqs: Vec<_> = stas.iter().enumerate().map(|(i, s)| b.txq(*s, [0u8, 5, 6][i])).collect();
        b.radio.hal().script_statuses(statuses);
        b.radio.hal().fail_enqueues(RingId::for_cpu(0), core::iter::repeat_n(airtime_sched::RingErrorKind::OutOfMemory, ooms));
        let mut sent = 0u64;
        for (i, (who, n, len)) in frames.into_iter().enumerate() {
            b.send(txqs[who], n, len, (i % 3) as u32);
            sent += u64::from(n);
            prop_assert_eq!(b.frames_accounted(), sent, "no frame lost");
            b.step(50, budget, (i % 5) as u32);
            prop_assert_eq!(b.frames_accounted(), sent, "no frame lost");
        }
        b.drain(budget, 0);
        prop_assert_eq!(b.done_len(), sent);
        prop_assert_eq!(b.radio.scheduler().total_pending_us(), 0);
        for s in &stas {
            for ac in airtime_sched::Ac::ALL {
                prop_assert_eq!(b.radio.scheduler().station_pending_us(*s, ac).unwrap(), 0);
            }
        }
        prop_assert_eq!(b.radio.dp_stats().release_errors, 0);
        prop_assert_eq!(b.radio.scheduler().underflows(), 0);
        prop_assert!(b.radio.check_invariants().is_ok());
        // Every frame came back exactly once.
        let mut seqs: Vec<u64> = b.done_seqs();
        seqs.sort_unstable();
        seqs.dedup();
        prop_assert_eq!(seqs.len() as u64, sent);
        let mut text = [0u8; 2048];
        let mut t = TextBuf::new(&mut text);
        b.radio.write_dp_stats(&mut t);
        prop_assert!(!t.truncated());
    }
}

#[test]
fn frames_in_flight_of_a_removed_station_release_at_their_completion() {
    let mut b = Bench::default();
    let sta = b.station(1, 256);
    let q = b.txq(sta, 0);
    b.send(q, 4, 1500, 0);
    b.radio.hal().script_statuses([TxStatus::Removed; 4]);
    b.radio.remove_station(sta, drop).unwrap();
    b.txqs.clear();
    assert!(b.radio.scheduler().total_pending_us() > 0, "still in the hardware");
    b.drain(64, 0);
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
    assert_eq!(b.radio.dp_stats().release_errors, 0);
    assert_eq!(b.done_len(), 4);
    // The peer id and the scheduler slot can be used again.
    let again = b.station(1, 256);
    assert_eq!(b.radio.station_by_peer(1), Some(again));
    b.radio.check_invariants().unwrap();
}

/// A pass releases its charges together (`Scheduler::release_batch`), 32 at a time:
/// a pass of more than 32 completions over eight stations and two ACs releases them
/// all with no release error.
#[test]
fn a_pass_of_many_completions_releases_every_charge_in_batches() {
    let mut b = Bench::default();
    // AQL off while sending (charges are still counted), so every frame reaches the
    // hardware: with no rate report each is charged 2084 us, and AQL would hold most.
    b.radio.set_aql_enabled(false);
    for peer in 0..8 {
        let sta = b.station(peer, 256);
        for tid in [0, 5] {
            let q = b.txq(sta, tid); // BE, VI
            b.send(q, 10, 1500, u32::from(peer) % 3);
        }
    }
    b.radio.set_aql_enabled(true);
    let sent = b.radio.outstanding_msdus();
    assert!(sent > 2 * 32, "{sent} frames in the hardware");
    // The firmware takes every descriptor, then completes them all; one pass reaps them.
    b.now = b.now.add_micros(1);
    b.radio.hal().advance(b.now);
    b.now = b.now.add_micros(1_000_000);
    b.radio.hal().advance(b.now);
    assert_eq!(b.radio.hal().completions_waiting(), sent);
    let pass = b.radio.poll_tx_completions(sent, 0, b.now);
    assert_eq!(pass.work_done, sent);
    assert_eq!(b.radio.dp_stats().release_errors, 0);
    assert_eq!(b.done_len() as u32, sent);
    b.drain(64, 0);
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
    assert_eq!(b.radio.dp_stats().release_errors, 0);
    b.radio.check_invariants().unwrap();
}

/// Garbled charge tokens read back from frames' control blocks complete in one pass
/// with real ones: a token of a station the scheduler never had is counted as a release
/// error, one without charge units is an uncharged frame (0 us, nothing to release),
/// the real charges are released, and every frame is handed back.
#[test]
fn unreleasable_charge_tokens_are_counted_and_the_rest_released() {
    let mut b = Bench::default();
    let sta = b.station(1, 256);
    let q = b.txq(sta, 0);
    b.send(q, 3, 1500, 0);
    let ring = RingId::ALL[0];
    // No charge units; station slot 4095 generation 15; slot 100 generation 3.
    let bad = [0xffff_0000, u32::MAX, 0x3064_0001];
    let mut completions: Vec<TxCompletion> = bad
        .iter()
        .enumerate()
        .map(|(i, &charge_raw)| {
            let frame = Pkt { seq: 1000 + i as u64, txq: q, len: 1500 };
            let msdu_id = b.radio.hal().msdu_insert(ring, Msdu { frame, charge_raw, ac: Ac::Be }).ok().unwrap();
            TxCompletion::new(ring, msdu_id, TxStatus::Acked)
        })
        .collect();
    // The real frames too, in the same pass.
    b.now = b.now.add_micros(1);
    b.radio.hal().advance(b.now);
    b.now = b.now.add_micros(1_000_000);
    b.radio.hal().advance(b.now);
    while let Some(c) = b.radio.hal().reap_tx_completion() {
        completions.push(c);
    }
    assert_eq!(completions.len(), 6);
    let pass = b.radio.complete_tx_batch(&completions, u32::MAX, 0, b.now);
    assert_eq!(pass.work_done, 6);
    assert_eq!(b.radio.dp_stats().release_errors, 2);
    assert_eq!(b.radio.scheduler().total_pending_us(), 0, "the real charges were released");
    assert_eq!(b.done_len(), 6);
    b.radio.check_invariants().unwrap();
}

/// A txq served elsewhere at its station's removal is not handed back until that turn
/// ends and a reap runs; `txq_handed_back` says false until `on_txq` has returned, so a
/// driver whose stack frees the txq's memory at the removal knows when it may.
#[test]
fn a_txq_served_at_its_removal_is_handed_back_after_the_turn_and_a_reap() {
    let mut b = Bench::default();
    let sta = b.station(1, 256);
    let q = b.txq(sta, 0);
    assert!(!b.radio.txq_handed_back(q));
    // Another context holds the txq's turn (the C API's other CPU).
    let turn = b.radio.txq_table().claim(q).unwrap().granted().expect("idle: the turn is ours");
    let mut released = 0;
    b.radio.remove_station(sta, |_| released += 1).unwrap();
    assert_eq!(released, 0, "served: not handed back by the removal");
    assert!(!b.radio.txq_handed_back(q));
    assert_eq!(b.radio.reap_removed(|_| released += 1), 0, "still served");
    turn.finish(TxqReturn::Empty, b.now);
    let radio = &b.radio;
    let reaped = radio.reap_removed(|_| {
        assert!(!radio.txq_handed_back(q), "handed back only once on_txq has returned");
        released += 1;
    });
    assert_eq!((reaped, released), (1, 1));
    assert!(b.radio.txq_handed_back(q));
    b.txqs.clear();
}

/// The slot of a txq being handed back takes no new txq until `on_txq` returns: a
/// concurrent add cannot overwrite the "not handed back" mark (so `txq_handed_back`
/// never says true while the driver's callback still uses the txq), nor meet its
/// retry mark. Here the other contexts run from inside `on_txq`.
#[test]
fn a_txqs_slot_takes_no_new_txq_before_its_hand_back_returns() {
    let mut config = Config::default();
    config.sched = airtime_sched::Config::builder().max_txqs(1).unwrap().build();
    let mut b = Bench::new(config, SimConfig::default());
    let a = b.station(1, 256);
    let qa = b.txq(a, 0);
    let other = b.station(2, 256);
    let be = airtime_sched::Tid::BE;
    b.radio.remove_station(a, |_| ()).unwrap();
    let radio = &b.radio;
    assert!(radio.txq_handed_back(qa), "nobody served it: handed back by the removal");
    // Again, with the add racing the hand-back.
    let qb = radio.add_txq(Some(other), be, common::Q::default()).map_err(|e| e.0).unwrap();
    assert_eq!(qb.index(), qa.index());
    let turn = radio.txq_table().claim(qb).unwrap().granted().expect("idle");
    radio.remove_station(other, |_| ()).unwrap();
    turn.finish(TxqReturn::Empty, b.now);
    let third = radio.add_station(3, airtime_sched::Weight::DEFAULT).unwrap();
    let mut inside = None;
    let reaped = radio.reap_removed(|_| {
        let refused = radio.add_txq(Some(third), be, common::Q::default()).is_err();
        inside = Some((refused, radio.txq_handed_back(qb)));
    });
    assert_eq!((reaped, inside), (1, Some((true, false))), "the slot was still the old txq's");
    let qc = radio.add_txq(Some(third), be, common::Q::default()).map_err(|e| e.0).unwrap();
    assert_eq!(qc.index(), qb.index());
    assert!(radio.txq_handed_back(qb) && !radio.txq_handed_back(qc));
    b.txqs.clear();
}
