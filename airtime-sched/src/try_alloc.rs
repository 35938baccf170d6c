//! Allocations that report a shortage instead of aborting. The scheduler's tables are
//! allocated once, when it is built; in a kernel the allocator's abort on failure is a
//! BUG(), so a failed allocation there must come back as an error.

use alloc::boxed::Box;
use alloc::vec::Vec;

/// `n` values, the `i`-th made by `f(i)`, in one allocation of exactly `n`; `None`
/// when memory is short.
pub(crate) fn boxed_slice<T>(n: usize, f: impl FnMut(usize) -> T) -> Option<Box<[T]>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).ok()?;
    // An exact reservation gives exactly `n` today; were it ever more, the shrink in
    // `into_boxed_slice` could abort, so that is reported as a shortage instead.
    if v.capacity() != n {
        return None;
    }
    // Within the capacity just reserved: no allocation.
    v.extend((0..n).map(f));
    // Capacity equals length: no reallocation.
    Some(v.into_boxed_slice())
}

/// `value` in a box; `None` when memory is short (`Box::new` aborts instead).
pub(crate) fn boxed<T>(value: T) -> Option<Box<T>> {
    let layout = core::alloc::Layout::new::<T>();
    if layout.size() == 0 {
        // Nothing to allocate.
        return Some(Box::new(value));
    }
    // SAFETY: a layout of non-zero size, as `alloc` requires.
    let ptr = unsafe { alloc::alloc::alloc(layout) }.cast::<T>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` is a fresh allocation of `T`'s layout by the global allocator,
    // written once here and then owned by the box, which frees it with that layout.
    unsafe {
        ptr.write(value);
        Some(Box::from_raw(ptr))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_values_are_made_in_order_and_boxed() {
        assert_eq!(&*boxed_slice(4, |i| i * 10).unwrap(), &[0, 10, 20, 30]);
        assert_eq!(boxed_slice(0, |i| i).unwrap().len(), 0);
        assert_eq!(*boxed([7u64; 8]).unwrap(), [7; 8]);
        assert_eq!(*boxed(()).unwrap(), ());
        // Too large for any allocator: refused, not aborted.
        assert!(boxed_slice::<u64>(usize::MAX / 4, |_| 0).is_none());
    }
}
