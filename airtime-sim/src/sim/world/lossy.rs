//! The world's path through a lossy or changing link (`wifi::link`): the rate of each
//! exchange, the BlockAck that says which subframes arrived, the resend of the others
//! at the head of their queue, the drop at the retry limit, the receiver's reorder
//! buffer, and the rate the driver reports to mac80211 afterwards. Stations with an
//! ideal link never come here.

use super::{Delivery, HostCompletion, LinkPair, World};
use crate::ap::hardware::{HwFrame, TxStatus};
use crate::engine::Nanos;
use crate::net::Packet;
use crate::net::packet::FlowTag;
use crate::wifi::PhyTiming;
use crate::wifi::link::{LinkResult, MAX_ATTEMPTS};
use crate::wifi::medium::Outcome;
use crate::wifi::reorder::Reorder;
use airtime_sched::Ac;

impl World {
    /// Picks the rate of the coming exchange of contender `w` (any of the AP's EDCA
    /// functions, BE or another access category: towards every station with a link,
    /// since the firmware picks the station; `1 + q`: the station of queue `q`).
    pub(super) fn choose_rates(&mut self, w: usize, now: Nanos) {
        if let Some(ac) = self.ap_ac_of(w) {
            for s in 0..self.links.len() {
                if let Some(l) = self.links[s].as_mut() {
                    let c = l.down.choose(now, &mut self.chan_rng);
                    let mut t = c.timing();
                    t.seq_room = l.down_rx[ac.index()].room(PhyTiming::new(c.rate).ba_window);
                    self.timings[s] = t;
                    l.down_choice = Some(c);
                }
            }
        } else {
            let q = w.saturating_sub(1);
            let s = self.queue_station.get(q).map_or(usize::MAX, |&s| usize::from(s));
            let ac = self.queue_ac.get(q).map_or(0, |a| a.index());
            if let Some(l) = self.links.get_mut(s).and_then(Option::as_mut) {
                let c = l.up.choose(now, &mut self.chan_rng);
                let mut t = c.timing();
                // The window is the BlockAck agreement's (64, or 256 for HE), not a
                // rate-control sample's one-MPDU aggregate.
                t.seq_room = l.up_rx[ac].room(PhyTiming::new(c.rate).ba_window);
                self.timings[s] = t;
                l.up_choice = Some(c);
            }
        }
    }

    /// The BlockAck of the AP's A-MPDU to station `s`: completions for the acknowledged
    /// frames and for those dropped at the retry limit go to `statuses`. Returns the
    /// packets the station's reorder buffer releases, how the exchange ended for the
    /// AP's contention window (acknowledged if a BlockAck came back, any subframe
    /// arrived, else failed, at the retry limit if it dropped a frame there,
    /// 802.11-2020 10.23.2.4), and the lost frames, in order, for the caller to resend:
    /// at the head of the station's firmware queue at once, or through a
    /// host-aggregating driver's completion.
    pub(super) fn block_ack_down(
        &mut self,
        s: usize,
        frames: Vec<HwFrame>,
        airtime_ns: Nanos,
        now: Nanos,
        measuring: bool,
        statuses: &mut Vec<TxStatus>,
    ) -> (Vec<Packet>, Outcome, Vec<HwFrame>) {
        let mut released = Vec::new();
        let Some(l) = self.links[s].as_mut() else { return (released, Outcome::Acknowledged, frames) };
        let Some(choice) = l.down_choice.take() else {
            // Unreachable: every access of the AP's EDCA functions picks the rates first.
            // Should it happen, the frames count as acknowledged: each still completes
            // (its descriptor and AQL charge are released) and passes the reorder buffer,
            // so the sequence space stays whole.
            debug_assert!(false, "an AP exchange to station {s} without a chosen rate");
            for mut f in frames {
                let rx = &mut l.down_rx[f.pkt.ac().index()];
                f.pkt.mpdu_seq = rx.assign(f.pkt.mpdu_seq);
                let (status, pkt) = f.complete();
                statuses.push(status);
                rx.receive(pkt.mpdu_seq, Some(pkt), &mut released);
            }
            return (released, Outcome::Acknowledged, Vec::new());
        };
        let price_rate = l.fixed_report.unwrap_or_else(|| l.down.reported_rate());
        let (mut acked, mut lost, mut dropped) = (0u32, Vec::new(), false);
        let sent = frames.len() as u32;
        for mut f in frames {
            // Numbered here unless its driver numbered it; priced once, on its first pass
            // through the BlockAck (a collision before it may have counted a try already).
            let tid = f.pkt.ac().index();
            f.pkt.mpdu_seq = l.down_rx[tid].assign(f.pkt.mpdu_seq);
            if l.down_rx[tid].first_attempt(f.pkt.mpdu_seq) && measuring {
                l.priced_us +=
                    u64::from(airtime_est::expected_tx_airtime_us(price_rate, f.pkt.mac_frame_bytes(), true));
            }
            let ok = l.down.subframe_ok(choice.rate, now, &mut self.chan_rng);
            if !ok {
                f.pkt.tries = f.pkt.tries.saturating_add(1);
                if f.pkt.tries < MAX_ATTEMPTS {
                    lost.push(f);
                    continue;
                }
                l.down.dropped += 1;
                self.retry_drops += 1;
                dropped = true;
                if let FlowTag::Tcp(n) | FlowTag::Udp(n) = f.pkt.flow
                    && let Some(d) = self.flow_drops.get_mut(usize::from(n))
                {
                    *d += 1;
                }
            } else {
                acked += 1;
            }
            let (status, pkt) = f.complete();
            statuses.push(status);
            l.down_rx[tid].receive(pkt.mpdu_seq, ok.then_some(pkt), &mut released);
        }
        l.held_max = l.held_max.max(l.down_rx.iter().map(Reorder::held).max().unwrap_or(0));
        if measuring {
            l.spent_ns += airtime_ns;
        }
        l.down.block_ack(choice, sent, acked, now);
        self.report_rate(s, now);
        (released, Outcome::of(acked > 0, dropped), lost)
    }

    /// The BlockAck of an A-MPDU from queue `q` of a station: the lost frames go back to
    /// the head of the queue, those at the retry limit are dropped (counted on the
    /// link's drops and the run's `retry_drops`, not on the flow's: the station's
    /// driver drops them, out of the flow's sight). Returns the packets the AP's
    /// reorder buffer (one per access category) releases, and how the exchange ended
    /// for the station's contention window (as `block_ack_down`).
    pub(super) fn block_ack_up(&mut self, q: usize, frames: Vec<Packet>, now: Nanos) -> (Vec<Packet>, Outcome) {
        let s = usize::from(self.queue_station[q]);
        let ac = self.queue_ac[q].index();
        let Some(l) = self.links[s].as_mut() else { return (frames, Outcome::Acknowledged) };
        let mut released = Vec::new();
        let Some(choice) = l.up_choice.take() else {
            // Unreachable: every station access picks its rate first. As for the
            // downlink: acknowledged, through the reorder buffer.
            debug_assert!(false, "an exchange from queue {q} without a chosen rate");
            for mut p in frames {
                p.mpdu_seq = l.up_rx[ac].assign(p.mpdu_seq);
                let seq = p.mpdu_seq;
                l.up_rx[ac].receive(seq, Some(p), &mut released);
            }
            return (released, Outcome::Acknowledged);
        };
        let sent = frames.len() as u32;
        let (mut acked, mut lost, mut dropped) = (0u32, Vec::new(), false);
        for mut p in frames {
            p.mpdu_seq = l.up_rx[ac].assign(p.mpdu_seq);
            let ok = l.up.subframe_ok(choice.rate, now, &mut self.chan_rng);
            if !ok {
                p.tries = p.tries.saturating_add(1);
                if p.tries < MAX_ATTEMPTS {
                    lost.push(p);
                    continue;
                }
                l.up.dropped += 1;
                self.retry_drops += 1;
                dropped = true;
            } else {
                acked += 1;
            }
            let seq = p.mpdu_seq;
            l.up_rx[ac].receive(seq, ok.then_some(p), &mut released);
        }
        l.held_max = l.held_max.max(l.up_rx[ac].held());
        l.up.block_ack(choice, sent, acked, now);
        for p in lost.into_iter().rev() {
            self.uplink[q].held.push_front(p);
        }
        (released, Outcome::of(acked > 0, dropped))
    }

    /// Moves each station's reorder buffer past the frames its AP's host-aggregating
    /// driver gave up outside the retry limit (ath9k's BlockAck request after
    /// `ath_send_bar`, its timing not modelled), handing the station what that releases.
    pub(super) fn receivers_pass_given_up(&mut self) {
        for (station, ac, seq) in self.ap.take_given_up() {
            let s = usize::from(station);
            let mut released = Vec::new();
            if let Some(l) = self.links.get_mut(s).and_then(Option::as_mut) {
                l.down_rx[ac.index()].receive(seq, None, &mut released);
            }
            if !released.is_empty() {
                for p in released {
                    self.packets += 1;
                    self.delivered.push(Delivery::Down(s, p));
                }
                self.delivered.push(Delivery::Poll(s));
            }
        }
    }

    /// The AP's A-MPDU (or MU user's subframes) to `station` collided: no BlockAck, so
    /// each frame counts a failed attempt, as a lost subframe does (ath9k counts a
    /// software retry for every subframe of an aggregate without a BlockAck,
    /// `ath_tx_complete_aggr`). A frame at [`MAX_ATTEMPTS`] is dropped: it completes
    /// (its descriptor and AQL charge are released), counts on its flow and in the
    /// retry drops, and the station's reorder buffer gives it up (what that releases
    /// is handed to the station when the exchange is over); the others go back to the
    /// head of their queue in order. Returns whether it dropped a frame.
    pub(super) fn collided_down(&mut self, station: u16, frames: Vec<HwFrame>, now: Nanos) -> bool {
        let s = usize::from(station);
        let ac = frames.first().map_or(Ac::Be, |f| f.pkt.ac());
        let (mut kept, mut statuses, mut released) = (Vec::with_capacity(frames.len()), Vec::new(), Vec::new());
        for mut f in frames {
            f.pkt.tries = f.pkt.tries.saturating_add(1);
            if f.pkt.tries < MAX_ATTEMPTS {
                kept.push(f);
                continue;
            }
            self.retry_drops += 1;
            if let FlowTag::Tcp(n) | FlowTag::Udp(n) = f.pkt.flow
                && let Some(d) = self.flow_drops.get_mut(usize::from(n))
            {
                *d += 1;
            }
            let (status, pkt) = f.complete();
            statuses.push(status);
            if let Some(l) = self.links.get_mut(s).and_then(Option::as_mut) {
                l.down.dropped += 1;
                if pkt.mpdu_seq != 0 {
                    l.down_rx[pkt.ac().index()].receive(pkt.mpdu_seq, None, &mut released);
                }
            }
        }
        let given_up = kept.is_empty();
        if !given_up {
            self.ap.requeue_ppdu(station, kept);
        }
        if !released.is_empty() {
            for p in released {
                self.packets += 1;
                self.delivered.push(Delivery::Down(s, p));
            }
            self.delivered.push(Delivery::Poll(s));
        }
        let dropped = !statuses.is_empty();
        if given_up && self.ap.host_aggregates() {
            // Every frame reached its limit: the PPDU is given up and, completed, leaves
            // the hardware queue's counts (a requeued one stays counted).
            self.schedule_host_completion(HostCompletion { ac, station, statuses, failed: Vec::new() }, now);
        } else if dropped {
            self.schedule_completions(statuses, now);
        }
        dropped
    }

    /// An A-MPDU from queue `q` of a station collided: each frame counts a failed
    /// attempt; one at [`MAX_ATTEMPTS`] is dropped (counted in the run's retry drops and
    /// the link's, not the flow's, as `block_ack_up` does, and given up by the
    /// AP's reorder buffer, whose release is handed on when the exchange is over), the
    /// others go back to the head of the queue. Returns whether it dropped a frame.
    pub(super) fn collided_up(&mut self, q: usize, frames: Vec<Packet>) -> bool {
        let s = self.queue_station.get(q).map_or(usize::MAX, |&s| usize::from(s));
        let ac = self.queue_ac.get(q).map_or(0, |a| a.index());
        let (mut released, mut dropped) = (Vec::new(), false);
        for mut p in frames.into_iter().rev() {
            p.tries = p.tries.saturating_add(1);
            if p.tries < MAX_ATTEMPTS {
                if let Some(u) = self.uplink.get_mut(q) {
                    u.held.push_front(p);
                }
                continue;
            }
            self.retry_drops += 1;
            dropped = true;
            if let Some(l) = self.links.get_mut(s).and_then(Option::as_mut) {
                l.up.dropped += 1;
                if p.mpdu_seq != 0 {
                    l.up_rx[ac].receive(p.mpdu_seq, None, &mut released);
                }
            }
        }
        for p in released {
            self.packets += 1;
            self.delivered.push(Delivery::Up(p));
        }
        dropped
    }

    /// Tells the AP the rate station `s`'s driver now reports, if it changed.
    pub(super) fn report_rate(&mut self, s: usize, now: Nanos) {
        let Some(l) = self.links.get_mut(s).and_then(Option::as_mut) else { return };
        let r = l.fixed_report.unwrap_or_else(|| l.down.reported_rate());
        let mbps = r.phy_rate_kbps() as f32 / 1000.0;
        if l.reported.last().is_none_or(|&(_, last)| last != mbps) {
            l.reported.push((now as f32 / 1e9, mbps));
            self.ap.set_reported_rate(s as u16, r);
        }
    }
}

impl LinkPair {
    /// What the link measured.
    pub(super) fn result(&self) -> LinkResult {
        let (d, u) = (&self.down, &self.up);
        LinkResult {
            spent_airtime_ms: self.spent_ns as f64 / 1e6,
            priced_airtime_ms: self.priced_us as f64 / 1e3,
            subframes_sent: d.attempts + u.attempts,
            subframes_acked: d.acked + u.acked,
            retry_drops: d.dropped + u.dropped,
            reorder_held_max: self.held_max as u64,
            rate_control_updates: d.rate_control_updates(),
            reported_rate_series: self.reported.clone(),
        }
    }
}
