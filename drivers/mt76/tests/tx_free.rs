//! `mt7915_mac_tx_free` and `mt76_tx_status_*`: each frame completes with its tries,
//! ack and rate; the charge is released at tx-free; airtime comes from the WTBL
//! counters `mt7915_mac_sta_poll` reads (or, in mt76x02's way, from each frame's status).

mod common;

use airtime_est::{Bandwidth, Rate};
use airtime_mt76::hal::{AirtimeWords, TxOutcome, WTBL_AIRTIME_CLEAR_BIT};
use airtime_mt76::sim_hal::SimConfig;
use airtime_mt76::{AirtimeSource, Config};
use airtime_sched::Ac;
use common::Bench;

fn be_tx_us(b: &Bench, s: airtime_sched::StationId) -> u64 {
    b.radio.scheduler().station_airtime(s).unwrap().tx_us_per_ac[Ac::Be]
}

#[test]
fn each_frame_completes_with_its_tries_ack_and_rate() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    let rate = Rate::ht(3, Bandwidth::Mhz20, false).unwrap();
    b.radio.hal().set_rate(1, Some(rate));
    b.radio.hal().set_tries(1, 3, false);
    b.send(q, 2, 1500);
    b.drain();
    assert_eq!(b.done.len(), 2);
    for (_, report) in &b.done {
        assert_eq!(report.outcome, TxOutcome::Failed);
        assert_eq!(report.tries, 3);
        assert_eq!(report.rate, Some(rate));
        assert!(report.airtime_us > report.charged_us, "three tries cost more than the estimate");
    }
    b.check_invariants();
}

#[test]
fn airtime_is_registered_from_the_wtbl_counters_not_per_frame() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.send(q, 4, 1500);
    b.radio.hal().lose_tx_free(4);
    b.step(1000, 64);
    // No tx-free came, so no frame completed...
    assert_eq!(b.radio.stats().completed, 0);
    assert!(b.radio.scheduler().total_pending_us() > 0);
    // ...but the hardware sent them, and the poll registers what its counters say.
    assert!(b.radio.sta_poll(b.now) > 0);
    let polled = be_tx_us(&b, s);
    assert_eq!(polled, u64::from(b.radio.hal().airtime_words(1).tx_us[Ac::Be]));
    assert!(polled > 0);
    // The lost frames' tokens are flushed at the reset that answers the hang: charges
    // released, nothing registered twice.
    b.now = b.now.add_micros(300_000);
    assert_eq!(b.radio.tokens_overdue(b.now), 4);
    assert_eq!(b.reset().1, 4);
    b.collect();
    assert_eq!(be_tx_us(&b, s), polled);
    b.drain();
    b.check_invariants();
}

#[test]
fn the_tx_status_airtime_source_registers_each_frames_airtime_as_mt76x02_does() {
    let config = Config { airtime: AirtimeSource::TxStatus, ..Config::default() };
    let mut b = Bench::new(config, SimConfig::default());
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.send(q, 4, 1500);
    b.drain();
    let from_status: u64 = b.done.iter().map(|(_, r)| u64::from(r.airtime_us)).sum();
    assert_eq!(be_tx_us(&b, s), from_status);
    // The WTBL poll is not run in this mode: a lost tx-free registers nothing.
    b.radio.hal().lose_tx_free(1);
    b.send(q, 1, 1500);
    b.step(1000, 64);
    assert_eq!(be_tx_us(&b, s), from_status);
    // Nor does a poll the driver runs from its MAC work: the frames' statuses already
    // registered their airtime, and the WTBL counts the same air.
    assert!(b.radio.hal().airtime_words(1).tx_us[Ac::Be] > 0);
    assert_eq!(b.radio.sta_poll(b.now), 0);
    assert_eq!(be_tx_us(&b, s), from_status);
    b.reset();
    b.drain();
    b.check_invariants();
}

#[test]
fn the_poll_clears_the_wtbl_counters_once_bit_30_was_read() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    let mut words = AirtimeWords::default();
    words.tx_us[Ac::Be] = WTBL_AIRTIME_CLEAR_BIT + 100;
    b.radio.hal().set_airtime_words(1, words);
    b.radio.sta_poll(b.now);
    assert_eq!(b.radio.stats().wtbl_clears, 0, "the first reading only sees the bit");
    let before = be_tx_us(&b, s);
    b.radio.sta_poll(b.now);
    assert_eq!(b.radio.stats().wtbl_clears, 1);
    assert_eq!(b.radio.hal().airtime_words(1), AirtimeWords::default());
    // Counting resumes from zero: the next frames register exactly their airtime.
    b.send(q, 2, 1500);
    b.drain();
    let after = be_tx_us(&b, s) - before;
    let sent: u64 = b.done.iter().map(|(_, r)| u64::from(r.airtime_us)).sum();
    assert_eq!(after, sent);
    b.check_invariants();
}

#[test]
fn a_rate_change_read_by_the_poll_reprices_the_next_frames() {
    let mut b = Bench::new(Config::default(), SimConfig::default());
    let s = b.station(1, 256);
    let q = b.txq(s, 0);
    b.send(q, 1, 1500);
    let fast = b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap();
    b.drain();
    let slow = Rate::ht(0, Bandwidth::Mhz20, false).unwrap();
    b.radio.hal().set_rate(1, Some(slow));
    b.radio.sta_poll(b.now);
    assert_eq!(b.radio.station(s).unwrap().tx_rate(), Some(slow));
    b.send(q, 1, 1500);
    let charged = b.radio.scheduler().station_pending_us(s, Ac::Be).unwrap();
    assert!(charged > 5 * fast, "MCS0 costs about 7x MCS7: {charged} vs {fast}");
    b.drain();
    b.check_invariants();
}
