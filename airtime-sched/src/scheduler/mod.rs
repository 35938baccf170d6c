//! The scheduler: AQL accounting, weighted deficit round robin, and rounds, over
//! fixed-capacity slot arrays of atomics.
//!
//! Data-path operations take `&self` and no lock, so the wake context and the tx
//! completion context may run them at once on different CPUs, for the same AC. Control
//! operations (adding and removing stations and txqs) also take `&self` and claim slots
//! with compare-and-swap, so they need no lock either.

mod accounting;
pub(crate) mod adaptive_aql;
mod batch_release;
mod departing;
mod drr;
mod errors;
mod invariants;
mod kept;
mod listing;
mod multicast;
mod pull;
mod registry;
mod round;
mod rounds;
mod serving;
mod stats;

pub use batch_release::BatchRelease;
pub use departing::DepartingStation;
pub use errors::{ChargeError, ReleaseError, SchedError};
pub use invariants::InvariantViolation;
pub(crate) use kept::HoldRefused;
pub use pull::{MayTransmit, PullRefusals, Refusal};
pub use round::Round;
pub use serving::{Serving, TxqReturn};
pub use stats::{AcCounters, PhyAqlLimits, PhyAqlPending, StationAirtime, StationAql};

use crate::config::{AirtimeFlags, AqlLimits, Config, ConfigError};
use crate::list::AcList;
use crate::slots::{StationSlot, TxqSlot};
use crate::sync::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use crate::{Ac, PerAc};

/// A 64-bit count of us as the `u32` the public API and mainline's debugfs use.
#[inline]
fn saturate(us: u64) -> u32 {
    u32::try_from(us).unwrap_or(u32::MAX)
}
use alloc::boxed::Box;

/// mac80211's `IEEE80211_AQL_THRESHOLD`: 24000 us of PHY-wide pending airtime, below
/// which stations may use their high limit.
pub const DEFAULT_AQL_THRESHOLD_US: u32 = 24_000;

/// mac80211's `IEEE80211_DEFAULT_AQL_TXQ_LIMIT_BC`: 50 ms of multicast airtime in flight
/// (half of a 100 TU beacon interval), the default multicast budget of each AC.
pub const DEFAULT_MULTICAST_LIMIT_US: u32 = 50_000;

/// Per-AC scheduler state, on lines of its own (see `cache_line`): rounds and charges on one AC never
/// write the lines of another, nor those of the scheduler's read-mostly settings.
#[repr(align(128))]
pub(crate) struct AcState {
    /// Round word: bits 0..63 the number of the latest round started, bit 63 "open"
    /// (the seed's fix keeps them apart; both live in one word so a reader sees a
    /// consistent pair).
    pub(crate) round: AtomicU64,
    /// The txqs waiting for service, in mainline's order (`active_txqs[ac]`).
    pub(crate) list: AcList,
    /// Numbers the lap skips on this AC (`drr`), so each knows its own scratch marks.
    pub(crate) lap_skips: AtomicU64,
    /// Sum of station pending airtime on this AC (`aql_ac_pending_airtime`), in 64 bits
    /// so that no number of stations, each under `u32::MAX`, can wrap it. Signed: charges
    /// made through a held txq are added when it is returned (see [`Serving`]), so a
    /// release that overtakes them takes it below their sum for a while, even below 0;
    /// readers see at least 0. Between operations it is exactly the sum (A1).
    pub(crate) pending_us: AtomicI64,
    /// PHY default limits for new stations and for the per-AC PHY limit.
    pub(crate) default_limits: AtomicU64,
    pub(crate) counters: stats::AtomicAcCounters,
    /// Airtime of multicast frames in flight on this AC, in us (`aql_mc_pending_airtime`
    /// of mac80211's multicast AQL patches, which is one for the radio): not part of
    /// `pending_us`.
    pub(crate) multicast_pending_us: AtomicU64,
    /// The AC's multicast budget, in us.
    pub(crate) multicast_limit_us: AtomicU32,
}

impl AcState {
    /// Txqs listed on the AC: the per-AC PHY limit's `n`, in O(1) (mainline walks the
    /// list).
    #[inline]
    pub(crate) fn listed(&self) -> u32 {
        self.list.listed()
    }
}

/// The AQL and airtime-fairness scheduler for one radio (mac80211's per-PHY state).
///
/// See the [crate documentation](crate) for the layers and a driver's view.
pub struct Scheduler {
    pub(crate) config: Config,
    /// This scheduler's number (never 0): what its charges and rounds carry, so that one
    /// handed to another radio's scheduler is refused there instead of corrupting its
    /// counters. 16 bits keep a charge in two registers; the number repeats only after
    /// 65535 more schedulers were created.
    pub(crate) radio: u16,
    pub(crate) stations: Box<[StationSlot]>,
    pub(crate) txqs: Box<[TxqSlot]>,
    /// On the heap, away from the read-mostly fields around it (each AC on lines of its
    /// own, see `AcState`), which every operation reads while rounds write the ACs.
    pub(crate) acs: Box<PerAc<AcState>>,
    /// `aql_threshold` in us.
    pub(crate) threshold_us: AtomicU32,
    /// TX_NO_PUSHBACK or adaptive AQL adjusts station limits (from the config).
    pub(crate) adjusted_limits: bool,
    /// AQL checks on (1) or off (0): mainline's `aql_enable`, but per scheduler.
    pub(crate) aql_enabled: AtomicU32,
    /// Packed [`AirtimeFlags`]: bit 0 tx, bit 1 rx.
    pub(crate) airtime_flags: AtomicU32,
    /// Releases that found less pending airtime than they carried (should stay 0).
    pub(crate) underflows: AtomicU64,
    /// Next-fit cursors: where `add_station` and `add_txq` start looking for a slot (the
    /// one after the slot each allocated last), so that a slot is reused only after
    /// every other free one was, and no single slot takes all the churn.
    pub(crate) station_cursor: AtomicU32,
    pub(crate) txq_cursor: AtomicU32,
    /// Slots of removed txqs whose queues a [`TxqTable`](crate::TxqTable) keeps, waiting
    /// to be handed back (see `kept`).
    pub(crate) retired: crate::list::HeadStack,
    /// One byte per txq slot for [`check_invariants_quiescent`](Self::check_invariants_quiescent)
    /// (the ACs whose lists hold the slot), allocated here so that the check, run from a
    /// debugfs file in a kernel, never allocates.
    pub(crate) quiescent_seen: Box<[u8]>,
}

/// A number for a new scheduler: it wraps after 65535 schedulers, skipping 0, which
/// marks a charge from [`Charge::from_raw`](crate::Charge::from_raw).
fn next_radio() -> u16 {
    // Not a loom atomic: an identity, not part of any modelled protocol.
    static NEXT: core::sync::atomic::AtomicU16 = core::sync::atomic::AtomicU16::new(1);
    loop {
        let radio = NEXT.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        if radio != 0 {
            return radio;
        }
    }
}

impl core::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Scheduler")
            .field("config", &self.config)
            .field("pending_us", &self.phy_aql_pending().pending_us)
            .finish_non_exhaustive()
    }
}

impl Scheduler {
    /// A scheduler with room for `config.max_stations` stations and `config.max_txqs`
    /// txqs. All memory is allocated here; the data path never allocates. When memory
    /// is short: [`ConfigError::OutOfMemory`], never the allocator's abort.
    pub fn new(config: Config) -> Result<Scheduler, ConfigError> {
        if config.max_stations == 0 || config.max_stations > Config::MAX_STATIONS || config.max_txqs == 0 {
            return Err(ConfigError::Capacity);
        }
        let oom = ConfigError::OutOfMemory;
        let stations =
            crate::try_alloc::boxed_slice(usize::from(config.max_stations), |_| StationSlot::new()).ok_or(oom)?;
        let txqs = crate::try_alloc::boxed_slice(usize::from(config.max_txqs), |_| TxqSlot::new()).ok_or(oom)?;
        let cap = usize::from(config.max_txqs);
        let retired = crate::list::HeadStack::try_new(cap).ok_or(oom)?;
        let quiescent_seen = crate::try_alloc::boxed_slice(cap, |_| 0u8).ok_or(oom)?;
        // Each AC's state made in its place on the heap: the four together are over a
        // kilobyte, too much for a kernel stack frame.
        let acs = crate::try_alloc::boxed_per_ac(|_| {
            Some(AcState {
                round: AtomicU64::new(0),
                list: AcList::try_new(cap)?,
                lap_skips: AtomicU64::new(0),
                pending_us: AtomicI64::new(0),
                default_limits: AtomicU64::new(AqlLimits::DEFAULT.pack()),
                counters: stats::AtomicAcCounters::new(),
                multicast_pending_us: AtomicU64::new(0),
                multicast_limit_us: AtomicU32::new(DEFAULT_MULTICAST_LIMIT_US),
            })
        })
        .ok_or(oom)?;
        Ok(Scheduler {
            radio: next_radio(),
            adjusted_limits: config.tx_no_pushback || config.adaptive_aql,
            config,
            stations,
            txqs,
            acs,
            threshold_us: AtomicU32::new(DEFAULT_AQL_THRESHOLD_US),
            aql_enabled: AtomicU32::new(1),
            airtime_flags: AtomicU32::new(0b11),
            underflows: AtomicU64::new(0),
            station_cursor: AtomicU32::new(0),
            txq_cursor: AtomicU32::new(0),
            retired,
            quiescent_seen,
        })
    }

    /// The configuration fixed at construction.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Turns the AQL checks on or off (mainline's `aql_enable`, but per radio and
    /// idempotent, so the 2026 static-key underflow (B6) cannot happen).
    /// Charges are still counted while off, so toggling with frames in flight keeps the
    /// counters exact (mainline stops counting and then underflows).
    pub fn set_aql_enabled(&self, on: bool) {
        // Relaxed: a switch read by the next check; nothing is published with it.
        self.aql_enabled.store(u32::from(on), Ordering::Relaxed);
    }

    /// Whether the AQL checks are on.
    #[inline]
    pub fn aql_enabled(&self) -> bool {
        self.aql_enabled.load(Ordering::Relaxed) != 0
    }

    /// Sets the PHY-wide threshold below which stations may use their high limit.
    pub fn set_aql_threshold_us(&self, threshold_us: u32) {
        self.threshold_us.store(threshold_us, Ordering::Relaxed);
    }

    /// The PHY-wide threshold, in us.
    pub fn aql_threshold_us(&self) -> u32 {
        self.threshold_us.load(Ordering::Relaxed)
    }

    /// Sets which registered airtime is charged to the deficit.
    pub fn set_airtime_flags(&self, flags: AirtimeFlags) {
        let bits = u32::from(flags.charge_tx) | (u32::from(flags.charge_rx) << 1);
        self.airtime_flags.store(bits, Ordering::Relaxed);
    }

    /// Which registered airtime is charged to the deficit.
    pub fn airtime_flags(&self) -> AirtimeFlags {
        let bits = self.airtime_flags.load(Ordering::Relaxed);
        AirtimeFlags::new(bits & 1 != 0, bits & 2 != 0)
    }

    /// Sets the PHY default limits of `ac` (mac80211's `aql_txq_limit` write): new
    /// stations start with them, the per-AC PHY limit is computed from them, and every
    /// station whose limits still equal the old default follows (customised stations
    /// keep theirs, E8).
    ///
    /// A station added meanwhile ends with the new default (it copies the default, then
    /// follows it while it changes), and of two changes at once the one made last wins
    /// for every station still on a default.
    pub fn set_default_limits(&self, ac: Ac, limits: AqlLimits) {
        let state = &self.acs[ac];
        // Weakened variant, only to prove loom model 5 catches it: the pair written as two
        // words would be, the new low limit first, so a reader can meet it with the old high.
        let old = if weakened!("limits_split") {
            let old = state.default_limits.load(Ordering::Relaxed);
            state.default_limits.store((old & !0xffff_ffff) | (limits.pack() & 0xffff_ffff), Ordering::Relaxed);
            state.default_limits.store(limits.pack(), Ordering::Relaxed);
            old
        } else {
            // AcqRel: Acquires the limits copied by a station added before this, whose
            // check of the default this swap reads from (see `registry::follow_default`).
            state.default_limits.swap(limits.pack(), Ordering::AcqRel)
        };
        for slot in self.stations.iter() {
            let station_limits = &slot.ac[ac].limits;
            // Weakened variant, only to prove loom model ctl7 catches it: one move from
            // the old default to this one, which a concurrent change can overtake.
            if weakened!("default_no_follow") {
                let _ = station_limits.compare_exchange(old, limits.pack(), Ordering::Relaxed, Ordering::Relaxed);
            } else {
                registry::follow_default(&state.default_limits, station_limits, old);
            }
        }
    }

    /// The PHY default limits of `ac`.
    pub fn default_limits(&self, ac: Ac) -> AqlLimits {
        AqlLimits::unpack(self.acs[ac].default_limits.load(Ordering::Relaxed))
    }

    /// Pending (charged, not yet released) airtime on `ac`, all stations, in us
    /// (`u32::MAX` if more: over 71 minutes in flight). Charges made through a held txq
    /// count here once its handle adds them (see [`Serving`]: less than
    /// [`Serving::FLUSH_US`] per handle is ever missing).
    pub fn ac_pending_us(&self, ac: Ac) -> u32 {
        saturate(u64::try_from(self.acs[ac].pending_us.load(Ordering::Relaxed)).unwrap_or(0))
    }

    /// Adds `us` (negative: subtracts) to `ac`'s pending counter.
    #[inline]
    pub(crate) fn add_ac_pending(&self, ac: Ac, us: i64) {
        // Relaxed: a counter read by the AQL checks and statistics.
        self.acs[ac].pending_us.fetch_add(us, Ordering::Relaxed);
    }

    /// Pending airtime over all ACs (`aql_total_pending_airtime`), in us. Derived from
    /// the per-AC counters, so it always equals their sum (invariant A1); like them, it
    /// counts a held txq's charges once its handle adds them. Station (unicast) charges
    /// only: multicast charges are counted per AC in
    /// [`multicast_pending_us`](Self::multicast_pending_us) (both are in
    /// [`phy_aql_pending`](Self::phy_aql_pending)).
    pub fn total_pending_us(&self) -> u32 {
        saturate(self.total_pending_counting_us(None))
    }

    /// The total, in us, as a context that holds `held = (ac, us)` of charges not yet
    /// added to that AC's counter sees it: they are added to that counter before it is
    /// read as at least 0, so that releases of them, already subtracted, are not counted
    /// twice. `None`: the total as every other reader sees it.
    #[inline]
    pub(crate) fn total_pending_counting_us(&self, held: Option<(Ac, u64)>) -> u64 {
        Ac::ALL
            .iter()
            .map(|&a| {
                let counter = self.acs[a].pending_us.load(Ordering::Relaxed);
                let seen = match held {
                    Some((ac, us)) if ac == a => counter.saturating_add(i64::try_from(us).unwrap_or(i64::MAX)),
                    _ => counter,
                };
                u64::try_from(seen).unwrap_or(0)
            })
            // Four counters of up to i64::MAX each: `sum` could overflow (a panic with
            // overflow checks, which clippy's lint does not see).
            .fold(0, u64::saturating_add)
    }

    /// The per-AC PHY limit (`ieee80211_txq_schedule_airtime_check`): `high + (n - 1) * low / 2` over the `n`
    /// txqs listed on the AC, or `None` (no limit) when none is listed; mainline wraps
    /// to about 2^31 there (E4), which has the same effect by accident.
    pub fn phy_limit_us(&self, ac: Ac) -> Option<u32> {
        crate::aql::phy_limit_us(self.acs[ac].listed(), self.default_limits(ac))
    }
}
