//! A removed station whose frames may still be in flight.

use super::Scheduler;
use crate::{Ac, StationId};

/// A station [`Scheduler::remove_station`] removed, while frames charged to it may
/// still be in the hardware. Its charges stay valid: releasing them drains it. Once
/// drained, no charge of it is in flight and none can be made, so, with every frame of
/// a station txq sent charged (as the crate's loops send them; see
/// [`ChargeError::StationRemoved`](crate::ChargeError::StationRemoved)), no frame of it
/// is in flight: the driver may reuse the hardware's station index, and the scheduler
/// may reuse its slot.
///
/// A plain value (no borrow), so a driver can keep it with its own departing peer and
/// ask from any context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DepartingStation {
    pub(super) id: StationId,
}

impl DepartingStation {
    /// The departure of the removed station `id`, for a driver that keeps only the
    /// handle (in an atomic word, say) and asks later. For a live station it answers
    /// "not drained" (its charges are open); for a handle whose slot holds a later
    /// occupant, "drained" (a slot is reused only once drained).
    pub fn of(id: StationId) -> DepartingStation {
        DepartingStation { id }
    }

    /// The removed station's handle (refused by every operation but
    /// [`Scheduler::release`] of its charges and [`Scheduler::register_airtime`]).
    pub fn id(&self) -> StationId {
        self.id
    }

    /// Its airtime still in flight on `ac`, in us (0 once drained). `sched` must be the
    /// scheduler that removed it; another one answers about its own slot.
    pub fn pending_us(&self, sched: &Scheduler, ac: Ac) -> u32 {
        sched.stations.get(self.id.index()).map_or(0, |slot| slot.pending_of(self.id, ac))
    }

    /// Its airtime still in flight on all ACs, in us.
    pub fn total_pending_us(&self, sched: &Scheduler) -> u64 {
        Ac::ALL.iter().map(|&ac| u64::from(self.pending_us(sched, ac))).sum()
    }

    /// Whether every charge made to it was released: nothing of it is in flight.
    pub fn is_drained(&self, sched: &Scheduler) -> bool {
        sched.stations.get(self.id.index()).is_none_or(|slot| slot.departed_drained(self.id))
    }
}
