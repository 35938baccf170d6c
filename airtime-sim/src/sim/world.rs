//! One run: every entity of the scenario and the event dispatch between them.
//!
//! Topology: the wired host reaches the AP over a wired link; the AP reaches each station
//! over the shared medium. Hosts are smoltcp stacks (`net::tcp`); the AP is a queueing
//! design over the hardware model (`ap`); the medium decides who transmits (`wifi`).
//! Contender 0 on the medium is the AP's best effort, contender `1 + s` is station `s`;
//! the AP's other access categories (on designs whose downlink has them) follow the
//! stations' queues.

use crate::ap::Ap;
use crate::ap::completion_irq::{CompletionIrq, ModeratedRing};
use crate::ap::hardware::{HwFrame, MuPpdu, MuUser, TxStatus};
use crate::ap::mu_charging::{MuReport, MuReportUser};
use crate::ap::sim_hal::AckedMsdus;
use crate::engine::time::{ms, us};
use crate::engine::{EventQueue, Nanos, Rng};
use crate::metrics::airtime::AirtimeLedger;
use crate::metrics::series::{FlowSample, SeriesRecorder};
use crate::metrics::stats::{mean, quantile, quantile_above_zeros, thin};
use crate::metrics::{FlowResult, RunResult, StationResult};
use crate::net::link::WiredLink;
use crate::net::linux_tcp::{Receiver, Segment, Sender, Tsq};
use crate::net::packet::FlowTag;
use crate::net::tcp::{HostOutput, TcpHost, TsqGate};
use crate::net::udp::CbrFlow;
use crate::net::{Node, Packet, Payload, ping};
use crate::scenario::keys::ATH11K_DESIGNS;
use crate::scenario::{Direction, Endpoint, Protocol, Resolved, Stack};
use crate::wifi::ampdu::{self, AmpduLimits};
use crate::wifi::edca::EdcaParams;
use crate::wifi::link::{Choice, Link};
use crate::wifi::medium::{Medium, Outcome};
use crate::wifi::reorder::Reorder;
use crate::wifi::station_txq::StationTxq;
use crate::wifi::{PhyTiming, ofdma, phy};
use airtime_sched::Ac;
use smoltcp::wire::Ipv4Packet;

mod lossy;

/// Socket buffer of a bulk flow's data direction: larger than any queue it can fill.
const FLOW_BUFFER_BYTES: usize = 8 << 20;
/// Host indices: the wired host, the AP's own stack, then the stations.
const WIRED: usize = 0;
const AP_HOST: usize = 1;
/// AQL pending is sampled this often.
const SAMPLE_NS: Nanos = ms(1);

enum Event {
    Poll(usize),
    WiredToAp(Packet),
    WiredToHost(Packet),
    PingTick(u16),
    Access(u64),
    ExchangeEnd,
    TxStatus(Vec<TxStatus>),
    /// A host-aggregating driver's PPDU completion.
    HostPpduDone(HostCompletion),
    /// The tx completion ring's moderated interrupt number `n`.
    TxIrq(u64),
    /// An SU PPDU's stats: station, access category, airtime in us, the MSDUs it had
    /// acknowledged.
    PpduStats(u16, Ac, u32, AckedMsdus),
    MuPpduStats(MuReport),
    Sample,
    SeriesSample,
    FlowStart(usize),
    FlowStop(usize),
    UdpSend(usize),
    TcpTimer(usize),
}

/// A PPDU's completion as a host-aggregating driver handles it (ath9k's
/// `ath_tx_process_buffer`): the frames that completed (acknowledged, or dropped at the
/// retry limit) and those its BlockAck missed, which the driver resends
/// (`ath_tx_complete_aggr`). Every PPDU the driver chained completes once, whatever its
/// BlockAck said, so its hardware queue's counts stay exact.
struct HostCompletion {
    ac: Ac,
    station: u16,
    statuses: Vec<TxStatus>,
    failed: Vec<HwFrame>,
}

/// A flow run by the Linux-like TCP.
struct LinuxFlow {
    sender: Sender,
    receiver: Receiver,
    sender_node: Node,
    receiver_node: Node,
    timer_at: Option<Nanos>,
    delivered: u64,
}

enum Tx {
    Ap { station: u16, ac: Ac, frames: Vec<HwFrame>, airtime_ns: Nanos },
    ApMu { ppdu: MuPpdu, airtime_ns: Nanos },
    Sta { station: u16, queue: usize, frames: Vec<Packet>, airtime_ns: Nanos },
}

/// What an exchange delivered, handed to its receivers once the exchange is over
/// (`World::exchange_end`).
enum Delivery {
    /// A packet the AP's exchange delivered to station `s`.
    Down(usize, Packet),
    /// A packet a station's exchange delivered to the AP.
    Up(Packet),
    /// Station `s`'s host stack runs on what it was given (a smoltcp station's).
    Poll(usize),
}

/// The world of one run.
pub struct World {
    q: EventQueue<Event>,
    rng: Rng,
    end_ns: Nanos,
    warmup_ns: Nanos,
    down: WiredLink,
    up: WiredLink,
    hosts: Vec<TcpHost>,
    poll_at: Vec<Option<Nanos>>,
    ap: Ap,
    medium: Medium,
    timings: Vec<PhyTiming>,
    /// Stations' transmit queues, one per EDCA function: queue `q` is medium contender
    /// `1 + q`; queue `s` is station `s`'s best effort, and the other access categories a
    /// station's flows use follow (`queue_station`, `queue_ac`).
    uplink: Vec<StationTxq>,
    queue_station: Vec<u16>,
    queue_ac: Vec<Ac>,
    /// Each station's queue per access category (by `Ac::index`), where it has one.
    sta_queue: Vec<[Option<usize>; 4]>,
    /// Each flow's access category (its DSCP's).
    flow_ac: Vec<Ac>,
    /// Each flow's DSCP, stamped on its packets both ways.
    flow_dscp: Vec<u8>,
    /// The AP's EDCA functions: (access category, medium contender), BE (contender 0)
    /// first.
    ap_contenders: Vec<(Ac, usize)>,
    exchange: Vec<Tx>,
    collided: bool,
    flow_cpu: Vec<u8>,
    ping_cpu: Vec<u8>,
    ping_interval_ns: Option<Nanos>,
    ping_seq: u64,
    // measurements
    flow_bytes: Vec<u64>,
    flow_rtts: Vec<Vec<(f32, f32)>>,
    flow_srtt: Vec<(f64, f64, u64)>,
    flow_drops: Vec<u64>,
    /// Frames dropped at the retry limit ([`crate::wifi::link::MAX_ATTEMPTS`]), lost
    /// subframes and collided ones alike, both directions.
    retry_drops: u64,
    ping_rtts: Vec<Vec<(f32, f32)>>,
    pings_sent: Vec<u64>,
    aql_samples: Vec<Vec<f64>>,
    ampdu_sizes: Vec<Vec<f64>>,
    sta_airtime_ns: Vec<Nanos>,
    air: AirtimeLedger,
    /// How long the exchange on the air lasts (the longest transmission in it).
    exchange_ns: Nanos,
    packets: u64,
    trace: bool,
    linux: Vec<Option<LinuxFlow>>,
    udp: Vec<Option<CbrFlow>>,
    /// Each flow's measured time: from the later of warm-up and its start to the
    /// earlier of the end and its stop.
    flow_window_ns: Vec<Nanos>,
    segs: Vec<Segment>,
    samples: Vec<Nanos>,
    /// The tx completion ring, when its interrupt is moderated (ath11k designs).
    completion_ring: Option<ModeratedRing>,
    /// Whether the firmware sends downlink MU PPDUs (ath11k designs only).
    ofdma: bool,
    /// Stations' queues that changed without telling the medium (they sent in the
    /// current exchange, or won an access with nothing to send): only they can change
    /// readiness at its end, so the end visits them, not every station.
    uplink_touched: Vec<usize>,
    /// What the exchange on the air delivered, held until it has ended.
    delivered: Vec<Delivery>,
    /// The flows whose sender is on the AP under TCP small queues: a completion
    /// wakes them (and only them).
    tsq_flows: Vec<usize>,
    /// AQL pending samples that were zero, per station (kept as a count: most of an
    /// idle station's samples are).
    aql_zero_samples: Vec<usize>,
    /// The time series (`sample_interval_ms`).
    series: SeriesRecorder,
    /// Lossy or changing links (`wifi::link`), by station: the AP's transmitter towards
    /// it, and its own; `None` for an ideal link, whose path is untouched.
    links: Vec<Option<LinkPair>>,
    /// Draws of the channel (losses, rate sampling), apart from the medium's so an ideal
    /// scenario replays exactly as before.
    chan_rng: Rng,
}

/// A station's two transmitters over one channel, each with its own rate control, and
/// what the link measured.
struct LinkPair {
    down: Link,
    up: Link,
    down_choice: Option<Choice>,
    up_choice: Option<Choice>,
    /// The AP's exchanges to it after the warm-up, ns (every attempt that reached a
    /// BlockAck; collided exchanges are not counted here).
    spent_ns: Nanos,
    /// The estimator's price of the frames those exchanges carried, each once, at the
    /// rate reported when it was first sent, us.
    priced_us: u64,
    /// The reported rate's PHY rate over time, (s, Mbit/s), at each change.
    reported: Vec<(f32, f32)>,
    /// The rate the driver reports when the link's rate does not change (the station's
    /// `reported_rate`); `None` when it reports what its rate control picks.
    fixed_report: Option<airtime_est::Rate>,
    /// The station's reorder buffers (downlink) and the AP's for it (uplink), one per
    /// access category (a TID each), by `Ac::index`.
    down_rx: [Reorder<Packet>; 4],
    up_rx: [Reorder<Packet>; 4],
    /// Most MPDUs one of those buffers held at once.
    held_max: usize,
}

fn node_of_host(i: usize) -> Node {
    match i {
        WIRED => Node::Wired,
        AP_HOST => Node::Ap,
        n => Node::Station((n - 2) as u16),
    }
}

fn dst_of(ip: &[u8]) -> Node {
    Ipv4Packet::new_checked(ip).ok().and_then(|p| Node::from_addr(p.dst_addr())).unwrap_or(Node::Wired)
}

impl World {
    /// Builds the world of run `run` of scenario `sc` with `seed`.
    pub fn new(sc: &Resolved, seed: u64) -> Result<World, String> {
        let spec = &sc.spec;
        let n = spec.stations.len();
        let weights: Vec<u16> = spec.stations.iter().map(|s| s.weight).collect();
        let ap = Ap::new(spec.ap.clone(), &sc.rates, &sc.reported_rates, &weights).map_err(|e| e.0)?;
        let rings = ap.hw().config.rings.max(1);
        let mut hosts = vec![
            TcpHost::new(Node::Wired, seed ^ 0x11, None),
            TcpHost::new(Node::Ap, seed ^ 0x22, Some(TsqGate::new(7))),
        ];
        for s in 0..n {
            hosts.push(TcpHost::new(Node::Station(s as u16), seed ^ (0x33 + s as u64), None));
        }
        let end_ns = (spec.duration_s * 1e9) as Nanos;
        let warmup_ns = (spec.warmup_s * 1e9) as Nanos;
        let mut flow_cpu = Vec::new();
        let mut linux = Vec::new();
        let mut udp = Vec::new();
        let mut flow_window_ns = Vec::new();
        let mut flow_times = Vec::new();
        for (f, fs) in spec.flows.iter().enumerate() {
            let start_ns = (fs.start_s * 1e9) as Nanos;
            let stop_ns = fs.stop_s.map_or(end_ns, |t| ((t * 1e9) as Nanos).min(end_ns));
            flow_window_ns.push(stop_ns.saturating_sub(start_ns.max(warmup_ns)));
            flow_times.push((start_ns, fs.stop_s.map(|t| (t * 1e9) as Nanos)));
            let s = sc.flow_station[f];
            let flow = f as u16;
            let sta = Node::Station(s);
            let wired_side = match fs.endpoint {
                Endpoint::Wired => WIRED,
                Endpoint::Ap => AP_HOST,
            };
            flow_cpu.push(fs.cpu.unwrap_or((f as u8) % rings));
            if fs.protocol == Protocol::Udp {
                let (src, dst) = match fs.direction {
                    Direction::Download => (node_of_host(wired_side), sta),
                    Direction::Upload => (sta, node_of_host(wired_side)),
                };
                let rate_bps = fs.rate_mbps.unwrap_or(0.0) * 1e6;
                let mut cbr = CbrFlow::new(src, dst, rate_bps, fs.packet_bytes, start_ns, stop_ns);
                cbr.dscp = fs.dscp;
                udp.push(Some(cbr));
                linux.push(None);
                continue;
            }
            udp.push(None);
            if fs.stack == Stack::Linux {
                let (sender_node, receiver_node) = match fs.direction {
                    Direction::Download => (node_of_host(wired_side), sta),
                    Direction::Upload => (sta, node_of_host(wired_side)),
                };
                let tsq = (sender_node == Node::Ap).then_some(Tsq { pacing_shift: 7, in_host_bytes: 0 });
                linux.push(Some(LinuxFlow {
                    sender: Sender::new(fs.rwnd_bytes, fs.hystart, tsq),
                    receiver: Receiver::default(),
                    sender_node,
                    receiver_node,
                    timer_at: None,
                    delivered: 0,
                }));
                continue;
            }
            linux.push(None);
            match fs.direction {
                Direction::Download => {
                    hosts[wired_side].add_sender(flow, sta, fs.cc, FLOW_BUFFER_BYTES);
                    hosts[2 + usize::from(s)].add_receiver(flow, fs.cc, FLOW_BUFFER_BYTES);
                }
                Direction::Upload => {
                    hosts[2 + usize::from(s)].add_sender(flow, node_of_host(wired_side), fs.cc, FLOW_BUFFER_BYTES);
                    hosts[wired_side].add_receiver(flow, fs.cc, FLOW_BUFFER_BYTES);
                }
            }
        }
        let ping_cpu = (0..n)
            .map(|s| {
                let base = sc.flow_station.iter().position(|&fs| usize::from(fs) == s).map_or(s as u8, |f| flow_cpu[f]);
                (base + 1) % rings
            })
            .collect();
        let timings: Vec<PhyTiming> = sc.rates.iter().map(|r| PhyTiming::new(*r)).collect();
        // One EDCA function per station and access category its flows use; best effort
        // for every station first, so an all-BE scenario has the contenders it always had.
        let flow_ac: Vec<Ac> =
            spec.flows.iter().map(|f| crate::net::udp::ac_of_dscp(f.dscp).unwrap_or(Ac::Be)).collect();
        let mut queue_station: Vec<u16> = (0..n as u16).collect();
        let mut queue_ac = vec![Ac::Be; n];
        let mut sta_queue = vec![[None; 4]; n];
        for (s, q) in sta_queue.iter_mut().enumerate() {
            q[Ac::Be.index()] = Some(s);
        }
        for (f, &ac) in flow_ac.iter().enumerate() {
            let s = usize::from(sc.flow_station[f]);
            if sta_queue[s][ac.index()].is_none() {
                sta_queue[s][ac.index()] = Some(queue_station.len());
                queue_station.push(s as u16);
                queue_ac.push(ac);
            }
        }
        let priority = |ac: Ac| (Ac::COUNT - 1 - ac.index()) as u8;
        let mut edca = vec![(EdcaParams::AP_BE, 0, priority(Ac::Be))];
        for (q, &ac) in queue_ac.iter().enumerate() {
            edca.push((EdcaParams::station(ac), 1 + usize::from(queue_station[q]), priority(ac)));
        }
        // The AP's EDCA function of each other access category its downlink carries: a
        // download's, and a TCP upload's (its ACKs go down marked as the flow is), with
        // hostapd's AP parameters; owner 0, so a tie among them goes to the higher.
        let mut ap = ap;
        let mut ap_contenders = vec![(Ac::Be, 0)];
        if ap.downlink_acs() {
            for (f, fs) in spec.flows.iter().enumerate() {
                if fs.direction == Direction::Upload && fs.protocol == Protocol::Udp {
                    continue;
                }
                ap.prepare_txq(sc.flow_station[f], fs.dscp).map_err(|e| e.0)?;
            }
            for ac in Ac::ALL {
                let used = spec.flows.iter().zip(&flow_ac).any(|(fs, &fac)| {
                    fac == ac && !(fs.direction == Direction::Upload && fs.protocol == Protocol::Udp)
                });
                if ac != Ac::Be && used {
                    ap_contenders.push((ac, edca.len()));
                    edca.push((EdcaParams::ap(ac), 0, priority(ac)));
                }
            }
        }
        let nflows = spec.flows.len();
        let mut w = World {
            q: EventQueue::default(),
            rng: Rng::new(seed),
            end_ns,
            warmup_ns,
            down: WiredLink::new((spec.wired.rate_mbps * 1e6) as u64, us(spec.wired.delay_us)),
            up: WiredLink::new((spec.wired.rate_mbps * 1e6) as u64, us(spec.wired.delay_us)),
            poll_at: vec![None; hosts.len()],
            hosts,
            ap,
            medium: Medium::with_owners(&edca),
            timings,
            uplink: queue_station.iter().map(|&s| StationTxq::new(spec.stations[usize::from(s)].queue)).collect(),
            queue_station,
            queue_ac,
            sta_queue,
            flow_ac,
            flow_dscp: spec.flows.iter().map(|f| f.dscp).collect(),
            ap_contenders,
            exchange: Vec::new(),
            collided: false,
            flow_cpu,
            ping_cpu,
            // The parser bounds the rate (`limits::MAX_PING_HZ`): the interval is >= 1 ms.
            ping_interval_ns: (spec.ping.rate_hz > 0.0).then(|| ((1e9 / spec.ping.rate_hz) as Nanos).max(1)),
            ping_seq: 0,
            flow_bytes: vec![0; nflows],
            flow_rtts: vec![Vec::new(); nflows],
            flow_srtt: vec![(0.0, 0.0, 0); nflows],
            flow_drops: vec![0; nflows],
            retry_drops: 0,
            ping_rtts: vec![Vec::new(); n],
            pings_sent: vec![0; n],
            aql_samples: vec![Vec::new(); n],
            ampdu_sizes: vec![Vec::new(); n],
            sta_airtime_ns: vec![0; n],
            air: AirtimeLedger::new(n),
            exchange_ns: 0,
            packets: 0,
            trace: std::env::var_os("AIRTIME_SIM_TRACE").is_some(),
            linux,
            udp,
            flow_window_ns,
            segs: Vec::new(),
            samples: Vec::new(),
            completion_ring: (ATH11K_DESIGNS.contains(&spec.ap.design)
                && spec.ap.hardware.tx_completion_irq == CompletionIrq::Srng)
                .then(ModeratedRing::default),
            ofdma: ATH11K_DESIGNS.contains(&spec.ap.design) && spec.ap.hardware.ofdma,
            uplink_touched: Vec::new(),
            delivered: Vec::new(),
            tsq_flows: Vec::new(),
            aql_zero_samples: vec![0; n],
            series: SeriesRecorder::new((spec.sample_interval_ms * 1e6) as Nanos, n, nflows),
            links: sc
                .links
                .iter()
                .zip(sc.rates.iter().zip(&sc.reported_rates))
                .map(|(l, (&base, &reported))| {
                    l.as_ref().map(|l| LinkPair {
                        down: Link::new(base, l.steps.clone(), l.frame_error_rate, l.control),
                        up: Link::new(base, l.steps.clone(), l.frame_error_rate, l.control),
                        down_choice: None,
                        up_choice: None,
                        spent_ns: 0,
                        priced_us: 0,
                        reported: Vec::new(),
                        fixed_report: (!l.dynamic).then_some(reported),
                        down_rx: Default::default(),
                        held_max: 0,
                        up_rx: Default::default(),
                    })
                })
                .collect(),
            chan_rng: Rng::new(seed ^ 0x5EED_C4A7),
        };
        w.tsq_flows =
            (0..w.linux.len()).filter(|&f| w.linux[f].as_ref().is_some_and(|l| l.sender.tsq.is_some())).collect();
        for s in 0..n {
            w.report_rate(s, 0);
        }
        for (f, &(start_ns, stop_ns)) in flow_times.iter().enumerate() {
            if w.linux[f].is_some() {
                w.q.schedule(us(100 + 50 * f as u64).saturating_add(start_ns), Event::FlowStart(f));
                if let Some(t) = stop_ns {
                    w.q.schedule(t, Event::FlowStop(f));
                }
            }
            if w.udp[f].as_ref().is_some_and(|u| u.start_ns < u.stop_ns) {
                w.q.schedule(start_ns, Event::UdpSend(f));
            }
        }
        for i in 0..w.hosts.len() {
            if !w.hosts[i].is_empty() {
                w.q.schedule(us(100 * i as u64), Event::Poll(i));
                w.poll_at[i] = Some(us(100 * i as u64));
            }
        }
        if let Some(iv) = w.ping_interval_ns {
            for s in 0..n {
                let phase = w.rng.below_or_eq(iv);
                w.q.schedule(phase, Event::PingTick(s as u16));
            }
        }
        w.q.schedule(w.warmup_ns, Event::Sample);
        w.q.schedule(w.warmup_ns, Event::SeriesSample);
        Ok(w)
    }

    /// Runs to the end and returns what was measured.
    pub fn run(mut self, run: u32, seed: u64, names: &[String], flow_station: &[u16]) -> RunResult {
        let started = std::time::Instant::now();
        while let Some((now, ev)) = self.q.pop_until(self.end_ns) {
            self.handle(now, ev);
        }
        self.result(run, seed, names, flow_station, started.elapsed().as_secs_f64())
    }

    fn handle(&mut self, now: Nanos, ev: Event) {
        match ev {
            Event::Poll(i) => {
                if self.poll_at[i] == Some(now) {
                    self.poll_at[i] = None;
                    self.poll_host(i, now);
                }
            }
            Event::WiredToAp(pkt) => {
                if pkt.dst == Node::Ap {
                    self.arrive_at_host(AP_HOST, pkt, now);
                } else {
                    self.ap.enqueue(pkt, now);
                    self.after_ap(now);
                }
            }
            Event::WiredToHost(pkt) => match pkt.payload {
                Payload::PingReply { sent_ns, .. } => {
                    if let FlowTag::Ping(s) = pkt.flow
                        && sent_ns >= self.warmup_ns
                    {
                        let rtt = (now - sent_ns) as f32 / 1e6;
                        self.ping_rtts[usize::from(s)].push((now as f32 / 1e9, rtt));
                    }
                }
                Payload::Ip(_) | Payload::Tcp(_) => self.arrive_at_host(WIRED, pkt, now),
                Payload::Udp { .. } => self.udp_arrive(&pkt, now),
                Payload::PingRequest { .. } => {}
            },
            Event::PingTick(s) => {
                self.ping_seq += 1;
                let pkt = ping::request(s, self.ping_seq, now, self.ping_cpu[usize::from(s)]);
                if now >= self.warmup_ns {
                    self.pings_sent[usize::from(s)] += 1;
                }
                let at = self.down.send(now, pkt.len_bytes);
                self.packets += 1;
                self.q.schedule(at, Event::WiredToAp(pkt));
                if let Some(iv) = self.ping_interval_ns {
                    self.q.schedule(now + iv, Event::PingTick(s));
                }
            }
            Event::Access(generation) => self.access(now, generation),
            Event::ExchangeEnd => self.exchange_end(now),
            Event::TxStatus(statuses) => self.tx_status(statuses, now),
            Event::HostPpduDone(c) => {
                let HostCompletion { ac, station, mut statuses, failed } = c;
                self.ap.host_ppdu_done(ac, station, &mut statuses, failed, now);
                self.receivers_pass_given_up();
                self.after_completions(&statuses, now);
            }
            Event::TxIrq(n) => {
                if let Some(statuses) = self.completion_ring.as_mut().and_then(|r| r.fire(n)) {
                    self.tx_status(statuses, now);
                }
            }
            Event::PpduStats(s, ac, airtime_us, acked) => self.ap.ppdu_stats(s, ac, airtime_us, acked, now),
            Event::MuPpduStats(report) => self.ap.mu_ppdu_stats(&report, now),
            Event::FlowStart(f) => {
                if let Some(l) = self.linux[f].as_mut() {
                    l.sender.send(now, &mut self.segs);
                }
                self.flush_segments(f, true, now);
            }
            Event::FlowStop(f) => {
                if let Some(l) = self.linux[f].as_mut() {
                    l.sender.stop();
                }
            }
            Event::UdpSend(f) => {
                let cpu = self.flow_cpu.get(f).copied().unwrap_or(0);
                let counted = now >= self.warmup_ns;
                let Some(u) = self.udp[f].as_mut() else { return };
                let (pkt, next) = u.send(f as u16, cpu, now, counted);
                let src = pkt.src;
                if let Some(t) = next {
                    self.q.schedule(t, Event::UdpSend(f));
                }
                self.emit(src, pkt, now);
            }
            Event::TcpTimer(f) => {
                let Some(l) = self.linux[f].as_mut() else { return };
                if l.timer_at != Some(now) {
                    return;
                }
                l.timer_at = None;
                l.sender.on_timer(now, &mut self.segs);
                self.flush_segments(f, true, now);
                if let Some(l) = self.linux[f].as_mut()
                    && let Some(a) = l.receiver.on_timer(now)
                {
                    self.segs.push(a);
                }
                self.flush_segments(f, false, now);
            }
            Event::Sample => {
                if self.trace && now.is_multiple_of(ms(100)) {
                    eprintln!(
                        "t={:.1}s flight={:?} rings={:?} txq={} aql={} drops={:?}",
                        now as f64 / 1e9,
                        self.linux
                            .iter()
                            .map(|l| l
                                .as_ref()
                                .map_or((0.0, 0.0), |l| (l.sender.cwnd(), l.sender.srtt_ns().unwrap_or(0.0) / 1e6)))
                            .collect::<Vec<_>>(),
                        self.ap.hw().ring_outstanding(),
                        self.ap.txq_backlog(0),
                        self.ap.aql_pending_us(0),
                        self.flow_drops
                    );
                }
                for s in 0..self.aql_samples.len() {
                    match self.ap.aql_pending_us(s as u16) {
                        0 => self.aql_zero_samples[s] += 1,
                        v => self.aql_samples[s].push(f64::from(v)),
                    }
                }
                self.q.schedule(now + SAMPLE_NS, Event::Sample);
            }
            Event::SeriesSample => {
                let (ap, linux, bytes) = (&self.ap, &self.linux, &self.flow_bytes);
                self.series.sample(
                    now,
                    |s| ap.aql_pending_us(s as u16),
                    |f| {
                        let l = linux[f].as_ref();
                        FlowSample {
                            bytes: bytes[f],
                            cwnd_segments: l.map(|l| l.sender.cwnd()),
                            srtt_ns: l.and_then(|l| l.sender.srtt_ns()),
                        }
                    },
                );
                self.q.schedule(now + self.series.interval_ns, Event::SeriesSample);
            }
        }
    }

    fn poll_host(&mut self, i: usize, now: Nanos) {
        let mut out = HostOutput::default();
        self.hosts[i].poll(now, &mut out);
        let measuring = now >= self.warmup_ns;
        for (flow, bytes) in out.received {
            if measuring {
                self.flow_bytes[usize::from(flow)] += bytes;
            }
        }
        for (flow, rtt) in out.rtt_samples {
            if measuring && let Some(v) = self.flow_rtts.get_mut(usize::from(flow)) {
                v.push((now as f32 / 1e9, rtt as f32 / 1e6));
            }
        }
        let src = node_of_host(i);
        for (ip, flow) in out.packets {
            let pkt = Packet {
                len_bytes: ip.len() as u32,
                dst: dst_of(&ip),
                payload: Payload::Ip(ip),
                src,
                flow: FlowTag::Tcp(flow),
                dscp: self.flow_dscp.get(usize::from(flow)).copied().unwrap_or(0),
                cpu: self.flow_cpu.get(usize::from(flow)).copied().unwrap_or(0),
                enqueue_ns: now,
                tries: 0,
                mpdu_seq: 0,
            };
            match i {
                WIRED => {
                    let at = self.down.send(now, pkt.len_bytes);
                    self.packets += 1;
                    self.q.schedule(at, Event::WiredToAp(pkt));
                }
                AP_HOST => {
                    self.ap.enqueue(pkt, now);
                    self.after_ap(now);
                }
                _ => self.station_send(i - 2, pkt, now),
            }
        }
        if let Some(mut t) = self.hosts[i].poll_at(now) {
            if t <= now {
                // The stack wants to send but its device is gated (TSQ): a completion
                // will poll it; keep a timer running for its retransmissions.
                t = now + ms(1);
            }
            if self.poll_at[i].is_none_or(|p| t < p || p < now) {
                self.poll_at[i] = Some(t);
                self.q.schedule(t, Event::Poll(i));
            }
        }
    }

    /// After the AP acted: account drops, free TSQ budget, update the AP's readiness.
    fn after_ap(&mut self, now: Nanos) {
        let mut freed = 0u64;
        let dropped = std::mem::take(&mut self.ap.dropped);
        for p in &dropped {
            if p.src == Node::Ap {
                freed += u64::from(p.len_bytes);
                if let FlowTag::Tcp(f) = p.flow {
                    self.tsq_release(usize::from(f), u64::from(p.len_bytes));
                }
            }
        }
        count_drops(&mut self.flow_drops, dropped);
        if freed > 0 {
            self.hosts[AP_HOST].tsq_release(freed);
            if self.poll_at[AP_HOST].is_none_or(|p| p > now) {
                self.poll_at[AP_HOST] = Some(now);
                self.q.schedule(now, Event::Poll(AP_HOST));
            }
        }
        let mut changed = false;
        for &(ac, i) in &self.ap_contenders {
            let ready = self.ap.hw_has_frames_ac(ac);
            changed |= self.medium.set_ready(i, ready, now, &mut self.rng);
        }
        if changed {
            self.reschedule_access();
        }
    }

    /// The AP's access category whose EDCA function is medium contender `w`, if any.
    fn ap_ac_of(&self, w: usize) -> Option<Ac> {
        self.ap_contenders.iter().find(|&&(_, i)| i == w).map(|&(ac, _)| ac)
    }

    fn reschedule_access(&mut self) {
        if let Some((t, g)) = self.medium.next_access() {
            self.q.schedule(t, Event::Access(g));
        }
    }

    fn access(&mut self, now: Nanos, generation: u64) {
        let winners = self.medium.access(now, generation, &mut self.rng);
        if winners.is_empty() {
            return;
        }
        let mut longest: Nanos = 0;
        let mut withdrawn = Vec::new();
        for w in winners {
            self.choose_rates(w, now);
            // Downlink OFDMA is the ath11k firmware's (the host-aggregating designs
            // are 802.11n drivers; `ap.hardware.ofdma` is refused for them).
            let mu = if w == 0 && self.ofdma { self.ap.hw_mut().next_mu_ppdu(&self.timings) } else { None };
            let tx = if let Some(ppdu) = mu {
                let airtime_ns = (ppdu.exchange_us() * 1000.0) as Nanos;
                Some(Tx::ApMu { ppdu, airtime_ns })
            } else if let Some(ac) = self.ap_ac_of(w) {
                self.ap.next_ppdu_ac(ac, &self.timings).map(|(station, frames, psdu)| {
                    let t = &self.timings[usize::from(station)];
                    let airtime_ns = (t.exchange_us(psdu) * 1000.0) as Nanos;
                    Tx::Ap { station, ac, frames, airtime_ns }
                })
            } else {
                let q = w - 1;
                let s = usize::from(self.queue_station[q]);
                let t = &self.timings[s];
                let edca = EdcaParams::station(self.queue_ac[q]);
                let limits = AmpduLimits { max_ppdu_us: edca.max_ppdu_us(phy::MAX_PPDU_US, t.block_ack_us) };
                // The driver pulls from mac80211's txq until the A-MPDU is full (doubling
                // what it asks for, so it holds at most twice the aggregate).
                let (mut want, mut dropped) = (8, Vec::new());
                let (count, psdu) = loop {
                    dropped.extend(self.uplink[q].pull(want, now));
                    let held = &self.uplink[q].held;
                    let subframes = held.iter().map(|p| (p.ampdu_subframe_bytes(), p.mpdu_seq != 0));
                    let (count, psdu) = ampdu::fill_in_window(t, limits, subframes);
                    if count < held.len() || held.len() < want || count >= t.ba_window as usize {
                        break (count, psdu);
                    }
                    want *= 2;
                };
                count_drops(&mut self.flow_drops, dropped);
                (count > 0).then(|| {
                    let frames: Vec<Packet> = self.uplink[q].held.drain(..count).collect();
                    let airtime_ns = (t.exchange_us(psdu) * 1000.0) as Nanos;
                    Tx::Sta { station: s as u16, queue: q, frames, airtime_ns }
                })
            };
            if let Some(tx) = tx {
                longest = longest.max(match &tx {
                    Tx::Ap { airtime_ns, .. } | Tx::ApMu { airtime_ns, .. } | Tx::Sta { airtime_ns, .. } => *airtime_ns,
                });
                self.exchange.push(tx);
            } else {
                withdrawn.push(w);
                if self.ap_ac_of(w).is_none() {
                    // Its readiness is looked at again when an exchange ends (the AP's
                    // is, each time the AP acts).
                    self.uplink_touched.push(w - 1);
                }
            }
        }
        if !withdrawn.is_empty() {
            // A winner with nothing to send draws a backoff instead of holding its
            // counter at 0 and winning again at every AIFS; with nobody sending, the
            // medium never became busy and the others count on.
            self.medium.withdraw(now, &withdrawn, &mut self.rng);
            if self.exchange.is_empty() {
                self.reschedule_access();
                return;
            }
        }
        self.collided = self.exchange.len() > 1;
        self.exchange_ns = longest;
        self.q.schedule(now + longest, Event::ExchangeEnd);
    }

    fn exchange_end(&mut self, now: Nanos) {
        let collided = self.collided;
        let measuring = now >= self.warmup_ns;
        let mut transmitted = Vec::new();
        let mut ap_touched = false;
        if measuring && collided {
            self.air.collided(self.exchange_ns);
        }
        for tx in std::mem::take(&mut self.exchange) {
            match tx {
                Tx::Ap { station, ac, frames, airtime_ns } => {
                    let contender = self.ap_contenders.iter().find(|c| c.0 == ac).map_or(0, |c| c.1);
                    if collided {
                        let dropped = self.collided_down(station, frames, now);
                        transmitted.push((contender, airtime_ns, Outcome::of(false, dropped)));
                        continue;
                    }
                    let s = usize::from(station);
                    if measuring {
                        self.sta_airtime_ns[s] += airtime_ns;
                        self.air.downlink(s, airtime_ns);
                        self.ampdu_sizes[s].push(frames.len() as f64);
                    }
                    let mut statuses = Vec::with_capacity(frames.len());
                    let mut acked = AckedMsdus::default();
                    let mut outcome = Outcome::Acknowledged;
                    let mut failed = Vec::new();
                    if self.links[s].is_some() {
                        let (released, ended, lost) =
                            self.block_ack_down(s, frames, airtime_ns, now, measuring, &mut statuses);
                        outcome = ended;
                        failed = lost;
                        for p in released {
                            acked.add(&p);
                            self.packets += 1;
                            self.delivered.push(Delivery::Down(s, p));
                        }
                    } else {
                        for f in frames {
                            let (status, pkt) = f.complete();
                            statuses.push(status);
                            acked.add(&pkt);
                            self.packets += 1;
                            self.delivered.push(Delivery::Down(s, pkt));
                        }
                    }
                    self.delivered.push(Delivery::Poll(s));
                    transmitted.push((contender, airtime_ns, outcome));
                    if self.ap.host_aggregates() {
                        // The driver resends the missed subframes when it handles the
                        // completion, aggregated with its TID's new frames.
                        self.schedule_host_completion(HostCompletion { ac, station, statuses, failed }, now);
                    } else {
                        // The firmware resends them from the head of the station's queue.
                        if !failed.is_empty() {
                            self.ap.requeue_ppdu(station, failed);
                        }
                        if !statuses.is_empty() {
                            self.schedule_completions(statuses, now);
                        }
                    }
                    let stats_at = now + us(self.ap.hw().config.ppdu_stats_delay_us);
                    self.q.schedule(stats_at, Event::PpduStats(station, ac, (airtime_ns / 1000) as u32, acked));
                }
                Tx::ApMu { ppdu, airtime_ns } => {
                    let outcome = self.mu_exchange_end(ppdu, airtime_ns, collided, measuring, now);
                    transmitted.push((0, airtime_ns, outcome));
                }
                Tx::Sta { station, queue, frames, airtime_ns } => {
                    let s = usize::from(station);
                    self.uplink_touched.push(queue);
                    if collided {
                        let dropped = self.collided_up(queue, frames);
                        transmitted.push((1 + queue, airtime_ns, Outcome::of(false, dropped)));
                        continue;
                    }
                    if measuring {
                        self.air.uplink(s, airtime_ns);
                    }
                    self.ap.rx_airtime(station, (airtime_ns / 1000) as u32, now);
                    ap_touched = true;
                    let (frames, outcome) = if self.links[s].is_some() {
                        self.block_ack_up(queue, frames, now)
                    } else {
                        (frames, Outcome::Acknowledged)
                    };
                    transmitted.push((1 + queue, airtime_ns, outcome));
                    for p in frames {
                        self.packets += 1;
                        self.delivered.push(Delivery::Up(p));
                    }
                }
            }
        }
        // The exchange's outcomes are decided; its last frame, the BlockAck, ends now
        // and the medium goes idle. Only then do the receivers act on what it
        // delivered, as a host's reply comes after the BlockAck: every frame they
        // produce (a station's TCP ACK or ping reply, the AP's own stack's reply, a
        // frame the AP forwards, what the received-airtime report lets through)
        // arrives on a medium idle for less than AIFS. By 802.11-2020 10.23.2.2 only
        // the exchange's transmitters invoke a backoff here (after a success, the
        // post-backoff of event b; after a failure, event c), which `end_exchange`
        // draws; a contender whose queue was empty and whose counter is 0 draws none
        // (event a is an arrival on a busy medium) and transmits at the slot boundary
        // where its AIFS ends, one whose counter is not 0 counts it down from there.
        self.medium.end_exchange(now, &transmitted, &mut self.rng);
        self.deliver_exchange(now);
        if ap_touched {
            self.after_ap(now);
        }
        for &(ac, i) in &self.ap_contenders {
            let ready = self.ap.hw_has_frames_ac(ac);
            self.medium.set_ready(i, ready, now, &mut self.rng);
        }
        // In queue order, as a pass over every queue would draw backoffs.
        let mut touched = std::mem::take(&mut self.uplink_touched);
        touched.sort_unstable();
        touched.dedup();
        for &q in &touched {
            let r = !self.uplink[q].is_empty();
            self.medium.set_ready(1 + q, r, now, &mut self.rng);
        }
        touched.clear();
        self.uplink_touched = touched;
        self.reschedule_access();
    }

    /// Hands what the ended exchange delivered to its receivers, in the order it was
    /// delivered (`exchange_end`: the medium is idle by now).
    fn deliver_exchange(&mut self, now: Nanos) {
        let mut delivered = std::mem::take(&mut self.delivered);
        for d in delivered.drain(..) {
            match d {
                Delivery::Down(s, pkt) => self.deliver_to_station(s, pkt, now),
                Delivery::Up(pkt) => self.deliver_from_station(pkt, now),
                Delivery::Poll(s) => {
                    if !self.hosts[2 + s].is_empty() {
                        self.poll_host(2 + s, now);
                    }
                }
            }
        }
        self.delivered = delivered;
    }

    /// The hardware writes `statuses` to the tx completion ring at `now`: the host reaps
    /// them when the ring's moderated interrupt fires, or after the fixed delay.
    fn schedule_completions(&mut self, statuses: Vec<TxStatus>, now: Nanos) {
        match self.completion_ring.as_mut() {
            Some(ring) => {
                if let Some((at, n)) = ring.write(statuses, now) {
                    self.q.schedule(at, Event::TxIrq(n));
                }
            }
            None => {
                let at = self.ap.hw().completion_at(now);
                self.q.schedule(at, Event::TxStatus(statuses));
            }
        }
    }

    /// A host-aggregating driver's PPDU completion is reaped after the fixed delay.
    fn schedule_host_completion(&mut self, c: HostCompletion, now: Nanos) {
        let at = self.ap.hw().completion_at(now);
        self.q.schedule(at, Event::HostPpduDone(c));
    }

    /// The host reaps `statuses` from the tx completion ring at `now`.
    fn tx_status(&mut self, mut statuses: Vec<TxStatus>, now: Nanos) {
        self.ap.tx_status(&mut statuses, now);
        self.after_completions(&statuses, now);
    }

    /// What the host does after the driver handled `statuses`: TCP small queues'
    /// budget freed, the senders and the AP's stack run.
    fn after_completions(&mut self, statuses: &[TxStatus], now: Nanos) {
        let mut freed = 0;
        for st in statuses {
            if st.from_ap {
                freed += u64::from(st.len_bytes);
                if let FlowTag::Tcp(f) = st.flow {
                    self.tsq_release(usize::from(f), u64::from(st.len_bytes));
                }
            }
        }
        for i in 0..self.tsq_flows.len() {
            let f = self.tsq_flows[i];
            if let Some(l) = self.linux[f].as_mut() {
                l.sender.send(now, &mut self.segs);
            }
            self.flush_segments(f, true, now);
        }
        if freed > 0 {
            self.hosts[AP_HOST].tsq_release(freed);
            self.poll_host(AP_HOST, now);
        }
        self.after_ap(now);
    }

    /// A downlink MU PPDU's exchange ended: as an SU one's, per user (over a lossy or
    /// changing link, through its BlockAck and reorder buffer), with each user's airtime
    /// its RU's share of the exchange, and one PPDU-stats report for all. The exchange
    /// failed, for the AP's contention window, if it collided or no user's BlockAck came
    /// back (every subframe of every user lost); one BlockAck makes it a success.
    fn mu_exchange_end(
        &mut self,
        ppdu: MuPpdu,
        airtime_ns: Nanos,
        collided: bool,
        measuring: bool,
        now: Nanos,
    ) -> Outcome {
        if collided {
            let mut dropped = false;
            for u in ppdu.users {
                dropped |= self.collided_down(u.station, u.frames, now);
            }
            return Outcome::of(false, dropped);
        }
        let (mut acknowledged, mut dropped) = (false, false);
        let shares = ppdu.ru_shares(airtime_ns);
        let own_exchange_ns = |u: &MuUser| (ofdma::exchange_us(u.own_ppdu_us) * 1000.0) as Nanos;
        let report = MuReport {
            duration_us: (airtime_ns / 1000) as u32,
            users: ppdu
                .users
                .iter()
                .map(|u| MuReportUser {
                    station: u.station,
                    ru_tones: u.ru.tones(),
                    own_us: (own_exchange_ns(u) / 1000) as u32,
                })
                .collect(),
        };
        let mut statuses = Vec::new();
        for (u, share_ns) in ppdu.users.into_iter().zip(shares) {
            let s = usize::from(u.station);
            if measuring {
                self.sta_airtime_ns[s] += share_ns;
                self.air.downlink(s, share_ns);
                self.ampdu_sizes[s].push(u.frames.len() as f64);
            }
            if self.links[s].is_some() {
                // Each user's subframes pass its link's losses, BlockAck and the
                // station's reorder buffer, as an SU A-MPDU's do: a frame lost in an SU
                // PPDU may be resent in an MU one and the other way round.
                let (released, outcome, lost) =
                    self.block_ack_down(s, u.frames, share_ns, now, measuring, &mut statuses);
                if !lost.is_empty() {
                    self.ap.requeue_ppdu(u.station, lost);
                }
                acknowledged |= outcome == Outcome::Acknowledged;
                dropped |= outcome == Outcome::FailedAtRetryLimit;
                for p in released {
                    self.packets += 1;
                    self.delivered.push(Delivery::Down(s, p));
                }
            } else {
                acknowledged = true;
                for f in u.frames {
                    let (status, pkt) = f.complete();
                    statuses.push(status);
                    self.packets += 1;
                    self.delivered.push(Delivery::Down(s, pkt));
                }
            }
            self.delivered.push(Delivery::Poll(s));
        }
        if !statuses.is_empty() {
            self.schedule_completions(statuses, now);
        }
        let stats_at = now + us(self.ap.hw().config.ppdu_stats_delay_us);
        self.q.schedule(stats_at, Event::MuPpduStats(report));
        Outcome::of(acknowledged, dropped)
    }

    /// A packet reached the wired host or the AP's own stack.
    fn arrive_at_host(&mut self, i: usize, pkt: Packet, now: Nanos) {
        match pkt.payload {
            Payload::Ip(ip) => {
                self.hosts[i].deliver(ip, now);
                self.poll_host(i, now);
            }
            Payload::Tcp(seg) => self.tcp_arrive(node_of_host(i), pkt.flow, seg, now),
            _ => {}
        }
    }

    /// A Linux-like TCP segment reached `node`.
    fn tcp_arrive(&mut self, _node: Node, flow: FlowTag, seg: Segment, now: Nanos) {
        let FlowTag::Tcp(f) = flow else { return };
        let f = usize::from(f);
        let Some(l) = self.linux.get_mut(f).and_then(Option::as_mut) else { return };
        match seg {
            Segment::Data { seq, tsval } => {
                if let Some(a) = l.receiver.on_data(seq, tsval, now) {
                    self.segs.push(a);
                }
                let delivered = l.receiver.delivered_bytes;
                if now >= self.warmup_ns {
                    self.flow_bytes[f] += delivered - l.delivered;
                }
                l.delivered = delivered;
                self.flush_segments(f, false, now);
            }
            Segment::Ack { ack, sacked, tsecr } => {
                l.sender.on_ack(ack, sacked, tsecr, now, &mut self.segs, &mut self.samples);
                if now >= self.warmup_ns {
                    for rtt in self.samples.drain(..) {
                        self.flow_rtts[f].push((now as f32 / 1e9, rtt as f32 / 1e6));
                    }
                    if let Some(srtt) = l.sender.srtt_ns() {
                        let (sum, max, n) = &mut self.flow_srtt[f];
                        *sum += srtt / 1e6;
                        *max = f64::max(*max, srtt / 1e6);
                        *n += 1;
                    }
                }
                self.samples.clear();
                self.flush_segments(f, true, now);
            }
        }
    }

    fn tsq_release(&mut self, f: usize, bytes: u64) {
        if let Some(l) = self.linux.get_mut(f).and_then(Option::as_mut) {
            l.sender.tsq_release(bytes);
        }
    }

    /// Sends the segments in `self.segs` from flow `f`'s sender (or receiver) and
    /// re-arms the flow's timer.
    fn flush_segments(&mut self, f: usize, from_sender: bool, now: Nanos) {
        let Some(l) = self.linux.get_mut(f).and_then(Option::as_mut) else {
            self.segs.clear();
            return;
        };
        let (src, dst) = if from_sender { (l.sender_node, l.receiver_node) } else { (l.receiver_node, l.sender_node) };
        let next = [l.sender.timer_at(), l.receiver.timer_at()].into_iter().flatten().min();
        if let Some(t) = next
            && l.timer_at.is_none_or(|p| t < p || p < now)
        {
            l.timer_at = Some(t);
            self.q.schedule(t, Event::TcpTimer(f));
        }
        let segs = std::mem::take(&mut self.segs);
        for seg in &segs {
            let pkt = Packet {
                payload: Payload::Tcp(*seg),
                len_bytes: seg.ip_bytes(),
                src,
                dst,
                flow: FlowTag::Tcp(f as u16),
                dscp: self.flow_dscp.get(f).copied().unwrap_or(0),
                cpu: self.flow_cpu.get(f).copied().unwrap_or(0),
                enqueue_ns: now,
                tries: 0,
                mpdu_seq: 0,
            };
            self.emit(src, pkt, now);
        }
        self.segs = segs;
        self.segs.clear();
    }

    /// A node sends a packet into the network.
    fn emit(&mut self, src: Node, pkt: Packet, now: Nanos) {
        match src {
            Node::Wired => {
                let at = self.down.send(now, pkt.len_bytes);
                self.packets += 1;
                self.q.schedule(at, Event::WiredToAp(pkt));
            }
            Node::Ap => {
                self.ap.enqueue(pkt, now);
                self.after_ap(now);
            }
            Node::Station(s) => self.station_send(usize::from(s), pkt, now),
        }
    }

    /// Station `s` queues a packet in the EDCA function of its flow's access category.
    fn station_send(&mut self, s: usize, pkt: Packet, now: Nanos) {
        let ac = match pkt.flow {
            FlowTag::Tcp(f) | FlowTag::Udp(f) => self.flow_ac.get(usize::from(f)).copied().unwrap_or(Ac::Be),
            FlowTag::Ping(_) => Ac::Be,
        };
        let q = self.sta_queue.get(s).and_then(|q| q[ac.index()]).unwrap_or(s);
        let dropped = self.uplink[q].enqueue(pkt, now);
        count_drops(&mut self.flow_drops, dropped);
        if self.medium.set_ready(1 + q, true, now, &mut self.rng) {
            self.reschedule_access();
        }
    }

    fn deliver_to_station(&mut self, s: usize, pkt: Packet, now: Nanos) {
        match pkt.payload {
            Payload::Ip(ip) => self.hosts[2 + s].deliver(ip, now),
            Payload::Tcp(seg) => self.tcp_arrive(Node::Station(s as u16), pkt.flow, seg, now),
            Payload::PingRequest { .. } => {
                if let Some(r) = ping::reply(&pkt) {
                    self.station_send(s, r, now);
                }
            }
            Payload::Udp { .. } => self.udp_arrive(&pkt, now),
            Payload::PingReply { .. } => {}
        }
    }

    /// A UDP datagram reached its receiver.
    fn udp_arrive(&mut self, pkt: &Packet, now: Nanos) {
        let (FlowTag::Udp(f), Payload::Udp { sent_ns, .. }) = (pkt.flow, &pkt.payload) else { return };
        let f = usize::from(f);
        let Some(u) = self.udp.get_mut(f).and_then(Option::as_mut) else { return };
        if *sent_ns >= self.warmup_ns {
            u.received += 1;
            u.delays_ms.push((now - sent_ns) as f64 / 1e6);
        }
        if now >= self.warmup_ns {
            self.flow_bytes[f] += u64::from(pkt.len_bytes);
        }
    }

    fn deliver_from_station(&mut self, pkt: Packet, now: Nanos) {
        match pkt.dst {
            Node::Ap => self.arrive_at_host(AP_HOST, pkt, now),
            Node::Wired => {
                let at = self.up.send(now, pkt.len_bytes);
                self.packets += 1;
                self.q.schedule(at, Event::WiredToHost(pkt));
            }
            Node::Station(_) => {
                // Station to station goes through the AP's downlink.
                self.ap.enqueue(pkt, now);
                self.after_ap(now);
            }
        }
    }

    fn result(mut self, run: u32, seed: u64, names: &[String], flow_station: &[u16], wall_s: f64) -> RunResult {
        let flows = (0..self.flow_bytes.len())
            .map(|f| {
                let rtts: Vec<f64> = self.flow_rtts[f].iter().map(|&(_, r)| f64::from(r)).collect();
                let mut cdf: Vec<f32> = self.flow_rtts[f].iter().map(|&(_, r)| r).collect();
                cdf.sort_by(f32::total_cmp);
                let secs = self.flow_window_ns[f] as f64 / 1e9;
                let udp = self.udp[f].as_ref();
                FlowResult {
                    station: flow_station.get(f).copied().unwrap_or(0),
                    udp: udp.is_some(),
                    throughput_mbps: if secs > 0.0 { self.flow_bytes[f] as f64 * 8.0 / secs / 1e6 } else { 0.0 },
                    udp_sent: udp.map_or(0, |u| u.sent),
                    udp_lost: udp.map_or(0, |u| u.sent.saturating_sub(u.received)),
                    udp_delay_mean_ms: udp.map_or(0.0, |u| mean(&u.delays_ms)),
                    udp_delay_max_ms: udp.map_or(0.0, |u| u.delays_ms.iter().copied().fold(0.0, f64::max)),
                    tcp_rtt_mean_ms: mean(&rtts),
                    tcp_rtt_max_ms: rtts.iter().copied().fold(0.0, f64::max),
                    tcp_srtt_mean_ms: match self.flow_srtt[f] {
                        (sum, _, n) if n > 0 => sum / n as f64,
                        _ => mean(&rtts),
                    },
                    tcp_srtt_max_ms: match self.flow_srtt[f] {
                        (_, max, n) if n > 0 => max,
                        _ => rtts.iter().copied().fold(0.0, f64::max),
                    },
                    ap_drops: self.flow_drops[f],
                    retransmissions: self.linux[f].as_ref().map_or(0, |l| l.sender.retransmissions),
                    timeouts: self.linux[f].as_ref().map_or(0, |l| l.sender.timeouts),
                    timeouts_undone: self.linux[f].as_ref().map_or(0, |l| l.sender.timeouts_undone),
                    rtt_series: thin(&self.flow_rtts[f], 4000),
                    rtt_cdf: thin(&cdf, 1000),
                    throughput_series_mbps: std::mem::take(&mut self.series.throughput_mbps[f]),
                    cwnd_series_segments: std::mem::take(&mut self.series.cwnd_segments[f]),
                    srtt_series_ms: std::mem::take(&mut self.series.srtt_ms[f]),
                    // Direction, protocol: from the scenario (`run::run_one`).
                    ..FlowResult::default()
                }
            })
            .collect();
        let total_air: Nanos = self.sta_airtime_ns.iter().sum();
        let window = self.end_ns.saturating_sub(self.warmup_ns);
        let stations = (0..self.ping_rtts.len())
            .map(|s| {
                let mut pings: Vec<f64> = self.ping_rtts[s].iter().map(|&(_, r)| f64::from(r)).collect();
                let answered = pings.len() as f64;
                StationResult {
                    name: names.get(s).cloned().unwrap_or_default(),
                    // An empty sample has no percentiles: absent, not 0 ms.
                    ping_p50_ms: (!pings.is_empty()).then(|| quantile(&mut pings, 0.5)),
                    ping_p99_ms: (!pings.is_empty()).then(|| quantile(&mut pings, 0.99)),
                    ping_loss_pct: if self.pings_sent[s] > 0 {
                        (100.0 * (1.0 - answered / self.pings_sent[s] as f64)).max(0.0)
                    } else {
                        0.0
                    },
                    aql_pending_p50_us: quantile_above_zeros(&mut self.aql_samples[s], self.aql_zero_samples[s], 0.5),
                    airtime_share_pct: if total_air > 0 {
                        100.0 * self.sta_airtime_ns[s] as f64 / total_air as f64
                    } else {
                        0.0
                    },
                    ampdu_p50: quantile(&mut self.ampdu_sizes[s], 0.5),
                    downlink_airtime_pct: self.air.station_pct(s, window).0,
                    uplink_airtime_pct: self.air.station_pct(s, window).1,
                    ping_series: self.ping_rtts[s].clone(),
                    aql_pending_series_us: std::mem::take(&mut self.series.aql_pending_us[s]),
                    link: self.links[s].as_ref().map(LinkPair::result),
                    // Throughput: the sum of its flows' (`run::run_one`).
                    ..StationResult::default()
                }
            })
            .collect();
        let c = self.ap.sched().ac_counters(airtime_sched::Ac::Be);
        let registered_tx_us = crate::metrics::PerAc::from_mac80211_order(self.ap.registered_tx_us_per_ac());
        RunResult {
            run,
            seed,
            sample_times_s: std::mem::take(&mut self.series.t_s),
            flows,
            stations,
            skipped_selections: c.skipped_selections,
            closed_rounds: c.closed_rounds,
            ring_drops: self.ap.counters.ring_drops,
            txq_drops: self.ap.counters.txq_drops,
            collisions: self.medium.collisions,
            retry_drops: self.retry_drops,
            registered_tx_us,
            airtime: self.air.breakdown(window),
            packets: self.packets,
            events: self.q.popped(),
            wall_s,
            estimate_vs_air: self.ap.adapter.as_ref().and_then(|a| a.estimate_vs_air()),
        }
    }
}

/// Counts dropped packets on their flows (the AP's and the stations' drops alike).
fn count_drops(flow_drops: &mut [u64], dropped: Vec<Packet>) {
    for p in dropped {
        if let FlowTag::Tcp(f) | FlowTag::Udp(f) = p.flow
            && let Some(d) = flow_drops.get_mut(usize::from(f))
        {
            *d += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::edca::SLOT_NS;
    use crate::wifi::link::MAX_ATTEMPTS;

    /// Two stations, each with a UDP upload (one uplink queue each), no ping.
    fn two_uploaders() -> World {
        let mut text = String::from(
            "name = \"t\"\nduration_s = 1.0\nwarmup_s = 0.0\nruns = 1\nseed = 1\n[ap]\ndesign = \"ath11k_series\"\n[ping]\nrate_hz = 0.0\n",
        );
        for s in ["a", "b"] {
            text += &format!("[[stations]]\nname = \"{s}\"\nrate = \"vht80-1ss-mcs9-sgi\"\n");
        }
        for s in ["a", "b"] {
            text +=
                &format!("[[flows]]\nstation = \"{s}\"\nprotocol = \"udp\"\ndirection = \"upload\"\nrate_mbps = 1.0\n");
        }
        let sc = crate::scenario::parse(&text, "t.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
        World::new(&sc, 1).unwrap()
    }

    fn upload_packet(station: u16, tries: u8) -> Packet {
        Packet {
            payload: Payload::Ip(Vec::new()),
            len_bytes: 1500,
            src: Node::Station(station),
            dst: Node::Wired,
            flow: FlowTag::Udp(station),
            dscp: 0,
            cpu: 0,
            enqueue_ns: 0,
            tries,
            mpdu_seq: 0,
        }
    }

    /// Two uploaders' exchanges collide: queue 0's frame has failed all but its last
    /// attempt, queue 1's is new.
    fn collided_with_a_frame_at_its_last_attempt() -> World {
        let mut w = two_uploaders();
        let airtime_ns = 100_000;
        w.exchange = vec![
            Tx::Sta { station: 0, queue: 0, frames: vec![upload_packet(0, MAX_ATTEMPTS - 1)], airtime_ns },
            Tx::Sta { station: 1, queue: 1, frames: vec![upload_packet(1, 0)], airtime_ns },
        ];
        w.collided = true;
        w.exchange_end(airtime_ns);
        w
    }

    #[test]
    fn a_collided_frame_counts_an_attempt_and_is_dropped_at_the_retry_limit() {
        let w = collided_with_a_frame_at_its_last_attempt();
        assert!(w.uplink[0].held.is_empty(), "its 30th failed attempt drops the frame");
        assert_eq!(w.retry_drops, 1, "and the drop is counted");
        let kept: Vec<u8> = w.uplink[1].held.iter().map(|p| p.tries).collect();
        assert_eq!(kept, vec![1], "the other frame goes back with one attempt counted");
        assert_eq!(w.flow_drops, vec![0, 0], "an uplink retry drop is the station driver's: not the flow's");
    }

    #[test]
    fn a_collision_that_drops_a_frame_at_its_retry_limit_returns_that_window_to_cwmin() {
        let w = collided_with_a_frame_at_its_last_attempt();
        let cw_min = EdcaParams::STATION_BE.cw_min;
        assert_eq!(w.medium.cw(1), Some(cw_min), "queue 0 dropped a frame at its retry limit: CWmin");
        assert_eq!(w.medium.cw(2), Some(2 * cw_min + 1), "queue 1's window doubles");
    }

    /// One station with a bulk TCP download from `endpoint` (`"wired"` or `"ap"`) on
    /// `design`, no ping, seeded `seed`; nothing has run yet, so every backoff counter
    /// is 0 on a medium idle since time 0.
    fn one_download(design: &str, endpoint: &str, seed: u64) -> World {
        let text = format!(
            "name = \"t\"\nduration_s = 1.0\nwarmup_s = 0.0\nruns = 1\nseed = 1\n[ap]\ndesign = \"{design}\"\n[ping]\nrate_hz = 0.0\n\
             [[stations]]\nname = \"a\"\nrate = \"vht80-1ss-mcs9-sgi\"\n\
             [[flows]]\nstation = \"a\"\ndirection = \"download\"\nendpoint = \"{endpoint}\"\n"
        );
        let sc = crate::scenario::parse(&text, "t.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
        World::new(&sc, seed).unwrap()
    }

    /// Contender `w` wins an access on the idle medium and its exchange `tx` ends a
    /// millisecond later: returns when it ended.
    fn exchange_of(w: &mut World, contender: usize, tx: Tx) -> Nanos {
        w.medium.set_ready(contender, true, 0, &mut w.rng);
        let (t, g) = w.medium.next_access().expect("a ready contender on an idle medium");
        assert_eq!(w.medium.access(t, g, &mut w.rng), vec![contender]);
        let end = t + 1_000_000;
        w.exchange = vec![tx];
        w.collided = false;
        w.exchange_ns = 1_000_000;
        w.exchange_end(end);
        end
    }

    /// The AP's A-MPDU of `pkts` to station 0 (best effort), as its firmware sends it.
    fn ap_ampdu(pkts: Vec<Packet>) -> Tx {
        let frames = pkts
            .into_iter()
            .map(|pkt| HwFrame { pkt, charge: None, ring: 0, station: 0, fifo: 0, msdu_id: None })
            .collect();
        Tx::Ap { station: 0, ac: Ac::Be, frames, airtime_ns: 1_000_000 }
    }

    fn tcp_packet(src: Node, dst: Node, seg: Segment) -> Packet {
        Packet {
            payload: Payload::Tcp(seg),
            len_bytes: seg.ip_bytes(),
            src,
            dst,
            flow: FlowTag::Tcp(0),
            dscp: 0,
            cpu: 0,
            enqueue_ns: 0,
            tries: 0,
            mpdu_seq: 0,
        }
    }

    /// Station 0's BE contender (medium contender 1) is ready, and when it transmits
    /// in the idle period that began at `end` if nobody else does: in slots after its
    /// AIFS (0: no backoff drawn, it goes as soon as its AIFS is over).
    fn slots_after_aifs(w: &mut World, contender: usize, aifs_ns: Nanos, end: Nanos) -> u64 {
        assert!(w.medium.is_ready(contender), "the reply made contender {contender} ready");
        let (t, _) = w.medium.next_access().expect("a ready contender");
        (t - end - aifs_ns) / SLOT_NS
    }

    // 802.11-2020 10.23.2.2: a host's reply to a delivered frame is produced after the
    // BlockAck ended, on an idle medium: a contender whose queue was empty and whose
    // counter is 0 draws no backoff and goes when its AIFS is over, whatever path the
    // reply took.

    #[test]
    fn a_stations_tcp_ack_and_its_ping_reply_both_arrive_on_the_idle_medium_and_draw_no_backoff() {
        let aifs = EdcaParams::STATION_BE.aifs_ns();
        for seed in 1..=12 {
            // Two data segments: the receiver ACKs every second one at once.
            let mut w = one_download("ath11k_series", "wired", seed);
            let data: Vec<Packet> =
                (0..2).map(|seq| tcp_packet(Node::Wired, Node::Station(0), Segment::Data { seq, tsval: 0 })).collect();
            let end = exchange_of(&mut w, 0, ap_ampdu(data));
            assert!(!w.uplink[0].is_empty(), "seed {seed}: the station queued its ACK");
            let ack = slots_after_aifs(&mut w, 1, aifs, end);
            // A ping request: the station answers at once.
            let mut w = one_download("ath11k_series", "wired", seed);
            let end = exchange_of(&mut w, 0, ap_ampdu(vec![ping::request(0, 1, 0, 0)]));
            let reply = slots_after_aifs(&mut w, 1, aifs, end);
            assert_eq!((ack, reply), (0, 0), "seed {seed}: neither drew a backoff");
        }
    }

    #[test]
    fn the_aps_reply_to_an_uplink_delivery_arrives_on_the_idle_medium_and_draws_no_backoff() {
        let aifs = EdcaParams::AP_BE.aifs_ns();
        for seed in 1..=12 {
            // The AP's own TCP sender has data in flight; the station's ACK of two
            // segments lets it send more at once.
            let mut w = one_download("stock", "ap", seed);
            if let Some(l) = w.linux[0].as_mut() {
                l.sender.send(0, &mut w.segs);
                l.sender.tsq_release(1 << 20);
            }
            w.segs.clear();
            let ack = tcp_packet(Node::Station(0), Node::Ap, Segment::Ack { ack: 2, sacked: None, tsecr: 0 });
            let tx = Tx::Sta { station: 0, queue: 0, frames: vec![ack], airtime_ns: 1_000_000 };
            let end = exchange_of(&mut w, 1, tx);
            assert_eq!(slots_after_aifs(&mut w, 0, aifs, end), 0, "seed {seed}: the AP drew no backoff");
        }
    }
}
