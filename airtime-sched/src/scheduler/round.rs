//! One context's round on one AC.

use crate::Ac;

/// A round on one AC, as one context started it with
/// [`Scheduler::start_round`](super::Scheduler::start_round) (mainline's
/// `ieee80211_txq_schedule_start`), to pass to every
/// [`next_txq`](super::Scheduler::next_txq) of that round.
///
/// It carries the round's number, so that a round ends when it meets a txq already
/// handed out in it even while another context keeps starting rounds of its own on the
/// same AC (invariant S4). A closed round (the AC was over its PHY limit at the start,
/// L3) hands out nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use = "a round is used by passing it to Scheduler::next_txq"]
pub struct Round {
    pub(crate) ac: Ac,
    /// 0 when closed; otherwise the round's number (never 0, never reused).
    pub(crate) number: u64,
    /// The scheduler that started it (its `radio` number): another radio's scheduler
    /// hands out nothing in it.
    pub(crate) radio: u32,
}

impl Round {
    /// The round's access category.
    #[inline]
    pub fn ac(self) -> Ac {
        self.ac
    }

    /// Whether the round opened: the AC was under its PHY limit when it started.
    #[inline]
    pub fn is_open(self) -> bool {
        self.number != 0
    }

    /// The round's number (0 if it did not open): what `next_txq` stamps on the txqs it
    /// hands out in this round.
    #[inline]
    pub fn number(self) -> u64 {
        self.number
    }
}
