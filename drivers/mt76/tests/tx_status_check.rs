//! `mt76_tx_status_check` (`MT_TX_STATUS_SKB_TIMEOUT`) and the reset path's token flush
//! (`mt76_connac2_tx_token_put`): a lost tx-free must not hold a charge forever, and a late
//! one must not complete a frame twice.

mod common;

use airtime_mt76::hal::{MT_TX_STATUS_SKB_TIMEOUT_US, TxOutcome};
use airtime_sched::Ac;
use common::Bench;

#[test]
fn a_lost_tx_free_times_out_and_releases_the_charge() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.radio.hal().lose_tx_free(2);
    b.send(q, 5, 1500);
    b.step(1000, 64);
    assert_eq!(b.radio.stats().completed, 3);
    assert_eq!(b.radio.tokens_in_use(), 2);
    assert!(b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap() > 0);
    // Not yet: the timeout runs from the DMA write.
    assert_eq!(b.radio.tx_status_check(b.now, false), 0);
    b.now = b.now.add_micros(MT_TX_STATUS_SKB_TIMEOUT_US);
    assert_eq!(b.radio.tx_status_check(b.now, false), 2);
    b.collect();
    assert_eq!(b.outcomes(TxOutcome::TimedOut), 2);
    assert_eq!(b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap(), 0);
    b.drain();
    b.check_invariants();
}

#[test]
fn a_late_tx_free_after_the_timeout_frees_nothing() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.radio.hal().delay_tx_free(1, 2 * MT_TX_STATUS_SKB_TIMEOUT_US);
    b.send(q, 1, 1500);
    b.step(1000, 64);
    b.now = b.now.add_micros(MT_TX_STATUS_SKB_TIMEOUT_US);
    assert_eq!(b.radio.tx_status_check(b.now, false), 1);
    // Meanwhile a new frame takes a token; the late event then arrives.
    b.send(q, 1, 1500);
    b.drain();
    assert_eq!(b.radio.stats().stale_tx_free, 1, "the late event found its token empty");
    assert_eq!(b.outcomes(TxOutcome::TimedOut), 1);
    assert_eq!(b.outcomes(TxOutcome::Acked), 1, "the new frame completed once, by its own event");
    b.check_invariants();
}

#[test]
fn a_late_tx_free_naming_another_station_leaves_the_token_alone() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.send(q, 1, 1500);
    let token = b.radio.hal().oldest_token(Ac::Be).unwrap();
    b.radio.hal().inject_tx_free(airtime_mt76::hal::TxFree { token, wcid: Some(9), tries: 1, acked: true, rate: None });
    let pass = b.radio.tx_free(16, b.now);
    assert_eq!((pass.completed, pass.stale), (0, 1));
    assert_eq!(b.radio.tokens_in_use(), 1);
    b.drain();
    b.check_invariants();
}

#[test]
fn a_reset_flushes_every_token() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.send(q, 8, 1500);
    assert_eq!(b.radio.tokens_in_use(), 8);
    assert_eq!(b.radio.tx_status_check(b.now, true), 8);
    assert_eq!(b.radio.tokens_in_use(), 0);
    assert_eq!(b.radio.scheduler().total_pending_us(), 0);
    // The hardware's events for them, if any still come, are stale.
    b.drain();
    assert_eq!(b.radio.stats().stale_tx_free, 8);
    b.check_invariants();
}
