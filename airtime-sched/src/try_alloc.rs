//! Allocations that report a shortage instead of aborting. The scheduler's tables are
//! allocated once, when it is built; in a kernel the allocator's abort on failure is a
//! BUG(), so a failed allocation there must come back as an error.

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::{Ac, PerAc};

/// `n` values, the `i`-th made by `f(i)`, each moved into its place in one allocation of
/// exactly `n` as soon as it is made, so that the stack holds one value at a time, never
/// them all (a kernel module's frames must stay well under 2 KiB); `None` when memory is
/// short or when `f` gives `None`, the values already made dropped.
fn try_boxed_slice<T>(n: usize, mut f: impl FnMut(usize) -> Option<T>) -> Option<Box<[T]>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).ok()?;
    // An exact reservation gives exactly `n` today; were it ever more, the shrink in
    // `into_boxed_slice` could abort, so that is reported as a shortage instead
    // (zero-sized values have no allocation, and any capacity).
    if core::mem::size_of::<T>() != 0 && v.capacity() != n {
        return None;
    }
    for i in 0..n {
        // Within the capacity just reserved: no allocation.
        v.push(f(i)?);
    }
    // Capacity equals length: no reallocation.
    Some(v.into_boxed_slice())
}

/// `n` values, the `i`-th made by `f(i)`, in one allocation of exactly `n`; `None`
/// when memory is short.
pub(crate) fn boxed_slice<T>(n: usize, mut f: impl FnMut(usize) -> T) -> Option<Box<[T]>> {
    try_boxed_slice(n, |i| Some(f(i)))
}

/// `N` values as [`try_boxed_slice`] makes them, as an array.
pub(crate) fn boxed_array<T, const N: usize>(f: impl FnMut(usize) -> Option<T>) -> Option<Box<[T; N]>> {
    try_boxed_slice(N, f)?.try_into().ok()
}

/// Each AC's value, from `f` of the AC, made straight into its place on the heap (see
/// [`boxed_array`]); `None` when memory is short or `f` gives `None`.
pub(crate) fn boxed_per_ac<T>(mut f: impl FnMut(Ac) -> Option<T>) -> Option<Box<PerAc<T>>> {
    let values: Box<[T; Ac::COUNT]> = boxed_array(|i| f(*Ac::ALL.get(i)?))?;
    // SAFETY: `PerAc<T>` is `repr(transparent)` over `[T; Ac::COUNT]`, so the allocation
    // has the layout of a `PerAc<T>` and holds a valid one; the new box owns it alone and
    // frees it with that same layout.
    Some(unsafe { Box::from_raw(Box::into_raw(values).cast::<PerAc<T>>()) })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_values_are_made_in_order_and_boxed() {
        assert_eq!(&*boxed_slice(4, |i| i * 10).unwrap(), &[0, 10, 20, 30]);
        assert_eq!(boxed_slice(0, |i| i).unwrap().len(), 0);
        assert_eq!(*boxed_array::<_, 3>(|i| Some(i + 1)).unwrap(), [1, 2, 3]);
        assert_eq!(*boxed_array::<(), 2>(|_| Some(())).unwrap(), [(), ()]);
        assert_eq!(*boxed_per_ac(|ac| Some(ac.index())).unwrap(), [0, 1, 2, 3]);
        // Too large for any allocator: refused, not aborted.
        assert!(boxed_slice::<u64>(usize::MAX / 4, |_| 0).is_none());
    }

    #[test]
    fn a_refused_value_drops_those_already_made() {
        let made = alloc::rc::Rc::new(());
        let refused = boxed_array::<_, 4>(|i| (i < 2).then(|| made.clone()));
        assert!(refused.is_none());
        // The two clones made before the refusal were dropped, not leaked.
        assert_eq!(alloc::rc::Rc::strong_count(&made), 1);
    }
}
