//! [`SchedulerUnderTest`] for `airtime_sched::Scheduler`: each operation is the call a
//! driver makes, nothing more.

use crate::SchedulerUnderTest;
use airtime_sched::{Ac, Charge, Config, Instant, Round, Scheduler, Serving, StationId, Tid, TxqId, TxqReturn, Weight};

impl SchedulerUnderTest for Scheduler {
    type Station = StationId;
    type Txq = TxqId;
    type Held<'a> = Serving<'a>;
    type Charge = Charge;
    type Round = Round;

    const NAME: &'static str = "ours";

    fn new(max_stations: u16) -> Self {
        let mut config = Config::default();
        config.max_stations = max_stations.clamp(1, Config::MAX_STATIONS);
        config.max_txqs = max_stations.max(1);
        // Adaptive AQL's cost on the same cycle: `ADAPTIVE_AQL=1 benches/instructions.sh`.
        config.adaptive_aql = std::env::var_os("ADAPTIVE_AQL").is_some_and(|v| v == "1");
        match Scheduler::new(config) {
            Ok(s) => s,
            Err(e) => panic!("benchmark configuration refused: {e}"),
        }
    }

    fn add_station(&mut self, weight: u16) -> StationId {
        let weight = Weight::new(weight).unwrap_or(Weight::DEFAULT);
        match Scheduler::add_station(self, weight) {
            Ok(id) => id,
            Err(e) => panic!("add_station: {e}"),
        }
    }

    fn add_txq(&mut self, station: StationId, tid: Tid) -> TxqId {
        match Scheduler::add_txq(self, Some(station), tid) {
            Ok(id) => id,
            Err(e) => panic!("add_txq: {e}"),
        }
    }

    #[inline]
    fn wake(&self, txq: TxqId, now: u64) {
        let _ = self.wake_txq(txq, Instant::from_micros(now));
    }

    #[inline]
    fn start_round(&self, ac: Ac) -> Option<Round> {
        Some(Scheduler::start_round(self, ac)).filter(|r| r.is_open())
    }

    #[inline]
    fn next_txq(&self, round: Round, now: u64) -> Option<Serving<'_>> {
        Scheduler::next_txq(self, round, Instant::from_micros(now))
    }

    #[inline]
    fn held_index(held: &Serving<'_>) -> usize {
        held.txq().index()
    }

    #[inline]
    fn airtime_check(&self, held: &Serving<'_>) -> bool {
        held.airtime_check()
    }

    #[inline]
    fn return_txq(&self, held: Serving<'_>, backlogged: bool, now: u64) {
        let outcome = if backlogged { TxqReturn::Backlogged } else { TxqReturn::Empty };
        Scheduler::return_txq(self, held, outcome, Instant::from_micros(now));
    }

    #[inline]
    fn charge(&self, station: StationId, ac: Ac, airtime_us: u32) -> Option<Charge> {
        self.charge_us(station, ac, airtime_us).ok()
    }

    #[inline]
    fn charge_held(&self, held: &mut Serving<'_>, _station: StationId, _ac: Ac, airtime_us: u32) -> Option<Charge> {
        // The handle charges its txq's station on its AC, which are these.
        held.charge_us(airtime_us).ok()
    }

    #[inline]
    fn release(&self, charge: Charge) {
        let _ = Scheduler::release(self, charge);
    }

    #[inline]
    fn release_pass(&self, charges: &mut Vec<Charge>) {
        let _ = self.release_batch(charges.drain(..));
    }

    #[inline]
    fn register_airtime(&self, station: StationId, ac: Ac, tx_us: u32, now: u64) {
        let _ = Scheduler::register_airtime(self, station, ac, tx_us, 0, Instant::from_micros(now));
    }

    fn reset_deficit(&self, station: StationId) {
        let _ = self.reset_airtime(station);
    }

    #[inline]
    fn charge_into_raw(charge: Charge) -> u32 {
        charge.into_raw()
    }

    #[inline]
    fn charge_from_raw(raw: u32) -> Option<Charge> {
        Charge::from_raw(raw)
    }
}
