//! The firmware's downlink OFDMA (`[ap.hardware] ofdma = true`): which stations share
//! one HE multi-user PPDU, and on which resource units (RUs).
//!
//! The choice, an assumption (ath11k's firmware scheduler is not public; see
//! `docs/assumptions.md`): the station next in the firmware's round robin leads; if it
//! is an HE station, the next HE stations on the same channel width with frames in
//! their firmware queues join it, in round-robin order, up to `ofdma_max_users`. With
//! at least two, every user gets an equal RU, the largest size of which there are
//! enough in the channel ([`RuSize::equal_share`]: two users 484 tones, three or four
//! 242 tones of an 80 MHz channel); with one, the PPDU is SU as without OFDMA. Each
//! user's A-MPDU fills within the usual limits at its RU rate; the PPDU lasts as long
//! as its longest user, the others padded.

use super::super::super::wifi::PhyTiming;
use super::super::super::wifi::ampdu::{self, AmpduLimits};
use super::super::super::wifi::ofdma;
use super::{Hardware, HwFrame};
use crate::engine::Nanos;
use airtime_est::{Encoding, RuSize};

/// The firmware queues MU PPDUs draw from: best effort's (the model's downlink OFDMA
/// groups BE frames only; a scenario marking a download is refused with it).
const BE: usize = airtime_sched::Ac::Be.index();

/// One user of an MU PPDU.
#[derive(Debug)]
pub struct MuUser {
    /// The station.
    pub station: u16,
    /// Its A-MPDU's frames.
    pub frames: Vec<HwFrame>,
    /// Its RU.
    pub ru: RuSize,
    /// Its own PPDU, without the padding to the longest user, in us.
    pub own_ppdu_us: f64,
}

/// A downlink HE MU PPDU.
#[derive(Debug)]
pub struct MuPpdu {
    /// Its users, in the order picked (at least two).
    pub users: Vec<MuUser>,
    /// Its duration on the air: the longest user's, in us.
    pub ppdu_us: f64,
}

impl MuPpdu {
    /// The frame exchange: PPDU, SIFS and the users' BlockAcks, in us.
    pub fn exchange_us(&self) -> f64 {
        ofdma::exchange_us(self.ppdu_us)
    }

    /// `ns` split between the users by RU tones, in order; the parts add up to `ns`.
    pub fn ru_shares(&self, ns: Nanos) -> Vec<Nanos> {
        let total: u64 = self.users.iter().map(|u| u64::from(u.ru.tones())).sum();
        let mut before = 0u64;
        self.users
            .iter()
            .map(|u| {
                let mine = u64::from(u.ru.tones());
                let part = ns * (before + mine) / total.max(1) - ns * before / total.max(1);
                before += mine;
                part
            })
            .collect()
    }
}

impl Hardware {
    /// The firmware's next PPDU if it is an MU PPDU (see the module documentation):
    /// admits frames from the rings, and when fewer than two stations can share a PPDU
    /// leaves the transmission to [`next_ampdu`](Hardware::next_ampdu) (which then does
    /// not admit again).
    pub fn next_mu_ppdu(&mut self, timings: &[PhyTiming]) -> Option<MuPpdu> {
        self.admit();
        let ppdu = self.pick_mu(timings);
        self.admitted = ppdu.is_none();
        ppdu
    }

    fn pick_mu(&mut self, timings: &[PhyTiming]) -> Option<MuPpdu> {
        let n = self.fw[BE].len();
        let first = (0..n).map(|k| (self.next_station[BE] + k) % n).find(|&s| self.can_send(BE, s, timings))?;
        let lead = timings.get(first)?;
        if lead.rate.encoding() != Encoding::He {
            return None;
        }
        let bw = lead.rate.bandwidth();
        let max_users = usize::from(self.config.ofdma_max_users.max(1));
        let picked: Vec<usize> = (0..n)
            .map(|k| (first + k) % n)
            .filter(|&s| {
                self.can_send(BE, s, timings)
                    && timings.get(s).is_some_and(|t| t.rate.encoding() == Encoding::He && t.rate.bandwidth() == bw)
            })
            .take(max_users)
            .collect();
        if picked.len() < 2 {
            return None;
        }
        let ru = RuSize::equal_share(picked.len() as u16, bw)?;
        let ru_timings: Vec<PhyTiming> =
            picked.iter().map(|&s| ofdma::on_ru(&timings[s], ru)).collect::<Option<_>>()?;
        let sigb_us = ofdma::sigb_us(picked.len(), bw);
        // Every user's HE-LTFs are as many as the most streams any user has.
        let preamble_us = ru_timings.iter().map(|t| t.preamble_us).fold(0.0, f64::max);
        let mut users = Vec::with_capacity(picked.len());
        for (&s, t) in picked.iter().zip(&ru_timings) {
            // The PPDU limit holds for the shared preamble and HE-SIG-B too.
            let limits = AmpduLimits { max_ppdu_us: self.config.max_ppdu_us - sigb_us - (preamble_us - t.preamble_us) };
            let subframes = self.fw[BE][s].iter().map(|f| (f.pkt.ampdu_subframe_bytes(), f.pkt.mpdu_seq != 0));
            let (count, bytes) = ampdu::fill_in_window(t, limits, subframes);
            let frames: Vec<HwFrame> = self.fw[BE][s].drain(..count).collect();
            let data_us = t.ppdu_us(bytes) - t.preamble_us;
            users.push(MuUser { station: s as u16, frames, ru, own_ppdu_us: preamble_us + sigb_us + data_us });
        }
        self.next_station[BE] = (picked.last().copied().unwrap_or(first) + 1) % n;
        let ppdu_us = users.iter().map(|u| u.own_ppdu_us).fold(0.0, f64::max);
        Some(MuPpdu { users, ppdu_us })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{HardwareConfig, HwFrame};
    use super::*;
    use airtime_est::{Bandwidth, HeGi, Rate};

    fn frame(station: u16) -> HwFrame {
        super::super::tests::frame(station, 0, 0)
    }

    fn hw(timings: &[PhyTiming], backlog: &[usize]) -> Hardware {
        let config = HardwareConfig { ofdma: true, ..HardwareConfig::default() };
        let mut hw = Hardware::new(config, timings);
        for (s, &n) in backlog.iter().enumerate() {
            for _ in 0..n {
                hw.push(frame(s as u16)).unwrap();
            }
        }
        hw
    }

    fn he80(mcs: u8, nss: u8) -> PhyTiming {
        PhyTiming::new(Rate::he(mcs, nss, Bandwidth::Mhz80, HeGi::Gi0_8).unwrap())
    }

    #[test]
    fn an_mu_ppdu_lasts_as_long_as_its_longest_user() {
        let timings = [he80(11, 2), he80(11, 2), he80(7, 1), he80(11, 2)];
        // Station 1 has a short backlog, station 2 a slow rate.
        let mut hw = hw(&timings, &[40, 3, 40, 40]);
        let p = hw.next_mu_ppdu(&timings).unwrap();
        assert_eq!(p.users.len(), 4);
        assert!(p.users.iter().all(|u| u.ru == RuSize::Tones242));
        let longest = p.users.iter().map(|u| u.own_ppdu_us).fold(0.0, f64::max);
        assert_eq!(p.ppdu_us, longest);
        let slow = p.users.iter().find(|u| u.station == 2).unwrap();
        assert_eq!(slow.own_ppdu_us, p.ppdu_us, "the slow user is the longest");
        assert!(p.users.iter().find(|u| u.station == 1).unwrap().own_ppdu_us < p.ppdu_us / 4.0);
        // Its data at the RU rate: 40 frames at HE20-equivalent MCS7 1SS.
        let ru = ofdma::on_ru(&timings[2], RuSize::Tones242).unwrap();
        let bytes: u32 = slow.frames.iter().map(|f| f.pkt.ampdu_subframe_bytes()).sum();
        // Its preamble has the HE-LTFs of the two-stream users: 7.2 us more.
        let expected = ru.ppdu_us(bytes) + 7.2 + ofdma::sigb_us(4, Bandwidth::Mhz80);
        assert!((p.ppdu_us - expected).abs() < 1e-9, "{} {expected}", p.ppdu_us);
        assert!(p.ppdu_us <= HardwareConfig::default().max_ppdu_us);
        let shares = p.ru_shares(1_000_003);
        assert_eq!(shares.iter().sum::<Nanos>(), 1_000_003);
    }

    #[test]
    fn a_lone_backlogged_station_goes_su_and_is_not_admitted_twice() {
        let timings = [he80(11, 2), he80(11, 2)];
        let mut hw = hw(&timings, &[10, 0]);
        assert!(hw.next_mu_ppdu(&timings).is_none());
        assert!(hw.admitted, "the SU transmission that follows skips its admission");
        let (s, frames, _) = hw.next_ampdu(&timings).unwrap();
        assert_eq!((s, frames.len()), (0, 10));
        assert!(!hw.admitted, "and only that one");
        // Two users: 484-tone RUs each.
        let mut hw = self::hw(&timings, &[10, 10]);
        let p = hw.next_mu_ppdu(&timings).unwrap();
        assert!(p.users.iter().all(|u| u.ru == RuSize::Tones484));
    }

    #[test]
    fn vht_stations_are_never_grouped() {
        let vht = PhyTiming::new(Rate::vht(9, 1, Bandwidth::Mhz80, true).unwrap());
        let timings = [vht, he80(11, 2), he80(11, 2)];
        let mut hw = hw(&timings, &[10, 10, 10]);
        assert!(hw.next_mu_ppdu(&timings).is_none(), "the VHT station leads: SU");
        assert_eq!(hw.next_ampdu(&timings).unwrap().0, 0);
        let p = hw.next_mu_ppdu(&timings).unwrap();
        assert_eq!(p.users.iter().map(|u| u.station).collect::<Vec<_>>(), [1, 2]);
    }
}
