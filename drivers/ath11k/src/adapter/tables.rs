//! The adapter's txq and station tables, sized once at creation so that the data path
//! never allocates. They implement the core loop's [`TxqTable`] and [`StationTable`].

use super::Ath11kError;
use airtime_est::Rate;
use airtime_sched::driver_loop::{StationTable, TxqTable};
use airtime_sched::{Ac, Station, StationErrorKind, StationId, Tid, Txq, TxqId};
use alloc::vec::Vec;

/// Reserves exactly `n` slots without aborting on allocation failure.
fn slots<X>(n: usize) -> Result<Vec<Option<X>>, Ath11kError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Ath11kError::OutOfMemory)?;
    v.resize_with(n, || None);
    Ok(v)
}

pub(crate) struct TxqEntry<T> {
    pub(crate) id: TxqId,
    pub(crate) station: Option<StationId>,
    pub(crate) tid: Tid,
    pub(crate) ac: Ac,
    pub(crate) txq: T,
}

/// Txqs by handle index; an entry answers only to its own handle (generation).
pub(crate) struct TxqSlots<T>(Vec<Option<TxqEntry<T>>>);

impl<T> TxqSlots<T> {
    pub(crate) fn new(n: usize) -> Result<Self, Ath11kError> {
        Ok(TxqSlots(slots(n)?))
    }

    pub(crate) fn get(&self, id: TxqId) -> Option<&TxqEntry<T>> {
        self.0.get(id.index())?.as_ref().filter(|e| e.id == id)
    }

    pub(crate) fn get_mut(&mut self, id: TxqId) -> Option<&mut TxqEntry<T>> {
        self.0.get_mut(id.index())?.as_mut().filter(|e| e.id == id)
    }

    /// Stores an entry; the scheduler issued the handle, so its slot is in range and
    /// free (a stale occupant would be a removed txq, which `remove` already took).
    pub(crate) fn put(&mut self, entry: TxqEntry<T>) -> Result<(), TxqEntry<T>> {
        match self.0.get_mut(entry.id.index()) {
            Some(slot @ None) => {
                *slot = Some(entry);
                Ok(())
            }
            _ => Err(entry),
        }
    }

    pub(crate) fn remove(&mut self, id: TxqId) -> Option<TxqEntry<T>> {
        let slot = self.0.get_mut(id.index())?;
        if slot.as_ref().is_some_and(|e| e.id == id) { slot.take() } else { None }
    }

    /// Handles of the txqs of `station`.
    pub(crate) fn of_station(&self, station: StationId) -> impl Iterator<Item = TxqId> + '_ {
        self.0.iter().flatten().filter(move |e| e.station == Some(station)).map(|e| e.id)
    }
}

impl<T: Txq> TxqTable for TxqSlots<T> {
    type Txq = T;
    fn txq_mut(&mut self, id: TxqId) -> Option<&mut T> {
        self.get_mut(id).map(|e| &mut e.txq)
    }
}

/// The adapter's record of a station: its firmware peer id and the rates the
/// hardware last reported for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StationRecord {
    id: StationId,
    peer_id: u16,
    last_tx_rate: Option<Rate>,
    last_rx_rate: Option<Rate>,
    /// The station's txq of each TID (0..=15 and 16, the management txq).
    txqs: [Option<TxqId>; TIDS],
}

/// TIDs a station can have a txq on: 0..=15 and [`Tid::MGMT`] (16).
const TIDS: usize = 17;

impl StationRecord {
    /// The scheduler's handle.
    pub fn id(&self) -> StationId {
        self.id
    }

    /// The firmware peer id (PPDU stats and rx status name stations by it).
    pub fn peer_id(&self) -> u16 {
        self.peer_id
    }

    /// The last tx rate PPDU stats reported.
    pub fn last_tx_rate(&self) -> Option<Rate> {
        self.last_tx_rate
    }

    /// The last rx rate rx status reported.
    pub fn last_rx_rate(&self) -> Option<Rate> {
        self.last_rx_rate
    }

    /// The station's txq on `tid`, if one was added.
    pub fn txq(&self, tid: Tid) -> Option<TxqId> {
        self.txqs.get(usize::from(tid.get())).copied().flatten()
    }

    pub(crate) fn set_txq(&mut self, tid: Tid, txq: Option<TxqId>) {
        if let Some(slot) = self.txqs.get_mut(usize::from(tid.get())) {
            *slot = txq;
        }
    }

    pub(crate) fn set_tx_rate(&mut self, rate: Rate) {
        self.last_tx_rate = Some(rate);
    }

    pub(crate) fn set_rx_rate(&mut self, rate: Rate) {
        self.last_rx_rate = Some(rate);
    }
}

impl Station for StationRecord {
    type Error = StationErrorKind;

    fn station_id(&self) -> StationId {
        self.id
    }

    /// The last tx rate from PPDU stats, or failing that the last rx rate (the peer's
    /// rate towards us is the best guess before the first tx report).
    /// Frames are priced at it by the trait's default `expected_airtime_us`.
    fn last_tx_rate(&self) -> Option<Rate> {
        self.last_tx_rate.or(self.last_rx_rate)
    }
}

/// Stations by handle index, plus a peer id index kept sorted in memory reserved at
/// creation (so adding a station never allocates).
pub(crate) struct StationSlots {
    slots: Vec<Option<StationRecord>>,
    by_peer: Vec<(u16, StationId)>,
}

impl StationSlots {
    pub(crate) fn new(n: usize) -> Result<Self, Ath11kError> {
        let mut by_peer = Vec::new();
        by_peer.try_reserve_exact(n).map_err(|_| Ath11kError::OutOfMemory)?;
        Ok(StationSlots { slots: slots(n)?, by_peer })
    }

    pub(crate) fn get(&self, id: StationId) -> Option<&StationRecord> {
        self.slots.get(id.index())?.as_ref().filter(|r| r.id == id)
    }

    pub(crate) fn get_mut(&mut self, id: StationId) -> Option<&mut StationRecord> {
        self.slots.get_mut(id.index())?.as_mut().filter(|r| r.id == id)
    }

    pub(crate) fn by_peer(&self, peer_id: u16) -> Option<StationId> {
        let i = self.by_peer.binary_search_by_key(&peer_id, |e| e.0).ok()?;
        self.by_peer.get(i).map(|e| e.1)
    }

    pub(crate) fn by_peer_mut(&mut self, peer_id: u16) -> Option<&mut StationRecord> {
        let id = self.by_peer(peer_id)?;
        self.slots.get_mut(id.index())?.as_mut().filter(|r| r.id == id)
    }

    /// Whether `peer_id` can be added (free, and room in the index).
    pub(crate) fn check_insert(&self, peer_id: u16) -> Result<(), Ath11kError> {
        if self.by_peer(peer_id).is_some() {
            return Err(Ath11kError::PeerInUse(peer_id));
        }
        if self.by_peer.len() >= self.by_peer.capacity() {
            return Err(Ath11kError::Sched(airtime_sched::SchedError::StationsFull));
        }
        Ok(())
    }

    /// Adds a record (after `check_insert`); false if the handle's slot is unusable.
    pub(crate) fn insert(&mut self, id: StationId, peer_id: u16) -> bool {
        let Some(slot) = self.slots.get_mut(id.index()) else { return false };
        if slot.is_some() || self.by_peer.len() >= self.by_peer.capacity() {
            return false;
        }
        let at = match self.by_peer.binary_search_by_key(&peer_id, |e| e.0) {
            Ok(_) => return false,
            Err(at) => at,
        };
        *slot = Some(StationRecord { id, peer_id, last_tx_rate: None, last_rx_rate: None, txqs: [None; TIDS] });
        // Within the capacity reserved at creation: no allocation.
        self.by_peer.insert(at, (peer_id, id));
        true
    }

    pub(crate) fn remove(&mut self, id: StationId) -> Option<StationRecord> {
        let slot = self.slots.get_mut(id.index())?;
        if slot.as_ref().is_none_or(|r| r.id != id) {
            return None;
        }
        let rec = slot.take()?;
        self.by_peer.retain(|e| e.1 != id);
        Some(rec)
    }
}

impl StationTable for StationSlots {
    type Station = StationRecord;
    fn station(&self, id: StationId) -> Option<&StationRecord> {
        self.get(id)
    }
}
