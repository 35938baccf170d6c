//! Stock ath11k: mac80211's default wake handler (`ieee80211_handle_wake_tx_queue`, which loops
//! `ieee80211_next_txq` and `ieee80211_tx_dequeue` into the driver) pushes every frame of every
//! scheduled txq into the TCL ring of the CPU it runs on, with no room check; a frame the ring
//! refuses is freed (ath11k returns -ENOSPC after the frame was dequeued). No AQL, no airtime
//! reports, no round on completion: the hardware queue is the ring.

use super::Ap;
use super::hardware::{HwFrame, TxStatus};
use crate::engine::Nanos;
use crate::engine::time::instant;
use crate::net::Node;
use airtime_sched::{Ac, Txq, TxqReturn};

/// `wake_tx_queue` on `cpu` for a txq of `ac`: the woken txq's access category's
/// schedule (`ieee80211_handle_wake_tx_queue` loops `ieee80211_next_txq(hw, txq->ac)`;
/// each frame goes into the ring of its flow's CPU, see [`super::tcl_port`]).
pub fn wake_tx_queue(ap: &mut Ap, cpu: u8, ac: Ac, now: Nanos) {
    let now_i = instant(now);
    let _ = cpu;
    let round = ap.sched.start_round(ac);
    if !round.is_open() {
        return;
    }
    ap.counters.driver_rounds += 1;
    while let Some(serving) = ap.sched.next_txq(round, now_i) {
        if let Some(q) = ap.txqs.get_mut(serving.txq().index()).and_then(Option::as_mut) {
            while let Ok(Some(pkt)) = q.dequeue(now_i) {
                let Node::Station(station) = pkt.dst else { continue };
                let ring = ap.hw.ring_of_cpu(pkt.cpu);
                if let Err(f) = ap.hw.push(HwFrame { pkt, charge: None, ring, fifo: ring, station, msdu_id: None }) {
                    ap.counters.ring_drops += 1;
                    ap.dropped.push(f.pkt);
                }
            }
        }
        ap.sched.return_txq(serving, TxqReturn::Empty, now_i);
    }
}

/// Completions free their descriptors; nothing else happens.
pub fn tx_status(ap: &mut Ap, statuses: &mut [TxStatus]) {
    for st in statuses.iter_mut() {
        ap.hw.free_descriptor(st.ring);
        if let Some(c) = st.charge.take() {
            let _ = ap.sched.release(c);
        }
    }
}
