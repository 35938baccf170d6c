//! The estimator call `airtime_est::expected_tx_airtime_us` (64-bit arithmetic) beside
//! mainline's 32-bit arithmetic (`airtime_est::mainline`), on the rates a driver meets.

use airtime_est::{Bandwidth, HeGi, Rate, expected_tx_airtime_us, mainline};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn rates() -> Vec<(&'static str, Rate)> {
    let r = |x: Result<Rate, airtime_est::RateError>| x.expect("a valid benchmark rate");
    vec![
        ("vht80_mcs9_1ss", r(Rate::vht(9, 1, Bandwidth::Mhz80, true))),
        ("he80_mcs11_2ss", r(Rate::he(11, 2, Bandwidth::Mhz80, HeGi::Gi0_8))),
        ("ht20_mcs0", r(Rate::ht(0, Bandwidth::Mhz20, false))),
        ("ofdm_6m", r(Rate::legacy_ofdm(60))),
    ]
}

fn estimator(c: &mut Criterion) {
    let mut g = c.benchmark_group("estimator");
    for (name, rate) in rates() {
        g.bench_with_input(BenchmarkId::new("ours", name), &rate, |b, &rate| {
            b.iter(|| expected_tx_airtime_us(black_box(rate), black_box(1500), black_box(true)))
        });
        g.bench_with_input(BenchmarkId::new("baseline", name), &rate, |b, &rate| {
            b.iter(|| mainline::expected_tx_airtime_u32(black_box(rate), black_box(1500), black_box(true)))
        });
    }
    g.finish();
}

criterion_group!(benches, estimator);
criterion_main!(benches);
