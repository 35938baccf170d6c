//! Adaptive AQL (`Config::adaptive_aql`) against a small link model: one backlogged
//! station, a hardware queue that starts a PPDU from whatever is queued whenever the
//! medium is free, and completions (releases) a fixed turnaround after each PPDU ends,
//! after which the driver refills up to the station check.

mod common;

use airtime_sched::{Ac, AqlLimits, Config, Instant, Scheduler, StationId, Tid, TxqReturn, Weight};
use std::collections::VecDeque;

const FLOOR_US: u32 = 500;
/// Per-PPDU overhead (preamble, SIFS, BlockAck, backoff), in us.
const OVERHEAD_US: u64 = 150;
/// VHT's aPPDUMaxTime, and the 64-frame BlockAck window.
const PPDU_MAX_US: u64 = 5484;
const AMPDU_FRAMES: u64 = 64;

struct Link {
    s: Scheduler,
    sta: StationId,
    /// Charges queued in hardware, not yet in a PPDU: (charge, frame airtime).
    queued: VecDeque<(airtime_sched::Charge, u64)>,
    /// PPDUs sent, awaiting their completion: (completion time, charges).
    sent: VecDeque<(u64, Vec<airtime_sched::Charge>)>,
    now_us: u64,
    busy_us: u64,
    frame_us: u64,
    turnaround_us: u64,
}

impl Link {
    fn new(adaptive: bool, limits: AqlLimits, frame_us: u64, turnaround_us: u64) -> Link {
        let config = common::builder().adaptive_aql(adaptive).adaptive_aql_floor_us(FLOOR_US.into()).unwrap().build();
        let s = Scheduler::new(config).unwrap();
        s.set_default_limits(Ac::Be, limits);
        let sta = s.add_station(Weight::DEFAULT).unwrap();
        let mut l = Link {
            s,
            sta,
            queued: VecDeque::new(),
            sent: VecDeque::new(),
            now_us: 0,
            busy_us: 0,
            frame_us,
            turnaround_us,
        };
        l.refill();
        l
    }

    /// The driver: frames while the station check allows (always backlogged).
    fn refill(&mut self) {
        while self.s.airtime_check(self.sta, Ac::Be).unwrap() {
            let c = self.s.charge_us(self.sta, Ac::Be, self.frame_us as u32).unwrap();
            self.queued.push_back((c, self.frame_us));
        }
    }

    /// One PPDU (or one idle wait for a completion), then the completions due by its end.
    fn step(&mut self) {
        if self.queued.is_empty() {
            // Idle until the next completion refills the queue.
            let (at, charges) = self.sent.pop_front().expect("a backlogged station always has a frame in flight");
            self.now_us = self.now_us.max(at);
            assert!(self.s.release_batch(charges).is_clean());
            self.refill();
            return;
        }
        let mut charges = Vec::new();
        let mut air = 0;
        while let Some(&(_, f)) = self.queued.front() {
            if charges.len() as u64 == AMPDU_FRAMES || (air + f > PPDU_MAX_US && !charges.is_empty()) {
                break;
            }
            air += f;
            charges.push(self.queued.pop_front().unwrap().0);
        }
        self.now_us += air + OVERHEAD_US;
        self.busy_us += air;
        self.sent.push_back((self.now_us + self.turnaround_us, charges));
        while self.sent.front().is_some_and(|(at, _)| *at <= self.now_us) {
            let (_, charges) = self.sent.pop_front().unwrap();
            assert!(self.s.release_batch(charges).is_clean());
            self.refill();
        }
    }

    fn limit_us(&self) -> AqlLimits {
        self.s.station_aql(self.sta).unwrap().limits[Ac::Be]
    }

    /// Runs for `us`, returning the busy (payload) fraction in per mille and the
    /// smallest and largest learnt high limit seen.
    fn run(&mut self, us: u64) -> (u64, u32, u32) {
        let (t0, b0) = (self.now_us, self.busy_us);
        let (mut lo, mut hi) = (u32::MAX, 0);
        while self.now_us < t0 + us {
            self.step();
            let l = self.limit_us().high_us();
            lo = lo.min(l);
            hi = hi.max(l);
        }
        ((self.busy_us - b0) * 1000 / (self.now_us - t0), lo, hi)
    }
}

/// 1500 bytes at VHT80 1SS MCS9 SGI (433 Mbit/s): 28 us; at MCS0 LGI (29.3 Mbit/s): 410 us.
const FAST_US: u64 = 28;
const SLOW_US: u64 = 410;
const TURNAROUND_US: u64 = 500;

#[test]
fn off_by_default_and_the_stats_show_it() {
    assert!(!Config::default().adaptive_aql);
    // Under Miri the slow link: its first refill is 30 charges up to the limit, not 430.
    let frame_us = if cfg!(miri) { SLOW_US } else { FAST_US };
    let l = Link::new(false, AqlLimits::DEFAULT, frame_us, TURNAROUND_US);
    assert_eq!(l.s.station_aql(l.sta).unwrap().configured, None);
    let l = Link::new(true, AqlLimits::DEFAULT, frame_us, TURNAROUND_US);
    let aql = l.s.station_aql(l.sta).unwrap();
    assert_eq!(aql.configured.unwrap()[Ac::Be], AqlLimits::DEFAULT);
    assert!(aql.to_string().contains("AQL adaptive (configured low/high)"));
}

#[test]
fn the_floor_is_refused_below_one_charge() {
    assert!(Config::builder().adaptive_aql_floor_us(3).is_err());
    assert!(Config::builder().adaptive_aql_floor_us(u64::from(u32::MAX) + 1).is_err());
}

#[test]
fn stays_within_floor_and_configured_on_every_link() {
    // Rates from 28 to 2000 us a frame, turnarounds 0 to 3 ms, two configured limits.
    for limits in [AqlLimits::DEFAULT, AqlLimits::new(500, 1000).unwrap()] {
        for frame_us in [FAST_US, 120, SLOW_US, 2000] {
            for turnaround_us in [0, 500, 3000] {
                let mut l = Link::new(true, limits, frame_us, turnaround_us);
                let (_, lo, hi) = l.run(2_000_000);
                assert!(hi <= limits.high_us(), "{frame_us}/{turnaround_us}: {hi}");
                assert!(lo >= FLOOR_US.min(limits.high_us()), "{frame_us}/{turnaround_us}: {lo}");
            }
        }
    }
}

#[test]
fn a_fast_link_settles_low_and_keeps_its_throughput() {
    let (fixed, _, _) = Link::new(false, AqlLimits::DEFAULT, FAST_US, TURNAROUND_US).run(3_000_000);
    let mut l = Link::new(true, AqlLimits::DEFAULT, FAST_US, TURNAROUND_US);
    l.run(2_000_000); // learning
    let (busy, lo, hi) = l.run(3_000_000);
    // Converged: the limit moves in a band (grow by half, shrink by half the slack),
    // far below the configured 12 ms, and the link loses under 3 % of its payload time.
    assert!(hi <= 4 * lo, "band {lo}..{hi}");
    assert!(hi < 6000, "settled at {lo}..{hi}");
    assert!(busy * 100 >= fixed * 97, "busy {busy} vs fixed {fixed} per mille");
}

#[test]
fn a_slow_link_keeps_enough_for_its_turnaround() {
    let (fixed, _, _) = Link::new(false, AqlLimits::DEFAULT, SLOW_US, 2000).run(3_000_000);
    let (small, _, _) = Link::new(false, AqlLimits::new(500, 1000).unwrap(), SLOW_US, 2000).run(3_000_000);
    let mut l = Link::new(true, AqlLimits::DEFAULT, SLOW_US, 2000);
    l.run(2_000_000);
    let (busy, lo, hi) = l.run(3_000_000);
    assert!(small * 100 < fixed * 90, "the model must show the fixed limit's cost: {small} vs {fixed}");
    assert!(busy * 100 >= fixed * 95, "busy {busy} vs fixed {fixed} per mille ({lo}..{hi})");
    assert!(hi <= 4 * lo, "band {lo}..{hi}");
}

#[test]
fn a_rate_drop_is_followed_within_20_ms() {
    let mut l = Link::new(true, AqlLimits::DEFAULT, FAST_US, 2000);
    l.run(2_000_000);
    let before = l.limit_us().high_us();
    l.frame_us = SLOW_US;
    // Each completion that finds the station dry grows its limit by half: from the
    // fast link's limit to the slow one's in a few completions, each one PPDU plus the
    // turnaround apart.
    let (_, _, hi) = l.run(20_000);
    assert!(hi > before, "grew from {before} to {hi}");
    let (busy, _, _) = l.run(1_000_000);
    let (fixed, _, _) = Link::new(false, AqlLimits::DEFAULT, SLOW_US, 2000).run(1_000_000);
    assert!(busy * 100 >= fixed * 95, "busy {busy} vs fixed {fixed}");
    // And back: the slack shows within a few windows of 100 ms of airtime.
    l.frame_us = FAST_US;
    let slow_limit = l.limit_us().high_us();
    l.run(1_000_000);
    assert!(l.limit_us().high_us() < slow_limit, "shrank from {slow_limit}");
}

#[test]
fn a_backlogged_station_always_has_a_frame_in_flight() {
    // The model's `step` panics if a backlogged station ever has nothing in flight and
    // nothing queued; check the station check itself at pending 0 too, at the floor.
    for frame_us in [FAST_US, SLOW_US] {
        let mut l = Link::new(true, AqlLimits::new(4, 12_000).unwrap(), frame_us, 0);
        l.run(1_000_000);
        assert!(l.limit_us().low_us() >= 1);
    }
    // And with everything completed, at whatever limit it learnt, a station may send.
    for (frame_us, turnaround_us) in [(FAST_US, 0), (FAST_US, 500), (SLOW_US, 3000)] {
        let mut l = Link::new(true, AqlLimits::DEFAULT, frame_us, turnaround_us);
        l.run(1_000_000);
        let learnt = l.limit_us();
        let queued: Vec<_> = l.queued.drain(..).map(|(c, _)| c).collect();
        assert!(l.s.release_batch(queued).is_clean());
        for (_, charges) in l.sent.drain(..) {
            assert!(l.s.release_batch(charges).is_clean());
        }
        assert_eq!(l.s.station_pending_us(l.sta, Ac::Be).unwrap(), 0);
        assert!(l.s.airtime_check(l.sta, Ac::Be).unwrap(), "nothing in flight at {learnt:?}: may send");
    }
}

#[test]
fn a_station_that_learnt_nothing_follows_its_configured_limit() {
    // Released without ever being refused or shrinking: nothing learnt, so a raised
    // limit applies as it does to a station that never released (and as with adaptive
    // AQL off), and so does a configured limit beyond the learnt word's range (~1 s).
    let s = Scheduler::new(common::builder().adaptive_aql(true).build()).unwrap();
    let released = s.add_station(Weight::DEFAULT).unwrap();
    let idle = s.add_station(Weight::DEFAULT).unwrap();
    let c = s.charge_us(released, Ac::Be, 100).unwrap();
    s.release(c).unwrap();
    let high = |sta| s.station_aql(sta).unwrap().limits[Ac::Be].high_us();
    for limits in [AqlLimits::new(5000, 20_000).unwrap(), AqlLimits::new(5000, 2_000_000).unwrap()] {
        for sta in [released, idle] {
            s.set_station_limits(sta, Ac::Be, limits).unwrap();
            assert_eq!(s.station_aql(sta).unwrap().limits[Ac::Be], limits);
        }
        let c = s.charge_us(released, Ac::Be, 100).unwrap();
        s.release(c).unwrap();
        assert_eq!(high(released), limits.high_us());
    }
    // Grown back to its configured limit, it follows that limit too.
    let mut l = Link::new(true, AqlLimits::DEFAULT, SLOW_US, 3000);
    l.run(1_000_000);
    if l.limit_us().high_us() == AqlLimits::DEFAULT.high_us() {
        l.s.set_station_limits(l.sta, Ac::Be, AqlLimits::new(5000, 20_000).unwrap()).unwrap();
        assert_eq!(l.limit_us().high_us(), 20_000);
    }
}

/// A station whose txq went back empty while it still pays off a debt stays listed for
/// that debt (mainline keeps it active). A round that visits that txq while the station
/// is over its limit keeps back no frame: the refusal must not count as one that held
/// the station back, or every burst that drains its queue grows the learnt limit at the
/// completion that empties the station. Once a frame arrives (a wake), a refused visit
/// counts again. Both ways a round visits: walked, and through the lap skip (a second
/// station in debt but under its limit makes the first lap serve nobody).
#[test]
fn a_refused_visit_counts_only_for_a_txq_with_frames() {
    const NOW: Instant = Instant::from_micros(1_000_000);
    for (woken, other_in_debt) in [(false, false), (true, false), (false, true), (true, true)] {
        let config = common::builder().adaptive_aql(true).build();
        let mut s = Scheduler::new(config).unwrap();
        s.set_default_limits(Ac::Be, AqlLimits::new(500, 2000).unwrap());
        let sta = s.add_station(Weight::DEFAULT).unwrap();
        // One window of slack: the learnt limit gives back an eighth (2000 to 1750).
        let keep = s.charge_us(sta, Ac::Be, 60_000).unwrap();
        for _ in 0..2 {
            let go = s.charge_us(sta, Ac::Be, 50_000).unwrap();
            s.release(go).unwrap();
        }
        s.release(keep).unwrap();
        let high = |s: &Scheduler| s.station_aql(sta).unwrap().limits[Ac::Be].high_us();
        assert_eq!(high(&s), 1750);

        // A turn sends the station's last frames (1800 us in flight, over its 1750) and
        // its airtime puts it deep in debt; the txq goes back empty, listed for the debt.
        let txq = s.add_txq(Some(sta), Tid::BE).unwrap();
        s.wake_txq(txq, NOW).unwrap();
        let round = s.start_round(Ac::Be);
        let mut serving = s.next_txq(round, NOW).expect("the woken txq is served");
        let last = serving.charge_us(1800).unwrap();
        s.register_airtime(sta, Ac::Be, 50_000, 0, NOW).unwrap();
        s.return_txq(serving, TxqReturn::Empty, NOW);
        assert!(s.deficit_us(sta, Ac::Be).unwrap() < 0);
        s.check_invariants_quiescent().unwrap();
        let other_txq = other_in_debt.then(|| {
            let other = s.add_station(Weight::DEFAULT).unwrap();
            let b = s.add_txq(Some(other), Tid::BE).unwrap();
            s.wake_txq(b, NOW).unwrap();
            s.register_airtime(other, Ac::Be, 50_000, 0, NOW).unwrap();
            b
        });
        if woken {
            // A frame arrives: the txq is listed for it now.
            s.wake_txq(txq, NOW).unwrap();
        }
        // The next round visits the txq and refuses the station (over its limit); the
        // other station, once its debt is paid, is served.
        let round = s.start_round(Ac::Be);
        while let Some(serving) = s.next_txq(round, NOW) {
            assert_eq!(Some(serving.txq()), other_txq, "a station over its limit was served");
            s.return_txq(serving, TxqReturn::Empty, NOW);
        }
        s.check_invariants_quiescent().unwrap();
        // The completion that empties the station: a refusal that counted grows it now.
        s.release(last).unwrap();
        let case = format!("woken {woken}, another station in debt {other_in_debt}");
        if woken {
            assert_eq!(high(&s), 2000, "the refusal of a txq with frames was lost ({case})");
        } else {
            assert_eq!(high(&s), 1750, "a visit that kept back no frame grew the limit ({case})");
        }
    }
}
