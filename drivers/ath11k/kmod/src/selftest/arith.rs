// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! Integer arithmetic as the airtime code uses it, computed at run time
//! (`black_box` keeps the compiler from folding it) in the kernel's code
//! model: 64-bit airtime products, signed deficits, 12-bit sequence
//! numbers, overflow detection. No floats and no u128 division: both would
//! bring code the module cannot have, and build.sh's object check rejects.

use core::hint::black_box;

use super::{Outcome, ensure};
use crate::msg::MsgBuf;

/// Airtime in microseconds of `bytes` at `rate_100kbps` (units of 100 kb/s),
/// rounded up.
fn airtime_us(bytes: u64, rate_100kbps: u64) -> Option<u64> {
    let bits_x10 = bytes.checked_mul(8 * 10)?;
    if rate_100kbps == 0 {
        return None;
    }
    Some(bits_x10.div_ceil(rate_100kbps))
}

/// Airtime arithmetic, signed deficits, sequence-number wrap and overflow
/// detection give the values worked out by hand.
pub(super) fn integer_arithmetic(msg: &mut MsgBuf<'_>) -> Outcome {
    // 1500 bytes at 866.7 Mb/s: 12000 bits / 866.7 = 13.85 us, rounded up.
    let us = airtime_us(black_box(1500), black_box(8667));
    ensure!(msg, us == Some(14), "1500 B at 866.7 Mb/s = {us:?} us, want 14");

    // A 4 MiB A-MPDU at 6 Mb/s, in nanoseconds: the product needs 64 bits.
    let bytes = black_box(65_535_u32 * 64);
    let narrow = bytes.checked_mul(8 * 10_000);
    let wide = u64::from(bytes) * 8 * 10_000 / black_box(60);
    ensure!(
        msg,
        narrow.is_none() && wide == 5_592_320_000,
        "4 MiB at 6 Mb/s: u32 product {narrow:?} (want overflow), u64 {wide} ns"
    );
    ensure!(msg, airtime_us(black_box(1500), black_box(0)).is_none(), "a zero rate must not divide");

    // A deficit after one 1500 us frame with a 256 us quantum.
    let deficit = black_box(256_i64) - black_box(1500);
    ensure!(
        msg,
        deficit == -1244
            && deficit / 256 == -4
            && deficit % 256 == -220
            && deficit.div_euclid(256) == -5
            && deficit.rem_euclid(256) == 36,
        "signed division of {deficit} by 256 rounds wrong"
    );

    // 12-bit 802.11 sequence numbers wrap.
    let seq = black_box(4095_u16);
    let next = seq.wrapping_add(1) & 0xfff;
    let distance = black_box(2_u16).wrapping_sub(black_box(4094)) & 0xfff;
    ensure!(msg, next == 0 && distance == 4, "sequence wrap: next {next}, distance {distance}");

    // Overflow is detected, not wrapped silently.
    let big = black_box(u32::MAX);
    ensure!(
        msg,
        big.checked_mul(2).is_none()
            && big.saturating_add(1) == u32::MAX
            && black_box(10_u32).saturating_sub(20) == 0
            && black_box(i64::MIN).checked_neg().is_none()
            && black_box(i64::MIN).checked_div(-1).is_none(),
        "overflow detection failed"
    );

    // Bit operations and the high half of a 64x64 product (u128 multiply is
    // one instruction; u128 division would need __udivti3).
    let x = black_box(0x0000_0100_0000_0000_u64);
    let high = ((u128::from(black_box(u64::MAX)) * 3) >> 64) as u64;
    ensure!(
        msg,
        x.ilog2() == 40 && x.leading_zeros() == 23 && x.is_power_of_two() && high == 2,
        "bit operations: ilog2 {}, lz {}, high {high}",
        x.ilog2(),
        x.leading_zeros()
    );
    Ok(())
}
