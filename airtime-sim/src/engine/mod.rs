//! The discrete-event engine: a virtual clock in nanoseconds, an event heap that pops
//! events in (time, insertion order) order, and a seeded random number generator. Given
//! the same seed, a run replays exactly.

pub mod queue;
pub mod rng;
pub mod time;

pub use queue::EventQueue;
pub use rng::Rng;
pub use time::{Nanos, ms, us};
