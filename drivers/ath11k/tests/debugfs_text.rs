//! The per-station `aql` and `airtime` debugfs files read as the core's statistics.

mod common;

use airtime_ath11k::TextBuf;
use common::Bench;

#[test]
fn station_debugfs_files_read_as_the_core_stats_text() {
    let mut b = Bench::default();
    let s = b.station(1, 512);
    let q = b.txq(s, 0);
    b.send(q, 2, 1500, 0);
    let mut buf = [0u8; 1024];
    let mut t = TextBuf::new(&mut buf);
    b.radio.write_station_aql(s, &mut t).unwrap();
    let expect = format!("{}", b.radio.scheduler().station_aql(s).unwrap());
    assert_eq!(core::str::from_utf8(t.as_bytes()).unwrap(), expect);
    assert!(expect.contains("4168 us"), "{expect}");

    let mut buf = [0u8; 1024];
    let mut t = TextBuf::new(&mut buf);
    b.radio.write_station_airtime(s, &mut t).unwrap();
    let expect = format!("{}", b.radio.scheduler().station_airtime(s).unwrap());
    assert_eq!(core::str::from_utf8(t.as_bytes()).unwrap(), expect);
    assert!(expect.contains("Weight: 512"), "{expect}");
}

#[test]
fn debugfs_text_for_a_removed_station_is_refused() {
    let mut b = Bench::default();
    let s = b.station(1, 256);
    b.radio.remove_station(s, drop).unwrap();
    let mut buf = [0u8; 64];
    let mut t = TextBuf::new(&mut buf);
    assert!(b.radio.write_station_aql(s, &mut t).is_err());
    assert!(t.is_empty());
}
