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
//! of its subframes it misses (those are the frames' retry counts' business). A failure
//! doubles the window only while the contender's retry counter is below its limit: each
//! contender counts its consecutive failed exchanges (the standard's QLRC\[AC\]), and
//! when the count reaches [`LONG_RETRY_LIMIT`] the window returns to CWmin and the
//! count to 0, as it does after a failed exchange in which a frame reached its own
//! retry limit and was dropped ([`Outcome::FailedAtRetryLimit`]) and after any success.
//! Either way it draws a new backoff, which it counts down even if it has nothing more
//! to send.
//!
//! A transmitter with several access categories has one contender per category (an
//! EDCA function each). When two of its own reach zero in the same slot, the higher
//! priority transmits and the others behave as if they had collided: their window
//! doubles and they draw a new backoff (an internal collision, 802.11-2020 10.23.2.4).
//! An internal collision is not an exchange and is not counted toward the retry limit
//! (nor do its frames count a try): the frames never reached the air, as under ath9k's
//! hardware arbiter.
//!
//! A contender that wins an access but then has nothing to send (its queue held no
//! frame it could send after all) withdraws ([`Medium::withdraw`]): it is no longer
//! ready and draws a backoff, so it cannot win again and again at its AIFS while the
//! others' counters stand still; if no winner sends, the medium never became busy and
//! the idle period goes on.

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
    /// Consecutive failed exchanges since its last success or window reset (its retry
    /// counter, QLRC\[AC\]).
    failures: u32,
    /// Its counter for the idle period to go on with, should the last access be
    /// withdrawn with nobody sending ([`Medium::withdraw`]).
    resume_backoff: u64,
}

/// dot11LongRetryLimit's default in the 802.11-2020 MIB (Annex C), 4: a contender that
/// fails this many exchanges in a row returns its window to CWmin (10.23.2.4). The
/// model's exchanges are A-MPDUs, counted on the long retry counter (QLRC\[AC\]); the
/// short limit (dot11ShortRetryLimit, 7) would apply to frames no longer than
/// dot11RTSThreshold. This is the EDCA function's counter, per exchange; the model's
/// per-frame limit ([`super::link::MAX_ATTEMPTS`], ath9k's 30 software retries) is
/// the driver's, and a failed exchange that drops a frame there resets the window too
/// ([`Outcome::FailedAtRetryLimit`]). Taken from the standard, not fitted to any figure.
pub const LONG_RETRY_LIMIT: u32 = 4;

impl Contender {
    /// The window after a failed exchange: doubled up to CWmax, or back to CWmin when
    /// the retry counter reaches its limit.
    fn fail(&mut self) {
        self.failures += 1;
        if self.failures >= LONG_RETRY_LIMIT {
            self.reset();
        } else {
            self.cw = (self.cw * 2 + 1).min(self.edca.cw_max);
        }
    }

    /// The window and retry counter back to their start.
    fn reset(&mut self) {
        self.failures = 0;
        self.cw = self.edca.cw_min;
    }

    /// Slots its counter has gone down in the idle period that began at `idle_since`,
    /// by `now`.
    fn counted_slots(&self, idle_since: Nanos, now: Nanos) -> u64 {
        let aifs_end = idle_since.saturating_add(self.edca.aifs_ns());
        now.saturating_sub(aifs_end) / SLOT_NS
    }
}

/// How one transmitter's exchange ended, for its contention window (802.11-2020
/// 10.23.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A response (BlockAck) came back: the window returns to CWmin.
    Acknowledged,
    /// No response: the exchange collided, or every subframe of its A-MPDU was lost.
    /// The window doubles, up to CWmax, unless the contender's retry counter reaches
    /// [`LONG_RETRY_LIMIT`], when it returns to CWmin.
    Failed,
    /// No response, and a frame of the exchange reached its retry limit
    /// ([`super::link::MAX_ATTEMPTS`]) and was dropped: the window returns to CWmin and
    /// the retry counter to 0, as when a retry counter reaches its limit (10.23.2.4).
    FailedAtRetryLimit,
}

impl Outcome {
    /// How an exchange ended: `acknowledged` if a response came back, else whether
    /// it dropped a frame at its retry limit.
    pub fn of(acknowledged: bool, dropped_at_limit: bool) -> Outcome {
        match (acknowledged, dropped_at_limit) {
            (true, _) => Outcome::Acknowledged,
            (false, true) => Outcome::FailedAtRetryLimit,
            (false, false) => Outcome::Failed,
        }
    }
}

/// The channel.
#[derive(Clone, Debug)]
pub struct Medium {
    contenders: Vec<Contender>,
    busy: bool,
    idle_since: Nanos,
    /// Generation of the pending access decision: a stale one is ignored.
    generation: u64,
    /// How many contenders won the last access (withdrawals taken off).
    winners: usize,
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
                    failures: 0,
                    resume_backoff: 0,
                })
                .collect(),
            busy: false,
            idle_since: 0,
            generation: 0,
            winners: 0,
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
                // Doubled as after a collision; not an exchange, so no retry is counted.
                c.cw = (c.cw * 2 + 1).min(c.edca.cw_max);
                c.backoff = rng.below_or_eq(u64::from(c.cw));
                c.resume_backoff = c.counted_slots(idle_since, now) + c.backoff;
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
            c.resume_backoff = c.backoff;
            c.backoff = c.backoff.saturating_sub(c.counted_slots(idle_since, now));
        }
        self.busy = true;
        self.winners = winners.len();
        if winners.len() > 1 {
            self.collisions += 1;
        }
        winners
    }

    /// Winners of the access carried out at `now` that had nothing to send after all
    /// (`withdrawn`): each is no longer ready and draws a backoff from its window
    /// (unchanged, as nothing failed), so it does not win again at its next slot
    /// boundary. If no winner is left, nobody transmits: the medium was never busy, the
    /// idle period goes on and every other counter resumes where it stood in it (a
    /// contender that lost an internal collision to a withdrawn winner keeps its loss).
    /// Call it before [`Medium::end_exchange`], and not at all for an access that
    /// returned nothing.
    pub fn withdraw(&mut self, now: Nanos, withdrawn: &[usize], rng: &mut Rng) {
        if withdrawn.is_empty() || !self.busy {
            return;
        }
        let left = self.winners.saturating_sub(withdrawn.len());
        if self.winners > 1 && left <= 1 {
            // What looked like a collision was one transmission, or none.
            self.collisions = self.collisions.saturating_sub(1);
        }
        self.winners = left;
        let idle_since = self.idle_since;
        if left == 0 {
            self.busy = false;
            for (i, c) in self.contenders.iter_mut().enumerate() {
                if !withdrawn.contains(&i) {
                    c.backoff = c.resume_backoff;
                }
            }
        }
        for &i in withdrawn {
            let Some(c) = self.contenders.get_mut(i) else { continue };
            c.ready = false;
            let draw = rng.below_or_eq(u64::from(c.cw));
            // On a medium that stays idle the draw is counted from this slot boundary
            // on, in the idle period that goes on; on a busy one it freezes as drawn.
            c.backoff = if left == 0 { c.counted_slots(idle_since, now) + draw } else { draw };
        }
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
                match outcome {
                    Outcome::Failed => c.fail(),
                    Outcome::Acknowledged | Outcome::FailedAtRetryLimit => c.reset(),
                }
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
            // Its queue empties during the exchange; it draws a backoff at the end.
            let end = exchange_emptying(&mut m, 0, Outcome::Acknowledged, true, &mut rng);
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
    fn a_frame_arriving_as_an_exchange_ends_waits_out_aifs_without_drawing_while_the_transmitter_draws() {
        let mut drawn = 0;
        for seed in 1..20 {
            let mut rng = Rng::new(seed);
            let mut m = Medium::new(&[EdcaParams::AP_BE, EdcaParams::STATION_BE]);
            let end = exchange_emptying(&mut m, 0, Outcome::Acknowledged, true, &mut rng);
            // The transmitter invokes a backoff whatever its queue holds (10.23.2.2 b).
            drawn += u32::from(m.contenders[0].backoff > 0);
            // Contender 1, its queue empty and its counter 0, gets a frame at the end
            // of the exchange or within the AIFS after it: an idle medium, so no draw,
            // and it goes when its AIFS (43 us) is over.
            for after in [0, 20_000] {
                let mut n = m.clone();
                n.set_ready(1, true, end + after, &mut rng);
                assert_eq!(n.contenders[1].backoff, 0, "seed {seed}: no backoff drawn");
                assert_eq!(n.next_access().unwrap().0, end + 43_000, "seed {seed}, {after} ns after the end");
            }
        }
        assert!(drawn > 10, "the transmitter drew a backoff: {drawn} of 19 non-zero");
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

    /// One exchange of contender 0 alone (the access point's BE or a station's, as the
    /// medium was built), ending as `outcome`; returns its end.
    fn one_exchange(m: &mut Medium, now: Nanos, outcome: Outcome, rng: &mut Rng) -> Nanos {
        exchange_emptying(m, now, outcome, false, rng)
    }

    /// [`one_exchange`], contender 0's queue emptying during it if `empties` (its last
    /// frames went).
    fn exchange_emptying(m: &mut Medium, now: Nanos, outcome: Outcome, empties: bool, rng: &mut Rng) -> Nanos {
        m.set_ready(0, true, now, rng);
        let (t, g) = m.next_access().unwrap();
        assert_eq!(m.access(t, g, rng), vec![0]);
        if empties {
            m.set_ready(0, false, t + 1, rng);
        }
        let end = t + 1_000_000;
        m.end_exchange(end, &[(0, 1_000_000, outcome)], rng);
        end
    }

    #[test]
    fn the_contention_window_returns_to_cwmin_at_the_retry_limit() {
        let mut rng = Rng::new(13);
        let mut m = Medium::new(&[EdcaParams::STATION_BE]);
        let mut now = 0;
        let mut windows = Vec::new();
        // A link that loses every subframe: no exchange ever gets a BlockAck.
        for _ in 0..9 {
            now = one_exchange(&mut m, now, Outcome::Failed, &mut rng);
            windows.push(m.cw(0).unwrap());
        }
        // Doubled after the first three failures; the fourth reaches the limit
        // (LONG_RETRY_LIMIT, dot11LongRetryLimit's MIB default of 4): CWmin, and the
        // count starts again.
        assert_eq!(windows, [31, 63, 127, 15, 31, 63, 127, 15, 31]);
        // A success resets the count: three more failures after it double the window
        // without reaching the limit.
        now = one_exchange(&mut m, now, Outcome::Acknowledged, &mut rng);
        for _ in 0..3 {
            now = one_exchange(&mut m, now, Outcome::Failed, &mut rng);
        }
        assert_eq!(m.cw(0), Some(127));
        // A failed exchange that dropped a frame at its own retry limit resets the
        // window and the count at once.
        now = one_exchange(&mut m, now, Outcome::FailedAtRetryLimit, &mut rng);
        assert_eq!(m.cw(0), Some(15));
        one_exchange(&mut m, now, Outcome::Failed, &mut rng);
        assert_eq!(m.cw(0), Some(31), "the count started again at the reset");
    }

    #[test]
    fn an_internal_collision_doubles_the_losers_window_without_counting_a_retry() {
        use airtime_sched::Ac;
        let mut rng = Rng::new(17);
        let mut m = Medium::with_owners(&[(EdcaParams::station(Ac::Be), 0, 1), (EdcaParams::station(Ac::Vo), 0, 3)]);
        let mut now = 0;
        for _ in 0..3 {
            m.set_ready(0, true, now, &mut rng);
            m.set_ready(1, true, now, &mut rng);
            // BE's AIFS (3 slots) with its counter at 0 ends where VO's (2 slots) and one
            // slot of its counter do: an internal tie, voice sends.
            m.contenders[0].backoff = 0;
            m.contenders[1].backoff = 1;
            let (t, g) = m.next_access().unwrap();
            assert_eq!(m.access(t, g, &mut rng), vec![1]);
            now = t + 1_000_000;
            m.end_exchange(now, &[(1, 1_000_000, Outcome::Acknowledged)], &mut rng);
        }
        assert_eq!(m.cw(0), Some(127), "doubled at each internal loss");
        assert_eq!(m.contenders[0].failures, 0, "no exchange of its own failed");
    }

    #[test]
    fn a_winner_with_nothing_to_send_withdraws_and_the_others_keep_counting() {
        for seed in 1..30 {
            let mut rng = Rng::new(seed);
            let mut m = Medium::new(&[EdcaParams::AP_BE, EdcaParams::STATION_BE]);
            // Contender 1 has 5 slots left to count; contender 0's counter is 0, so it
            // wins at its AIFS (43 us), then finds nothing to send.
            m.contenders[1].backoff = 5;
            m.set_ready(0, true, 0, &mut rng);
            m.set_ready(1, true, 0, &mut rng);
            let mut accesses = 0;
            loop {
                let (t, g) = m.next_access().expect("someone is ready on an idle medium");
                let w = m.access(t, g, &mut rng);
                if w.contains(&1) {
                    // Its five slots counted on from the same idle period: AIFS + 5 slots.
                    assert_eq!(t, 43_000 + 5 * SLOT_NS, "seed {seed}");
                    break;
                }
                assert_eq!(w, vec![0]);
                m.withdraw(t, &w, &mut rng);
                assert!(!m.is_ready(0), "withdrawn: not ready");
                // Whatever re-arms it at once (its queue still looks non-empty) does not
                // let it hold the medium: it counts the backoff it drew from here.
                m.set_ready(0, true, t, &mut rng);
                accesses += 1;
                assert!(accesses < 100, "seed {seed}: contender 1 never got the medium");
            }
        }
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
