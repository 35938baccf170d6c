//! The shared medium: who transmits next.
//!
//! Every transmitter with frames is a contender with its own EDCA parameters and a
//! backoff counter drawn from `[0, CW]`. In an idle period a contender counts down after
//! its AIFS, one slot at a time; the first to reach zero transmits. Counters of the
//! others freeze and resume in the next idle period. Contenders that reach zero in the
//! same slot collide: all of them lose the exchange and double their window.
//!
//! After an exchange the transmitter updates its window as 802.11-2020 10.23.2.4 says:
//! back to CWmin after a success, doubled (up to CWmax) after a failure, and a failure
//! is an exchange that got no response ([`Outcome::Failed`]): a collision, or an
//! A-MPDU all of whose subframes were lost, so that no BlockAck came back. An A-MPDU
//! of which the BlockAck names any subframe is a success for the window, however many
//! of its subframes it misses (those are the retry counters' business).
//!
//! A transmitter with several access categories has one contender per category (an
//! EDCA function each). When two of its own reach zero in the same slot, the higher
//! priority transmits and the others behave as if they had collided: their window
//! doubles and they draw a new backoff (an internal collision, 802.11-2020 10.23.2.4).

use super::edca::{EdcaParams, SLOT_NS};
use crate::engine::{Nanos, Rng};

#[derive(Clone, Debug)]
struct Contender {
    edca: EdcaParams,
    /// The transmitter it belongs to, and its priority there (higher wins).
    owner: usize,
    priority: u8,
    cw: u32,
    backoff: Option<u64>,
    ready: bool,
    /// When its countdown (AIFS first) began in the current idle period.
    origin: Nanos,
}

/// How one transmitter's exchange ended, for its contention window (802.11-2020
/// 10.23.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A response (BlockAck) came back: the window returns to CWmin.
    Acknowledged,
    /// No response: the exchange collided, or every subframe of its A-MPDU was lost.
    /// The window doubles, up to CWmax.
    Failed,
}

/// The channel.
#[derive(Clone, Debug)]
pub struct Medium {
    contenders: Vec<Contender>,
    busy: bool,
    idle_since: Nanos,
    /// Generation of the pending access decision: a stale one is ignored.
    generation: u64,
    /// Airtime by transmitter, in ns (successful and collided exchanges).
    pub airtime_ns: Vec<Nanos>,
    /// Collisions seen.
    pub collisions: u64,
}

impl Medium {
    /// A medium with one contender per entry of `params` (indexed as given), each a
    /// transmitter of its own.
    pub fn new(params: &[EdcaParams]) -> Medium {
        let owned: Vec<(EdcaParams, usize, u8)> = params.iter().enumerate().map(|(i, &p)| (p, i, 0)).collect();
        Medium::with_owners(&owned)
    }

    /// A medium with one contender per `(parameters, transmitter, priority)`: contenders
    /// of one transmitter resolve a tie among themselves by priority.
    pub fn with_owners(params: &[(EdcaParams, usize, u8)]) -> Medium {
        Medium {
            contenders: params
                .iter()
                .map(|&(edca, owner, priority)| Contender {
                    edca,
                    owner,
                    priority,
                    cw: edca.cw_min,
                    backoff: None,
                    ready: false,
                    origin: 0,
                })
                .collect(),
            busy: false,
            idle_since: 0,
            generation: 0,
            airtime_ns: vec![0; params.len()],
            collisions: 0,
        }
    }

    /// Contender `i` has (or no longer has) frames at `now`; returns whether that changed.
    pub fn set_ready(&mut self, i: usize, ready: bool, now: Nanos, rng: &mut Rng) -> bool {
        let Some(c) = self.contenders.get_mut(i) else { return false };
        if c.ready == ready {
            return false;
        }
        c.ready = ready;
        if ready {
            if c.backoff.is_none() {
                c.backoff = Some(rng.below_or_eq(u64::from(c.cw)));
            }
            c.origin = if self.busy { Nanos::MAX } else { now.max(self.idle_since) };
        }
        true
    }

    /// Contender `i`'s contention window.
    pub fn cw(&self, i: usize) -> Option<u32> {
        self.contenders.get(i).map(|c| c.cw)
    }

    /// Whether contender `i` is waiting to transmit.
    pub fn is_ready(&self, i: usize) -> bool {
        self.contenders.get(i).is_some_and(|c| c.ready)
    }

    fn start_time(c: &Contender) -> Option<Nanos> {
        if !c.ready || c.origin == Nanos::MAX {
            return None;
        }
        Some(c.origin + c.edca.aifs_ns() + c.backoff.unwrap_or(0) * SLOT_NS)
    }

    /// The next access: when it happens and a generation to check it against, or
    /// `None` while the medium is busy or nobody is ready. Every call makes the
    /// previous answer stale.
    pub fn next_access(&mut self) -> Option<(Nanos, u64)> {
        self.generation += 1;
        if self.busy {
            return None;
        }
        let t = self.contenders.iter().filter_map(Self::start_time).min()?;
        Some((t, self.generation))
    }

    /// Carries out the access decided for `generation` at `now`: returns the
    /// contenders that transmit (more than one is a collision), or nothing if stale.
    /// `rng` draws the new backoff of a contender that lost an internal collision.
    pub fn access(&mut self, now: Nanos, generation: u64, rng: &mut Rng) -> Vec<usize> {
        if generation != self.generation || self.busy {
            return Vec::new();
        }
        let mut winners: Vec<usize> =
            (0..self.contenders.len()).filter(|&i| Self::start_time(&self.contenders[i]) == Some(now)).collect();
        if winners.is_empty() {
            return winners;
        }
        if winners.len() > 1 {
            let cs = &self.contenders;
            let internal_losers: Vec<usize> = winners
                .iter()
                .copied()
                .filter(|&i| {
                    winners
                        .iter()
                        .any(|&j| j != i && cs[j].owner == cs[i].owner && (cs[j].priority, j) > (cs[i].priority, i))
                })
                .collect();
            for &i in &internal_losers {
                let c = &mut self.contenders[i];
                c.cw = (c.cw * 2 + 1).min(c.edca.cw_max);
                c.backoff = Some(rng.below_or_eq(u64::from(c.cw)));
                c.origin = Nanos::MAX;
            }
            winners.retain(|i| !internal_losers.contains(i));
        }
        for (i, c) in self.contenders.iter_mut().enumerate() {
            if winners.contains(&i) {
                c.backoff = None;
                continue;
            }
            if c.ready && c.origin != Nanos::MAX {
                let counting_from = c.origin + c.edca.aifs_ns();
                if now > counting_from {
                    let slots = (now - counting_from) / SLOT_NS;
                    c.backoff = c.backoff.map(|b| b.saturating_sub(slots));
                }
            }
        }
        self.busy = true;
        if winners.len() > 1 {
            self.collisions += 1;
        }
        winners
    }

    /// The exchange that began at an access ended at `now`: `transmitted` lists each
    /// transmitter, its airtime and how its exchange ended (a collision fails all of
    /// them).
    pub fn end_exchange(&mut self, now: Nanos, transmitted: &[(usize, Nanos, Outcome)], rng: &mut Rng) {
        self.busy = false;
        self.idle_since = now;
        for &(i, airtime, outcome) in transmitted {
            if let Some(a) = self.airtime_ns.get_mut(i) {
                *a += airtime;
            }
            if let Some(c) = self.contenders.get_mut(i) {
                c.cw = match outcome {
                    Outcome::Failed => (c.cw * 2 + 1).min(c.edca.cw_max),
                    Outcome::Acknowledged => c.edca.cw_min,
                };
                c.backoff = Some(rng.below_or_eq(u64::from(c.cw)));
            }
        }
        for c in self.contenders.iter_mut() {
            if c.ready {
                c.origin = now;
                if c.backoff.is_none() {
                    c.backoff = Some(rng.below_or_eq(u64::from(c.cw)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_contender_transmits_after_aifs_plus_its_backoff() {
        let mut rng = Rng::new(1);
        let mut m = Medium::new(&[EdcaParams::AP_BE]);
        m.set_ready(0, true, 1_000, &mut rng);
        let (t, g) = m.next_access().unwrap();
        assert!((1_000 + 43_000..=1_000 + 43_000 + 15 * SLOT_NS).contains(&t));
        assert_eq!(m.access(t, g, &mut rng), vec![0]);
        assert!(m.next_access().is_none(), "busy medium decides nothing");
    }

    #[test]
    fn two_contenders_share_the_medium_roughly_evenly() {
        let mut rng = Rng::new(7);
        let mut m = Medium::new(&[EdcaParams::AP_BE, EdcaParams::STATION_BE]);
        let mut now = 0;
        m.set_ready(0, true, now, &mut rng);
        m.set_ready(1, true, now, &mut rng);
        let mut wins = [0u32; 2];
        for _ in 0..2000 {
            let (t, g) = m.next_access().unwrap();
            let w = m.access(t, g, &mut rng);
            for &i in &w {
                wins[i] += 1;
            }
            now = t + 1_000_000;
            let outcome = if w.len() > 1 { Outcome::Failed } else { Outcome::Acknowledged };
            let tx: Vec<(usize, Nanos, Outcome)> = w.iter().map(|&i| (i, 1_000_000, outcome)).collect();
            m.end_exchange(now, &tx, &mut rng);
        }
        assert!(wins[0] > 800 && wins[1] > 800, "{wins:?}");
        assert!(m.collisions > 20 && m.collisions < 300, "{}", m.collisions);
    }

    #[test]
    fn voice_takes_the_medium_from_best_effort_and_an_internal_tie_goes_to_voice() {
        use airtime_sched::Ac;
        let mut rng = Rng::new(11);
        // The AP's BE beside one station's BE and VO (one transmitter, two EDCA functions).
        let mut m = Medium::with_owners(&[
            (EdcaParams::AP_BE, 0, 1),
            (EdcaParams::station(Ac::Be), 1, 1),
            (EdcaParams::station(Ac::Vo), 1, 3),
        ]);
        let mut now = 0;
        for i in 0..3 {
            m.set_ready(i, true, now, &mut rng);
        }
        let mut wins = [0u32; 3];
        for _ in 0..3000 {
            let (t, g) = m.next_access().unwrap();
            let w = m.access(t, g, &mut rng);
            assert!(!(w.contains(&1) && w.contains(&2)), "one transmitter sends one PPDU");
            for &i in &w {
                wins[i] += 1;
            }
            now = t + 1_000_000;
            let outcome = if w.len() > 1 { Outcome::Failed } else { Outcome::Acknowledged };
            let tx: Vec<(usize, Nanos, Outcome)> = w.iter().map(|&i| (i, 1_000_000, outcome)).collect();
            m.end_exchange(now, &tx, &mut rng);
        }
        assert!(wins[2] > 2 * wins[0] && wins[2] > 4 * wins[1], "{wins:?}");
    }

    /// One exchange of a lone contender at the access point's BE, ending as `outcome`.
    fn one_exchange(m: &mut Medium, now: Nanos, outcome: Outcome, rng: &mut Rng) -> Nanos {
        m.set_ready(0, true, now, rng);
        let (t, g) = m.next_access().unwrap();
        assert_eq!(m.access(t, g, rng), vec![0]);
        let end = t + 1_000_000;
        m.end_exchange(end, &[(0, 1_000_000, outcome)], rng);
        end
    }

    #[test]
    fn an_ampdu_lost_whole_doubles_the_contention_window() {
        let mut rng = Rng::new(3);
        let mut m = Medium::new(&[EdcaParams::AP_BE]);
        let mut now = one_exchange(&mut m, 0, Outcome::Failed, &mut rng);
        assert_eq!(m.cw(0), Some(31), "no BlockAck: the window doubles as after a collision");
        now = one_exchange(&mut m, now, Outcome::Failed, &mut rng);
        assert_eq!(m.cw(0), Some(63));
        now = one_exchange(&mut m, now, Outcome::Failed, &mut rng);
        assert_eq!(m.cw(0), Some(63), "up to CWmax");
        one_exchange(&mut m, now, Outcome::Acknowledged, &mut rng);
        assert_eq!(m.cw(0), Some(15), "a BlockAck, even one naming losses, resets it");
    }
}
