//! Worked examples of the AQL estimate at common rates, each with the value mainline's integer
//! arithmetic (`ieee80211_calc_expected_tx_airtime`) gives, worked out by hand.

use airtime_est::{Bandwidth::*, HeGi, Rate, aql_charge_us, expected_tx_airtime_us, mainline, rx_airtime_us};

/// skb.len of the examples: a 1500-byte frame (L = 1538 inside the estimate).
const LEN: u32 = 1500;

/// (rate, aggregated us, non-aggregated us) at 1500 bytes.
fn examples() -> Vec<(&'static str, Rate, u32, u32)> {
    vec![
        ("VHT80 1SS MCS9 SGI", Rate::vht(9, 1, Mhz80, true).unwrap(), 29, 68),
        ("VHT80 1SS MCS9 LGI", Rate::vht(9, 1, Mhz80, false).unwrap(), 32, 71),
        ("VHT20 1SS MCS0 LGI", Rate::vht(0, 1, Mhz20, false).unwrap(), 1912, 1932),
        ("VHT80 1SS MCS0 LGI", Rate::vht(0, 1, Mhz80, false).unwrap(), 430, 460),
        ("HT20 MCS7 LGI", Rate::ht(7, Mhz20, false).unwrap(), 191, 229),
        ("VHT80 2SS MCS9 SGI", Rate::vht(9, 2, Mhz80, true).unwrap(), 15, 58),
        ("HE80 1SS MCS11 GI0.8", Rate::he(11, 1, Mhz80, HeGi::Gi0_8).unwrap(), 20, 60),
        ("HE80 2SS MCS11 GI0.8", Rate::he(11, 2, Mhz80, HeGi::Gi0_8).unwrap(), 10, 54),
        ("HE20 1SS MCS0 GI0.8", Rate::he(0, 1, Mhz20, HeGi::Gi0_8).unwrap(), 1475, 1495),
        // Legacy rates have no aggregated path: both are the PPDU airtime.
        ("OFDM 6 Mbit/s", Rate::legacy_ofdm(60).unwrap(), 2086, 2086),
        ("CCK 1 Mbit/s long", Rate::legacy_cck(10, false).unwrap(), 12_506, 12_506),
    ]
}

#[test]
fn expected_airtime_matches_every_worked_example() {
    for (name, rate, aggregated, single) in examples() {
        assert_eq!(expected_tx_airtime_us(rate, LEN, true), aggregated, "{name} aggregated");
        assert_eq!(expected_tx_airtime_us(rate, LEN, false), single, "{name} single");
        // The non-aggregated estimate is the rx airtime of L = len + 38 bytes.
        assert_eq!(rx_airtime_us(rate, LEN + 38), single, "{name} rx");
        // None of these wraps in mainline's 32 bits, so mainline agrees.
        assert_eq!(mainline::expected_tx_airtime_u32(rate, LEN, true), aggregated, "{name}");
        assert_eq!(mainline::expected_tx_airtime_u32(rate, LEN, false), single, "{name}");
    }
}

#[test]
fn charges_of_the_worked_examples() {
    let a = Rate::vht(9, 1, Mhz80, true).unwrap();
    assert_eq!(aql_charge_us(expected_tx_airtime_us(a, LEN, true)), 28);
    assert_eq!(aql_charge_us(expected_tx_airtime_us(a, LEN, false)), 68);
    let b = Rate::vht(0, 1, Mhz20, false).unwrap();
    assert_eq!(aql_charge_us(expected_tx_airtime_us(b, LEN, true)), 1912);
    let vht80_mcs0 = Rate::vht(0, 1, Mhz80, false).unwrap();
    assert_eq!(aql_charge_us(expected_tx_airtime_us(vht80_mcs0, LEN, true)), 428);
    // Mainline's 10-bit clamp charges 1 Mbit/s CCK 4092 us for 12 506 us of air.
    let cck = Rate::legacy_cck(10, false).unwrap();
    assert_eq!(aql_charge_us(expected_tx_airtime_us(cck, LEN, true)), 4092);
}

#[test]
fn length_sensitivity_between_802_3_and_802_11_frames() {
    let a = Rate::vht(9, 1, Mhz80, true).unwrap();
    // 1514 bytes (802.3 encap offload) and 1534 (fast-xmit 802.11 path).
    assert_eq!(expected_tx_airtime_us(a, 1514, true), 29);
    assert_eq!(expected_tx_airtime_us(a, 1534, true), 30);
    assert_eq!(aql_charge_us(expected_tx_airtime_us(a, 1514, true)), 28);
    assert_eq!(aql_charge_us(expected_tx_airtime_us(a, 1534, true)), 28);
    assert_eq!(expected_tx_airtime_us(a, 1514, false), 68);
    assert_eq!(expected_tx_airtime_us(a, 1534, false), 69);
    let b = Rate::vht(0, 1, Mhz20, false).unwrap();
    assert_eq!(expected_tx_airtime_us(b, 1514, true), 1930);
    assert_eq!(expected_tx_airtime_us(b, 1534, true), 1954);
}

#[test]
fn ht_and_vht_share_their_rows() {
    // HT20 MCS0-7 and VHT20 1SS MCS0-7 are the same PHY rates and price the same.
    for mcs in 0..8 {
        for sgi in [false, true] {
            let ht = Rate::ht(mcs, Mhz20, sgi).unwrap();
            let vht = Rate::vht(mcs, 1, Mhz20, sgi).unwrap();
            assert_eq!(ht.table_duration(), vht.table_duration());
            assert_eq!(expected_tx_airtime_us(ht, LEN, true), expected_tx_airtime_us(vht, LEN, true));
        }
    }
}

#[test]
fn the_64_bit_estimate_is_right_where_mainline_wraps() {
    // At 4000 bytes (L = 4038) mainline's 32-bit t x L wraps past 2^32.
    for rate in [Rate::vht(0, 1, Mhz20, false).unwrap(), Rate::ht(0, Mhz20, false).unwrap()] {
        let ours = expected_tx_airtime_us(rate, 4000, true);
        let theirs = mainline::expected_tx_airtime_u32(rate, 4000, true);
        assert_eq!(ours, 4989);
        assert_eq!(theirs, 893);
        // Ours is within a microsecond of a 4038-byte PPDU at 6.5 Mbit/s: 4038 x 8 / 6.5 = 4970.
        let exact_data_us = 4038 * 8 * 1000 / 6500;
        assert!(ours.abs_diff(exact_data_us + 20) <= 1);
    }
    // HE20 MCS0 wraps only above L = 4329 (t = 992 048): 4291 bytes is still exact.
    let he = Rate::he(0, 1, Mhz20, HeGi::Gi0_8).unwrap();
    assert_eq!(expected_tx_airtime_us(he, 4291, false), mainline::expected_tx_airtime_u32(he, 4291, false));
    assert_ne!(expected_tx_airtime_us(he, 4292, false), mainline::expected_tx_airtime_u32(he, 4292, false));
}
