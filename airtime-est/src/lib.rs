// SPDX-License-Identifier: MIT OR GPL-2.0-only
//! Integer 802.11 airtime estimation for Airtime Queue Limits (AQL), after Linux mac80211.
//!
//! # What is estimated
//!
//! The *airtime* of a frame: how long, in microseconds, it keeps the medium busy. A Wi-Fi
//! scheduler needs it before the frame is sent, to bound how much airtime each station may
//! have queued in the hardware (AQL), and that is the job of this crate. Measured airtime
//! (what the hardware reports afterwards) is better for fairness accounting, and the
//! [`Calibrator`] uses it to correct the estimate.
//!
//! # From what
//!
//! Three inputs, and nothing else (no retries, RTS/CTS, contention or MU grouping, as in
//! mainline's `ieee80211_calc_expected_tx_airtime`, which is why the estimate only bounds
//! queues while fairness uses measured airtime):
//!
//! * the **rate** the station was last sent at, a [`Rate`]: legacy CCK or OFDM bitrate and
//!   preamble, or encoding (HT, VHT, HE, EHT) with MCS, spatial streams, [`Bandwidth`] and
//!   guard interval ([`HeGi`] for HE/EHT). Constructors validate, so every `Rate` can be
//!   priced;
//! * the **frame length** in bytes;
//! * whether the frame goes out **aggregated** in an A-MPDU (mainline's proxy: every access
//!   category but VO).
//!
//! # How, top-down
//!
//! 1. **Duration tables** ([`tables`], as in mainline's airtime.c). For every MCS rate, the
//!    data duration of a 1024-byte frame in **1/1024 us**, computed at compile time by
//!    `const fn` exactly as mac80211 builds them: symbols (times 1024) for 8192 bits, times
//!    the symbol time, stored as a `u16` with a per-group shift.
//! 2. **PPDU airtime** ([`rx_airtime_us`], mainline's `ieee80211_calc_rx_airtime`): data part
//!    `t x len / 2^20` us plus a fixed overhead of `36 + 4 x streams` us (preamble, training
//!    fields, SIFS, acknowledgement). Legacy rates: preamble plus `len x 8 / rate`.
//! 3. **Retry chains** ([`tx_airtime_us`], `ieee80211_calc_tx_airtime`): the sum over up to
//!    four (rate, tries) stages, every attempt a full PPDU.
//! 4. **Expected airtime for AQL** ([`expected_tx_airtime_us`],
//!    `ieee80211_calc_expected_tx_airtime`): 38 bytes are added to the length; an aggregated
//!    frame pays only `overhead >> s` of the PPDU overhead, with `s` from 1 to 6 (2 to 64
//!    MPDUs per A-MPDU assumed, more the faster the rate), and at least 4 us.
//! 5. **AQL charge** ([`aql_charge_us`]): mainline stores the estimate in a 10-bit field in 4 us
//!    units, so it charges `4 x floor(min(est, 4095) / 4)`.
//! 6. **Calibration** ([`Calibrator`], not in mainline): a per-station fixed-point ratio of
//!    decayed sums, measured over charged (unscaled) airtime, that scales later estimates.
//!
//! # Units
//!
//! Every duration in the API is whole **microseconds** in a `u32` (saturating at `u32::MAX`,
//! never wrapping); table entries are **1/1024 us per 1024 bytes**; calibrator ratios are
//! **Q16** (65 536 = 1.0); PHY rates are kbit/s. No floating point, no allocation, no panic on
//! any input: `no_std` always (it never links std, even beside std users in one build).
//!
//! # Where this differs from mainline, and why
//!
//! * **64-bit arithmetic** (mainline's 32-bit duration product). Mainline multiplies the
//!   table entry by the length in 32 bits; this wraps first at HT20/VHT20 MCS0 long GI,
//!   above 3328 bytes (frames above 3290 bytes in the expected estimate, which adds 38), and
//!   a large A-MSDU at a slow rate is then charged a small fraction of its airtime. For
//!   7935-byte frames (the largest HT A-MSDU) 28 of mainline's 3280 MCS rates wrap, for
//!   11 454-byte frames (the largest VHT MPDU) 52, all at 20 or 40 MHz (the golden test
//!   counts them). We compute in `u64` and saturate.
//!   Wherever mainline does not wrap the results are identical (a property test checks it);
//!   [`mainline`] reproduces the wrapping arithmetic for comparison.
//! * **VHT with 5 to 8 streams** is priced by the same table construction; mainline's tables
//!   stop at 4 streams, so it prices such a frame at 0 when it is not aggregated and at the
//!   4 us floor in an A-MPDU, which all but exempts those frames from AQL.
//! * **1 Mbit/s CCK** is always priced with the long preamble, since 802.11b has no
//!   short-preamble form of it.
//! * **The 4092 us clamp** of mainline's 10-bit charge field is offered as [`aql_charge_us`]
//!   but not applied by the estimates: it under-charges very slow frames (1500 bytes at 1
//!   Mbit/s is 12 506 us), and a scheduler that does not keep the charge in a 10-bit field need
//!   not clamp. It clamps the whole estimate, where mainline first truncates it to 16 bits, so
//!   the two differ for estimates of 65 536 us or more (1 Mbit/s frames of 8162 bytes or more).
//! * **No zero estimate** (mainline's unpriced frames). Mainline returns 0 before the first
//!   rate report, and those frames bypass AQL. Here there is no "unknown rate" value: the
//!   caller chooses a conservative [`Rate`] on purpose until a report arrives.
//! * **Calibration** against hardware-reported airtime is new; see [`Calibrator`].
//! * [`Rate::phy_rate_kbps`] is computed from the standard's parameters, not from the tables'
//!   rounded bits per symbol (the estimates themselves use the tables, as mainline does).
//!
//! # Example
//!
//! ```
//! use airtime_est::{aql_charge_us, expected_tx_airtime_us, Bandwidth, Calibrator,
//!                   CalibratorConfig, HeGi, Rate};
//!
//! // A 1500-byte frame to a VHT80 1x1 station last seen at MCS9, short GI.
//! // Mainline's integer arithmetic gives the same: 28 us of data, plus 40 >> 5 us of
//! // overhead in an A-MPDU or all 40 us alone.
//! let rate = Rate::vht(9, 1, Bandwidth::Mhz80, true)?;
//! let aggregated = expected_tx_airtime_us(rate, 1500, true); // best effort: in an A-MPDU
//! let single = expected_tx_airtime_us(rate, 1500, false); // voice: a PPDU of its own
//! assert_eq!((aggregated, single), (29, 68));
//! assert_eq!(aql_charge_us(aggregated), 28);
//!
//! // The same frame over HE80 at MCS11: 64 MPDUs share the preamble.
//! let he = Rate::he(11, 1, Bandwidth::Mhz80, HeGi::Gi0_8)?;
//! assert_eq!(expected_tx_airtime_us(he, 1500, true), 20);
//!
//! // The hardware reports what PPDUs really took; after the warm-up, estimates follow it.
//! let mut calibrator = Calibrator::new(CalibratorConfig::default());
//! for _ in 0..16 {
//!     calibrator.record(4 * 28, 4 * 52).expect("a plausible sample");
//! }
//! assert_eq!(calibrator.scale_us(28), 52);
//! # Ok::<(), airtime_est::RateError>(())
//! ```
//!
//! Mainline code is cited by function name (net/mac80211/airtime.c unless another file is
//! named). The three mainline behaviours above (unpriced frames, the 4092 us clamp, the 32-bit
//! duration product) are also defined, with the invariants the scheduler keeps, in the
//! workspace's `airtime-sched/INVARIANTS.md`.

// Never std outside tests: a std user elsewhere in a build (the simulator) must not be
// able to pull std into the kernel module's staticlib through feature unification.
#![cfg_attr(not(test), no_std)]
#![deny(clippy::float_arithmetic)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// No panic on any input: this code runs inside a kernel module and is fuzzed. Outside tests,
// run-time code may not index unchecked, do arithmetic that can overflow, or unwrap. The
// compile-time table builder opts out function by function (an overflow there fails the build).
#![cfg_attr(
    not(test),
    deny(
        clippy::arithmetic_side_effects,
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic
    )
)]

mod calibrate;
mod estimate;
pub mod mainline;
mod rate;
mod ru;
pub mod tables;

pub use calibrate::{Calibrator, CalibratorConfig, RATIO_ONE_Q16, SampleRejected};
pub use estimate::{
    LENGTH_PADDING_BYTES, MAX_AQL_CHARGE_US, MAX_RETRY_STAGES, MIN_AGGREGATED_US, RetryStage, aql_charge_us,
    expected_tx_airtime_us, rx_airtime_us, tx_airtime_us,
};
pub use rate::{Bandwidth, Encoding, HeGi, Rate, RateError};
pub use ru::RuSize;
