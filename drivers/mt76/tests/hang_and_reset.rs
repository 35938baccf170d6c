//! A tx hang and the reset that answers it: tokens whose tx-free does not come are
//! reported overdue but never released while the hardware may hold their frames (mt76
//! releases a token only at its tx-free or at a reset, `mt76_connac2_tx_token_put`, once
//! DMA has stopped); a reset releases them and their charges; a stray event after it
//! completes nothing.

mod common;

use airtime_mt76::hal::{MT_TX_STATUS_SKB_TIMEOUT_US, TxFree, TxOutcome};
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
