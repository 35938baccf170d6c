//! What several fuzz targets share: a fuzzed PHY rate, a txq error for a stopped
//! (BlockAck setup) queue, and the PHY-limit check a round opens on. Each target
//! includes this with `#[path]`, and uses part of it.

use airtime_est::{Bandwidth, HeGi, Rate};
use airtime_sched::{Ac, Scheduler, TxqErrorKind};
use arbitrary::Arbitrary;

/// A PHY rate from fuzz bytes: legacy OFDM, HT (1 to 4 streams, 20 or 40 MHz), VHT or
/// HE; `None` where the combination is invalid (the estimator refuses it).
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct RateSpec {
    kind: u8,
    mcs: u8,
    nss: u8,
    bw: u8,
    gi: u8,
}

impl RateSpec {
    pub fn build(self) -> Option<Rate> {
        let bw = Bandwidth::ALL[usize::from(self.bw) % 4];
        let gi = HeGi::ALL[usize::from(self.gi) % HeGi::ALL.len()];
        let (mcs, nss) = (self.mcs % 12, self.nss % 4 + 1);
        let ht_bw = if self.bw & 1 == 0 { Bandwidth::Mhz20 } else { Bandwidth::Mhz40 };
        match self.kind % 4 {
            0 => Rate::legacy_ofdm([60, 120, 240, 540][usize::from(self.mcs) % 4]).ok(),
            1 => Rate::ht(mcs % 8 + 8 * (nss - 1), ht_bw, self.gi & 1 != 0).ok(),
            2 => Rate::vht(mcs % 10, nss, bw, self.gi & 1 != 0).ok(),
            _ => Rate::he(mcs, nss, bw, gi).ok(),
        }
    }
}

/// The error of a txq stopped by the harness (a BlockAck session being set up).
#[derive(Debug)]
pub struct StoppedErr;

impl airtime_sched::TxqError for StoppedErr {
    fn kind(&self) -> TxqErrorKind {
        TxqErrorKind::Stopped
    }
}

/// Whether a round started on `ac` now opens (L3).
pub fn under_phy_limit(sched: &Scheduler, ac: Ac) -> bool {
    let pending = sched.ac_pending_us(ac);
    !sched.aql_enabled()
        || pending < sched.default_limits(ac).high_us()
        || sched.phy_limit_us(ac).is_none_or(|limit| pending < limit)
}
