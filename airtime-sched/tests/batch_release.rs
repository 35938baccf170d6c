//! `release_batch` against `release` one by one: the same counters after any mix of
//! genuine, doubled and forged tokens, live and removed stations, and any number of
//! (station, AC) groups (more than the batch sums at once).

use airtime_sched::{Ac, BatchRelease, Charge, Config, ReleaseError, Scheduler, StationId, Weight};
use proptest::prelude::*;

fn scheduler() -> Scheduler {
    let mut config = Config::default();
    config.max_stations = 16;
    config.max_txqs = 16;
    Scheduler::new(config).expect("valid config")
}

/// A token to hand back at completion, in the raw form a driver keeps.
#[derive(Clone, Debug)]
enum Token {
    /// A frame charged `us` to station `sta` on AC `ac`.
    Charged { sta: usize, ac: usize, us: u32 },
    /// The k-th charged token released once more (a driver bug).
    Again(usize),
    /// A value no charge produced.
    Forged(u32),
}

fn token() -> impl Strategy<Value = Token> {
    prop_oneof![
        8 => (0usize..12, 0usize..4, 1u32..20_000).prop_map(|(sta, ac, us)| Token::Charged { sta, ac, us }),
        1 => any::<usize>().prop_map(Token::Again),
        1 => any::<u32>().prop_map(Token::Forged),
    ]
}

/// Builds one scheduler's state for `tokens`; returns the raw tokens in completion order.
fn charge_all(sched: &Scheduler, stations: usize, removed: &[usize], tokens: &[Token]) -> (Vec<StationId>, Vec<u32>) {
    let ids: Vec<StationId> = (0..stations).map(|_| sched.add_station(Weight::DEFAULT).unwrap()).collect();
    let mut raws: Vec<u32> = Vec::new();
    let mut charged: Vec<u32> = Vec::new();
    for t in tokens {
        match *t {
            Token::Charged { sta, ac, us } => {
                let c = sched.charge_us(ids[sta % stations], Ac::ALL[ac], us).unwrap();
                charged.push(c.into_raw());
                raws.push(*charged.last().unwrap());
            }
            Token::Again(k) if !charged.is_empty() => raws.push(charged[k % charged.len()]),
            Token::Again(_) => {}
            Token::Forged(raw) => raws.push(raw),
        }
    }
    for &r in removed {
        let _ = sched.remove_station(ids[r % stations]);
    }
    (ids, raws)
}

proptest! {
    #[test]
    fn a_batch_leaves_the_counters_of_one_by_one_releases(
        stations in 1usize..12,
        tokens in proptest::collection::vec(token(), 0..80),
        removed in proptest::collection::vec(0usize..12, 0..3),
    ) {
        let (one, batch) = (scheduler(), scheduler());
        let (ids, raws) = charge_all(&one, stations, &removed, &tokens);
        let (_, raws_b) = charge_all(&batch, stations, &removed, &tokens);
        prop_assert_eq!(&raws, &raws_b);

        let (mut ok, mut unknown, mut underflow) = (0u32, 0u32, 0u32);
        for &raw in &raws {
            match Charge::from_raw(raw).map(|c| one.release(c)) {
                Some(Ok(())) => ok += 1,
                Some(Err(ReleaseError::Underflow)) => { ok += 1; underflow += 1 }
                Some(Err(_)) | None => unknown += 1,
            }
        }
        let tokens_b: Vec<Charge> = raws.iter().filter_map(|&r| Charge::from_raw(r)).collect();
        let n = tokens_b.len() as u32;
        let done = batch.release_batch(tokens_b);

        prop_assert_eq!(done.released + done.unknown_station, n, "every token counted once: {:?}", done);
        prop_assert_eq!(done.released, ok);
        prop_assert_eq!(done.unknown_station + (raws.len() as u32 - n), unknown);
        prop_assert_eq!(done.underflows > 0, underflow > 0, "{:?} vs {} underflows", done, underflow);
        prop_assert_eq!(batch.underflows(), u64::from(done.underflows));
        prop_assert_eq!(one.phy_aql_pending(), batch.phy_aql_pending());
        for &id in &ids {
            for ac in Ac::ALL {
                prop_assert_eq!(one.station_pending_us(id, ac).ok(), batch.station_pending_us(id, ac).ok());
            }
        }
        let (mut one, mut batch) = (one, batch);
        prop_assert!(one.check_invariants_quiescent().is_ok());
        prop_assert!(batch.check_invariants_quiescent().is_ok());
    }
}

#[test]
fn a_clean_pass_over_many_stations_releases_everything() {
    let sched = scheduler();
    let ids: Vec<StationId> = (0..16).map(|_| sched.add_station(Weight::DEFAULT).unwrap()).collect();
    // 64 frames over 16 stations and two ACs: 32 groups, four flushes of the batch.
    let pass: Vec<Charge> =
        (0..64).map(|i| sched.charge_us(ids[i % 16], if i % 2 == 0 { Ac::Be } else { Ac::Vi }, 100).unwrap()).collect();
    assert_eq!(sched.total_pending_us(), 6400);
    let done = sched.release_batch(pass);
    assert_eq!(done, BatchRelease { released: 64, unknown_station: 0, underflows: 0, other_radio: 0 });
    assert!(done.is_clean());
    assert_eq!(sched.total_pending_us(), 0);
    let mut sched = sched;
    sched.check_invariants_quiescent().unwrap();
}

#[test]
fn a_removed_station_slot_is_reused_only_after_its_batch() {
    let mut config = Config::default();
    config.max_stations = 1;
    let sched = Scheduler::new(config).unwrap();
    let sta = sched.add_station(Weight::DEFAULT).unwrap();
    let pass = vec![sched.charge_us(sta, Ac::Be, 8).unwrap(), sched.charge_us(sta, Ac::Be, 8).unwrap()];
    sched.remove_station(sta).unwrap();
    assert!(sched.add_station(Weight::DEFAULT).is_err(), "the slot still carries two charges");
    assert!(sched.release_batch(pass).is_clean());
    let next = sched.add_station(Weight::DEFAULT).unwrap();
    assert_eq!(sched.station_pending_us(next, Ac::Be).unwrap(), 0);
    assert_eq!(sched.total_pending_us(), 0);
}

#[test]
fn an_empty_pass_does_nothing() {
    let sched = scheduler();
    assert_eq!(sched.release_batch(Vec::new()), BatchRelease::default());
    assert_eq!(sched.underflows(), 0);
}
