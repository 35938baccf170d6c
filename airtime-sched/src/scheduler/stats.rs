//! Statistics in the shapes of mac80211's debugfs files, with `Display` output that
//! reads like them: per station `aql` and `airtime`; per PHY `aql_pending` and
//! `aql_txq_limit`; plus counters of rounds (the seed counts skipped selections).

use super::{SchedError, Scheduler};
use crate::sync::{AtomicU64, Ordering};
use crate::{Ac, AqlLimits, PerAc, StationId};
use core::fmt;

pub(crate) struct AtomicAcCounters {
    rounds_started: AtomicU64,
    closed_rounds: AtomicU64,
    skipped_selections: AtomicU64,
    uncharged_frames: AtomicU64,
    departed_tx_us: AtomicU64,
    departed_rx_us: AtomicU64,
    /// Pull-mode refusals, by `Refusal::index`.
    pull_refusals: [AtomicU64; 4],
}

impl AtomicAcCounters {
    pub(crate) fn new() -> Self {
        AtomicAcCounters {
            rounds_started: AtomicU64::new(0),
            closed_rounds: AtomicU64::new(0),
            skipped_selections: AtomicU64::new(0),
            uncharged_frames: AtomicU64::new(0),
            departed_tx_us: AtomicU64::new(0),
            departed_rx_us: AtomicU64::new(0),
            pull_refusals: [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)],
        }
    }

    /// Counts a pull-mode refusal; off the granted path.
    pub(crate) fn count_refusal(&self, why: super::Refusal) {
        if let Some(c) = self.pull_refusals.get(why.index()) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn count_uncharged(&self) {
        // Relaxed: statistics.
        self.uncharged_frames.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_departed(&self, tx_us: u32, rx_us: u32) {
        // Relaxed: statistics. Wrapping needs 584,000 years of airtime.
        for (counter, us) in [(&self.departed_tx_us, tx_us), (&self.departed_rx_us, rx_us)] {
            if us != 0 {
                counter.fetch_add(u64::from(us), Ordering::Relaxed);
            }
        }
    }

    pub(crate) fn count_round(&self, open: bool) {
        let c = if open { &self.rounds_started } else { &self.closed_rounds };
        c.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_skipped(&self) {
        self.skipped_selections.fetch_add(1, Ordering::Relaxed);
    }
}

/// Counters of one AC: rounds, uncharged frames, and airtime of departed stations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AcCounters {
    /// Rounds that opened.
    pub rounds_started: u64,
    /// Round starts that found the AC over its PHY limit and closed it.
    pub closed_rounds: u64,
    /// Selections that ended a round because the txq at the front was already served
    /// in it (what the seed's round fix counts: 4227 per run without the fix, 15 with).
    pub skipped_selections: u64,
    /// Frames the driver sent without an AQL charge, by its decision
    /// ([`Scheduler::send_uncharged`], [`Serving::send_uncharged`](crate::Serving::send_uncharged)).
    pub uncharged_frames: u64,
    /// Transmitted airtime registered for stations after their removal, in us.
    pub departed_tx_us: u64,
    /// Received airtime registered for stations after their removal, in us.
    pub departed_rx_us: u64,
    /// Pull-mode asks ([`Scheduler::may_transmit`], [`TxqTable::may_transmit`](crate::TxqTable::may_transmit))
    /// refused, by reason ([`Refusal`](super::Refusal)).
    pub pull_refusals: super::PullRefusals,
}

/// A station's `aql` file: pending airtime and limits per AC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StationAql {
    /// Pending airtime per AC, in us.
    pub pending_us: PerAc<u32>,
    /// Limits per AC as applied (after TX_NO_PUSHBACK scaling and, when on, bounded by
    /// adaptive AQL's learnt limit).
    pub limits: PerAc<AqlLimits>,
    /// With [`Config::adaptive_aql`](crate::Config::adaptive_aql) on, the limits per AC
    /// as configured (after TX_NO_PUSHBACK scaling), which the learnt ones stay under.
    pub configured: Option<PerAc<AqlLimits>>,
}

impl fmt::Display for StationAql {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "AC\t\tAQL pending")?;
        for ac in Ac::ALL {
            writeln!(f, "{}\t\t{} us", ac, self.pending_us[ac])?;
        }
        writeln!(f, "AC\t\tAQL limit low\tAQL limit high")?;
        for ac in Ac::ALL {
            let l = self.limits[ac];
            writeln!(f, "{}\t\t{}\t\t{}", ac, l.low_us(), l.high_us())?;
        }
        if let Some(configured) = self.configured {
            writeln!(f, "AC\t\tAQL adaptive (configured low/high)")?;
            for ac in Ac::ALL {
                let c = configured[ac];
                writeln!(f, "{}\t\t{}\t\t{}", ac, c.low_us(), c.high_us())?;
            }
        }
        Ok(())
    }
}

/// A station's `airtime` file: registered rx/tx totals, weight, deficit per AC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StationAirtime {
    /// Received airtime registered, all ACs, in us.
    pub rx_us: u64,
    /// Transmitted airtime registered, all ACs, in us.
    pub tx_us: u64,
    /// Transmitted airtime per AC, in us.
    pub tx_us_per_ac: PerAc<u64>,
    /// Airtime weight.
    pub weight: u16,
    /// Stored deficit per AC, in us.
    pub deficit_us: PerAc<i64>,
}

impl fmt::Display for StationAirtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "RX: {} us", self.rx_us)?;
        writeln!(f, "TX: {} us", self.tx_us)?;
        writeln!(f, "Weight: {}", self.weight)?;
        write!(f, "Deficit:")?;
        for ac in Ac::ALL {
            write!(f, " {}: {} us", ac, self.deficit_us[ac])?;
        }
        writeln!(f)
    }
}

/// The PHY's `aql_pending` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PhyAqlPending {
    /// Pending airtime per AC, in us: station (unicast) frames.
    pub pending_us: PerAc<u32>,
    /// Their sum, in us (`aql_total_pending_airtime`). Multicast charges are not in it,
    /// as the multicast AQL patches keep theirs out of that total: they are in
    /// `multicast_us`. Station-less frames sent uncharged (a driver that does not
    /// price multicast) are in neither; they are counted in
    /// [`AcCounters::uncharged_frames`].
    pub total_us: u32,
    /// Pending airtime of charged multicast (station-less) frames per AC, in us: each
    /// AC's multicast budget in use ([`Scheduler::multicast_pending_us`]).
    pub multicast_us: PerAc<u32>,
}

impl fmt::Display for PhyAqlPending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "AC     AQL pending")?;
        for ac in Ac::ALL {
            writeln!(f, "{}     {} us", ac, self.pending_us[ac])?;
        }
        // The patches' "MC" line, once per AC: the budget is per AC here.
        for ac in Ac::ALL {
            writeln!(f, "MC {}  {} us", ac, self.multicast_us[ac])?;
        }
        writeln!(f, "total  {} us", self.total_us)
    }
}

/// The PHY's `aql_txq_limit` file (and its threshold).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PhyAqlLimits {
    /// Default limits per AC.
    pub limits: PerAc<AqlLimits>,
    /// `aql_threshold`, in us.
    pub threshold_us: u32,
}

impl fmt::Display for PhyAqlLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "AC\tAQL limit low\tAQL limit high")?;
        for ac in Ac::ALL {
            let l = self.limits[ac];
            writeln!(f, "{}\t{}\t\t{}", ac, l.low_us(), l.high_us())?;
        }
        Ok(())
    }
}

impl Scheduler {
    /// A station's `aql` file.
    pub fn station_aql(&self, id: StationId) -> Result<StationAql, SchedError> {
        let slot = self.station_slot(id)?;
        Ok(StationAql {
            pending_us: PerAc::from_fn(|ac| slot.pending_us(ac)),
            limits: PerAc::from_fn(|ac| self.effective_limits_of(&slot, ac)),
            configured: self.config.adaptive_aql.then(|| PerAc::from_fn(|ac| self.configured_limits_of(&slot, ac))),
        })
    }

    /// A station's `airtime` file.
    pub fn station_airtime(&self, id: StationId) -> Result<StationAirtime, SchedError> {
        let slot = self.station_slot(id)?;
        let airtime = Ac::ALL.map(|ac| slot.airtime_us(ac));
        let tx_us_per_ac = airtime.map(|(tx, _)| tx);
        Ok(StationAirtime {
            rx_us: airtime.iter().map(|&(_, rx)| rx).fold(0, u64::saturating_add),
            tx_us: tx_us_per_ac.iter().copied().fold(0, u64::saturating_add),
            tx_us_per_ac: PerAc(tx_us_per_ac),
            weight: slot.weight() as u16,
            deficit_us: PerAc::from_fn(|ac| slot.deficit_us(ac)),
        })
    }

    /// The PHY's `aql_pending` file.
    pub fn phy_aql_pending(&self) -> PhyAqlPending {
        PhyAqlPending {
            pending_us: PerAc::from_fn(|ac| self.ac_pending_us(ac)),
            total_us: self.total_pending_us(),
            multicast_us: PerAc::from_fn(|ac| self.multicast_pending_us(ac)),
        }
    }

    /// The PHY's `aql_txq_limit` file.
    pub fn phy_aql_limits(&self) -> PhyAqlLimits {
        PhyAqlLimits { limits: PerAc::from_fn(|ac| self.default_limits(ac)), threshold_us: self.aql_threshold_us() }
    }

    /// Counters of `ac`.
    pub fn ac_counters(&self, ac: Ac) -> AcCounters {
        let c = &self.acs[ac].counters;
        AcCounters {
            rounds_started: c.rounds_started.load(Ordering::Relaxed),
            closed_rounds: c.closed_rounds.load(Ordering::Relaxed),
            skipped_selections: c.skipped_selections.load(Ordering::Relaxed),
            uncharged_frames: c.uncharged_frames.load(Ordering::Relaxed),
            departed_tx_us: c.departed_tx_us.load(Ordering::Relaxed),
            departed_rx_us: c.departed_rx_us.load(Ordering::Relaxed),
            pull_refusals: {
                let [over_phy_limit, deficit, served, queue_busy] =
                    c.pull_refusals.each_ref().map(|c| c.load(Ordering::Relaxed));
                super::PullRefusals { over_phy_limit, deficit, served, queue_busy }
            },
        }
    }
}
