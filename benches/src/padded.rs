//! A value alone on its cache lines, so that two threads writing neighbouring values do
//! not pass one line back and forth (false sharing) and the benchmark measures the
//! schedulers' own sharing, not the harness's.

use core::ops::Deref;

/// `T` aligned (and so padded) to 128 bytes: two 64-byte lines, because x86 cores fetch
/// lines in adjacent pairs.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct Padded<T>(pub T);

impl<T> Deref for Padded<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}
