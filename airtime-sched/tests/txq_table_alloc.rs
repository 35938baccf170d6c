//! `Scheduler::new` and `TxqTable::try_new` when memory is short: an error (with the
//! scheduler handed back, for the table), never an abort. Its own test binary, for its
//! failing global allocator.

use airtime_sched::{
    Config, ConfigError, FqCodelConfig, FqCodelTxq, FqFrame, Frame, Instant, Scheduler, Tid, TxqTable, Weight,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Allocations above this many bytes fail (usize::MAX: none do).
static FAIL_ABOVE: AtomicUsize = AtomicUsize::new(usize::MAX);

thread_local! {
    /// This thread's allocations to let through before one fails (usize::MAX: none
    /// fails); counts down, and the failed one resets it.
    static FAIL_AFTER: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Whether this thread's next allocation is the one to fail.
fn fails_here() -> bool {
    FAIL_AFTER.with(|left| match left.get() {
        usize::MAX => false,
        0 => {
            left.set(usize::MAX);
            true
        }
        n => {
            left.set(n - 1);
            false
        }
    })
}

struct Failing;
// SAFETY: forwards to the system allocator, or returns null (a failed allocation).
unsafe impl GlobalAlloc for Failing {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > FAIL_ABOVE.load(Ordering::SeqCst) || fails_here() {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's layout, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: allocated by `System` above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Failing = Failing;

/// The crate's own FQ-CoDel txq serves as the queue: this test is about the table.
type Q = FqCodelTxq<Pkt>;

struct Pkt;
impl Frame for Pkt {
    fn len_bytes(&self) -> u32 {
        100
    }
}
impl FqFrame for Pkt {
    fn flow_hash(&self) -> u32 {
        0
    }
}

/// The table's txqs, and the size above which allocations fail, for the test below:
/// under Miri 64 txqs (a table of 4096 took about 100 s to build, fill and drop there),
/// whose cells (two cache-line-aligned halves each) are still above 4 KiB.
const TXQS_AND_FAIL_ABOVE: (u16, usize) = if cfg!(miri) { (64, 4 * 1024) } else { (4096, 64 * 1024) };

#[test]
fn try_new_reports_no_memory_and_hands_the_scheduler_back() {
    let (txqs, fail_above) = TXQS_AND_FAIL_ABOVE;
    let mut config = Config::default();
    config.max_txqs = txqs;
    let sched = Scheduler::new(config).unwrap();
    let sta = sched.add_station(airtime_sched::Weight::DEFAULT).unwrap();
    // The cells' one allocation is far above the bound; everything else here is below it.
    FAIL_ABOVE.store(fail_above, Ordering::SeqCst);
    let refused = TxqTable::<Q>::try_new(sched);
    FAIL_ABOVE.store(usize::MAX, Ordering::SeqCst);
    let err = refused.expect_err("no memory for the cells");
    assert_eq!(err.to_string(), "no memory for the txq table");
    // The scheduler is whole, its station still there, and a table can be made of it.
    let sched = err.sched;
    assert!(sched.weight(sta).is_ok());
    let table = TxqTable::<Q>::try_new(sched).expect("memory again");
    let q = table.add_txq(Some(sta), Tid::BE, Q::new(FqCodelConfig::default()).unwrap()).unwrap();
    assert_eq!(table.txq_ids().collect::<Vec<_>>(), [q]);
}

#[test]
fn scheduler_new_reports_no_memory_at_each_of_its_allocations() {
    // A smaller table under Miri, which builds it 14 times: the allocations are the same.
    let (stations, txqs) = if cfg!(miri) { (4, 8) } else { (16, 64) };
    let config = Config::builder().max_stations(stations).unwrap().max_txqs(txqs).unwrap().build();
    // Fail the first allocation, then the second, and so on, until none fails: each
    // refusal is an error, and nothing aborts.
    let mut refused = 0;
    let sched = loop {
        FAIL_AFTER.with(|left| left.set(refused));
        let made = Scheduler::new(config);
        FAIL_AFTER.with(|left| left.set(usize::MAX));
        match made {
            Ok(sched) => break sched,
            Err(e) => assert_eq!(e, ConfigError::OutOfMemory, "allocation {refused}"),
        }
        refused += 1;
    };
    // The station and txq tables, the retired stack, the quiescent check's table, each
    // AC's list (a stack and a ring) and the ACs' block: thirteen allocations, all of
    // them fallible.
    assert_eq!(refused, 13);
    assert_eq!(usize::from(sched.config().max_txqs), txqs);
    // The exact check allocates nothing (in a kernel it runs from a debugfs file), with
    // entries on every AC's list and a dead one: the countdown, set high enough never
    // to fail, counts the allocations, and stays where it was.
    let mut sched = sched;
    let sta = sched.add_station(Weight::DEFAULT).unwrap();
    for tid in [Tid::BK, Tid::BE, Tid::CL, Tid::VO] {
        let q = sched.add_txq(Some(sta), tid).unwrap();
        sched.wake_txq(q, Instant::ZERO).unwrap();
    }
    let gone = sched.add_txq(None, Tid::BE).unwrap();
    sched.wake_txq(gone, Instant::ZERO).unwrap();
    sched.remove_txq(gone).unwrap();
    const COUNTDOWN: usize = 1 << 20;
    FAIL_AFTER.with(|left| left.set(COUNTDOWN));
    let checked = sched.check_invariants_quiescent();
    let left = FAIL_AFTER.with(|left| left.replace(usize::MAX));
    assert_eq!(checked, Ok(()));
    assert_eq!(COUNTDOWN - left, 0, "the quiescent check allocated");
    assert_eq!(ConfigError::OutOfMemory.to_string(), "no memory for the scheduler's tables");
}
