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
    /// Bits 0..2 the AC's index, bits 8..24 the scheduler that started the round (its
    /// `radio` number: another radio's scheduler hands out nothing in it). One field,
    /// so that a round is two words and travels in two registers.
    pub(crate) ac_radio: u32,
    /// 0 when closed; otherwise the round's number (never 0, never reused).
    pub(crate) number: u64,
}

impl Round {
    #[inline]
    pub(crate) const fn new(ac: Ac, number: u64, radio: u16) -> Round {
        Round { ac_radio: ac as u32 | (radio as u32) << 8, number }
    }

    /// The scheduler that started the round.
    #[inline]
    pub(crate) const fn radio(self) -> u16 {
        (self.ac_radio >> 8) as u16
    }

    /// The round's access category.
    #[inline]
    pub fn ac(self) -> Ac {
        Ac::from_low_bits(u64::from(self.ac_radio))
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
