//! Cost of one expected-airtime estimate (the per-frame call on the AQL dequeue path).
//!
//! Run: `cargo bench -p airtime-est --bench expected_airtime -- --quick --noplot`.
//! Target: well under 10 ns per call.

use std::hint::black_box;

use airtime_est::{Bandwidth, HeGi, Rate, aql_charge_us, expected_tx_airtime_us};
use criterion::{Criterion, criterion_group, criterion_main};

fn expected_airtime(c: &mut Criterion) {
    let vht = Rate::vht(9, 1, Bandwidth::Mhz80, true).expect("valid rate");
    let he = Rate::he(11, 2, Bandwidth::Mhz80, HeGi::Gi0_8).expect("valid rate");
    let ofdm = Rate::legacy_ofdm(60).expect("valid rate");

    c.bench_function("expected_tx_airtime_us/vht80_mcs9_aggregated", |b| {
        b.iter(|| expected_tx_airtime_us(black_box(vht), black_box(1500), black_box(true)))
    });
    c.bench_function("expected_tx_airtime_us/he80_2ss_mcs11_single", |b| {
        b.iter(|| expected_tx_airtime_us(black_box(he), black_box(1500), black_box(false)))
    });
    c.bench_function("expected_tx_airtime_us/ofdm6", |b| {
        b.iter(|| expected_tx_airtime_us(black_box(ofdm), black_box(1500), black_box(true)))
    });
    c.bench_function("estimate_and_charge/vht80_mcs9", |b| {
        b.iter(|| aql_charge_us(expected_tx_airtime_us(black_box(vht), black_box(1500), black_box(true))))
    });
}

criterion_group!(benches, expected_airtime);
criterion_main!(benches);
