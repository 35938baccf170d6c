// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! A small airtime-fairness model run inside the kernel: weighted deficit
//! round robin over a few stations, in integer microseconds.
//!
//! The rule is mac80211's: the station at the head of the active list may
//! send while its deficit is non-negative; each frame's airtime is charged
//! to its deficit; a station whose deficit is negative gets its weight (in
//! microseconds per round) added and goes to the tail. Stations with
//! different frame airtimes (different rates) then share the air in
//! proportion to their weights, not to their frame counts. This is a
//! stand-in until the real scheduler (`airtime-sched`) is linked into the
//! module; its scenarios will sit beside these in the table.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::{Outcome, ensure};
use crate::msg::MsgBuf;

/// Default airtime weight, in microseconds per round (mac80211's default).
const WEIGHT_DEFAULT_US: u32 = 256;

/// Allowed error of a measured share, in permille.
const TOLERANCE_PERMILLE: u64 = 10;

struct Station {
    weight_us: u32,
    frame_us: u32,
    deficit_us: i64,
    served_us: u64,
}

/// The model: stations, the active list (backlogged stations in round
/// order) and the virtual clock.
struct Drr {
    stations: Vec<Station>,
    active: VecDeque<usize>,
    now_us: u64,
}

impl Drr {
    fn new() -> Self {
        Self { stations: Vec::new(), active: VecDeque::new(), now_us: 0 }
    }

    /// Adds a station that sends frames of `frame_us` each; a backlogged one
    /// joins the tail of the active list now, with a zero deficit. Weight 0
    /// (never served) and zero-length frames (no progress) are refused.
    fn add(&mut self, weight_us: u32, frame_us: u32, backlogged: bool) -> Option<usize> {
        if weight_us == 0 || frame_us == 0 {
            return None;
        }
        let id = self.stations.len();
        self.stations.push(Station { weight_us, frame_us, deficit_us: 0, served_us: 0 });
        if backlogged {
            self.active.push_back(id);
        }
        Some(id)
    }

    /// Serves frames until the clock reaches `end_us` (the last frame may
    /// end past it) or nobody is backlogged.
    fn run_until(&mut self, end_us: u64) {
        while self.now_us < end_us {
            let Some(&head) = self.active.front() else {
                return;
            };
            let station = &mut self.stations[head];
            if station.deficit_us < 0 {
                station.deficit_us += i64::from(station.weight_us);
                self.active.rotate_left(1);
                continue;
            }
            station.deficit_us -= i64::from(station.frame_us);
            station.served_us += u64::from(station.frame_us);
            self.now_us += u64::from(station.frame_us);
        }
    }

    /// Airtime served to each station so far.
    fn served(&self) -> Vec<u64> {
        self.stations.iter().map(|s| s.served_us).collect()
    }
}

/// Shares in permille of the airtime served between two snapshots.
fn shares_permille(before: &[u64], after: &[u64]) -> Vec<u64> {
    let delta: Vec<u64> = after.iter().zip(before.iter().chain(core::iter::repeat(&0))).map(|(a, b)| a - b).collect();
    let total: u64 = delta.iter().sum();
    delta.iter().map(|d| (d * 1000).checked_div(total).unwrap_or(0)).collect()
}

/// Fails unless every share is within the tolerance of the wanted one.
fn check_shares(msg: &mut MsgBuf<'_>, what: &str, got: &[u64], want: &[u64]) -> Outcome {
    let close = got.len() == want.len() && got.iter().zip(want).all(|(g, w)| g.abs_diff(*w) <= TOLERANCE_PERMILLE);
    ensure!(msg, close, "{what}: shares {got:?} permille, want {want:?} +/- {TOLERANCE_PERMILLE}");
    Ok(())
}

/// Builds a model of always-backlogged stations from (weight, frame) pairs.
fn backlogged(msg: &mut MsgBuf<'_>, stations: &[(u32, u32)]) -> Result<Drr, super::Failed> {
    let mut drr = Drr::new();
    for &(weight_us, frame_us) in stations {
        let added = drr.add(weight_us, frame_us, true);
        ensure!(msg, added.is_some(), "station ({weight_us}, {frame_us}) refused");
    }
    Ok(drr)
}

/// Three stations with equal weights but frames of 100, 400 and 1500 us
/// (fast, medium and slow rates) each get a third of the airtime, and every
/// microsecond is accounted to someone.
pub(super) fn equal_weights(msg: &mut MsgBuf<'_>) -> Outcome {
    let w = WEIGHT_DEFAULT_US;
    let mut drr = backlogged(msg, &[(w, 100), (w, 400), (w, 1500)])?;
    drr.run_until(3_000_000);
    let served = drr.served();
    let total: u64 = served.iter().sum();
    ensure!(msg, total == drr.now_us, "served {total} us in {} us of air", drr.now_us);
    check_shares(msg, "equal weights", &shares_permille(&[], &served), &[333, 333, 333])
}

/// Weights 128, 256 and 512 give shares of 1/7, 2/7 and 4/7 of the air,
/// whatever the stations' frame airtimes.
pub(super) fn weighted(msg: &mut MsgBuf<'_>) -> Outcome {
    let mut drr = backlogged(msg, &[(128, 1500), (256, 100), (512, 400)])?;
    drr.run_until(3_000_000);
    check_shares(msg, "weights 1:2:4", &shares_permille(&[], &drr.served()), &[143, 286, 571])
}

/// A station that becomes backlogged after one second gets a third of the
/// air from then on, and no credit for the time it was absent.
pub(super) fn late_joiner(msg: &mut MsgBuf<'_>) -> Outcome {
    let w = WEIGHT_DEFAULT_US;
    let mut drr = backlogged(msg, &[(w, 300), (w, 1200)])?;
    drr.run_until(1_000_000);
    let at_join = drr.served();
    check_shares(msg, "before the join", &shares_permille(&[], &at_join), &[500, 500])?;

    let late = drr.add(w, 700, true);
    ensure!(msg, late == Some(2), "late station refused");
    drr.run_until(2_000_000);
    let after = drr.served();
    check_shares(msg, "after the join", &shares_permille(&at_join, &after), &[333, 333, 333])?;
    check_shares(msg, "whole run", &shares_permille(&[], &after), &[417, 417, 167])
}

/// A station with nothing to send gets no airtime and costs the others
/// none; weight 0 and empty frames are refused.
pub(super) fn idle_station(msg: &mut MsgBuf<'_>) -> Outcome {
    let w = WEIGHT_DEFAULT_US;
    let mut drr = backlogged(msg, &[(w, 500), (w, 900)])?;
    let idle = drr.add(w, 200, false);
    ensure!(msg, idle == Some(2), "idle station refused");
    drr.run_until(2_000_000);
    check_shares(msg, "one idle", &shares_permille(&[], &drr.served()), &[500, 500, 0])?;

    let mut empty = Drr::new();
    ensure!(
        msg,
        empty.add(0, 100, true).is_none() && empty.add(w, 0, true).is_none(),
        "weight 0 or a zero-length frame was accepted"
    );
    empty.run_until(1_000);
    ensure!(msg, empty.now_us == 0, "the clock ran with no station backlogged");
    Ok(())
}
