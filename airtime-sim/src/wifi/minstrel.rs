//! A Minstrel-HT-shaped rate control: it learns each rate's success probability from tx
//! status, picks the rate of highest expected throughput, samples other rates now and
//! then, and falls back along a multi-rate-retry chain. The rate it reports (its best
//! throughput rate) is what the driver tells mac80211, so AQL's price lags the rate the
//! air really takes after the channel changes, as on hardware.
//!
//! What follows mac80211's `net/mac80211/rc80211_minstrel_ht.c` (by symbol):
//!
//! * statistics are folded every half `update_interval` (`minstrel_ht_tx_status` checks
//!   `last_stats_update + update_interval / 2`; `update_interval` is 100 ms in
//!   `minstrel_ht_alloc`), so every 50 ms;
//! * the success probability is an EWMA with 75 % weight on the old value
//!   (`minstrel_ewma` with `EWMA_LEVEL` 96 of `EWMA_DIV` 128 in `rc80211_minstrel.h`);
//! * the throughput of a rate is its probability times its rate, the probability capped
//!   at 90 % and a rate under 10 % worth nothing (`minstrel_ht_get_tp_avg`);
//! * `max_tp_rate[0]` and `[1]` are the two best throughputs; `max_prob_rate` the rate of
//!   highest throughput among those above 95 % success, else the most reliable
//!   (`minstrel_ht_set_best_prob_rate`); the retry chain is those three, then the lowest
//!   rate (`minstrel_ht_update_rates`);
//! * a sample is a single MPDU, not aggregated (mac80211 marks it
//!   `IEEE80211_TX_CTL_RATE_CTRL_PROBE`).
//!
//! Left out: `minstrel_downgrade_rate`, which on a failing best rate moves to a group with
//! fewer streams; the model has one group, so after a channel drop the best rate follows
//! only as the EWMA decays: one MCS step within one `update_interval`, a drop from MCS9
//! to MCS4 in four folds or more (the rates in between fail on the way down, and a rate
//! no longer tried keeps its old probability).
//!
//! Simplified: one rate group (the station's stream count, width and guard interval;
//! MCS 0 up to its own), sampling one exchange in ten (the 10 % `lookaround_rate_mrr` of
//! `rc80211_minstrel.c`) at any other rate of the group, uniformly (the sample table
//! spans the group); probabilities are floats (the simulator is not the core, which
//! stays integer).

use crate::engine::{Nanos, Rng};
use airtime_est::Rate;

/// Statistics are folded this often: half of mac80211's 100 ms `update_interval`.
pub const STATS_INTERVAL_NS: Nanos = 50_000_000;
/// Weight of the old value in the probability's EWMA (`EWMA_LEVEL` / `EWMA_DIV`).
pub const EWMA_OLD: f64 = 96.0 / 128.0;
/// Probability above which throughput gains nothing (`minstrel_ht_get_tp_avg`).
pub const PROB_CAP: f64 = 0.90;
/// Probability under which a rate's throughput is zero (`minstrel_ht_get_tp_avg`).
pub const PROB_FLOOR: f64 = 0.10;
/// Probability from which `max_prob_rate` prefers throughput.
pub const PROB_GOOD: f64 = 0.95;
/// Fraction of exchanges that sample another rate (`lookaround_rate_mrr`, 10 %).
pub const SAMPLE_FRACTION: f64 = 0.10;

#[derive(Clone, Copy, Debug, Default)]
struct RateStats {
    attempts: u32,
    success: u32,
    prob_avg: Option<f64>,
}

/// The rate control of one station's transmitter.
#[derive(Clone, Debug)]
pub struct Minstrel {
    rates: Vec<Rate>,
    stats: Vec<RateStats>,
    max_tp: [usize; 2],
    max_prob: usize,
    last_update_ns: Nanos,
    /// Times the statistics were folded.
    pub updates: u64,
}

/// The rate of one exchange, picked by [`Minstrel::pick`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pick {
    /// Index into the rate set.
    pub index: usize,
    /// The rate.
    pub rate: Rate,
    /// Whether it is a sample (a probe off the retry chain).
    pub sample: bool,
}

impl Minstrel {
    /// Rate control over `rates` (ascending speed, at least one); it starts at the
    /// fastest, which association would have offered.
    pub fn new(rates: Vec<Rate>) -> Option<Minstrel> {
        let top = rates.len().checked_sub(1)?;
        let n = rates.len();
        Some(Minstrel {
            rates,
            stats: vec![RateStats::default(); n],
            max_tp: [top, top.saturating_sub(1)],
            max_prob: 0,
            last_update_ns: 0,
            updates: 0,
        })
    }

    /// The rate set.
    pub fn rates(&self) -> &[Rate] {
        &self.rates
    }

    /// The best-throughput rate: what the driver reports as the station's rate.
    pub fn max_tp_rate(&self) -> Rate {
        self.rates[self.max_tp[0]]
    }

    /// The retry chain: `max_tp[0]`, `max_tp[1]`, `max_prob`, the lowest rate.
    pub fn chain(&self) -> [usize; 4] {
        [self.max_tp[0], self.max_tp[1], self.max_prob, 0]
    }

    /// The rate of an exchange whose frames have failed `stage` times in a row: the
    /// chain's `stage`th rate, or at stage 0 now and then a sample.
    pub fn pick(&self, stage: usize, rng: &mut Rng) -> Pick {
        let chain = self.chain();
        let index = chain[stage.min(chain.len() - 1)];
        if stage == 0 && self.rates.len() > 1 && rng.unit() < SAMPLE_FRACTION {
            // Any rate but the best, uniformly.
            let mut i = rng.below_or_eq(self.rates.len() as u64 - 2) as usize;
            if i >= self.max_tp[0] {
                i += 1;
            }
            return Pick { index: i, rate: self.rates[i], sample: true };
        }
        Pick { index, rate: self.rates[index], sample: false }
    }

    fn tp(&self, i: usize) -> f64 {
        match self.stats[i].prob_avg {
            Some(p) if p >= PROB_FLOOR => p.min(PROB_CAP) * f64::from(self.rates[i].phy_rate_kbps()),
            _ => 0.0,
        }
    }

    /// The tx status of an exchange at rate `index`: `attempts` subframes sent,
    /// `success` acknowledged. Folds the statistics when an interval has passed.
    pub fn tx_status(&mut self, index: usize, attempts: u32, success: u32, now: Nanos) {
        if let Some(s) = self.stats.get_mut(index) {
            s.attempts += attempts;
            s.success += success.min(attempts);
        }
        if now >= self.last_update_ns + STATS_INTERVAL_NS {
            self.update_stats(now);
        }
    }

    /// Folds this interval's counts into the averages and picks the rates again.
    pub fn update_stats(&mut self, now: Nanos) {
        self.last_update_ns = now;
        self.updates += 1;
        for s in &mut self.stats {
            if s.attempts > 0 {
                let cur = f64::from(s.success) / f64::from(s.attempts);
                s.prob_avg = Some(match s.prob_avg {
                    Some(old) => old * EWMA_OLD + cur * (1.0 - EWMA_OLD),
                    None => cur,
                });
            }
            s.attempts = 0;
            s.success = 0;
        }
        let mut order: Vec<usize> = (0..self.rates.len()).collect();
        order.sort_by(|&a, &b| self.tp(b).total_cmp(&self.tp(a)).then(b.cmp(&a)));
        if self.tp(order[0]) > 0.0 {
            self.max_tp = [order[0], order.get(1).copied().filter(|&i| self.tp(i) > 0.0).unwrap_or(order[0])];
        }
        let prob = |i: usize| self.stats[i].prob_avg.unwrap_or(0.0);
        let good: Vec<usize> = (0..self.rates.len()).filter(|&i| prob(i) >= PROB_GOOD).collect();
        self.max_prob = match good.iter().copied().max_by(|&a, &b| self.tp(a).total_cmp(&self.tp(b))) {
            Some(i) => i,
            None => (0..self.rates.len()).max_by(|&a, &b| prob(a).total_cmp(&prob(b)).then(b.cmp(&a))).unwrap_or(0),
        };
    }

    /// The learnt success probability of rate `index`, if it was ever tried.
    pub fn prob(&self, index: usize) -> Option<f64> {
        self.stats.get(index).and_then(|s| s.prob_avg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use airtime_est::Bandwidth;

    fn vht_set() -> Vec<Rate> {
        (0..=9).map(|m| Rate::vht(m, 1, Bandwidth::Mhz80, true).unwrap()).collect()
    }

    /// Sends exchanges of 32 subframes every 2 ms; a rate at or below `best` always
    /// succeeds, one above always fails.
    fn drive(m: &mut Minstrel, rng: &mut Rng, best: usize, from: Nanos, to: Nanos) {
        let mut t = from;
        let mut stage = 0;
        while t < to {
            let p = m.pick(stage, rng);
            let ok = if p.index <= best { 32 } else { 0 };
            m.tx_status(p.index, 32, ok, t);
            stage = if ok == 0 && !p.sample { stage + 1 } else { 0 };
            t += 2_000_000;
        }
    }

    /// The number of folds after `from` until the best rate is at or below `best`.
    fn folds_until(m: &mut Minstrel, rng: &mut Rng, best: usize, from: Nanos) -> u64 {
        let start = m.updates;
        let mut t = from;
        while m.max_tp[0] > best {
            drive(m, rng, best, t, t + 2_000_000);
            t += 2_000_000;
            assert!(t < from + 2_000_000_000, "never followed");
        }
        m.updates - start
    }

    #[test]
    fn it_settles_on_the_best_rate_and_follows_one_step_down_within_one_update_interval() {
        let mut rng = Rng::new(3);
        let mut m = Minstrel::new(vht_set()).unwrap();
        drive(&mut m, &mut rng, 9, 0, 1_000_000_000);
        assert_eq!(m.max_tp_rate().mcs(), Some(9));
        // One fold with the best rate failing: 0.75 x 433 < 0.9 x 390. The fold right
        // after the drop may hold no attempt at the best rate (a sample went instead).
        assert!(folds_until(&mut m, &mut rng, 8, 1_000_000_000) <= 2);
        let mut m = Minstrel::new(vht_set()).unwrap();
        drive(&mut m, &mut rng, 9, 0, 1_000_000_000);
        // A deep drop takes longer: 0.75^k x 433 (MCS9) falls under 0.9 x 195 (MCS4) at
        // k = 4, and the rates in between fail on the way.
        let folds = folds_until(&mut m, &mut rng, 4, 1_000_000_000);
        assert!((4..=12).contains(&folds), "{folds}");
    }

    #[test]
    fn throughput_caps_probability_at_90_percent_and_zeroes_it_under_10() {
        let mut m = Minstrel::new(vht_set()).unwrap();
        m.tx_status(9, 100, 5, 0);
        m.tx_status(8, 100, 100, 0);
        m.tx_status(7, 100, 100, STATS_INTERVAL_NS);
        assert_eq!(m.tp(9), 0.0);
        assert_eq!(m.tp(8), 0.9 * f64::from(m.rates[8].phy_rate_kbps()));
        assert_eq!(m.max_tp_rate().mcs(), Some(8));
    }
}
