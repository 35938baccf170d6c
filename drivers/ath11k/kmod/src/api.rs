// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! The adapter's C API: one `struct airtime_radio` per ath11k radio, over the
//! C-backed HAL ([`crate::chal`]). Declared, with kernel-doc, in
//! `include/airtime_ath11k.h`; each function maps onto one method of
//! [`airtime_ath11k::Ath11k`] (see `drivers/ath11k/README.md`).
//!
//! Conventions: a non-negative return on success, `-errno` on error; nothing is
//! changed when an error is returned (except where a function says so). No radio
//! lock: every function but `airtime_radio_destroy()` and
//! `airtime_radio_check_idle()` takes the radio shared (the adapter's entry points
//! take `&self`) and may run at once with any other, from any context but hard
//! IRQ, except that `airtime_radio_quiesce()` and `airtime_radio_resume_rounds()`
//! (process context) are serialised against each other, `airtime_radio_check_idle()`
//! and `airtime_radio_destroy()` by the driver; every data-path call may overlap
//! them. No function allocates after `airtime_radio_create()`, and none sleeps but
//! `airtime_radio_destroy()`, `airtime_radio_quiesce()` and `airtime_radio_check_idle()`,
//! which wait for a run of the radio's rounds work (below) to end. A radio whose driver
//! gave no `rounds_deferred` op (concurrent rounds only) owns a work item of the
//! module's ([`RoundsWork`]) that each of its deferrals queues and that runs the waiting
//! rounds, so that no deferral waits for a poll the driver may not make; the driver
//! stops it with `airtime_radio_quiesce()` where it stops its hardware, and starts it
//! again with `airtime_radio_resume_rounds()`. Removed txqs and drained
//! stations go back to the driver through the optional `txq_released` and
//! `sta_drained` callbacks, from the removals, `airtime_radio_reap()` and
//! `airtime_radio_destroy()`.
//!
//! Station txqs are named by (peer id, TID). Station-less txqs (a vif's
//! multicast or management queue) have no peer id: `airtime_mcast_txq_add()`
//! gives the driver a `u64` handle (the scheduler's `TxqId` in raw form, with
//! its 32-bit generation, so a stale handle is refused, never aliased).

use alloc::boxed::Box;
use core::ffi::{c_char, c_void};
use core::num::NonZeroU32;
use core::ptr::NonNull;

use airtime_ath11k::hal::{
    DP_TCL_DATA_RING_SIZE, MAX_PPDU_USERS, MSDU_TABLE_CAPACITY, PpduStats, PpduUser, RxPpdu, TxStatus,
};
use airtime_ath11k::{AcSet, Ath11k, Config, RoundOutcome, Rounds, TextBuf};
use airtime_est::{Bandwidth, HeGi, Rate};
use airtime_sched::txqs::TurnBudget;
use airtime_sched::{Ac, AqlLimits, Instant, StationId, Tid, TxqId, Weight};

use crate::boxed::{new_out_of_line, try_box_with};
use crate::chal::{CHal, CTxStatus, CTxq, HalOps, Ops, RoundsWork};
use crate::errno::{Errno, result_to_c};

/// Radio flag: the hardware picks the next transmitter itself
/// (`IEEE80211_HW_TX_NO_PUSHBACK`): per-station AQL limits scale by weight/256.
/// C: `AIRTIME_RADIO_TX_NO_PUSHBACK`.
pub const RADIO_TX_NO_PUSHBACK: u32 = 1 << 0;
/// Radio flag: start with the AQL checks off (charges are still counted).
/// C: `AIRTIME_RADIO_AQL_DISABLED`.
pub const RADIO_AQL_DISABLED: u32 = 1 << 1;
/// Radio flag: calibrate each station's AQL estimate against the PPDU stats
/// (`Config::calibration` with the calibrator's defaults). C: `AIRTIME_RADIO_CALIBRATE`.
pub const RADIO_CALIBRATE: u32 = 1 << 2;
/// Radio flag: bound each txq's turn by `turn_frames` and `turn_airtime_us`
/// (`Config::turn_budget`, the core's `TurnBudget`). C: `AIRTIME_RADIO_TURN_BUDGET`.
pub const RADIO_TURN_BUDGET: u32 = 1 << 3;
/// Radio flag: one context at a time runs an AC's rounds, the others hand theirs over
/// (`Config::rounds`, `Rounds::Gated` with `gate_rounds`). C: `AIRTIME_RADIO_GATED_ROUNDS`.
pub const RADIO_GATED_ROUNDS: u32 = 1 << 4;
const RADIO_FLAGS: u32 =
    RADIO_TX_NO_PUSHBACK | RADIO_AQL_DISABLED | RADIO_CALIBRATE | RADIO_TURN_BUDGET | RADIO_GATED_ROUNDS;

/// Users in one PPDU record. C: `AIRTIME_PPDU_MAX_USERS`.
pub const PPDU_MAX_USERS: usize = 8;
const _: () = assert!(PPDU_MAX_USERS == MAX_PPDU_USERS);

/// The adapter over the C HAL, for one radio.
pub type CRadio = Ath11k<CHal, CTxq>;

/// Radio configuration. C: `struct airtime_radio_config`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RadioConfig {
    /// The HAL callbacks; every one required; must outlive the radio.
    pub ops: *const HalOps,
    /// The driver's context, passed to every callback.
    pub hw: *mut c_void,
    /// `AIRTIME_RADIO_*` flags.
    pub flags: u32,
    /// Descriptors per TCL ring; 0 for ath11k's 512.
    pub tcl_descriptors: u32,
    /// Entries per ring's MSDU table; 0 for ath11k's 32767.
    pub msdu_capacity: u32,
    /// Most stations; 0 for 128.
    pub max_stations: u16,
    /// Most txqs; 0 for 1024.
    pub max_txqs: u16,
    /// With `AIRTIME_RADIO_TURN_BUDGET`: most frames a txq sends per turn, 0 for no
    /// frame bound. Must be 0 without the flag.
    pub turn_frames: u32,
    /// With `AIRTIME_RADIO_TURN_BUDGET`: most airtime a txq is charged per turn, us (the
    /// frame that reaches it is sent), 0 for no airtime bound. Must be 0 without the flag.
    pub turn_airtime_us: u32,
    /// With `AIRTIME_RADIO_GATED_ROUNDS`: most rounds one call runs, its own included
    /// (at least 1). Must be 0 without the flag.
    pub gate_rounds: u32,
    /// TCL data rings the hardware has (ath11k's `hw_params.max_tx_ring`), 1 to 3; 0
    /// for 3.
    pub max_tx_ring: u8,
    /// Must be 0.
    pub reserved: [u8; 3],
}

/// A PHY rate. C: `struct airtime_rate`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CRate {
    /// `AIRTIME_RATE_*`: 0 none, 1 CCK, 2 OFDM, 3 HT, 4 VHT, 5 HE.
    pub encoding: u8,
    /// MCS (HT 0-31, VHT 0-9, HE 0-11).
    pub mcs: u8,
    /// Spatial streams (VHT, HE), 1-8.
    pub nss: u8,
    /// 0: 20, 1: 40, 2: 80, 3: 160 MHz.
    pub bw: u8,
    /// HT/VHT: 1 for short GI. HE: 0, 1, 2 for 0.8, 1.6, 3.2 us. CCK: 1 for short preamble.
    pub gi: u8,
    /// Must be 0.
    pub reserved: u8,
    /// CCK/OFDM bitrate in 100 kbit/s.
    pub legacy_100kbps: u16,
}

impl CRate {
    /// `Ok(None)` for no rate, the rate, or `EINVAL`.
    fn to_rate(self) -> Result<Option<Rate>, Errno> {
        if self.reserved != 0 {
            return Err(Errno::EINVAL);
        }
        let bw = match self.bw {
            0 => Bandwidth::Mhz20,
            1 => Bandwidth::Mhz40,
            2 => Bandwidth::Mhz80,
            3 => Bandwidth::Mhz160,
            _ => return Err(Errno::EINVAL),
        };
        let rate = match self.encoding {
            0 => return Ok(None),
            1 => Rate::legacy_cck(self.legacy_100kbps, self.gi != 0),
            2 => Rate::legacy_ofdm(self.legacy_100kbps),
            3 => Rate::ht(self.mcs, bw, self.gi != 0),
            4 => Rate::vht(self.mcs, self.nss, bw, self.gi != 0),
            5 => {
                let gi = match self.gi {
                    0 => HeGi::Gi0_8,
                    1 => HeGi::Gi1_6,
                    2 => HeGi::Gi3_2,
                    _ => return Err(Errno::EINVAL),
                };
                Rate::he(self.mcs, self.nss, bw, gi)
            }
            _ => return Err(Errno::EINVAL),
        };
        rate.map(Some).map_err(|_| Errno::EINVAL)
    }
}

/// One user of a PPDU. C: `struct airtime_ppdu_user`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CPpduUser {
    /// Firmware peer id.
    pub peer_id: u16,
    /// TID (0-15) of its MPDUs.
    pub tid: u8,
    /// Must be 0.
    pub reserved: u8,
    /// Its tx duration in us (charged when the PPDU has no duration).
    pub tx_duration_us: u32,
    /// The rate it was sent at (encoding 0 if unknown).
    pub rate: CRate,
    /// MSDUs acknowledged in this PPDU, 0 if unknown (read with `AIRTIME_RADIO_CALIBRATE`).
    pub msdus: u16,
    /// Must be 0.
    pub reserved2: u16,
    /// Their bytes, 0 if unknown.
    pub msdu_bytes: u32,
}

/// One PPDU record. C: `struct airtime_ppdu_stats`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CPpduStats {
    /// The PPDU's duration in us, 0 if unknown.
    pub duration_us: u32,
    /// Users in `users`, 1 to `AIRTIME_PPDU_MAX_USERS`.
    pub n_users: u32,
    /// The users.
    pub users: [CPpduUser; PPDU_MAX_USERS],
}

/// A radio's counters. C: `struct airtime_radio_stats`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RadioStats {
    /// Pending (charged, not completed) airtime per AC index, us.
    pub pending_us: [u32; Ac::COUNT],
    /// Their sum, us.
    pub total_pending_us: u32,
    /// MSDUs in the hardware (all rings).
    pub outstanding_msdus: u32,
    /// Frames waiting in the retry slots.
    pub held_frames: u32,
    /// ACs (bit = AC index) whose last round ended on a full ring.
    pub blocked_acs: u32,
}

/// A radio's cumulative data path counters, for conservation checks: every
/// frame the adapter dequeued is in the rings (`enqueued` less completions), in
/// a retry slot, or was handed back (`completions` + `flushed`).
/// C: `struct airtime_radio_counters`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RadioCounters {
    /// Descriptors the TCL rings accepted, all rings.
    pub enqueued: u64,
    /// Frames handed back by `airtime_tx_complete()`, per `AIRTIME_TX_*`.
    pub completions: [u64; TxStatus::COUNT],
    /// Frames handed back `AIRTIME_TX_REMOVED` without a completion: retry-slot
    /// frames of removed stations and txqs, and frames flushed at destroy.
    pub flushed: u64,
    /// Frames a ring refused after dequeue, kept in a retry slot.
    pub held_for_retry: u64,
    /// Enqueues refused: ring full, MSDU table full, memory, other.
    pub enqueue_failures: u64,
    /// Completions naming no outstanding MSDU (ignored).
    pub unknown_msdu: u64,
    /// Charge releases the scheduler refused or clamped (should stay 0).
    pub release_errors: u64,
    /// Station frames sent without a charge (a station removed mid-round).
    pub uncharged: u64,
    /// PPDU users averaged into their station's calibration (`AIRTIME_RADIO_CALIBRATE`;
    /// every `calib_*` counter stays 0 without it).
    pub calib_accepted: u64,
    /// SU users refused as samples: no rate (also in `calib_no_rate`), no MSDU count
    /// or bytes, or an outlier ratio.
    pub calib_rejected: u64,
    /// Samples dropped because another context was feeding the station's calibration.
    pub calib_busy: u64,
    /// Samples of a station that left its slot meanwhile (dropped).
    pub calib_stale: u64,
    /// Users of MU PPDUs, never samples.
    pub calib_mu_users: u64,
    /// Of `calib_rejected`, SU users with `AIRTIME_RATE_NONE`.
    pub calib_no_rate: u64,
    /// With `AIRTIME_RADIO_GATED_ROUNDS`: round requests handed to the context running
    /// the AC's rounds.
    pub rounds_handed_off: u64,
    /// Calls that left round requests waiting: with `AIRTIME_RADIO_GATED_ROUNDS`, that
    /// spent `gate_rounds` with requests pending; with concurrent rounds, whose follow-up
    /// rounds ran out (each reported to `rounds_deferred`, or without that op to the
    /// radio's rounds work).
    pub rounds_deferred: u64,
}

// The C header asserts the same sizes.
const _: () = assert!(core::mem::size_of::<RadioConfig>() == 48);
const _: () = assert!(core::mem::offset_of!(RadioConfig, turn_frames) == 32);
const _: () = assert!(core::mem::offset_of!(RadioConfig, gate_rounds) == 40);
const _: () = assert!(core::mem::offset_of!(RadioConfig, max_tx_ring) == 44);
const _: () = assert!(core::mem::size_of::<CRate>() == 8);
const _: () = assert!(core::mem::size_of::<CPpduUser>() == 24);
const _: () = assert!(core::mem::size_of::<CPpduStats>() == 200);
const _: () = assert!(core::mem::size_of::<RadioStats>() == 32);
const _: () = assert!(core::mem::size_of::<RadioCounters>() == 168);
const _: () = assert!(core::mem::offset_of!(RadioCounters, uncharged) == 96);
const _: () = assert!(core::mem::offset_of!(RadioCounters, calib_accepted) == 104);
const _: () = assert!(core::mem::offset_of!(RadioCounters, calib_rejected) == 112);
const _: () = assert!(core::mem::offset_of!(RadioCounters, calib_busy) == 120);
const _: () = assert!(core::mem::offset_of!(RadioCounters, calib_stale) == 128);
const _: () = assert!(core::mem::offset_of!(RadioCounters, calib_mu_users) == 136);
const _: () = assert!(core::mem::offset_of!(RadioCounters, calib_no_rate) == 144);
const _: () = assert!(core::mem::offset_of!(RadioCounters, rounds_handed_off) == 152);
const _: () = assert!(core::mem::offset_of!(CPpduUser, msdus) == 16);
const _: () = assert!(core::mem::offset_of!(CPpduUser, reserved2) == 18);
const _: () = assert!(core::mem::offset_of!(CPpduUser, msdu_bytes) == 20);
const _: () = assert!(core::mem::size_of::<CTxStatus>() == 8);
const _: () = assert!(core::mem::size_of::<HalOps>() == 13 * core::mem::size_of::<usize>());
const _: () = assert!(core::mem::offset_of!(HalOps, tx_status_at) == core::mem::size_of::<[usize; 12]>());
const _: () = assert!(core::mem::size_of::<crate::chal::CMsdu>() == 24);
const _: () = assert!(core::mem::size_of::<crate::chal::CTclDesc>() == 24);
const _: () = assert!(core::mem::offset_of!(crate::chal::CTclDesc, msdu_id) == 8);

fn adapter_err(e: airtime_ath11k::Ath11kError) -> Errno {
    Errno::from_negative(e.errno())
}

/// Turns `radio` into a shared reference for the duration of one call. Every entry
/// point but `airtime_radio_destroy()` and `airtime_radio_check_idle()` takes the radio
/// shared: the adapter's entry points take `&self` (the scheduler is lock-free, the txqs
/// are reached only through the scheduler's turns), so the wake and completion contexts
/// may call at once on different CPUs.
///
/// # Safety
///
/// `radio` must be null or a pointer from `airtime_radio_create()` not yet destroyed.
unsafe fn radio_ref<'a>(radio: *mut CRadio) -> Result<&'a CRadio, Errno> {
    // SAFETY: guaranteed by the caller; `as_ref` maps null to None.
    unsafe { radio.as_ref() }.ok_or(Errno::EFAULT)
}

/// Turns `radio` into an exclusive reference for the duration of one call.
///
/// # Safety
///
/// `radio` must be null or a pointer from `airtime_radio_create()` not yet
/// destroyed, and no other call on it may run concurrently.
unsafe fn radio_mut<'a>(radio: *mut CRadio) -> Result<&'a mut CRadio, Errno> {
    // SAFETY: guaranteed by the caller; `as_mut` maps null to None.
    unsafe { radio.as_mut() }.ok_or(Errno::EFAULT)
}

fn station(radio: &CRadio, peer_id: u16) -> Result<StationId, Errno> {
    radio.station_by_peer(peer_id).ok_or(Errno::ENOENT)
}

fn ac_of(ac: u8) -> Result<Ac, Errno> {
    Ac::from_index(usize::from(ac)).ok_or(Errno::EINVAL)
}

fn limits(low_us: u32, high_us: u32) -> Result<AqlLimits, Errno> {
    AqlLimits::new(low_us, high_us).map_err(|_| Errno::EINVAL)
}

/// Creates the adapter for one radio. Returns the radio, or null with `*err`
/// set (`-EINVAL` for a bad config or a missing callback, `-ENOMEM`,
/// `-EFAULT`) when `err` is not null.
///
/// # Safety
///
/// `cfg` must be null or valid for reading; `cfg->ops` and `cfg->hw` must stay
/// valid until `airtime_radio_destroy()`; `err` must be null or valid for one
/// write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_radio_create(cfg: *const RadioConfig, err: *mut i32) -> *mut CRadio {
    // Process context, may sleep (the header's contract): the tables come
    // from GFP_KERNEL, not the atomic reserves.
    let _may_sleep = crate::kalloc::MaySleep::begin();
    // SAFETY: the caller guarantees `cfg` is null or readable.
    let result = unsafe { cfg.as_ref() }.ok_or(Errno::EFAULT).and_then(|cfg| {
        // SAFETY: the caller guarantees `cfg->ops` is null or readable.
        let ops = unsafe { cfg.ops.as_ref() }.ok_or(Errno::EINVAL)?;
        create(cfg, Ops::from_c(ops)?)
    });
    match result {
        Ok(radio) => {
            let ptr = Box::into_raw(radio);
            // SAFETY: the shim's counter; process context.
            unsafe { crate::ffi::airtime_radio_created() };
            // SAFETY: `ptr` came from `Box::into_raw` just above, and no other context
            // has it yet. The work may run the radio's waiting rounds from now on,
            // through this pointer, until `airtime_radio_destroy()` stops it.
            unsafe { &*ptr }.hal().bind_rounds_work(ptr.cast());
            ptr
        }
        Err(e) => {
            // SAFETY: the caller guarantees `err` is null or valid for one write.
            if let Some(err) = unsafe { err.as_mut() } {
                *err = e.to_c();
            }
            core::ptr::null_mut()
        }
    }
}

/// The per-turn budget `cfg` asks for. `EINVAL` for `AIRTIME_RADIO_TURN_BUDGET` with
/// neither bound (a budget that bounds nothing: the driver meant one and set none) and
/// for a bound without the flag (it would be ignored). A bound of 0 is "none", never a
/// budget of nothing, which would let no frame out.
fn turn_budget(cfg: &RadioConfig) -> Result<TurnBudget, Errno> {
    let (frames, airtime_us) = (cfg.turn_frames, cfg.turn_airtime_us);
    let none_if_zero = |bound: u32| if bound == 0 { u32::MAX } else { bound };
    match (cfg.flags & RADIO_TURN_BUDGET != 0, frames, airtime_us) {
        (false, 0, 0) => Ok(TurnBudget::UNLIMITED),
        (false, _, _) | (true, 0, 0) => Err(Errno::EINVAL),
        (true, _, _) => {
            Ok(TurnBudget { frames: none_if_zero(frames), airtime_us: none_if_zero(airtime_us), bytes: u32::MAX })
        }
    }
}

/// Most rounds one gated call may run (`gate_rounds`): a runner in softirq must get
/// back to its own work. C: `AIRTIME_GATE_ROUNDS_MAX`.
pub const GATE_ROUNDS_MAX: u32 = 64;

/// How rounds meet, as `cfg` asks. `EINVAL` for `AIRTIME_RADIO_GATED_ROUNDS` with
/// `gate_rounds` outside `1..=AIRTIME_GATE_ROUNDS_MAX` or without a `rounds_deferred`
/// callback (a gated radio's deferrals are a runner's spent budget, frequent under
/// load: the driver schedules their rounds where its data path runs), and for
/// `gate_rounds` without the flag (it would be ignored). Concurrent rounds defer too,
/// rarely (a round's follow-up rounds out of their bound): the callback is optional
/// there. Without it the radio owns a work item ([`RoundsWork`], made by [`create`])
/// that each such deferral queues and that runs `airtime_run_waiting_rounds()` with
/// BHs disabled, so that no deferral waits for a completion pass that may never come
/// (nothing in flight) or a poll the driver may not make.
fn rounds(cfg: &RadioConfig, ops: &Ops) -> Result<Rounds, Errno> {
    let gated = cfg.flags & RADIO_GATED_ROUNDS != 0;
    match (gated, NonZeroU32::new(cfg.gate_rounds)) {
        (false, None) => Ok(Rounds::Concurrent),
        (true, Some(max_rounds)) if max_rounds.get() <= GATE_ROUNDS_MAX && ops.has_rounds_deferred() => {
            Ok(Rounds::Gated { max_rounds })
        }
        _ => Err(Errno::EINVAL),
    }
}

fn create(cfg: &RadioConfig, ops: Ops) -> Result<Box<CRadio>, Errno> {
    if cfg.flags & !RADIO_FLAGS != 0 || cfg.reserved != [0; 3] {
        return Err(Errno::EINVAL);
    }
    let turn_budget = turn_budget(cfg)?;
    let rounds = rounds(cfg, &ops)?;
    // No op: the module runs the deferred rounds itself (only concurrent rounds get
    // here without one). Freed with the HAL if the rest of the create fails.
    let rounds_work = if ops.has_rounds_deferred() { None } else { Some(RoundsWork::new()?) };
    let nonzero = |v: u32, d: u32| if v == 0 { d } else { v };
    let hal = CHal::new(
        ops,
        cfg.hw,
        nonzero(cfg.tcl_descriptors, DP_TCL_DATA_RING_SIZE),
        nonzero(cfg.msdu_capacity, MSDU_TABLE_CAPACITY),
        rounds_work,
    );
    let mut config = Config::default();
    config.tx_no_pushback = cfg.flags & RADIO_TX_NO_PUSHBACK != 0;
    config.aql = cfg.flags & RADIO_AQL_DISABLED == 0;
    config.calibration = (cfg.flags & RADIO_CALIBRATE != 0).then(airtime_est::CalibratorConfig::default);
    config.turn_budget = turn_budget;
    config.rounds = rounds;
    if cfg.max_stations != 0 {
        config.sched.max_stations = cfg.max_stations;
    }
    if cfg.max_txqs != 0 {
        config.sched.max_txqs = cfg.max_txqs;
    }
    if cfg.max_tx_ring != 0 {
        // Above 3: refused by the adapter (-EINVAL).
        config.max_tx_ring = cfg.max_tx_ring;
    }
    try_box_with(move || new_out_of_line(hal, config)).map_err(|_| Errno::ENOMEM)?.map_err(adapter_err)
}

/// Destroys a radio (may sleep, with or without a rounds work): first its rounds work,
/// if it has one, is stopped for good (held, then `cancel_delayed_work_sync()`); then every frame still in the hardware tables or
/// the retry slots is handed back with `tx_status(AIRTIME_TX_REMOVED)` and its charge
/// released, then the memory is freed. Returns the frames handed back, or
/// `-EFAULT` for null.
///
/// # Safety
///
/// `radio` must be null or from `airtime_radio_create()` and not destroyed;
/// no other call on it may run during this one (the radio's rounds work, the one
/// caller the driver does not control, is stopped here first), and it must not be
/// used afterwards. Process context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_radio_destroy(radio: *mut CRadio) -> i32 {
    // First the module's rounds work, which reaches the radio through a shared
    // reference: stopped (no run queued or running, none queued again) while the radio
    // is still only shared, before anything it touches is taken apart.
    // SAFETY: null or a live radio (the caller's promise), no other call running on it.
    let Some(r) = (unsafe { radio.as_ref() }) else { return Errno::EFAULT.to_c() };
    // SAFETY: the shim's `might_sleep()` and counter; process context (the contract).
    unsafe { crate::ffi::airtime_radio_destroying() };
    r.hal().hold_rounds_work(crate::ffi::WORK_DESTROYED);
    // SAFETY: non-null and from `Box::into_raw` in `airtime_radio_create`; the
    // caller gives it up, and the work that shared it is stopped.
    let radio = unsafe { Box::from_raw(radio) };
    // Every station and txq goes (their kept frames handed back, each txq released to
    // the driver), then the rings; then every departed station is drained.
    let hal = radio.hal();
    let n = radio.shutdown_with(|q| hal.txq_released(q), |peer| hal.sta_drained(peer));
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// Adds a station with firmware peer id `peer_id` and airtime weight `weight`.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_sta_add(radio: *mut CRadio, peer_id: u16, weight: u16) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        let weight = Weight::new(weight).map_err(|_| Errno::EINVAL)?;
        radio.add_station(peer_id, weight).map_err(adapter_err)?;
        Ok(0)
    })())
}

/// Removes a station and its txqs; a frame of theirs in a retry slot is
/// handed back `AIRTIME_TX_REMOVED`; frames in the hardware complete normally.
/// Each txq no context serves goes to `txq_released` now, the others at a later
/// [`airtime_radio_reap`]; the station goes to `sta_drained` from a reap once its
/// frames in the hardware have completed. Returns how many of its txqs were not
/// handed back yet (their `txq_released` had not returned when it looked).
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_sta_remove(radio: *mut CRadio, peer_id: u16) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        let sta = station(radio, peer_id)?;
        let hal = radio.hal();
        // Its txqs, read before the removal forgets them.
        let txqs = Tid::ALL.map(|tid| radio.txq_for(sta, tid));
        radio.remove_station_with(sta, |q| hal.txq_released(q), |peer| hal.sta_drained(peer)).map_err(adapter_err)?;
        // A station with nothing in flight is drained now.
        radio.reap_departed(|peer| hal.sta_drained(peer));
        let held = txqs.iter().flatten().filter(|&&q| !radio.txq_handed_back(q)).count();
        // At most 17.
        Ok(i32::try_from(held).unwrap_or(i32::MAX))
    })())
}

/// Registers the driver's txq `txq` (mac80211's `struct ieee80211_txq *`) for
/// station `peer_id`, TID `tid` (0-15, 16 for management).
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header);
/// `txq` must stay valid until `txq_released` hands it back, or the radio is destroyed
/// (a CPU serving it at the removal may still dequeue from it afterwards).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_txq_add(radio: *mut CRadio, peer_id: u16, tid: u8, txq: *mut c_void) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        let txq = NonNull::new(txq).ok_or(Errno::EFAULT)?;
        let tid = Tid::new(tid).map_err(|_| Errno::EINVAL)?;
        let sta = station(radio, peer_id)?;
        let ctxq = radio.hal().txq(txq);
        radio.add_txq(Some(sta), tid, ctxq).map_err(|(e, _)| adapter_err(e))?;
        Ok(0)
    })())
}

/// The station-less txq named by `handle` (from [`airtime_mcast_txq_add`]), or
/// `ENOENT` for a stale or forged handle, or one naming a station's txq.
fn mcast_txq(radio: &CRadio, handle: u64) -> Result<TxqId, Errno> {
    let id = TxqId::from_raw(handle);
    match radio.scheduler().txq_info(id) {
        Ok((None, _)) => Ok(id),
        _ => Err(Errno::ENOENT),
    }
}

/// Registers a station-less txq (a vif's multicast queue, or its management
/// queue on TID 16) on `tid`; its frames are scheduled like a station's and never
/// count against a station's limits or the stations' pending airtime: uncharged
/// until [`airtime_set_multicast_rate`] prices them, then charged to their AC's
/// multicast budget. Writes its handle to `*handle`.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header);
/// `txq` must stay valid until `txq_released` hands it back, or the radio is destroyed
/// (a CPU serving it at the removal may still dequeue from it afterwards);
/// `handle` must be null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_mcast_txq_add(radio: *mut CRadio, tid: u8, txq: *mut c_void, handle: *mut u64) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        // SAFETY: the caller guarantees `handle` is null or valid for one write.
        let handle = unsafe { handle.as_mut() }.ok_or(Errno::EFAULT)?;
        let txq = NonNull::new(txq).ok_or(Errno::EFAULT)?;
        let tid = Tid::new(tid).map_err(|_| Errno::EINVAL)?;
        let ctxq = radio.hal().txq(txq);
        let id = radio.add_txq(None, tid, ctxq).map_err(|(e, _)| adapter_err(e))?;
        *handle = id.to_raw();
        Ok(0)
    })())
}

/// mac80211's `wake_tx_queue` for a station-less txq: runs a round on its AC
/// pushing into TCL ring `cpu % 3`. Returns the frames pushed.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_mcast_txq_wake(radio: *mut CRadio, handle: u64, cpu: u32, now_us: u64) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        let txq = mcast_txq(radio, handle)?;
        let round = radio.wake_tx_queue(txq, cpu, Instant::from_micros(now_us)).map_err(adapter_err)?;
        tell_deferred(radio, round);
        Ok(i32::try_from(round.frames).unwrap_or(i32::MAX))
    })())
}

/// Tells the driver (`rounds_deferred`) when a call's rounds were left at their budget.
fn tell_deferred(radio: &CRadio, round: RoundOutcome) {
    if round.deferred {
        let mut acs = AcSet::EMPTY;
        acs.insert(round.ac);
        radio.hal().rounds_deferred(acs);
    }
}

/// Removes a station-less txq; a frame of it in a retry slot is handed back
/// `AIRTIME_TX_REMOVED`, frames in the hardware complete normally. The driver
/// purges the txq's own frames afterwards. Returns 1 if the txq was not handed
/// back yet (another context serves it), else 0.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_mcast_txq_remove(radio: *mut CRadio, handle: u64) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        let txq = mcast_txq(radio, handle)?;
        let hal = radio.hal();
        radio.remove_txq(txq, |q| hal.txq_released(q)).map_err(adapter_err)?;
        Ok(i32::from(!radio.txq_handed_back(txq)))
    })())
}

/// Takes back what removals left behind: each removed txq no context serves any more
/// goes to `txq_released` (its retry-slot and intake frames to `tx_status` as
/// `AIRTIME_TX_REMOVED` first), and each removed station whose frames have all
/// completed goes to `sta_drained`. Returns how many txqs and stations it reported.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_radio_reap(radio: *mut CRadio) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        let hal = radio.hal();
        let txqs = radio.reap_removed(|q| hal.txq_released(q));
        let stations = radio.reap_departed(|peer| hal.sta_drained(peer));
        Ok(i32::try_from(txqs.saturating_add(stations)).unwrap_or(i32::MAX))
    })())
}

/// Prices station-less frames at `*rate` and charges them to their AC's multicast
/// budget (null `rate`: uncharged, the default).
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header); `rate` must be null or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_set_multicast_rate(radio: *mut CRadio, rate: *const CRate) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        // SAFETY: the caller guarantees `rate` is null or readable.
        let rate = match unsafe { rate.as_ref() } {
            // A rate that prices nothing ("none") is refused, not taken for null.
            Some(r) => Some(r.to_rate()?.ok_or(Errno::EINVAL)?),
            None => None,
        };
        radio.set_multicast_rate(rate);
        Ok(0)
    })())
}

/// Sets AC index `ac`'s multicast budget, us (the multicast AQL patches'
/// `aql_txq_limit` `mcast`).
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_set_multicast_limit_us(radio: *mut CRadio, ac: u8, limit_us: u32) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        radio.scheduler().set_multicast_limit_us(ac_of(ac)?, limit_us);
        Ok(0)
    })())
}

/// Writes `value` through `out`, or `EFAULT` for null.
///
/// # Safety
///
/// `out` must be null or valid for one write.
unsafe fn put_u32(out: *mut u32, value: u32) -> Result<i32, Errno> {
    // SAFETY: guaranteed by the caller.
    *unsafe { out.as_mut() }.ok_or(Errno::EFAULT)? = value;
    Ok(0)
}

/// Writes AC index `ac`'s multicast airtime in flight, us, to `*pending_us`.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header); `pending_us` must be null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_multicast_pending_us(radio: *mut CRadio, ac: u8, pending_us: *mut u32) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        let pending = radio.scheduler().multicast_pending_us(ac_of(ac)?);
        // SAFETY: forwarded from the caller.
        unsafe { put_u32(pending_us, pending) }
    })())
}

/// Writes the airtime in flight that limits a txq (`ieee80211_txq_aql_pending`), us,
/// to `*pending_us`.
///
/// # Safety
///
/// `pending_us` must be null or valid for one write.
unsafe fn txq_pending(radio: &CRadio, txq: TxqId, pending_us: *mut u32) -> Result<i32, Errno> {
    let pending = radio.scheduler().txq_aql_pending_us(txq).map_err(|_| Errno::ENOENT)?;
    // SAFETY: forwarded from the caller.
    unsafe { put_u32(pending_us, pending) }
}

/// The airtime in flight that limits station `peer_id`'s txq on `tid`, us: its
/// station's pending airtime on the txq's AC (0 for TID 16, never limited).
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header); `pending_us` must be null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_txq_aql_pending_us(
    radio: *mut CRadio,
    peer_id: u16,
    tid: u8,
    pending_us: *mut u32,
) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        let tid = Tid::new(tid).map_err(|_| Errno::EINVAL)?;
        let txq = radio.txq_for(station(radio, peer_id)?, tid).ok_or(Errno::ENOENT)?;
        // SAFETY: forwarded from the caller.
        unsafe { txq_pending(radio, txq, pending_us) }
    })())
}

/// The airtime in flight that limits a station-less txq, us: its AC's multicast
/// airtime in flight.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header); `pending_us` must be null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_mcast_txq_aql_pending_us(
    radio: *mut CRadio,
    handle: u64,
    pending_us: *mut u32,
) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        let txq = mcast_txq(radio, handle)?;
        // SAFETY: forwarded from the caller.
        unsafe { txq_pending(radio, txq, pending_us) }
    })())
}

/// Sets a station's airtime weight (1-65535).
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_sta_set_weight(radio: *mut CRadio, peer_id: u16, weight: u16) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        let weight = Weight::new(weight).map_err(|_| Errno::EINVAL)?;
        let sta = station(radio, peer_id)?;
        radio.set_weight(sta, weight).map_err(adapter_err)?;
        Ok(0)
    })())
}

/// Sets a station's AQL limits on AC index `ac`.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_sta_set_aql_limits(
    radio: *mut CRadio,
    peer_id: u16,
    ac: u8,
    low_us: u32,
    high_us: u32,
) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        let (ac, limits) = (ac_of(ac)?, limits(low_us, high_us)?);
        let sta = station(radio, peer_id)?;
        radio.set_station_limits(sta, ac, limits).map_err(adapter_err)?;
        Ok(0)
    })())
}

/// Sets the radio's default AQL limits on AC index `ac` (`aql_txq_limit`).
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_set_aql_limits(radio: *mut CRadio, ac: u8, low_us: u32, high_us: u32) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        radio.set_default_limits(ac_of(ac)?, limits(low_us, high_us)?);
        Ok(0)
    })())
}

/// Sets the radio's AQL threshold (`aql_threshold`), us.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_set_aql_threshold(radio: *mut CRadio, threshold_us: u32) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        radio.set_aql_threshold_us(threshold_us);
        Ok(0)
    })())
}

/// mac80211's `wake_tx_queue`: the station's txq on `tid` has frames; runs a
/// round on its AC pushing into TCL ring `cpu % 3`. Returns the frames pushed.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_txq_wake(radio: *mut CRadio, peer_id: u16, tid: u8, cpu: u32, now_us: u64) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        let tid = Tid::new(tid).map_err(|_| Errno::EINVAL)?;
        let txq = radio.txq_for(station(radio, peer_id)?, tid).ok_or(Errno::ENOENT)?;
        let round = radio.wake_tx_queue(txq, cpu, Instant::from_micros(now_us)).map_err(adapter_err)?;
        tell_deferred(radio, round);
        Ok(i32::try_from(round.frames).unwrap_or(i32::MAX))
    })())
}

/// The tx completion NAPI poll over `n` completions the driver read: processes
/// at most `budget` of them in order (each frame's charge released whatever its
/// status, the frame handed to `tx_status_at` with `cookie` and the entry's index,
/// or to `tx_status` without that op), then runs one round on each AC it reaped.
/// Returns how many it processed (the NAPI work done); the driver keeps the rest
/// for its next poll. `-EINVAL` (nothing processed) if an entry names
/// no ring or status.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header); `status` must be valid for reading `n` entries (or null
/// with `n == 0`). `cookie` is the driver's, only handed back to `tx_status_at`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_tx_complete(
    radio: *mut CRadio,
    status: *const CTxStatus,
    n: u32,
    budget: u32,
    cpu: u32,
    now_us: u64,
    cookie: *mut c_void,
) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        let indices = 0..n;
        let n = usize::try_from(n).map_err(|_| Errno::EINVAL)?;
        let entries: &[CTxStatus] = if n == 0 {
            &[]
        } else if status.is_null() {
            return Err(Errno::EFAULT);
        } else {
            // SAFETY: non-null and valid for `n` reads (the caller's promise);
            // only read during this call.
            unsafe { core::slice::from_raw_parts(status, n) }
        };
        let rings = radio.config().max_tx_ring;
        if entries.iter().any(|e| e.reserved != 0 || e.ring >= rings || e.to_completion(0).is_none()) {
            return Err(Errno::EINVAL);
        }
        // Read in place, nothing kept in the radio: calls for different completion rings
        // may run at once. Every entry converts (checked above), tagged with its index
        // for `tx_status_at`.
        let completions = entries.iter().zip(indices).filter_map(|(e, i)| e.to_completion(i));
        let hal = radio.hal();
        let done = radio.complete_tx_iter_with(completions, budget, cpu, Instant::from_micros(now_us), |frame, c| {
            hal.tx_status_at(cookie, frame, c)
        });
        hal.rounds_deferred(done.deferred);
        Ok(i32::try_from(done.work_done).unwrap_or(i32::MAX))
    })())
}

/// The ACs on which requests for rounds wait with no context running them (bit
/// `AIRTIME_AC_*`): with `AIRTIME_RADIO_GATED_ROUNDS`, a runner spent its budget; with
/// concurrent rounds, rarely, a round's follow-up rounds ran out; and no call has run a
/// round there since. Without the `rounds_deferred` op the radio's rounds work is
/// already queued to run them. `-EFAULT` for null.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_rounds_waiting(radio: *mut CRadio) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        Ok(i32::from(radio.rounds_waiting().bits()))
    })())
}

/// Stops the radio's rounds work (a radio without the `rounds_deferred` op; nothing to
/// do for one with it): on return no run of it is queued or running, and none starts
/// until `airtime_radio_resume_rounds()`, however many deferrals come meanwhile (they
/// wait in `airtime_rounds_waiting()`). Idempotent and not counted: one resume undoes
/// any number of quiesces. Returns 0, or `-EFAULT` for null.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`. Process context,
/// may sleep (`might_sleep()` for every radio); not at once with
/// `airtime_radio_resume_rounds()`, `airtime_radio_check_idle()` or
/// `airtime_radio_destroy()` on the same radio (the driver serialises its control
/// paths); every data-path call may run meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_radio_quiesce(radio: *mut CRadio) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        // SAFETY: the shim's `might_sleep()`; process context (the contract).
        unsafe { crate::ffi::airtime_might_sleep() };
        radio.hal().hold_rounds_work(crate::ffi::WORK_QUIESCED);
        Ok(0)
    })())
}

/// Undoes `airtime_radio_quiesce()` (however many there were): deferrals queue the
/// rounds work again, and if rounds wait (`airtime_rounds_waiting()`) it is queued at
/// once. Nothing for a radio with the `rounds_deferred` op; for one not quiesced, at most
/// a kick when rounds wait, which is harmless (the work runs them). Returns 0, or
/// `-EFAULT` for null.
///
/// # Safety
///
/// As [`airtime_radio_quiesce`]; does not sleep.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_radio_resume_rounds(radio: *mut CRadio) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        // The release, then the read of the waiting ACs, then a kick if rounds wait, in
        // the shim: a deferral in between kicks the work itself.
        radio.hal().release_rounds_work(crate::ffi::WORK_QUIESCED);
        Ok(0)
    })())
}

/// The run of a radio's rounds work (the shim's work function, BHs disabled): as
/// `airtime_run_waiting_rounds()`, but a deferral of these rounds is not reported as a
/// new one (no kick): it sets `*deferred`, and the work decides when to run again (after
/// progress at the next tick, its frames in flight; after a backoff without). Every HAL
/// call of the run names `cpu`'s ring, none another's. Returns the frames pushed, or
/// `-EFAULT` for a null pointer.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()` whose rounds work
/// is running this; `deferred` must be null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_rounds_work_run(
    radio: *mut CRadio,
    cpu: u32,
    now_us: u64,
    deferred: *mut bool,
) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        // SAFETY: null or valid for one write (the caller's promise).
        let deferred = unsafe { deferred.as_mut() }.ok_or(Errno::EFAULT)?;
        let run = radio.run_waiting_rounds(cpu, Instant::from_micros(now_us));
        *deferred = !run.deferred.is_empty();
        Ok(i32::try_from(run.frames).unwrap_or(i32::MAX))
    })())
}

/// Runs a round (through the gate) on each AC `airtime_rounds_waiting()` names, with
/// `cpu`'s ring. Returns the frames pushed, or `-EFAULT` for null. The driver's work
/// calls it; for a radio without the `rounds_deferred` op, a deferral of these rounds
/// queues the radio's rounds work (which runs them with `airtime_rounds_work_run`).
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_run_waiting_rounds(radio: *mut CRadio, cpu: u32, now_us: u64) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        let run = radio.run_waiting_rounds(cpu, Instant::from_micros(now_us));
        radio.hal().rounds_deferred(run.deferred);
        Ok(i32::try_from(run.frames).unwrap_or(i32::MAX))
    })())
}

/// Runs a round on each AC of `ac_mask` (bit `AIRTIME_AC_*`), with `cpu`'s ring, as a
/// driver's tx timer or resume path would: frames kept in retry slots or left by a
/// round that met a full ring go out without a new wake. Returns the frames pushed;
/// `-EINVAL` for bits above the four ACs.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_run_rounds(radio: *mut CRadio, ac_mask: u8, cpu: u32, now_us: u64) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        if ac_mask >> Ac::ALL.len() != 0 {
            return Err(Errno::EINVAL);
        }
        let acs: AcSet = Ac::ALL.into_iter().filter(|ac| ac_mask & (1 << ac.index()) != 0).collect();
        let run = radio.run_rounds(acs, cpu, Instant::from_micros(now_us));
        radio.hal().rounds_deferred(run.deferred);
        Ok(i32::try_from(run.frames).unwrap_or(i32::MAX))
    })())
}

/// Turns the AQL checks on or off at run time (mac80211's `aql_enable` debugfs
/// switch, per radio); charges are still counted while off, so turning them back on
/// with frames in flight keeps the counters exact. Returns 0, or `-EFAULT` for null.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_set_aql_enabled(radio: *mut CRadio, on: bool) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        radio.scheduler().set_aql_enabled(on);
        Ok(0)
    })())
}

/// One HTT PPDU stats record. Returns the users charged; `-EINVAL` (nothing
/// done) for a bad user count, TID or rate.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header); `ppdu` must be null or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_ppdu_tx_stats(radio: *mut CRadio, ppdu: *const CPpduStats, now_us: u64) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        // SAFETY: the caller guarantees `ppdu` is null or readable.
        let c = unsafe { ppdu.as_ref() }.ok_or(Errno::EFAULT)?;
        let n = usize::try_from(c.n_users).map_err(|_| Errno::EINVAL)?;
        let users = c.users.get(..n).ok_or(Errno::EINVAL)?;
        let mut stats = PpduStats::new(c.duration_us);
        for u in users {
            // Data TIDs 0..15, or 16 for a user whose record names none (charged to
            // BE, never a calibration sample).
            if u.tid > 16 || u.reserved != 0 || u.reserved2 != 0 {
                return Err(Errno::EINVAL);
            }
            // The C record carries no RU yet: under `MuCharging::RuShare` an MU PPDU's users
            // split it equally.
            let user =
                PpduUser::su(u.peer_id, u.tid, u.tx_duration_us, u.rate.to_rate()?).with_msdus(u.msdus, u.msdu_bytes);
            if !stats.push_user(user) {
                return Err(Errno::EINVAL);
            }
        }
        let out = radio.on_ppdu_tx_stats(&stats, Instant::from_micros(now_us));
        Ok(i32::try_from(out.users_charged).unwrap_or(i32::MAX))
    })())
}

/// Received airtime of one PPDU from station `peer_id` (charged to its BE
/// deficit); `rate` may be null.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header); `rate` must be null or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_rx_duration(
    radio: *mut CRadio,
    peer_id: u16,
    duration_us: u32,
    rate: *const CRate,
    now_us: u64,
) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        // SAFETY: the caller guarantees `rate` is null or readable.
        let rate = match unsafe { rate.as_ref() } {
            Some(r) => r.to_rate()?,
            None => None,
        };
        let rx = RxPpdu { peer_id, rx_duration_us: duration_us, rate };
        radio.on_rx_ppdu(&rx, Instant::from_micros(now_us)).map_err(adapter_err)?;
        Ok(0)
    })())
}

/// Fills `*stats` with the radio's pending airtime and frame counts.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header); `stats` must be null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_radio_get_stats(radio: *mut CRadio, stats: *mut RadioStats) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        // SAFETY: the caller guarantees `stats` is null or writable.
        let out = unsafe { stats.as_mut() }.ok_or(Errno::EFAULT)?;
        let s = radio.scheduler();
        // One read of each AC's counter, and the total from those reads: with the other
        // context running, a second read of the counters would not add up to the first.
        let pending_us = Ac::ALL.map(|ac| s.ac_pending_us(ac));
        *out = RadioStats {
            pending_us,
            total_pending_us: pending_us.iter().fold(0u32, |t, &p| t.saturating_add(p)),
            outstanding_msdus: radio.outstanding_msdus(),
            held_frames: radio.held_frames(),
            blocked_acs: u32::from(radio.blocked_acs().bits()),
        };
        Ok(0)
    })())
}

/// Fills `*counters` with the radio's cumulative data path counters.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header); `counters` must be null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_radio_get_counters(radio: *mut CRadio, counters: *mut RadioCounters) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        // SAFETY: the caller guarantees `counters` is null or writable.
        let out = unsafe { counters.as_mut() }.ok_or(Errno::EFAULT)?;
        let d = radio.dp_stats();
        let cal = radio.calibration_stats();
        let sum = |v: &[u64]| v.iter().fold(0u64, |a, b| a.saturating_add(*b));
        *out = RadioCounters {
            enqueued: sum(&d.enqueued),
            completions: d.completions,
            flushed: d.flushed,
            held_for_retry: d.held_for_retry,
            enqueue_failures: sum(&d.ring_full)
                .saturating_add(sum(&d.msdu_table_full))
                .saturating_add(sum(&d.out_of_memory))
                .saturating_add(sum(&d.other_failures)),
            unknown_msdu: d.unknown_msdu,
            release_errors: d.release_errors,
            uncharged: d.uncharged,
            calib_accepted: cal.accepted,
            calib_rejected: cal.rejected,
            calib_busy: cal.busy,
            calib_stale: cal.stale,
            calib_mu_users: cal.mu_users,
            calib_no_rate: cal.no_rate,
            rounds_handed_off: d.rounds_handed_off,
            rounds_deferred: d.rounds_deferred,
        };
        Ok(0)
    })())
}

/// The scheduler's invariants that hold at every instant (`Scheduler::check_invariants`:
/// round numbers, txq state words, station limits and weights, AQL word generations),
/// from any context while the radio runs (a debugfs read, a periodic self-check). No
/// allocation.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_radio_check(radio: *mut CRadio) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        radio.scheduler().check_invariants().map_err(|_| Errno::EUCLEAN)?;
        Ok(0)
    })())
}

/// Every invariant, exactly, with the radio at rest: the scheduler's quiescent check
/// (`Scheduler::check_invariants_quiescent`, which allocates nothing), the txq
/// table's (no txq left held or locked, every intake's count exact), and no
/// pending airtime when no frame is in the hardware or a retry slot.
///
/// The radio's rounds work, the one caller the driver does not control, is held for
/// the check (waited for if running: may sleep), and queued again afterwards if rounds
/// wait and the driver has not quiesced it.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`, and no other
/// call on it may run meanwhile (the driver's contexts stopped). Process context, may
/// sleep (`might_sleep()` for every radio).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_radio_check_idle(radio: *mut CRadio) -> i32 {
    // The work goes first, while the radio is only shared; it shares it again after.
    // SAFETY: forwarded from the caller.
    let Ok(shared) = (unsafe { radio_ref(radio) }) else { return Errno::EFAULT.to_c() };
    // SAFETY: the shim's `might_sleep()`; process context (the contract).
    unsafe { crate::ffi::airtime_might_sleep() };
    shared.hal().hold_rounds_work(crate::ffi::WORK_CHECKING);
    // SAFETY: forwarded from the caller; the work is held (not running, not queued), and
    // `shared` is not used while the exclusive reference lives.
    let ret = unsafe { check_idle(radio) };
    // SAFETY: forwarded from the caller; the exclusive reference is gone.
    let shared = unsafe { &*radio };
    // Released as in `airtime_radio_resume_rounds()`, which kicks the work if rounds
    // wait and the driver has not quiesced it.
    shared.hal().release_rounds_work(crate::ffi::WORK_CHECKING);
    ret
}

/// `airtime_radio_check_idle()`'s checks, with the rounds work held.
///
/// # Safety
///
/// `radio` is a live radio and no other call on it, the rounds work included, runs.
unsafe fn check_idle(radio: *mut CRadio) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_mut(radio) }?;
        radio.check_invariants().map_err(|_| Errno::EUCLEAN)?;
        let idle = radio.outstanding_msdus() == 0 && radio.held_frames() == 0;
        let s = radio.scheduler();
        if idle && (s.total_pending_us() != 0 || Ac::ALL.iter().any(|&ac| s.multicast_pending_us(ac) != 0)) {
            return Err(Errno::EUCLEAN);
        }
        Ok(0)
    })())
}

/// Which debugfs text to write.
#[derive(Clone, Copy)]
enum Text {
    Aql(u16),
    Airtime(u16),
    DpStats,
}

/// Writes a text into `buf[..len]`, NUL-terminated; returns its length, or
/// `-ENOSPC` if it did not fit (the buffer then holds a terminated prefix).
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header); `buf` must be valid for writing `len` bytes.
unsafe fn write_text(radio: *mut CRadio, which: Text, buf: *mut c_char, len: usize) -> i32 {
    result_to_c((|| {
        // SAFETY: forwarded from the caller.
        let radio = unsafe { radio_ref(radio) }?;
        if buf.is_null() || len == 0 {
            return Err(Errno::EFAULT);
        }
        // SAFETY: non-null, valid for `len` writes (the caller's promise), not
        // aliased during the call; u8 and c_char have the same layout.
        let bytes = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), len) };
        // One byte stays for the NUL (`len` is at least 1).
        let Some((_, text_room)) = bytes.split_last_mut() else { return Err(Errno::EFAULT) };
        let mut text = TextBuf::new(text_room);
        match which {
            Text::Aql(peer) => radio.write_station_aql(station(radio, peer)?, &mut text).map_err(adapter_err)?,
            Text::Airtime(peer) => {
                radio.write_station_airtime(station(radio, peer)?, &mut text).map_err(adapter_err)?;
            }
            Text::DpStats => radio.write_dp_stats(&mut text),
        }
        let (n, truncated) = (text.len(), text.truncated());
        if let Some(nul) = bytes.get_mut(n) {
            *nul = 0;
        }
        if truncated {
            return Err(Errno::ENOSPC);
        }
        i32::try_from(n).map_err(|_| Errno::ENOSPC)
    })())
}

/// The text of station `peer_id`'s `aql` debugfs file.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header); `buf` must be valid for writing `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_debugfs_aql(radio: *mut CRadio, peer_id: u16, buf: *mut c_char, len: usize) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { write_text(radio, Text::Aql(peer_id), buf, len) }
}

/// The text of station `peer_id`'s `airtime` debugfs file.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header); `buf` must be valid for writing `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_debugfs_airtime(
    radio: *mut CRadio,
    peer_id: u16,
    buf: *mut c_char,
    len: usize,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { write_text(radio, Text::Airtime(peer_id), buf, len) }
}

/// The text of the radio's `soc_dp_stats`-like file.
///
/// # Safety
///
/// `radio` must be null or a live radio from `airtime_radio_create()`; calls may run at once from any context (see the header); `buf` must be valid for writing `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn airtime_debugfs_dp_stats(radio: *mut CRadio, buf: *mut c_char, len: usize) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { write_text(radio, Text::DpStats, buf, len) }
}
