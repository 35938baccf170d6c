//! Putting it together: the world of one run (hosts, wired link, AP, medium) and the
//! runner that executes a suite's arms and runs on worker threads.

pub mod run;
pub mod world;
