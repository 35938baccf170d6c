//! `Scheduler::release_batch` against `Scheduler::release` one by one, on twin
//! schedulers given the same operations: up to 4096 stations (the raw token's whole
//! slot range), charges on every AC through `charge_us` and `charge_frame`, tokens
//! kept whole or raw (`Charge::into_raw`/`from_raw`, as a C driver keeps them),
//! completion passes of any size and order over any number of (station, AC) groups,
//! stations removed with charges in flight and their slots reused, and a driver's
//! mistakes: a raw token handed back twice or tens of thousands of times in one pass
//! (a group whose sum would wrap 32 bits), forged raw values, tokens of a slot's
//! earlier occupant.
//!
//! After every pass: the batch counts every token once and reports what the one-by-one
//! releases reported (released, unknown, whether any clamped), and both schedulers
//! hold the same pending airtime on every AC and for every station, with
//! `check_invariants` holding on both. While the driver has made no mistake, every
//! batch is clean and the pending airtime is exactly the charges still in hand; at
//! the end, with every token handed back, nothing is pending on either.

#![no_main]

use airtime_sched::{
    Ac, Charge, ChargeError, Config, ReleaseError, Scheduler, Station, StationErrorKind, StationId, Weight,
};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Capacity {
    /// 1 to 16 station slots.
    Few(u8),
    /// 1 to 4096 station slots.
    Many(u16),
}

#[derive(Arbitrary, Debug)]
struct Input {
    capacity: Capacity,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    AddStation {
        weight: u16,
    },
    /// Up to 512 stations at once.
    AddStations {
        count: u16,
    },
    RemoveStation {
        sta: u16,
    },
    /// One frame charged `us` (`charge_us`) or priced by the station (`charge_frame`,
    /// `price` 0: it cannot price yet); its token kept raw or whole.
    Charge {
        sta: u16,
        ac: u8,
        us: u16,
        by_frame: Option<u16>,
        raw: bool,
    },
    /// One frame for each of `count` stations from `first` on, on each AC of `acs`:
    /// what a round over many stations leaves in the ring.
    ChargeSpan {
        first: u16,
        count: u16,
        acs: u8,
        us: u16,
        raw: bool,
    },
    /// A completion pass: `n` tokens from the `skip`-th on, in order or interleaved.
    Pass {
        n: u16,
        skip: u16,
        stride: u8,
    },
    /// A raw token handed back once more (in the next pass).
    Again {
        k: u16,
    },
    /// A raw value no charge produced (in the next pass).
    Forged {
        raw: u32,
    },
    /// A station charged the largest charge until its pending airtime would pass
    /// `u32::MAX` us (`ChargeError::PendingOverflow`: a driver that never releases).
    Overflow {
        sta: u16,
        ac: u8,
    },
    /// A raw token handed back `times` times in one pass (up to 70 000: one group
    /// whose sum would wrap 32 bits).
    Flood {
        k: u16,
        times: u32,
    },
}

struct Priced {
    id: StationId,
    price_us: u32,
}

impl Station for Priced {
    type Error = StationErrorKind;
    fn station_id(&self) -> StationId {
        self.id
    }
    fn last_tx_rate(&self) -> Option<airtime_est::Rate> {
        None
    }
    fn expected_airtime_us(&self, _: u32, _: Ac) -> Result<u32, StationErrorKind> {
        if self.price_us == 0 { Err(StationErrorKind::NoRate) } else { Ok(self.price_us) }
    }
}

/// A token in the driver's hands: both twins' charges, whole or raw (the raw values
/// are equal: the twins issue the same handles).
enum Token {
    Whole(Charge, Charge),
    Raw(u32),
}

struct Twins {
    one: Scheduler,
    batch: Scheduler,
    /// Live stations (same handles on both).
    stas: Vec<StationId>,
    /// Every station ever added, to compare per-station counters.
    ever: Vec<StationId>,
    tokens: Vec<Token>,
    /// Raw values of genuine charges, for `Again` and `Flood`.
    history: Vec<u32>,
    /// The driver's mistakes waiting for the next pass.
    extra: Vec<u32>,
    /// No mistake handed in yet: conservation must hold exactly.
    clean: bool,
    /// Airtime of the genuine tokens in hand, per AC.
    in_hand: [u64; Ac::COUNT],
}

fn ac_of(v: u8) -> Ac {
    Ac::ALL[usize::from(v) % Ac::COUNT]
}

impl Twins {
    fn add_station(&mut self, weight: u16) {
        let w = Weight::new(weight.max(1)).unwrap();
        match (self.one.add_station(w), self.batch.add_station(w)) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b);
                self.stas.push(a);
                if !self.ever.contains(&a) {
                    self.ever.push(a);
                }
            }
            (Err(a), Err(b)) => assert_eq!(a, b),
            (a, b) => panic!("the twins disagree on add_station: {a:?} {b:?}"),
        }
    }

    fn charge(&mut self, sta: StationId, ac: Ac, us: u32, by_frame: Option<u16>, raw: bool) {
        let (a, b) = match by_frame {
            None => (self.one.charge_us(sta, ac, us), self.batch.charge_us(sta, ac, us)),
            Some(price) => {
                let st = Priced { id: sta, price_us: u32::from(price) };
                (self.one.charge_frame(&st, ac, 1500), self.batch.charge_frame(&st, ac, 1500))
            }
        };
        let (a, b) = match (a, b) {
            (Ok(a), Ok(b)) => (a, b),
            // A station an `Overflow` filled: both refuse, nothing is counted.
            (Err(ChargeError::PendingOverflow), Err(ChargeError::PendingOverflow)) => return,
            (a, b) => panic!("a live station is charged: {a:?} {b:?}"),
        };
        assert_eq!((a.station(), a.ac(), a.airtime_us()), (b.station(), b.ac(), b.airtime_us()));
        assert!(a.airtime_us() % 4 == 0 && (4..=Charge::MAX_US).contains(&a.airtime_us()));
        self.in_hand[ac.index()] += u64::from(a.airtime_us());
        // The raw form's documented layout (`Charge::into_raw`), for `Again` and `Flood`.
        let expected = (a.airtime_us() / 4)
            | ((ac.index() as u32) << 14)
            | ((sta.index() as u32) << 16)
            | ((((sta.to_raw() >> 32) & 0xf) as u32) << 28);
        self.history.push(expected);
        if raw {
            let (ra, rb) = (a.into_raw(), b.into_raw());
            assert_eq!((ra, rb), (expected, expected));
            self.tokens.push(Token::Raw(ra));
        } else {
            self.tokens.push(Token::Whole(a, b));
        }
    }

    /// Charges the largest charge until the station's pending airtime would pass
    /// `u32::MAX` us: both twins refuse the same charge and count nothing for it.
    fn overflow(&mut self, sta: StationId, ac: Ac) {
        loop {
            let room = u64::from(u32::MAX) - u64::from(self.one.station_pending_us(sta, ac).unwrap());
            if room < u64::from(Charge::MAX_US) {
                let before = self.one.phy_aql_pending();
                assert_eq!(self.one.charge_us(sta, ac, Charge::MAX_US), Err(ChargeError::PendingOverflow));
                assert_eq!(self.batch.charge_us(sta, ac, Charge::MAX_US), Err(ChargeError::PendingOverflow));
                assert_eq!(self.one.phy_aql_pending(), before, "a refused charge counts nothing");
                return;
            }
            self.charge(sta, ac, Charge::MAX_US, None, true);
        }
    }

    /// Every counter of the twins agrees; both pass `check_invariants`.
    fn compare(&mut self) {
        assert_eq!(self.one.phy_aql_pending(), self.batch.phy_aql_pending());
        assert_eq!(self.one.underflows() > 0, self.batch.underflows() > 0);
        for &sta in &self.ever {
            for ac in Ac::ALL {
                assert_eq!(self.one.station_pending_us(sta, ac), self.batch.station_pending_us(sta, ac), "{sta} {ac}");
            }
        }
        if self.clean {
            for ac in Ac::ALL {
                // The counter reads saturate at u32::MAX us (71 minutes in flight).
                let expected = self.in_hand[ac.index()].min(u64::from(u32::MAX));
                assert_eq!(u64::from(self.one.ac_pending_us(ac)), expected, "{ac}");
            }
            assert_eq!((self.one.underflows(), self.batch.underflows()), (0, 0));
        }
        self.one.check_invariants_quiescent().unwrap();
        self.batch.check_invariants_quiescent().unwrap();
    }

    /// Hands `picked` and the pending mistakes back: one by one to `one`, in one
    /// `release_batch` to `batch`.
    fn pass(&mut self, picked: Vec<Token>) {
        let extra = std::mem::take(&mut self.extra);
        if !extra.is_empty() {
            self.clean = false;
        }
        let (mut ok, mut unknown, mut underflow) = (0u32, 0u32, 0u32);
        let mut for_batch = Vec::with_capacity(picked.len() + extra.len());
        let mut count = |r: Result<(), ReleaseError>| match r {
            Ok(()) => ok += 1,
            Err(ReleaseError::Underflow) => {
                ok += 1;
                underflow += 1
            }
            Err(_) => unknown += 1,
        };
        for t in picked {
            match t {
                Token::Whole(a, b) => {
                    self.in_hand[a.ac().index()] -= u64::from(a.airtime_us());
                    count(self.one.release(a));
                    for_batch.push(b);
                }
                Token::Raw(raw) => {
                    let (a, b) = (Charge::from_raw(raw).unwrap(), Charge::from_raw(raw).unwrap());
                    self.in_hand[a.ac().index()] -= u64::from(a.airtime_us());
                    count(self.one.release(a));
                    for_batch.push(b);
                }
            }
        }
        for raw in extra {
            match (Charge::from_raw(raw), Charge::from_raw(raw)) {
                (Some(a), Some(b)) => {
                    count(self.one.release(a));
                    for_batch.push(b);
                }
                // A zero charge: `from_raw` refuses it, nothing is handed in.
                (None, None) => {}
                _ => unreachable!("from_raw is a function of the value"),
            }
        }
        let n = for_batch.len() as u32;
        let before = self.batch.underflows();
        let done = self.batch.release_batch(for_batch);
        assert_eq!(done.released + done.unknown_station, n, "every token counted once: {done:?}");
        assert_eq!(done.released, ok, "{done:?}");
        assert_eq!(done.unknown_station, unknown, "{done:?}");
        assert_eq!(done.underflows > 0, underflow > 0, "{done:?} against {underflow} clamps one by one");
        assert_eq!(self.batch.underflows() - before, u64::from(done.underflows));
        assert_eq!(done.is_clean(), unknown == 0 && underflow == 0);
        if self.clean {
            assert!(done.is_clean(), "{done:?}");
        }
        self.compare();
    }
}

fuzz_target!(|input: Input| {
    let max_stations = match input.capacity {
        Capacity::Few(n) => u16::from(n % 16) + 1,
        Capacity::Many(n) => n % Config::MAX_STATIONS + 1,
    };
    let mut config = Config::default();
    config.max_stations = max_stations;
    // No txq is needed: one slot keeps the invariant check's txq half empty.
    config.max_txqs = 1;
    let mut t = Twins {
        one: Scheduler::new(config).unwrap(),
        batch: Scheduler::new(config).unwrap(),
        stas: Vec::new(),
        ever: Vec::new(),
        tokens: Vec::new(),
        history: Vec::new(),
        extra: Vec::new(),
        clean: true,
        in_hand: [0; Ac::COUNT],
    };
    for op in input.ops.iter().take(192) {
        match *op {
            Op::AddStation { weight } => t.add_station(weight),
            Op::AddStations { count } => {
                for i in 0..count % 513 {
                    t.add_station(i.wrapping_mul(37));
                }
            }
            Op::RemoveStation { sta } => {
                if t.stas.is_empty() {
                    continue;
                }
                let id = t.stas.swap_remove(usize::from(sta) % t.stas.len());
                t.one.remove_station(id).unwrap();
                t.batch.remove_station(id).unwrap();
            }
            Op::Charge { sta, ac, us, by_frame, raw } => {
                if t.stas.is_empty() {
                    continue;
                }
                let id = t.stas[usize::from(sta) % t.stas.len()];
                t.charge(id, ac_of(ac), u32::from(us), by_frame, raw);
            }
            Op::ChargeSpan { first, count, acs, us, raw } => {
                if t.stas.is_empty() {
                    continue;
                }
                for i in 0..usize::from(count).min(t.stas.len()) {
                    let id = t.stas[(usize::from(first) + i) % t.stas.len()];
                    for ac in Ac::ALL.into_iter().filter(|ac| acs & (1 << ac.index()) != 0) {
                        t.charge(id, ac, u32::from(us), None, raw);
                    }
                }
            }
            Op::Pass { n, skip, stride } => {
                let len = t.tokens.len();
                let n = usize::from(n).min(len);
                let from = usize::from(skip) % (len - n + 1);
                let mut picked: Vec<Token> = t.tokens.drain(from..from + n).collect();
                // Interleave: completions of several rings or reorderings.
                let stride = usize::from(stride % 8) + 1;
                if stride > 1 {
                    let mut order: Vec<usize> = (0..n).collect();
                    order.sort_by_key(|i| (i % stride, *i));
                    let mut slots: Vec<Option<Token>> = picked.into_iter().map(Some).collect();
                    picked = order.into_iter().map(|i| slots[i].take().unwrap()).collect();
                }
                t.pass(picked);
            }
            Op::Again { k } => {
                if !t.history.is_empty() {
                    t.extra.push(t.history[usize::from(k) % t.history.len()]);
                }
            }
            Op::Forged { raw } => t.extra.push(raw),
            Op::Overflow { sta, ac } => {
                if t.stas.is_empty() {
                    continue;
                }
                let id = t.stas[usize::from(sta) % t.stas.len()];
                t.overflow(id, ac_of(ac));
            }
            Op::Flood { k, times } => {
                if t.history.is_empty() {
                    continue;
                }
                let raw = t.history[usize::from(k) % t.history.len()];
                t.extra.extend(std::iter::repeat_n(raw, (times % 70_000) as usize + 1));
                t.pass(Vec::new());
            }
        }
        t.compare();
    }
    // Everything handed back: nothing stays pending, whatever the mistakes.
    let rest = std::mem::take(&mut t.tokens);
    t.pass(rest);
    assert_eq!(t.in_hand, [0; Ac::COUNT]);
    assert_eq!((t.one.total_pending_us(), t.batch.total_pending_us()), (0, 0));
});
