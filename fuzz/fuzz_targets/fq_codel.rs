//! Enqueue, dequeue, time-advance (also backwards), purge and drain sequences on one
//! FQ-CoDel txq with small limits: no frame lost or duplicated apart from the counted
//! drops (CoDel, packet limit, memory limit, purge), every kept drop matches its
//! counter, and the byte, packet and memory accounting is exact at every step.

#![no_main]

use airtime_sched::fq_codel::{DropReason, FqCodelConfig, FqCodelStats, FqCodelTxq, FqFrame};
use airtime_sched::{Frame, Instant, Txq};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use std::collections::HashMap;

#[derive(Debug)]
struct Pkt {
    id: u64,
    flow: u32,
    len: u32,
    truesize: u32,
    ecn: bool,
    accept_ce: bool,
    marked: bool,
}

impl Frame for Pkt {
    fn len_bytes(&self) -> u32 {
        self.len
    }
}

impl FqFrame for Pkt {
    fn flow_hash(&self) -> u32 {
        self.flow
    }
    fn truesize(&self) -> u32 {
        self.truesize
    }
    fn ecn_capable(&self) -> bool {
        self.ecn
    }
    fn set_ce(&mut self) -> bool {
        if self.accept_ce {
            self.marked = true;
        }
        self.accept_ce
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    flows: u8,
    quantum: u16,
    packet_limit: u8,
    memory_limit: u16,
    target_us: u16,
    interval_us: u32,
    ecn: bool,
    drop_everything_at_once: bool,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Enqueue { flow: u8, len: u16, extra: u8, ecn: bool, accept_ce: bool },
    EnqueueAnyHash { flow: u32, len: u16 },
    Burst { flow: u8, n: u8, len: u16 },
    Dequeue { n: u8 },
    Advance { us: u32 },
    Rewind { us: u16 },
    Purge,
    Drain,
    /// The txq ends (`retire`: its station left) and a fresh one takes its place; its
    /// counters go to the radio-wide total (`FqCodelStats::accumulate`).
    Retire,
}

#[derive(Default)]
struct Books {
    /// Frames accepted and not seen again (queued, or dropped and not drained): id -> (len, truesize).
    live: HashMap<u64, (u32, u32)>,
    next_id: u64,
    tx_packets: u64,
    tx_bytes: u64,
    marks: u64,
    drained: [u64; 5],
}

fn reason_index(r: DropReason) -> usize {
    match r {
        DropReason::Codel => 0,
        DropReason::PacketLimit => 1,
        DropReason::MemoryLimit => 2,
        DropReason::OutOfMemory => 3,
        DropReason::Purged => 4,
        _ => unreachable!("a drop reason the target does not know: {r:?}"),
    }
}

struct Harness {
    txq: FqCodelTxq<Pkt>,
    b: Books,
    now: Instant,
    keep: bool,
    /// The retired txqs' counters, accumulated, and what each of their sums must be.
    total: FqCodelStats,
    retired: FqCodelStats,
}

impl Harness {
    fn enqueue(&mut self, flow: u32, len: u32, truesize: u32, ecn: bool, accept_ce: bool) {
        let id = self.b.next_id;
        self.b.next_id += 1;
        let before = self.txq.stats().dropped();
        self.b.live.insert(id, (len, truesize));
        let p = Pkt { id, flow, len, truesize, ecn, accept_ce, marked: false };
        let outcome = self.txq.enqueue(p, self.now);
        let after = self.txq.stats().dropped();
        assert_eq!(u64::from(outcome.dropped()), after - before, "{outcome:?}");
        if self.keep && self.txq.stats().unkept_drops == 0 {
            // The frame itself is among this enqueue's drops iff the outcome says so.
            self.drain();
            assert_eq!(self.b.live.contains_key(&id), outcome.is_queued(), "{outcome:?}");
        }
    }

    fn drain(&mut self) {
        let keep = self.keep;
        let mut seen = Vec::new();
        for d in self.txq.drain_drops() {
            assert!(keep, "drops kept although keep_dropped is off");
            seen.push((d.frame.id, reason_index(d.reason)));
        }
        for (id, reason) in seen {
            assert!(self.b.live.remove(&id).is_some(), "dropped frame {id} was not live (lost or duplicated)");
            self.b.drained[reason] += 1;
        }
    }

    fn dequeue(&mut self) -> bool {
        match self.txq.dequeue(self.now) {
            Ok(Some(p)) => {
                if self.keep {
                    assert!(self.b.live.remove(&p.id).is_some(), "dequeued frame {} twice or never queued", p.id);
                } else {
                    assert!(p.id < self.b.next_id);
                }
                assert!(!p.marked || p.ecn, "a non-ECN frame was marked");
                self.b.marks += u64::from(p.marked);
                self.b.tx_packets += 1;
                self.b.tx_bytes += u64::from(p.len);
                true
            }
            Ok(None) => {
                assert_eq!(self.txq.backlog_packets(), 0, "empty dequeue with a backlog");
                false
            }
            Err(e) => match e {},
        }
    }

    /// Ends the txq: every frame it still holds (queued, or dropped and not drained)
    /// comes back once, its final counters close, and they add to the total.
    fn retire(&mut self) {
        let config = *self.txq.config();
        let before = self.txq.stats();
        let fresh = FqCodelTxq::new(config).expect("the config was valid");
        let r = std::mem::replace(&mut self.txq, fresh).retire();
        let s = r.stats;
        assert_eq!((s.backlog_packets, s.backlog_bytes, s.memory_usage), (0, 0, 0), "{s:?}");
        assert_eq!(s.enqueued, s.tx_packets + s.dropped(), "{s:?}");
        assert_eq!(s.purged, before.purged + before.backlog_packets);
        let purged = r.frames.iter().filter(|d| d.reason == DropReason::Purged).count() as u64;
        assert!(purged >= before.backlog_packets, "the queued frames come back purged");
        if self.keep && before.unkept_drops == 0 {
            let mut got: Vec<u64> = r.frames.iter().map(|d| d.frame.id).collect();
            let mut live: Vec<u64> = self.b.live.keys().copied().collect();
            got.sort_unstable();
            live.sort_unstable();
            assert_eq!(got, live, "a retired txq hands back exactly what it held");
        } else if !self.keep {
            assert_eq!(r.frames.len() as u64, before.backlog_packets, "queued frames come back with keep_dropped off");
        }
        let sum = self.total;
        self.total.accumulate(&s);
        for (t, a, b) in [
            (self.total.enqueued, sum.enqueued, s.enqueued),
            (self.total.tx_packets, sum.tx_packets, s.tx_packets),
            (self.total.purged, sum.purged, s.purged),
            (self.total.codel_drops, sum.codel_drops, s.codel_drops),
            (self.total.overlimit_drops, sum.overlimit_drops, s.overlimit_drops),
            (self.total.tx_bytes, sum.tx_bytes, s.tx_bytes),
        ] {
            assert_eq!(t, a.saturating_add(b), "accumulate adds the counters");
        }
        assert_eq!(self.total.enqueued, self.total.tx_packets + self.total.dropped() + self.total.backlog_packets);
        self.retired = self.total;
        self.b = Books::default();
    }

    fn check(&mut self) {
        let s = self.txq.stats();
        assert_eq!(s.enqueued, s.tx_packets + s.dropped() + s.backlog_packets, "{s:?}");
        assert_eq!((s.tx_packets, s.tx_bytes), (self.b.tx_packets, self.b.tx_bytes));
        assert_eq!(s.codel_ce_marks, self.b.marks);
        assert_eq!(s.enqueued, self.b.next_id);
        assert_eq!(self.txq.is_empty(), s.backlog_packets == 0);
        assert_eq!(self.txq.peek_len().is_some(), s.backlog_packets > 0);
        assert!(s.flows_active as u64 <= s.backlog_packets);
        assert_eq!(s.alloc_drops, 0);
        if self.keep && s.unkept_drops == 0 {
            self.drain();
            let d = self.b.drained;
            assert_eq!(
                [s.codel_drops, s.overlimit_drops, s.overmemory_drops, s.alloc_drops, s.purged],
                d,
                "drop counters vs kept drops"
            );
            assert_eq!(self.b.live.len() as u64, s.backlog_packets, "frames lost or duplicated");
            let bytes: u64 = self.b.live.values().map(|&(l, _)| u64::from(l)).sum();
            let mem: u64 = self.b.live.values().map(|&(_, t)| u64::from(t)).sum();
            assert_eq!((s.backlog_bytes, s.memory_usage), (bytes, mem));
        } else {
            assert_eq!(self.txq.pending_drops(), 0);
        }
        let cfg = self.txq.config();
        assert!(s.backlog_packets <= u64::from(cfg.packet_limit), "over the packet limit after enqueue");
        assert!(s.memory_usage <= cfg.memory_limit_bytes, "over the memory limit after enqueue");
    }
}

fuzz_target!(|input: Input| {
    let mut config = FqCodelConfig::default();
    config.flows = u32::from(input.flows % 64) + 1;
    config.quantum_bytes = u32::from(input.quantum % 3000) + 1;
    config.packet_limit = u32::from(input.packet_limit % 64) + 1;
    config.memory_limit_bytes = u64::from(input.memory_limit) * 8;
    config.codel_target_us = u64::from(input.target_us);
    config.codel_interval_us = u64::from(input.interval_us % 400_000) + 1;
    config.ecn = input.ecn;
    config.keep_dropped = !input.drop_everything_at_once;
    let Ok(txq) = FqCodelTxq::new(config) else { panic!("a valid config was refused: {config:?}") };
    let mut h = Harness {
        txq,
        b: Books::default(),
        now: Instant::from_micros(1_000_000),
        keep: config.keep_dropped,
        total: FqCodelStats::default(),
        retired: FqCodelStats::default(),
    };
    for op in input.ops.iter().take(512) {
        match *op {
            Op::Enqueue { flow, len, extra, ecn, accept_ce } => {
                let len = u32::from(len);
                h.enqueue(u32::from(flow).wrapping_mul(0x9E37_79B9), len, len + u32::from(extra), ecn, accept_ce)
            }
            Op::EnqueueAnyHash { flow, len } => h.enqueue(flow, len.into(), len.into(), false, false),
            Op::Burst { flow, n, len } => {
                for _ in 0..n % 32 {
                    h.enqueue(u32::from(flow) << 24, len.into(), u32::from(len) / 2, true, true);
                }
            }
            Op::Dequeue { n } => {
                for _ in 0..=n % 16 {
                    if !h.dequeue() {
                        break;
                    }
                }
            }
            Op::Advance { us } => h.now = h.now.add_micros(u64::from(us % 500_000)),
            Op::Rewind { us } => h.now = Instant::from_micros(h.now.micros().saturating_sub(u64::from(us))),
            Op::Purge => {
                let backlog = h.txq.backlog_packets();
                assert_eq!(h.txq.purge() as u64, backlog);
                assert_eq!((h.txq.backlog_packets(), h.txq.backlog_bytes()), (0, 0));
            }
            Op::Drain => {
                if h.keep {
                    h.drain();
                }
            }
            Op::Retire => h.retire(),
        }
        h.check();
    }
    // Serve everything left: the books must close.
    h.now = h.now.add_micros(1);
    while h.dequeue() {}
    h.check();
    assert_eq!(h.txq.backlog_packets(), 0);
    if h.keep && h.txq.stats().unkept_drops == 0 {
        assert!(h.b.live.is_empty(), "{} frames never came back", h.b.live.len());
    }
    // The last txq ends too: the radio-wide total covers every frame ever enqueued.
    let enqueued = h.retired.enqueued + h.txq.stats().enqueued;
    h.retire();
    assert_eq!(h.total.enqueued, enqueued);
});
