//! A compact Linux-like bulk TCP, in segments of one MSS: CUBIC with HyStart, SACK-based
//! loss recovery (every out-of-order arrival is acknowledged at once with the segment it
//! brought, so the sender's scoreboard is exact; a segment three below the highest
//! SACKed one is lost, as FACK marks it), Linux's retransmission timeout (srtt plus a
//! deviation term of at least 200 ms), a delayed ACK every second segment or after 40 ms,
//! and a receive window cap.
//!
//! Why not smoltcp for these flows: smoltcp 0.14 has no SACK recovery and a 1 s minimum
//! RTO; when a full ring drops a burst of segments (the stock arm), it stalls for a
//! second and then regrows far more slowly than Linux, so the stock arm's queue never
//! builds as the seed measured. smoltcp stays available per flow (`stack = "smoltcp"`).

use crate::engine::Nanos;
use crate::engine::time::ms;
use std::collections::{BTreeSet, VecDeque};

/// Payload bytes per segment (1500-byte packets with TCP timestamps).
pub const MSS_BYTES: u32 = 1448;
/// IPv4 length of a data segment.
pub const DATA_IP_BYTES: u32 = 1500;
/// IPv4 length of a pure ACK (with timestamps).
pub const ACK_IP_BYTES: u32 = 52;
/// IPv4 length of an ACK with one SACK block.
pub const SACK_IP_BYTES: u32 = 64;

const RTO_MIN: Nanos = ms(200);
const RTO_MAX: Nanos = ms(120_000);
const DELAYED_ACK: Nanos = ms(40);
const BETA: f64 = 0.7;
const CUBIC_C: f64 = 0.4;
const HYSTART_LOW_WINDOW: f64 = 16.0;

/// A TCP segment of the simulated flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segment {
    /// Data segment number `seq`.
    Data {
        /// Segment number.
        seq: u64,
        /// The sender's clock when it was sent (TSval).
        tsval: Nanos,
    },
    /// Cumulative ACK of everything below `ack`, and the segment that arrived out of
    /// order, if that is what triggered it.
    Ack {
        /// Next segment expected.
        ack: u64,
        /// A segment received above a hole.
        sacked: Option<u64>,
        /// The timestamp echoed (TSecr): the TSval of the segment that last moved the
        /// receiver's left edge, as RFC 7323's `TS.Recent` rule keeps it.
        tsecr: Nanos,
    },
}

impl Segment {
    /// IPv4 length in bytes.
    pub fn ip_bytes(&self) -> u32 {
        match self {
            Segment::Data { .. } => DATA_IP_BYTES,
            Segment::Ack { sacked: None, .. } => ACK_IP_BYTES,
            Segment::Ack { sacked: Some(_), .. } => SACK_IP_BYTES,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Sent {
    at: Nanos,
    retransmitted: bool,
    sacked: bool,
    in_flight: bool,
    /// Marked lost by a retransmission timeout (not by SACK), and not yet resent.
    rto_lost: bool,
    /// Transmission number of its latest sending: which of two segments sent at the
    /// same instant went first (RACK's order).
    order: u64,
}

/// What a retransmission timeout changed, kept until the episode ends so that a timeout
/// found spurious can be undone (Linux's `undo_marker`, `retrans_stamp` and
/// `prior_ssthresh`, restored by `tcp_undo_cwnd_reduction`).
#[derive(Clone, Copy, Debug)]
struct LossEpisode {
    /// When the first retransmission of the episode was sent (`retrans_stamp`).
    retrans_stamp: Nanos,
    /// `snd_nxt` at the timeout (`high_seq`): the episode ends when it is acknowledged.
    high_seq: u64,
    cwnd: f64,
    ssthresh: f64,
    w_max: f64,
    last_w_max: f64,
    epoch_start: Option<Nanos>,
}

/// The TSQ budget of a sender on the AP (see `net::tcp::TsqGate` for the smoltcp one).
#[derive(Clone, Copy, Debug)]
pub struct Tsq {
    /// `sk_pacing_shift`.
    pub pacing_shift: u32,
    /// Bytes handed down and not yet freed.
    pub in_host_bytes: u64,
}

/// The sending end.
#[derive(Debug)]
pub struct Sender {
    snd_una: u64,
    snd_nxt: u64,
    board: VecDeque<Sent>,
    in_flight: u64,
    to_retransmit: BTreeSet<u64>,
    /// Segments SACKed above `snd_una`.
    sacked_out: u64,
    /// RACK (RFC 8985, Linux's `tcp_rack_*`): the send time and transmission number of
    /// the most recently sent segment that has been delivered, and the RTT it measured.
    rack_xmit_ts: Option<(Nanos, u64)>,
    rack_rtt: Nanos,
    /// Transmissions so far (numbers each sending for RACK's order).
    sends: u64,
    /// When a segment RACK is waiting on (sent before a delivered one, within the
    /// reordering window) is declared lost.
    reo_at: Option<Nanos>,
    /// Tail loss probe: when it fires, and whether one is out unanswered.
    tlp_at: Option<Nanos>,
    tlp_out: bool,
    /// Tail loss probes sent.
    pub probes: u64,
    cwnd: f64,
    ssthresh: f64,
    in_recovery: bool,
    recovery_point: u64,
    srtt: Option<f64>,
    /// Linux's `mdev_us` (four times the mean deviation), `mdev_max_us` (its maximum in
    /// the current RTT period, at least the minimum RTO), `rttvar_us` (a smoothed
    /// `mdev_max_us`) and `rtt_seq` (where the period ends).
    mdev: f64,
    mdev_max: f64,
    rttvar: f64,
    rtt_seq: u64,
    min_rtt: Option<Nanos>,
    backoff: u32,
    rto_at: Option<Nanos>,
    loss: Option<LossEpisode>,
    // CUBIC
    epoch_start: Option<Nanos>,
    w_max: f64,
    last_w_max: f64,
    k: f64,
    origin: f64,
    tcp_cwnd: f64,
    // HyStart (delay)
    round_end: u64,
    round_min: Option<Nanos>,
    round_samples: u32,
    rwnd_segments: u64,
    hystart: bool,
    /// No new data from this segment on (the application stopped writing).
    data_end: Option<u64>,
    /// TCP small queues, for a sender on the AP.
    pub tsq: Option<Tsq>,
    /// Segments retransmitted.
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Timeouts found spurious by their timestamps and undone.
    pub timeouts_undone: u64,
}

impl Sender {
    /// A sender with initial window 10, a receive window of `rwnd_bytes`, and HyStart
    /// (Linux's delay-based slow-start exit) on or off.
    pub fn new(rwnd_bytes: u64, hystart: bool, tsq: Option<Tsq>) -> Sender {
        Sender {
            snd_una: 0,
            snd_nxt: 0,
            board: VecDeque::new(),
            in_flight: 0,
            to_retransmit: BTreeSet::new(),
            sacked_out: 0,
            rack_xmit_ts: None,
            rack_rtt: 0,
            sends: 0,
            reo_at: None,
            tlp_at: None,
            tlp_out: false,
            probes: 0,
            cwnd: 10.0,
            ssthresh: f64::INFINITY,
            in_recovery: false,
            recovery_point: 0,
            srtt: None,
            mdev: 0.0,
            mdev_max: 0.0,
            rttvar: 0.0,
            rtt_seq: 0,
            min_rtt: None,
            backoff: 0,
            rto_at: None,
            loss: None,
            epoch_start: None,
            w_max: 0.0,
            last_w_max: 0.0,
            k: 0.0,
            origin: 0.0,
            tcp_cwnd: 0.0,
            round_end: 0,
            round_min: None,
            round_samples: 0,
            rwnd_segments: (rwnd_bytes / u64::from(MSS_BYTES)).max(2),
            hystart,
            data_end: None,
            tsq,
            retransmissions: 0,
            timeouts: 0,
            timeouts_undone: 0,
        }
    }

    /// The smoothed RTT (what `ss -ti` and `tcp_info` report), once measured.
    pub fn srtt_ns(&self) -> Option<f64> {
        self.srtt
    }

    /// Congestion window in segments.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// Segments sent and not yet acknowledged.
    pub fn outstanding(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// Linux's `__tcp_set_rto`: the smoothed RTT plus `rttvar`, which never falls below
    /// the 200 ms minimum (so the timeout is at least srtt + 200 ms, not max(srtt + 4 x
    /// rttvar, 200 ms) as RFC 6298 has it), doubled per backoff.
    fn rto(&self) -> Nanos {
        let base = match self.srtt {
            Some(s) => (s + self.rttvar) as Nanos,
            None => ms(1000),
        };
        (base << self.backoff.min(10)).min(RTO_MAX)
    }

    fn tsq_budget(&self) -> u64 {
        let Some(t) = self.tsq else { return u64::MAX };
        let srtt = self.srtt.unwrap_or(1e6).max(1.0);
        let ratio = if self.cwnd < self.ssthresh { 2.0 } else { 1.2 };
        let rate = ratio * self.cwnd * f64::from(MSS_BYTES) / (srtt * 1e-9);
        ((rate / f64::from(1u32 << t.pacing_shift)) as u64).clamp(2 * 2304, 1 << 20)
    }

    /// Frees `bytes` of TSQ budget (a frame completed or was dropped below TCP).
    pub fn tsq_release(&mut self, bytes: u64) {
        if let Some(t) = self.tsq.as_mut() {
            t.in_host_bytes = t.in_host_bytes.saturating_sub(bytes);
        }
    }

    fn sent(&mut self, seq: u64) -> Option<&mut Sent> {
        let i = seq.checked_sub(self.snd_una)?;
        self.board.get_mut(i as usize)
    }

    /// The application stops writing: no new data after what was sent; losses are
    /// still repaired.
    pub fn stop(&mut self) {
        self.data_end = Some(self.snd_nxt);
    }

    /// Puts the next new segment on the board, sent at `now` as transmission number
    /// `sends`; returns its sequence number.
    fn new_segment(&mut self, now: Nanos) -> u64 {
        let seq = self.snd_nxt;
        self.snd_nxt += 1;
        let order = self.sends;
        self.board.push_back(Sent {
            at: now,
            retransmitted: false,
            sacked: false,
            in_flight: true,
            rto_lost: false,
            order,
        });
        seq
    }

    /// Sends what the windows allow at `now`, appending segments to `out`.
    pub fn send(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        let budget = self.tsq_budget();
        loop {
            if (self.in_flight as f64) >= self.cwnd.floor().max(1.0) {
                break;
            }
            if self.tsq.is_some_and(|t| t.in_host_bytes >= budget) {
                break;
            }
            let order = self.sends;
            let seq = if let Some(&seq) = self.to_retransmit.iter().next() {
                self.to_retransmit.remove(&seq);
                let Some(s) = self.sent(seq) else { continue };
                if s.sacked {
                    continue;
                }
                s.retransmitted = true;
                s.in_flight = true;
                s.rto_lost = false;
                s.order = order;
                s.at = now;
                self.retransmissions += 1;
                seq
            } else {
                if self.snd_nxt - self.snd_una >= self.rwnd_segments || self.data_end.is_some_and(|e| self.snd_nxt >= e)
                {
                    break;
                }
                self.new_segment(now)
            };
            self.sends += 1;
            self.in_flight += 1;
            if let Some(t) = self.tsq.as_mut() {
                t.in_host_bytes += u64::from(DATA_IP_BYTES);
            }
            out.push(Segment::Data { seq, tsval: now });
            if self.rto_at.is_none() {
                self.rto_at = Some(now + self.rto());
            }
        }
    }

    /// Linux's `tcp_rtt_estimator`: srtt gains 1/8 of the error; the deviation gains
    /// 1/4 of it, or only 1/32 when the RTT fell (so a falling RTT does not inflate the
    /// timeout); once per RTT period `rttvar` decays a quarter of the way toward the
    /// period's largest deviation, and never below the minimum RTO.
    fn rtt_sample(&mut self, rtt: Nanos) {
        let m = rtt as f64;
        let rto_min = RTO_MIN as f64;
        match self.srtt {
            None => {
                self.srtt = Some(m);
                self.mdev = 2.0 * m;
                self.rttvar = self.mdev.max(rto_min);
                self.mdev_max = self.rttvar;
                self.rtt_seq = self.snd_nxt;
            }
            Some(s) => {
                let err = m - s;
                self.srtt = Some(s + err / 8.0);
                let mut dev = err.abs() - self.mdev / 4.0;
                if err < 0.0 && dev > 0.0 {
                    dev /= 8.0;
                }
                self.mdev += dev;
                if self.mdev > self.mdev_max {
                    self.mdev_max = self.mdev;
                    self.rttvar = self.rttvar.max(self.mdev_max);
                }
                if self.snd_una > self.rtt_seq {
                    if self.mdev_max < self.rttvar {
                        self.rttvar -= (self.rttvar - self.mdev_max) / 4.0;
                    }
                    self.rtt_seq = self.snd_nxt;
                    self.mdev_max = rto_min;
                }
            }
        }
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        // HyStart's delay test (Linux `hystart_update`): the smallest of the first eight
        // RTT samples of a round against the connection's minimum plus an eighth of it,
        // clamped to 4..16 ms.
        if self.hystart && self.cwnd < self.ssthresh && self.cwnd >= HYSTART_LOW_WINDOW && self.round_samples < 8 {
            self.round_min = Some(self.round_min.map_or(rtt, |m| m.min(rtt)));
            self.round_samples += 1;
            if let (Some(cur), Some(base)) = (self.round_min, self.min_rtt) {
                let thresh = (base / 8).clamp(ms(4), ms(16));
                if self.round_samples >= 8 && cur >= base + thresh {
                    self.ssthresh = self.cwnd;
                }
            }
        }
    }

    fn enter_recovery(&mut self) {
        self.in_recovery = true;
        self.recovery_point = self.snd_nxt;
        self.cubic_loss();
        self.cwnd = self.ssthresh;
    }

    fn cubic_loss(&mut self) {
        self.epoch_start = None;
        self.w_max = if self.cwnd < self.last_w_max { self.cwnd * (1.0 + BETA) / 2.0 } else { self.cwnd };
        self.last_w_max = self.cwnd;
        self.ssthresh = (self.cwnd * BETA).max(2.0);
    }

    fn cubic_ack(&mut self, acked: f64, now: Nanos) {
        let epoch = *self.epoch_start.get_or_insert(now);
        if epoch == now {
            if self.cwnd < self.w_max {
                self.k = ((self.w_max - self.cwnd) / CUBIC_C).cbrt();
                self.origin = self.w_max;
            } else {
                self.k = 0.0;
                self.origin = self.cwnd;
            }
            self.tcp_cwnd = self.cwnd;
        }
        let t = (now - epoch) as f64 * 1e-9 + self.min_rtt.unwrap_or(0) as f64 * 1e-9;
        let target = self.origin + CUBIC_C * (t - self.k).powi(3);
        let mut cnt = if target > self.cwnd { self.cwnd / (target - self.cwnd) } else { 100.0 * self.cwnd };
        self.tcp_cwnd += acked * 3.0 * (1.0 - BETA) / (1.0 + BETA) / self.cwnd;
        if self.tcp_cwnd > self.cwnd {
            cnt = cnt.min(self.cwnd / (self.tcp_cwnd - self.cwnd));
        }
        self.cwnd += acked / cnt.max(2.0);
    }

    /// An ACK arrived at `now`: updates the scoreboard, the windows and the timer, puts
    /// RTT samples of newly acknowledged segments in `samples`, then sends.
    pub fn on_ack(
        &mut self,
        ack: u64,
        sacked: Option<u64>,
        tsecr: Nanos,
        now: Nanos,
        out: &mut Vec<Segment>,
        samples: &mut Vec<Nanos>,
    ) {
        let ack = ack.min(self.snd_nxt);
        if ack > self.snd_una {
            self.check_spurious_timeout(tsecr);
        }
        let mut acked = 0u64;
        let mut sample = None;
        while self.snd_una < ack {
            let Some(s) = self.board.pop_front() else { break };
            if s.in_flight && !s.sacked {
                self.in_flight -= 1;
            }
            if s.sacked {
                self.sacked_out -= 1;
            } else {
                self.rack_delivered(s.at, s.order, s.retransmitted, Some(tsecr), now);
                if !s.retransmitted {
                    sample = Some(now.saturating_sub(s.at));
                    // One sample per acknowledged segment, as the report asks.
                    samples.push(now.saturating_sub(s.at));
                }
            }
            self.to_retransmit.remove(&self.snd_una);
            self.snd_una += 1;
            acked += 1;
        }
        if let Some(rtt) = sample {
            // The estimator takes the newest sample of this ACK.
            self.rtt_sample(rtt);
        }
        if acked > 0 {
            self.backoff = 0;
            self.rto_at = (self.snd_nxt > self.snd_una).then(|| now + self.rto());
        }
        if let Some(seq) = sacked
            && let Some(s) = self.sent(seq)
            && !s.sacked
        {
            s.sacked = true;
            let (was_in_flight, at, order, retransmitted) = (s.in_flight, s.at, s.order, s.retransmitted);
            if was_in_flight {
                self.in_flight -= 1;
            }
            self.sacked_out += 1;
            self.to_retransmit.remove(&seq);
            self.rack_delivered(at, order, retransmitted, None, now);
        }
        if acked > 0 || sacked.is_some() {
            self.tlp_out = false;
        }
        self.detect_losses(now);
        if self.in_recovery && self.snd_una >= self.recovery_point {
            self.in_recovery = false;
        }
        if self.loss.is_some_and(|l| self.snd_una >= l.high_seq) {
            self.loss = None;
        }
        if acked > 0 && !self.in_recovery {
            if self.cwnd < self.ssthresh {
                self.cwnd += acked as f64;
                if self.snd_una > self.round_end {
                    self.round_end = self.snd_nxt;
                    self.round_min = None;
                    self.round_samples = 0;
                }
            } else {
                self.cubic_ack(acked as f64, now);
            }
        }
        self.send(now, out);
        self.arm_loss_probe(now);
    }

    /// RACK's step 2: a delivered segment sent at `at` moves the reference time forward,
    /// unless it was a retransmission and the ACK was for its original: it came sooner
    /// than any round trip could take, or (RFC 8985, section 6.2) a cumulative ACK of
    /// it echoes a timestamp older than the retransmission. `tsecr` is given only for a
    /// cumulative ACK: a SACK echoes the segment at the left edge (RFC 7323's
    /// `TS.Recent`), which says nothing about the segment SACKed.
    fn rack_delivered(&mut self, at: Nanos, order: u64, retransmitted: bool, tsecr: Option<Nanos>, now: Nanos) {
        let rtt = now.saturating_sub(at);
        if retransmitted && (tsecr.is_some_and(|t| t < at) || self.min_rtt.is_some_and(|m| rtt < m)) {
            return;
        }
        if self.rack_xmit_ts.is_none_or(|(_, o)| order > o) {
            self.rack_xmit_ts = Some((at, order));
            self.rack_rtt = rtt;
        }
    }

    /// RACK's loss detection (Linux's `tcp_rack_detect_loss`, which replaced FACK and
    /// the duplicate-ACK count): a segment not delivered and sent before the most
    /// recently sent delivered one is lost once it has waited the RTT that one measured
    /// plus a reordering window — a quarter of the minimum RTT, or none in recovery or
    /// with three segments SACKed (`tcp_rack_reo_wnd`; the model never reorders).
    /// Segments within the window arm the reordering timer. A loss starts recovery.
    fn detect_losses(&mut self, now: Nanos) {
        self.reo_at = None;
        let Some((_, rack_order)) = self.rack_xmit_ts else { return };
        let reo_wnd = if self.in_recovery || self.sacked_out >= 3 {
            0
        } else {
            (self.min_rtt.unwrap_or(0) / 4).min(self.srtt.map_or(Nanos::MAX, |s| s as Nanos))
        };
        let wait = self.rack_rtt + reo_wnd;
        let mut newly_lost = false;
        for i in 0..self.board.len() {
            let seq = self.snd_una + i as u64;
            let s = &mut self.board[i];
            if s.order >= rack_order {
                // Originals go out in sequence order, so every later original was sent
                // later still; only retransmissions may lie beyond this one.
                if !s.retransmitted {
                    break;
                }
                continue;
            }
            if s.sacked || !s.in_flight {
                continue;
            }
            if now >= s.at + wait {
                s.in_flight = false;
                self.in_flight -= 1;
                self.to_retransmit.insert(seq);
                newly_lost = true;
            } else {
                let at = s.at + wait;
                self.reo_at = Some(self.reo_at.map_or(at, |r| r.min(at)));
            }
        }
        if newly_lost && !self.in_recovery && self.loss.is_none() {
            self.enter_recovery();
        }
    }

    /// Schedules the tail loss probe (RFC 8985 section 7, Linux's
    /// `tcp_schedule_loss_probe`): two smoothed RTTs after the last send or ACK while
    /// data is out and no loss is being repaired — plus the peer's delayed-ACK allowance
    /// (`TCP_DELACK_MAX`, 200 ms) when a single segment is out — and never after the
    /// retransmission timer.
    fn arm_loss_probe(&mut self, now: Nanos) {
        self.tlp_at = None;
        let Some(srtt) = self.srtt else { return };
        if self.in_recovery || self.loss.is_some() || self.tlp_out || self.in_flight == 0 {
            return;
        }
        let mut pto = 2.0 * srtt;
        if self.in_flight == 1 {
            pto = pto.max(1.5 * srtt + ms(200) as f64);
        }
        let at = now + pto as Nanos;
        if self.rto_at.is_none_or(|r| at < r) {
            self.tlp_at = Some(at);
        }
    }

    /// The probe fires: one new segment if the windows of the receiver and the
    /// application allow it (the congestion window does not count), else the last
    /// segment again, so that its ACK or SACK lets RACK find what the tail lost.
    fn send_loss_probe(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        self.tlp_at = None;
        let new_data =
            self.snd_nxt - self.snd_una < self.rwnd_segments && self.data_end.is_none_or(|e| self.snd_nxt < e);
        let seq = if new_data {
            let seq = self.new_segment(now);
            self.in_flight += 1;
            seq
        } else {
            let Some(i) = self.board.iter().rposition(|s| !s.sacked) else { return };
            let order = self.sends;
            let s = &mut self.board[i];
            s.at = now;
            s.order = order;
            s.retransmitted = true;
            if !s.in_flight {
                s.in_flight = true;
                self.in_flight += 1;
            }
            let seq = self.snd_una + i as u64;
            self.to_retransmit.remove(&seq);
            self.retransmissions += 1;
            seq
        };
        if let Some(t) = self.tsq.as_mut() {
            t.in_host_bytes += u64::from(DATA_IP_BYTES);
        }
        self.sends += 1;
        self.probes += 1;
        self.tlp_out = true;
        self.rto_at = Some(now + self.rto());
        out.push(Segment::Data { seq, tsval: now });
    }

    /// An ACK that advances `snd_una` during a timeout's episode and echoes a timestamp
    /// sent before the episode's first retransmission acknowledges an original
    /// transmission: the timeout was spurious (the segments were delayed, not lost).
    /// Undo it as `tcp_try_undo_loss` does: restore the window and slow-start threshold
    /// from before the timeout, and unmark the segments not yet retransmitted, which are
    /// in flight after all (`tcp_undo_cwnd_reduction` with `unmark_loss`).
    fn check_spurious_timeout(&mut self, tsecr: Nanos) {
        let Some(l) = self.loss else { return };
        if tsecr >= l.retrans_stamp {
            return;
        }
        self.loss = None;
        self.timeouts_undone += 1;
        self.cwnd = self.cwnd.max(l.cwnd);
        self.ssthresh = self.ssthresh.max(l.ssthresh);
        self.w_max = l.w_max;
        self.last_w_max = l.last_w_max;
        self.epoch_start = l.epoch_start;
        self.backoff = 0;
        // Segments SACK had marked lost before the timeout stay marked.
        let mut unmarked = 0;
        let (una, board) = (self.snd_una, &mut self.board);
        self.to_retransmit.retain(|&seq| {
            let Some(s) = seq.checked_sub(una).and_then(|i| board.get_mut(i as usize)) else { return false };
            if s.rto_lost {
                s.rto_lost = false;
                s.in_flight = true;
                unmarked += 1;
                return false;
            }
            !s.sacked
        });
        self.in_flight += unmarked;
    }

    /// When the sender's next timer fires (retransmission, reordering or loss probe),
    /// if one is armed.
    pub fn timer_at(&self) -> Option<Nanos> {
        [self.rto_at, self.reo_at, self.tlp_at].into_iter().flatten().min()
    }

    /// The retransmission timer fired at `now` (if it was due): everything outstanding
    /// and not SACKed is lost; the window restarts at one segment.
    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Segment>) {
        if self.reo_at.is_some_and(|t| now >= t) {
            self.detect_losses(now);
            self.send(now, out);
        }
        if self.tlp_at.is_some_and(|t| now >= t) {
            self.send_loss_probe(now, out);
        }
        let Some(at) = self.rto_at else { return };
        if now < at {
            return;
        }
        if self.snd_una == self.snd_nxt {
            self.rto_at = None;
            return;
        }
        self.timeouts += 1;
        // A backed-off timeout belongs to the same episode: its first retransmission
        // and the window before it are what an undo goes back to.
        if self.loss.is_none() {
            self.loss = Some(LossEpisode {
                retrans_stamp: now,
                high_seq: self.snd_nxt,
                cwnd: self.cwnd,
                ssthresh: self.ssthresh,
                w_max: self.w_max,
                last_w_max: self.last_w_max,
                epoch_start: self.epoch_start,
            });
        }
        self.cubic_loss();
        self.cwnd = 1.0;
        self.in_recovery = false;
        for (i, s) in self.board.iter_mut().enumerate() {
            if !s.sacked && s.in_flight {
                s.in_flight = false;
                s.rto_lost = true;
                self.to_retransmit.insert(self.snd_una + i as u64);
            } else if !s.sacked {
                self.to_retransmit.insert(self.snd_una + i as u64);
            }
        }
        self.in_flight = 0;
        self.reo_at = None;
        self.tlp_at = None;
        self.tlp_out = false;
        self.backoff += 1;
        self.rto_at = Some(now + self.rto());
        self.send(now, out);
    }
}

/// The receiving end.
#[derive(Debug, Default)]
pub struct Receiver {
    rcv_nxt: u64,
    ooo: BTreeSet<u64>,
    unacked: u32,
    delack_at: Option<Nanos>,
    /// `TS.Recent` and `Last.ACK.sent` of RFC 7323.
    ts_recent: Nanos,
    last_ack_sent: u64,
    /// Payload bytes delivered in order.
    pub delivered_bytes: u64,
}

impl Receiver {
    /// A data segment arrived; returns the ACK to send now, if any.
    pub fn on_data(&mut self, seq: u64, tsval: Nanos, now: Nanos) -> Option<Segment> {
        // RFC 7323: a segment at or left of the last ACK sent updates the timestamp to
        // echo, so a delayed ACK echoes the first of its segments and an ACK of an
        // out-of-order segment echoes the one that last moved the left edge.
        if seq <= self.last_ack_sent {
            self.ts_recent = tsval;
        }
        if seq == self.rcv_nxt {
            let had_holes = !self.ooo.is_empty();
            self.rcv_nxt += 1;
            while self.ooo.remove(&self.rcv_nxt) {
                self.rcv_nxt += 1;
            }
            let advanced = self.rcv_nxt - seq;
            self.delivered_bytes += advanced * u64::from(MSS_BYTES);
            self.unacked += 1;
            if had_holes || self.unacked >= 2 {
                return Some(self.ack(None));
            }
            if self.delack_at.is_none() {
                self.delack_at = Some(now + DELAYED_ACK);
            }
            None
        } else if seq > self.rcv_nxt {
            self.ooo.insert(seq);
            Some(self.ack(Some(seq)))
        } else {
            Some(self.ack(None))
        }
    }

    fn ack(&mut self, sacked: Option<u64>) -> Segment {
        self.unacked = 0;
        self.delack_at = None;
        self.last_ack_sent = self.rcv_nxt;
        Segment::Ack { ack: self.rcv_nxt, sacked, tsecr: self.ts_recent }
    }

    /// When the delayed-ACK timer fires, if armed.
    pub fn timer_at(&self) -> Option<Nanos> {
        self.delack_at
    }

    /// The delayed-ACK timer fired at `now`.
    pub fn on_timer(&mut self, now: Nanos) -> Option<Segment> {
        match self.delack_at {
            Some(at) if now >= at => Some(self.ack(None)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Delivers `segs` from sender to receiver with a fixed one-way delay and no loss
    /// except `drop`, and returns the sender after `rounds` round trips.
    fn run(drop: &[u64], rounds: u32) -> (Sender, Receiver) {
        let mut s = Sender::new(64 << 20, false, None);
        let mut r = Receiver::default();
        let mut now = 0;
        let mut out = Vec::new();
        s.send(now, &mut out);
        let mut samples = Vec::new();
        for _ in 0..rounds {
            now += ms(10);
            let mut acks = Vec::new();
            for seg in out.drain(..) {
                if let Segment::Data { seq, tsval } = seg {
                    if drop.contains(&seq) && s.retransmissions == 0 && s.timeouts == 0 {
                        continue;
                    }
                    acks.extend(r.on_data(seq, tsval, now));
                }
            }
            if let Some(a) = r.on_timer(now + DELAYED_ACK) {
                acks.push(a);
            }
            now += ms(10);
            for a in acks {
                if let Segment::Ack { ack, sacked, tsecr } = a {
                    s.on_ack(ack, sacked, tsecr, now, &mut out, &mut samples);
                }
            }
            s.on_timer(now, &mut out);
        }
        (s, r)
    }

    #[test]
    fn slow_start_doubles_the_window_each_round_trip() {
        let (s, _) = run(&[], 3);
        assert!(s.cwnd() >= 70.0 && s.cwnd() <= 90.0, "{}", s.cwnd());
    }

    #[test]
    fn a_burst_of_losses_is_repaired_by_sack_without_a_timeout() {
        let (s, r) = run(&[40, 41, 42, 50, 60], 12);
        assert_eq!(s.timeouts, 0);
        assert_eq!(s.retransmissions, 5);
        assert!(r.delivered_bytes > 100 * u64::from(MSS_BYTES));
        assert!(s.cwnd() < 300.0, "the window was reduced: {}", s.cwnd());
    }

    /// Grows a flow to a few hundred segments in flight, then stalls the path for
    /// `stall` (everything in it delayed, nothing dropped unless `lose_all`), and
    /// returns the sender once the path has drained.
    fn stall(stall: Nanos, lose_all: bool) -> Sender {
        let mut s = Sender::new(64 << 20, false, None);
        let mut r = Receiver::default();
        let (mut now, mut out, mut samples) = (0, Vec::new(), Vec::new());
        s.send(now, &mut out);
        let mut deliver = |s: &mut Sender, r: &mut Receiver, out: &mut Vec<Segment>, now: Nanos, drop: bool| {
            let mut acks = Vec::new();
            for seg in std::mem::take(out) {
                if let Segment::Data { seq, tsval } = seg
                    && !drop
                {
                    acks.extend(r.on_data(seq, tsval, now));
                }
            }
            acks.extend(r.on_timer(now + DELAYED_ACK));
            for a in acks {
                if let Segment::Ack { ack, sacked, tsecr } = a {
                    s.on_ack(ack, sacked, tsecr, now + ms(10), out, &mut samples);
                }
            }
        };
        for _ in 0..5 {
            now += ms(20);
            deliver(&mut s, &mut r, &mut out, now, false);
        }
        assert_eq!(s.timeouts, 0);
        // The path stalls: what is in flight now sits in a queue past the RTO.
        let mut delayed = std::mem::take(&mut out);
        let before = s.cwnd();
        // The timers that fall in the stall fire (the tail loss probe, then the
        // timeout); what they send is delayed too.
        let end = now + stall;
        while let Some(t) = s.timer_at().filter(|&t| t <= end) {
            s.on_timer(t, &mut out);
            if s.timeouts > 0 {
                break;
            }
            delayed.append(&mut out);
        }
        now = end;
        assert_eq!(s.timeouts, 1, "the stall outlasted the RTO");
        // The delayed originals arrive first (unless they were lost), then the
        // retransmission.
        let mut originals = delayed;
        deliver(&mut s, &mut r, &mut originals, now, lose_all);
        out.append(&mut originals);
        deliver(&mut s, &mut r, &mut out, now, false);
        for _ in 0..10 {
            now += ms(20);
            s.on_timer(now, &mut out);
            deliver(&mut s, &mut r, &mut out, now, false);
        }
        assert!(before > 20.0, "the flow had grown: {before}");
        s
    }

    #[test]
    fn a_timeout_whose_segments_were_only_delayed_is_undone_by_their_timestamps() {
        let s = stall(ms(400), false);
        assert_eq!(s.timeouts_undone, 1);
        // Only the head went out again before the first original's ACK came back.
        assert!(s.retransmissions <= 1, "{} retransmissions", s.retransmissions);
        assert!(s.cwnd() > 20.0, "the window was restored: {}", s.cwnd());
    }

    #[test]
    fn a_timeout_whose_segments_were_lost_is_not_undone() {
        let s = stall(ms(400), true);
        assert_eq!(s.timeouts_undone, 0);
        assert!(s.retransmissions > 20, "{} retransmissions", s.retransmissions);
    }

    #[test]
    fn a_lost_tail_is_repaired_by_the_loss_probe_and_rack_without_a_timeout() {
        // A transfer of 40 segments whose last two are dropped: no later segment is
        // sent to reveal the holes, so only the loss probe (the last segment again)
        // draws a SACK, from which RACK finds the other one lost.
        let mut s = Sender::new(64 << 20, false, None);
        let mut r = Receiver::default();
        let (mut now, mut out, mut samples) = (0, Vec::new(), Vec::new());
        let mut dropped = Vec::new();
        s.data_end = Some(40);
        s.send(now, &mut out);
        for _ in 0..200 {
            // Each step: the data in flight arrives 10 ms on, its ACKs 10 ms later.
            now += ms(1);
            let mut acks = Vec::new();
            for seg in std::mem::take(&mut out) {
                if let Segment::Data { seq, tsval } = seg {
                    if (38..40).contains(&seq) && !dropped.contains(&seq) {
                        dropped.push(seq);
                        continue;
                    }
                    acks.push((seq, tsval));
                }
            }
            let mut replies = Vec::new();
            for (seq, tsval) in acks {
                replies.extend(r.on_data(seq, tsval, now + ms(10)));
            }
            replies.extend(r.on_timer(now + ms(10) + DELAYED_ACK));
            for a in replies {
                if let Segment::Ack { ack, sacked, tsecr } = a {
                    s.on_ack(ack, sacked, tsecr, now + ms(20), &mut out, &mut samples);
                }
            }
            now += ms(20);
            if let Some(t) = s.timer_at().filter(|&t| t <= now) {
                s.on_timer(t.max(now), &mut out);
            }
        }
        assert_eq!(dropped, [38, 39]);
        assert_eq!(r.rcv_nxt, 40, "everything arrived");
        assert_eq!(s.timeouts, 0);
        assert_eq!(s.probes, 1);
        assert_eq!(s.retransmissions, 2, "the probe (39 again) and 38, found lost by RACK");
    }
}
