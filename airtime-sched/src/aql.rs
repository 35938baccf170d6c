//! The AQL rules as pure functions (`ieee80211_txq_airtime_check`, `ieee80211_txq_schedule_airtime_check`), so the scheduler, the tests'
//! reference model and the benchmarks' baseline read the same arithmetic.

use crate::AqlLimits;

/// The station check (`ieee80211_txq_airtime_check`): a station may send more on an AC while its
/// pending airtime is below its low limit, or below its high limit while the PHY total
/// is below the threshold. Comparisons are strict, as mainline's.
#[inline]
pub const fn station_may_send(pending_us: u32, limits: AqlLimits, total_pending_us: u32, threshold_us: u32) -> bool {
    pending_us < limits.low_us() || (total_pending_us < threshold_us && pending_us < limits.high_us())
}

/// The per-AC PHY limit (`ieee80211_txq_schedule_airtime_check`): `high + (n - 1) * low / 2` for `n` listed
/// txqs, in 64-bit then saturated to `u32`; `None` (unlimited) when `n == 0`, which
/// mainline reaches by wrapping.
#[inline]
pub const fn phy_limit_us(n_listed: u32, defaults: AqlLimits) -> Option<u32> {
    let Some(others) = n_listed.checked_sub(1) else { return None };
    // At most 2^32 + (2^32 - 2) * 2^31: fits in 64 bits.
    let v = (defaults.high_us() as u64).wrapping_add((others as u64).wrapping_mul(defaults.low_us() as u64) / 2);
    Some(if v > u32::MAX as u64 { u32::MAX } else { v as u32 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phy_limit_matches_mainline_and_defines_zero() {
        let d = AqlLimits::DEFAULT;
        assert_eq!(phy_limit_us(0, d), None);
        assert_eq!(phy_limit_us(1, d), Some(12_000));
        assert_eq!(phy_limit_us(2, d), Some(14_500));
        assert_eq!(phy_limit_us(5, d), Some(22_000));
        assert_eq!(phy_limit_us(32, d), Some(89_500));
        let big = AqlLimits::new(u32::MAX, u32::MAX).unwrap();
        assert_eq!(phy_limit_us(u32::MAX, big), Some(u32::MAX));
    }

    #[test]
    fn station_check_uses_high_limit_only_below_threshold() {
        let d = AqlLimits::DEFAULT;
        assert!(station_may_send(4999, d, 30_000, 24_000));
        assert!(!station_may_send(5000, d, 30_000, 24_000));
        assert!(station_may_send(11_999, d, 23_999, 24_000));
        assert!(!station_may_send(12_000, d, 0, 24_000));
    }
}
