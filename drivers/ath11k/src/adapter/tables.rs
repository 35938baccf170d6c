//! The adapter's station table, sized once at creation so that the data path never
//! allocates, and readable from any context without a lock: every field of a record is
//! an atomic. It implements the core loop's [`StationTable`].
//!
//! # Concurrency
//! Readers (the wake and completion contexts: pricing a frame, PPDU stats and rx status
//! naming a peer) never lock. Writers are control operations, which may also run at
//! once (the adapter takes no control-plane lock):
//!
//! * a record is published by storing its station id last ([`StationRecord::id`]);
//!   removal takes the id back with a compare-and-swap first, so two removals of one
//!   station cannot both succeed and a removal never clears a later occupant;
//! * a firmware peer id is claimed before it is published (SeqCst, so of two claims
//!   at least one sees the other). A claim that meets a live record or a lower slot's
//!   claim for the same peer backs off; one that meets only higher slots' claims waits
//!   for them to resolve, since such a claim may have passed its own check before this
//!   one was made. Waits run from lower slots to higher ones only, so the highest
//!   claimer never waits and every wait ends; no two live records ever share a peer
//!   id, and of concurrent adds of one peer exactly one succeeds;
//! * a station's txq on a TID is reserved with a compare-and-swap tagged with the
//!   station's id, so two adds on one TID cannot both succeed and a late add for a
//!   removed station cannot write into the record of the slot's next occupant.
//!
//! A reader that looked a record up may see it change under it when the station is
//! removed and its slot reused meanwhile (there is no RCU here): the worst it gets is a
//! stale rate for pricing, and the scheduler refuses every charge or airtime report for
//! a station id that is no longer live.

use super::Ath11kError;
use super::calibration::{Sample, StationCalibration};
use crate::mu_charging::SCALE_ONE_Q8;
use airtime_est::{Bandwidth, CalibratorConfig, Encoding, HeGi, RATIO_ONE_Q16, Rate};
use airtime_sched::driver_loop::StationTable;
use airtime_sched::traits::price_from_rate;
use airtime_sched::{Ac, Station, StationErrorKind, StationId, Tid, TxqId};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};

/// What a peer id claim meets in the other records (`StationSlots::peer_seen`).
enum PeerSeen {
    Free,
    Taken,
    Pending,
}

/// "No station", "no txq", "no rate": a raw handle never has bits 16..32 all set with
/// every other bit set too (`to_raw` leaves bits 16..32 zero).
const NONE: u64 = u64::MAX;
/// Tags a txq slot reserved by an add in progress (with the station's raw id, whose
/// bits 16..32 are zero).
const RESERVED: u64 = 1 << 16;
/// "No peer".
const NO_PEER: u32 = u32::MAX;
/// Tags a peer id claimed by an add in progress.
const CLAIMING: u32 = 1 << 16;

/// TIDs a station can have a txq on: 0..=15 and [`Tid::MGMT`] (16).
const TIDS: usize = 17;

/// The adapter's record of a station: its firmware peer id, the rates the hardware last
/// reported for it, and its txqs. Read from any context; see the module's notes.
#[derive(Debug)]
pub struct StationRecord {
    id: AtomicU64,
    peer: AtomicU32,
    tx_rate: AtomicU64,
    rx_rate: AtomicU64,
    /// The AQL price scale of the station's next frames, in Q8 (256: as priced at its
    /// rate), from its last PPDU record ([`MuCharging::aql_scale_q8`](crate::MuCharging::aql_scale_q8)).
    mu_scale_q8: AtomicU32,
    /// The calibration of its estimate against PPDU stats ([`Config::calibration`]).
    ///
    /// [`Config::calibration`]: crate::Config::calibration
    calibration: StationCalibration,
    /// The station's txq of each TID (0..=15 and 16, the management txq).
    txqs: [AtomicU64; TIDS],
    /// The slot's last removed occupant not yet reported drained: its raw id with its
    /// peer id in bits 16..32 ([`departure`]), [`NONE`] if none. Kept apart from `id`
    /// and `peer`, which a later occupant takes once the scheduler reuses the slot.
    departed: AtomicU64,
}

impl StationRecord {
    fn empty(calibration: CalibratorConfig) -> StationRecord {
        StationRecord {
            id: AtomicU64::new(NONE),
            peer: AtomicU32::new(NO_PEER),
            tx_rate: AtomicU64::new(NONE),
            rx_rate: AtomicU64::new(NONE),
            mu_scale_q8: AtomicU32::new(SCALE_ONE_Q8),
            calibration: StationCalibration::new(calibration),
            txqs: [const { AtomicU64::new(NONE) }; TIDS],
            departed: AtomicU64::new(NONE),
        }
    }

    /// The scheduler's handle.
    pub fn id(&self) -> StationId {
        StationId::from_raw(self.id.load(Ordering::Acquire))
    }

    /// The firmware peer id (PPDU stats and rx status name stations by it).
    pub fn peer_id(&self) -> u16 {
        (self.peer.load(Ordering::Acquire) & 0xffff) as u16
    }

    /// The last tx rate PPDU stats reported.
    pub fn last_tx_rate(&self) -> Option<Rate> {
        unpack_rate(self.tx_rate.load(Ordering::Relaxed))
    }

    /// The last rx rate rx status reported.
    pub fn last_rx_rate(&self) -> Option<Rate> {
        unpack_rate(self.rx_rate.load(Ordering::Relaxed))
    }

    /// The station's txq on `tid`, if one was added.
    pub fn txq(&self, tid: Tid) -> Option<TxqId> {
        let raw = self.txqs.get(usize::from(tid.get()))?.load(Ordering::Acquire);
        (raw != NONE && raw & RESERVED == 0).then(|| TxqId::from_raw(raw))
    }

    pub(crate) fn set_tx_rate(&self, rate: Rate) {
        self.tx_rate.store(pack_rate(rate), Ordering::Relaxed);
    }

    /// The factor, in Q8, by which its frames' price at its rate is scaled (not 256 only
    /// after an MU PPDU under a share-based [`MuCharging`](crate::MuCharging)).
    pub fn mu_scale_q8(&self) -> u32 {
        self.mu_scale_q8.load(Ordering::Relaxed)
    }

    pub(crate) fn set_mu_scale_q8(&self, scale: u32) {
        self.mu_scale_q8.store(scale, Ordering::Relaxed);
    }

    /// The factor, Q16, by which the calibration of the estimate against PPDU stats
    /// scales its frames' price ([`Config::calibration`]; 65536 while it is off or
    /// warming up).
    ///
    /// [`Config::calibration`]: crate::Config::calibration
    pub fn calibration_ratio_q16(&self) -> u32 {
        // An empty slot's id (`NONE`) reads as generation 2^32 - 1, which its last
        // occupant may have had: an empty slot has no ratio of its own.
        match self.id.load(Ordering::Acquire) {
            NONE => RATIO_ONE_Q16,
            raw => self.calibration.ratio_q16(StationId::from_raw(raw)),
        }
    }

    /// One calibration sample of station `id` (see [`StationCalibration::record`]);
    /// stale if `id` no longer holds the record (removed, even before the slot is
    /// reused).
    pub(crate) fn calibrate(&self, id: StationId, charged_us: u64, measured_us: u64) -> Sample {
        if self.id.load(Ordering::Acquire) != id.to_raw() {
            return Sample::Stale;
        }
        self.calibration.record(id, charged_us, measured_us)
    }

    pub(crate) fn set_rx_rate(&self, rate: Rate) {
        self.rx_rate.store(pack_rate(rate), Ordering::Relaxed);
    }

    fn is(&self, id: StationId) -> bool {
        self.id.load(Ordering::Acquire) == id.to_raw()
    }
}

impl Station for StationRecord {
    type Error = StationErrorKind;

    fn station_id(&self) -> StationId {
        self.id()
    }

    /// The last tx rate from PPDU stats, or failing that the last rx rate (the peer's
    /// rate towards us is the best guess before the first tx report).
    fn last_tx_rate(&self) -> Option<Rate> {
        StationRecord::last_tx_rate(self).or(self.last_rx_rate())
    }

    /// The core's price at [`last_tx_rate`](Station::last_tx_rate), scaled by the
    /// station's MU scale ([`StationRecord::mu_scale_q8`]; 1 unless a share-based
    /// [`MuCharging`](crate::MuCharging) saw it in an MU PPDU last) and by its
    /// calibration ratio ([`StationRecord::calibration_ratio_q16`]; 1 unless
    /// calibration is on), rounded up.
    fn expected_airtime_us(&self, frame_len: u32, ac: Ac) -> Result<u32, StationErrorKind> {
        let us = price_from_rate(Station::last_tx_rate(self), frame_len, ac)?;
        let (mu, cal) = (self.mu_scale_q8(), self.calibration_ratio_q16());
        if mu == SCALE_ONE_Q8 && cal == RATIO_ONE_Q16 {
            return Ok(us);
        }
        // Q8 x Q16 = Q24; two u32 factors fit a u64 exactly, the price saturates.
        let scale_q24 = u64::from(mu).wrapping_mul(u64::from(cal));
        let scaled = u64::from(us).saturating_mul(scale_q24).saturating_add((1 << 24) - 1) >> 24;
        Ok(u32::try_from(scaled).unwrap_or(u32::MAX))
    }
}

/// A rate in one word (0..=62 bits), so that the record can hold it in an atomic.
fn pack_rate(r: Rate) -> u64 {
    let enc: u64 = match r.encoding() {
        Encoding::Cck => 1,
        Encoding::Ofdm => 2,
        Encoding::Ht => 3,
        Encoding::Vht => 4,
        Encoding::He => 5,
        Encoding::Eht => 6,
        _ => return NONE,
    };
    let bw = Bandwidth::ALL.iter().position(|b| *b == r.bandwidth()).unwrap_or(0) as u64;
    let gi = match r.he_gi() {
        Some(g) => HeGi::ALL.iter().position(|x| *x == g).unwrap_or(0) as u64,
        None => u64::from(r.short_gi() || r.short_preamble()),
    };
    let legacy = u64::from(r.legacy_rate_100kbps().unwrap_or(0));
    enc | u64::from(r.mcs().unwrap_or(0)) << 4 | u64::from(r.nss()) << 12 | bw << 20 | gi << 24 | legacy << 32
}

fn unpack_rate(w: u64) -> Option<Rate> {
    if w == NONE {
        return None;
    }
    let mcs = (w >> 4) as u8;
    let nss = (w >> 12) as u8;
    let bw = *Bandwidth::ALL.get(((w >> 20) & 0xf) as usize)?;
    let gi = ((w >> 24) & 0xf) as u8;
    let legacy = (w >> 32) as u16;
    let he_gi = || HeGi::ALL.get(usize::from(gi)).copied();
    match w & 0xf {
        1 => Rate::legacy_cck(legacy, gi == 1).ok(),
        2 => Rate::legacy_ofdm(legacy).ok(),
        3 => Rate::ht(mcs, bw, gi == 1).ok(),
        4 => Rate::vht(mcs, nss, bw, gi == 1).ok(),
        5 => Rate::he(mcs, nss, bw, he_gi()?).ok(),
        6 => Rate::eht(mcs, nss, bw, he_gi()?).ok(),
        _ => None,
    }
}

/// A departure in one word: the raw station id (bits 16..32 zero) with the peer id there.
fn departure(id: StationId, peer_id: u16) -> u64 {
    id.to_raw() | u64::from(peer_id) << 16
}

/// The station id and peer id of a [`departure`] word.
fn departure_parts(w: u64) -> (StationId, u16) {
    (StationId::from_raw(w & !(0xffff << 16)), (w >> 16) as u16)
}

/// Whether `a` is a later occupant of `b`'s slot than `b`: its generation is ahead,
/// modulo 2^32 (a slot is not reused 2^31 times while one removal is preempted).
fn is_later(a: StationId, b: StationId) -> bool {
    let generation = |id: StationId| (id.to_raw() >> 32) as u32;
    (generation(a).wrapping_sub(generation(b)) as i32) > 0
}

/// Stations by handle index. A peer id is found through a hint (where it was last
/// published) checked against the record, else by a scan of the records: an index
/// that had to stay exact would need a lock; one that is only checked does not.
pub(crate) struct StationSlots {
    slots: Vec<StationRecord>,
    /// Slot index + 1 (0: none) of the record last published with a peer id, at
    /// `peer_id & (len - 1)` (a power of two at least the slots' count, so peer ids
    /// handed out in order, as ath11k's are, each get their own). Read only as a
    /// hint: a stale or overwritten one costs the scan, never a wrong answer.
    peer_hints: Vec<AtomicU16>,
    /// The rate station-less (multicast) frames are priced at, packed as the records'
    /// rates; [`NONE`]: they are sent uncharged.
    multicast_rate: AtomicU64,
}

impl StationSlots {
    /// `n` empty records, whose calibrators (used only if calibration is on) take
    /// `calibration`.
    pub(crate) fn new(n: usize, calibration: CalibratorConfig) -> Result<Self, Ath11kError> {
        let mut slots = Vec::new();
        slots.try_reserve_exact(n).map_err(|_| Ath11kError::OutOfMemory)?;
        slots.resize_with(n, || StationRecord::empty(calibration));
        let hints = n.max(1).checked_next_power_of_two().ok_or(Ath11kError::OutOfMemory)?;
        let mut peer_hints = Vec::new();
        peer_hints.try_reserve_exact(hints).map_err(|_| Ath11kError::OutOfMemory)?;
        peer_hints.resize_with(hints, || AtomicU16::new(0));
        Ok(StationSlots { slots, peer_hints, multicast_rate: AtomicU64::new(NONE) })
    }

    /// Where `peer_id`'s hint lives.
    fn peer_hint(&self, peer_id: u16) -> Option<&AtomicU16> {
        // A power of two: the mask keeps the index in bounds.
        self.peer_hints.get(usize::from(peer_id) & self.peer_hints.len().wrapping_sub(1))
    }

    /// Prices station-less frames at `rate` from now on (`None`: uncharged).
    pub(crate) fn set_multicast_rate(&self, rate: Option<Rate>) {
        self.multicast_rate.store(rate.map_or(NONE, pack_rate), Ordering::Relaxed);
    }

    /// The rate station-less frames are priced at.
    pub(crate) fn multicast_rate(&self) -> Option<Rate> {
        unpack_rate(self.multicast_rate.load(Ordering::Relaxed))
    }

    /// Records the departure of `id` (just removed, with firmware peer `peer_id`) in its
    /// slot's record. Returns the peer id of an earlier departure of the same slot that
    /// was not reported yet: that one is drained (the scheduler reused its slot only
    /// once it was), and the caller reports it now.
    ///
    /// Records of one slot may arrive out of order: a removal that freed the slot (its
    /// station had nothing in flight) can be preempted before it records, while the
    /// slot's next occupant is added and removed and records first. Then the record
    /// found is the later one, which may still have frames in the rings: it stays, and
    /// this departure (drained: its slot was reused) is the one returned.
    pub(crate) fn record_departure(&self, id: StationId, peer_id: u16) -> Option<u16> {
        let r = self.slots.get(id.index())?;
        let new = departure(id, peer_id);
        let mut cur = r.departed.load(Ordering::Acquire);
        loop {
            if cur != NONE && is_later(departure_parts(cur).0, id) {
                return Some(peer_id);
            }
            match r.departed.compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return (cur != NONE).then(|| departure_parts(cur).1),
                Err(seen) => cur = seen,
            }
        }
    }

    /// Reports each recorded departure that `drained` says is drained to `on_drained`
    /// (its peer id), once: a compare-and-swap takes it, so two reapers never report one
    /// departure twice and a departure recorded meanwhile is left for the next reap.
    pub(crate) fn reap_departed(&self, drained: impl Fn(StationId) -> bool, mut on_drained: impl FnMut(u16)) -> u32 {
        let mut n = 0u32;
        for r in &self.slots {
            let w = r.departed.load(Ordering::Acquire);
            if w == NONE {
                continue;
            }
            let (id, peer) = departure_parts(w);
            if drained(id) && r.departed.compare_exchange(w, NONE, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                on_drained(peer);
                n = n.saturating_add(1);
            }
        }
        n
    }

    pub(crate) fn get(&self, id: StationId) -> Option<&StationRecord> {
        self.slots.get(id.index()).filter(|r| r.is(id))
    }

    /// The live station with firmware peer id `peer_id`.
    pub(crate) fn by_peer(&self, peer_id: u16) -> Option<StationId> {
        self.by_peer_record(peer_id).map(|(id, _)| id)
    }

    pub(crate) fn by_peer_record(&self, peer_id: u16) -> Option<(StationId, &StationRecord)> {
        // Relaxed: a hint; the record's own words are read with their orderings below.
        let hinted = self.peer_hint(peer_id).map_or(0, |h| h.load(Ordering::Relaxed));
        if let Some(found) =
            hinted.checked_sub(1).and_then(|i| self.slots.get(usize::from(i))).and_then(|r| Self::live_peer(r, peer_id))
        {
            return Some(found);
        }
        self.slots.iter().find_map(|r| Self::live_peer(r, peer_id))
    }

    /// The record's live occupant, if its peer id is `peer_id`. At most one live record
    /// has a given peer id (`publish`), so the hint's record, checked here, is the one
    /// the scan would find.
    fn live_peer(r: &StationRecord, peer_id: u16) -> Option<(StationId, &StationRecord)> {
        let before = r.id.load(Ordering::Acquire);
        if before == NONE || r.peer.load(Ordering::Acquire) != u32::from(peer_id) {
            return None;
        }
        // The peer id read belongs to the occupant seen before it if the id has not
        // changed since (peer ids are written before ids are published).
        (r.id.load(Ordering::Acquire) == before).then(|| (StationId::from_raw(before), r))
    }

    /// What a claim of `peer_id` by slot `except` meets in the other records: a live
    /// record or a lower slot's claim (taken), only higher slots' claims (pending), or
    /// nothing.
    fn peer_seen(&self, peer_id: u16, except: usize) -> PeerSeen {
        let mut seen = PeerSeen::Free;
        for (i, r) in self.slots.iter().enumerate() {
            if i == except {
                continue;
            }
            let p = r.peer.load(Ordering::SeqCst);
            if p == NO_PEER || p & 0xffff != u32::from(peer_id) {
                continue;
            }
            if p & CLAIMING == 0 || i < except {
                return PeerSeen::Taken;
            }
            seen = PeerSeen::Pending;
        }
        seen
    }

    /// The live stations now.
    pub(crate) fn live(&self) -> impl Iterator<Item = StationId> + '_ {
        self.slots.iter().filter_map(|r| {
            let raw = r.id.load(Ordering::Acquire);
            (raw != NONE).then(|| StationId::from_raw(raw))
        })
    }

    /// Quick refusal before the scheduler is asked for a station.
    pub(crate) fn check_peer(&self, peer_id: u16) -> Result<(), Ath11kError> {
        match self.peer_seen(peer_id, usize::MAX) {
            PeerSeen::Free => Ok(()),
            PeerSeen::Taken | PeerSeen::Pending => Err(Ath11kError::PeerInUse(peer_id)),
        }
    }

    /// Publishes the record of `id` (just added to the scheduler) with `peer_id`, or
    /// refuses if another live or claiming record has that peer id (then the record
    /// stays empty and the caller removes `id` from the scheduler).
    pub(crate) fn publish(&self, id: StationId, peer_id: u16) -> Result<(), Ath11kError> {
        let Some(r) = self.slots.get(id.index()) else { return Err(Ath11kError::UnknownStation) };
        if r.peer.compare_exchange(NO_PEER, u32::from(peer_id) | CLAIMING, Ordering::SeqCst, Ordering::SeqCst).is_err()
        {
            // The slot's last occupant is still being removed.
            return Err(Ath11kError::UnknownStation);
        }
        loop {
            match self.peer_seen(peer_id, id.index()) {
                PeerSeen::Free => break,
                PeerSeen::Taken => {
                    r.peer.store(NO_PEER, Ordering::SeqCst);
                    return Err(Ath11kError::PeerInUse(peer_id));
                }
                // A higher slot's claim may have passed its own check before this claim
                // was made, and would publish: the lower slot cannot simply win. That
                // claim never waits for this one (it backs off on seeing it, or
                // publishes), so wait for it to resolve, then look again.
                PeerSeen::Pending => core::hint::spin_loop(),
            }
        }
        r.tx_rate.store(NONE, Ordering::Relaxed);
        r.rx_rate.store(NONE, Ordering::Relaxed);
        r.mu_scale_q8.store(SCALE_ONE_Q8, Ordering::Relaxed);
        // Before the id is visible: no sample or price of the new occupant sees the
        // last one's ratio.
        r.calibration.reset(id);
        for t in &r.txqs {
            t.store(NONE, Ordering::Relaxed);
        }
        r.id.store(id.to_raw(), Ordering::SeqCst);
        r.peer.store(u32::from(peer_id), Ordering::SeqCst);
        // Slots number at most 4096 (the scheduler's bound): the index fits.
        if let (Some(h), Ok(i)) = (self.peer_hint(peer_id), u16::try_from(id.index())) {
            h.store(i.wrapping_add(1), Ordering::Relaxed);
        }
        Ok(())
    }

    /// Takes the record of `id` down: its id first (so that exactly one removal
    /// succeeds), then its txqs and its peer id. Returns the txqs it had.
    pub(crate) fn unpublish(&self, id: StationId) -> Result<[Option<TxqId>; TIDS], Ath11kError> {
        let r = self.slots.get(id.index()).ok_or(Ath11kError::UnknownStation)?;
        r.id.compare_exchange(id.to_raw(), NONE, Ordering::SeqCst, Ordering::SeqCst)
            .map_err(|_| Ath11kError::UnknownStation)?;
        let mut txqs = [None; TIDS];
        for (out, t) in txqs.iter_mut().zip(&r.txqs) {
            let raw = t.swap(NONE, Ordering::AcqRel);
            if raw != NONE && raw & RESERVED == 0 {
                *out = Some(TxqId::from_raw(raw));
            }
        }
        r.peer.store(NO_PEER, Ordering::SeqCst);
        Ok(txqs)
    }

    /// Reserves `tid` of station `id` for a txq being added; `is_live` says whether a
    /// txq id found there is still registered (a stale one is replaced).
    pub(crate) fn reserve_txq(
        &self,
        id: StationId,
        tid: Tid,
        is_live: impl Fn(TxqId) -> bool,
    ) -> Result<(), Ath11kError> {
        let r = self.get(id).ok_or(Ath11kError::UnknownStation)?;
        let slot = r.txqs.get(usize::from(tid.get())).ok_or(Ath11kError::TxqInUse)?;
        let cur = slot.load(Ordering::Acquire);
        if cur != NONE && (cur & RESERVED != 0 || is_live(TxqId::from_raw(cur))) {
            return Err(Ath11kError::TxqInUse);
        }
        slot.compare_exchange(cur, id.to_raw() | RESERVED, Ordering::AcqRel, Ordering::Acquire)
            .map_err(|_| Ath11kError::TxqInUse)?;
        // Removed meanwhile: undo (the removal may already have cleared the slot).
        if !r.is(id) {
            let _ = slot.compare_exchange(id.to_raw() | RESERVED, NONE, Ordering::AcqRel, Ordering::Acquire);
            return Err(Ath11kError::UnknownStation);
        }
        Ok(())
    }

    /// Ends a reservation: the txq's id, or `None` to give the TID up. A no-op if the
    /// station was removed meanwhile (the reservation is gone with it).
    pub(crate) fn settle_txq(&self, id: StationId, tid: Tid, txq: Option<TxqId>) {
        let Some(slot) = self.slots.get(id.index()).and_then(|r| r.txqs.get(usize::from(tid.get()))) else { return };
        let _ = slot.compare_exchange(
            id.to_raw() | RESERVED,
            txq.map_or(NONE, TxqId::to_raw),
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }

    /// Forgets `txq` as the txq of `id` on `tid` (after its removal).
    pub(crate) fn clear_txq(&self, id: StationId, tid: Tid, txq: TxqId) {
        let Some(slot) = self.slots.get(id.index()).and_then(|r| r.txqs.get(usize::from(tid.get()))) else { return };
        let _ = slot.compare_exchange(txq.to_raw(), NONE, Ordering::AcqRel, Ordering::Acquire);
    }
}

impl StationTable for StationSlots {
    type Station = StationRecord;
    fn station(&self, id: StationId) -> Option<&StationRecord> {
        self.get(id)
    }

    /// Station-less frames at the multicast rate, if one is set (mainline prices them at
    /// the vif's lowest basic rate), charged to the AC's multicast budget.
    fn multicast_airtime_us(&self, frame_len: u32, ac: Ac) -> Option<u32> {
        price_from_rate(Some(self.multicast_rate()?), frame_len, ac).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_rate_survives_the_atomic_word() {
        let rates = [
            Rate::legacy_cck(55, true).unwrap(),
            Rate::legacy_cck(10, false).unwrap(),
            Rate::legacy_ofdm(540).unwrap(),
            Rate::ht(15, Bandwidth::Mhz40, true).unwrap(),
            Rate::vht(9, 2, Bandwidth::Mhz160, false).unwrap(),
            Rate::he(11, 2, Bandwidth::Mhz80, HeGi::Gi1_6).unwrap(),
            Rate::eht(13, 4, Bandwidth::Mhz320, HeGi::Gi3_2).unwrap(),
        ];
        for r in rates {
            assert_eq!(unpack_rate(pack_rate(r)), Some(r), "{r:?}");
        }
        assert_eq!(unpack_rate(NONE), None);
    }

    #[test]
    fn a_departure_word_keeps_the_id_and_the_peer() {
        let id = StationId::from_raw(5 | 0xffff_fffe << 32);
        assert_eq!(departure_parts(departure(id, 0xfffe)), (id, 0xfffe));
        assert_ne!(departure(id, 0xffff), NONE);
    }

    /// A removal preempted between freeing its slot and recording its departure, while
    /// the slot's next occupant is added and removed (frames in flight) and records
    /// first: the late record must not report the later occupant drained.
    #[test]
    fn a_late_departure_record_does_not_report_the_next_occupant() {
        let t = StationSlots::new(4, CalibratorConfig::default()).unwrap();
        let first = StationId::from_raw(2 | 7 << 32);
        let next = StationId::from_raw(2 | 8 << 32);
        assert_eq!(t.record_departure(next, 20), None);
        // The late one is the drained one (its slot was reused); `next` is not.
        assert_eq!(t.record_departure(first, 10), Some(10));
        let mut reported = Vec::new();
        assert_eq!(t.reap_departed(|id| id != next, |p| reported.push(p)), 0);
        assert_eq!(t.reap_departed(|_| true, |p| reported.push(p)), 1);
        assert_eq!(reported, [20], "the next occupant once, when drained");
    }

    #[test]
    fn a_departure_across_generation_wrap_keeps_order() {
        let t = StationSlots::new(4, CalibratorConfig::default()).unwrap();
        let first = StationId::from_raw(1 | 0xffff_ffff << 32);
        let next = StationId::from_raw(1);
        assert_eq!(t.record_departure(first, 3), None);
        assert_eq!(t.record_departure(next, 4), Some(3));
    }

    /// Peer ids sharing a hint (equal modulo the hint table's size), a stale hint after a
    /// removal, and a slot reused under another peer id: every look-up gives what the scan
    /// alone would.
    #[test]
    fn a_hinted_look_up_agrees_with_the_scan() {
        let t = StationSlots::new(5, CalibratorConfig::default()).unwrap();
        assert_eq!(t.peer_hints.len(), 8);
        let scan = |peer: u16| t.slots.iter().find_map(|r| StationSlots::live_peer(r, peer)).map(|(id, _)| id);
        let sta = |slot: u64, generation: u64| StationId::from_raw(slot | generation << 32);
        // Peers 3, 11 and 19 share hint 3; 4 has its own.
        for (slot, peer) in [(0, 3), (1, 11), (2, 19), (3, 4)] {
            t.publish(sta(slot, 1), peer).unwrap();
        }
        for peer in [3, 11, 19, 4, 5, 27] {
            assert_eq!(t.by_peer(peer), scan(peer), "peer {peer}");
        }
        assert_eq!(t.by_peer(3), Some(sta(0, 1)), "found by the scan: the hint names peer 19's slot");
        assert_eq!(t.by_peer(19), Some(sta(2, 1)));
        // Peer 19 leaves; its slot takes peer 27 (hint 3 again), then peer 19 comes back
        // in slot 4.
        t.unpublish(sta(2, 1)).unwrap();
        assert_eq!(t.by_peer(19), None, "a stale hint finds nothing");
        t.publish(sta(2, 2), 27).unwrap();
        t.publish(sta(4, 1), 19).unwrap();
        for peer in [3, 11, 19, 4, 27] {
            assert_eq!(t.by_peer(peer), scan(peer), "peer {peer}");
        }
        assert_eq!((t.by_peer(27), t.by_peer(19)), (Some(sta(2, 2)), Some(sta(4, 1))));
    }

    #[test]
    fn a_peer_id_is_published_once() {
        let t = StationSlots::new(4, CalibratorConfig::default()).unwrap();
        let a = StationId::from_raw(1 | 7 << 32);
        let b = StationId::from_raw(2 | 7 << 32);
        t.publish(a, 9).unwrap();
        assert_eq!(t.publish(b, 9), Err(Ath11kError::PeerInUse(9)));
        assert_eq!(t.by_peer(9), Some(a));
        assert!(t.unpublish(a).is_ok());
        assert_eq!(t.unpublish(a).map(|_| ()), Err(Ath11kError::UnknownStation), "removed once");
        assert_eq!(t.by_peer(9), None);
        t.publish(b, 9).unwrap();
        assert_eq!(t.by_peer(9), Some(b));
    }

    #[test]
    fn a_txq_slot_is_reserved_once_and_a_stale_one_is_replaced() {
        let t = StationSlots::new(2, CalibratorConfig::default()).unwrap();
        let a = StationId::from_raw(1);
        t.publish(a, 1).unwrap();
        t.reserve_txq(a, Tid::BE, |_| true).unwrap();
        assert_eq!(t.reserve_txq(a, Tid::BE, |_| false), Err(Ath11kError::TxqInUse));
        let q = TxqId::from_raw(5);
        t.settle_txq(a, Tid::BE, Some(q));
        assert_eq!(t.get(a).unwrap().txq(Tid::BE), Some(q));
        assert_eq!(t.reserve_txq(a, Tid::BE, |_| true), Err(Ath11kError::TxqInUse));
        t.reserve_txq(a, Tid::BE, |_| false).unwrap();
    }
}
