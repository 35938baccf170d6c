//! What a pull-mode ask ([`Scheduler::may_transmit`](super::Scheduler::may_transmit),
//! [`TxqTable::may_transmit`](crate::TxqTable::may_transmit)) or a claim
//! ([`TxqTable::claim`](crate::TxqTable::claim)) answered, and why it refused.

/// The answer of [`Scheduler::may_transmit`](super::Scheduler::may_transmit) (`T` is a
/// [`Serving`](super::Serving)), [`TxqTable::may_transmit`](crate::TxqTable::may_transmit)
/// or [`TxqTable::claim`](crate::TxqTable::claim) (a [`TxqTurn`](crate::TxqTurn)): the
/// txq's turn, or why there is none (a claim is refused only
/// [`Served`](Refusal::Served) or [`QueueBusy`](Refusal::QueueBusy)). A firmware
/// that asked for frames does not ask again on its own, so the reason says what the
/// driver owes the txq instead ([`Refusal`]).
#[derive(Debug)]
#[must_use = "a granted turn must be served and returned"]
pub enum MayTransmit<T> {
    /// The caller holds the txq's turn (for an ask, the txq may send; a claim skips the
    /// ask's checks), and returns it as any other.
    Granted(T),
    /// The txq may not send now, for this reason; nothing is held.
    Refused(Refusal),
}

impl<T> MayTransmit<T> {
    /// The turn, if granted (`None`, the reason dropped, if refused).
    #[inline]
    pub fn granted(self) -> Option<T> {
        match self {
            MayTransmit::Granted(turn) => Some(turn),
            MayTransmit::Refused(_) => None,
        }
    }

    /// Why it was refused (`None` if granted).
    #[inline]
    pub fn refusal(&self) -> Option<Refusal> {
        match self {
            MayTransmit::Granted(_) => None,
            MayTransmit::Refused(why) => Some(*why),
        }
    }

    /// Whether the txq was granted its turn.
    #[inline]
    pub fn is_granted(&self) -> bool {
        matches!(self, MayTransmit::Granted(_))
    }
}

/// Why a pull-mode ask (or a claim) was refused. Each refusal of an ask is counted per
/// AC ([`AcCounters::pull_refusals`](super::AcCounters::pull_refusals)); a claim's are
/// not.
///
/// Whatever the reason, the txq keeps its frames and its place (listed if it was), and
/// a round on the AC serves it as usual; a driver that runs rounds beside its pull-mode
/// turns (push rounds, the crate docs' recipe after each ask) owes it nothing more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refusal {
    /// The AC's pending airtime is over its PHY limit
    /// ([`OverLimitPolicy::Refuse`](crate::OverLimitPolicy::Refuse), the default; L3):
    /// no txq of the AC may send, station-less ones included, until completions release
    /// enough. The completions that bring it under run rounds: nothing to do.
    OverPhyLimit,
    /// The station's effective deficit (its deficit minus its airtime in flight on the
    /// AC) is negative; the ask topped the deficit up by the station's weight, as
    /// mainline's `ieee80211_txq_may_transmit` tops up a negative deficit. A station
    /// with more airtime in flight than its deficit is refused until its completions
    /// bring the pending airtime down or enough asks (or rounds' visits) have topped it
    /// up, one weight each: see [`Scheduler::may_transmit`](super::Scheduler::may_transmit)
    /// for what a pull-mode driver does about it.
    Deficit,
    /// Another context holds the txq now (a round's turn, another ask's, a claim; S3:
    /// one server at a time). Its return lists the txq again if it has frames. The
    /// station's deficit is not topped up.
    Served,
    /// An enqueue held the txq's queue throughout the server's bounded wait (the
    /// enqueuer was preempted; [`TxqTable::may_transmit`](crate::TxqTable::may_transmit)
    /// and [`TxqTable::claim`](crate::TxqTable::claim) only). The txq was returned
    /// stalled, still listed: a round serves it once the enqueue is done, as after a
    /// round's [`RoundEnd::QueueBusy`](crate::driver_loop::RoundEnd::QueueBusy).
    QueueBusy,
}

impl Refusal {
    /// Its counter's index.
    #[inline]
    pub(crate) const fn index(self) -> usize {
        match self {
            Refusal::OverPhyLimit => 0,
            Refusal::Deficit => 1,
            Refusal::Served => 2,
            Refusal::QueueBusy => 3,
        }
    }
}

/// Pull-mode refusals of one AC by reason ([`AcCounters::pull_refusals`](super::AcCounters::pull_refusals)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PullRefusals {
    /// [`Refusal::OverPhyLimit`].
    pub over_phy_limit: u64,
    /// [`Refusal::Deficit`] (each one topped the station's deficit up by its weight).
    pub deficit: u64,
    /// [`Refusal::Served`].
    pub served: u64,
    /// [`Refusal::QueueBusy`].
    pub queue_busy: u64,
}

impl PullRefusals {
    /// The count for `why`.
    pub fn get(&self, why: Refusal) -> u64 {
        match why {
            Refusal::OverPhyLimit => self.over_phy_limit,
            Refusal::Deficit => self.deficit,
            Refusal::Served => self.served,
            Refusal::QueueBusy => self.queue_busy,
        }
    }

    /// All of them.
    pub fn total(&self) -> u64 {
        self.over_phy_limit.saturating_add(self.deficit).saturating_add(self.served).saturating_add(self.queue_busy)
    }
}

impl core::fmt::Display for Refusal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Refusal::OverPhyLimit => "the AC is over its PHY limit",
            Refusal::Deficit => "the station's effective deficit is negative",
            Refusal::Served => "another context holds the txq",
            Refusal::QueueBusy => "an enqueue holds the txq's queue",
        })
    }
}
