//! One station's radio link when its channel is not ideal: a rate schedule (the best
//! rate the channel carries, changing at given times), a frame error probability, and
//! the rate the transmitter picks — fixed to the schedule, or learnt by Minstrel-HT
//! ([`super::minstrel`]).
//!
//! A subframe sent at a rate above the channel's best is lost; at or below it, it is
//! lost with the station's frame error probability, independently of the others in its
//! A-MPDU. The cliff stands for the steepness of real PER curves: at a fixed SNR PER
//! goes from 10 % to 90 % within about 2 dB, less than the 2-4 dB between two MCS steps
//! (the MCS sensitivity ladder of 802.11-2020 Table 21-25, minimum input sensitivity).
//! A lost subframe is resent in a later A-MPDU (the BlockAck says which were lost) until
//! the retry limit, then dropped.
//!
//! A station without any of this has no `Link`: the simulator's ideal path runs
//! unchanged.

use super::minstrel::{Minstrel, Pick};
use crate::engine::{Nanos, Rng};
use airtime_est::Rate;

/// Attempts a subframe gets before it is dropped: ath9k's software retry limit for
/// aggregates (`ATH_MAX_SW_RETRIES`, 30, in `drivers/net/wireless/ath/ath9k/xmit.c`),
/// counting the first attempt.
pub const MAX_ATTEMPTS: u8 = 30;

/// How the transmitter picks its rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RateControl {
    /// The channel's rate, known at once (and reported at once).
    #[default]
    Fixed,
    /// Minstrel-HT: learnt from tx status; the reported rate is its best-throughput rate.
    MinstrelHt,
}

/// A station's link.
#[derive(Clone, Debug)]
pub struct Link {
    steps: Vec<(Nanos, Rate)>,
    next_step: usize,
    channel: Rate,
    /// Probability that a subframe at or below the channel's rate is lost.
    pub frame_error_rate: f64,
    minstrel: Option<Minstrel>,
    stage: usize,
    /// Subframe attempts that reached a BlockAck (exchanges that did not collide); a
    /// collided exchange's subframes count a try on their frames but not here.
    pub attempts: u64,
    /// Acknowledged subframes.
    pub acked: u64,
    /// Subframes dropped after [`MAX_ATTEMPTS`], their tries counted over lost
    /// subframes and collided exchanges alike.
    pub dropped: u64,
}

/// The rate of one exchange.
#[derive(Clone, Copy, Debug)]
pub struct Choice {
    /// The rate the PPDU goes at.
    pub rate: Rate,
    pick: Option<Pick>,
}

impl Choice {
    /// Whether the exchange is a rate-control sample: one MPDU, not aggregated.
    pub fn is_sample(&self) -> bool {
        self.pick.is_some_and(|p| p.sample)
    }

    /// The PHY timing of the exchange (a sample's BlockAck window is one MPDU).
    pub fn timing(&self) -> super::PhyTiming {
        let mut t = super::PhyTiming::new(self.rate);
        if self.is_sample() {
            t.ba_window = 1;
        }
        t
    }
}

impl Link {
    /// A link that starts at `base` and changes to each `(time, rate)` of `steps` (sorted
    /// by time), with `frame_error_rate`, under `control`.
    pub fn new(base: Rate, mut steps: Vec<(Nanos, Rate)>, frame_error_rate: f64, control: RateControl) -> Link {
        steps.sort_by_key(|s| s.0);
        let minstrel = match control {
            RateControl::Fixed => None,
            RateControl::MinstrelHt => Minstrel::new(rate_set(base)),
        };
        Link {
            steps,
            next_step: 0,
            channel: base,
            frame_error_rate,
            minstrel,
            stage: 0,
            attempts: 0,
            acked: 0,
            dropped: 0,
        }
    }

    /// The channel's best rate at `now`.
    pub fn channel_at(&mut self, now: Nanos) -> Rate {
        while let Some(&(t, r)) = self.steps.get(self.next_step) {
            if t > now {
                break;
            }
            self.channel = r;
            self.next_step += 1;
        }
        self.channel
    }

    /// The rate the driver reports to mac80211 (AQL's price): the channel's under fixed
    /// rate control, Minstrel's best-throughput rate otherwise.
    pub fn reported_rate(&self) -> Rate {
        self.minstrel.as_ref().map_or(self.channel, Minstrel::max_tp_rate)
    }

    /// The rate of the next exchange at `now`.
    pub fn choose(&mut self, now: Nanos, rng: &mut Rng) -> Choice {
        let channel = self.channel_at(now);
        match &self.minstrel {
            None => Choice { rate: channel, pick: None },
            Some(m) => {
                let p = m.pick(self.stage, rng);
                Choice { rate: p.rate, pick: Some(p) }
            }
        }
    }

    /// Whether one subframe sent at `rate` at `now` gets through.
    pub fn subframe_ok(&mut self, rate: Rate, now: Nanos, rng: &mut Rng) -> bool {
        let channel = self.channel_at(now);
        if rate.phy_rate_kbps() > channel.phy_rate_kbps() {
            return false;
        }
        self.frame_error_rate <= 0.0 || rng.unit() >= self.frame_error_rate
    }

    /// The BlockAck of an exchange chosen as `choice`: `sent` subframes, `acked` of them
    /// acknowledged. Feeds the rate control and moves along its retry chain.
    pub fn block_ack(&mut self, choice: Choice, sent: u32, acked: u32, now: Nanos) {
        self.attempts += u64::from(sent);
        self.acked += u64::from(acked);
        if let (Some(m), Some(p)) = (self.minstrel.as_mut(), choice.pick) {
            m.tx_status(p.index, sent, acked, now);
            self.stage = if acked == 0 && !p.sample { self.stage + 1 } else { 0 };
        }
    }

    /// Times the rate control folded its statistics (0 under fixed rates).
    pub fn rate_control_updates(&self) -> u64 {
        self.minstrel.as_ref().map_or(0, |m| m.updates)
    }
}

/// What a station's link measured in one run.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct LinkResult {
    /// Airtime of the AP's exchanges to the station after the warm-up, every attempt
    /// that reached a BlockAck counted (resends of lost subframes included), ms. A
    /// collided exchange's airtime is left out: it is the run's collided airtime, on
    /// nobody's link.
    pub spent_airtime_ms: f64,
    /// The estimator's price of the frames those exchanges carried (each frame once, at
    /// the rate reported when it was first sent: what AQL charged), ms.
    pub priced_airtime_ms: f64,
    /// Subframes sent, both directions, every attempt in an exchange that did not
    /// collide: a collided exchange's subframes are left out here, though each counts a
    /// try on its frame (so a frame can reach the retry limit with fewer attempts here
    /// than [`MAX_ATTEMPTS`]).
    pub subframes_sent: u64,
    /// Of those, acknowledged.
    pub subframes_acked: u64,
    /// Subframes dropped at the retry limit, both directions, whether their tries were
    /// lost subframes or collided exchanges (the latter are not in `subframes_sent`).
    pub retry_drops: u64,
    /// Most MPDUs a reorder buffer of the link (either end, any TID) held at once:
    /// below the BlockAck window, as the originator respects it (802.11-2020 10.25.6).
    pub reorder_held_max: u64,
    /// Times the AP's rate control folded its statistics.
    pub rate_control_updates: u64,
    /// The reported rate at each change, (s, Mbit/s).
    #[serde(skip)]
    pub reported_rate_series: Vec<(f32, f32)>,
}

impl LinkResult {
    /// Airtime really spent per unit the estimator charged.
    pub fn spent_over_priced(&self) -> f64 {
        if self.priced_airtime_ms > 0.0 { self.spent_airtime_ms / self.priced_airtime_ms } else { 0.0 }
    }
}

/// The rates Minstrel chooses from: MCS 0 up to `base`'s, same family, streams, width and
/// guard interval (HT numbers streams in the MCS: the same group of eight).
pub fn rate_set(base: Rate) -> Vec<Rate> {
    let Some(top) = base.mcs() else { return vec![base] };
    let bottom = if base.encoding() == airtime_est::Encoding::Ht { top / 8 * 8 } else { 0 };
    let set: Vec<Rate> = (bottom..=top).filter_map(|m| with_mcs(base, m)).collect();
    if set.is_empty() { vec![base] } else { set }
}

/// `base` at MCS `mcs` (same family, streams, width and guard interval).
pub fn with_mcs(base: Rate, mcs: u8) -> Option<Rate> {
    use airtime_est::Encoding;
    let bw = base.bandwidth();
    match base.encoding() {
        Encoding::Ht => Rate::ht(mcs, bw, base.short_gi()).ok(),
        Encoding::Vht => Rate::vht(mcs, base.nss(), bw, base.short_gi()).ok(),
        Encoding::He => Rate::he(mcs, base.nss(), bw, base.he_gi()?).ok(),
        _ => None,
    }
}

/// The steps of a station walking away: from `from_ns` to `to_ns` its channel's MCS
/// steps down one at a time, evenly spaced, from `base`'s to `to_mcs`.
pub fn walk_away(base: Rate, from_ns: Nanos, to_ns: Nanos, to_mcs: u8) -> Vec<(Nanos, Rate)> {
    let Some(top) = base.mcs() else { return Vec::new() };
    if to_mcs >= top {
        return Vec::new();
    }
    let n = u64::from(top - to_mcs);
    let span = to_ns.saturating_sub(from_ns);
    (1..=n)
        .filter_map(|k| {
            let at = from_ns + span * (k - 1) / n.max(1);
            with_mcs(base, top - k as u8).map(|r| (at, r))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use airtime_est::Bandwidth;

    #[test]
    fn a_walk_away_steps_down_one_mcs_at_a_time_over_its_span() {
        let base = Rate::vht(9, 1, Bandwidth::Mhz80, true).unwrap();
        let steps = walk_away(base, 1_000, 10_000, 0);
        assert_eq!(steps.len(), 9);
        assert_eq!((steps[0].0, steps[0].1.mcs()), (1_000, Some(8)));
        assert_eq!(steps[8].1.mcs(), Some(0));
        assert!(steps.windows(2).all(|w| w[0].0 < w[1].0));
        let mut link = Link::new(base, steps, 0.0, RateControl::Fixed);
        assert_eq!(link.channel_at(0).mcs(), Some(9));
        assert_eq!(link.channel_at(20_000).mcs(), Some(0));
    }

    #[test]
    fn a_rate_above_the_channel_always_fails_and_one_at_it_fails_at_the_error_rate() {
        let base = Rate::vht(9, 1, Bandwidth::Mhz80, true).unwrap();
        let four = with_mcs(base, 4).unwrap();
        let mut link = Link::new(base, vec![(0, four)], 0.25, RateControl::Fixed);
        let mut rng = Rng::new(5);
        assert!(!(0..1000).any(|_| link.subframe_ok(base, 1, &mut rng)));
        let ok = (0..100_000).filter(|_| link.subframe_ok(four, 1, &mut rng)).count();
        assert!((ok as f64 / 1e5 - 0.75).abs() < 0.01, "{ok}");
    }
}
