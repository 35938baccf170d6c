//! Loom models of writes that check a station is live and then write its slot: a
//! station removed and its slot reused between the check and the write must not receive
//! the write (it was meant for the slot's previous occupant), a station added while
//! the PHY default limits change must end with the latest default, and a station that
//! departs while its last frame completes is drained, its airtime counted, and the live
//! invariant check reports nothing meanwhile.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 RUST_BACKTRACE=0 tools/loom/cargo-loom test --release
//! -p airtime-sched --test loom_control`.
//!
//! Every model has a deliberately weakened variant of the code it covers, which CI builds
//! and requires the model to catch (`.ci/run`):
//!
//! | variant | what it undoes | caught by |
//! |---|---|---|
//! | `untagged_write` | data-path writes to a deficit or airtime counter skip the word's generation tag | `ctl1`, `ctl2` |
//! | `untagged_stamp` | the activity stamp is written without checking its tag | `ctl3` |
//! | `unguarded_control` | control writes do not hold the slot against reuse | `ctl4`, `ctl5` |
//! | `default_no_follow` | a station's limits do not follow a default that changed meanwhile | `ctl6`, `ctl7` |
//! | `check_no_reread` | the live invariant check does not reread a station's word, so a reuse meanwhile looks like a violation | `ctl9` |
//! | `departed_refused` | airtime reported after its station's removal is refused, and lost | `ctl8` |
//! | `stamp_no_retry` | a context whose activity stamp loses its compare-and-swap gives up, leaving an older time | `ctl10` |
#![cfg(loom)]

mod loom_common;

use airtime_sched::{Ac, AqlLimits, Instant, Scheduler, StationId, Tid, TxqReturn, Weight};
use loom::sync::Arc;
use loom::thread;
use loom_common::{NOW, small};

/// The models' time: a fresh station counts as active at time 0 (mainline's zeroed
/// `last_active`), so airtime registered now is charged to its deficit.
/// A time past the active window of anything stamped at [`NOW`].
const LATER: Instant = Instant::from_micros(1_000_000);

fn w(weight: u16) -> Weight {
    Weight::new(weight).expect("non-zero weight")
}

/// One station slot: `stale` is written to by `write` on one thread while another
/// removes it and adds a station of weight 500 (which takes the same slot), then runs
/// `newcomer_then` on it. Returns the newcomer, if the add found the slot reusable, for
/// the caller's checks once the threads joined.
fn race_reuse(
    sched: &Arc<Scheduler>,
    write: impl FnOnce(&Scheduler) + Send + 'static,
    newcomer_then: impl FnOnce(&Scheduler, StationId) + Send + 'static,
    stale: StationId,
) -> Option<StationId> {
    let writer = {
        let sched = sched.clone();
        thread::spawn(move || write(&sched))
    };
    let control = {
        let sched = sched.clone();
        thread::spawn(move || {
            sched.remove_station(stale).unwrap();
            let new = sched.add_station(w(500)).ok();
            if let Some(new) = new {
                newcomer_then(&sched, new);
            }
            new
        })
    };
    writer.join().unwrap();
    let new = control.join().unwrap();
    if let Some(new) = new {
        assert_eq!(new.index(), stale.index());
        assert_ne!(new, stale);
    }
    new
}

/// Model ctl1: airtime registered for a station (the completion context) while the
/// station is removed and its slot taken by a new one: neither the deficit charge nor
/// the airtime statistics land on the newcomer.
#[test]
fn ctl1_stale_register_airtime_never_lands_on_the_next_occupant() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(w(256)).unwrap();
        let write = move |s: &Scheduler| {
            let _ = s.register_airtime(sta, Ac::Be, 100, 0, NOW);
        };
        if let Some(new) = race_reuse(&sched, write, |_, _| {}, sta) {
            assert_eq!(sched.deficit_us(new, Ac::Be).unwrap(), 500, "a stale charge landed on the newcomer's deficit");
            assert_eq!(
                sched.station_airtime(new).unwrap().tx_us,
                0,
                "stale airtime landed in the newcomer's statistics"
            );
        }
    });
}

/// Model ctl2: a top-up for a station (`may_transmit` refusing a txq in debt) while the
/// station is removed and its slot taken by a new one, itself in debt: the top-up does
/// not land on the newcomer's deficit. (A top-up is a compare-and-swap from the deficit
/// it read, and only of a debt: a newcomer out of debt would refuse it anyway, so the
/// newcomer owes airtime here.)
#[test]
fn ctl2_stale_top_up_never_lands_on_the_next_occupant() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(w(256)).unwrap();
        let txq = sched.add_txq(Some(sta), Tid::BE).unwrap();
        // In debt: the pull-mode check refuses and tops the deficit up by the weight.
        sched.register_airtime(sta, Ac::Be, 1000, 0, NOW).unwrap();
        let write = move |s: &Scheduler| {
            if let Ok(airtime_sched::MayTransmit::Granted(serving)) = s.may_transmit(txq, NOW) {
                s.return_txq(serving, TxqReturn::Empty, NOW);
            }
        };
        let owe = |s: &Scheduler, new: StationId| s.register_airtime(new, Ac::Be, 1000, 0, NOW).unwrap();
        if let Some(new) = race_reuse(&sched, write, owe, sta) {
            assert_eq!(sched.deficit_us(new, Ac::Be).unwrap(), -500, "a stale top-up landed on the newcomer's deficit");
        }
    });
}

/// Model ctl3: a wake of a station's txq stamps the station active while the station is
/// removed and its slot taken by a new one: the newcomer is not marked active, so
/// airtime it registers later, outside the window of its own (zeroed) stamp, is not
/// charged to its deficit.
#[test]
fn ctl3_stale_wake_never_marks_the_next_occupant_active() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(w(256)).unwrap();
        let txq = sched.add_txq(Some(sta), Tid::BE).unwrap();
        let write = move |s: &Scheduler| {
            let _ = s.wake_txq(txq, LATER);
        };
        if let Some(new) = race_reuse(&sched, write, |_, _| {}, sta) {
            sched.register_airtime(new, Ac::Be, 100, 0, LATER).unwrap();
            assert_eq!(sched.deficit_us(new, Ac::Be).unwrap(), 500, "a stale wake marked the newcomer active");
        }
    });
}

/// Model ctl4: a limit change for a station while it is removed and its slot taken by a
/// new one: the newcomer keeps the default limits and its own weight.
#[test]
fn ctl4_stale_limit_write_never_lands_on_the_next_occupant() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(w(256)).unwrap();
        let write = move |s: &Scheduler| {
            let _ = s.set_station_limits(sta, Ac::Be, AqlLimits::new(100, 200).unwrap());
        };
        if let Some(new) = race_reuse(&sched, write, |_, _| {}, sta) {
            assert_eq!(sched.station_limits(new, Ac::Be).unwrap(), AqlLimits::DEFAULT, "stale limits on the newcomer");
        }
    });
}

/// Model ctl5: a reset of a station's airtime (its debugfs `airtime` file) while it is
/// removed and its slot taken by a new one, which registers airtime: the newcomer's
/// statistics and deficit are not reset by the stale write.
#[test]
fn ctl5_stale_airtime_reset_never_lands_on_the_next_occupant() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(w(256)).unwrap();
        let write = move |s: &Scheduler| {
            let _ = s.reset_airtime(sta);
        };
        let registered = |s: &Scheduler, new| s.register_airtime(new, Ac::Be, 100, 0, NOW).unwrap();
        if let Some(new) = race_reuse(&sched, write, registered, sta) {
            let airtime = sched.station_airtime(new).unwrap();
            assert_eq!(airtime.tx_us, 100, "a stale reset zeroed the newcomer's statistics");
            assert_eq!(sched.deficit_us(new, Ac::Be).unwrap(), 400, "a stale reset set the newcomer's deficit");
        }
    });
}

/// Model ctl6: a station added while the PHY default limits of its AC change: it ends
/// with the new default (it copies the default when added, and the change moves every
/// station still on the old one: a station added between the two must not miss both).
#[test]
fn ctl6_a_new_station_gets_the_latest_default_limits() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let new_default = AqlLimits::new(100, 200).unwrap();
        let adder = {
            let sched = sched.clone();
            thread::spawn(move || sched.add_station(w(256)).unwrap())
        };
        let setter = {
            let sched = sched.clone();
            thread::spawn(move || sched.set_default_limits(Ac::Be, new_default))
        };
        let sta = adder.join().unwrap();
        setter.join().unwrap();
        assert_eq!(sched.default_limits(Ac::Be), new_default);
        assert_eq!(sched.station_limits(sta, Ac::Be).unwrap(), new_default, "the new station kept the old default");
    });
}

/// Model ctl7: two changes of the PHY default limits at once: a station on the default
/// ends with the one set last, whichever order their scans of the stations run in.
#[test]
fn ctl7_two_default_changes_leave_every_follower_on_the_last() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(w(256)).unwrap();
        let setters: Vec<_> = [AqlLimits::new(100, 200).unwrap(), AqlLimits::new(300, 400).unwrap()]
            .into_iter()
            .map(|limits| {
                let sched = sched.clone();
                thread::spawn(move || sched.set_default_limits(Ac::Be, limits))
            })
            .collect();
        for t in setters {
            t.join().unwrap();
        }
        let default = sched.default_limits(Ac::Be);
        assert_eq!(sched.station_limits(sta, Ac::Be).unwrap(), default, "the station was left on an older default");
    });
}

/// Model ctl8: a station's last frame completes (release, then its airtime registered)
/// while the station is removed and a new station added: the airtime is accepted
/// whether it comes before or after the removal (counted on the station, or on the AC
/// as departed, never refused and lost); the add finds the slot free or says it is
/// draining, never full; the departing station ends drained.
#[test]
fn ctl8_a_departing_station_drains_and_its_late_airtime_is_counted() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(w(256)).unwrap();
        let charge = sched.charge_us(sta, Ac::Be, 100).unwrap();
        let completion = {
            let sched = sched.clone();
            thread::spawn(move || {
                sched.release(charge).unwrap();
                sched.register_airtime(sta, Ac::Be, 100, 0, NOW).expect("airtime of a departing station is accepted");
            })
        };
        let departing = sched.remove_station(sta).unwrap();
        let added = sched.add_station(w(500));
        assert!(matches!(added, Ok(_) | Err(airtime_sched::SchedError::StationsDraining)), "{added:?}");
        completion.join().unwrap();
        assert!(departing.is_drained(&sched));
        assert_eq!(departing.total_pending_us(&sched), 0);
        let departed = sched.ac_counters(Ac::Be).departed_tx_us;
        assert!(departed == 0 || departed == 100, "{departed}");
    });
}

/// Model ctl9: a debugfs reader runs the live invariant check while a station is
/// removed and its slot taken by a new one: the check, which may meet the slot between
/// its two occupants, reports nothing.
#[test]
fn ctl9_the_live_check_reports_nothing_while_a_slot_is_reused() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let sta = sched.add_station(w(256)).unwrap();
        let reader = {
            let sched = sched.clone();
            thread::spawn(move || sched.check_invariants().expect("what holds at every instant"))
        };
        sched.remove_station(sta).unwrap();
        sched.add_station(w(500)).unwrap();
        reader.join().unwrap();
    });
}

/// Model ctl10: two contexts stamp one station active at once, a wake during service at
/// T + 1 grain and the server's return with frames at T + 3 grains
/// (`Config::active_stamp_grain_us`). Whichever compare-and-swap lands first, the stamp
/// ends at the later time (the loser tries again while its time is a grain past the
/// stamp it finds), so airtime registered a window after the later time, less 1 us, is
/// charged.
#[test]
fn ctl10_two_stamps_at_once_leave_the_later_time() {
    loom_common::model(|| {
        let sched = Arc::new(small(1, 1));
        let (window, grain) = (sched.config().active_window_us, sched.config().active_stamp_grain_us());
        let sta = sched.add_station(w(256)).unwrap();
        let txq = sched.add_txq(Some(sta), Tid::BE).unwrap();
        sched.wake_txq(txq, LATER).unwrap();
        let round = sched.start_round(Ac::Be);
        let serving = sched.next_txq(round, LATER).expect("the woken txq");
        let (early, late) = (LATER.add_micros(grain), LATER.add_micros(3 * grain));
        let waker = {
            let sched = sched.clone();
            thread::spawn(move || sched.wake_txq(txq, early).unwrap())
        };
        sched.return_txq(serving, TxqReturn::Backlogged, late);
        waker.join().unwrap();
        sched.register_airtime(sta, Ac::Be, 100, 0, late.add_micros(window - 1)).unwrap();
        assert_eq!(sched.deficit_us(sta, Ac::Be).unwrap(), 156, "the stamp kept the earlier time");
    });
}
