//! How the users of a multi-user (OFDMA) PPDU are charged airtime.
//!
//! In an HE MU PPDU every user is sent at once, each on its own resource unit (RU): a
//! user's share of the air is its RU, not the whole PPDU. ath11k's firmware reports
//! each user the PPDU's whole duration, and ath11k adds that to each user's
//! `tx_duration` (`ath11k_update_per_peer_tx_stats`, fed by
//! `ath11k_htt_pull_ppdu_stats`); the series registers that value for each user, so a
//! station in a four-user PPDU pays four times its share and a weight no longer says
//! what part of the air the station gets.
//!
//! [`MuCharging`] picks what each user is charged:
//!
//! * [`WholePpdu`](MuCharging::WholePpdu) (the default, the series' and ath11k's
//!   behaviour): every user the PPDU's duration.
//! * [`RuShare`](MuCharging::RuShare): the PPDU's duration split by RU tones; the
//!   users' charges add up to the PPDU's duration exactly (integer, the rounding
//!   remainders spread so that none is lost).
//! * [`OwnDuration`](MuCharging::OwnDuration): the user's own data duration at its RU
//!   rate ([`PpduUser::own_duration_us`]), without the padding to the longest user.
//!
//! Mainline does none of this: mac80211's `ieee80211_sta_register_airtime` takes one
//! duration per station and call, and no upstream driver splits an MU PPDU before
//! calling it (ath10k and ath11k pass the duration the firmware gives). Switch it on
//! with [`Config::mu_charging`](crate::Config::mu_charging).
//!
//! AQL prices a station's next frames from its last rate, as a whole-channel
//! transmission. A station that was last sent in an MU PPDU is likely to be again, so
//! under `RuShare` and `OwnDuration` its frames are priced at what they will be
//! charged: the whole-channel price times [`MuCharging::aql_scale_q8`] (for `RuShare`
//! the RU's share of the PPDU's tones over the RU's share of the channel's data
//! subcarriers, about 1.05 for four users on 242-tone RUs of an 80 MHz channel; for
//! `OwnDuration` the channel's data subcarriers over the RU's, about 4.2 there).
//! `WholePpdu` keeps today's pricing. The scale is the last PPDU record's, per
//! station: one SU record sets it back to 1.

use crate::hal::{PpduStats, PpduUser};
use airtime_est::RuSize;
use core::num::NonZeroU64;

/// One, in the Q8 fixed point of [`MuCharging::aql_scale_q8`].
pub const SCALE_ONE_Q8: u32 = 256;

/// What each user of an MU PPDU is charged. See the [module documentation](self).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MuCharging {
    /// Every user the PPDU's whole duration (ath11k and the series).
    #[default]
    WholePpdu,
    /// The PPDU's duration times the user's RU tones over all users' RU tones.
    RuShare,
    /// The user's own data duration at its RU rate, as the record reports it.
    OwnDuration,
}

impl MuCharging {
    /// Its name, as the kernel module's parameter and the simulator's scenarios write it.
    pub const fn name(self) -> &'static str {
        match self {
            MuCharging::WholePpdu => "whole_ppdu",
            MuCharging::RuShare => "ru_share",
            MuCharging::OwnDuration => "own_duration",
        }
    }

    /// The policy named `name` ([`name`](Self::name)'s spelling).
    pub fn from_name(name: &str) -> Option<MuCharging> {
        [MuCharging::WholePpdu, MuCharging::RuShare, MuCharging::OwnDuration].into_iter().find(|m| m.name() == name)
    }

    /// The airtime, in us, to register for user `index` of `ppdu` (0 for an index past
    /// its users). A single-user record charges the PPDU's duration under every policy
    /// (or, without one, the user's reported duration).
    pub fn charge_us(self, ppdu: &PpduStats, index: usize) -> u32 {
        let Some(user) = ppdu.users().nth(index) else { return 0 };
        let whole = whole_us(ppdu, user);
        if ppdu.n_users() <= 1 {
            return whole;
        }
        match self {
            MuCharging::WholePpdu => whole,
            MuCharging::OwnDuration if user.own_duration_us > 0 => user.own_duration_us,
            MuCharging::RuShare | MuCharging::OwnDuration => ru_share_us(ppdu, index),
        }
    }

    /// The factor, in Q8 (256 is 1), by which a station's whole-channel price of a frame
    /// is scaled after this PPDU record named it as user `index`: [`SCALE_ONE_Q8`] for
    /// an SU record, under [`WholePpdu`](Self::WholePpdu), or when the record lacks the
    /// user's rate or RU.
    pub fn aql_scale_q8(self, ppdu: &PpduStats, index: usize) -> u32 {
        let Some(user) = ppdu.users().nth(index) else { return SCALE_ONE_Q8 };
        if ppdu.n_users() <= 1 || self == MuCharging::WholePpdu {
            return SCALE_ONE_Q8;
        }
        let (Some(rate), Some(ru)) = (user.rate, RuSize::from_tones(user.ru_tones)) else { return SCALE_ONE_Q8 };
        let Some(channel) = RuSize::whole(rate.bandwidth()) else { return SCALE_ONE_Q8 };
        let channel_data = u64::from(channel.data_tones());
        let ru_data = u64::from(ru.data_tones());
        // Checked: no panic path in kernel builds (objtool cannot follow one). Tones are a
        // record's u16s, at most MAX_PPDU_USERS of them, so no product nears 2^64 and only
        // a zero divisor falls back to one.
        let q8 = u64::from(SCALE_ONE_Q8);
        let scale = match self {
            // The user's share as `ru_share_us` splits the duration: an equal one when any
            // user's RU is unknown.
            MuCharging::RuShare => tones_of(ppdu, user)
                .checked_mul(channel_data)
                .and_then(|n| n.checked_mul(q8))
                .zip(total_tones(ppdu).checked_mul(ru_data))
                .and_then(|(n, d)| n.checked_div(d)),
            _ => channel_data.checked_mul(q8).and_then(|n| n.checked_div(ru_data)),
        };
        let Some(scale) = scale else { return SCALE_ONE_Q8 };
        u32::try_from(scale).unwrap_or(u32::MAX).max(1)
    }
}

/// The PPDU's duration, or the user's reported duration in a record without one.
fn whole_us(ppdu: &PpduStats, user: &PpduUser) -> u32 {
    if ppdu.duration_us > 0 { ppdu.duration_us } else { user.tx_duration_us }
}

/// Tones of the users' RUs; each user counts 1 when any user's RU is unknown (an
/// equal split then).
fn tones_of(ppdu: &PpduStats, user: &PpduUser) -> u64 {
    if ppdu.users().any(|u| u.ru_tones == 0) { 1 } else { u64::from(user.ru_tones) }
}

/// The users' tones: at most `MAX_PPDU_USERS * u16::MAX`.
fn total_tones(ppdu: &PpduStats) -> u64 {
    ppdu.users().map(|u| tones_of(ppdu, u)).fold(0, u64::saturating_add)
}

/// User `index`'s part of the PPDU's duration by tones: the cumulative split
/// `D * before_and_self / total - D * before / total`, so the parts sum to `D`.
fn ru_share_us(ppdu: &PpduStats, index: usize) -> u32 {
    let duration = u64::from(if ppdu.duration_us > 0 {
        ppdu.duration_us
    } else {
        ppdu.users().map(|u| u.tx_duration_us).max().unwrap_or(0)
    });
    let Some(total) = NonZeroU64::new(total_tones(ppdu)) else { return 0 };
    let before = ppdu.users().take(index).map(|u| tones_of(ppdu, u)).fold(0, u64::saturating_add);
    let mine = ppdu.users().nth(index).map_or(0, |u| tones_of(ppdu, u));
    // duration < 2^32 and cumulative tones at most `total` < 2^19 (a record's u16 tones,
    // at most MAX_PPDU_USERS users): the products stay below 2^51 and never saturate.
    // The first quotient is the larger (more tones), so the difference is exact.
    let upto = duration.saturating_mul(before.saturating_add(mine)) / total;
    let part = upto.saturating_sub(duration.saturating_mul(before) / total);
    u32::try_from(part).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hal::MAX_PPDU_USERS;
    use airtime_est::{Bandwidth, HeGi, Rate};

    fn mu(duration_us: u32, users: &[(u16, u16, u32)]) -> PpduStats {
        let rate = Rate::he(9, 2, Bandwidth::Mhz80, HeGi::Gi0_8).ok();
        let mut p = PpduStats::new(duration_us);
        for &(peer_id, ru_tones, own_duration_us) in users {
            assert!(p.push_user(PpduUser {
                peer_id,
                tid: 0,
                tx_duration_us: duration_us,
                rate,
                ru_tones,
                own_duration_us,
                msdus: 0,
                msdu_bytes: 0,
            }));
        }
        p
    }

    #[test]
    fn ru_shares_add_up_to_the_ppdu_duration() {
        for d in [1u32, 7, 999, 5_483, 4_000_000] {
            let p = mu(d, &[(1, 242, 0), (2, 242, 0), (3, 484, 0)]);
            let sum: u32 = (0..3).map(|i| MuCharging::RuShare.charge_us(&p, i)).sum();
            assert_eq!(sum, d);
        }
        let p = mu(4000, &[(1, 242, 0), (2, 242, 0), (3, 484, 0)]);
        assert_eq!(MuCharging::RuShare.charge_us(&p, 2), 2000);
        // An unknown RU: an equal split, still adding up.
        let q = mu(1000, &[(1, 242, 0), (2, 0, 0), (3, 484, 0)]);
        let parts: alloc::vec::Vec<u32> = (0..3).map(|i| MuCharging::RuShare.charge_us(&q, i)).collect();
        assert_eq!(parts.iter().sum::<u32>(), 1000);
        assert!(parts.iter().all(|&c| (333..=334).contains(&c)), "{parts:?}");
    }

    #[test]
    fn each_policy_charges_what_it_says() {
        let p = mu(3000, &[(1, 242, 3000), (2, 242, 1200)]);
        assert_eq!(MuCharging::WholePpdu.charge_us(&p, 1), 3000);
        assert_eq!(MuCharging::RuShare.charge_us(&p, 1), 1500);
        assert_eq!(MuCharging::OwnDuration.charge_us(&p, 1), 1200);
        // No own duration reported: the RU share instead.
        let q = mu(3000, &[(1, 242, 0), (2, 242, 0)]);
        assert_eq!(MuCharging::OwnDuration.charge_us(&q, 0), 1500);
        // SU: the PPDU, whatever the policy.
        let s = mu(800, &[(1, 996, 500)]);
        for m in [MuCharging::WholePpdu, MuCharging::RuShare, MuCharging::OwnDuration] {
            assert_eq!(m.charge_us(&s, 0), 800);
            assert_eq!(m.aql_scale_q8(&s, 0), SCALE_ONE_Q8);
            assert_eq!(m.charge_us(&s, 1), 0);
        }
    }

    #[test]
    fn aql_scales_follow_the_charges() {
        let p = mu(3000, &[(1, 242, 0), (2, 242, 0), (3, 242, 0), (4, 242, 0)]);
        assert_eq!(MuCharging::WholePpdu.aql_scale_q8(&p, 0), SCALE_ONE_Q8);
        // 1/4 of the PPDU, on 234 of 980 data subcarriers: 980 / 936 of one.
        assert_eq!(MuCharging::RuShare.aql_scale_q8(&p, 0), 980 * 256 / 936);
        assert_eq!(MuCharging::OwnDuration.aql_scale_q8(&p, 3), 980 * 256 / 234);
        // Another user's RU unknown: the charge is an equal split (a quarter each), and
        // so is the share the scale prices, not 242 of 4 "tones".
        let q = mu(3000, &[(1, 242, 0), (2, 0, 0), (3, 242, 0), (4, 242, 0)]);
        assert_eq!(MuCharging::RuShare.charge_us(&q, 0), 750);
        assert_eq!(MuCharging::RuShare.aql_scale_q8(&q, 0), 980 * 256 / 936);
        assert_eq!(MuCharging::RuShare.aql_scale_q8(&q, 1), SCALE_ONE_Q8, "no RU: no scale");
    }

    /// The extremes a firmware record can carry: the longest duration, and tones no RU
    /// has (the record's u16 as is) on every user but the first (242 tones). Each charge
    /// is still a part of the PPDU, the parts add up to it, and the first user's scales
    /// are its share times 980 / 234 data subcarriers (the others have no RU: no scale).
    #[test]
    fn extreme_records_split_without_overflow() {
        let own_scale = 980 * 256 / 234;
        // (other users' tones, the first user's part of the tones, its RU-share scale)
        for (tones, share, scale) in [
            (u16::MAX, "242 of 458 987", 1), // 0.57 of one, never 0
            (1, "242 of 249", 242 * 980 * 256 / (249 * 234)),
            (0, "an equal split", 980 * 256 / (8 * 234)),
        ] {
            for own_us in [u32::MAX, 0] {
                let mut users = [(0u16, 242, own_us); MAX_PPDU_USERS];
                for (i, u) in users.iter_mut().enumerate().skip(1) {
                    u.0 = i as u16;
                    u.1 = tones;
                }
                let p = mu(u32::MAX, &users);
                let parts: alloc::vec::Vec<u64> =
                    (0..MAX_PPDU_USERS).map(|i| u64::from(MuCharging::RuShare.charge_us(&p, i))).collect();
                assert_eq!(parts.iter().sum::<u64>(), u64::from(u32::MAX), "{share}: {parts:?}");
                assert_eq!(MuCharging::RuShare.aql_scale_q8(&p, 0), scale, "{share}");
                assert_eq!(MuCharging::OwnDuration.aql_scale_q8(&p, 0), own_scale);
                for (i, &part) in parts.iter().enumerate() {
                    assert_eq!(MuCharging::WholePpdu.charge_us(&p, i), u32::MAX);
                    // Without an own duration, OwnDuration falls back to the RU share.
                    let own = if own_us > 0 { u64::from(own_us) } else { part };
                    assert_eq!(u64::from(MuCharging::OwnDuration.charge_us(&p, i)), own);
                    if i > 0 {
                        assert_eq!(MuCharging::RuShare.aql_scale_q8(&p, i), SCALE_ONE_Q8);
                    }
                }
            }
        }
    }

    #[test]
    fn names_round_trip() {
        for m in [MuCharging::WholePpdu, MuCharging::RuShare, MuCharging::OwnDuration] {
            assert_eq!(MuCharging::from_name(m.name()), Some(m));
        }
        assert_eq!(MuCharging::from_name("whole"), None);
    }
}
