//! The seed's ath11k series, driving the scheduler directly through the crate's ready
//! driver loop ([`airtime_sched::driver_loop::run_round`]): the adapter's role written
//! in the simulator, kept beside the real `airtime-ath11k` crate
//! ([`super::ath11k_adapter`]) as a cross-check of it:
//!
//! * patch 1: every completion releases its charge, whatever its status;
//! * patch 2: AQL on (the scheduler's checks);
//! * patch 4: transmit airtime registered from PPDU stats (the whole exchange);
//! * patch 5: rounds run by the driver, from the wake handler on the sending CPU;
//! * patch 6: a round on tx completion, only for the ACs reaped;
//! * patch 7: received airtime charged to the station's BE deficit;
//! * patch 8: the round ends when the ring has no room (checked before the dequeue);
//! * patch 9: completions handled in NAPI budgets, one round per budget;
//! * TX_NO_PUSHBACK: set through the scheduler's `tx_no_pushback` configuration.

use super::Ap;
use super::hardware::TxStatus;
use super::tcl_port::TclPort;
use crate::engine::Nanos;
use crate::engine::time::instant;
use airtime_sched::Ac;
use airtime_sched::driver_loop::run_round;

fn round(ap: &mut Ap, ring: u8, ac: Ac, now: Nanos) {
    ap.counters.driver_rounds += 1;
    let mut port = TclPort { hw: &mut ap.hw, ring };
    let report = run_round(&ap.sched, ac, instant(now), &mut ap.txqs[..], &ap.stations[..], &mut port);
    if let Some(refused) = report.refused {
        // Unreachable with the room check first; account it like the driver would: the
        // frame is dropped unsent, so its charge is given back, not completed.
        if let Some(c) = refused.charge {
            let _ = ap.sched.give_back(c);
        }
        ap.counters.ring_drops += 1;
        ap.dropped.push(refused.frame);
    }
}

/// `wake_tx_queue` on `cpu` for a txq of `ac`: a driver round of that access
/// category pushing into that CPU's ring.
pub fn wake_tx_queue(ap: &mut Ap, cpu: u8, ac: Ac, now: Nanos) {
    let ring = ap.hw.ring_of_cpu(cpu);
    round(ap, ring, ac, now);
}

/// A round of each access category in `reaped` (highest first, as mac80211 orders
/// its access categories, `IEEE80211_AC_VO` = 0).
fn rounds(ap: &mut Ap, ring: u8, reaped: [bool; Ac::COUNT], now: Nanos) {
    for ac in Ac::ALL {
        if reaped[ac.index()] {
            round(ap, ring, ac, now);
        }
    }
}

/// The tx completion handler: per NAPI budget of completions (of one completion
/// ring each), release the charges, free the descriptors, then run a round on that
/// ring for the AC reaped.
pub fn tx_status(ap: &mut Ap, statuses: &mut [TxStatus], now: Nanos) {
    let budget = ap.hw.config.napi_budget.max(1) as usize;
    let rings = ap.hw.config.rings.max(1);
    for ring in 0..rings {
        let mut in_budget = 0usize;
        let mut reaped = [false; Ac::COUNT];
        for st in statuses.iter_mut().filter(|s| s.ring == ring) {
            if let Some(c) = st.charge.take() {
                let _ = ap.sched.release(c);
            }
            ap.hw.free_descriptor(st.ring);
            in_budget += 1;
            reaped[if ap.hw.access_categories() { st.ac } else { Ac::Be }.index()] = true;
            if in_budget == budget {
                rounds(ap, ring, std::mem::take(&mut reaped), now);
                in_budget = 0;
            }
        }
        rounds(ap, ring, reaped, now);
    }
}

/// PPDU stats: the exchange's airtime to the station's deficit (tx) of the access
/// category it carried (the PPDU-stats user record's TID).
pub fn ppdu_stats(ap: &mut Ap, s: u16, ac: Ac, airtime_us: u32, now: Nanos) {
    if let Some(id) = ap.sta_ids.get(usize::from(s)) {
        let _ = ap.sched.register_airtime(*id, ac, airtime_us, 0, instant(now));
    }
}

/// Received airtime: always to BE (patch 7).
pub fn rx_airtime(ap: &mut Ap, s: u16, airtime_us: u32, now: Nanos) {
    if let Some(id) = ap.sta_ids.get(usize::from(s)) {
        let _ = ap.sched.register_airtime(*id, Ac::Be, 0, airtime_us, instant(now));
    }
}
