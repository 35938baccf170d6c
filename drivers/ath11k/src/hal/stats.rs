//! Hardware airtime reports: HTT PPDU statistics (tx) and rx monitor status (rx).

use airtime_est::Rate;

/// Users one PPDU record carries (ath11k's `HTT_PPDU_STATS_MAX_USERS`).
pub const MAX_PPDU_USERS: usize = 8;

/// One user of a transmitted PPDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PpduUser {
    /// Firmware peer id.
    pub peer_id: u16,
    /// TID of the user's MPDUs, 0 to 15 (its AC is the one charged); 16 or above if the
    /// record names none (charged to BE, never a calibration sample: see
    /// [`PpduOutcome::users_without_tid`](crate::PpduOutcome::users_without_tid)).
    pub tid: u8,
    /// The user's tx duration in us as the firmware reports it. The adapter charges
    /// the PPDU's [`PpduStats::duration_us`] instead when that is set (patch 4; see
    /// [`MuCharging`](crate::MuCharging) for MU users).
    pub tx_duration_us: u32,
    /// The rate the user was sent at, if the record had the rate TLV.
    pub rate: Option<Rate>,
    /// Tones of the user's resource unit in an MU PPDU (ath11k's rate TLV gives
    /// `ru_end - ru_start + 1`); 0 if unknown or SU.
    pub ru_tones: u16,
    /// The user's own data duration at its RU rate, in us: the PPDU without the padding
    /// to its longest user (the driver computes it from the user's RU, rate and bytes);
    /// 0 if unknown.
    pub own_duration_us: u32,
    /// MSDUs of the user acknowledged in this PPDU; 0 if unknown. ath11k reads it from
    /// the user's ACK/BA status TLV (`struct htt_ppdu_stats_usr_cmpltn_ack_ba_status`,
    /// `info` field `HTT_PPDU_STATS_ACK_BA_INFO_NUM_MSDU_M`, bits 9..=24, in `dp.h`), as
    /// `succ_pkts` in `ath11k_update_per_peer_tx_stats` (`dp_rx.c`). The calibration of
    /// the AQL estimate ([`Config::calibration`](crate::Config::calibration)) needs it.
    pub msdus: u16,
    /// Bytes of those MSDUs (the same TLV's `success_bytes`, `succ_bytes` there); 0 if
    /// unknown.
    pub msdu_bytes: u32,
}

impl PpduUser {
    /// A single-user record's user: `tx_duration_us` at `rate`, no RU.
    pub const fn su(peer_id: u16, tid: u8, tx_duration_us: u32, rate: Option<Rate>) -> PpduUser {
        PpduUser { peer_id, tid, tx_duration_us, rate, ru_tones: 0, own_duration_us: 0, msdus: 0, msdu_bytes: 0 }
    }

    /// The same user with `msdus` MSDUs of `msdu_bytes` bytes in all acknowledged.
    pub const fn with_msdus(mut self, msdus: u16, msdu_bytes: u32) -> PpduUser {
        self.msdus = msdus;
        self.msdu_bytes = msdu_bytes;
        self
    }
}

/// One transmitted PPDU: its duration and its users (several for MU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PpduStats {
    /// The PPDU's duration on the air, in us (0 if unknown: each user's own
    /// `tx_duration_us` is charged then).
    pub duration_us: u32,
    n_users: u8,
    users: [Option<PpduUser>; MAX_PPDU_USERS],
}

impl PpduStats {
    /// A record of `duration_us` with no user yet.
    pub const fn new(duration_us: u32) -> PpduStats {
        PpduStats { duration_us, n_users: 0, users: [None; MAX_PPDU_USERS] }
    }

    /// Adds a user; false (and nothing added) when [`MAX_PPDU_USERS`] are there.
    pub fn push_user(&mut self, user: PpduUser) -> bool {
        match self.users.get_mut(usize::from(self.n_users)) {
            Some(slot) => {
                *slot = Some(user);
                // Below MAX_PPDU_USERS (a slot was free): no wrap.
                self.n_users = self.n_users.wrapping_add(1);
                true
            }
            None => false,
        }
    }

    /// The users, in the order added.
    pub fn users(&self) -> impl Iterator<Item = &PpduUser> {
        self.users.iter().flatten()
    }

    /// Number of users (more than one: an MU PPDU).
    pub fn n_users(&self) -> usize {
        usize::from(self.n_users)
    }
}

/// One received PPDU as rx monitor status reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxPpdu {
    /// Firmware peer id of the sender.
    pub peer_id: u16,
    /// Its duration on the air, in us (`ppdu_info.rx_duration`).
    pub rx_duration_us: u32,
    /// The rate it was received at, if known.
    pub rate: Option<Rate>,
}

/// HTT PPDU statistics, one record at a time. Called from the completion context
/// (`&self`: the implementation serialises its own queue, if it has one).
pub trait PpduStatsSource {
    /// The next PPDU record, `None` when there is none now.
    fn next_ppdu_stats(&self) -> Option<PpduStats>;
}

/// Rx monitor status, one PPDU at a time. Called from the completion context (`&self`,
/// as for [`PpduStatsSource`]).
pub trait RxStatusSource {
    /// The next received PPDU, `None` when there is none now.
    fn next_rx_ppdu(&self) -> Option<RxPpdu>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ppdu_record_holds_at_most_eight_users() {
        let mut p = PpduStats::new(100);
        let u = PpduUser::su(1, 0, 100, None);
        for _ in 0..MAX_PPDU_USERS {
            assert!(p.push_user(u));
        }
        assert!(!p.push_user(u));
        assert_eq!(p.n_users(), MAX_PPDU_USERS);
        assert_eq!(p.users().count(), MAX_PPDU_USERS);
    }
}
