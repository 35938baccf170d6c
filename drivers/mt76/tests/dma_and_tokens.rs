//! `__mt76_tx_queue_skb` and the token table: a refused DMA write keeps the frame (its
//! charge given back until it is sent); `mt76_token_consume` blocks tx at `token_size - MT76_TOKEN_FREE_THR`
//! and `mt76_token_release` (from the tx-free event) unblocks it.

mod common;

use airtime_mt76::hal::{DmaError, MT76_TOKEN_FREE_THR};
use airtime_mt76::sim_hal::{SimConfig, SimHal};
use airtime_mt76::{Config, Mt76Error, RoundEnd};
use airtime_sched::{Ac, RingErrorKind};
use common::{Bench, Radio};

#[test]
fn a_refused_dma_write_keeps_the_frame_and_sends_it_first_next_turn() {
    for error in [DmaError::MapFailed, DmaError::Full] {
        let mut b = Bench::default();
        let s = b.station(1, 256);
        let q = b.txq(s, 0);
        b.radio.hal().fail_dma(Ac::Be, [error]);
        let r = b.send(q, 5, 1500);
        assert_eq!(r.frames, 0);
        let kind = if error == DmaError::Full { RingErrorKind::Full } else { RingErrorKind::OutOfMemory };
        assert_eq!(r.end, Some(RoundEnd::Refused(kind)));
        assert_eq!(b.radio.tokens_in_use(), 0, "its token was given back");
        assert_eq!(b.radio.stats().dma_refused, 1);
        let held = b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap();
        assert_eq!(held, 0, "the kept frame holds no charge: it cannot hold its own txq over a limit");
        // The next wake sends it first, charged once.
        let r = b.radio.wake_tx_queue(q, b.now).unwrap();
        assert_eq!(r.frames, 5);
        let order: Vec<u64> = b.radio.hal().descs(Ac::Be).iter().map(|d| d.token.0 as u64).collect();
        assert_eq!(order.len(), 5);
        b.drain();
        let seqs: Vec<u64> = b.done.iter().map(|(p, _)| p.seq).collect();
        assert_eq!(seqs, (0..5).collect::<Vec<_>>(), "the refused frame went first");
        b.check_invariants();
    }
}

#[test]
fn the_token_table_blocks_tx_near_full_and_the_tx_free_unblocks_it() {
    // 96 tokens: tx blocks at 96 - MT76_TOKEN_FREE_THR = 32 in use.
    let config = Config { token_size: 96, ..Config::default() };
    let mut b = Bench::new(config, SimConfig::default());
    b.radio.scheduler().set_aql_enabled(false);
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    let r = b.send(q, 50, 1500);
    assert_eq!(r.frames, 96 - MT76_TOKEN_FREE_THR);
    assert!(b.radio.tx_blocked());
    assert_eq!(r.end, Some(RoundEnd::RingFull));
    // Blocked: a wake sends nothing, though the DMA queue has room.
    assert_eq!(b.radio.wake_tx_queue(q, b.now).unwrap().frames, 0);
    let pass = b.step(1000, 256);
    assert!(pass.unblocked, "{pass:?}");
    assert_eq!(pass.frames_sent, 18, "the tx worker ran after the tx-free");
    b.drain();
    b.check_invariants();
}

#[test]
fn every_token_is_released_once_and_a_duplicate_tx_free_is_stale() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.send(q, 3, 1500);
    let first = b.radio.hal().oldest_token(Ac::Be).unwrap();
    b.drain();
    // The hardware repeats an event: the token holds nothing any more.
    b.radio.hal().inject_tx_free(airtime_mt76::hal::TxFree {
        token: first,
        wcid: Some(1),
        tries: 1,
        acked: true,
        rate: None,
    });
    let pass = b.radio.tx_free(16, b.now);
    assert_eq!((pass.completed, pass.stale), (0, 1));
    assert_eq!(b.radio.stats().stale_tx_free, 1);
    b.check_invariants();
}

/// A free threshold at or above the token count leaves no token to send with: a
/// configuration error, not an underflow of `token_size - token_free_thr`.
#[test]
fn a_free_threshold_not_below_the_token_count_is_a_config_error() {
    for (token_size, token_free_thr) in [(96, 96), (96, 97), (1, u32::MAX), (u32::MAX, u32::MAX), (0, 0)] {
        let config = Config { token_size, token_free_thr, ..Config::default() };
        let radio = Radio::new(SimHal::new(SimConfig::default()), config);
        assert!(matches!(radio, Err(Mt76Error::BadTokenConfig)), "{token_size} tokens, threshold {token_free_thr}");
    }
    // The largest threshold that leaves one token.
    let config = Config { token_size: 96, token_free_thr: 95, ..Config::default() };
    let mut b = Bench::new(config, SimConfig::default());
    b.radio.scheduler().set_aql_enabled(false);
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    assert_eq!(b.send(q, 4, 1500).frames, 1);
    assert!(b.radio.tx_blocked());
    b.drain();
    assert_eq!(b.done.len(), 4);
    b.check_invariants();
}
