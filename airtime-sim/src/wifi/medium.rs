//! The shared medium: who transmits next.
//!
//! Every transmitter is a contender with its own EDCA parameters and a backoff counter
//! drawn from `[0, CW]` (802.11-2020 10.23.2.2). The medium's idle periods are divided
//! into slots: after an idle period begins, a contender's AIFS ends on a slot boundary
//! (AIFS = SIFS + AIFSN slots), and from there its counter goes down by one at each
//! slot boundary while the medium stays idle, whether or not the contender has frames
//! (post-backoff). A contender with frames transmits at the first slot boundary at or
//! after its AIFS where its counter is 0. So a frame that arrives after a long idle,
//! its counter already 0 and AIFS past, goes at the next slot boundary (within one
//! slot, 9 us); and contenders whose counters reach 0 at the same slot boundary
//! collide, whenever in the slot their frames arrived: all of them lose the exchange.
//! Counters freeze while the medium is busy and resume in the next idle period. A frame
//! that arrives while the medium is busy and its contender's counter is 0 draws a
//! backoff first (10.23.2.2 a).
//!
//! After an exchange the transmitter updates its window as 802.11-2020 10.23.2.4 says:
//! back to CWmin after a success, doubled (up to CWmax) after a failure, and a failure
//! is an exchange that got no response ([`Outcome::Failed`]): a collision, or an
//! A-MPDU all of whose subframes were lost, so that no BlockAck came back. An A-MPDU
//! of which the BlockAck names any subframe is a success for the window, however many
//! of its subframes it misses (those are the retry counters' business). Either way it
//! draws a new backoff, which it counts down even if it has nothing more to send.
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
    /// The backoff counter at the start of the current idle period (while the medium
    /// is busy, its frozen value).
    backoff: u64,
    ready: bool,
    /// When it last became ready (its first frame arrived).
    ready_since: Nanos,
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
    /// of one transmitter resolve a tie among themselves by priority. Every counter
    /// starts at 0 on a medium idle since time 0.
    pub fn with_owners(params: &[(EdcaParams, usize, u8)]) -> Medium {
        Medium {
            contenders: params
                .iter()
                .map(|&(edca, owner, priority)| Contender {
                    edca,
                    owner,
                    priority,
                    cw: edca.cw_min,
                    backoff: 0,
                    ready: false,
                    ready_since: 0,
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
    /// A contender that gets frames while the medium is busy and its counter is 0 draws
    /// a backoff (802.11-2020 10.23.2.2 a); on an idle medium its counter keeps the
    /// count it has reached.
    pub fn set_ready(&mut self, i: usize, ready: bool, now: Nanos, rng: &mut Rng) -> bool {
        let busy = self.busy;
        let Some(c) = self.contenders.get_mut(i) else { return false };
        if c.ready == ready {
            return false;
        }
        c.ready = ready;
        if ready {
            if busy && c.backoff == 0 {
                c.backoff = rng.below_or_eq(u64::from(c.cw));
            }
            c.ready_since = now;
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

    /// When contender `c` transmits if nothing else happens first, in the idle period
    /// that began at `idle_since`: the first slot boundary at or after its AIFS where
    /// its counter is 0 and it has frames.
    fn start_time(c: &Contender, idle_since: Nanos) -> Option<Nanos> {
        if !c.ready {
            return None;
        }
        let aifs_end = idle_since.saturating_add(c.edca.aifs_ns());
        let counted = aifs_end.saturating_add(c.backoff.saturating_mul(SLOT_NS));
        let arrived = c.ready_since.max(idle_since);
        if arrived <= counted {
            return Some(counted);
        }
        // Its counter reached 0 before its frame arrived: the next slot boundary.
        let slots = (arrived - aifs_end).div_ceil(SLOT_NS);
        Some(aifs_end.saturating_add(slots.saturating_mul(SLOT_NS)))
    }

    /// The next access: when it happens and a generation to check it against, or
    /// `None` while the medium is busy or nobody is ready. Every call makes the
    /// previous answer stale.
    pub fn next_access(&mut self) -> Option<(Nanos, u64)> {
        self.generation += 1;
        if self.busy {
            return None;
        }
        let idle_since = self.idle_since;
        let t = self.contenders.iter().filter_map(|c| Self::start_time(c, idle_since)).min()?;
        Some((t, self.generation))
    }

    /// Carries out the access decided for `generation` at `now`: returns the
    /// contenders that transmit (more than one is a collision), or nothing if stale.
    /// `rng` draws the new backoff of a contender that lost an internal collision.
    /// Every other counter, with frames or not, goes down by the slots counted in this
    /// idle period and freezes.
    pub fn access(&mut self, now: Nanos, generation: u64, rng: &mut Rng) -> Vec<usize> {
        if generation != self.generation || self.busy {
            return Vec::new();
        }
        let idle_since = self.idle_since;
        let mut winners: Vec<usize> = (0..self.contenders.len())
            .filter(|&i| Self::start_time(&self.contenders[i], idle_since) == Some(now))
            .collect();
        if winners.is_empty() {
            return winners;
        }
        let mut internal_losers = Vec::new();
        if winners.len() > 1 {
            let cs = &self.contenders;
            internal_losers = winners
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
                c.backoff = rng.below_or_eq(u64::from(c.cw));
            }
            winners.retain(|i| !internal_losers.contains(i));
        }
        for (i, c) in self.contenders.iter_mut().enumerate() {
            if winners.contains(&i) {
                c.backoff = 0;
                continue;
            }
            if internal_losers.contains(&i) {
                continue;
            }
            let aifs_end = idle_since.saturating_add(c.edca.aifs_ns());
            if now > aifs_end {
                c.backoff = c.backoff.saturating_sub((now - aifs_end) / SLOT_NS);
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
                c.backoff = rng.below_or_eq(u64::from(c.cw));
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
        // Its first frame, on a medium idle since 0 with its counter at 0, waits for
        // AIFS (SIFS + 3 slots = 43 us).
        m.set_ready(0, true, 1_000, &mut rng);
        let (t, g) = m.next_access().unwrap();
        assert_eq!(t, 43_000);
        assert_eq!(m.access(t, g, &mut rng), vec![0]);
        assert!(m.next_access().is_none(), "busy medium decides nothing");
        // Still backlogged after the exchange: AIFS, then the backoff it drew.
        let end = t + 1_000_000;
        m.end_exchange(end, &[(0, 1_000_000, Outcome::Acknowledged)], &mut rng);
        let (t, _) = m.next_access().unwrap();
        assert!((end + 43_000..=end + 43_000 + 15 * SLOT_NS).contains(&t), "{}", t - end);
    }

    #[test]
    fn a_frame_arriving_after_a_long_idle_goes_at_the_next_slot_boundary_its_post_backoff_done() {
        for seed in 1..20 {
            let mut rng = Rng::new(seed);
            let mut m = Medium::new(&[EdcaParams::AP_BE]);
            m.set_ready(0, true, 0, &mut rng);
            let (t, g) = m.next_access().unwrap();
            m.access(t, g, &mut rng);
            // Its queue empties during the exchange; it draws a backoff at the end.
            m.set_ready(0, false, t + 1, &mut rng);
            let end = t + 1_000_000;
            m.end_exchange(end, &[(0, 1_000_000, Outcome::Acknowledged)], &mut rng);
            assert!(m.next_access().is_none(), "no frames, no access");
            // 10 ms of idle medium later, a frame arrives mid-slot: the backoff was
            // counted down meanwhile (post-backoff), so it goes at the next boundary.
            let arrival = end + 10_000_004;
            m.set_ready(0, true, arrival, &mut rng);
            let (t, _) = m.next_access().unwrap();
            assert!(t >= arrival && t - arrival < SLOT_NS, "seed {seed}: {} ns after its arrival", t - arrival);
            assert_eq!((t - end - 43_000) % SLOT_NS, 0, "on the medium's slot boundaries");
        }
    }

    #[test]
    fn a_frame_arriving_on_a_busy_medium_with_its_counter_at_zero_draws_a_backoff() {
        let mut rng = Rng::new(5);
        let mut m = Medium::new(&[EdcaParams::AP_BE, EdcaParams::STATION_BE]);
        m.set_ready(0, true, 0, &mut rng);
        let (t, g) = m.next_access().unwrap();
        m.access(t, g, &mut rng);
        let mut waits = Vec::new();
        for _ in 0..200 {
            // Contender 1's counter is 0 (it never sent): its frame arrives mid-exchange.
            let mut n = m.clone();
            n.set_ready(0, false, t + 1, &mut rng);
            n.set_ready(1, true, t + 10, &mut rng);
            let end = t + 1_000_000;
            n.end_exchange(end, &[(0, 1_000_000, Outcome::Acknowledged)], &mut rng);
            waits.push((n.next_access().unwrap().0 - end - 43_000) / SLOT_NS);
        }
        assert!(waits.iter().all(|&w| w <= 15) && waits.iter().any(|&w| w > 0), "{waits:?}");
    }

    #[test]
    fn contenders_whose_counters_reach_zero_in_one_slot_collide_though_ready_at_different_instants() {
        let mut rng = Rng::new(9);
        let mut m = Medium::new(&[EdcaParams::AP_BE, EdcaParams::STATION_BE]);
        // Both counters are 0 on a medium idle since 0, whose slot boundaries after
        // AIFS fall at 43 + 9k us; the frames arrive 4 us apart within one slot.
        m.set_ready(0, true, 98_000, &mut rng);
        m.set_ready(1, true, 102_000, &mut rng);
        let (t, g) = m.next_access().unwrap();
        assert_eq!(t, 106_000, "the next slot boundary");
        assert_eq!(m.access(t, g, &mut rng), vec![0, 1], "both transmit in that slot: a collision");
        assert_eq!(m.collisions, 1);
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
