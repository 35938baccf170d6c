//! The TCL rings as the scheduler's [`Ring`], seen from the CPU a round runs on. The room
//! check (before each dequeue) asks that CPU's ring, as ath11k does; a frame goes into
//! the ring of the CPU that handled its flow in the stack. ath11k itself picks the ring
//! of the CPU running the round, so in the series one flow can be spread over several
//! rings and reordered in the firmware; Linux TCP's reordering detection absorbs that,
//! the simulator's compact TCP would not, so the model keeps each flow in one ring. A
//! frame whose ring is full is refused and comes back to the caller (the series frees it).

use super::hardware::{Hardware, HwFrame};
use crate::net::{Node, Packet};
use airtime_sched::{Ac, Charge, PushError, Ring, RingErrorKind};

/// The ring of one CPU.
pub struct TclPort<'a> {
    /// The hardware.
    pub hw: &'a mut Hardware,
    /// The ring of the CPU the round runs on.
    pub ring: u8,
}

impl Ring for TclPort<'_> {
    type Frame = Packet;
    type Error = RingErrorKind;

    fn has_room(&self, _ac: Ac) -> bool {
        self.hw.has_room(self.ring)
    }

    fn push(&mut self, pkt: Packet, charge: Option<Charge>) -> Result<(), PushError<Packet, RingErrorKind>> {
        let Node::Station(station) = pkt.dst else {
            return Err(PushError { frame: pkt, charge, error: RingErrorKind::Other });
        };
        self.hw
            .push(HwFrame {
                ring: self.hw.ring_of_cpu(pkt.cpu),
                fifo: self.hw.ring_of_cpu(pkt.cpu),
                pkt,
                charge,
                station,
                msdu_id: None,
            })
            .map_err(|f| PushError { frame: f.pkt, charge: f.charge, error: RingErrorKind::Full })
    }
}
