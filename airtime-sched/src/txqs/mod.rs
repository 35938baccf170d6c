//! Txqs the crate owns: a [`TxqTable`] per radio, where any context enqueues without
//! waiting (into the txq's queue when nobody holds it, else its lock-free intake) and
//! the context the scheduler hands a txq to ([`TxqTurn`]) is the only one that dequeues
//! from it; and the ready loop over it ([`TxqTable::run_round`]), which two
//! contexts may run at once on one AC.

mod intake;
mod queue_lock;
mod round_loop;
mod table;
mod turn;

pub use round_loop::{TurnBudget, TurnStart};
pub use table::{
    AddTxqError, EnqueueError, INTAKE_LIMIT, RemovedTxq, Retry, ReturnedFrames, TableAllocError, TxqTable,
};
pub use turn::TxqTurn;
