// SPDX-License-Identifier: MIT OR GPL-2.0-only

//! The C-backed HAL: the adapter's hardware roles ([`airtime_ath11k::hal`]) and its
//! txqs, implemented by calling C function pointers (`struct airtime_hal_ops` in
//! `include/airtime_ath11k.h`).
//!
//! A driver fills one `struct airtime_hal_ops` (static, const) and passes it with
//! its own context pointer (`hw`, e.g. `struct ath11k *`) to
//! `airtime_radio_create()`. Each role of the adapter's HAL maps onto callbacks:
//!
//! | Rust role | C callbacks | ath11k code they wrap |
//! |---|---|---|
//! | `TclRings` | `tcl_free`, `tcl_enqueue` (+ `tcl_descriptors` in the config) | `ath11k_hal_srng_src_num_free()`, the descriptor half of `ath11k_dp_tx()` |
//! | `MsduTable` | `msdu_outstanding`, `msdu_insert`, `msdu_take`, `msdu_take_any` (+ `msdu_capacity` in the config) | `tx_ring->txbuf_idr`: `idr_alloc()`, `idr_remove()`, `idr_for_each()` |
//! | `StatusSink` | `tx_status`, and `tx_status_at` (optional) for the frames an entry of `airtime_tx_complete()`'s array finished, with its cookie and the entry's index | `ieee80211_tx_status_ext()` / `ieee80211_free_txskb()` |
//! | `Txq` | `txq_dequeue`, `txq_peek_len` | `ieee80211_tx_dequeue()` on the `struct ieee80211_txq` |
//! | `TxCompletionRing` | none: `airtime_tx_complete()` passes its array straight to `Ath11k::complete_tx_iter_with`, and the HAL reaps nothing | the WBM ring walk of `ath11k_dp_tx_completion_handler()` |
//! | `PpduStatsSource`, `RxStatusSource` | none: pushed with `airtime_ppdu_tx_stats()` and `airtime_rx_duration()` | HTT PPDU stats, monitor status |
//!
//! Every callback runs in the context of the entry point that made it, on any CPU,
//! possibly at once with the same callback on another CPU (the C side holds no
//! radio-wide lock): so a callback must not sleep and must not call back into the
//! same radio.

use core::ffi::c_void;
use core::ptr::NonNull;

use airtime_ath11k::AcSet;
use airtime_ath11k::hal::{
    Msdu, MsduTable, PpduStats, PpduStatsSource, RingId, RxPpdu, RxStatusSource, StatusSink, TclDesc, TclRings,
    TxCompletion, TxCompletionRing, TxStatus,
};
use airtime_sched::traits::Frame;
use airtime_sched::{Ac, Instant, RingErrorKind, Txq};

use crate::errno::Errno;

/// One outstanding MSDU as C sees it. C: `struct airtime_msdu`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CMsdu {
    /// The driver's frame (an skb); never null for a stored entry.
    pub frame: *mut c_void,
    /// Frame length in bytes.
    pub len: u32,
    /// The AQL charge token (`airtime_sched::Charge::into_raw`), 0 for none; the
    /// driver stores it opaquely (a `u32` in `ATH11K_SKB_CB(skb)`).
    pub charge: u32,
    /// Access category index (0 VO, 1 VI, 2 BE, 3 BK).
    pub ac: u8,
}

impl CMsdu {
    const EMPTY: CMsdu = CMsdu { frame: core::ptr::null_mut(), len: 0, charge: 0, ac: 0 };
}

/// One TCL descriptor. C: `struct airtime_tcl_desc`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CTclDesc {
    /// The frame (as in its MSDU entry), to map without looking the entry up.
    pub frame: *mut c_void,
    /// The MSDU id the completion will carry back.
    pub msdu_id: u32,
    /// Frame length in bytes.
    pub len_bytes: u32,
    /// Firmware peer id, valid when `has_peer` is 1.
    pub peer_id: u16,
    /// Access category index.
    pub ac: u8,
    /// 1 if `peer_id` is valid.
    pub has_peer: u8,
}

/// The callbacks of a C HAL. C: `struct airtime_hal_ops`. Every field up to
/// `txq_peek_len` is required (`airtime_radio_create()` refuses a table with a null
/// one); `txq_released` and `sta_drained` are optional (null: the driver is not told),
/// and so is `tx_status_at` (null: `tx_status` gets those frames too). The C struct is
/// `__no_randomize_layout`: a kernel built with `CONFIG_RANDSTRUCT` would otherwise
/// shuffle a struct of function pointers, and this order would no longer be its.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HalOps {
    /// Free descriptors of TCL ring `ring` now.
    pub tcl_free: Option<unsafe extern "C" fn(hw: *mut c_void, ring: u8) -> u32>,
    /// Writes one descriptor: 0, `-ENOSPC` or `-ENOMEM` (any other negative value
    /// is an "other" failure).
    pub tcl_enqueue: Option<unsafe extern "C" fn(hw: *mut c_void, ring: u8, desc: *const CTclDesc) -> i32>,
    /// Entries held in ring `ring`'s MSDU table now.
    pub msdu_outstanding: Option<unsafe extern "C" fn(hw: *mut c_void, ring: u8) -> u32>,
    /// Stores an entry: its id (0 or more), or `-ENOSPC` when the table is full.
    pub msdu_insert: Option<unsafe extern "C" fn(hw: *mut c_void, ring: u8, msdu: *const CMsdu) -> i32>,
    /// Removes entry `id` into `*msdu`: 0, or `-ENOENT` if there is none.
    pub msdu_take: Option<unsafe extern "C" fn(hw: *mut c_void, ring: u8, id: u32, msdu: *mut CMsdu) -> i32>,
    /// Removes any one entry into `*msdu`: its id, or `-ENOENT` when empty.
    pub msdu_take_any: Option<unsafe extern "C" fn(hw: *mut c_void, ring: u8, msdu: *mut CMsdu) -> i32>,
    /// Gives a finished frame back with its status (`AIRTIME_TX_*`).
    pub tx_status: Option<unsafe extern "C" fn(hw: *mut c_void, frame: *mut c_void, status: u8)>,
    /// Dequeues one frame from the driver's txq `txq`: the frame and `*len`, or null.
    pub txq_dequeue: Option<unsafe extern "C" fn(hw: *mut c_void, txq: *mut c_void, len: *mut u32) -> *mut c_void>,
    /// Length of the frame at the head of `txq`, 0 if it is empty.
    pub txq_peek_len: Option<unsafe extern "C" fn(hw: *mut c_void, txq: *mut c_void) -> u32>,
    /// Optional: a removed txq is taken back; the adapter never touches `txq` again.
    pub txq_released: Option<unsafe extern "C" fn(hw: *mut c_void, txq: *mut c_void)>,
    /// Optional: a removed station has nothing in flight; its peer id may be reused.
    pub sta_drained: Option<unsafe extern "C" fn(hw: *mut c_void, peer_id: u16)>,
    /// Required with `AIRTIME_RADIO_GATED_ROUNDS`: a runner spent its rounds with
    /// requests pending on the ACs of `ac_mask` (bit `AIRTIME_AC_*`): schedule work
    /// that calls `airtime_run_waiting_rounds()`. Optional with concurrent rounds
    /// (rarely, a round's bounded follow-up rounds ran out): without it the module's
    /// own work ([`RoundsWork`]) runs them.
    pub rounds_deferred: Option<unsafe extern "C" fn(hw: *mut c_void, ac_mask: u8)>,
    /// Optional: a frame an entry of `airtime_tx_complete()`'s array finished, with its
    /// status, the `cookie` pointer that call was given and `index`, the entry's place
    /// in the array, so that the driver reads what it kept beside the entry (the
    /// descriptor's ack RSSI, tries, PPDU id).
    pub tx_status_at:
        Option<unsafe extern "C" fn(hw: *mut c_void, cookie: *mut c_void, frame: *mut c_void, status: u8, index: u32)>,
}

type TclFree = unsafe extern "C" fn(*mut c_void, u8) -> u32;
type TclEnqueue = unsafe extern "C" fn(*mut c_void, u8, *const CTclDesc) -> i32;
type MsduInsert = unsafe extern "C" fn(*mut c_void, u8, *const CMsdu) -> i32;
type MsduTake = unsafe extern "C" fn(*mut c_void, u8, u32, *mut CMsdu) -> i32;
type MsduTakeAny = unsafe extern "C" fn(*mut c_void, u8, *mut CMsdu) -> i32;
type TxStatusFn = unsafe extern "C" fn(*mut c_void, *mut c_void, u8);
type TxqDequeue = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut u32) -> *mut c_void;
type TxqPeekLen = unsafe extern "C" fn(*mut c_void, *mut c_void) -> u32;
type TxqReleased = unsafe extern "C" fn(*mut c_void, *mut c_void);
type StaDrained = unsafe extern "C" fn(*mut c_void, u16);
type RoundsDeferred = unsafe extern "C" fn(*mut c_void, u8);
type TxStatusAt = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void, u8, u32);

/// The ops table with every required callback present (checked once, at creation).
#[derive(Clone, Copy, Debug)]
pub struct Ops {
    txq_released: Option<TxqReleased>,
    sta_drained: Option<StaDrained>,
    rounds_deferred: Option<RoundsDeferred>,
    tx_status_at: Option<TxStatusAt>,
    tcl_free: TclFree,
    tcl_enqueue: TclEnqueue,
    msdu_outstanding: TclFree,
    msdu_insert: MsduInsert,
    msdu_take: MsduTake,
    msdu_take_any: MsduTakeAny,
    tx_status: TxStatusFn,
    txq_dequeue: TxqDequeue,
    txq_peek_len: TxqPeekLen,
}

impl Ops {
    /// Whether the driver gave a `rounds_deferred` callback.
    pub fn has_rounds_deferred(&self) -> bool {
        self.rounds_deferred.is_some()
    }

    /// The callbacks of `ops`, or `EINVAL` if one is missing (`rounds_deferred` is
    /// required only with gated rounds, which the caller checks).
    pub fn from_c(ops: &HalOps) -> Result<Ops, Errno> {
        Ok(Ops {
            txq_released: ops.txq_released,
            sta_drained: ops.sta_drained,
            rounds_deferred: ops.rounds_deferred,
            tx_status_at: ops.tx_status_at,
            tcl_free: ops.tcl_free.ok_or(Errno::EINVAL)?,
            tcl_enqueue: ops.tcl_enqueue.ok_or(Errno::EINVAL)?,
            msdu_outstanding: ops.msdu_outstanding.ok_or(Errno::EINVAL)?,
            msdu_insert: ops.msdu_insert.ok_or(Errno::EINVAL)?,
            msdu_take: ops.msdu_take.ok_or(Errno::EINVAL)?,
            msdu_take_any: ops.msdu_take_any.ok_or(Errno::EINVAL)?,
            tx_status: ops.tx_status.ok_or(Errno::EINVAL)?,
            txq_dequeue: ops.txq_dequeue.ok_or(Errno::EINVAL)?,
            txq_peek_len: ops.txq_peek_len.ok_or(Errno::EINVAL)?,
        })
    }
}

/// A driver frame (an skb) and its length. Dropping one does nothing: the
/// driver owns the frame, and every frame the adapter takes is handed back
/// through `tx_status` (completion, or `Removed` at teardown).
#[derive(Debug)]
pub struct CFrame {
    ptr: NonNull<c_void>,
    len: u32,
}

impl Frame for CFrame {
    fn len_bytes(&self) -> u32 {
        self.len
    }
}

/// One tx completion from C. C: `struct airtime_tx_status`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CTxStatus {
    /// The MSDU id of the descriptor.
    pub msdu_id: u32,
    /// The TCL ring it was sent on (0..3).
    pub ring: u8,
    /// `AIRTIME_TX_*`.
    pub status: u8,
    /// Must be 0.
    pub reserved: u16,
}

impl CTxStatus {
    /// The adapter's completion, tagged with `index` (the entry's place in its
    /// array, for `tx_status_at`), or `None` for an invalid ring or status.
    pub fn to_completion(self, index: u32) -> Option<TxCompletion> {
        Some(TxCompletion::new(RingId::new(self.ring)?, self.msdu_id, TxStatus::from_u8(self.status)?).with_tag(index))
    }
}

/// The module's own work item that runs a radio's waiting rounds
/// (`struct airtime_rounds_work` in the shim), for a radio whose driver gave no
/// `rounds_deferred` op: its deferrals queue this work (a delayed work on the module's
/// workqueue), whose run calls [`airtime_rounds_work_run`](crate::api::airtime_rounds_work_run)
/// with BHs disabled, instead of waiting for a poll the driver may not have. Held
/// (not queued, not running) while the driver has the radio quiesced, while
/// `airtime_radio_check_idle()` runs, and for good from the start of
/// `airtime_radio_destroy()`. Owned by the radio's HAL; freed when it is dropped.
#[derive(Debug)]
pub struct RoundsWork(NonNull<c_void>);

impl RoundsWork {
    /// A new work, not yet bound to a radio; `ENOMEM` if the shim has no memory.
    pub fn new() -> Result<RoundsWork, Errno> {
        // SAFETY: the shim's allocator function; process context (radio creation).
        NonNull::new(unsafe { crate::ffi::airtime_rounds_work_alloc() }).map(RoundsWork).ok_or(Errno::ENOMEM)
    }
}

impl Drop for RoundsWork {
    /// Frees the work. It was held for good before (`airtime_radio_destroy()`), or never bound
    /// (a create that failed after it was allocated), so it is neither queued nor running.
    fn drop(&mut self) {
        // SAFETY: allocated by `airtime_rounds_work_alloc`, freed once, here; not
        // queued (see above).
        unsafe { crate::ffi::airtime_rounds_work_free(self.0.as_ptr()) }
    }
}

/// The HAL over C callbacks.
#[derive(Debug)]
pub struct CHal {
    ops: Ops,
    hw: *mut c_void,
    tcl_descriptors: u32,
    msdu_capacity: u32,
    /// Set exactly when `ops` has no `rounds_deferred`.
    rounds_work: Option<RoundsWork>,
}

// SAFETY: the wake and completion contexts share a radio's HAL. The callbacks and `hw`
// are the driver's, which promises in `airtime_radio_create()`'s contract that every
// callback may run on any CPU at once (it locks each hardware ring and its MSDU table
// itself, as ath11k has `tcl_ring->lock` and `tx_idr_lock`). `rounds_work` is a pointer
// to the shim's `struct airtime_rounds_work`, which every context may use through
// `&self`: its kick, hold and release take the struct's spinlock (irqsave) around its
// state and the workqueue calls, which are themselves safe from any CPU; `bind` runs
// once, before the radio is shared; the free runs in `Drop`, with `&mut self`, after
// destroy's hold has cancelled the work and waited for its run.
unsafe impl Sync for CHal {}
// SAFETY: as above: nothing in `CHal` belongs to the thread that created it (the work
// runs on a kworker of any CPU, and is no thread's).
unsafe impl Send for CHal {}

impl CHal {
    /// Hands back a frame that `completion` finished in the `airtime_tx_complete()`
    /// call given `cookie`: to `tx_status_at` with the entry's index (the completion's
    /// tag), if the driver gave that op, else to `tx_status`.
    pub(crate) fn tx_status_at(&self, cookie: *mut c_void, frame: CFrame, completion: &TxCompletion) {
        match self.ops.tx_status_at {
            // SAFETY: as in `tcl_free`; the frame goes back to its owner, and `cookie`
            // is the driver's own pointer, handed back unread.
            Some(at) => unsafe { at(self.hw, cookie, frame.ptr.as_ptr(), completion.status as u8, completion.tag) },
            None => self.tx_status(frame, completion.status),
        }
    }

    /// A HAL calling `ops` with `hw`; `rounds_work` runs the deferred rounds when
    /// `ops` has no `rounds_deferred` (the caller gives one exactly then).
    pub fn new(
        ops: Ops,
        hw: *mut c_void,
        tcl_descriptors: u32,
        msdu_capacity: u32,
        rounds_work: Option<RoundsWork>,
    ) -> CHal {
        CHal { ops, hw, tcl_descriptors, msdu_capacity, rounds_work }
    }

    /// Names the radio the module's rounds work serves (if it has one). Once, by
    /// `airtime_radio_create()`, before the radio is handed to the driver.
    pub(crate) fn bind_rounds_work(&self, radio: *mut c_void) {
        if let Some(w) = &self.rounds_work {
            // SAFETY: a live work of this HAL; `radio` is the radio that owns this HAL,
            // live until `airtime_radio_destroy()` stops the work.
            unsafe { crate::ffi::airtime_rounds_work_bind(w.0.as_ptr(), radio) }
        }
    }

    /// Holds the module's rounds work (if it has one) with the bits `why`
    /// (`ffi::WORK_*`): on return no run of it is queued or running, and none is queued
    /// until every bit is released; deferrals meanwhile wait in `rounds_waiting()`.
    /// Process context, may sleep (`cancel_delayed_work_sync()`).
    pub(crate) fn hold_rounds_work(&self, why: u32) {
        if let Some(w) = &self.rounds_work {
            // SAFETY: a live work of this HAL; process context (the callers' contract).
            unsafe { crate::ffi::airtime_rounds_work_hold(w.0.as_ptr(), why) }
        }
    }

    /// Releases the hold bits `why`, and queues the work if no bit is left and rounds
    /// wait (the shim reads them after the release: see there). Nothing for a radio
    /// without the work.
    pub(crate) fn release_rounds_work(&self, why: u32) {
        if let Some(w) = &self.rounds_work {
            // SAFETY: a live work of this HAL, bound at creation; process context,
            // serialised with its holds (the callers' contract).
            unsafe { crate::ffi::airtime_rounds_work_release(w.0.as_ptr(), why) }
        }
    }

    /// Queues the module's rounds work at once (unless it is held): a new deferral's.
    fn kick_rounds_work(&self) {
        if let Some(w) = &self.rounds_work {
            // SAFETY: a live work of this HAL, bound at creation.
            unsafe { crate::ffi::airtime_rounds_work_kick(w.0.as_ptr()) }
        }
    }

    /// The txq of the driver's `txq` pointer (non-null, checked by the caller).
    pub fn txq(&self, txq: NonNull<c_void>) -> CTxq {
        CTxq {
            hw: self.hw,
            dequeue: self.ops.txq_dequeue,
            peek_len: self.ops.txq_peek_len,
            tx_status: self.ops.tx_status,
            txq,
        }
    }

    /// Gives a removed txq back to the driver (`txq_released`, if set): the adapter
    /// holds it no more.
    pub fn txq_released(&self, txq: CTxq) {
        if let Some(f) = self.ops.txq_released {
            // SAFETY: the driver's callback with its own context and txq pointer, which
            // it promised valid until this call.
            unsafe { f(self.hw, txq.txq.as_ptr()) }
        }
    }

    /// Rounds wait on the ACs of `acs`, if any: tells the driver (`rounds_deferred`),
    /// or, without that op, queues the module's own work, which runs them
    /// (`airtime_run_waiting_rounds()`), so that no deferral waits for a poll the
    /// driver may not make.
    pub fn rounds_deferred(&self, acs: AcSet) {
        if acs.is_empty() {
            return;
        }
        match self.ops.rounds_deferred {
            // SAFETY: the driver's callback with its own context.
            Some(f) => unsafe { f(self.hw, acs.bits()) },
            None => self.kick_rounds_work(),
        }
    }

    /// Tells the driver a departed station is drained (`sta_drained`, if set).
    pub fn sta_drained(&self, peer_id: u16) {
        if let Some(f) = self.ops.sta_drained {
            // SAFETY: the driver's callback with its own context.
            unsafe { f(self.hw, peer_id) }
        }
    }

    fn msdu_from_c(m: CMsdu) -> Option<Msdu<CFrame>> {
        let ptr = NonNull::new(m.frame)?;
        let ac = Ac::from_index(usize::from(m.ac)).unwrap_or(Ac::Be);
        Some(Msdu { frame: CFrame { ptr, len: m.len }, charge_raw: m.charge, ac })
    }
}

fn ring_u8(ring: RingId) -> u8 {
    // RingId is always below DP_TCL_NUM_RING_MAX (3).
    u8::try_from(ring.index()).unwrap_or(u8::MAX)
}

impl TclRings for CHal {
    type Error = RingErrorKind;

    fn tcl_descriptors(&self, _ring: RingId) -> u32 {
        self.tcl_descriptors
    }

    fn tcl_free(&self, ring: RingId) -> u32 {
        // SAFETY: the ops and `hw` were given by the driver at creation with the
        // promise that they stay valid until the radio is destroyed; the callback
        // only reads.
        unsafe { (self.ops.tcl_free)(self.hw, ring_u8(ring)) }
    }

    fn tcl_enqueue(&self, ring: RingId, desc: TclDesc) -> Result<(), RingErrorKind> {
        let c = CTclDesc {
            // The address `frame_addr` took from the frame's pointer.
            frame: desc.frame_addr as *mut c_void,
            msdu_id: desc.msdu_id,
            len_bytes: desc.len_bytes,
            peer_id: desc.peer_id.unwrap_or(0),
            ac: u8::try_from(desc.ac.index()).unwrap_or(2),
            has_peer: u8::from(desc.peer_id.is_some()),
        };
        // SAFETY: as in `tcl_free`; `&c` is valid for the call and not kept.
        let ret = unsafe { (self.ops.tcl_enqueue)(self.hw, ring_u8(ring), &c) };
        match ret {
            0.. => Ok(()),
            -28 => Err(RingErrorKind::Full),
            -12 => Err(RingErrorKind::OutOfMemory),
            _ => Err(RingErrorKind::Other),
        }
    }
}

impl MsduTable for CHal {
    type Frame = CFrame;

    fn msdu_capacity(&self, _ring: RingId) -> u32 {
        self.msdu_capacity
    }

    fn msdu_outstanding(&self, ring: RingId) -> u32 {
        // SAFETY: as in `tcl_free`.
        unsafe { (self.ops.msdu_outstanding)(self.hw, ring_u8(ring)) }
    }

    fn msdu_insert(&self, ring: RingId, msdu: Msdu<CFrame>) -> Result<u32, Msdu<CFrame>> {
        let c = CMsdu {
            frame: msdu.frame.ptr.as_ptr(),
            len: msdu.frame.len,
            charge: msdu.charge_raw,
            ac: u8::try_from(msdu.ac.index()).unwrap_or(2),
        };
        // SAFETY: as in `tcl_free`; `&c` is valid for the call and not kept (the
        // driver copies the entry).
        let ret = unsafe { (self.ops.msdu_insert)(self.hw, ring_u8(ring), &c) };
        u32::try_from(ret).map_err(|_| msdu)
    }

    fn msdu_take(&self, ring: RingId, id: u32) -> Option<Msdu<CFrame>> {
        let mut c = CMsdu::EMPTY;
        // SAFETY: as in `tcl_free`; `&mut c` is valid for one write during the call.
        let ret = unsafe { (self.ops.msdu_take)(self.hw, ring_u8(ring), id, &mut c) };
        if ret < 0 {
            return None;
        }
        Self::msdu_from_c(c)
    }

    fn frame_addr(&self, frame: &CFrame) -> usize {
        frame.ptr.as_ptr() as usize
    }

    fn msdu_take_any(&self, ring: RingId) -> Option<(u32, Msdu<CFrame>)> {
        // An entry without a frame (a driver bug: `msdu_insert` never stores one) is
        // passed over, so that a flush goes on to the entries after it; at most a
        // table's worth, in case the driver keeps returning one.
        for _ in 0..=self.msdu_capacity {
            let mut c = CMsdu::EMPTY;
            // SAFETY: as in `msdu_take`.
            let ret = unsafe { (self.ops.msdu_take_any)(self.hw, ring_u8(ring), &mut c) };
            let id = u32::try_from(ret).ok()?;
            if let Some(m) = Self::msdu_from_c(c) {
                return Some((id, m));
            }
        }
        None
    }
}

impl TxCompletionRing for CHal {
    /// None: the C API hands its completions over as an array
    /// (`Ath11k::complete_tx_iter_with`), so no pass reads them from the HAL, and passes on
    /// two completion rings share nothing.
    fn reap_tx_completion(&self) -> Option<TxCompletion> {
        None
    }
}

impl StatusSink for CHal {
    type Frame = CFrame;

    fn tx_status(&self, frame: CFrame, status: TxStatus) {
        // SAFETY: as in `tcl_free`; the frame goes back to its owner.
        unsafe { (self.ops.tx_status)(self.hw, frame.ptr.as_ptr(), status as u8) }
    }
}

impl PpduStatsSource for CHal {
    /// Pushed by `airtime_ppdu_tx_stats()` instead.
    fn next_ppdu_stats(&self) -> Option<PpduStats> {
        None
    }
}

impl RxStatusSource for CHal {
    /// Pushed by `airtime_rx_duration()` instead.
    fn next_rx_ppdu(&self) -> Option<RxPpdu> {
        None
    }
}

/// A driver txq (mac80211's `struct ieee80211_txq`), dequeued through C.
#[derive(Debug)]
pub struct CTxq {
    hw: *mut c_void,
    dequeue: TxqDequeue,
    peek_len: TxqPeekLen,
    tx_status: TxStatusFn,
    txq: NonNull<c_void>,
}

impl Txq for CTxq {
    type Frame = CFrame;
    type Error = core::convert::Infallible;

    fn dequeue(&mut self, _now: Instant) -> Result<Option<CFrame>, Self::Error> {
        let mut len = 0u32;
        // SAFETY: the driver promised at `airtime_txq_add()` that `txq` stays
        // valid until the txq or its station is removed; `&mut len` is valid for
        // one write.
        let frame = unsafe { (self.dequeue)(self.hw, self.txq.as_ptr(), &mut len) };
        Ok(NonNull::new(frame).map(|ptr| CFrame { ptr, len }))
    }

    fn peek_len(&self) -> Option<u32> {
        // SAFETY: as in `dequeue`.
        let len = unsafe { (self.peek_len)(self.hw, self.txq.as_ptr()) };
        (len != 0).then_some(len)
    }
}

/// The adapter's txqs take frames through the core's txq table (`Ath11k::enqueue`),
/// which the C API never calls: a C driver's frames stay in mac80211's txq until
/// `txq_dequeue`. Should a frame arrive here anyway, it is not dropped silently: it
/// goes back to the driver through `tx_status` as `AIRTIME_TX_REMOVED` (freed).
impl airtime_sched::Enqueue for CTxq {
    fn enqueue(&mut self, frame: CFrame, _enqueued: Instant) {
        // SAFETY: as in `dequeue`; the frame goes back to its owner.
        unsafe { (self.tx_status)(self.hw, frame.ptr.as_ptr(), TxStatus::Removed as u8) }
    }
}
