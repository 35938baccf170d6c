/* SPDX-License-Identifier: MIT OR GPL-2.0-only */
/*
 * airtime_ath11k.h - C interface of the Rust object in airtime_ath11k.ko
 *
 * The module is a small C shim (airtime_shim.c) plus one relocatable object
 * built from the Rust crate airtime-ath11k-kmod. This header declares both
 * directions of the boundary:
 *
 *  - functions the Rust object exports (implemented in Rust, src/entry.rs);
 *  - functions the Rust object imports (implemented in airtime_shim.c).
 *
 * Everything declared here is implemented; build.sh checks that the Rust
 * object defines every export and needs no symbol beyond the imports below
 * and memcpy/memmove/memset/memcmp/bcmp.
 *
 * The adapter API (struct airtime_radio, below) is the ath11k adapter of the
 * airtime scheduler (Rust crate airtime-ath11k) for one radio: a driver
 * creates one per radio with a table of HAL callbacks (struct
 * airtime_hal_ops) and calls it from mac80211's wake_tx_queue, its tx
 * completion NAPI poll, its HTT PPDU stats and rx monitor paths, and its
 * station and debugfs code.
 *
 * Locking: none on the radio. Every call but airtime_radio_destroy() and
 * airtime_radio_check_idle() (no other call on the radio meanwhile),
 * airtime_radio_quiesce() and airtime_radio_resume_rounds() may run at once
 * with any other, from any context but hard IRQ. The quiesce and resume calls
 * (process context) are serialised by the driver only against each other,
 * airtime_radio_check_idle() and airtime_radio_destroy(): every data-path
 * call may overlap them. The concurrent callers: the wake path, the tx
 * completion NAPI polls (one per WBM ring, several at once on one radio), the
 * PPDU stats and rx paths, station and debugfs code, on different CPUs, and
 * the module's own rounds work (below). The scheduler inside is lock-free
 * and a txq is served by one context at a time. No function sleeps but
 * airtime_radio_create() (in reclaim, for its tables), and
 * airtime_radio_destroy(), airtime_radio_quiesce() and
 * airtime_radio_check_idle() (which wait for a run of the module's rounds
 * work to end). The HAL callbacks run in the caller's context, possibly on
 * two CPUs at once: they lock what the hardware needs (each TCL
 * ring, as ath11k's tcl_ring->lock; each ring's MSDU table, as tx_idr_lock;
 * each txq's queue against its own enqueue), and must not call back into the
 * same radio.
 *
 * Which calls run which callbacks: rounds (tcl_free, tcl_enqueue,
 * msdu_outstanding, msdu_insert, msdu_take on a refusal, txq_dequeue,
 * txq_peek_len, rounds_deferred) run in airtime_txq_wake(),
 * airtime_mcast_txq_wake(), airtime_tx_complete() (after its msdu_take and
 * tx_status or tx_status_at per completion), airtime_run_rounds() and
 * airtime_run_waiting_rounds(), and so in the module's rounds work, which
 * runs the waiting rounds for a radio created without the rounds_deferred()
 * op: a kworker of the module's workqueue "airtime_rounds", in process
 * context (in_task() is true, in_serving_softirq() false; preemptible on
 * PREEMPT_RT, where local_bh_disable() does not disable preemption) with
 * BHs disabled, on any CPU (the ring it names is that CPU's). It is not a
 * NAPI poll: a callback must not use NAPI-only helpers (napi_consume_skb()
 * with a non-zero budget, napi_gro_*), nor rely on state the driver's own
 * poll loop sets up around its airtime calls (a per-poll budget or list),
 * nor leave a doorbell (the TCL ring's head pointer update) to be rung by
 * the driver after the airtime call returns: the work rings nothing itself,
 * so tcl_enqueue must make each descriptor visible to the hardware (ath11k
 * updates the head pointer per frame, in ath11k_hal_srng_access_end()).
 * tx_status (a frame refused by msdu_insert or tcl_enqueue goes back with
 * it) may run from the work too. Until airtime_radio_quiesce() or
 * airtime_radio_destroy() returns, the work may call any of these
 * callbacks: everything they touch (the rings, the MSDU tables, @hw) must
 * stay valid and usable until then. tx_status, txq_released and sta_drained also
 * in the removals, airtime_radio_reap() and airtime_radio_destroy(), which
 * alone runs msdu_take_any. The adds, the setters, the PPDU and rx records,
 * the statistics and the checks run none, so a driver may call them under
 * its own spinlocks (ath11k's ar->data_lock around its HTT PPDU stats).
 *
 * Return convention of the exports: a non-negative value on success and a
 * negative errno on error, as kernel functions do.
 */
#ifndef AIRTIME_ATH11K_H
#define AIRTIME_ATH11K_H

#include <linux/compiler.h>
#include <linux/types.h>

/*
 * Alignment bounds of the Rust global allocator. They must equal
 * KMALLOC_MIN_ALIGN and MAX_ALIGN in src/kalloc.rs; the shim checks at build
 * time that the kernel's kmalloc really guarantees them.
 */
#define AIRTIME_KMALLOC_MIN_ALIGN	8
#define AIRTIME_KMALLOC_MAX_ALIGN	4096

/* Return values of airtime_selftest_run() (selftest::PASS / FAIL in Rust). */
#define AIRTIME_SELFTEST_PASS		0
#define AIRTIME_SELFTEST_FAIL		1

/*
 * Scenario flag (selftest::EXPLICIT_ONLY in Rust): not part of the default
 * "all" run; runs only when selected by name or index.
 */
#define AIRTIME_SELFTEST_EXPLICIT_ONLY	(1U << 0)

/* A message buffer of this size holds any self-test message untruncated. */
#define AIRTIME_SELFTEST_MSG_LEN	256

/**
 * struct airtime_selftest_info - description of one self-test scenario
 * @name: static NUL-terminated name, e.g. "debugfs-text"; valid for the
 *	lifetime of the module
 * @flags: AIRTIME_SELFTEST_* flags
 *
 * Layout-compatible with SelftestInfo in src/entry.rs (both sides assert
 * its size).
 */
struct airtime_selftest_info {
	const char *name;
	u32 flags;
};

/* ---- Exported by the Rust object -------------------------------------- */

/**
 * airtime_version() - version of the Rust object
 *
 * Context: Any context.
 * Return: a static NUL-terminated string, "airtime-ath11k-kmod <version>".
 */
const char *airtime_version(void);

/**
 * airtime_selftest_count() - number of self-test scenarios
 *
 * Context: Any context.
 * Return: the number of scenarios; valid indices are 0 to count - 1.
 */
u32 airtime_selftest_count(void);

/**
 * airtime_selftest_info() - name and flags of one scenario
 * @index: scenario index, 0 to airtime_selftest_count() - 1
 * @info: filled with the scenario's name and flags
 *
 * Context: Any context. Does not sleep.
 * Return: 0; -ENOENT if @index is out of range; -EFAULT if @info is NULL.
 * Nothing is written on error.
 */
int airtime_selftest_info(u32 index, struct airtime_selftest_info *info);

/**
 * airtime_selftest_run() - run one self-test scenario
 * @index: scenario index, 0 to airtime_selftest_count() - 1
 * @msg: buffer for the scenario's message; may be NULL if @len is 0
 * @len: size of @msg in bytes; the message is truncated to fit and always
 *	NUL-terminated when @len > 0. AIRTIME_SELFTEST_MSG_LEN is enough.
 *
 * On failure the message says which check failed and with what values; on
 * success it is empty or holds the scenario's measured numbers.
 *
 * Context: Process context, no spinlock held (module init). The scenarios
 * run as the module's self-test does, by index: most do not sleep (their
 * allocations are GFP_ATOMIC but a create's) and run for milliseconds; the
 * c-api-smp-stress ones start kthreads and sleep for seconds;
 * selftest-must-panic calls BUG() on purpose (its explicit-only flag keeps
 * it out of a normal run). Not reentrant:
 * the heap scenarios count live Rust allocations, so nothing else may
 * allocate on the Rust heap while one runs.
 * Return: AIRTIME_SELFTEST_PASS or AIRTIME_SELFTEST_FAIL; -ENOENT if @index
 * is out of range; -EFAULT if @msg is NULL and @len is not 0.
 */
int airtime_selftest_run(u32 index, char *msg, size_t len);

/* ---- The adapter API (Rust, src/api.rs) -------------------------------- */

/*
 * Most TCL data rings per radio (ath11k's DP_TCL_NUM_RING_MAX). The adapter
 * uses ring (cpu % max_tx_ring) for a round's pushes, and only rings below
 * max_tx_ring (struct airtime_radio_config) in any callback.
 */
#define AIRTIME_TCL_RINGS		3
/* Users in one PPDU record (ath11k's HTT_PPDU_STATS_MAX_USERS). */
#define AIRTIME_PPDU_MAX_USERS		8

/* Access category indices (mac80211's order). */
#define AIRTIME_AC_VO			0
#define AIRTIME_AC_VI			1
#define AIRTIME_AC_BE			2
#define AIRTIME_AC_BK			3
#define AIRTIME_NUM_ACS			4

/* Radio flags (struct airtime_radio_config.flags). */
/*
 * The firmware picks the next transmitter itself (mac80211's
 * IEEE80211_HW_TX_NO_PUSHBACK, as ath11k sets): each station's AQL limits are
 * scaled by its weight / 256, which is what makes weights reach the air there.
 */
#define AIRTIME_RADIO_TX_NO_PUSHBACK	(1U << 0)
/*
 * Start with the AQL checks off (airtime_set_aql_enabled() turns them on);
 * charges are counted either way.
 */
#define AIRTIME_RADIO_AQL_DISABLED	(1U << 1)
/*
 * Calibrate each station's AQL estimate against the PPDU stats (not in the
 * series): every single-user record whose user carries @msdus and
 * @msdu_bytes (struct airtime_ppdu_user) is a sample of measured over charged
 * airtime, and once 16 samples were taken the station's frames are priced at
 * the estimate times their running average (clamped to 1/4..4). MU users are
 * skipped. Off by default.
 */
#define AIRTIME_RADIO_CALIBRATE	(1U << 2)
/*
 * Bound each txq's turn (not in the series, where a turn lasts while AQL and
 * the ring allow): a turn ends once the txq sent turn_frames frames or
 * turn_airtime_us of charged airtime (the frame that reaches it is sent), and
 * the round goes on with the AC's other txqs, so that one slow station cannot
 * hold the ring for a long burst while the others wait. A txq its budget
 * stopped keeps its frames and, with deficit left, its place at the head of
 * the next round. With this flag at least one of the two bounds must be set;
 * without it both must be 0.
 */
#define AIRTIME_RADIO_TURN_BUDGET	(1U << 3)
/*
 * Gate each AC's rounds (not in the series): one context at a time runs an
 * AC's rounds, as mac80211 requires of its drivers (no concurrent scheduling
 * rounds, ieee80211_txq_schedule_start()), without a lock anyone waits on. A
 * call that finds another context running the AC's rounds leaves it a note
 * and returns at once (airtime_txq_wake() then returns 0: the running context
 * sends the frames); the runner runs one more round for the notes left during
 * its last, up to gate_rounds rounds per call, its own included, with its
 * own @cpu's ring. A runner that spends gate_rounds with notes pending leaves
 * them waiting and calls the rounds_deferred() op, from the runner's context,
 * with the ACs: the driver schedules work (its tx work item, its NAPI poll)
 * that calls airtime_run_waiting_rounds(); airtime_rounds_waiting() tells
 * which ACs still wait. With this flag gate_rounds must be in 1 to
 * AIRTIME_GATE_ROUNDS_MAX and the rounds_deferred() op set; without it,
 * gate_rounds must be 0.
 */
#define AIRTIME_RADIO_GATED_ROUNDS	(1U << 4)
/* The most rounds one gated call may run (struct airtime_radio_config.gate_rounds). */
#define AIRTIME_GATE_ROUNDS_MAX		64

/* How the hardware finished with a frame (enum TxStatus in Rust). */
#define AIRTIME_TX_ACKED		0
#define AIRTIME_TX_NOT_ACKED		1
#define AIRTIME_TX_FW_DROPPED		2
#define AIRTIME_TX_TTL_EXPIRED		3
#define AIRTIME_TX_REMOVED		4
#define AIRTIME_TX_DESC_ERROR		5

/* Rate encodings (struct airtime_rate.encoding). */
#define AIRTIME_RATE_NONE		0
#define AIRTIME_RATE_CCK		1
#define AIRTIME_RATE_OFDM		2
#define AIRTIME_RATE_HT			3
#define AIRTIME_RATE_VHT		4
#define AIRTIME_RATE_HE			5

/*
 * struct airtime_radio: one radio's adapter, opaque. Created by
 * airtime_radio_create(), freed by airtime_radio_destroy().
 */
struct airtime_radio;

/**
 * struct airtime_msdu - one outstanding MSDU, as the HAL stores it
 * @frame: the driver's frame (an skb); never NULL for a stored entry
 * @len: frame length in bytes
 * @charge: the frame's AQL charge token, 0 for none; store it opaquely (a
 *	u32 in the skb's control block) and give it back unchanged
 * @ac: access category index (AIRTIME_AC_*)
 */
struct airtime_msdu {
	void *frame;
	u32 len;
	u32 charge;
	u8 ac;
};

/**
 * struct airtime_tcl_desc - what the driver writes into a TCL descriptor
 * @frame: the frame, as msdu_insert() just stored it in entry @msdu_id (the
 *	skb to map: no idr_find() needed)
 * @msdu_id: the MSDU id the completion carries back (ath11k's buf_id)
 * @len_bytes: frame length in bytes
 * @peer_id: firmware peer id, valid if @has_peer
 * @ac: access category index of the round that sent it
 * @has_peer: 1 if @peer_id is valid
 */
struct airtime_tcl_desc {
	void *frame;
	u32 msdu_id;
	u32 len_bytes;
	u16 peer_id;
	u8 ac;
	u8 has_peer;
};

/**
 * struct airtime_hal_ops - the HAL of one radio, as C callbacks
 * @tcl_free: free descriptors of TCL ring @ring now
 *	(ath11k_hal_srng_src_num_free()); read before every dequeue, with
 *	@msdu_outstanding: keep both O(1) (an idr has no count: keep one)
 * @tcl_enqueue: write one descriptor into ring @ring: 0, -ENOSPC (no
 *	descriptor), -ENOMEM (memory or DMA mapping); on error the MSDU is taken
 *	back out of the table by the adapter, so the error path must leave the
 *	entry in the table (no idr_remove(), no free, as ath11k_dp_tx()'s
 *	fail_remove_idr would do): the frame and its charge come back through it.
 *	Any error keeps the frame in its txq's retry slot, sent first at the
 *	txq's next turn, and ends the round: return one only for a shortage that
 *	passes. A frame that can never be sent (ath11k_dp_tx()'s -EINVAL for an
 *	encapsulation it cannot handle, -ESHUTDOWN during a firmware crash
 *	flush) is not an error here: return 0 without writing a descriptor and
 *	complete it yourself, by adding {@desc->msdu_id, @ring,
 *	AIRTIME_TX_DESC_ERROR} to what your next NAPI poll hands to
 *	airtime_tx_complete(), which releases its charge and hands it to
 *	tx_status_at() or tx_status()
 * @msdu_outstanding: entries in ring @ring's MSDU table (tx_ring->txbuf_idr).
 *	The tables must be this radio's alone: its charges carry no radio, teardown
 *	takes every entry it finds, and a completion must go to the radio that owns
 *	its @msdu_id (an ath11k driver with more than one radio per SoC keeps an id
 *	space per radio, or filters these callbacks by radio)
 * @msdu_insert: store a copy of *@msdu in ring @ring's table (idr_alloc()):
 *	its id (0 or more), or -ENOSPC when the table is full (any negative
 *	return is taken as full: the frame stays in its txq's retry slot)
 * @msdu_take: remove entry @id of ring @ring into *@msdu (idr_remove()): 0,
 *	or -ENOENT if there is none. The entry is the one inserted, its frame
 *	never NULL: one taken with a NULL frame (a driver bug) is counted as an
 *	unknown MSDU, and its charge stays pending for good
 * @msdu_take_any: remove any one entry of ring @ring into *@msdu (teardown):
 *	its id, or -ENOENT when the table is empty; an entry with a NULL frame
 *	(a driver bug) is passed over, its charge pending for good
 * @tx_status: a finished frame goes back to the stack with its status
 *	(AIRTIME_TX_*): ieee80211_tx_status_ext() or ieee80211_free_txskb() (for
 *	AIRTIME_TX_REMOVED). Its AQL charge is released before the adapter call
 *	that made this callback returns: in airtime_tx_complete() with the
 *	pass's other charges (in batches of up to 32, the last as the pass
 *	ends), after this callback (so the radio's pending airtime still counts
 *	the frame while it runs), elsewhere before it. It
 *	runs in any context but hard IRQ, on several CPUs at once (each NAPI
 *	poll, the removals, reaps and destroy): serialise the calls into
 *	mac80211 for one hw and disable BHs around them, as mac80211 requires of
 *	ieee80211_tx_status_ext()
 * @txq_dequeue: dequeue one frame from the driver's txq @txq
 *	(ieee80211_tx_dequeue()): the frame with *@len set, or NULL when empty
 * @txq_peek_len: length of the frame at the head of @txq, 0 when empty
 * @txq_released: optional: a removed txq is handed back; the adapter holds no
 *	frame of it (its retry-slot frame went to tx_status() AIRTIME_TX_REMOVED
 *	before) and never touches @txq again: the frames still queued there are
 *	the driver's to free (ieee80211_free_txskb() each, or mac80211's own
 *	purge when it frees the station), with its own per-txq state; mac80211
 *	owns the struct ieee80211_txq itself (see airtime_sta_remove() for
 *	when it may free it). Called once
 *	per txq_add()/mcast_txq_add() that succeeded (see txq_add()'s -ENOENT
 *	for one raced by its station's removal),
 *	from the removal, a later airtime_radio_reap() (a txq another CPU was
 *	serving at its removal) or airtime_radio_destroy()
 * @sta_drained: optional: a removed station has no frame left in the hardware
 *	(every completion came back) and can be charged nothing more: its firmware
 *	peer id may be reused. Must not sleep like the other callbacks (it may
 *	run in the tx completion NAPI poll): queue the peer's deletion
 *	(ath11k_peer_delete() waits for the firmware) to a work item rather
 *	than calling it here. Called once per removed
 *	station: from its own airtime_sta_remove() when nothing of it is in
 *	flight, else from a later airtime_radio_reap(), airtime_sta_remove() or
 *	airtime_radio_destroy()
 * @rounds_deferred: with AIRTIME_RADIO_GATED_ROUNDS (required then): a call
 *	spent its gate_rounds with other contexts' round requests pending on the
 *	ACs of @ac_mask (bit AIRTIME_AC_*). With concurrent rounds (optional
 *	then), rarely: a round that overlapped rounds of other contexts ran out
 *	of its bounded follow-up rounds, or a ring kept being freed right after
 *	a round read it full. Called from that
 *	call's context (wake or NAPI), so it must not sleep or call the adapter:
 *	schedule the work (napi_schedule(), queue_work()) that calls
 *	airtime_run_waiting_rounds(). A radio with concurrent rounds created
 *	without the op runs those rounds itself: each such deferral queues a
 *	work item of the module's own (one per radio, a delayed work on the
 *	module's workqueue, run at once: queued with no delay, an armed delay
 *	cut to 0),
 *	which runs the waiting rounds with BHs disabled, in process context
 *	(a kworker, not a NAPI poll: see the note at the top of this file on
 *	what its callbacks must not assume), on the kworker's CPU and its ring.
 *	If its own rounds are deferred again it queues itself again: if it
 *	pushed frames, at the next tick (1 jiffy's delay, 0 to 1 jiffy away:
 *	those frames' completions run rounds too, so the work is paced rather
 *	than a third CPU-bound TX context, as long as the completion passes do
 *	not defer themselves; each of their deferrals cuts the wait to 0); if
 *	it pushed none, after a wait that
 *	doubles from 1 jiffy up to AIRTIME_WORK_BACKOFF_MAX_MS (nothing is
 *	making progress, e.g. msdu_insert() failing under memory pressure
 *	while the ring reads free: it does not spin); a new deferral from
 *	another context still runs it at once. The driver stops
 *	it with airtime_radio_quiesce() where it stops its hardware and
 *	restarts it with airtime_radio_resume_rounds(); airtime_radio_destroy()
 *	stops it too. So no deferral waits for a completion pass that nothing
 *	in flight will bring, nor for a poll of airtime_rounds_waiting() the
 *	driver does not make. Give the op to run them where the driver's data
 *	path runs instead (its NAPI poll or tx work: the ring of that CPU, and
 *	no kworker wake-up)
 * @tx_status_at: optional: tx_status() for a frame that an entry of the
 *	status array given to airtime_tx_complete() finished, with that call's
 *	@cookie and @index, the entry's place in the array as passed (0 to one
 *	less than its entries), so that the driver finds what it read from the
 *	same WBM descriptor beyond the status (ath11k's struct hal_tx_status:
 *	ack_rssi for ack_signal, try_cnt, ppdu_id) in an array it keeps entry
 *	for entry beside the status array, which @cookie points to, instead of
 *	storing it in the skb first (the polls of several WBM rings may run at
 *	once, each with its own arrays). Keep them aligned: a DESC_ERROR entry
 *	the driver adds itself (see @tcl_enqueue) gets a slot too, and a poll
 *	that resumes at status + done passes its side array at + done as well.
 *	Called instead of tx_status() for exactly the frames those entries
 *	finished, once each, in the array's order, within the
 *	airtime_tx_complete() call that took the entry; an entry naming no
 *	outstanding MSDU finishes no frame and gets no call. Frames handed back
 *	otherwise (removals, reaps, destroy) still go to tx_status(). Same
 *	context and rules as tx_status()
 *
 * Every callback up to @txq_peek_len is required; @txq_released and
 * @sta_drained may be NULL (then the driver is not told, and must not free a
 * removed txq before airtime_radio_destroy()); @rounds_deferred is required
 * with AIRTIME_RADIO_GATED_ROUNDS and optional without it (then the module's
 * own work runs the deferred rounds); @tx_status_at
 * may be NULL (then tx_status() gets every frame). @hw is the
 * pointer given in struct airtime_radio_config. Callbacks may run on several CPUs at once (see the
 * locking note above): each locks what it touches, must not sleep and must
 * not call the adapter. txq_released() and sta_drained() run inside the
 * call that reports them (a removal, airtime_radio_reap(),
 * airtime_radio_destroy()): the caller must not hold a lock they take.
 */
struct airtime_hal_ops {
	u32 (*tcl_free)(void *hw, u8 ring);
	int (*tcl_enqueue)(void *hw, u8 ring, const struct airtime_tcl_desc *desc);
	u32 (*msdu_outstanding)(void *hw, u8 ring);
	int (*msdu_insert)(void *hw, u8 ring, const struct airtime_msdu *msdu);
	int (*msdu_take)(void *hw, u8 ring, u32 id, struct airtime_msdu *msdu);
	int (*msdu_take_any)(void *hw, u8 ring, struct airtime_msdu *msdu);
	void (*tx_status)(void *hw, void *frame, u8 status);
	void *(*txq_dequeue)(void *hw, void *txq, u32 *len);
	u32 (*txq_peek_len)(void *hw, void *txq);
	void (*txq_released)(void *hw, void *txq);
	void (*sta_drained)(void *hw, u16 peer_id);
	void (*rounds_deferred)(void *hw, u8 ac_mask);
	void (*tx_status_at)(void *hw, void *cookie, void *frame, u8 status, u32 index);
} __no_randomize_layout;

/**
 * struct airtime_radio_config - how to create a radio
 * @ops: the HAL callbacks; must stay valid until the radio is destroyed
 * @hw: the driver's context (e.g. struct ath11k *), passed to every callback
 * @flags: AIRTIME_RADIO_* flags
 * @tcl_descriptors: descriptors per TCL ring; 0 for ath11k's 512
 * @msdu_capacity: entries per ring's MSDU table; 0 for ath11k's 32767
 * @max_stations: most stations, at most 4096; 0 for 128
 * @max_txqs: most txqs; 0 for 1024. mac80211 gives each station 17 txqs (16
 *	TIDs and the management one): a driver that registers them all sizes
 *	this to max_stations * 17 plus its vifs' (1024 holds 60 such stations),
 *	or registers a station's txqs as their TIDs come into use
 * @turn_frames: with AIRTIME_RADIO_TURN_BUDGET, most frames a txq sends per
 *	turn, 0 for no frame bound; must be 0 without the flag
 * @turn_airtime_us: with AIRTIME_RADIO_TURN_BUDGET, most airtime a txq is
 *	charged per turn, us (the frame that reaches it is sent), 0 for no
 *	airtime bound; must be 0 without the flag
 * @gate_rounds: with AIRTIME_RADIO_GATED_ROUNDS, most rounds one call runs
 *	(at least 1); must be 0 without the flag
 * @max_tx_ring: TCL data rings the hardware has, ath11k's
 *	hw_params.max_tx_ring: 1 to 3 (3 on IPQ8074, IPQ6018 and QCN9074, 1 on
 *	QCA6390 and WCN6855); 0 for 3
 * @reserved: must be 0
 */
struct airtime_radio_config {
	const struct airtime_hal_ops *ops;
	void *hw;
	u32 flags;
	u32 tcl_descriptors;
	u32 msdu_capacity;
	u16 max_stations;
	u16 max_txqs;
	u32 turn_frames;
	u32 turn_airtime_us;
	u32 gate_rounds;
	u8 max_tx_ring;
	u8 reserved[3];
};

/**
 * struct airtime_tx_status - one tx completion the driver read
 * @msdu_id: the MSDU id of the descriptor
 * @ring: the TCL ring it was sent on, 0 to max_tx_ring - 1
 * @status: AIRTIME_TX_*
 * @reserved: must be 0
 */
struct airtime_tx_status {
	u32 msdu_id;
	u8 ring;
	u8 status;
	u16 reserved;
};

/**
 * struct airtime_rate - a PHY rate, for pricing a station's frames
 * @encoding: AIRTIME_RATE_*; AIRTIME_RATE_NONE for unknown
 * @mcs: MCS index (HT 0-31, VHT 0-9, HE 0-11)
 * @nss: spatial streams (VHT, HE), 1-8
 * @bw: 0 for 20, 1 for 40, 2 for 80, 3 for 160 MHz
 * @gi: HT/VHT: 1 for short GI; HE: 0, 1, 2 for 0.8, 1.6, 3.2 us; CCK: 1 for
 *	short preamble
 * @reserved: must be 0
 * @legacy_100kbps: CCK/OFDM bitrate in 100 kbit/s (e.g. 60 for 6 Mbit/s)
 */
struct airtime_rate {
	u8 encoding;
	u8 mcs;
	u8 nss;
	u8 bw;
	u8 gi;
	u8 reserved;
	u16 legacy_100kbps;
};

/**
 * struct airtime_ppdu_user - one user of a transmitted PPDU
 * @peer_id: firmware peer id
 * @tid: TID of its MPDUs, 0-15 (its AC is charged); 16 if the record names
 *	none (ath11k's value without the user's ACK/BA TLV): charged to BE, as
 *	mac80211's ieee80211_sta_register_airtime() puts TID 16, and never a
 *	calibration sample
 * @reserved: must be 0
 * @tx_duration_us: its tx duration; charged only when the PPDU has none
 * @rate: the rate it was sent at (prices its next frames)
 * @msdus: MSDUs of the user acknowledged in this PPDU, 0 if unknown: ath11k's
 *	ACK/BA status TLV, HTT_PPDU_STATS_ACK_BA_INFO_NUM_MSDU_M of its info word
 *	(succ_pkts in ath11k_update_per_peer_tx_stats); read only with
 *	AIRTIME_RADIO_CALIBRATE
 * @reserved2: must be 0
 * @msdu_bytes: their bytes (the same TLV's success_bytes), 0 if unknown
 */
struct airtime_ppdu_user {
	u16 peer_id;
	u8 tid;
	u8 reserved;
	u32 tx_duration_us;
	struct airtime_rate rate;
	u16 msdus;
	u16 reserved2;
	u32 msdu_bytes;
};

/**
 * struct airtime_ppdu_stats - one HTT PPDU stats record
 * @duration_us: the PPDU's duration on the air; each user is charged all of
 *	it (MU); 0 if unknown
 * @n_users: users in @users, 0 to AIRTIME_PPDU_MAX_USERS
 * @users: the users
 */
struct airtime_ppdu_stats {
	u32 duration_us;
	u32 n_users;
	struct airtime_ppdu_user users[AIRTIME_PPDU_MAX_USERS];
};

/**
 * struct airtime_radio_stats - pending airtime and frame counts of a radio
 * @pending_us: pending (charged, not completed) airtime per AC index, us
 * @total_pending_us: their sum, us
 * @outstanding_msdus: MSDUs in the hardware, all rings
 * @held_frames: frames a ring refused after dequeue, kept for the next round
 * @blocked_acs: bit per AC index whose last round ended on a full ring
 */
struct airtime_radio_stats {
	u32 pending_us[AIRTIME_NUM_ACS];
	u32 total_pending_us;
	u32 outstanding_msdus;
	u32 held_frames;
	u32 blocked_acs;
};

/**
 * struct airtime_radio_counters - cumulative data path counters of a radio
 * @enqueued: descriptors the TCL rings accepted, all rings
 * @completions: frames handed back by airtime_tx_complete(), per AIRTIME_TX_*
 * @flushed: frames handed back AIRTIME_TX_REMOVED without a completion (retry
 *	slot frames of removed stations and txqs, frames flushed at destroy)
 * @held_for_retry: frames a ring refused after dequeue, kept for retry
 * @enqueue_failures: enqueues refused (ring or MSDU table full, memory, other)
 * @unknown_msdu: completions naming no outstanding MSDU (ignored)
 * @release_errors: charge releases the scheduler refused or clamped (0)
 * @uncharged: station frames sent without a charge (station removed mid-round)
 * @calib_accepted: PPDU users averaged into their station's calibration
 *	(AIRTIME_RADIO_CALIBRATE; all the @calib_ counters stay 0 without it)
 * @calib_rejected: SU users refused as samples: no rate (also in
 *	@calib_no_rate), no @msdus or @msdu_bytes, or an outlier ratio
 * @calib_busy: samples dropped because another context was feeding the
 *	station's calibration (nothing else is lost)
 * @calib_stale: samples of a station that left its slot meanwhile (dropped)
 * @calib_mu_users: users of MU PPDUs, never samples
 * @calib_no_rate: of @calib_rejected, SU users with AIRTIME_RATE_NONE
 * @rounds_handed_off: with AIRTIME_RADIO_GATED_ROUNDS, round requests handed
 *	to the context running the AC's rounds
 * @rounds_deferred: calls that left round requests waiting: with
 *	AIRTIME_RADIO_GATED_ROUNDS, that spent gate_rounds with requests pending;
 *	with concurrent rounds, whose follow-up rounds ran out (each reported to
 *	the rounds_deferred() op, or without it to the module's rounds work)
 *
 * Conservation: every frame the adapter dequeued is in the rings (@enqueued
 * less the completions), in a retry slot (held_frames of struct
 * airtime_radio_stats), or was handed back to tx_status() (the completions
 * plus @flushed).
 */
struct airtime_radio_counters {
	u64 enqueued;
	u64 completions[6];
	u64 flushed;
	u64 held_for_retry;
	u64 enqueue_failures;
	u64 unknown_msdu;
	u64 release_errors;
	u64 uncharged;
	u64 calib_accepted;
	u64 calib_rejected;
	u64 calib_busy;
	u64 calib_stale;
	u64 calib_mu_users;
	u64 calib_no_rate;
	u64 rounds_handed_off;
	u64 rounds_deferred;
};

/**
 * airtime_radio_create() - create the adapter for one radio
 * @cfg: configuration and HAL callbacks
 * @err: set to the error when NULL is returned; may be NULL
 *
 * The only call that allocates its tables (GFP_KERNEL, so it may sleep in
 * reclaim; GFP_ATOMIC if four other creates run at once, or if the caller
 * cannot sleep after all); call it when the radio is registered
 * (ath11k_mac_register()).
 *
 * Context: Process context, may sleep; may hold the wiphy lock or
 * ar->conf_mutex, no spinlock.
 * Without the rounds_deferred() op (concurrent rounds only), the radio also
 * gets the module's rounds work (see struct airtime_hal_ops), allocated here.
 *
 * Return: the radio, or NULL with *@err = -EINVAL (unknown flag, missing
 * callback, bad sizes, AIRTIME_RADIO_TURN_BUDGET with neither turn bound set,
 * or a turn bound set without it, AIRTIME_RADIO_GATED_ROUNDS with gate_rounds
 * outside 1 to AIRTIME_GATE_ROUNDS_MAX or no rounds_deferred() op,
 * gate_rounds set without it, max_tx_ring above 3, reserved not 0), -ENOMEM
 * or -EFAULT (@cfg NULL).
 */
struct airtime_radio *airtime_radio_create(const struct airtime_radio_config *cfg, int *err);

/**
 * airtime_radio_destroy() - destroy a radio
 * @radio: the radio; not usable afterwards
 *
 * First, for a radio created without the rounds_deferred() op, the module's
 * rounds work is stopped for good, as airtime_radio_quiesce() stops it
 * (a backstop: the driver should have quiesced it where it stopped its
 * hardware); only then is anything it touches taken apart. Every frame still in the MSDU tables or the retry slots is handed back
 * with tx_status(AIRTIME_TX_REMOVED) and its charge released; every txq still
 * registered goes to txq_released(), and every station, removed or still
 * present (destroy removes it), to sta_drained(); then the memory is freed.
 * The driver frees its txqs' own frames (in txq_released(), or afterwards).
 * A driver that deletes firmware peers in sta_drained() skips that here if
 * the firmware is gone (after a crash) or deletes them anyway at teardown.
 *
 * Context: Process context, may sleep (might_sleep(), for every radio),
 * after the data path is stopped: mac80211 no longer
 * calls wake_tx_queue (the hw unregistered), NAPI disabled, the hardware's DMA
 * stopped (frames still in the tables are handed back for the driver to free),
 * the driver's own work that rounds_deferred() or a reap scheduled cancelled
 * (cancel_work_sync()), the module's rounds work quiesced
 * (airtime_radio_quiesce(); destroy stops it too, as a backstop), and the debugfs files that read the radio removed: no
 * other call on @radio may run during this one, or start after it began (the
 * module's own rounds work is the one caller destroy stops itself). Every
 * radio must be destroyed before this module is unloaded. After a firmware crash
 * (SSR), whose completions never come, destroy the radio and create it again:
 * its pending airtime would otherwise never return to 0.
 * Return: the frames handed back, or -EFAULT if @radio is NULL.
 */
int airtime_radio_destroy(struct airtime_radio *radio);

/**
 * airtime_radio_quiesce() - stop the module's rounds work of a radio
 * @radio: the radio
 *
 * For a radio created without the rounds_deferred() op: a queued run of the
 * module's rounds work is cancelled and a running one waited for
 * (cancel_delayed_work_sync()); when this returns no run is queued or
 * running, and none starts until airtime_radio_resume_rounds(), however many
 * deferrals come meanwhile (they wait in airtime_rounds_waiting()). So no HAL
 * callback runs from the module's work after it returns. Call it where the
 * driver cancels its own work before its hardware goes away: ath11k before
 * ath11k_dp_free() and in its firmware-crash reset path (before the rings
 * are reset; then destroy the radio and create it again), and in its
 * suspend path (the module's workqueue is freezable, but a driver's suspend
 * also stops the hardware outside the system freeze, e.g. in
 * ath11k_core_suspend()). Idempotent; nothing for a radio with the op (the
 * driver stops its own work).
 *
 * Not counted: quiesce twice (ath11k's suspend and its reset path are
 * separate) and one airtime_radio_resume_rounds() resumes. The module's
 * workqueue is freezable: between the system freeze and thaw a deferral
 * waits (for the thaw) even on a radio not quiesced, a TX stall bounded by
 * the suspend itself.
 *
 * Context: Process context, may sleep (might_sleep(), for every radio); not
 * at once with airtime_radio_resume_rounds(), airtime_radio_check_idle() or
 * airtime_radio_destroy() on @radio (the driver's control paths are
 * serialised, e.g. by ar->conf_mutex). Every other call (the data path) may
 * run meanwhile.
 * Return: 0, or -EFAULT if @radio is NULL.
 */
int airtime_radio_quiesce(struct airtime_radio *radio);

/**
 * airtime_radio_resume_rounds() - undo airtime_radio_quiesce()
 * @radio: the radio
 *
 * Deferrals queue the module's rounds work again; if rounds wait
 * (airtime_rounds_waiting() non-zero) it is queued at once to run them. One
 * call undoes any number of quiesces (they are not counted). Nothing for a
 * radio with the rounds_deferred() op; on a radio not quiesced it at most
 * queues the work when rounds wait, which is harmless (the work runs them, as
 * a deferral's kick would have). Call it once the hardware runs again
 * (ath11k's resume path, after ath11k_core_resume()), and also after a
 * suspend that failed or was aborted after the quiesce: until then the
 * radio's deferred rounds wait.
 *
 * Context: Process context (does not sleep); as airtime_radio_quiesce().
 * Return: 0, or -EFAULT if @radio is NULL.
 */
int airtime_radio_resume_rounds(struct airtime_radio *radio);

/**
 * airtime_sta_add() - add a station
 * @radio: the radio
 * @peer_id: its firmware peer id
 * @weight: its airtime weight, 1-65535 (mac80211's default 256)
 *
 * A peer id is free again as soon as airtime_sta_remove() returns, before the
 * station it named has drained: a later sta_drained(@peer_id) names the
 * removed station, not one added since with the same id. A driver that
 * deletes the firmware peer in sta_drained() waits for it before adding the
 * id again.
 *
 * Context: Process context (mac80211 sta_state); no radio lock, but two adds
 * of one @peer_id must not race (mac80211's wiphy lock serialises
 * sta_state): the later one waits, spinning, for the earlier one's claim
 * on the id, so never from softirq.
 * Return: 0; -EINVAL for weight 0; -EEXIST if @peer_id is in use; -ENOSPC
 * if the radio has max_stations stations; -EBUSY if it has room only in slots
 * whose removed stations still have frames in the hardware (try again after
 * their sta_drained()); -ENOENT, a transient while another CPU still takes
 * down the slot's previous station: try again.
 */
int airtime_sta_add(struct airtime_radio *radio, u16 peer_id, u16 weight);

/**
 * airtime_sta_remove() - remove a station and its txqs
 * @radio: the radio
 * @peer_id: its firmware peer id
 *
 * A frame of the station waiting in a retry slot is handed back with
 * AIRTIME_TX_REMOVED; frames in the hardware complete normally. Each of its
 * txqs goes to txq_released() here, or from a later airtime_radio_reap() if
 * another CPU is serving it right now; the station goes to sta_drained() here
 * if none of its frames is in the hardware, else from a reap once they have
 * all completed.
 *
 * A CPU serving one of its txqs at this call may still call txq_dequeue() and
 * txq_peek_len() on it until its turn ends, so the txq must outlive its
 * txq_released(). mac80211 frees a station's txqs (and their drv_priv) as
 * soon as sta_state() to NOTEXIST returns, so a driver counts the station's
 * txqs itself (one per airtime_txq_add() that succeeded; txq_released() ends
 * with atomic_dec_return_release(), its last touch of the txq and the
 * station) and, if the count is not 0 after this call, waits in sta_state(),
 * calling airtime_radio_reap() and usleep_range() until atomic_read_acquire()
 * reads 0. The return value tells whether to wait at all. The wait is one
 * turn of the serving CPU: a turn sends at most what its ring takes.
 *
 * Context: Process context; no radio lock.
 * Return: the station's txqs not handed back yet (0: each one's txq_released()
 * has returned), or -ENOENT for an unknown peer.
 */
int airtime_sta_remove(struct airtime_radio *radio, u16 peer_id);

/**
 * airtime_txq_add() - register a station's txq
 * @radio: the radio
 * @peer_id: the station
 * @tid: its TID, 0-15 (16 for the management queue)
 * @txq: the driver's txq (struct ieee80211_txq *), passed to txq_dequeue()
 *	and txq_peek_len(); must stay valid until txq_released() hands it
 *	back (or, without that callback, until airtime_radio_destroy()): a CPU
 *	serving it when airtime_sta_remove() runs may still call txq_dequeue()
 *	on it after that returns (see there for mac80211's txq lifetime)
 *
 * A txq is registered empty of rounds: if it already holds frames (the
 * driver added it late), airtime_txq_wake() it afterwards.
 *
 * Context: Process context; no radio lock.
 * Return: 0; -ENOENT for an unknown peer, or for one another CPU removed
 * during the call: then txq_released() may or may not hand @txq back later,
 * depending on how far the add had got, so a driver must not race
 * airtime_sta_remove() against this call for the same station (mac80211's
 * sta_state calls for one station never race); -EEXIST if the TID has a txq; -EINVAL for a bad TID; -ENOSPC if the radio has max_txqs txqs;
 * -EBUSY if its only free slots hold removed txqs not yet handed back
 * (a CPU still serves one, or its txq_released() has not run yet: try again
 * once it has);
 * -EFAULT if @txq is NULL.
 */
int airtime_txq_add(struct airtime_radio *radio, u16 peer_id, u8 tid, void *txq);

/**
 * airtime_mcast_txq_add() - register a station-less txq
 * @radio: the radio
 * @tid: its TID, 0-15 (16 for the vif's management queue); picks its AC
 * @txq: the driver's txq (the vif's multicast struct ieee80211_txq *), passed
 *	to txq_dequeue() and txq_peek_len(); must stay valid until
 *	txq_released() hands it back (or, without that callback, until
 *	airtime_radio_destroy()): a CPU serving it when
 *	airtime_mcast_txq_remove() runs may still dequeue from it afterwards
 * @handle: set to the txq's handle on success (a station-less txq has no peer
 *	id to name it by); a stale handle is refused, never aliased
 *
 * Its frames are scheduled in the AC's rounds like a station's and never
 * count against a station's AQL limits or the radio's pending airtime. They
 * go out uncharged until airtime_set_multicast_rate() gives them a price;
 * from then on each is charged to its AC's multicast budget
 * (airtime_set_multicast_limit_us(), airtime_multicast_pending_us()), which
 * stops the AC's station-less txqs once reached while AQL is on.
 *
 * Context: Process context; no radio lock.
 * Return: 0; -EINVAL for a bad TID; -ENOSPC if the radio has max_txqs txqs;
 * -EBUSY if its only free slots hold removed txqs not yet handed back (as
 * for airtime_txq_add());
 * -EFAULT if @txq or @handle is NULL.
 */
int airtime_mcast_txq_add(struct airtime_radio *radio, u8 tid, void *txq, u64 *handle);

/**
 * airtime_mcast_txq_wake() - a station-less txq has frames: run a round on its AC
 * @radio: the radio
 * @handle: from airtime_mcast_txq_add()
 * @cpu: the sending CPU; picks TCL ring @cpu % max_tx_ring
 * @now_us: monotonic time in us
 *
 * Context: Process context or softirq, BHs disabled; no radio lock.
 * Return: the frames pushed (with AIRTIME_RADIO_GATED_ROUNDS, 0 when another
 * context runs the AC's rounds and sends them); -ENOENT for a handle naming
 * no station-less txq.
 */
int airtime_mcast_txq_wake(struct airtime_radio *radio, u64 handle, u32 cpu, u64 now_us);

/**
 * airtime_mcast_txq_remove() - remove a station-less txq
 * @radio: the radio
 * @handle: from airtime_mcast_txq_add()
 *
 * A frame of it waiting in a retry slot is handed back AIRTIME_TX_REMOVED;
 * frames in the hardware complete normally. The txq goes to txq_released()
 * here or from a later airtime_radio_reap(), where the driver purges it; with
 * a return of 1, wait for it as airtime_sta_remove() says before mac80211
 * frees the vif (remove_interface()).
 *
 * Context: Process context; no radio lock.
 * Return: 1 if the txq is not handed back yet (another CPU serves it), 0 if
 * its txq_released() has returned; -ENOENT for a handle naming no
 * station-less txq.
 */
int airtime_mcast_txq_remove(struct airtime_radio *radio, u64 handle);

/**
 * airtime_radio_reap() - take back removed txqs and drained stations
 * @radio: the radio
 *
 * Hands each removed txq that no CPU serves any more to txq_released() (its
 * retry-slot frame goes to tx_status() AIRTIME_TX_REMOVED first, its charge
 * released; the frames still in the txq stay there for the driver), and each removed station whose
 * frames have all completed to sta_drained(). Each is reported once, even
 * with two reaps at once. The removal calls reap too; call this from a work
 * item or after a NAPI poll so that a txq removed while another CPU served it,
 * and a station removed with frames in the hardware, come back soon. Without
 * it they come back at airtime_radio_destroy().
 *
 * Context: Process context or softirq (any context but hard IRQ); no radio
 * lock; the callbacks run in the caller's context.
 * Return: the txqs and stations reported (0 if none); -EFAULT if @radio is NULL.
 */
int airtime_radio_reap(struct airtime_radio *radio);

/**
 * airtime_set_multicast_rate() - price station-less frames and budget them
 * @radio: the radio
 * @rate: the rate station-less (multicast) frames are priced at, mainline's
 *	lowest basic rate of the vif (e.g. OFDM 6 Mbit/s); NULL: uncharged
 *
 * With a rate, each frame of a station-less txq is charged to its AC's
 * multicast budget (airtime_set_multicast_limit_us()), which bounds the
 * multicast airtime in flight while AQL is on, apart from the stations'
 * pending airtime; without one (the default) they go out uncharged.
 *
 * Context: Any context but hard IRQ; no radio lock.
 * Return: 0; -EINVAL for a bad rate or AIRTIME_RATE_NONE; -EFAULT.
 */
int airtime_set_multicast_rate(struct airtime_radio *radio, const struct airtime_rate *rate);

/**
 * airtime_set_multicast_limit_us() - set one AC's multicast AQL budget
 * @radio: the radio
 * @ac: AIRTIME_AC_*
 * @limit_us: multicast airtime in flight on @ac at which its station-less txqs
 *	stop (the frame that reaches it is sent); default 50000 us, whatever
 *	the vif's beacon interval (the multicast AQL patches' default, half of
 *	100 TU; their aql_txq_limit "mcast" line)
 *
 * Context: Process context (debugfs write); no radio lock.
 * Return: 0; -EINVAL for a bad AC; -EFAULT.
 */
int airtime_set_multicast_limit_us(struct airtime_radio *radio, u8 ac, u32 limit_us);

/**
 * airtime_multicast_pending_us() - one AC's multicast airtime in flight
 * @radio: the radio
 * @ac: AIRTIME_AC_*
 * @pending_us: set to the charged, not yet completed multicast airtime, us
 *
 * Context: Any context but hard IRQ; no radio lock.
 * Return: 0; -EINVAL for a bad AC; -EFAULT for a NULL argument.
 */
int airtime_multicast_pending_us(struct airtime_radio *radio, u8 ac, u32 *pending_us);

/**
 * airtime_txq_aql_pending_us() - the airtime in flight that limits a txq
 * @radio: the radio
 * @peer_id: the station
 * @tid: the txq's TID
 * @pending_us: set to the station's pending airtime on the txq's AC (shared by
 *	its TIDs of that AC), 0 for TID 16 (never limited), us
 *
 * mainline's ieee80211_txq_aql_pending(), for a driver that bounds its own
 * buffering (e.g. frames it pulls ahead into the firmware) by it.
 *
 * Context: Any context but hard IRQ; no radio lock.
 * Return: 0; -ENOENT for an unknown peer or txq; -EINVAL for a bad TID; -EFAULT.
 */
int airtime_txq_aql_pending_us(struct airtime_radio *radio, u16 peer_id, u8 tid, u32 *pending_us);

/**
 * airtime_mcast_txq_aql_pending_us() - the airtime in flight that limits a
 *	station-less txq
 * @radio: the radio
 * @handle: from airtime_mcast_txq_add()
 * @pending_us: set to its AC's multicast airtime in flight, us
 *
 * Context: Any context but hard IRQ; no radio lock.
 * Return: 0; -ENOENT for a handle naming no station-less txq; -EFAULT.
 */
int airtime_mcast_txq_aql_pending_us(struct airtime_radio *radio, u64 handle, u32 *pending_us);

/**
 * airtime_sta_set_weight() - set a station's airtime weight
 * @radio: the radio
 * @peer_id: the station
 * @weight: 1-65535; with AIRTIME_RADIO_TX_NO_PUSHBACK its AQL limits scale
 *	by @weight / 256
 *
 * Context: Process context; no radio lock.
 * Return: 0; -EINVAL for weight 0; -ENOENT for an unknown peer.
 */
int airtime_sta_set_weight(struct airtime_radio *radio, u16 peer_id, u16 weight);

/**
 * airtime_sta_set_aql_limits() - set a station's AQL limits on one AC
 * @radio: the radio
 * @peer_id: the station
 * @ac: AIRTIME_AC_*
 * @low_us: low limit, always allowed
 * @high_us: high limit, allowed while the radio is below its threshold
 *
 * Context: Process context; no radio lock.
 * Return: 0; -EINVAL for a bad AC or @low_us > @high_us; -ENOENT for an
 * unknown peer.
 */
int airtime_sta_set_aql_limits(struct airtime_radio *radio, u16 peer_id, u8 ac, u32 low_us, u32 high_us);

/**
 * airtime_set_aql_limits() - set the radio's default AQL limits on one AC
 * @radio: the radio
 * @ac: AIRTIME_AC_*
 * @low_us: low limit (default 5000 us on every AC, mac80211's)
 * @high_us: high limit (default 12000 us on every AC)
 *
 * Context: Process context; no radio lock.
 * Return: 0, or -EINVAL for a bad AC or @low_us > @high_us.
 */
int airtime_set_aql_limits(struct airtime_radio *radio, u8 ac, u32 low_us, u32 high_us);

/**
 * airtime_set_aql_threshold() - set the radio's AQL threshold
 * @radio: the radio
 * @threshold_us: below this much pending airtime on the radio, stations may
 *	use their high limit (mac80211's aql_threshold, default 24000)
 *
 * Context: Process context; no radio lock.
 * Return: 0, or -EFAULT if @radio is NULL.
 */
int airtime_set_aql_threshold(struct airtime_radio *radio, u32 threshold_us);

/**
 * airtime_txq_wake() - a station's txq has frames: run a round on its AC
 * @radio: the radio
 * @peer_id: the station
 * @tid: the txq's TID
 * @cpu: the sending CPU (smp_processor_id()); picks TCL ring @cpu % max_tx_ring
 * @now_us: monotonic time in us (ktime_get_ns() / 1000)
 *
 * mac80211's wake_tx_queue: dequeues through txq_dequeue() and pushes into
 * the rings until AQL, the airtime scheduler or the ring stops the round.
 *
 * Context: Process context or softirq, BHs disabled; no radio lock.
 * Return: the frames pushed (with AIRTIME_RADIO_GATED_ROUNDS, 0 when another
 * context runs the AC's rounds and sends them); -ENOENT for an unknown peer or
 * txq; -EINVAL for a bad TID.
 */
int airtime_txq_wake(struct airtime_radio *radio, u16 peer_id, u8 tid, u32 cpu, u64 now_us);

/**
 * airtime_tx_complete() - the tx completion NAPI poll, over a batch
 * @radio: the radio
 * @status: completions the driver read from the WBM ring, in order
 * @n: entries in @status
 * @budget: the NAPI budget: at most this many are processed
 * @cpu: the polling CPU (picks the ring of the rounds it starts)
 * @now_us: monotonic time in us
 * @cookie: the driver's pointer for this call (its per-descriptor data beside
 *	@status, say), handed to tx_status_at() with each frame and never read;
 *	may be NULL
 *
 * Each processed entry releases its frame's charge whatever its status and
 * hands the frame to tx_status_at() with @cookie and the entry's index in
 * @status, or to tx_status() without that op (an entry naming no outstanding
 * MSDU is counted and finishes nothing); then one round runs on each AC
 * reaped (with AIRTIME_RADIO_GATED_ROUNDS, also on each AC whose round
 * requests wait, and a round may be handed to the context running the AC's
 * rounds).
 * The entries after the first @budget are left for the next poll. Nothing of
 * the pass is kept in the radio: the polls of several WBM rings may run at once
 * on one radio, each with its own array.
 *
 * Context: Softirq (NAPI); no radio lock.
 * Return: the entries processed (the NAPI work done, at most @budget);
 * -EINVAL, with nothing processed, if any of the @n entries (not only the
 * first @budget) names no ring or status or has @reserved set: the entries
 * are the driver's own translation of its WBM descriptors, so a bad one is
 * a driver bug, refused before anything is done; -EFAULT if @status is NULL
 * and @n is not 0.
 */
int airtime_tx_complete(struct airtime_radio *radio, const struct airtime_tx_status *status, u32 n, u32 budget,
			u32 cpu, u64 now_us, void *cookie);

/**
 * airtime_rounds_waiting() - ACs whose round requests wait for a runner
 * @radio: the radio
 *
 * The ACs on which round requests wait with no context running them: with
 * AIRTIME_RADIO_GATED_ROUNDS, a runner spent its gate_rounds with requests
 * pending; with concurrent rounds, rarely, a round that overlapped other
 * contexts' rounds ran out of its follow-up rounds (or of its re-reads of a
 * ring being freed); and no call has run a round there since. The
 * rounds_deferred() op, if set, announces each; without it (concurrent rounds
 * only) the module's rounds work runs them, soon after the deferral, with
 * nothing for the driver to do (see struct airtime_hal_ops). This is the
 * state itself, for a driver that checks before it completes its work (a
 * NAPI poll that reaped nothing, a tx timer) and then calls
 * airtime_run_waiting_rounds(); a driver without the op need not poll it.
 *
 * Context: Any; no radio lock.
 * Return: bit AIRTIME_AC_* per waiting AC; -EFAULT if @radio is NULL.
 */
int airtime_rounds_waiting(struct airtime_radio *radio);

/**
 * airtime_run_waiting_rounds() - serve the round requests that wait
 * @radio: the radio
 * @cpu: the calling CPU (picks the ring of the rounds)
 * @now_us: monotonic time in us
 *
 * Runs a round, through the gate, on each AC airtime_rounds_waiting() names:
 * the first round of each serves what waited. Call it from the work the
 * rounds_deferred() op scheduled; if its own rounds are left at the budget
 * again, the op is called again. For a radio without the op, a deferral of
 * these rounds queues the module's rounds work in the op's place (whose own
 * runs use airtime_rounds_work_run(), which is this call without the kick).
 *
 * Context: Process context or softirq, BHs disabled; no radio lock: it may
 * run at once with any other call but airtime_radio_destroy() and
 * airtime_radio_check_idle(), the quiesce and resume calls and the module's
 * rounds work included.
 * Return: the frames pushed; -EFAULT if @radio is NULL.
 */
int airtime_run_waiting_rounds(struct airtime_radio *radio, u32 cpu, u64 now_us);

/**
 * airtime_run_rounds() - run a round on some ACs, without a wake
 * @radio: the radio
 * @ac_mask: the ACs, bit AIRTIME_AC_* each
 * @cpu: the calling CPU (picks the ring of the rounds)
 * @now_us: monotonic time in us
 *
 * What a driver's tx timer, resume or queue-restart path calls (mt76's and
 * ath10k's "schedule all ACs"): frames kept in retry slots, or left when a
 * round met a full ring, go out though no new frame wakes their txq. Rounds
 * go through the gate with AIRTIME_RADIO_GATED_ROUNDS.
 *
 * Context: Process context or softirq, BHs disabled; no radio lock.
 * Return: the frames pushed; -EINVAL for a bit above AIRTIME_AC_BK; -EFAULT.
 */
int airtime_run_rounds(struct airtime_radio *radio, u8 ac_mask, u32 cpu, u64 now_us);

/**
 * airtime_set_aql_enabled() - turn the AQL checks on or off
 * @radio: the radio
 * @on: true to check the limits (the default unless AIRTIME_RADIO_AQL_DISABLED)
 *
 * mac80211's aql_enable debugfs switch, per radio. Charges are counted while
 * the checks are off, so turning them on again with frames in flight keeps
 * the pending airtime exact (mac80211's static key underflowed there).
 *
 * Context: Any but hard IRQ; no radio lock.
 * Return: 0; -EFAULT if @radio is NULL.
 */
int airtime_set_aql_enabled(struct airtime_radio *radio, bool on);

/**
 * airtime_ppdu_tx_stats() - one HTT PPDU stats record
 * @radio: the radio
 * @ppdu: the record; every user is charged the PPDU's whole duration (MU)
 * @now_us: monotonic time in us
 *
 * Users naming no known peer are skipped and counted.
 *
 * Context: Softirq; no radio lock.
 * Return: the users charged; -EINVAL, with nothing done, for a bad user
 * count, a TID above 16 or a bad rate; -EFAULT if @ppdu is NULL.
 */
int airtime_ppdu_tx_stats(struct airtime_radio *radio, const struct airtime_ppdu_stats *ppdu, u64 now_us);

/**
 * airtime_rx_duration() - received airtime of one PPDU
 * @radio: the radio
 * @peer_id: the sender
 * @duration_us: its duration on the air (charged to the station's BE deficit)
 * @rate: the rate it was received at, or NULL
 * @now_us: monotonic time in us
 *
 * Context: Softirq (rx monitor status), after ab->base_lock is dropped,
 * no radio lock.
 * Return: 0; -ENOENT for an unknown peer; -EINVAL for a bad rate.
 */
int airtime_rx_duration(struct airtime_radio *radio, u16 peer_id, u32 duration_us,
			const struct airtime_rate *rate, u64 now_us);

/**
 * airtime_radio_get_stats() - pending airtime and frame counts
 * @radio: the radio
 * @stats: filled on success
 *
 * Context: Any context except hard IRQ; no radio lock.
 * Return: 0, or -EFAULT for a NULL argument.
 */
int airtime_radio_get_stats(struct airtime_radio *radio, struct airtime_radio_stats *stats);

/**
 * airtime_radio_get_counters() - cumulative data path counters
 * @radio: the radio
 * @counters: filled on success
 *
 * Context: Any context except hard IRQ; no radio lock.
 * Return: 0, or -EFAULT for a NULL argument.
 */
int airtime_radio_get_counters(struct airtime_radio *radio, struct airtime_radio_counters *counters);

/**
 * airtime_radio_check() - check the invariants that hold at every instant
 * @radio: the radio
 *
 * The scheduler's checks that are exact while the radio runs, safe beside the
 * wake and completion contexts: no AC has an open round numbered 0; every
 * txq's state word is a combination the operations write (a txq marked
 * orphaned only while it is live and marked listed on its AC; woken only
 * while a context serves it; never both being set up and live); every station
 * slot has low limits not above its high ones and a nonzero weight; and the
 * per-AC AQL words of each live or removed station count for that station's
 * generation (a slot reused meanwhile is skipped). It does not walk the AC
 * lists (a txq listed twice, or listed without its mark), nor compare pending
 * airtime with the stations' sum: those are exact only at rest
 * (airtime_radio_check_idle()). One read of each txq and station slot,
 * O(max_txqs + max_stations); no allocation, no lock.
 *
 * Context: Any context but hard IRQ; no lock needed.
 * Return: 0; -EUCLEAN if an invariant does not hold; -EFAULT.
 */
int airtime_radio_check(struct airtime_radio *radio);

/**
 * airtime_radio_check_idle() - check every invariant, exactly, at rest
 * @radio: the radio
 *
 * With no other call on @radio running (both contexts stopped), the
 * scheduler's exact check: pending airtime per AC equal to the sum over its
 * stations; each AC's list holding each txq at most once and exactly the txqs
 * marked listed on that AC, and its listed count matching; no open round
 * numbered 0; no txq held, woken or being set up, and orphan marks only on
 * live listed txqs; each station slot's AQL words open exactly while it has a
 * live occupant (closed and empty when free) and, like its deficit, airtime
 * counters and activity stamp, tagged for that occupant; no control write in
 * flight; the limits and weight of each live station valid. Then the txq
 * table's: no txq held by an enqueue or its queue locked, and each intake's
 * count equal to the frames in it. Then the adapter's own: no station or
 * multicast airtime pending when no frame is in the hardware or a retry slot.
 * O(max_txqs + max_stations + frames waiting in the intakes), with no
 * allocation (its scratch table is allocated at create): for debugfs and
 * self-tests, not the data path.
 *
 * The module's rounds work (a radio without the rounds_deferred() op), which
 * the driver does not control, is held for the check: a running one is
 * waited for and a queued one cancelled, as airtime_radio_quiesce() does;
 * afterwards, unless the driver quiesced the radio, it is queued again if
 * rounds wait. So the caller need not quiesce it first.
 *
 * Context: Process context, may sleep (the module's rounds work;
 * might_sleep() for every radio), the
 * driver's own callers stopped: no other call on @radio may run meanwhile.
 * Return: 0; -EUCLEAN if an invariant does not hold; -EFAULT.
 */
int airtime_radio_check_idle(struct airtime_radio *radio);

/**
 * airtime_debugfs_aql() - the text of a station's aql debugfs file
 * @radio: the radio
 * @peer_id: the station
 * @buf: buffer for the text, NUL-terminated
 * @len: size of @buf (256 bytes is enough)
 *
 * Context: Process context (debugfs read); no radio lock.
 * Return: the text's length; -ENOENT for an unknown peer; -ENOSPC if @len
 * is too small (@buf then holds a terminated prefix); -EFAULT.
 */
int airtime_debugfs_aql(struct airtime_radio *radio, u16 peer_id, char *buf, size_t len);

/**
 * airtime_debugfs_airtime() - the text of a station's airtime debugfs file
 * @radio: the radio
 * @peer_id: the station
 * @buf: buffer for the text, NUL-terminated
 * @len: size of @buf (256 bytes is enough)
 *
 * Context: Process context (debugfs read); no radio lock.
 * Return: as airtime_debugfs_aql().
 */
int airtime_debugfs_airtime(struct airtime_radio *radio, u16 peer_id, char *buf, size_t len);

/**
 * airtime_debugfs_dp_stats() - the text of the radio's soc_dp_stats file
 * @radio: the radio
 * @buf: buffer for the text, NUL-terminated
 * @len: size of @buf (1024 bytes is enough)
 *
 * Context: Process context (debugfs read); no radio lock.
 * Return: the text's length; -ENOSPC if @len is too small; -EFAULT.
 */
int airtime_debugfs_dp_stats(struct airtime_radio *radio, char *buf, size_t len);

/* ---- Imported by the Rust object (implemented in airtime_shim.c) ------- */

/**
 * airtime_kmalloc() - kmalloc() for the Rust global allocator
 * @size: bytes to allocate, non-zero
 *
 * Uses GFP_ATOMIC | __GFP_NOWARN: the adapter's data path runs in softirq
 * (NAPI) context and must not sleep, and allocation failures are reported by
 * the Rust side. Between airtime_alloc_may_sleep_begin() and _end(), the task
 * that began (and only it, in task context, with no lock, BH, IRQ or RCU
 * read-side section making it atomic) allocates with GFP_KERNEL |
 * __GFP_RETRY_MAYFAIL | __GFP_NOWARN: airtime_radio_create() does, so that
 * its tables are found by reclaim and compaction rather than the atomic
 * reserves, and a failure is still -ENOMEM.
 *
 * Context: Any context except hard IRQ and NMI.
 * Return: the object, aligned to AIRTIME_KMALLOC_MIN_ALIGN and, for a
 * power-of-two @size, to @size; NULL on failure.
 */
void *airtime_kmalloc(size_t size);

/**
 * airtime_kzalloc() - kzalloc() for the Rust global allocator
 * @size: bytes to allocate, non-zero
 *
 * Like airtime_kmalloc(), and the object is zero-filled.
 *
 * Context: Any context except hard IRQ and NMI.
 * Return: the zeroed object, or NULL on failure.
 */
void *airtime_kzalloc(size_t size);

/**
 * airtime_krealloc() - krealloc() for the Rust global allocator
 * @ptr: object from airtime_kmalloc(), airtime_kzalloc() or
 *	airtime_krealloc()
 * @size: new size in bytes, non-zero
 *
 * Context: Any context except hard IRQ and NMI.
 * Return: the resized object, with the contents of @ptr up to the smaller
 * size, aligned to AIRTIME_KMALLOC_MIN_ALIGN; NULL on failure, in which case
 * @ptr is left allocated and unchanged.
 */
void *airtime_krealloc(void *ptr, size_t size);

/**
 * airtime_alloc_may_sleep_begin() - let this task's allocations sleep
 *
 * Until airtime_alloc_may_sleep_end(), airtime_kmalloc() and its siblings
 * called by this task where it could sleep use GFP_KERNEL (see
 * airtime_kmalloc()). Up to four tasks at once, for radios probed at once.
 *
 * Context: Process context, may sleep.
 * Return: true if this call began the mode (call _end()); false if this task
 * already has it (a nested call: the outer one ends it) or four other tasks
 * do (this one's allocations stay atomic).
 */
bool airtime_alloc_may_sleep_begin(void);

/**
 * airtime_alloc_may_sleep_end() - end what airtime_alloc_may_sleep_begin()
 *	returning true began
 *
 * Also called by airtime_rust_panic(): after a panic no Rust scope ends it.
 *
 * Context: The task that began.
 */
void airtime_alloc_may_sleep_end(void);

/**
 * airtime_alloc_sleeping_count() - allocations made with GFP_KERNEL so far
 *
 * For the self-test, which checks that a create's allocations were.
 *
 * Context: Any context.
 * Return: the count since the module was loaded.
 */
long airtime_alloc_sleeping_count(void);

/*
 * The work item that runs a concurrent radio's deferred rounds when its
 * driver gave no rounds_deferred() op (struct airtime_hal_ops): opaque to
 * the Rust object, which owns one per such radio.
 */
struct airtime_rounds_work;

/**
 * airtime_rounds_work_alloc() - allocate a radio's rounds work
 *
 * Allocates with airtime_kmalloc()'s flags (GFP_KERNEL inside a create that
 * may sleep) and initialises the delayed work, which runs, on the module's
 * workqueue, with BHs disabled: airtime_rounds_work_run(radio,
 * smp_processor_id(), ktime_get_ns() / 1000, &deferred), then queues itself
 * again if deferred (after progress at the next tick; after a backoff, up
 * to AIRTIME_WORK_BACKOFF_MAX_MS, without; a kick cuts either wait to 0). Not queued before
 * airtime_rounds_work_bind(). Kept on the module's list of works until
 * airtime_rounds_work_free(), so that module exit can stop a leaked radio's
 * (the list's lock is a spinlock: no sleep beyond the allocation's flags).
 *
 * Context: airtime_radio_create()'s: process context, or atomic if its
 * caller cannot sleep after all (then GFP_ATOMIC).
 * Return: the work, or NULL if out of memory.
 */
struct airtime_rounds_work *airtime_rounds_work_alloc(void);

/**
 * airtime_rounds_work_bind() - name the radio the work serves
 * @w: from airtime_rounds_work_alloc()
 * @radio: the radio that owns @w
 *
 * Called once, by airtime_radio_create() before it returns @radio.
 *
 * Context: Process context.
 */
void airtime_rounds_work_bind(struct airtime_rounds_work *w, struct airtime_radio *radio);

/* Hold bits of airtime_rounds_work_hold() (ffi::WORK_* in Rust). */
#define AIRTIME_WORK_QUIESCED	(1U << 0)	/* airtime_radio_quiesce() */
#define AIRTIME_WORK_CHECKING	(1U << 1)	/* airtime_radio_check_idle() */
#define AIRTIME_WORK_DESTROYED	(1U << 2)	/* airtime_radio_destroy(), for good */

/*
 * The longest wait, in ms, between two runs of a rounds work whose runs push
 * nothing and are deferred again (it doubles from 1 jiffy up to this; at
 * least 1 jiffy). A new deferral cuts the wait short.
 */
#define AIRTIME_WORK_BACKOFF_MAX_MS	100

/**
 * airtime_rounds_work_kick() - a new deferral: run the work at once
 * @w: a bound work
 *
 * What the radio does in place of the rounds_deferred() op, under the work's
 * lock, unless a hold bit is set (then the deferral waits in
 * airtime_rounds_waiting()): mod_delayed_work() with no delay if the work's
 * timer is armed (a backoff or the 1-jiffy wait after progress: cut to 0),
 * else queue_delayed_work() with no delay (a work already on the worklist
 * stays where it is). A work running is queued again. Warns once if
 * AIRTIME_WORK_DESTROYED is set (a call racing with destroy).
 *
 * Context: Any but hard IRQ and NMI: the context of the call whose rounds
 * were deferred. Takes the work's raw spinlock and the workqueue's pool lock
 * (raw too, so PREEMPT_RT callers with IRQs off may kick).
 */
void airtime_rounds_work_kick(struct airtime_rounds_work *w);

/**
 * airtime_rounds_work_hold() - stop the work until released
 * @w: the work
 * @why: AIRTIME_WORK_* bits to set
 *
 * Sets @why under the work's lock (no kick and no run queues it from then
 * on), then cancel_delayed_work_sync(): on return no run is queued or
 * running.
 *
 * Context: Process context, may sleep.
 */
void airtime_rounds_work_hold(struct airtime_rounds_work *w, unsigned int why);

/**
 * airtime_rounds_work_release() - clear hold bits, and run the rounds that
 *	waited
 * @w: the work
 * @why: AIRTIME_WORK_* bits to clear
 *
 * Clears @why under the work's lock; if no hold bit is left, then reads
 * airtime_rounds_waiting() and kicks the work if rounds wait. In that order:
 * a deferral while held only marked its ACs (the read sees them), one after
 * the release kicks the work itself.
 *
 * Context: Process context (airtime_radio_resume_rounds(),
 * airtime_radio_check_idle()), not at once with another release or hold of @w.
 */
void airtime_rounds_work_release(struct airtime_rounds_work *w, unsigned int why);

/**
 * airtime_rounds_work_set_window() - a call between a release's two steps
 * @radio: the radio whose work it is for
 * @window: called once by the next airtime_rounds_work_release() of that
 *	work, after it cleared the hold bits and before it reads the waiting ACs
 * @ctx: @window's argument
 *
 * For the self-tests (c-api-work-control's phase 6 makes a deferral there).
 * Nothing for a radio without a work.
 *
 * Context: Any but hard IRQ and NMI; before the release, by its caller.
 */
void airtime_rounds_work_set_window(struct airtime_radio *radio, void (*window)(void *ctx), void *ctx);

/**
 * airtime_rounds_work_run() - one run of a radio's rounds work (Rust)
 * @radio: the radio the work is bound to
 * @cpu: the CPU the work runs on (smp_processor_id(), BHs disabled)
 * @now_us: ktime_get_ns() / 1000
 * @deferred: set to whether these rounds were deferred again
 *
 * airtime_run_waiting_rounds() without its kick: the work itself decides
 * when to run again.
 *
 * Context: The work's run only, BHs disabled.
 * Return: the frames pushed, or -EFAULT.
 */
int airtime_rounds_work_run(struct airtime_radio *radio, u32 cpu, u64 now_us, bool *deferred);

/**
 * airtime_rounds_work_runs() - runs of every rounds work since load
 *
 * For the self-tests (the backoff's bound). One counter for every work:
 * a bound on one radio's runs holds only while no other radio's work runs
 * (the self-tests run one at a time).
 *
 * Context: Any.
 * Return: the count.
 */
long airtime_rounds_work_runs(void);

/**
 * airtime_radio_created() - count a created radio
 *
 * Context: Process context (airtime_radio_create()).
 */
void airtime_radio_created(void);

/**
 * airtime_radio_destroying() - a radio's destroy begins
 *
 * might_sleep() (destroy may sleep whether or not the radio has the
 * module's work), and one live radio fewer: airtime_exit() warns if any is
 * left.
 *
 * Context: Process context, may sleep (airtime_radio_destroy()).
 */
void airtime_radio_destroying(void);

/**
 * airtime_might_sleep() - might_sleep(), for Rust
 *
 * airtime_radio_quiesce() and airtime_radio_check_idle() sleep only for a
 * radio with the module's rounds work; they call this for every radio, so
 * that a driver calling them from atomic context is told even with the op.
 *
 * Context: Process context, may sleep.
 */
void airtime_might_sleep(void);

/**
 * airtime_rounds_work_free() - free a destroyed or never bound work
 * @w: the work
 *
 * Takes it off the module's list of works (a spinlock, IRQs saved), then
 * kfree(). Does not sleep.
 *
 * Context: Process context (airtime_radio_destroy()), or a failed
 * airtime_radio_create()'s, which may be atomic.
 */
void airtime_rounds_work_free(struct airtime_rounds_work *w);

/**
 * airtime_kfree() - kfree() for the Rust global allocator
 * @ptr: object to free, or NULL
 *
 * Context: Any context except NMI.
 */
void airtime_kfree(void *ptr);

/**
 * airtime_rust_panic() - report a Rust panic and stop the current task
 * @msg: panic message and location (not NUL-terminated)
 * @len: length of @msg in bytes
 *
 * Prints the message with pr_err() and calls BUG(): the kernel prints an
 * oops with the Rust frames and kills the current task.
 *
 * Context: Any context. Does not return.
 */
void __noreturn airtime_rust_panic(const char *msg, size_t len);

/**
 * airtime_capi_selftest() - the C self-test of the adapter API
 * @msg: buffer for the result: its numbers on success, the failed check
 *	otherwise; always NUL-terminated
 * @len: size of @msg, at least 1
 *
 * Implemented in airtime_capi_selftest.c; run by the Rust scenario
 * c-api-roundtrip. Drives every function of the adapter API above over a
 * small HAL written in C.
 *
 * Context: Process context (module init).
 * Return: 0 on success, non-zero on failure.
 */
int airtime_capi_selftest(char *msg, size_t len);

/**
 * airtime_capi_mcast() - the C self-test of station-less (multicast) txqs
 * @msg: buffer for the result, always NUL-terminated
 * @len: size of @msg, at least 1
 *
 * Implemented in airtime_capi_selftest.c; run by the Rust scenario
 * c-api-mcast.
 *
 * Context: Process context (module init).
 * Return: 0 on success, non-zero on failure.
 */
int airtime_capi_mcast(char *msg, size_t len);

/**
 * airtime_capi_deferred_work() - the C self-test of a concurrent radio's
 *	deferral without the rounds_deferred() op
 * @msg: buffer for the result, always NUL-terminated
 * @len: size of @msg, at least 1
 *
 * Implemented in airtime_capi_selftest.c; run by the Rust scenario
 * c-api-deferred-work. Forces a deferral with nothing in flight and no
 * driver poll, and requires the module's own work to send the frames; then
 * checks that a radio with the op is told instead.
 *
 * Context: Process context (module init); sleeps while it waits for the work.
 * Return: 0 on success, non-zero on failure.
 */
int airtime_capi_deferred_work(char *msg, size_t len);

/**
 * airtime_capi_work_control() - the C self-test of stopping, backing off and
 *	restarting the module's rounds work
 * @msg: buffer for the result, always NUL-terminated
 * @len: size of @msg, at least 1
 *
 * Implemented in airtime_capi_selftest.c; run by the Rust scenario
 * c-api-work-control: a no-progress loop backs off, check_idle and destroy
 * during it, quiesce and destroy during a run on the other CPU, quiesce and
 * resume, a deferral cutting a backoff at its cap short. Pins the calling
 * task to its CPU meanwhile (restored on return); the phases that need a
 * second online CPU are skipped, and said, without one.
 *
 * Context: Process context (module init); sleeps (about a second).
 * Return: 0 on success, non-zero on failure.
 */
int airtime_capi_work_control(char *msg, size_t len);

/**
 * airtime_capi_leak_radios() - leak two radios with their rounds works
 *	pending, for the boot test's check of module exit
 * @msg: buffer for the result, always NUL-terminated
 * @len: size of @msg, at least 1
 *
 * Implemented in airtime_capi_selftest.c; run by the Rust scenario
 * c-api-leak-radios (explicit only). Deliberately never destroys its two
 * radios (a driver's leak): one whose work makes no progress, returned once
 * its backoff is at its cap (AIRTIME_WORK_BACKOFF_MAX_MS), so its timer is
 * armed; one whose work's run busy-waits (BHs off) in tcl_free() until the
 * module is going away and 200 ms more (at most 2 s a run before), so a run
 * is in progress when rmmod calls airtime_exit(), on another CPU than the
 * first work's. The module's exit must stop both (airtime_stop_works()). The
 * radios, their HALs and ops stay allocated for good: leaked on purpose.
 *
 * Context: Process context (module init); sleeps (about 300 ms).
 * Return: 0 on success, non-zero on failure.
 */
int airtime_capi_leak_radios(char *msg, size_t len);

/*
 * airtime_capi_smp_stress() faults, each of which must make it FAIL: the
 * firmware loses one completion (a frame stays in the hardware, its airtime
 * pending); the multicast txq gets frames but is never woken (a lost wake).
 */
#define AIRTIME_STRESS_LOSE_COMPLETION	(1U << 0)
#define AIRTIME_STRESS_LOSE_WAKE	(1U << 1)
/*
 * Not a fault: the radio's rounds are gated (AIRTIME_RADIO_GATED_ROUNDS, two
 * rounds a call), and the rounds_deferred() op schedules the waiting rounds
 * that either context runs, as a driver would; the run must pass, with
 * requests handed off and deferred, and nothing waiting after the drain.
 */
#define AIRTIME_STRESS_GATED_ROUNDS	(1U << 2)
/*
 * Not a fault: concurrent rounds and no rounds_deferred() op, so the
 * module's rounds work runs the deferrals beside the two kthreads (a third
 * context), and the test thread quiesces and resumes it every 100 ms of a
 * 1 s run; the same checks must pass.
 */
#define AIRTIME_STRESS_NO_DEFERRED_OP	(1U << 3)

/**
 * airtime_capi_smp_stress() - the SMP stress self-test of the adapter API
 * @flags: 0, AIRTIME_STRESS_GATED_ROUNDS, or AIRTIME_STRESS_* fault flags
 *	that must make the test fail
 * @msg: buffer for the result, always NUL-terminated
 * @len: size of @msg, at least 1
 *
 * Implemented in airtime_capi_selftest.c; run by the Rust scenarios
 * c-api-smp-stress (@flags 0), c-api-smp-stress-gated
 * (AIRTIME_STRESS_GATED_ROUNDS), c-api-smp-stress-no-op
 * (AIRTIME_STRESS_NO_DEFERRED_OP), c-api-smp-stress-lost-completion and
 * c-api-smp-stress-lost-wake (explicit only, must fail). A wake kthread
 * and a completion kthread, bound to different CPUs, drive one radio for a few
 * seconds with station churn and weight changes; then a drain, conservation
 * and invariant checks.
 *
 * Context: Process context (module init); sleeps while the kthreads run.
 * Return: 0 on success, non-zero on failure.
 */
int airtime_capi_smp_stress(u32 flags, char *msg, size_t len);

#endif /* AIRTIME_ATH11K_H */
