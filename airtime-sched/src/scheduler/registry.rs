//! Control operations: registering and removing stations and txqs, weights and limits.
//! Slots are claimed with compare-and-swap; none of this blocks the data path.

use super::{DepartingStation, SchedError, Scheduler, adaptive_aql};
use crate::config::{AqlLimits, Weight};
use crate::slots::{LiveStation, NO_STATION, StationSlot, gen_of, occupant_store, sta, txq, with_gen};
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use crate::{Ac, StationId, Tid, TxqId};

/// The slots of `table` in next-fit order: from the one `cursor` names (the one after
/// the slot allocated last) to the end, then from the start.
fn next_fit<'a, T>(cursor: &AtomicU32, table: &'a [T]) -> impl Iterator<Item = (usize, &'a T)> + 'a {
    // Relaxed: a hint; allocations racing from one cursor compete for slots by CAS.
    let start = (cursor.load(Ordering::Relaxed) as usize).checked_rem(table.len()).unwrap_or(0);
    let (before, after) = table.split_at(start);
    after.iter().enumerate().map(move |(i, slot)| (start.wrapping_add(i), slot)).chain(before.iter().enumerate())
}

/// Moves `cursor` past slot `index`, just allocated.
fn advance(cursor: &AtomicU32, index: usize) {
    // A hint taken modulo the table's length: wrapping is harmless.
    cursor.store((index as u32).wrapping_add(1), Ordering::Relaxed);
}

/// Moves a station's `limits` on one AC from `from`, the default they were copied from,
/// to the AC's current `default`, for as long as that keeps changing (mainline's
/// `aql_txq_limit` write moves every station whose limits equal the old default). Stops
/// when the limits are no longer `from`: set explicitly, or moved on by another caller,
/// which then follows the default in turn.
///
/// Run by `add_station` after copying the default, and by `set_default_limits` for
/// every station after swapping it, so a station added while the default changes ends
/// on the latest one. The loop's first step is a read-modify-write of the default: if
/// the adder's comes before the setter's swap, the swap reads from it and so happens
/// after the adder's copy, and the setter's scan finds the copied limits and moves them;
/// otherwise the adder finds the new default and moves them itself. Two setters at once
/// meet the same way, so the later default wins (loom models ctl6, ctl7). Plain loads
/// would not do: a load may return an older default than the swap wrote.
pub(crate) fn follow_default(default: &AtomicU64, limits: &AtomicU64, mut from: u64) {
    loop {
        // A read-modify-write even when the default is still `from` (it writes the same
        // value): AcqRel, so that a swap of the default that comes after it Acquires the
        // limits this caller wrote before it.
        let now = match default.compare_exchange(from, from, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return,
            Err(now) => now,
        };
        // Relaxed: the next iteration's AcqRel read-modify-write of the default publishes it.
        if limits.compare_exchange(from, now, Ordering::Relaxed, Ordering::Relaxed).is_err() {
            return;
        }
        from = now;
    }
}

impl Scheduler {
    /// Registers a station with `weight`; its limits start at the PHY defaults and each
    /// deficit at the weight (mainline's initial value). The slot is found next-fit,
    /// from the one after the slot allocated last.
    ///
    /// Refused with [`SchedError::StationsDraining`] when no slot is free but some hold
    /// removed stations with frames in flight, [`SchedError::StationsFull`] otherwise.
    pub fn add_station(&self, weight: Weight) -> Result<StationId, SchedError> {
        let mut draining = false;
        for (index, slot) in next_fit(&self.station_cursor, &self.stations) {
            let word = slot.word.load(Ordering::Acquire);
            // A slot is reusable when free, or retired with no control write in flight
            // and every AQL word closed with nothing pending: no charge can be made or
            // is outstanding, and neither can change until the slot is opened again
            // below; a control write that starts now finds the station retired.
            let retired = sta::state(word) == sta::RETIRED;
            let reusable = sta::state(word) == sta::FREE || (retired && sta::guards(word) == 0 && slot.drained());
            if !reusable {
                draining |= retired;
                continue;
            }
            let mut generation = sta::generation(word).wrapping_add(1);
            if index == usize::from(crate::charge::MULTICAST_INDEX) && generation & 0xf == 0 {
                // Raw tokens keep four bits of the generation: slot 4095 with 0 there
                // is the multicast mark.
                generation = generation.wrapping_add(1);
            }
            // Acquire: the fields written under the last guard, and by the releases of
            // the last charges, come before the reset below.
            if slot
                .word
                .compare_exchange(word, sta::word(generation, sta::INIT), Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            advance(&self.station_cursor, index);
            slot.weight.store(u32::from(weight.get()), Ordering::Relaxed);
            // Retags the per-occupant words: a late write for the last occupant that has
            // not landed yet is refused from here on.
            slot.reset_for(generation, weight.get());
            for ac in Ac::ALL {
                let default = &self.acs[ac].default_limits;
                let limits = default.load(Ordering::Acquire);
                slot.ac[ac].limits.store(limits, Ordering::Relaxed);
                // Weakened variant, only to prove loom model ctl6 catches it: the copy
                // alone, which a concurrent default change can miss.
                if !weakened!("default_no_follow") {
                    follow_default(default, &slot.ac[ac].limits, limits);
                }
            }
            // Release (inside): charges for the new occupant see the fields above.
            slot.open(generation);
            // Release: publishes the fields above to every Acquire of the word.
            slot.word.store(sta::word(generation, sta::LIVE), Ordering::Release);
            return Ok(StationId { index: index as u16, generation });
        }
        Err(if draining { SchedError::StationsDraining } else { SchedError::StationsFull })
    }

    /// Removes a station and every txq registered for it. Charges still in flight stay
    /// valid: releasing them keeps every counter exact, and the slot is reused only
    /// once they are all released. From now on a handle serving one of its txqs says the
    /// station is gone ([`Serving::station_removed`](super::Serving::station_removed)),
    /// and airtime reported for it is counted per AC
    /// ([`AcCounters::departed_tx_us`](super::AcCounters::departed_tx_us)).
    ///
    /// The returned [`DepartingStation`] tells how much of its airtime is still in
    /// flight and when none is, for a driver that reuses the hardware's station index
    /// only then (ath11k's peer id, mac80211's `sta_info_destroy` after the flush).
    pub fn remove_station(&self, id: StationId) -> Result<DepartingStation, SchedError> {
        let slot = self.station_slot(id)?;
        let mut word = slot.word.load(Ordering::Acquire);
        loop {
            if sta::state(word) != sta::LIVE || sta::generation(word) != id.generation {
                return Err(SchedError::UnknownStation);
            }
            let retired = sta::with_state(word, sta::RETIRED);
            // SeqCst: see add_txq.
            match slot.word.compare_exchange_weak(word, retired, Ordering::SeqCst, Ordering::Acquire) {
                Ok(_) => break,
                Err(now) => word = now,
            }
        }
        // Charges are refused from here on; the slot is reused once those in flight are
        // released.
        slot.close(id.generation);
        for (index, t) in self.txqs.iter().enumerate() {
            // SeqCst: see add_txq.
            let word = t.word.load(Ordering::SeqCst);
            if word & txq::LIVE != 0 && t.station() == Some(id) {
                let _ = self.remove_txq(t.id(index, word));
            }
        }
        Ok(DepartingStation { id })
    }

    /// Registers a txq for `station` (or a station-less one, e.g. per-interface
    /// multicast, with `None`) on `tid`; its AC is `tid.ac()`.
    ///
    /// A slot is free again as soon as its txq is removed and no context holds it, even
    /// if the txq's entry is still on its AC's list: the entry is dropped when a round
    /// meets it. Slots with no such entry are taken first; each pass looks next-fit, from
    /// the slot after the one allocated last.
    ///
    /// Refused with [`SchedError::TxqsDraining`] when no slot is free but some hold
    /// removed txqs not yet let go of (a turn still holds one: its server's return frees
    /// it; a [`TxqTable`](crate::TxqTable)'s removed txq waits for
    /// [`take_removed`](crate::TxqTable::take_removed)), [`SchedError::TxqsFull`]
    /// otherwise.
    pub fn add_txq(&self, station: Option<StationId>, tid: Tid) -> Result<TxqId, SchedError> {
        self.add_txq_with(station, tid, 0, |_| ())
    }

    /// [`add_txq`](Self::add_txq), with `kept` (0 or [`txq::KEPT`]) in the txq's word and
    /// `init` run on the slot's index once it is claimed, before the txq is published:
    /// a [`TxqTable`](crate::TxqTable) puts the txq's queue in its cell there, so nobody
    /// can serve or enqueue to the txq before its queue is in place.
    pub(crate) fn add_txq_with(
        &self,
        station: Option<StationId>,
        tid: Tid,
        kept: u64,
        init: impl FnOnce(TxqId),
    ) -> Result<TxqId, SchedError> {
        if let Some(sta) = station {
            self.station_slot(sta)?;
        }
        let ac = tid.ac();
        let mut claimed = None;
        // A slot whose removed txq is still held (served, its queue not handed back, an
        // enqueue in flight): it frees on its own once let go of.
        let mut draining = false;
        'passes: for clean_only in [true, false] {
            for (index, slot) in next_fit(&self.txq_cursor, &self.txqs) {
                let word = slot.word.load(Ordering::Acquire);
                if !txq::reusable(word) || (clean_only && word & txq::QUEUED_ANY != 0) {
                    draining |= txq::draining(word);
                    continue;
                }
                let generation = gen_of(word).wrapping_add(1);
                let claim = with_gen(generation, txq::INIT | kept | (word & txq::QUEUED_ANY));
                if slot.word.compare_exchange(word, claim, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                    advance(&self.txq_cursor, index);
                    claimed = Some((index, slot, generation));
                    break 'passes;
                }
            }
        }
        let Some((index, slot, generation)) = claimed else {
            return Err(if draining { SchedError::TxqsDraining } else { SchedError::TxqsFull });
        };
        // Release: a reader still looking at the slot's last occupant that reads these
        // sees the claim above too, and so that the occupant changed (`TxqSlot::station`).
        slot.station.store(station.map_or(NO_STATION, StationId::to_raw), occupant_store());
        slot.tid.store(u32::from(tid.get()), occupant_store());
        slot.round.store(0, occupant_store());
        init(TxqId { index: index as u16, generation });
        // Publish LIVE, keeping the QUEUED bits of entries earlier txqs left (a pop may
        // clear them meanwhile, hence the loop). An entry on this txq's own AC becomes
        // its ORPHAN: it stands for no wake of this txq until one takes it over.
        // Release: publishes station and tid with LIVE. SeqCst, with remove_station's
        // retire and scan: either its scan sees this txq LIVE and removes it, or the
        // check below sees the station retired (no txq outlives its station).
        let mut word = slot.word.load(Ordering::Relaxed);
        loop {
            // Weakened variant `reuse_no_orphan`, only to prove loom model 19 catches it: the
            // old txq's entry taken to stand for the new one, which was never woken.
            let orphan = if word & txq::queued(ac) != 0 && !weakened!("reuse_no_orphan") { txq::ORPHAN } else { 0 };
            let live = with_gen(generation, txq::LIVE | kept | txq::ac_bits(ac) | orphan | (word & txq::QUEUED_ANY));
            match slot.word.compare_exchange_weak(word, live, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => break,
                Err(seen) => word = seen,
            }
        }
        let id = TxqId { index: index as u16, generation };
        if let Some(sta) = station {
            let live = self.stations.get(sta.index()).is_some_and(|s| {
                let w = s.word.load(Ordering::SeqCst);
                sta::state(w) == sta::LIVE && sta::generation(w) == sta.generation
            });
            if !live {
                let _ = self.remove_txq(id);
                return Err(SchedError::UnknownStation);
            }
        }
        Ok(id)
    }

    /// Removes a txq; the handle is refused from now on. A txq being served is released
    /// when its server returns it. Its entry on the AC's list, if any, no longer counts
    /// as listed (the per-AC PHY limit's `n`) and is dropped when a round meets it; the
    /// slot can take a new txq at once.
    pub fn remove_txq(&self, id: TxqId) -> Result<(), SchedError> {
        let slot = self.txqs.get(id.index()).ok_or(SchedError::UnknownTxq)?;
        let mut word = slot.word.load(Ordering::Acquire);
        loop {
            if word & txq::LIVE == 0 || gen_of(word) != id.generation {
                return Err(SchedError::UnknownTxq);
            }
            // The AC of the word this CAS frees: once it succeeds, a new txq may take the
            // slot and rewrite its tid. The weakened variant reads the tid after the CAS,
            // as this once did, only to prove the loom model catches it.
            let ac_freed = txq::ac(word);
            let new = word & !(txq::LIVE | txq::WOKEN | txq::ORPHAN | txq::IDLE);
            // AcqRel: orders with the list and serving paths that read LIVE.
            match slot.word.compare_exchange_weak(word, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    let ac = if weakened!("remove_ac_late") {
                        crate::Tid::new(slot.tid()).map_or(Ac::Be, crate::Tid::ac)
                    } else {
                        ac_freed
                    };
                    // The entry stood for this txq: now it is dead (an orphan was already).
                    if word & txq::queued(ac) != 0 && word & txq::ORPHAN == 0 {
                        self.acs[ac].list.add_dead(1);
                    }
                    // A kept queue nobody serves goes back to its table now; a server
                    // hands it back when it returns the txq (`finish_service`).
                    // Weakened variant `retire_serving`, only to prove loom model txq2
                    // catches it: the queue handed back while its server still uses it.
                    let unserved = word & txq::SERVING == 0 || weakened!("retire_serving");
                    if word & txq::KEPT != 0 && unserved {
                        self.retire_kept(id.index());
                    }
                    return Ok(());
                }
                Err(now) => word = now,
            }
        }
    }

    /// Sets a station's airtime weight; it takes effect at the next top-up (mainline
    /// stores the `airtime_weight` it is given). With TX_NO_PUSHBACK it also scales limits.
    /// The slot is held meanwhile, so a weight set for a station being removed never
    /// reaches the slot's next occupant.
    pub fn set_weight(&self, id: StationId, weight: Weight) -> Result<(), SchedError> {
        self.control_write(id, |slot| slot.weight.store(u32::from(weight.get()), Ordering::Relaxed))
    }

    /// A station's airtime weight.
    pub fn weight(&self, id: StationId) -> Result<Weight, SchedError> {
        let slot = self.station_slot(id)?;
        Ok(Weight::new(slot.weight() as u16).unwrap_or(Weight::DEFAULT))
    }

    /// Sets a station's AQL limits on `ac` (the station `aql` file's `limit` write).
    /// Both limits change in one store, so a concurrent check sees the old pair or the
    /// new pair, never a mix. The slot is held meanwhile, as for [`set_weight`](Self::set_weight).
    pub fn set_station_limits(&self, id: StationId, ac: Ac, limits: AqlLimits) -> Result<(), SchedError> {
        self.control_write(id, |slot| {
            let word = &slot.ac[ac].limits;
            // Weakened variant, only to prove loom model 5 catches it: the low limit
            // written first, alone, so a check can meet the new low with the old high.
            if weakened!("station_limits_split") {
                word.store(
                    (word.load(Ordering::Relaxed) & !0xffff_ffff) | (limits.pack() & 0xffff_ffff),
                    Ordering::Relaxed,
                );
            }
            word.store(limits.pack(), Ordering::Relaxed)
        })
    }

    /// A station's configured AQL limits on `ac` (before TX_NO_PUSHBACK scaling).
    pub fn station_limits(&self, id: StationId, ac: Ac) -> Result<AqlLimits, SchedError> {
        Ok(self.station_slot(id)?.limits(ac))
    }

    /// The limits the AQL check applies to a station on `ac`: its configured limits,
    /// scaled by weight/256 with a floor when `Config::tx_no_pushback` is set.
    pub fn effective_limits(&self, id: StationId, ac: Ac) -> Result<AqlLimits, SchedError> {
        let slot = self.station_slot(id)?;
        Ok(self.effective_limits_of(&slot, ac))
    }

    /// The station a txq belongs to, and its TID.
    pub fn txq_info(&self, id: TxqId) -> Result<(Option<StationId>, Tid), SchedError> {
        let txq = self.txq_parts(id)?;
        Ok((txq.station, Tid::new(txq.tid).unwrap_or(Tid::BE)))
    }

    /// Txq `id`'s AC, station and TID, read while the slot held `id`: a second
    /// look at the word after reading the station and TID, which may otherwise be those
    /// of a txq that took the slot meanwhile (`TxqSlot::station`). Weakened variant
    /// `may_transmit_no_recheck`, only to prove loom model 23 catches it: no second look.
    pub(crate) fn txq_parts(&self, id: TxqId) -> Result<TxqParts, SchedError> {
        let (slot, first) = self.txq_slot_word(id)?;
        let (station, tid) = (slot.station(), slot.tid());
        let word = if weakened!("may_transmit_no_recheck") { first } else { self.txq_slot_word(id)?.1 };
        Ok(TxqParts { ac: txq::ac(first), station, tid, held: word & txq::SERVING != 0 })
    }

    /// The slot of `id`, if `id` is its live occupant, as that occupant sees it: writes
    /// through the view never land on a later occupant of the slot.
    #[inline]
    pub(crate) fn station_slot(&self, id: StationId) -> Result<LiveStation<'_>, SchedError> {
        let slot = self.stations.get(id.index()).ok_or(SchedError::UnknownStation)?;
        if slot.is_live(id) { Ok(LiveStation::new(slot, id.generation)) } else { Err(SchedError::UnknownStation) }
    }

    /// Runs a control operation's `write` to the slot of `id` (its weight, limits,
    /// statistics), with the slot held against reuse meanwhile, so the write cannot land
    /// on a later occupant (loom models ctl4, ctl5). Refused if `id` is not live.
    pub(crate) fn control_write(&self, id: StationId, write: impl FnOnce(LiveStation<'_>)) -> Result<(), SchedError> {
        let slot = self.stations.get(id.index()).ok_or(SchedError::UnknownStation)?;
        if !slot.hold(id) {
            return Err(SchedError::UnknownStation);
        }
        write(LiveStation::new(slot, id.generation));
        slot.unhold();
        Ok(())
    }

    pub(crate) fn txq_slot(&self, id: TxqId) -> Result<&crate::slots::TxqSlot, SchedError> {
        self.txq_slot_ac(id).map(|(slot, _)| slot)
    }

    /// [`txq_slot`](Self::txq_slot) with the txq's AC, read from the same word (a second
    /// read could be of the slot's next occupant).
    pub(crate) fn txq_slot_ac(&self, id: TxqId) -> Result<(&crate::slots::TxqSlot, Ac), SchedError> {
        self.txq_slot_word(id).map(|(slot, word)| (slot, txq::ac(word)))
    }

    /// [`txq_slot`](Self::txq_slot) with the word that showed `id` live in it.
    #[inline]
    fn txq_slot_word(&self, id: TxqId) -> Result<(&crate::slots::TxqSlot, u64), SchedError> {
        let slot = self.txqs.get(id.index()).ok_or(SchedError::UnknownTxq)?;
        let word = slot.word.load(Ordering::Acquire);
        if word & txq::LIVE != 0 && gen_of(word) == id.generation {
            Ok((slot, word))
        } else {
            Err(SchedError::UnknownTxq)
        }
    }

    pub(crate) fn effective_limits_of(&self, slot: &StationSlot, ac: Ac) -> AqlLimits {
        // One test for both adjustments, so that the path with neither stays one load
        // and one branch, as it was before adaptive AQL.
        if self.adjusted_limits { self.adjusted_limits_of(slot, ac) } else { slot.limits(ac) }
    }

    /// The limits after TX_NO_PUSHBACK scaling and, when on, bounded by the station's
    /// learnt limit on `ac` (adaptive AQL). Inlined only where it is out of line already
    /// (`station_may_send`'s adjusted path, the statistics).
    #[inline]
    pub(crate) fn adjusted_limits_of(&self, slot: &StationSlot, ac: Ac) -> AqlLimits {
        let limits = self.configured_limits_of(slot, ac);
        if !self.config.adaptive_aql {
            return limits;
        }
        // Relaxed: the learnt limit is a heuristic's; nothing is read through it.
        let word = slot.ac[ac].adaptive.load(Ordering::Relaxed);
        let learnt = adaptive_aql::limit_us(word, self.config.adaptive_aql_floor_us, limits.high_us());
        adaptive_aql::bounded(limits, learnt)
    }

    /// A station's limits as configured (after TX_NO_PUSHBACK scaling), before adaptive
    /// AQL bounds them.
    #[inline]
    pub(crate) fn configured_limits_of(&self, slot: &StationSlot, ac: Ac) -> AqlLimits {
        let limits = slot.limits(ac);
        if self.config.tx_no_pushback {
            let w = Weight::new(slot.weight() as u16).unwrap_or(Weight::DEFAULT);
            limits.scaled_by_weight(w, self.config.no_pushback_floor_us)
        } else {
            limits
        }
    }
}

/// What [`Scheduler::txq_parts`] read of one txq.
pub(crate) struct TxqParts {
    pub(crate) ac: Ac,
    pub(crate) station: Option<StationId>,
    pub(crate) tid: u8,
    /// Whether another context served the txq at the second look: a hint, which a
    /// claim checks again.
    pub(crate) held: bool,
}
