//! Configuration values, each validated where it is made: a weight of 0 or a low limit
//! above the high limit cannot exist as a value, so the data path never checks them.

use core::fmt;

/// A station's airtime weight: the microseconds of credit one deficit top-up adds
/// (mac80211 has no separate quantum; the weight *is* the quantum: `ieee80211_next_txq` tops a deficit up by `airtime_weight`).
/// Range 1..=65535; 0 is refused ([`ConfigError::ZeroWeight`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Weight(u16);

impl Weight {
    /// mac80211's default, `IEEE80211_DEFAULT_AIRTIME_WEIGHT`: 256 us.
    pub const DEFAULT: Weight = Weight(256);

    /// A weight; 0 is refused.
    pub const fn new(w: u16) -> Result<Weight, ConfigError> {
        if w == 0 { Err(ConfigError::ZeroWeight) } else { Ok(Weight(w)) }
    }

    /// The weight in microseconds of credit per top-up.
    #[inline]
    pub const fn get(self) -> u16 {
        self.0
    }
}

impl Default for Weight {
    fn default() -> Self {
        Weight::DEFAULT
    }
}

/// A station's per-AC AQL limits in microseconds of pending (charged, not yet
/// completed) airtime (`ieee80211_txq_airtime_check`). `low <= high` always holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AqlLimits {
    low_us: u32,
    high_us: u32,
}

impl AqlLimits {
    /// mac80211's defaults: 5000 us low, 12000 us high (`IEEE80211_DEFAULT_AQL_TXQ_LIMIT_L/H`).
    pub const DEFAULT: AqlLimits = AqlLimits { low_us: 5000, high_us: 12000 };

    /// Limits of `low_us` and `high_us`; an inverted pair is refused.
    pub const fn new(low_us: u32, high_us: u32) -> Result<AqlLimits, ConfigError> {
        if low_us > high_us {
            Err(ConfigError::InvertedLimits { low_us, high_us })
        } else {
            Ok(AqlLimits { low_us, high_us })
        }
    }

    /// The low limit: always allowed, whatever the PHY total.
    #[inline]
    pub const fn low_us(self) -> u32 {
        self.low_us
    }

    /// The high limit: allowed while the PHY total is below the threshold.
    #[inline]
    pub const fn high_us(self) -> u32 {
        self.high_us
    }

    /// Both limits in one word, so that a limit change is seen whole (never a new low
    /// with an old high) by a concurrent AQL check.
    #[inline]
    pub(crate) const fn pack(self) -> u64 {
        (self.low_us as u64) | ((self.high_us as u64) << 32)
    }

    #[inline]
    pub(crate) const fn unpack(word: u64) -> AqlLimits {
        AqlLimits { low_us: word as u32, high_us: (word >> 32) as u32 }
    }

    /// TX_NO_PUSHBACK scaling (the `IEEE80211_HW_TX_NO_PUSHBACK` flag proposed with the ath11k AQL series): both limits times `weight / 256`,
    /// rounded down, then raised to at least `floor_us` so that no limit becomes zero.
    /// The result keeps `low <= high`.
    pub const fn scaled_by_weight(self, weight: Weight, floor_us: u32) -> AqlLimits {
        const fn scale(us: u32, w: u16, floor: u32) -> u32 {
            const ONE: u64 = Weight::DEFAULT.0 as u64;
            let v = (us as u64).wrapping_mul(w as u64) / ONE; // 48 bits
            let v = if v > u32::MAX as u64 { u32::MAX } else { v as u32 };
            if v < floor { floor } else { v }
        }
        AqlLimits { low_us: scale(self.low_us, weight.0, floor_us), high_us: scale(self.high_us, weight.0, floor_us) }
    }
}

impl Default for AqlLimits {
    fn default() -> Self {
        AqlLimits::DEFAULT
    }
}

/// What closing an AC (the per-AC PHY check failing at round start) does to the round
/// number (B1; the seed's patch "wifi: mac80211: keep the TXQ scheduling round number across a closed round").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RoundPolicy {
    /// The fix: "open" is a flag of its own; the round number is left alone, so no
    /// number is ever reused (invariant S5).
    #[default]
    KeepNumber,
    /// Mainline before the fix: a closed round resets the number to 0, so the next open
    /// round is numbered 1 again and every txq stamped 1 is skipped once. Exists only to
    /// reproduce the seed's measurement; never use it in a driver.
    ResetOnClose,
}

/// What [`Scheduler::may_transmit`](crate::Scheduler::may_transmit) answers while the
/// AC is over its per-AC PHY limit (`ieee80211_txq_may_transmit`, E5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OverLimitPolicy {
    /// Refuse, as a round would (invariant L3 holds for pull-mode drivers too). Default.
    #[default]
    Refuse,
    /// Allow without touching the rotation: mainline's behaviour, for comparison.
    AllowLikeMainline,
}

/// Which registered airtime is charged to the deficit (mac80211's `airtime_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct AirtimeFlags {
    /// Charge transmitted airtime (`AIRTIME_USE_TX`).
    pub charge_tx: bool,
    /// Charge received airtime (`AIRTIME_USE_RX`).
    pub charge_rx: bool,
}

impl Default for AirtimeFlags {
    fn default() -> Self {
        AirtimeFlags { charge_tx: true, charge_rx: true }
    }
}

impl AirtimeFlags {
    /// Flags with both settings given.
    pub const fn new(charge_tx: bool, charge_rx: bool) -> AirtimeFlags {
        AirtimeFlags { charge_tx, charge_rx }
    }

    /// Neither is charged: the deficit never decreases and DRR degenerates to round
    /// robin gated by AQL (mac80211's `airtime_flags` debugfs).
    pub const fn any(self) -> bool {
        self.charge_tx || self.charge_rx
    }
}

/// Scheduler configuration, fixed at construction. Build it with [`Config::builder`],
/// whose setters take counts as `usize` and times in us as `u64` and refuse values out
/// of range, or from `Default` and then set fields (the struct is `#[non_exhaustive]`,
/// so adding a field is not a breaking change). Values that change at run time (limits,
/// weights, threshold, AQL on/off, flags) have setters on the scheduler.
///
/// ```
/// use airtime_sched::{Config, ConfigError};
///
/// let config = Config::builder().max_stations(64)?.max_txqs(64 * 17)?.tx_no_pushback(true).build();
/// assert_eq!((config.max_stations, config.max_txqs), (64, 1088));
/// assert_eq!(Config::builder().max_stations(5000).unwrap_err(), ConfigError::Capacity);
/// # Ok::<(), ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// Maximum number of stations (at most 4096, the compact charge encoding's range).
    pub max_stations: u16,
    /// Maximum number of txqs (at most 65535).
    pub max_txqs: u16,
    /// Round policy; the default is the seed's fix.
    pub round_policy: RoundPolicy,
    /// `may_transmit` while the AC is over its PHY limit.
    pub over_limit: OverLimitPolicy,
    /// The firmware picks the next transmitter among the stations with frames in the
    /// hardware's rings (ath11k; the proposed `IEEE80211_HW_TX_NO_PUSHBACK`), so the
    /// host's scheduling order does not reach the air: per-station limits then scale by
    /// weight/256, so that weights act through the airtime each station may have queued.
    pub tx_no_pushback: bool,
    /// Lowest limit TX_NO_PUSHBACK scaling may produce, in us.
    pub no_pushback_floor_us: u32,
    /// Charge for a frame dequeued before its station's first rate report (mainline
    /// charges nothing, E1), in us, used when the [`Station`](crate::Station)
    /// cannot price the frame. The default prices a 1538-byte frame at 6 Mbit/s OFDM.
    pub unknown_rate_charge_us: u32,
    /// How long a station stays active on an AC after it last had frames scheduled, in
    /// us (mac80211: `HZ/10`, 100 ms), to within
    /// [`active_stamp_grain_us`](Config::active_stamp_grain_us). Stamps are kept modulo
    /// 2^48 us, so a window of 2^47 us (4.4 years) or more never ends.
    pub active_window_us: u64,
    /// Adaptive AQL (off by default): each station's limit on each AC is learnt from its
    /// completions, as BQL's dynamic queue limits learn a NIC ring's bytes, within
    /// `[adaptive_aql_floor_us, configured high limit]`, starting at the configured one.
    /// It grows by half when a completion leaves the station no more pending than it
    /// released while its limit was holding frames back (the hardware is about to idle
    /// waiting for the driver), and shrinks, after 100 ms of the station's airtime
    /// without growing, by the slack its completions left (at most an eighth). A fast
    /// station then keeps less queued below the AQM (lower latency); a slow one keeps
    /// enough to cover the completion turnaround (its throughput). Mainline has one
    /// limit per AC for every station, set by hand in debugfs (`aql_txq_limit`), which
    /// must suit the slowest. The learnt limits show in
    /// [`Scheduler::station_aql`](crate::Scheduler::station_aql). Switch it on with
    /// [`ConfigBuilder::adaptive_aql`]. With [`tx_no_pushback`](Self::tx_no_pushback),
    /// where the limits are how weights reach the air, learnt limits undo the weights
    /// (the simulator's `adaptive-split-nopushback` arm): do not combine them.
    pub adaptive_aql: bool,
    /// The lowest limit adaptive AQL may learn, in us. The default, 500 us, lets one
    /// 1500-byte frame be in flight at any rate from 24 Mbit/s up (the OFDM rate every
    /// 5 GHz station supports at the lowest MCS of a 20 MHz channel and above).
    pub adaptive_aql_floor_us: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_stations: 128,
            max_txqs: 1024,
            // Weakened variant, only to prove loom model 10 catches it: mainline's test,
            // "handed out in this very round", ends a round; with two contexts starting
            // rounds, a txq handed out by the other's later round no longer ends this one.
            round_policy: if weakened!("round_end_this_only") {
                RoundPolicy::ResetOnClose
            } else {
                RoundPolicy::KeepNumber
            },
            over_limit: OverLimitPolicy::Refuse,
            tx_no_pushback: false,
            no_pushback_floor_us: 100,
            unknown_rate_charge_us: 2084,
            active_window_us: 100_000,
            adaptive_aql: false,
            adaptive_aql_floor_us: 500,
        }
    }
}

impl Config {
    /// The largest `max_stations` the compact charge encoding can carry.
    pub const MAX_STATIONS: u16 = 4096;

    /// The grain of a station's activity stamp, in us: 1/128 of
    /// [`active_window_us`](Config::active_window_us) (781 us of the default 100 ms), at
    /// least 1. A wake or a return writes the stamp only once it is this old, so a
    /// station counts as active for at least `active_window_us - grain` after it last had
    /// frames scheduled, and at most `active_window_us`: up to a grain shorter than the
    /// window, where mainline's stamp, in jiffies, keeps a station active for the window
    /// and up to a jiffy (1 to 10 ms) longer. Writing the stamp at every wake took its
    /// cache line, which the completion context writes at every release, once per frame.
    pub const fn active_stamp_grain_us(&self) -> u64 {
        let grain = self.active_window_us >> 7;
        if grain == 0 { 1 } else { grain }
    }

    /// A builder starting from the defaults.
    pub fn builder() -> ConfigBuilder {
        ConfigBuilder(Config::default())
    }
}

/// Builds a [`Config`] with typed, validated setters: no caller needs a cast, and a
/// value the scheduler cannot hold is refused where it is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a builder does nothing until build() is called"]
pub struct ConfigBuilder(Config);

impl ConfigBuilder {
    /// Room for `n` stations, `1..=Config::MAX_STATIONS` ([`ConfigError::Capacity`]
    /// otherwise).
    pub fn max_stations(mut self, n: usize) -> Result<ConfigBuilder, ConfigError> {
        self.0.max_stations =
            u16::try_from(n).ok().filter(|&n| (1..=Config::MAX_STATIONS).contains(&n)).ok_or(ConfigError::Capacity)?;
        Ok(self)
    }

    /// Room for `n` txqs, `1..=65535` ([`ConfigError::Capacity`] otherwise).
    pub fn max_txqs(mut self, n: usize) -> Result<ConfigBuilder, ConfigError> {
        self.0.max_txqs = u16::try_from(n).ok().filter(|&n| n != 0).ok_or(ConfigError::Capacity)?;
        Ok(self)
    }

    /// The round policy.
    pub fn round_policy(mut self, policy: RoundPolicy) -> ConfigBuilder {
        self.0.round_policy = policy;
        self
    }

    /// What `may_transmit` answers while the AC is over its PHY limit.
    pub fn over_limit(mut self, policy: OverLimitPolicy) -> ConfigBuilder {
        self.0.over_limit = policy;
        self
    }

    /// Whether firmware picks the next transmitter (see [`Config::tx_no_pushback`]).
    pub fn tx_no_pushback(mut self, on: bool) -> ConfigBuilder {
        self.0.tx_no_pushback = on;
        self
    }

    /// The lowest limit TX_NO_PUSHBACK scaling may produce, in us, at most `u32::MAX`
    /// ([`ConfigError::OutOfRange`] otherwise).
    pub fn no_pushback_floor_us(mut self, us: u64) -> Result<ConfigBuilder, ConfigError> {
        self.0.no_pushback_floor_us = u32::try_from(us).map_err(|_| ConfigError::OutOfRange("no_pushback_floor_us"))?;
        Ok(self)
    }

    /// The charge for a frame its station cannot price yet, in us, `4..=Charge::MAX_US`
    /// (65532: a charge is a multiple of 4 us in that range; [`ConfigError::OutOfRange`]
    /// otherwise).
    pub fn unknown_rate_charge_us(mut self, us: u64) -> Result<ConfigBuilder, ConfigError> {
        self.0.unknown_rate_charge_us = u32::try_from(us)
            .ok()
            .filter(|us| (4..=crate::Charge::MAX_US).contains(us))
            .ok_or(ConfigError::OutOfRange("unknown_rate_charge_us"))?;
        Ok(self)
    }

    /// How long a station stays active on an AC after it last had frames scheduled, in
    /// us, at least 1 ([`ConfigError::OutOfRange`] for 0: no station would ever be
    /// charged its registered airtime).
    pub fn active_window_us(mut self, us: u64) -> Result<ConfigBuilder, ConfigError> {
        if us == 0 {
            return Err(ConfigError::OutOfRange("active_window_us"));
        }
        self.0.active_window_us = us;
        Ok(self)
    }

    /// Adaptive AQL on or off (see [`Config::adaptive_aql`]); off by default.
    pub fn adaptive_aql(mut self, on: bool) -> ConfigBuilder {
        self.0.adaptive_aql = on;
        self
    }

    /// The lowest limit adaptive AQL may learn, in us, `4..=u32::MAX`
    /// ([`ConfigError::OutOfRange`] otherwise: below one minimum charge a station could
    /// be held with nothing useful in flight).
    pub fn adaptive_aql_floor_us(mut self, us: u64) -> Result<ConfigBuilder, ConfigError> {
        self.0.adaptive_aql_floor_us =
            u32::try_from(us).ok().filter(|&us| us >= 4).ok_or(ConfigError::OutOfRange("adaptive_aql_floor_us"))?;
        Ok(self)
    }

    /// The configuration.
    pub fn build(self) -> Config {
        self.0
    }
}

/// A refused configuration value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// An airtime weight of 0 (it would never top a deficit up).
    ZeroWeight,
    /// A low limit above the high limit.
    InvertedLimits {
        /// The low limit given.
        low_us: u32,
        /// The high limit given.
        high_us: u32,
    },
    /// `max_stations` is 0 or above [`Config::MAX_STATIONS`], or `max_txqs` is 0 or
    /// above 65535.
    Capacity,
    /// A [`ConfigBuilder`] setter's value is out of its range; names the setter.
    OutOfRange(&'static str),
    /// No memory for the tables the configuration sizes (`Scheduler::new` allocates
    /// them all, each in one fallible allocation; the data path never allocates).
    OutOfMemory,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::ZeroWeight => f.write_str("airtime weight 0 is not allowed (1..=65535)"),
            ConfigError::InvertedLimits { low_us, high_us } => {
                write!(f, "AQL low limit {low_us} us is above high limit {high_us} us")
            }
            ConfigError::Capacity => f.write_str("capacity out of range (stations 1..=4096, txqs 1..=65535)"),
            ConfigError::OutOfRange(what) => write!(f, "{what} is out of range"),
            ConfigError::OutOfMemory => f.write_str("no memory for the scheduler's tables"),
        }
    }
}

impl core::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_zero_is_refused() {
        assert_eq!(Weight::new(0), Err(ConfigError::ZeroWeight));
        assert_eq!(Weight::new(1).unwrap().get(), 1);
        assert_eq!(Weight::default().get(), 256);
    }

    #[test]
    fn config_builder_takes_usize_and_u64_and_refuses_what_the_fields_cannot_hold() {
        let c = Config::builder()
            .max_stations(4096)
            .unwrap()
            .max_txqs(65535)
            .unwrap()
            .no_pushback_floor_us(200)
            .unwrap()
            .unknown_rate_charge_us(4)
            .unwrap()
            .active_window_us(1)
            .unwrap()
            .tx_no_pushback(true)
            .round_policy(RoundPolicy::ResetOnClose)
            .over_limit(OverLimitPolicy::AllowLikeMainline)
            .build();
        assert_eq!((c.max_stations, c.max_txqs, c.no_pushback_floor_us), (4096, 65535, 200));
        assert_eq!((c.unknown_rate_charge_us, c.active_window_us, c.tx_no_pushback), (4, 1, true));
        assert_eq!((c.round_policy, c.over_limit), (RoundPolicy::ResetOnClose, OverLimitPolicy::AllowLikeMainline));
        assert_eq!(Config::builder().build(), Config::default());
        let b = Config::builder();
        for n in [0, 4097, usize::MAX] {
            assert_eq!(b.max_stations(n), Err(ConfigError::Capacity), "{n}");
        }
        for n in [0, 65536] {
            assert_eq!(b.max_txqs(n), Err(ConfigError::Capacity), "{n}");
        }
        assert!(b.no_pushback_floor_us(u64::from(u32::MAX) + 1).is_err());
        for us in [0, 3, 65533, u64::MAX] {
            assert!(b.unknown_rate_charge_us(us).is_err(), "{us}");
        }
        assert_eq!(b.active_window_us(0), Err(ConfigError::OutOfRange("active_window_us")));
    }

    #[test]
    fn the_activity_stamp_grain_is_a_128th_of_the_window_and_never_zero() {
        let grain = |us| Config::builder().active_window_us(us).unwrap().build().active_stamp_grain_us();
        assert_eq!(Config::default().active_stamp_grain_us(), 781);
        for (window, expected) in [(1, 1), (127, 1), (128, 1), (255, 1), (256, 2), (u64::MAX, u64::MAX >> 7)] {
            assert_eq!(grain(window), expected, "{window}");
        }
    }

    #[test]
    fn inverted_limits_are_refused() {
        assert_eq!(AqlLimits::new(2000, 1000), Err(ConfigError::InvertedLimits { low_us: 2000, high_us: 1000 }));
        let l = AqlLimits::new(500, 1000).unwrap();
        assert_eq!(AqlLimits::unpack(l.pack()), l);
    }

    #[test]
    fn no_pushback_limits_stand_four_to_one_at_weights_1024_to_256() {
        let base = AqlLimits::new(500, 1000).unwrap();
        let heavy = base.scaled_by_weight(Weight::new(1024).unwrap(), 100);
        let light = base.scaled_by_weight(Weight::new(256).unwrap(), 100);
        assert_eq!((heavy.low_us(), heavy.high_us()), (2000, 4000));
        assert_eq!((light.low_us(), light.high_us()), (500, 1000));
        assert_eq!(heavy.low_us(), 4 * light.low_us());
        assert_eq!(heavy.high_us(), 4 * light.high_us());
    }

    #[test]
    fn no_pushback_scaling_has_a_floor_and_never_overflows() {
        let w1 = Weight::new(1).unwrap();
        let l = AqlLimits::DEFAULT.scaled_by_weight(w1, 100);
        assert_eq!((l.low_us(), l.high_us()), (100, 100));
        let huge = AqlLimits::new(u32::MAX, u32::MAX).unwrap();
        let l = huge.scaled_by_weight(Weight::new(u16::MAX).unwrap(), 0);
        assert_eq!(l.high_us(), u32::MAX);
        // A zero floor still cannot produce an inverted pair.
        let l = AqlLimits::new(1, 2).unwrap().scaled_by_weight(w1, 0);
        assert!(l.low_us() <= l.high_us());
    }
}
