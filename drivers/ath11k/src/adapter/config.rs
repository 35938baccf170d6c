//! The adapter's configuration: which patches of the series are on, and the core's
//! configuration.

use crate::MuCharging;
use airtime_est::CalibratorConfig;
use airtime_sched::txqs::TurnBudget;
use core::num::NonZeroU32;

/// Adapter configuration (build from `Default`, then set fields). The default is the
/// whole series plus the TX_NO_PUSHBACK flag; switching a patch off reproduces the
/// driver without it (for the simulator's arms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// The core scheduler's configuration. [`Ath11k::new`](crate::Ath11k::new) sets its
    /// `tx_no_pushback` from [`Config::tx_no_pushback`].
    pub sched: airtime_sched::Config,
    /// Patch 2: the AQL checks are on (charges are counted either way).
    pub aql: bool,
    /// Patch 4: tx airtime from PPDU stats is registered into the deficit.
    pub tx_airtime: bool,
    /// Patch 6: a tx completion pass starts rounds for the ACs it reaped.
    pub rounds_on_completion: bool,
    /// Patch 7: received airtime is registered into the station's BE deficit.
    pub rx_airtime: bool,
    /// The `IEEE80211_HW_TX_NO_PUSHBACK` flag (posted with the mac80211 change, not in
    /// the series): the firmware picks the transmitter, so per-station AQL limits scale
    /// by weight/256.
    pub tx_no_pushback: bool,
    /// ath11k's `hw_params.max_tx_ring`: the TCL data rings the hardware has, 1 to 3
    /// (3 on IPQ8074, IPQ6018 and QCN9074; 1 on QCA6390 and WCN6855). A frame goes to
    /// ring `cpu % max_tx_ring`, and only those rings are read and flushed.
    pub max_tx_ring: u8,
    /// ath11k's `tcl_ring_retry`: when the CPU's ring has no room, try the next ones.
    /// Off by default, so a frame goes to ring `cpu % max_tx_ring` exactly.
    pub tcl_ring_retry: bool,
    /// Not in the series: a completion pass that reaped anything also starts rounds on
    /// ACs a round found the ring full for since the last such pass, since the rings are
    /// shared by all ACs and room freed by a BE completion is room for VO too (otherwise
    /// such an AC waits for its next enqueue). A round that marks its AC reads the ring
    /// again after the mark (and a pass reads the marks after its reaps, both across a
    /// SeqCst fence), and runs once more if room appeared: a pass that read the marks
    /// too early is made up for there.
    pub resume_blocked_acs: bool,
    /// Not in the series: how much one txq may send per turn before the round moves on
    /// (frames or charged airtime; the core's [`TurnBudget`]). Unlimited by default, as
    /// in the series, where a turn lasts while AQL and the ring allow.
    pub turn_budget: TurnBudget,
    /// Not in the series: what each user of an MU (OFDMA) PPDU is charged, and how
    /// the frames of a station last sent MU are priced for AQL ([`MuCharging`]).
    /// [`MuCharging::WholePpdu`] by default, as the series and ath11k.
    pub mu_charging: MuCharging,
    /// Not in the series: calibrate each station's AQL estimate against the airtime
    /// PPDU stats measure, with these settings (`None`, the default: off). Each SU
    /// user of a PPDU record that carries its acknowledged MSDUs' count and bytes is a
    /// sample (what they were priced at against the PPDU's duration); once a station's
    /// [`Calibrator`](airtime_est::Calibrator) is warm, its frames are priced at the
    /// estimate times the learned ratio (and times its MU scale). MU users are skipped:
    /// [`Config::mu_charging`] prices those. See [`StationRecord::calibration_ratio_q16`](crate::StationRecord::calibration_ratio_q16).
    pub calibration: Option<CalibratorConfig>,
    /// Not in the series: how rounds on one AC from different contexts meet
    /// ([`Rounds`]). [`Rounds::Concurrent`] by default.
    pub rounds: Rounds,
}

/// How the adapter's rounds on one AC, asked for by different contexts (the wake path,
/// the completion pass), meet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rounds {
    /// Each context runs its round at once, beside another context's round on the same
    /// AC: the core allows it, and no context waits for another. A round that had a
    /// txq off the AC's list while another context's round ran (which could not serve
    /// it) runs one more after it returns it (the core's `run_round`, bounded); when that
    /// bound runs out the AC is named by [`Ath11k::rounds_waiting`] and
    /// [`RoundOutcome::deferred`] is set, as gated, and the caller must ask again.
    ///
    /// [`Ath11k::rounds_waiting`]: crate::Ath11k::rounds_waiting
    /// [`RoundOutcome::deferred`]: crate::RoundOutcome::deferred
    Concurrent,
    /// One context at a time runs an AC's rounds, as mac80211 requires of its drivers
    /// (`ieee80211_txq_schedule_start`), without a lock anyone waits on
    /// ([`airtime_sched::RoundGate`]): a context that finds another running the AC's
    /// rounds leaves it a note and returns at once ([`RoundOutcome::rounds`] is 0), and
    /// the runner runs one more round for the notes left during its last, up to
    /// `max_rounds` rounds per call, its own included. Two rounds on one AC at once pass
    /// the AC's list, its txqs and the ring between the CPUs; on the workspace's
    /// end-to-end benchmark of the core's txq table (`benches`, BENCHMARKS.md), gated
    /// rounds sent more frames per second than concurrent ones where both contexts run
    /// rounds often, and as many elsewhere. A runner that spends its budget with notes
    /// pending leaves them ([`RoundOutcome::deferred`], [`CompletionPass::deferred`]),
    /// and they wait until some context asks for a round on the AC again: the caller
    /// must ask again later (a NAPI poll stays scheduled and its next pass serves them;
    /// a wake path schedules work that calls [`Ath11k::run_waiting_rounds`]);
    /// [`Ath11k::rounds_waiting`] names the ACs that wait.
    ///
    /// [`RoundOutcome::rounds`]: crate::RoundOutcome::rounds
    /// [`RoundOutcome::deferred`]: crate::RoundOutcome::deferred
    /// [`CompletionPass::deferred`]: crate::CompletionPass::deferred
    /// [`Ath11k::rounds_waiting`]: crate::Ath11k::rounds_waiting
    /// [`Ath11k::run_waiting_rounds`]: crate::Ath11k::run_waiting_rounds
    Gated {
        /// Rounds one call runs at most, its own included.
        max_rounds: NonZeroU32,
    },
}

impl Default for Config {
    fn default() -> Self {
        Config {
            sched: airtime_sched::Config::default(),
            aql: true,
            tx_airtime: true,
            rounds_on_completion: true,
            rx_airtime: true,
            tx_no_pushback: true,
            max_tx_ring: crate::hal::DP_TCL_NUM_RING_MAX as u8,
            tcl_ring_retry: false,
            resume_blocked_acs: true,
            turn_budget: TurnBudget::UNLIMITED,
            mu_charging: MuCharging::WholePpdu,
            calibration: None,
            rounds: Rounds::Concurrent,
        }
    }
}
