//! The driver's stations (mt76's `mt76_wcid` array, `dev->wcid[]` under RCU): each slot
//! read by the wake and tx-free paths at once, its fields in atomics or behind the
//! slot's own small lock.

use crate::hal::AirtimeWords;
use crate::lock::SpinLock;
use airtime_est::Rate;
use airtime_sched::driver_loop::StationTable;
use airtime_sched::traits::{StationErrorKind, price_from_rate};
use airtime_sched::{Ac, Station, StationId};
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

const NONE: u64 = u64::MAX;
/// The power-save flag, in the occupant's word: a bit `StationId::to_raw` leaves 0
/// (16 to 31), so that setting it checks the occupant in the same read-modify-write.
const PS: u64 = 1 << 16;

/// One station as the adapter keeps it: its WTBL index, its tx rate (read from the WTBL
/// by the poll, and from tx-free events), and the last WTBL airtime words the poll read.
pub struct StationRecord {
    /// Raw `StationId` of the occupant with [`PS`] when it is asleep
    /// (`MT_WCID_FLAG_PS`), [`NONE`] if none.
    id: AtomicU64,
    /// The WTBL index (`wcid->idx`), `u32::MAX` if none.
    wcid: AtomicU32,
    rate: SpinLock<Option<Rate>>,
    /// The poll's last reading (`msta->airtime_ac`), under the slot's lock so that two
    /// polls never register the same delta twice (the second skips the station).
    last: SpinLock<AirtimeWords>,
}

impl StationRecord {
    fn empty() -> StationRecord {
        StationRecord {
            id: AtomicU64::new(NONE),
            wcid: AtomicU32::new(u32::MAX),
            rate: SpinLock::new(None),
            last: SpinLock::new(AirtimeWords::default()),
        }
    }

    /// The station's WTBL index.
    pub fn wcid(&self) -> Option<u16> {
        u16::try_from(self.wcid.load(Ordering::Acquire)).ok()
    }

    /// Whether the station is in power save (`MT_WCID_FLAG_PS`).
    pub fn asleep(&self) -> bool {
        let word = self.id.load(Ordering::Acquire);
        word != NONE && word & PS != 0
    }

    /// Sets the power-save flag of `id`, if it still occupies the slot: a station
    /// removed and its slot reused since the caller looked it up keeps the newcomer's
    /// flag (false then).
    pub(crate) fn set_asleep(&self, id: StationId, asleep: bool) -> bool {
        // AcqRel: Release publishes the flag to the rounds' Acquire loads.
        self.id
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                (word & !PS == id.to_raw()).then_some(if asleep { word | PS } else { word & !PS })
            })
            .is_ok()
    }

    /// Whether `id` occupies the slot.
    fn holds(&self, id: StationId) -> bool {
        self.id.load(Ordering::Acquire) & !PS == id.to_raw()
    }

    /// Its current tx rate, as last read.
    pub fn tx_rate(&self) -> Option<Rate> {
        *self.rate.lock()
    }

    pub(crate) fn set_rate(&self, rate: Option<Rate>) {
        *self.rate.lock() = rate;
    }

    /// The poll's last reading, unless another poll holds it.
    pub(crate) fn try_last_words(&self) -> Option<crate::lock::SpinGuard<'_, AirtimeWords>> {
        self.last.try_lock()
    }

    fn occupant(&self) -> Option<StationId> {
        let raw = self.id.load(Ordering::Acquire);
        (raw != NONE).then(|| StationId::from_raw(raw))
    }
}

impl Station for StationRecord {
    type Error = StationErrorKind;

    fn station_id(&self) -> StationId {
        // `from_raw` ignores the power-save bit.
        StationId::from_raw(self.id.load(Ordering::Acquire))
    }

    fn last_tx_rate(&self) -> Option<Rate> {
        self.tx_rate()
    }

    fn expected_airtime_us(&self, frame_len: u32, ac: Ac) -> Result<u32, StationErrorKind> {
        price_from_rate(self.tx_rate(), frame_len, ac)
    }
}

impl core::fmt::Debug for StationRecord {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StationRecord").field("id", &self.occupant()).field("wcid", &self.wcid()).finish()
    }
}

/// The stations, indexed by `StationId::index`.
pub(crate) struct Stations {
    slots: Box<[StationRecord]>,
    /// The rate multicast frames are priced at (the lowest basic rate).
    multicast_rate: Option<Rate>,
}

impl Stations {
    pub(crate) fn new(n: usize, multicast_rate: Option<Rate>) -> Option<Stations> {
        let mut v = Vec::new();
        v.try_reserve_exact(n).ok()?;
        v.resize_with(n, StationRecord::empty);
        Some(Stations { slots: v.into_boxed_slice(), multicast_rate })
    }

    /// The live stations, with their ids.
    pub(crate) fn live(&self) -> impl Iterator<Item = (StationId, &StationRecord)> {
        self.slots.iter().filter_map(|r| r.occupant().map(|id| (id, r)))
    }

    pub(crate) fn by_wcid(&self, wcid: u16) -> Option<(StationId, &StationRecord)> {
        self.live().find(|(_, r)| r.wcid() == Some(wcid))
    }

    /// Whether `id` occupies its slot and is asleep: one load, the id checked in it.
    pub(crate) fn asleep(&self, id: StationId) -> bool {
        self.slots.get(id.index()).is_some_and(|r| r.id.load(Ordering::Acquire) == id.to_raw() | PS)
    }

    /// Fills the slot of `id` (admin context only).
    pub(crate) fn install(&self, id: StationId, wcid: u16, rate: Option<Rate>) -> bool {
        let Some(r) = self.slots.get(id.index()) else { return false };
        // Under the poll's lock: a poll that read the slot's previous occupant either
        // finishes first (and this overwrites what it wrote) or finds the slot taken.
        let mut last = r.last.lock();
        *last = AirtimeWords::default();
        r.set_rate(rate);
        r.wcid.store(u32::from(wcid), Ordering::Release);
        // Awake: the word without the power-save bit.
        r.id.store(id.to_raw(), Ordering::Release);
        drop(last);
        true
    }

    /// Empties the slot of `id` (`mt76_sta_pre_rcu_remove`: `dev->wcid[idx] = NULL`).
    pub(crate) fn clear(&self, id: StationId) {
        if let Some(r) = self.slots.get(id.index()) {
            // Asleep or not.
            let cleared =
                r.id.fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| (w & !PS == id.to_raw()).then_some(NONE));
            if cleared.is_ok() {
                r.wcid.store(u32::MAX, Ordering::Release);
            }
        }
    }
}

impl StationTable for Stations {
    type Station = StationRecord;

    fn station(&self, id: StationId) -> Option<&StationRecord> {
        self.slots.get(id.index()).filter(|r| r.holds(id))
    }

    fn multicast_airtime_us(&self, frame_len: u32, ac: Ac) -> Option<u32> {
        price_from_rate(self.multicast_rate, frame_len, ac).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A station looked up, then removed and its slot given to another, before the
    /// caller sets its power-save flag (an rx path preempted in `sta_ps`): the flag does
    /// not land on the newcomer.
    #[test]
    fn the_power_save_flag_lands_only_on_the_station_it_was_set_for() {
        let stations = Stations::new(2, None).unwrap();
        let old = StationId::from_raw(1 | (1 << 32));
        let new = StationId::from_raw(1 | (2 << 32));
        assert!(stations.install(old, 7, None));
        let record = stations.station(old).unwrap();
        assert!(record.set_asleep(old, true) && record.asleep());
        assert!(stations.station(old).is_some(), "asleep, still found by its id");
        stations.clear(old);
        assert!(stations.station(old).is_none(), "an asleep station is cleared too");
        assert!(stations.install(new, 8, None));
        assert!(!record.asleep(), "a newcomer starts awake");
        assert!(!record.set_asleep(old, true), "the departed station's flag is refused");
        assert!(!record.asleep());
        assert!(record.set_asleep(new, true) && record.asleep());
        assert_eq!(stations.station(new).map(Station::station_id), Some(new), "the flag is not in the id");
        assert!(stations.asleep(new) && !stations.asleep(old), "the id is checked in the same load");
        assert!(record.set_asleep(new, false) && !record.asleep() && !stations.asleep(new));
    }
}
