//! A simulated mt76 data path in passed-in time, with fault injection: DMA queues that
//! refuse descriptors, tx-free events lost or late, per-station rate, tries and ack
//! changes, and WTBL airtime words that can be set near their clear bit.
//!
//! The simulated hardware fetches every kicked descriptor at [`SimHal::advance`] (the
//! DMA queue frees them at once: DMA done and cleanup), transmits each at its station's
//! current rate, adds the airtime to the station's WTBL words, and reports a tx-free
//! event [`SimConfig::tx_free_delay_us`] later. Every method takes `&self` and locks
//! only what it touches, so tests drive it from several threads.

use crate::hal::{
    AirtimeWords, DmaError, DmaQueues, MT7603_TX_RING_SIZE, StatusSink, Token, TxDesc, TxFree, TxFreeSource, TxReport,
    WtblCounters,
};
use crate::lock::SpinLock;
use airtime_est::{Rate, expected_tx_airtime_us};
use airtime_sched::{Ac, Instant, PerAc};
use alloc::collections::{BTreeMap, VecDeque};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The simulated hardware's settings.
#[derive(Clone, Copy, Debug)]
pub struct SimConfig {
    /// Descriptors per DMA queue (`ndesc`).
    pub ndesc: u32,
    /// From the fetch of a descriptor to its tx-free event, in us.
    pub tx_free_delay_us: u64,
    /// The rate of a station the test set none for.
    pub default_rate: Option<Rate>,
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            ndesc: MT7603_TX_RING_SIZE,
            tx_free_delay_us: 1000,
            default_rate: Rate::ht(7, airtime_est::Bandwidth::Mhz20, false).ok(),
        }
    }
}

#[derive(Default)]
struct Queue {
    descs: VecDeque<TxDesc>,
    /// Descriptors written before the last kick: the hardware may fetch them.
    kicked: usize,
    refusals: VecDeque<DmaError>,
}

#[derive(Clone, Copy)]
struct Wtbl {
    words: AirtimeWords,
    rate: Option<Rate>,
    tries: u8,
    acked: bool,
}

#[derive(Default)]
struct Events {
    /// Reported at their due time.
    pending: VecDeque<(Instant, TxFree)>,
    ready: VecDeque<TxFree>,
    lose_next: u32,
    delay_next: u32,
    delay_us: u64,
}

/// The simulated HAL, for frames of type `F`.
pub struct SimHal<F> {
    config: SimConfig,
    queues: PerAc<SpinLock<Queue>>,
    wtbl: SpinLock<BTreeMap<u16, Wtbl>>,
    events: SpinLock<Events>,
    done: SpinLock<Vec<(F, TxReport)>>,
    lost: AtomicU32,
    fetched: AtomicU64,
}

impl<F> core::fmt::Debug for SimHal<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SimHal").field("config", &self.config).finish_non_exhaustive()
    }
}

impl<F> SimHal<F> {
    /// Simulated hardware with `config`.
    pub fn new(config: SimConfig) -> SimHal<F> {
        SimHal {
            config,
            queues: PerAc::from_fn(|_| SpinLock::new(Queue::default())),
            wtbl: SpinLock::new(BTreeMap::new()),
            events: SpinLock::new(Events::default()),
            done: SpinLock::new(Vec::new()),
            lost: AtomicU32::new(0),
            fetched: AtomicU64::new(0),
        }
    }

    fn queue(&self, ac: Ac) -> &SpinLock<Queue> {
        &self.queues[ac]
    }

    fn fresh(&self) -> Wtbl {
        Wtbl { words: AirtimeWords::default(), rate: self.config.default_rate, tries: 1, acked: true }
    }

    fn entry(&self, wcid: u16) -> Wtbl {
        self.wtbl.lock().get(&wcid).copied().unwrap_or_else(|| self.fresh())
    }

    /// Changes `wcid`'s entry under one hold of the table's lock.
    fn update(&self, wcid: u16, f: impl FnOnce(&mut Wtbl)) {
        let fresh = self.fresh();
        let mut table = self.wtbl.lock();
        f(table.entry(wcid).or_insert(fresh));
    }

    /// Station `wcid` is sent to at `rate` from now on (rate control moved).
    pub fn set_rate(&self, wcid: u16, rate: Option<Rate>) {
        self.update(wcid, |e| e.rate = rate);
    }

    /// Frames to `wcid` take `tries` transmissions and end `acked` or not.
    pub fn set_tries(&self, wcid: u16, tries: u8, acked: bool) {
        self.update(wcid, |e| {
            e.tries = tries.max(1);
            e.acked = acked;
        });
    }

    /// Sets the WTBL airtime words of `wcid` (e.g. near the clear bit).
    pub fn set_airtime_words(&self, wcid: u16, words: AirtimeWords) {
        self.update(wcid, |e| e.words = words);
    }

    /// Adds received airtime to `wcid`'s words on `ac`.
    pub fn add_rx_airtime(&self, wcid: u16, ac: Ac, us: u32) {
        self.update(wcid, |e| e.words.rx_us[ac] = e.words.rx_us[ac].wrapping_add(us));
    }

    /// The next writes to the queue of `ac` are refused with these errors, one each.
    pub fn fail_dma(&self, ac: Ac, errors: impl IntoIterator<Item = DmaError>) {
        self.queue(ac).lock().refusals.extend(errors);
    }

    /// The next `n` tx-free events are lost (the frames were sent: their airtime is in
    /// the WTBL words).
    pub fn lose_tx_free(&self, n: u32) {
        let mut e = self.events.lock();
        e.lose_next = e.lose_next.saturating_add(n);
    }

    /// The next `n` tx-free events come `extra_us` late.
    pub fn delay_tx_free(&self, n: u32, extra_us: u64) {
        let mut e = self.events.lock();
        e.delay_next = e.delay_next.saturating_add(n);
        e.delay_us = extra_us;
    }

    /// The hardware runs until `now`: it fetches every kicked descriptor, transmits it,
    /// and reports the tx-free events that are due.
    pub fn advance(&self, now: Instant) {
        for ac in Ac::ALL {
            let fetched: Vec<TxDesc> = {
                let mut q = self.queue(ac).lock();
                let n = q.kicked.min(q.descs.len());
                q.kicked = 0;
                q.descs.drain(..n).collect()
            };
            for desc in fetched {
                self.transmit(desc, now);
            }
        }
        let mut ev = self.events.lock();
        let mut keep = VecDeque::new();
        while let Some((due, event)) = ev.pending.pop_front() {
            if due <= now {
                ev.ready.push_back(event);
            } else {
                keep.push_back((due, event));
            }
        }
        ev.pending = keep;
    }

    fn transmit(&self, desc: TxDesc, now: Instant) {
        self.fetched.fetch_add(1, Ordering::Relaxed);
        let (rate, tries, acked) = match desc.wcid {
            Some(wcid) => {
                let e = self.entry(wcid);
                let airtime = e
                    .rate
                    .map_or(0, |r| expected_tx_airtime_us(r, desc.len_bytes, desc.ac.aggregated()))
                    .saturating_mul(u32::from(e.tries));
                self.update(wcid, |w| {
                    w.words.tx_us[desc.ac] = w.words.tx_us[desc.ac].wrapping_add(airtime);
                });
                (e.rate, e.tries, e.acked)
            }
            None => (self.config.default_rate, 1, true),
        };
        let event = TxFree { token: desc.token, wcid: desc.wcid, tries, acked, rate };
        let mut ev = self.events.lock();
        if let Some(rest) = ev.lose_next.checked_sub(1) {
            ev.lose_next = rest;
            self.lost.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let mut due = now.add_micros(self.config.tx_free_delay_us);
        if let Some(rest) = ev.delay_next.checked_sub(1) {
            ev.delay_next = rest;
            due = due.add_micros(ev.delay_us);
        }
        ev.pending.push_back((due, event));
    }

    /// A reset's DMA part (`mt7915_dma_reset`): the queues lose every descriptor not
    /// yet fetched, and tx-free events not yet reported are gone, so the hardware holds
    /// nothing of the frames whose tokens the adapter then flushes
    /// ([`Mt76::reset_tokens`](crate::Mt76::reset_tokens)). It does not stop later
    /// writes: the adapter's [`Mt76::stop_tx`](crate::Mt76::stop_tx), called before,
    /// does. Returns the descriptors and events dropped.
    pub fn reset_dma(&self) -> usize {
        let mut n = 0usize;
        for ac in Ac::ALL {
            let mut q = self.queue(ac).lock();
            n = n.saturating_add(q.descs.len());
            q.descs.clear();
            q.kicked = 0;
        }
        let mut ev = self.events.lock();
        n = n.saturating_add(ev.pending.len()).saturating_add(ev.ready.len());
        ev.pending.clear();
        ev.ready.clear();
        n
    }

    /// The WTBL airtime words of `wcid` now.
    pub fn airtime_words(&self, wcid: u16) -> AirtimeWords {
        self.entry(wcid).words
    }

    /// Takes the frames handed back to the stack so far, with their reports.
    pub fn take_done(&self) -> Vec<(F, TxReport)> {
        core::mem::take(&mut *self.done.lock())
    }

    /// How many frames were handed back so far and not taken.
    pub fn done_len(&self) -> usize {
        self.done.lock().len()
    }

    /// Tx-free events not yet reported (in the air or late).
    pub fn events_in_flight(&self) -> usize {
        let ev = self.events.lock();
        ev.pending.len().saturating_add(ev.ready.len())
    }

    /// Tx-free events lost so far.
    pub fn lost_tx_free(&self) -> u32 {
        self.lost.load(Ordering::Relaxed)
    }

    /// Descriptors the hardware fetched so far.
    pub fn fetched(&self) -> u64 {
        self.fetched.load(Ordering::Relaxed)
    }

    /// Descriptors written to the queue of `ac`, oldest first, not yet fetched.
    pub fn descs(&self, ac: Ac) -> Vec<TxDesc> {
        self.queue(ac).lock().descs.iter().copied().collect()
    }

    /// Reports a tx-free event for `token` now (a duplicate or forged one, for tests).
    pub fn inject_tx_free(&self, event: TxFree) {
        self.events.lock().ready.push_back(event);
    }

    /// The token of the oldest descriptor of `ac` not yet fetched.
    pub fn oldest_token(&self, ac: Ac) -> Option<Token> {
        self.queue(ac).lock().descs.front().map(|d| d.token)
    }
}

impl<F> DmaQueues for SimHal<F> {
    fn ndesc(&self, _ac: Ac) -> u32 {
        self.config.ndesc
    }

    fn queued(&self, ac: Ac) -> u32 {
        u32::try_from(self.queue(ac).lock().descs.len()).unwrap_or(u32::MAX)
    }

    fn queue_desc(&self, desc: TxDesc) -> Result<(), DmaError> {
        let mut q = self.queue(desc.ac).lock();
        if let Some(e) = q.refusals.pop_front() {
            return Err(e);
        }
        if q.descs.len() >= self.config.ndesc as usize {
            return Err(DmaError::Full);
        }
        q.descs.push_back(desc);
        Ok(())
    }

    fn kick(&self, ac: Ac) {
        let mut q = self.queue(ac).lock();
        q.kicked = q.descs.len();
    }
}

impl<F> TxFreeSource for SimHal<F> {
    fn next_tx_free(&self) -> Option<TxFree> {
        self.events.lock().ready.pop_front()
    }
}

impl<F> WtblCounters for SimHal<F> {
    fn airtime(&self, wcid: u16) -> AirtimeWords {
        self.entry(wcid).words
    }

    fn clear_airtime(&self, wcid: u16) {
        self.update(wcid, |e| e.words = AirtimeWords::default());
    }

    fn tx_rate(&self, wcid: u16) -> Option<Rate> {
        self.entry(wcid).rate
    }
}

impl<F> StatusSink<F> for SimHal<F> {
    fn tx_status(&self, frame: F, report: TxReport) {
        self.done.lock().push((frame, report));
    }
}
