//! The integer airtime estimator over any rate description and any length: no panic and
//! no overflow (built with overflow checks), the documented monotonicities spot-checked
//! around each input, agreement with mainline's 32-bit arithmetic wherever mainline
//! does not wrap, retry chains equal to the saturating sum of their stages, and the
//! calibrator's ratio inside its configured bounds.

#![no_main]

use airtime_est::{
    Bandwidth, Calibrator, CalibratorConfig, Encoding, HeGi, RATIO_ONE_Q16, Rate, RetryStage, aql_charge_us,
    expected_tx_airtime_us, mainline, rx_airtime_us, tx_airtime_us,
};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

/// Any rate description, valid or not: the constructors must refuse the invalid ones.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum RateDesc {
    Cck { rate_100kbps: u16, short_preamble: bool },
    Ofdm { rate_100kbps: u16 },
    Ht { mcs: u8, bw: u8, sgi: bool },
    Vht { mcs: u8, nss: u8, bw: u8, sgi: bool },
    He { mcs: u8, nss: u8, bw: u8, gi: u8 },
    Eht { mcs: u8, nss: u8, bw: u8, gi: u8 },
}

/// Mostly in range, sometimes any byte.
fn bw(v: u8) -> Bandwidth {
    Bandwidth::ALL[usize::from(v) % Bandwidth::ALL.len()]
}

fn gi(v: u8) -> HeGi {
    HeGi::ALL[usize::from(v) % HeGi::ALL.len()]
}

impl RateDesc {
    fn build(self) -> Option<Rate> {
        match self {
            RateDesc::Cck { rate_100kbps, short_preamble } => Rate::legacy_cck(rate_100kbps, short_preamble).ok(),
            RateDesc::Ofdm { rate_100kbps } => Rate::legacy_ofdm(rate_100kbps).ok(),
            RateDesc::Ht { mcs, bw: b, sgi } => Rate::ht(mcs, bw(b), sgi).ok(),
            RateDesc::Vht { mcs, nss, bw: b, sgi } => Rate::vht(mcs, nss, bw(b), sgi).ok(),
            RateDesc::He { mcs, nss, bw: b, gi: g } => Rate::he(mcs, nss, bw(b), gi(g)).ok(),
            RateDesc::Eht { mcs, nss, bw: b, gi: g } => Rate::eht(mcs, nss, bw(b), gi(g)).ok(),
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    rate: RateDesc,
    len: u32,
    delta: u32,
    chain: Vec<(RateDesc, u8)>,
    cal: CalInput,
}

#[derive(Arbitrary, Debug)]
struct CalInput {
    warmup_samples: u8,
    ewma_shift: u8,
    min_ratio_q16: u32,
    max_ratio_q16: u32,
    outlier_low_q16: u32,
    outlier_high_q16: u32,
    samples: Vec<(u64, u64)>,
    estimate_us: u32,
}

fn estimates(rate: Rate, len: u32) -> [u32; 3] {
    [expected_tx_airtime_us(rate, len, true), expected_tx_airtime_us(rate, len, false), rx_airtime_us(rate, len)]
}

fn le(a: [u32; 3], b: [u32; 3]) -> bool {
    a.iter().zip(b.iter()).all(|(x, y)| x <= y)
}

/// The same rate with another MCS, bandwidth or GI, if valid.
fn variant(rate: Rate, mcs: u8, b: Bandwidth, g: Option<HeGi>, sgi: bool) -> Option<Rate> {
    match rate.encoding() {
        Encoding::Ht => Rate::ht(mcs, b, sgi).ok(),
        Encoding::Vht => Rate::vht(mcs, rate.nss(), b, sgi).ok(),
        Encoding::He => Rate::he(mcs, rate.nss(), b, g?).ok(),
        Encoding::Eht => Rate::eht(mcs, rate.nss(), b, g?).ok(),
        _ => None,
    }
}

fn check_rate(rate: Rate, len: u32, delta: u32) {
    let here = estimates(rate, len);
    // Non-decreasing in the length.
    let longer = len.saturating_add(delta);
    assert!(le(here, estimates(rate, longer)), "{rate} len {len} -> {longer}");
    // Aggregated never above non-aggregated.
    assert!(here[0] <= here[1], "{rate} aggregated above single at {len}");
    let _ = rate.phy_rate_kbps();
    let _ = aql_charge_us(here[0]);
    assert!(aql_charge_us(here[0]) <= here[0] && aql_charge_us(here[0]).is_multiple_of(4));

    // Agreement with mainline where its 32-bit duration product does not wrap, except VHT
    // above 4 streams, which mainline prices 0.
    let beyond_mainline = rate.encoding() == Encoding::Vht && rate.nss() > 4;
    let fits = |l: u64| match rate.table_duration() {
        Some(t) => u64::from(t) * l < 1 << 32,
        None => l * 80 < 1 << 32,
    };
    if !beyond_mainline {
        let padded = u64::from(len) + 38;
        if fits(padded) {
            for aggregated in [true, false] {
                assert_eq!(
                    expected_tx_airtime_us(rate, len, aggregated),
                    mainline::expected_tx_airtime_u32(rate, len, aggregated),
                    "{rate} {len} {aggregated}"
                );
            }
        }
        if fits(u64::from(len)) {
            assert_eq!(rx_airtime_us(rate, len), mainline::rx_airtime_u32(rate, len), "{rate} {len}");
        }
    } else {
        let _ = mainline::expected_tx_airtime_u32(rate, len, true);
    }

    // Spot checks: one MCS up, one bandwidth wider, one GI longer (documented directions).
    let (Some(mcs), b, g, sgi) = (rate.mcs(), rate.bandwidth(), rate.he_gi(), rate.short_gi()) else { return };
    let same_block = rate.encoding() != Encoding::Ht || mcs % 8 != 7;
    if same_block && let Some(up) = variant(rate, mcs.wrapping_add(1), b, g, sgi) {
        assert!(le(estimates(up, len), here), "{rate} -> {up} at {len}");
    }
    if let Some(wider) = Bandwidth::ALL.into_iter().find(|x| *x > b)
        && let Some(w) = variant(rate, mcs, wider, g, sgi)
    {
        assert!(le(estimates(w, len), here), "{rate} -> {w} at {len}");
    }
    if sgi && let Some(l) = variant(rate, mcs, b, g, false) {
        assert!(le(here, estimates(l, len)), "{rate} -> {l} at {len}");
    }
    if let Some(gv) = g
        && let Some(longer_gi) = HeGi::ALL.into_iter().find(|x| *x > gv)
        && let Some(l) = variant(rate, mcs, b, Some(longer_gi), sgi)
    {
        assert!(le(here, estimates(l, len)), "{rate} -> {l} at {len}");
    }
}

fuzz_target!(|input: Input| {
    if let Some(rate) = input.rate.build() {
        check_rate(rate, input.len, input.delta);
        // Lengths near the top of the range too.
        check_rate(rate, u32::MAX - (input.len % 4096), input.delta % 4096);
    }

    // Retry chains: the saturating sum of the first four stages, up to the first zero.
    let chain: Vec<RetryStage> =
        input.chain.iter().filter_map(|&(d, tries)| Some(RetryStage { rate: d.build()?, tries })).take(8).collect();
    let expect = chain
        .iter()
        .take(airtime_est::MAX_RETRY_STAGES)
        .take_while(|s| s.tries > 0)
        .map(|s| u64::from(rx_airtime_us(s.rate, input.len)) * u64::from(s.tries))
        .sum::<u64>()
        .min(u64::from(u32::MAX));
    assert_eq!(u64::from(tx_airtime_us(&chain, input.len)), expect);
    let _ = mainline::tx_airtime_u32(&chain, input.len);

    // The calibrator: any configuration, any samples.
    let c = &input.cal;
    let mut config = CalibratorConfig::default();
    config.warmup_samples = u32::from(c.warmup_samples % 32);
    config.ewma_shift = c.ewma_shift;
    config.min_ratio_q16 = c.min_ratio_q16;
    config.max_ratio_q16 = c.max_ratio_q16;
    config.outlier_low_q16 = c.outlier_low_q16;
    config.outlier_high_q16 = c.outlier_high_q16;
    let mut cal = Calibrator::new(config);
    let (min, max) = (cal.config().min_ratio_q16, cal.config().max_ratio_q16);
    assert!(min >= 1 && min <= max, "sanitised bounds");
    let mut accepted = 0u64;
    let mut rejected = 0u64;
    for &(charged, measured) in c.samples.iter().take(64) {
        match cal.record(charged, measured) {
            Ok(()) => accepted += 1,
            Err(_) => rejected += 1,
        }
        let ratio = cal.ratio_q16();
        if cal.is_warm() {
            assert!((min..=max).contains(&ratio), "ratio {ratio} outside [{min}, {max}]");
        } else {
            assert_eq!(ratio, RATIO_ONE_Q16);
        }
        let _ = cal.scale_us(c.estimate_us);
        let _ = cal.average_ratio_q16();
    }
    assert_eq!((cal.samples(), cal.rejected()), (accepted, rejected));
    cal.reset();
    assert_eq!((cal.samples(), cal.rejected()), (0, 0));
    if !cal.is_warm() {
        assert_eq!(cal.scale_us(c.estimate_us), c.estimate_us);
    }
});
