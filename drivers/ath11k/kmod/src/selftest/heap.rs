// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! Scenarios for the global allocator ([`crate::kalloc`]): growth through
//! `krealloc`, zeroed allocation, many small nodes, over-aligned layouts,
//! and failure reported as an error instead of a warning or a panic.
//!
//! Each scenario also checks that it freed everything it allocated. That
//! holds because nothing else allocates on the Rust heap while the self-test
//! runs (it runs from module init, before anything else is registered).

use alloc::alloc::{alloc, alloc_zeroed, dealloc, realloc};
use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;
use core::alloc::Layout;
use core::hint::black_box;

use super::{Outcome, ensure};
use crate::kalloc::{self, KMALLOC_MIN_ALIGN, MAX_ALIGN, kmalloc_size};
use crate::msg::MsgBuf;

/// Fails unless the number of live heap objects is back to `before`.
fn no_leak(msg: &mut MsgBuf<'_>, before: isize) -> Outcome {
    let now = kalloc::live_objects();
    ensure!(msg, now == before, "{} heap object(s) leaked (live before {before}, after {now})", now - before);
    Ok(())
}

/// `Layout::from_size_align`, with a failure message instead of an `Err`.
fn layout(msg: &mut MsgBuf<'_>, size: usize, align: usize) -> Result<Layout, super::Failed> {
    let layout = Layout::from_size_align(size, align);
    ensure!(msg, layout.is_ok(), "no layout of {size} bytes aligned to {align}");
    layout.map_err(|_| super::Failed)
}

/// A `Vec` grown one element at a time (every growth is a `krealloc`),
/// shrunk, a `Box`, a boxed slice larger than a page, a zeroed vector and a
/// formatted `String`: contents survive and everything is freed.
pub(super) fn vec_and_box(msg: &mut MsgBuf<'_>) -> Outcome {
    let before = kalloc::live_objects();
    {
        let n: u64 = black_box(4096);
        let mut squares: Vec<u64> = Vec::new();
        for i in 0..n {
            squares.push(i * i);
        }
        let sum: u64 = squares.iter().sum();
        let want = (n - 1) * n * (2 * n - 1) / 6;
        ensure!(msg, sum == want, "sum of squares {sum}, want {want}");

        squares.truncate(10);
        squares.shrink_to_fit();
        ensure!(
            msg,
            squares.capacity() >= 10 && squares[9] == 81,
            "after shrink: capacity {}, [9] = {}",
            squares.capacity(),
            squares[9]
        );

        let station = Box::new((black_box(0xa1b2_c3d4_u32), black_box(256_u16)));
        ensure!(msg, *station == (0xa1b2_c3d4, 256), "boxed tuple reads back {:?}", *station);

        let big: Box<[u8]> = vec![0xa5_u8; black_box(16 * 1024)].into_boxed_slice();
        ensure!(msg, big.len() == 16 * 1024 && big.iter().all(|&b| b == 0xa5), "16 KiB boxed slice lost its contents");

        let zeroed: Vec<u32> = vec![0; black_box(1000)];
        ensure!(msg, zeroed.iter().all(|&w| w == 0), "vec![0; 1000] is not zero-filled");

        let text = format!("{}-{}", black_box(7), "sta");
        ensure!(msg, text == "7-sta", "format! gave {text:?}");
    }
    no_leak(msg, before)
}

/// A `BTreeMap` filled with 2048 keys in scrambled order, half removed:
/// order, length and values hold, and every node is freed.
pub(super) fn btreemap(msg: &mut MsgBuf<'_>) -> Outcome {
    let before = kalloc::live_objects();
    {
        const KEYS: u32 = 2048;
        let stride = black_box(937_u32); // odd, so i * stride visits every key
        let mut map = BTreeMap::new();
        for i in 0..KEYS {
            let key = i.wrapping_mul(stride) % KEYS;
            ensure!(msg, map.insert(key, key * 3).is_none(), "key {key} inserted twice");
        }
        ensure!(msg, map.len() == KEYS as usize, "len {} after fill", map.len());

        map.retain(|key, _| key.is_multiple_of(2));
        ensure!(msg, map.len() == 1024, "len {} after retain", map.len());

        let mut expect = 0;
        for (&key, &value) in &map {
            ensure!(
                msg,
                key == expect && value == key * 3,
                "iteration gave ({key}, {value}), want ({expect}, {})",
                expect * 3
            );
            expect += 2;
        }
        ensure!(
            msg,
            map.first_key_value() == Some((&0, &0)) && map.last_key_value() == Some((&2046, &6138)),
            "first/last entries wrong"
        );
    }
    no_leak(msg, before)
}

/// Over-aligned layouts come back aligned, keep their alignment and
/// contents through `realloc`, zeroed ones are zero, and an alignment above
/// a page is refused with null rather than served misaligned.
pub(super) fn alignment(msg: &mut MsgBuf<'_>) -> Outcome {
    let before = kalloc::live_objects();

    for (size, align, want) in
        [(24, 8, Some(24)), (24, 64, Some(64)), (100, 16, Some(128)), (5000, 4096, Some(8192)), (1, 8192, None)]
    {
        let layout = layout(msg, size, align)?;
        let got = kmalloc_size(layout);
        ensure!(msg, got == want, "kmalloc_size({size}, {align}) = {got:?}, want {want:?}");
    }

    for align in [16, 64, 512, MAX_ALIGN] {
        for size in [1_usize, 24, 100, 3000, 5000] {
            check_aligned_block(msg, black_box(size), black_box(align))?;
        }
    }

    let too_aligned = layout(msg, 64, 2 * MAX_ALIGN)?;
    // SAFETY: the layout has a non-zero size; a non-null result is freed
    // below with the same layout.
    let p = unsafe { alloc(too_aligned) };
    if !p.is_null() {
        // SAFETY: `p` was just allocated with `too_aligned`.
        unsafe { dealloc(p, too_aligned) };
    }
    ensure!(msg, p.is_null(), "alignment {} was served ({p:p}); it must be refused", 2 * MAX_ALIGN);
    ensure!(msg, KMALLOC_MIN_ALIGN.is_power_of_two() && KMALLOC_MIN_ALIGN <= MAX_ALIGN, "bad allocator constants");

    no_leak(msg, before)
}

/// One over-aligned block through alloc, realloc (grow) and dealloc, and one
/// through `alloc_zeroed`.
fn check_aligned_block(msg: &mut MsgBuf<'_>, size: usize, align: usize) -> Outcome {
    let layout = layout(msg, size, align)?;
    // SAFETY: `size` is non-zero; the block is freed below with `layout`.
    let p = unsafe { alloc(layout) };
    ensure!(msg, !p.is_null(), "alloc({size}, {align}) returned null");
    ensure!(msg, (p as usize).is_multiple_of(align), "alloc({size}, {align}) returned misaligned {p:p}");
    // SAFETY: `p` is valid for `size` bytes.
    unsafe { p.write_bytes(0x5a, size) };

    let new_size = 2 * size + align;
    // SAFETY: `p` was allocated with `layout`; `new_size` is non-zero and far
    // from overflowing isize.
    let q = unsafe { realloc(p, layout, new_size) };
    if q.is_null() {
        // SAFETY: a failed realloc leaves `p` allocated with `layout`.
        unsafe { dealloc(p, layout) };
    }
    ensure!(msg, !q.is_null(), "realloc({size} -> {new_size}, {align}) returned null");
    // SAFETY: `q` is valid for `new_size >= size` bytes, the first `size` of
    // them initialised (copied from `p`).
    let kept = unsafe { core::slice::from_raw_parts(q, size) }.iter().all(|&b| b == 0x5a);
    let aligned = (q as usize).is_multiple_of(align);
    // SAFETY: `q` is the live block of `new_size` bytes with `align`.
    unsafe { dealloc(q, Layout::from_size_align_unchecked(new_size, align)) };
    ensure!(msg, aligned && kept, "realloc({size} -> {new_size}, {align}): aligned {aligned}, contents kept {kept}");

    // SAFETY: `size` is non-zero; freed below with `layout`.
    let z = unsafe { alloc_zeroed(layout) };
    ensure!(msg, !z.is_null(), "alloc_zeroed({size}, {align}) returned null");
    // SAFETY: `z` is valid and initialised (zeroed) for `size` bytes.
    let zero = unsafe { core::slice::from_raw_parts(z, size) }.iter().all(|&b| b == 0);
    let aligned = (z as usize).is_multiple_of(align);
    // SAFETY: `z` was allocated with `layout`.
    unsafe { dealloc(z, layout) };
    ensure!(msg, aligned && zero, "alloc_zeroed({size}, {align}): aligned {aligned}, zeroed {zero}");
    Ok(())
}

/// An allocation the kernel cannot serve (1 GiB, far above the largest
/// kmalloc) is an `Err` from `try_reserve`, with the existing contents
/// intact, and no kernel warning (`__GFP_NOWARN`; the boot test fails on a
/// `W` taint). A capacity overflow is an `Err` before reaching the
/// allocator.
pub(super) fn failure_is_reported(msg: &mut MsgBuf<'_>) -> Outcome {
    let before = kalloc::live_objects();
    {
        let huge = black_box(1_usize << 30);

        let mut empty: Vec<u8> = Vec::new();
        ensure!(msg, empty.try_reserve(huge).is_err(), "try_reserve(1 GiB) on an empty Vec succeeded");

        // Growing an existing block goes through krealloc, which must leave
        // the old block untouched when it fails.
        let mut some = vec![7_u8; 100];
        ensure!(msg, some.try_reserve(huge).is_err(), "try_reserve(1 GiB) on a 100-byte Vec succeeded");
        ensure!(msg, some.len() == 100 && some.iter().all(|&b| b == 7), "a failed krealloc damaged the old block");
        some.push(8);
        ensure!(msg, some[100] == 8, "Vec unusable after a failed reserve");

        ensure!(msg, empty.try_reserve(black_box(usize::MAX)).is_err(), "try_reserve(usize::MAX) succeeded");
    }
    no_leak(msg, before)
}
