//! A tx hang and the reset that answers it: tokens whose tx-free does not come are
//! reported overdue but never released while the hardware may hold their frames (mt76
//! releases a token only at its tx-free or at a reset, `mt76_connac2_tx_token_put`, once
//! DMA has stopped); a reset releases them and their charges; a stray event after it
//! completes nothing, even once its id carries another station's frame.

mod common;

use airtime_mt76::Config;
use airtime_mt76::hal::{MT_TX_STATUS_SKB_TIMEOUT_US, TxFree, TxOutcome};
use airtime_mt76::sim_hal::SimConfig;
use airtime_sched::Ac;
use common::Bench;

#[test]
fn a_lost_tx_free_makes_its_tokens_overdue_and_the_reset_releases_them() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.radio.hal().lose_tx_free(2);
    b.send(q, 5, 1500);
    b.step(1000, 64);
    assert_eq!(b.radio.stats().completed, 3);
    assert_eq!(b.radio.tokens_in_use(), 2);
    let pending = b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap();
    assert!(pending > 0);
    // Not yet: the timeout runs from the DMA write.
    assert_eq!(b.radio.tokens_overdue(b.now), 0);
    b.now = b.now.add_micros(MT_TX_STATUS_SKB_TIMEOUT_US);
    assert_eq!(b.radio.tokens_overdue(b.now), 2);
    // The check releases nothing: the tokens, their frames and their charges stay.
    assert_eq!(b.radio.tokens_in_use(), 2);
    assert_eq!(b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap(), pending);
    b.collect();
    assert_eq!(b.done.len(), 3);
    // The driver's answer: stop and reset DMA, then flush the tokens.
    assert_eq!(b.reset().1, 2);
    b.collect();
    assert_eq!(b.outcomes(TxOutcome::Flushed), 2);
    assert_eq!(b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap(), 0);
    b.drain();
    b.check_invariants();
}

#[test]
fn tokens_still_in_the_dma_queue_are_overdue_but_never_released_by_the_check() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.send(q, 4, 1500);
    // The hardware has not fetched them (a busy channel, a dozing station's frames the
    // MAC holds): long past the timeout, their descriptors are still in the queue.
    b.now = b.now.add_micros(2 * MT_TX_STATUS_SKB_TIMEOUT_US);
    assert_eq!(b.radio.tokens_overdue(b.now), 4);
    let in_queue: Vec<_> = b.radio.hal().descs(Ac::Be).iter().map(|d| d.token).collect();
    assert_eq!(in_queue.len(), 4);
    assert_eq!(b.radio.tokens_in_use(), 4, "no token freed under a descriptor");
    b.collect();
    assert!(b.done.is_empty(), "no frame handed back while the hardware holds it");
    // The hardware gets to them: each completes once, by its own event.
    b.drain();
    assert_eq!(b.outcomes(TxOutcome::Acked), 4);
    b.check_invariants();
}

#[test]
fn a_late_tx_free_completes_its_frame_however_late() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.radio.hal().delay_tx_free(1, 2 * MT_TX_STATUS_SKB_TIMEOUT_US);
    b.send(q, 1, 1500);
    b.step(1000, 64);
    b.now = b.now.add_micros(MT_TX_STATUS_SKB_TIMEOUT_US);
    assert_eq!(b.radio.tokens_overdue(b.now), 1);
    // A new frame takes a token meanwhile; the late event then arrives.
    b.send(q, 1, 1500);
    b.drain();
    assert_eq!(b.radio.stats().stale_tx_free, 0);
    assert_eq!(b.outcomes(TxOutcome::Acked), 2, "each frame completed once, by its own event");
    b.check_invariants();
}

#[test]
fn a_late_tx_free_naming_another_station_leaves_the_token_alone() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.send(q, 1, 1500);
    let token = b.radio.hal().oldest_token(Ac::Be).unwrap();
    b.radio.hal().inject_tx_free(TxFree { token, wcid: Some(9), tries: 1, acked: true, rate: None });
    let pass = b.radio.tx_free(16, b.now);
    assert_eq!((pass.completed, pass.stale), (0, 1));
    assert_eq!(b.radio.tokens_in_use(), 1);
    b.drain();
    b.check_invariants();
}

#[test]
fn a_reset_flushes_every_token_and_a_stray_event_after_it_completes_nothing() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.send(q, 8, 1500);
    let token = b.radio.hal().oldest_token(Ac::Be).unwrap();
    assert_eq!(b.radio.tokens_in_use(), 8);
    assert_eq!(b.reset(), (8, 8));
    assert_eq!(b.radio.tokens_in_use(), 0);
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
    b.radio.hal().inject_tx_free(TxFree { token, wcid: Some(1), tries: 1, acked: true, rate: None });
    let pass = b.radio.tx_free(16, b.now);
    assert_eq!((pass.completed, pass.stale), (0, 1));
    b.drain();
    b.collect();
    assert_eq!(b.outcomes(TxOutcome::Flushed), 8);
    b.check_invariants();
}

/// The same stray event once the cyclic search has handed its id to another station's
/// frame: the WCID pair tells them apart, and the new frame completes once, by its own
/// event.
#[test]
fn a_stray_event_after_a_reset_frees_nothing_once_its_id_is_another_stations() {
    let config = Config { token_size: 16, token_free_thr: 2, ..Config::default() };
    let mut b = Bench::new(config, SimConfig::default());
    let s1 = b.station(1, 256);
    let q1 = b.txq(s1, 0);
    b.send(q1, 8, 1500);
    let token = b.radio.hal().oldest_token(Ac::Be).unwrap();
    assert_eq!(b.reset(), (8, 8));
    // Station 2's frames, one at a time, until the search comes back to the id.
    let s2 = b.station(2, 256);
    let q2 = b.txq(s2, 0);
    let mut sent = 0;
    while !b.radio.hal().descs(Ac::Be).iter().any(|d| d.token == token) {
        assert!(sent < 14, "the cyclic search never came back to {token:?}");
        b.send(q2, 1, 1500);
        sent += 1;
    }
    let reused = b.radio.hal().descs(Ac::Be).into_iter().find(|d| d.token == token).unwrap();
    assert_eq!(reused.wcid, Some(2), "the id now carries station 2's frame");
    let in_use = b.radio.tokens_in_use();
    b.radio.hal().inject_tx_free(TxFree { token, wcid: Some(1), tries: 1, acked: true, rate: None });
    let pass = b.radio.tx_free(16, b.now);
    assert_eq!((pass.completed, pass.stale), (0, 1), "station 1's stray event freed station 2's frame");
    assert_eq!(b.radio.tokens_in_use(), in_use);
    b.drain();
    b.collect();
    assert_eq!(b.outcomes(TxOutcome::Flushed), 8);
    assert_eq!(b.done.iter().filter(|(p, _)| p.txq == q2).count(), sent, "each of station 2's frames once");
    b.check_invariants();
}
