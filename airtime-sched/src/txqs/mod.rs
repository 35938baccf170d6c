//! Txqs the crate owns: a [`TxqTable`] per radio, where any context enqueues without a
//! lock and the context the scheduler hands a txq to ([`TxqTurn`]) is the only one that
//! touches its queue; and the ready loop over it ([`TxqTable::run_round`]), which two
//! contexts may run at once on one AC.

mod intake;
mod round_loop;
mod table;
mod turn;

pub use round_loop::{TurnBudget, TurnStart};
pub use table::{
    AddTxqError, EnqueueError, INTAKE_LIMIT, RemovedTxq, Retry, ReturnedFrames, TableAllocError, TxqTable,
};
pub use turn::TxqTurn;
