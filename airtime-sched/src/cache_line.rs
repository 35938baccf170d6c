//! Keeping what different contexts write apart, one cache line (pair) each.
//!
//! The wake context and the completion context write different txqs, stations and
//! queues at the same time; packed next to each other, those writes would still move
//! the same lines between CPUs (false sharing). Measured on the end-to-end benchmark
//! (`benches/examples/end_to_end.rs`), a txq's intake sharing a line with its queue cost
//! about a tenth of the two-context throughput. The alignment is 128 bytes, not 64:
//! x86's spatial prefetcher and some Arm cores fetch lines in aligned pairs, so two
//! contexts writing the two halves of a pair still contend (crossbeam's `CachePadded`
//! makes the same choice). Slots that sit in arrays of thousands (a txq's or a station
//! AC's atomics) take one 64-byte line each instead, which is what their size already
//! nearly is.

/// `T` on cache lines of its own.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct CacheLines<T>(pub(crate) T);

impl<T> core::ops::Deref for CacheLines<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}
