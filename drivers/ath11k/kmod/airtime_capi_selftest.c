// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * airtime_capi_selftest.c - the adapter's C API, driven from C
 *
 * A small HAL written in C, the way a driver would write one over its
 * hardware: three TCL rings (FIFOs of MSDU ids), an MSDU table per ring (an
 * array standing in for ath11k's idr), txqs of frames, and a status sink that
 * records how each frame ended (tx_status_at() for the frames a completion
 * finished, checked against the entry that names them; tx_status() for the
 * rest). The test calls every function of the adapter API through
 * airtime_ath11k.h, each through RADIO_CALL() (no radio lock), and checks the
 * results: errors for bad arguments, every frame handed back
 * exactly once whatever its completion status, NAPI passes bounded by their
 * budget, no pending airtime left, the debugfs texts, station removal with
 * each removed txq released and each station reported drained exactly once,
 * the multicast budget, and destroy with frames in flight.
 *
 * Run by the Rust scenario c-api-roundtrip (src/selftest/capi.rs), with
 * c-api-mcast (a station-less txq beside a station's, over the same HAL),
 * c-api-deferred-work (a concurrent radio's deferral with no rounds_deferred()
 * op, run by the module's own work; see airtime_capi_deferred_work()) and
 * c-api-smp-stress (a HAL with a lock per TCL ring and per MSDU table, driven
 * by a wake kthread and a completion kthread on two CPUs at once, both pushing
 * into one ring part of the time and both running completion passes; see
 * airtime_capi_smp_stress()), and c-api-leak-radios (explicit only: two
 * radios leaked on purpose, their works pending, for the boot test's check of
 * module exit; see airtime_capi_leak_radios()).
 */
#include <linux/atomic.h>
#include <linux/bottom_half.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "airtime_ath11k.h"

/*
 * RADIO_CALL() - make one call into the adapter; every test calls it here.
 * @hw: the test's HAL context
 * @call: the adapter call, e.g. airtime_txq_wake(radio, 1, 0, cpu, now)
 *
 * The C API takes no lock on the radio: the wake and completion contexts call
 * it at once on different CPUs (the SMP stress below does), and the HAL
 * callbacks lock what they touch. This macro is the one place a test would
 * put a lock back, to compare.
 */
#define RADIO_CALL(hw, call) ((void)(hw), (call))

#define T_RING_SLOTS	16	/* descriptors per TCL ring */
#define T_MSDU_SLOTS	24	/* MSDU table entries per ring */
#define T_FRAMES	96
#define T_TXQ_LEN	64
#define T_BUDGET	4
#define T_NUM_STATUS	6

struct t_frame {
	u32 len;
	u32 msdu_id;	/* where msdu_insert() last stored it */
	u8 ring;
	u8 status;
	bool done;
};

struct t_txq {
	struct t_frame *q[T_TXQ_LEN];
	u32 head;
	u32 count;
};

struct t_hw {
	u32 ring[AIRTIME_TCL_RINGS][T_RING_SLOTS];
	u32 ring_head[AIRTIME_TCL_RINGS];
	u32 ring_count[AIRTIME_TCL_RINGS];
	struct airtime_msdu msdu[AIRTIME_TCL_RINGS][T_MSDU_SLOTS];
	bool used[AIRTIME_TCL_RINGS][T_MSDU_SLOTS];
	u32 outstanding[AIRTIME_TCL_RINGS];
	int fail_next_enqueue;
	struct t_frame frames[T_FRAMES];
	struct t_txq txq[2];
	u32 status_count[T_NUM_STATUS];
	u32 returned;
	u32 double_returns;
	u32 bad_callbacks;
	u32 no_peer_descs;	/* descriptors without a peer (multicast) */
	u32 released[2];	/* txq_released() per txq */
	u32 drained;		/* sta_drained() calls */
	u32 drained_peers;	/* bit per peer id reported drained */
	bool in_complete;	/* inside t_tx_complete()'s airtime_tx_complete() */
	u32 status_at;		/* tx_status_at() calls */
	/*
	 * airtime_capi_deferred_work(): while not 0, each tcl_free() call
	 * counts it down and the ring reads full on odd counts, with room on
	 * even ones: a ring freed each time after a round read it full (see
	 * there).
	 */
	u32 flicker;
	atomic_t pushes;	/* descriptors written (released after each) */
	atomic_t work_pushes;	/* of those, by a workqueue worker with BHs off */
	atomic_t deferred_calls;	/* t_rounds_deferred_counted() calls */
	atomic_t deferred_mask;		/* the ACs they named */
	/* airtime_capi_work_control(): */
	bool fail_inserts;	/* msdu_insert() fails (-ENOMEM): READ_ONCE/WRITE_ONCE */
	u32 stall_ms;		/* the work's next tcl_free() busy-waits this long, once */
	atomic_t stalled;	/* set when that stall began */
	atomic64_t stall_end;	/* ktime_get_ns() when it ended (before stall_ms is cleared) */
	atomic64_t push_ns;	/* ktime_get_ns() at the last push */
	atomic_long_t push_runs;	/* airtime_rounds_work_runs() at the last push */
	atomic_t hal_calls;	/* tcl_free(), tcl_enqueue(), msdu_insert() calls */
	atomic_t work_calls;	/* of those, by a workqueue worker with BHs off */
	atomic_t wrong_ring;	/* worker calls naming a ring not of its CPU */
	/* airtime_capi_leak_radios(): */
	int work_cpu;		/* the CPU of the work's last callback */
	bool stall_until_unload;	/* each run of the work busy-waits until rmmod (see there) */
};

/*
 * A callback run by the module's rounds work (a workqueue worker with BHs
 * off, not serving a softirq): counted, and its ring must be the one of the
 * CPU it runs on (ring cpu % 3: the work passes smp_processor_id()).
 */
static bool t_count_call(struct t_hw *hw, u8 ring)
{
	bool work = in_softirq() && !in_serving_softirq() && (current->flags & PF_WQ_WORKER);

	atomic_inc(&hw->hal_calls);
	if (!work)
		return false;
	atomic_inc(&hw->work_calls);
	WRITE_ONCE(hw->work_cpu, smp_processor_id());
	if (ring != smp_processor_id() % AIRTIME_TCL_RINGS)
		atomic_inc(&hw->wrong_ring);
	return true;
}

#define T_POLL_MAX	32	/* entries one t_tx_complete() call may pass */

/*
 * What a NAPI poll passes to airtime_tx_complete() as its cookie: its
 * completions, which tx_status_at() indexes (a driver would keep its struct
 * hal_tx_status array beside them), and which of them name a frame in the
 * hardware (the others finish none, so get no call).
 */
struct t_poll {
	const struct airtime_tx_status *st;
	u32 n;
	u32 next;			/* the least index tx_status_at() may name next */
	bool finishes[T_POLL_MAX];	/* entry i names a frame in the hardware */
};

/* The longest a run of airtime_capi_leak_radios()'s second radio waits for rmmod. */
#define T_UNLOAD_STALL_MS	2000
/* How long it goes on once rmmod began: airtime_exit() must find it running. */
#define T_UNLOAD_GRACE_MS	200

/*
 * The work's run busy-waits (BHs off: a run in progress) until this module
 * is going away (rmmod sets MODULE_STATE_GOING just before it calls the
 * exit function), at most T_UNLOAD_STALL_MS, then T_UNLOAD_GRACE_MS more,
 * so that airtime_exit() finds it running and has to wait for it.
 * airtime_capi_leak_radios() only.
 */
static void t_stall_until_unload(struct t_hw *hw)
{
	ktime_t t0 = ktime_get();

	atomic_set(&hw->stalled, 1);
	while (READ_ONCE(THIS_MODULE->state) != MODULE_STATE_GOING &&
	       ktime_ms_delta(ktime_get(), t0) < T_UNLOAD_STALL_MS)
		mdelay(1);
	if (READ_ONCE(THIS_MODULE->state) == MODULE_STATE_GOING)
		mdelay(T_UNLOAD_GRACE_MS);
}

static u32 t_tcl_free(void *ctx, u8 ring)
{
	struct t_hw *hw = ctx;
	bool work;

	if (ring >= AIRTIME_TCL_RINGS) {
		hw->bad_callbacks++;
		return 0;
	}
	work = t_count_call(hw, ring);
	if (work && hw->stall_ms) {
		atomic_set(&hw->stalled, 1);
		mdelay(hw->stall_ms);	/* BHs are off: a busy wait, a run in progress */
		atomic64_set(&hw->stall_end, ktime_get_ns());
		WRITE_ONCE(hw->stall_ms, 0);
	}
	if (work && READ_ONCE(hw->stall_until_unload))
		t_stall_until_unload(hw);
	if (hw->flicker && --hw->flicker % 2)
		return 0;
	return T_RING_SLOTS - hw->ring_count[ring];
}

static int t_tcl_enqueue(void *ctx, u8 ring, const struct airtime_tcl_desc *desc)
{
	struct t_hw *hw = ctx;
	u32 tail;

	if (ring >= AIRTIME_TCL_RINGS || !desc) {
		hw->bad_callbacks++;
		return -EINVAL;
	}
	t_count_call(hw, ring);
	if (hw->fail_next_enqueue) {
		hw->fail_next_enqueue = 0;
		return -ENOMEM;
	}
	if (hw->ring_count[ring] == T_RING_SLOTS)
		return -ENOSPC;
	/* The frame named is the one its MSDU entry holds. */
	if (desc->msdu_id >= T_MSDU_SLOTS || !hw->used[ring][desc->msdu_id] ||
	    hw->msdu[ring][desc->msdu_id].frame != desc->frame)
		hw->bad_callbacks++;
	tail = (hw->ring_head[ring] + hw->ring_count[ring]) % T_RING_SLOTS;
	hw->ring[ring][tail] = desc->msdu_id;
	hw->ring_count[ring]++;
	if (!desc->has_peer)
		hw->no_peer_descs++;
	if (in_softirq() && !in_serving_softirq() && (current->flags & PF_WQ_WORKER))
		atomic_inc(&hw->work_pushes);
	atomic64_set(&hw->push_ns, ktime_get_ns());
	atomic_long_set(&hw->push_runs, airtime_rounds_work_runs());
	/* Last: a reader that acquires the count sees the descriptor and the frame's state. */
	(void)atomic_inc_return_release(&hw->pushes);
	return 0;
}

static u32 t_msdu_outstanding(void *ctx, u8 ring)
{
	struct t_hw *hw = ctx;

	return ring < AIRTIME_TCL_RINGS ? hw->outstanding[ring] : 0;
}

static int t_msdu_insert(void *ctx, u8 ring, const struct airtime_msdu *msdu)
{
	struct t_hw *hw = ctx;
	int i;

	if (ring >= AIRTIME_TCL_RINGS || !msdu || !msdu->frame) {
		hw->bad_callbacks++;
		return -EINVAL;
	}
	t_count_call(hw, ring);
	if (READ_ONCE(hw->fail_inserts))
		return -ENOMEM;
	for (i = 0; i < T_MSDU_SLOTS; i++) {
		if (!hw->used[ring][i]) {
			struct t_frame *f = msdu->frame;

			if (f < hw->frames || f >= hw->frames + T_FRAMES) {
				hw->bad_callbacks++;
				return -EINVAL;
			}
			hw->msdu[ring][i] = *msdu;
			f->msdu_id = i;
			f->ring = ring;
			hw->used[ring][i] = true;
			hw->outstanding[ring]++;
			return i;
		}
	}
	return -ENOSPC;
}

static int t_msdu_take(void *ctx, u8 ring, u32 id, struct airtime_msdu *msdu)
{
	struct t_hw *hw = ctx;

	if (ring >= AIRTIME_TCL_RINGS || id >= T_MSDU_SLOTS || !hw->used[ring][id])
		return -ENOENT;
	*msdu = hw->msdu[ring][id];
	hw->used[ring][id] = false;
	hw->outstanding[ring]--;
	return 0;
}

static int t_msdu_take_any(void *ctx, u8 ring, struct airtime_msdu *msdu)
{
	struct t_hw *hw = ctx;
	u32 i;

	for (i = 0; ring < AIRTIME_TCL_RINGS && i < T_MSDU_SLOTS; i++)
		if (hw->used[ring][i])
			return t_msdu_take(ctx, ring, i, msdu) ? -ENOENT : i;
	return -ENOENT;
}

/* A frame comes back (either status op): recorded once, with its status. */
static void t_returned(struct t_hw *hw, struct t_frame *f, u8 status)
{
	if (f < hw->frames || f >= hw->frames + T_FRAMES || status >= T_NUM_STATUS) {
		hw->bad_callbacks++;
		return;
	}
	if (f->done)
		hw->double_returns++;
	f->done = true;
	f->status = status;
	hw->status_count[status]++;
	hw->returned++;
}

/*
 * tx_status(): with tx_status_at() set, only for frames no completion
 * finished (removals, reaps, destroy), which these tests never hand back
 * inside airtime_tx_complete().
 */
static void t_tx_status(void *ctx, void *frame, u8 status)
{
	struct t_hw *hw = ctx;

	if (hw->in_complete)
		hw->bad_callbacks++;
	t_returned(hw, frame, status);
}

/*
 * tx_status_at(): a frame entry @index of @cookie's completions finished: that
 * entry names the frame's MSDU id, ring and this status, and the entries come
 * in the array's order, each once.
 */
static void t_tx_status_at(void *ctx, void *cookie, void *frame, u8 status, u32 index)
{
	struct t_hw *hw = ctx;
	struct t_poll *p = cookie;
	struct t_frame *f = frame;
	const struct airtime_tx_status *e;

	hw->status_at++;
	if (!hw->in_complete || !p || index >= p->n || index < p->next || !p->finishes[index]) {
		hw->bad_callbacks++;
	} else {
		e = &p->st[index];
		if (f < hw->frames || f >= hw->frames + T_FRAMES || e->msdu_id != f->msdu_id || e->ring != f->ring ||
		    e->status != status)
			hw->bad_callbacks++;
		p->next = index + 1;
	}
	/* Recorded whatever the index, so that a bad one fails as a bad callback. */
	t_returned(hw, f, status);
}

static void *t_txq_dequeue(void *ctx, void *txq, u32 *len)
{
	struct t_txq *q = txq;
	struct t_frame *f;

	if (!q->count)
		return NULL;
	f = q->q[q->head];
	q->head = (q->head + 1) % T_TXQ_LEN;
	q->count--;
	*len = f->len;
	return f;
}

static u32 t_txq_peek_len(void *ctx, void *txq)
{
	struct t_txq *q = txq;

	return q->count ? q->q[q->head]->len : 0;
}

static void t_txq_released(void *ctx, void *txq)
{
	struct t_hw *hw = ctx;
	struct t_txq *q = txq;

	if (q < hw->txq || q >= hw->txq + 2) {
		hw->bad_callbacks++;
		return;
	}
	hw->released[q - hw->txq]++;
}

static void t_sta_drained(void *ctx, u16 peer_id)
{
	struct t_hw *hw = ctx;

	if (peer_id >= 32 || (hw->drained_peers & BIT(peer_id))) {
		hw->bad_callbacks++;
		return;
	}
	hw->drained_peers |= BIT(peer_id);
	hw->drained++;
}

/*
 * A runner left round requests waiting: only two contexts meeting at the gate
 * do that (the SMP stress), never these single-context tests.
 */
static void t_rounds_deferred(void *ctx, u8 ac_mask)
{
	struct t_hw *hw = ctx;

	hw->bad_callbacks++;
}

/* The op as a driver with its own work item has it: counted, with its ACs. */
static void t_rounds_deferred_counted(void *ctx, u8 ac_mask)
{
	struct t_hw *hw = ctx;

	atomic_or(ac_mask, &hw->deferred_mask);
	atomic_inc(&hw->deferred_calls);
}

static const struct airtime_hal_ops t_ops = {
	.tcl_free = t_tcl_free,
	.tcl_enqueue = t_tcl_enqueue,
	.msdu_outstanding = t_msdu_outstanding,
	.msdu_insert = t_msdu_insert,
	.msdu_take = t_msdu_take,
	.msdu_take_any = t_msdu_take_any,
	.tx_status = t_tx_status,
	.txq_dequeue = t_txq_dequeue,
	.txq_peek_len = t_txq_peek_len,
	.txq_released = t_txq_released,
	.sta_drained = t_sta_drained,
	.rounds_deferred = t_rounds_deferred,
	.tx_status_at = t_tx_status_at,
};

/*
 * Every required callback but tx_status: creation must refuse it, even with
 * tx_status_at(), which does not stand in for it.
 */
static const struct airtime_hal_ops t_ops_incomplete = {
	.tcl_free = t_tcl_free,
	.tcl_enqueue = t_tcl_enqueue,
	.msdu_outstanding = t_msdu_outstanding,
	.msdu_insert = t_msdu_insert,
	.msdu_take = t_msdu_take,
	.msdu_take_any = t_msdu_take_any,
	.txq_dequeue = t_txq_dequeue,
	.txq_peek_len = t_txq_peek_len,
	.tx_status_at = t_tx_status_at,
};

static void t_enqueue(struct t_txq *q, struct t_frame *f)
{
	f->len = 1500;
	f->done = false;
	q->q[(q->head + q->count) % T_TXQ_LEN] = f;
	q->count++;
}

/*
 * The firmware: takes up to @max descriptors from each ring and writes their
 * completions into @st, the statuses cycling through every AIRTIME_TX_*.
 */
static u32 t_firmware(struct t_hw *hw, struct airtime_tx_status *st, u32 max, u32 *next_status)
{
	u32 n = 0, r, k;

	for (r = 0; r < AIRTIME_TCL_RINGS; r++) {
		for (k = 0; k < max && hw->ring_count[r]; k++) {
			st[n].msdu_id = hw->ring[r][hw->ring_head[r]];
			st[n].ring = r;
			st[n].status = (*next_status)++ % T_NUM_STATUS;
			st[n].reserved = 0;
			hw->ring_head[r] = (hw->ring_head[r] + 1) % T_RING_SLOTS;
			hw->ring_count[r]--;
			n++;
		}
	}
	return n;
}

#define CHECK(cond, fmt, ...) do {						\
	if (!(cond)) {								\
		snprintf(msg, len, "line %d: " fmt, __LINE__, ##__VA_ARGS__);	\
		ret = 1;							\
		goto out;							\
	}									\
} while (0)

/* The configuration every t_* test starts from: small rings, AQL on. */
static void t_config(struct t_hw *hw, struct airtime_radio_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ops = &t_ops;
	cfg->hw = hw;
	cfg->flags = AIRTIME_RADIO_TX_NO_PUSHBACK;
	cfg->tcl_descriptors = T_RING_SLOTS;
	cfg->msdu_capacity = T_MSDU_SLOTS;
	cfg->max_stations = 8;
	cfg->max_txqs = 32;
}

/* A zeroed test radio and its configuration; NULL, with @msg said, without memory. */
static struct t_hw *t_hw_alloc(char *msg, size_t len, struct airtime_radio_config *cfg)
{
	struct t_hw *hw = kzalloc(sizeof(*hw), GFP_KERNEL);

	if (!hw) {
		snprintf(msg, len, "no memory for the test");
		return NULL;
	}
	t_config(hw, cfg);
	return hw;
}

/*
 * airtime_tx_complete() with @st as the completions tx_status_at() indexes
 * (through the cookie). Each entry processed that names a frame in the
 * hardware, and no other, is one tx_status_at() call: one more or fewer is a
 * bad callback. At most T_POLL_MAX entries.
 */
static int t_tx_complete(struct t_hw *hw, struct airtime_radio *radio, const struct airtime_tx_status *st, u32 n,
			 u32 budget, u32 cpu, u64 now)
{
	struct t_poll poll = { .st = st, .n = n };
	bool taken[AIRTIME_TCL_RINGS][T_MSDU_SLOTS] = {};
	u32 before = hw->status_at, expected = 0, i, k;
	int r;

	if (n > T_POLL_MAX) {
		hw->bad_callbacks++;
		return -E2BIG;
	}
	/* What the call will process, and which of those finish a frame. */
	for (i = 0; i < n && i < budget; i++) {
		if (st[i].ring >= AIRTIME_TCL_RINGS || st[i].msdu_id >= T_MSDU_SLOTS)
			continue;
		k = st[i].msdu_id;
		poll.finishes[i] = hw->used[st[i].ring][k] && !taken[st[i].ring][k];
		taken[st[i].ring][k] = true;
		expected += poll.finishes[i];
	}
	hw->in_complete = true;
	r = RADIO_CALL(hw, airtime_tx_complete(radio, st, n, budget, cpu, now, &poll));
	hw->in_complete = false;
	if (hw->status_at - before != (r > 0 ? expected : 0))
		hw->bad_callbacks++;
	return r;
}

/*
 * The NAPI poll over @n completions, T_BUDGET at a time: the number of polls,
 * or -1 (with @why set) if a poll did not take between 1 and T_BUDGET.
 */
static int t_complete(struct t_hw *hw, struct airtime_radio *radio, const struct airtime_tx_status *st, u32 n,
		      u64 now, int *why)
{
	u32 done;
	int r, calls = 0;

	for (done = 0; done < n; done += r, calls++) {
		r = t_tx_complete(hw, radio, st + done, n - done, T_BUDGET, 0, now);
		if (r <= 0 || r > T_BUDGET) {
			*why = r;
			return -1;
		}
	}
	return calls;
}

/* Frames of txq @q (frames i % 2 == q) in the MSDU tables: in the hardware. */
static u32 t_inflight(struct t_hw *hw, u32 q)
{
	u32 r, i, n = 0;
	struct t_frame *f;

	for (r = 0; r < AIRTIME_TCL_RINGS; r++) {
		for (i = 0; i < T_MSDU_SLOTS; i++) {
			f = hw->msdu[r][i].frame;
			if (hw->used[r][i] && (f - hw->frames) % 2 == q)
				n++;
		}
	}
	return n;
}

/*
 * The per-txq AQL query (mainline's ieee80211_txq_aql_pending()) of stations
 * 1 and 2's BE txqs (txq[0] and txq[1]) against what is in the hardware: each
 * is its station's charged airtime in flight, one frame's charge per frame
 * (all 1500 bytes, priced alike), 0 with nothing in flight, and the two add up
 * to BE's pending airtime. @charge is set to one frame's charge, 0 if nothing
 * is in flight. Returns 0, or fails with the mismatch in @msg.
 */
static int t_txq_pending(struct t_hw *hw, struct airtime_radio *radio, u32 *charge, char *msg, size_t len)
{
	struct airtime_radio_stats stats;
	u32 q[2], n[2], k;
	int ret = 0;

	*charge = 0;
	CHECK(!RADIO_CALL(hw, airtime_radio_get_stats(radio, &stats)), "get_stats");
	for (k = 0; k < 2; k++) {
		CHECK(!RADIO_CALL(hw, airtime_txq_aql_pending_us(radio, k + 1, 0, &q[k])), "txq_aql_pending_us(%u)",
		      k + 1);
		n[k] = t_inflight(hw, k);
		CHECK(!n[k] == !q[k] && (!n[k] || q[k] % n[k] == 0), "station %u: %u us pending for %u frames in flight",
		      k + 1, q[k], n[k]);
		if (n[k] && !*charge)
			*charge = q[k] / n[k];
		CHECK(!n[k] || q[k] == n[k] * *charge, "station %u: %u us for %u frames of %u us", k + 1, q[k], n[k],
		      *charge);
	}
	CHECK(q[0] + q[1] == stats.pending_us[AIRTIME_AC_BE] && stats.pending_us[AIRTIME_AC_BE] == stats.total_pending_us,
	      "per-txq pending %u + %u us, BE %u us, total %u us", q[0], q[1], stats.pending_us[AIRTIME_AC_BE],
	      stats.total_pending_us);
out:
	return ret;
}

#define T_TURN_FRAMES	3	/* t_turn_budget()'s frames per turn */
#define T_TURN_QUEUED	8	/* frames per station in t_turn_budget() */

/*
 * The per-turn budget (AIRTIME_RADIO_TURN_BUDGET), on a radio of its own with
 * AQL off (charges still counted), so that only the budget and the txqs' frames
 * end a turn: the configurations refused; stations 1 and 2 with T_TURN_QUEUED
 * frames each on BE; a wake of station 1 sends T_TURN_FRAMES; a wake of
 * station 2 then serves it T_TURN_FRAMES in a round that serves station 1
 * again, no more than that; the per-txq query charges each station for its
 * frames in flight; every later round (run by a NAPI poll) sends at most
 * T_TURN_FRAMES per txq, until all are back with nothing pending. @rounds is
 * set to the rounds that sent frames.
 */
static int t_turn_budget(u32 *rounds, char *msg, size_t len)
{
	static struct airtime_tx_status st[AIRTIME_TCL_RINGS * 8];
	struct airtime_radio_config cfg;
	struct airtime_radio *radio = NULL;
	struct t_hw *hw;
	u64 now = 1000;
	u32 i, n, k, done, before[2], sent[2], charge, next_status = 0;
	int ret = 0, err = 0, r;

	*rounds = 0;
	hw = kzalloc(sizeof(*hw), GFP_KERNEL);
	if (!hw) {
		snprintf(msg, len, "no memory for the turn budget test");
		return -ENOMEM;
	}
	t_config(hw, &cfg);
	cfg.flags |= AIRTIME_RADIO_TURN_BUDGET;
	CHECK(!airtime_radio_create(&cfg, &err) && err == -EINVAL, "turn budget with neither bound: err %d", err);
	t_config(hw, &cfg);
	cfg.turn_frames = T_TURN_FRAMES;
	CHECK(!airtime_radio_create(&cfg, &err) && err == -EINVAL, "turn_frames without the flag: err %d", err);
	t_config(hw, &cfg);
	cfg.turn_airtime_us = 4000;
	CHECK(!airtime_radio_create(&cfg, &err) && err == -EINVAL, "turn_airtime_us without the flag: err %d", err);
	t_config(hw, &cfg);
	cfg.flags |= AIRTIME_RADIO_TURN_BUDGET | AIRTIME_RADIO_AQL_DISABLED;
	cfg.turn_frames = T_TURN_FRAMES;
	radio = airtime_radio_create(&cfg, &err);
	CHECK(radio, "create with a turn budget: err %d", err);

	for (k = 0; k < 2; k++) {
		CHECK(!RADIO_CALL(hw, airtime_sta_add(radio, k + 1, 256)), "sta_add(%u)", k + 1);
		CHECK(!RADIO_CALL(hw, airtime_txq_add(radio, k + 1, 0, &hw->txq[k])), "txq_add(%u, 0)", k + 1);
	}
	for (i = 0; i < 2 * T_TURN_QUEUED; i++)
		t_enqueue(&hw->txq[i % 2], &hw->frames[i]);

	r = RADIO_CALL(hw, airtime_txq_wake(radio, 1, 0, 0, now));
	CHECK(r == T_TURN_FRAMES && hw->txq[0].count == T_TURN_QUEUED - T_TURN_FRAMES,
	      "station 1's wake pushed %d, %u left of %u", r, hw->txq[0].count, T_TURN_QUEUED);
	before[0] = hw->txq[0].count;
	r = RADIO_CALL(hw, airtime_txq_wake(radio, 2, 0, 0, now));
	sent[0] = before[0] - hw->txq[0].count;
	sent[1] = T_TURN_QUEUED - hw->txq[1].count;
	CHECK(sent[1] == T_TURN_FRAMES && sent[0] <= T_TURN_FRAMES && r == sent[0] + sent[1],
	      "station 2's wake pushed %d: %u of station 2, %u of station 1 (budget %u)", r, sent[1], sent[0],
	      T_TURN_FRAMES);
	*rounds = 2;
	r = t_txq_pending(hw, radio, &charge, msg, len);
	CHECK(!r && charge, "%s", r ? msg : "no charge in flight");

	/* The completions run the next rounds: each sends at most the budget per txq. */
	for (i = 0; i < 400 && hw->returned < 2 * T_TURN_QUEUED; i++) {
		now += 500;
		n = t_firmware(hw, st, 8, &next_status);
		for (done = 0; done < n; done += r) {
			before[0] = hw->txq[0].count;
			before[1] = hw->txq[1].count;
			r = t_tx_complete(hw, radio, st + done, n - done, T_BUDGET, 0, now);
			CHECK(r > 0 && r <= T_BUDGET, "tx_complete: %d", r);
			sent[0] = before[0] - hw->txq[0].count;
			sent[1] = before[1] - hw->txq[1].count;
			CHECK(sent[0] <= T_TURN_FRAMES && sent[1] <= T_TURN_FRAMES,
			      "a poll's round sent %u and %u frames (budget %u)", sent[0], sent[1], T_TURN_FRAMES);
			*rounds += sent[0] || sent[1];
		}
		r = t_txq_pending(hw, radio, &charge, msg, len);
		CHECK(!r, "%s", msg);
	}
	CHECK(hw->returned == 2 * T_TURN_QUEUED && !hw->double_returns && !hw->bad_callbacks,
	      "%u of %u frames back, %u twice, %u bad callbacks", hw->returned, 2 * T_TURN_QUEUED,
	      hw->double_returns, hw->bad_callbacks);
	r = t_txq_pending(hw, radio, &charge, msg, len);
	CHECK(!r && !charge, "after the drain: %s", r ? msg : "airtime still pending");
	CHECK(!RADIO_CALL(hw, airtime_radio_check_idle(radio)), "invariants after the budgeted drain");
	r = airtime_radio_destroy(radio);
	radio = NULL;
	CHECK(r == 0, "destroy handed back %d frames", r);
out:
	if (radio)
		airtime_radio_destroy(radio);
	kfree(hw);
	return ret;
}

#define T_GATE_ROUNDS	2	/* t_gated_rounds()'s rounds per call */

/* Station @peer with its TID-0 txq (hw->txq[0]) holding frames @first to @first + 3. */
static int t_station_with_four(struct t_hw *hw, struct airtime_radio *radio, u16 peer, u32 first)
{
	u32 i;
	int r = RADIO_CALL(hw, airtime_sta_add(radio, peer, 256));

	if (!r)
		r = RADIO_CALL(hw, airtime_txq_add(radio, peer, 0, &hw->txq[0]));
	for (i = first; !r && i < first + 4; i++)
		t_enqueue(&hw->txq[0], &hw->frames[i]);
	return r;
}

/*
 * Gated rounds (AIRTIME_RADIO_GATED_ROUNDS), on a radio of its own: the
 * configurations refused (no round per call, too many, no rounds_deferred()
 * op, gate_rounds without the flag, reserved set); a wake with no other context in a round runs the
 * round itself and sends; nothing waits for a runner, and running the waiting
 * rounds sends nothing; both new calls refuse NULL. (Two contexts meeting at
 * the gate are the SMP stress's gated run.) Then a radio with one TX ring
 * (max_tx_ring 1): a wake from CPU 2 pushes into ring 0, a completion naming
 * ring 1 is refused, and four rings are refused at create.
 */
static int t_gated_rounds(char *msg, size_t len)
{
	struct airtime_tx_status st[1];
	struct airtime_hal_ops ops;
	struct airtime_radio_config cfg;
	struct airtime_radio *radio = NULL;
	struct t_hw *hw;
	u32 n;
	int ret = 0, err = 0, r;

	hw = kzalloc(sizeof(*hw), GFP_KERNEL);
	if (!hw) {
		snprintf(msg, len, "no memory for the gated rounds test");
		return -ENOMEM;
	}
	t_config(hw, &cfg);
	cfg.flags |= AIRTIME_RADIO_GATED_ROUNDS;
	CHECK(!airtime_radio_create(&cfg, &err) && err == -EINVAL, "gated with no round per call: err %d", err);
	t_config(hw, &cfg);
	cfg.gate_rounds = T_GATE_ROUNDS;
	CHECK(!airtime_radio_create(&cfg, &err) && err == -EINVAL, "gate_rounds without the flag: err %d", err);
	t_config(hw, &cfg);
	cfg.flags |= AIRTIME_RADIO_GATED_ROUNDS;
	cfg.gate_rounds = AIRTIME_GATE_ROUNDS_MAX + 1;
	CHECK(!airtime_radio_create(&cfg, &err) && err == -EINVAL, "gate_rounds over the most: err %d", err);
	t_config(hw, &cfg);
	ops = t_ops;
	ops.rounds_deferred = NULL;
	cfg.ops = &ops;
	cfg.flags |= AIRTIME_RADIO_GATED_ROUNDS;
	cfg.gate_rounds = T_GATE_ROUNDS;
	CHECK(!airtime_radio_create(&cfg, &err) && err == -EINVAL, "gated without rounds_deferred(): err %d", err);
	t_config(hw, &cfg);
	cfg.reserved[2] = 1;
	CHECK(!airtime_radio_create(&cfg, &err) && err == -EINVAL, "reserved not 0: err %d", err);
	t_config(hw, &cfg);
	cfg.max_tx_ring = AIRTIME_TCL_RINGS + 1;
	CHECK(!airtime_radio_create(&cfg, &err) && err == -EINVAL, "four TX rings: err %d", err);
	t_config(hw, &cfg);
	cfg.flags |= AIRTIME_RADIO_GATED_ROUNDS;
	cfg.gate_rounds = T_GATE_ROUNDS;
	radio = airtime_radio_create(&cfg, &err);
	CHECK(radio, "create with gated rounds: err %d", err);

	r = t_station_with_four(hw, radio, 1, 0);
	CHECK(!r, "station 1 and its txq: %d", r);
	r = RADIO_CALL(hw, airtime_txq_wake(radio, 1, 0, 0, 1000));
	CHECK(r == 4 && !hw->txq[0].count, "a lone wake ran its round: pushed %d, %u left", r, hw->txq[0].count);
	r = RADIO_CALL(hw, airtime_rounds_waiting(radio));
	CHECK(r == 0, "rounds waiting with no runner gone: %d", r);
	r = RADIO_CALL(hw, airtime_run_waiting_rounds(radio, 0, 1000));
	CHECK(r == 0, "waiting rounds with nothing waiting pushed %d", r);
	CHECK(airtime_rounds_waiting(NULL) == -EFAULT && airtime_run_waiting_rounds(NULL, 0, 0) == -EFAULT &&
	      airtime_run_rounds(NULL, 0, 0, 0) == -EFAULT && airtime_set_aql_enabled(NULL, true) == -EFAULT,
	      "NULL radio accepted");
	r = RADIO_CALL(hw, airtime_run_rounds(radio, 1U << AIRTIME_NUM_ACS, 0, 1000));
	CHECK(r == -EINVAL, "run_rounds on a fifth AC: %d", r);
	r = RADIO_CALL(hw, airtime_run_rounds(radio, 0xf, 0, 1000));
	CHECK(r == 0, "rounds on every AC with nothing queued pushed %d", r);
	CHECK(!RADIO_CALL(hw, airtime_set_aql_enabled(radio, false)) &&
	      !RADIO_CALL(hw, airtime_set_aql_enabled(radio, true)), "set_aql_enabled");
	/* Destroy hands back the four frames still in the hardware. */
	r = airtime_radio_destroy(radio);
	radio = NULL;
	CHECK(r == 4, "destroy handed back %d of 4 frames", r);

	/* One TX ring (QCA6390, WCN6855): every CPU's frames go to ring 0. */
	t_config(hw, &cfg);
	cfg.max_tx_ring = 1;
	radio = airtime_radio_create(&cfg, &err);
	CHECK(radio, "create with one TX ring: err %d", err);
	/* Peer 2: peer 1 was drained once already (by the destroy above). */
	r = t_station_with_four(hw, radio, 2, 4);
	CHECK(!r, "station 2 and its txq: %d", r);
	n = hw->ring_count[0];
	r = RADIO_CALL(hw, airtime_txq_wake(radio, 2, 0, 2, 1000));
	CHECK(r == 4 && hw->ring_count[0] == n + 4, "CPU 2 with one ring: pushed %d, ring 0 took %u", r,
	      hw->ring_count[0] - n);
	st[0].msdu_id = 0;
	st[0].ring = 1;
	st[0].status = AIRTIME_TX_ACKED;
	st[0].reserved = 0;
	r = t_tx_complete(hw, radio, st, 1, T_BUDGET, 0, 1000);
	CHECK(r == -EINVAL, "a completion on ring 1 of one: %d", r);
	r = airtime_radio_destroy(radio);
	radio = NULL;
	CHECK(r == 4, "destroy handed back %d of 4 frames", r);
	CHECK(!hw->bad_callbacks, "%u bad callbacks (a deferral with one context?)", hw->bad_callbacks);
out:
	if (radio)
		airtime_radio_destroy(radio);
	kfree(hw);
	return ret;
}

/**
 * airtime_capi_selftest() - the C self-test of the adapter API
 * @msg: buffer for the result, always NUL-terminated
 * @len: size of @msg, at least 1
 *
 * See the file comment.
 *
 * Context: Process context (module init).
 * Return: 0 on success, non-zero on failure.
 */
int airtime_capi_selftest(char *msg, size_t len)
{
	static struct airtime_tx_status st[AIRTIME_TCL_RINGS * 8];
	struct airtime_radio_config cfg = {};
	struct airtime_hal_ops ops_no_op;
	struct airtime_radio_stats stats;
	struct airtime_ppdu_stats ppdu = {};
	struct airtime_radio *radio = NULL;
	struct t_hw *hw;
	u8 mcs, tid;
	char *text;
	u64 now = 1000;
	u32 i, n, done, next_status = 0, calls = 0, max_pass = 0, peak = 0, pushed = 0, charge = 0, turn_rounds;
	long sleeping;
	int ret = 0, err = 0, r;

	if (!msg || !len)
		return -EFAULT;
	msg[0] = '\0';
	hw = kzalloc(sizeof(*hw), GFP_KERNEL);
	text = kzalloc(1024, GFP_KERNEL);
	if (!hw || !text) {
		snprintf(msg, len, "no memory for the test");
		ret = -ENOMEM;
		goto out;
	}

	/* Creation: bad configurations are refused. */
	CHECK(!airtime_radio_create(NULL, &err) && err == -EFAULT, "create(NULL): err %d", err);
	t_config(hw, &cfg);
	cfg.ops = &t_ops_incomplete;
	CHECK(!airtime_radio_create(&cfg, &err) && err == -EINVAL, "create without tx_status: err %d", err);
	t_config(hw, &cfg);
	cfg.flags = 1U << 7;
	CHECK(!airtime_radio_create(&cfg, &err) && err == -EINVAL, "create with flag 0x80: err %d", err);
	/*
	 * A create that cannot sleep (BHs off: a caller breaking the contract)
	 * still allocates atomically, never with GFP_KERNEL; without the
	 * rounds_deferred() op too, where it also allocates the rounds work
	 * and puts it on the module's list (under a spinlock: a mutex there
	 * would sleep, which only CONFIG_DEBUG_ATOMIC_SLEEP reports).
	 */
	ops_no_op = t_ops;
	ops_no_op.rounds_deferred = NULL;
	for (i = 0; i < 2; i++) {
		t_config(hw, &cfg);
		if (i)
			cfg.ops = &ops_no_op;
		sleeping = airtime_alloc_sleeping_count();
		local_bh_disable();
		radio = airtime_radio_create(&cfg, &err);
		local_bh_enable();
		CHECK(radio, "create with BHs off (%s the op): err %d", i ? "without" : "with", err);
		CHECK(airtime_alloc_sleeping_count() == sleeping,
		      "create with BHs off (%s the op): %ld allocations with GFP_KERNEL", i ? "without" : "with",
		      airtime_alloc_sleeping_count() - sleeping);
		r = airtime_radio_destroy(radio);
		radio = NULL;
		CHECK(r == 0, "destroy of the atomic create (%s the op): %d", i ? "without" : "with", r);
	}
	/* The create a driver makes, in process context, takes its tables with GFP_KERNEL. */
	t_config(hw, &cfg);
	sleeping = airtime_alloc_sleeping_count();
	radio = airtime_radio_create(&cfg, &err);
	CHECK(radio, "create: err %d", err);
	sleeping = airtime_alloc_sleeping_count() - sleeping;
	CHECK(sleeping > 0, "create allocated nothing with GFP_KERNEL");
	/* And the mode ended with it: this task can begin it again. */
	CHECK(airtime_alloc_may_sleep_begin(), "the create's sleeping allocations outlived it");
	airtime_alloc_may_sleep_end();

	/* Stations, txqs, weights, limits. */
	CHECK(!RADIO_CALL(hw, airtime_sta_add(radio, 1, 256)), "sta_add(1)");
	CHECK(!RADIO_CALL(hw, airtime_sta_add(radio, 2, 256)), "sta_add(2)");
	r = RADIO_CALL(hw, airtime_sta_add(radio, 1, 256));
	CHECK(r == -EEXIST, "sta_add(1) again: %d", r);
	r = RADIO_CALL(hw, airtime_sta_add(radio, 3, 0));
	CHECK(r == -EINVAL, "sta_add(weight 0): %d", r);
	CHECK(!RADIO_CALL(hw, airtime_sta_set_weight(radio, 2, 512)), "set_weight(2, 512)");
	r = RADIO_CALL(hw, airtime_sta_set_weight(radio, 9, 256));
	CHECK(r == -ENOENT, "set_weight(unknown): %d", r);
	r = RADIO_CALL(hw, airtime_sta_set_weight(radio, 1, 0));
	CHECK(r == -EINVAL, "set_weight(0): %d", r);
	CHECK(!RADIO_CALL(hw, airtime_set_aql_limits(radio, AIRTIME_AC_BE, 5000, 12000)), "set_aql_limits");
	r = RADIO_CALL(hw, airtime_set_aql_limits(radio, AIRTIME_AC_BE, 12000, 5000));
	CHECK(r == -EINVAL, "inverted limits: %d", r);
	r = RADIO_CALL(hw, airtime_sta_set_aql_limits(radio, 1, AIRTIME_NUM_ACS, 1, 2));
	CHECK(r == -EINVAL, "sta limits on AC 4: %d", r);
	CHECK(!RADIO_CALL(hw, airtime_sta_set_aql_limits(radio, 1, AIRTIME_AC_VO, 4000, 8000)), "sta limits");
	CHECK(!RADIO_CALL(hw, airtime_set_aql_threshold(radio, 24000)), "set_aql_threshold");
	CHECK(!RADIO_CALL(hw, airtime_txq_add(radio, 1, 0, &hw->txq[0])), "txq_add(1, 0)");
	CHECK(!RADIO_CALL(hw, airtime_txq_add(radio, 2, 0, &hw->txq[1])), "txq_add(2, 0)");
	r = RADIO_CALL(hw, airtime_txq_add(radio, 1, 0, &hw->txq[1]));
	CHECK(r == -EEXIST, "txq_add(1, 0) again: %d", r);
	r = RADIO_CALL(hw, airtime_txq_add(radio, 1, 17, &hw->txq[1]));
	CHECK(r == -EINVAL, "txq_add(tid 17): %d", r);
	r = RADIO_CALL(hw, airtime_txq_add(radio, 7, 1, &hw->txq[1]));
	CHECK(r == -ENOENT, "txq_add(unknown peer): %d", r);
	r = RADIO_CALL(hw, airtime_txq_wake(radio, 1, 5, 0, now));
	CHECK(r == -ENOENT, "wake(no txq on tid 5): %d", r);

	/* Traffic: 48 frames per station, one enqueue refused with -ENOMEM. */
	for (i = 0; i < T_FRAMES; i++)
		t_enqueue(&hw->txq[i % 2], &hw->frames[i]);
	hw->fail_next_enqueue = 1;
	for (i = 0; i < 2; i++) {
		r = RADIO_CALL(hw, airtime_txq_wake(radio, i + 1, 0, 0, now));
		CHECK(r >= 0, "wake(%u): %d", i + 1, r);
		pushed += r;
	}
	CHECK(pushed > 0 && pushed <= T_RING_SLOTS, "first rounds pushed %u frames into a %u-slot ring", pushed,
	      T_RING_SLOTS);
	/* The per-txq query: each station charged for its frames in the hardware. */
	r = t_txq_pending(hw, radio, &charge, msg, len);
	CHECK(!r && charge, "%s", r ? msg : "no charge in flight after the first rounds");

	/* The firmware completes; each NAPI poll takes at most its budget. */
	for (i = 0; i < 400 && hw->returned < T_FRAMES; i++) {
		now += 500;
		n = t_firmware(hw, st, 8, &next_status);
		for (done = 0; done < n;) {
			r = t_tx_complete(hw, radio, st + done, n - done, T_BUDGET, 0, now);
			CHECK(r > 0 && r <= T_BUDGET, "tx_complete(%u left, budget %d): %d", n - done, T_BUDGET, r);
			done += r;
			calls++;
			max_pass = max_t(u32, max_pass, r);
		}
		if (i % 3 == 0) {
			ppdu.duration_us = 300;
			ppdu.n_users = 2;
			ppdu.users[0].peer_id = 1;
			ppdu.users[1].peer_id = 2;
			/* Every other record, a user naming no TID: charged too (to BE). */
			ppdu.users[1].tid = i % 6 ? 0 : 16;
			ppdu.users[0].rate.encoding = AIRTIME_RATE_HE;
			ppdu.users[0].rate.mcs = 7;
			ppdu.users[0].rate.nss = 1;
			ppdu.users[0].rate.bw = 2;
			r = RADIO_CALL(hw, airtime_ppdu_tx_stats(radio, &ppdu, now));
			CHECK(r == 2, "ppdu_tx_stats: %d users charged", r);
			ppdu.users[1].tid = 0;
			r = RADIO_CALL(hw, airtime_rx_duration(radio, 1, 100, NULL, now));
			CHECK(!r, "rx_duration: %d", r);
		}
		CHECK(!RADIO_CALL(hw, airtime_radio_get_stats(radio, &stats)), "get_stats");
		peak = max_t(u32, peak, stats.total_pending_us);
		if (!stats.outstanding_msdus) {
			/* Nothing in flight: a round on each txq with frames. */
			RADIO_CALL(hw, airtime_txq_wake(radio, 1, 0, 0, now));
			RADIO_CALL(hw, airtime_txq_wake(radio, 2, 0, 0, now));
		}
	}
	CHECK(hw->returned == T_FRAMES, "%u of %u frames handed back after %u polls", hw->returned, T_FRAMES, i);
	/* Each through tx_status_at(), with the index of the entry that finished it. */
	CHECK(hw->status_at == T_FRAMES, "%u of %u completed frames came back through tx_status_at()", hw->status_at,
	      T_FRAMES);
	CHECK(!hw->double_returns && !hw->bad_callbacks, "%u frames handed back twice, %u bad callbacks",
	      hw->double_returns, hw->bad_callbacks);
	for (i = 0; i < T_NUM_STATUS; i++)
		CHECK(hw->status_count[i], "no frame completed with status %u", i);
	CHECK(!RADIO_CALL(hw, airtime_radio_get_stats(radio, &stats)), "get_stats");
	CHECK(!stats.total_pending_us && !stats.outstanding_msdus && !stats.held_frames,
	      "after the drain: %u us pending, %u outstanding, %u held", stats.total_pending_us,
	      stats.outstanding_msdus, stats.held_frames);
	CHECK(peak > 0 && max_pass == T_BUDGET, "peak pending %u us, largest pass %u", peak, max_pass);
	r = t_txq_pending(hw, radio, &n, msg, len);
	CHECK(!r && !n, "after the drain: %s", r ? msg : "a txq still has airtime pending");

	/* Bad records change nothing. */
	ppdu.n_users = AIRTIME_PPDU_MAX_USERS + 1;
	r = RADIO_CALL(hw, airtime_ppdu_tx_stats(radio, &ppdu, now));
	CHECK(r == -EINVAL, "ppdu with 9 users: %d", r);
	ppdu.n_users = 1;
	mcs = ppdu.users[0].rate.mcs;
	ppdu.users[0].rate.mcs = 12;
	r = RADIO_CALL(hw, airtime_ppdu_tx_stats(radio, &ppdu, now));
	CHECK(r == -EINVAL, "HE MCS 12: %d", r);
	ppdu.users[0].rate.mcs = mcs;
	ppdu.users[0].reserved2 = 1;
	r = RADIO_CALL(hw, airtime_ppdu_tx_stats(radio, &ppdu, now));
	CHECK(r == -EINVAL, "a user's reserved2 set: %d", r);
	ppdu.users[0].reserved2 = 0;
	ppdu.users[0].rate.reserved = 1;
	r = RADIO_CALL(hw, airtime_ppdu_tx_stats(radio, &ppdu, now));
	CHECK(r == -EINVAL, "a rate's reserved set: %d", r);
	ppdu.users[0].rate.reserved = 0;
	tid = ppdu.users[0].tid;
	ppdu.users[0].tid = 17;
	r = RADIO_CALL(hw, airtime_ppdu_tx_stats(radio, &ppdu, now));
	CHECK(r == -EINVAL, "a user on TID 17: %d", r);
	ppdu.users[0].tid = tid;
	st[0].ring = AIRTIME_TCL_RINGS;
	r = t_tx_complete(hw, radio, st, 1, T_BUDGET, 0, now);
	CHECK(r == -EINVAL, "completion on ring 3: %d", r);
	r = RADIO_CALL(hw, airtime_rx_duration(radio, 9, 100, NULL, now));
	CHECK(r == -ENOENT, "rx_duration(unknown): %d", r);

	/* The debugfs texts. */
	r = RADIO_CALL(hw, airtime_debugfs_aql(radio, 1, text, 1024));
	CHECK(r > 0 && strstr(text, "AQL pending") && strstr(text, "VO\t\t4000\t\t8000"), "aql text (%d): %s", r,
	      text);
	r = RADIO_CALL(hw, airtime_debugfs_airtime(radio, 2, text, 1024));
	CHECK(r > 0 && strstr(text, "Weight: 512") && strstr(text, "TX: "), "airtime text (%d): %s", r, text);
	r = RADIO_CALL(hw, airtime_debugfs_airtime(radio, 1, text, 1024));
	CHECK(r > 0 && !strstr(text, "RX: 0 us"), "station 1 has no rx airtime (%d): %s", r, text);
	r = RADIO_CALL(hw, airtime_debugfs_dp_stats(radio, text, 1024));
	CHECK(r > 0 && strstr(text, "Pending tx MSDUs total: 0") && strstr(text, "Calibration samples: accepted 0"),
	      "dp_stats (%d): %s", r, text);
	r = RADIO_CALL(hw, airtime_debugfs_aql(radio, 1, text, 8));
	CHECK(r == -ENOSPC && strlen(text) == 7, "aql into 8 bytes: %d", r);
	r = RADIO_CALL(hw, airtime_debugfs_aql(radio, 9, text, 1024));
	CHECK(r == -ENOENT, "aql of an unknown peer: %d", r);

	/*
	 * Removal and reaping: a station with nothing in flight is drained at
	 * once; one with 8 frames in the hardware only once they completed, and
	 * each removed txq is released exactly once.
	 */
	for (i = 0; i < 8; i++)
		t_enqueue(&hw->txq[0], &hw->frames[i]);
	hw->returned = 0;
	r = RADIO_CALL(hw, airtime_txq_wake(radio, 1, 0, 1, now));
	CHECK(r == 8, "wake before removal pushed %d", r);
	CHECK(!RADIO_CALL(hw, airtime_sta_remove(radio, 2)), "sta_remove(2)");
	r = RADIO_CALL(hw, airtime_sta_remove(radio, 2));
	CHECK(r == -ENOENT, "sta_remove(2) again: %d", r);
	CHECK(hw->released[1] == 1 && hw->drained == 1 && hw->drained_peers == BIT(2),
	      "station 2 (idle) removed: txq released %u times, %u drained (peers 0x%x)", hw->released[1],
	      hw->drained, hw->drained_peers);
	CHECK(!RADIO_CALL(hw, airtime_sta_remove(radio, 1)), "sta_remove(1)");
	r = RADIO_CALL(hw, airtime_radio_reap(radio));
	CHECK(r == 0 && hw->released[0] == 1 && hw->drained == 1,
	      "station 1 with 8 frames in flight: reap %d, txq released %u times, %u drained", r, hw->released[0],
	      hw->drained);
	r = RADIO_CALL(hw, airtime_radio_reap(NULL));
	CHECK(r == -EFAULT, "reap(NULL): %d", r);
	n = t_firmware(hw, st, 8, &next_status);
	CHECK(n == 8, "station 1's frames taken by the firmware: %u", n);
	/*
	 * A stale entry in the middle (entry 0's again, as a driver that reads a
	 * descriptor twice would pass): it finishes nothing, and the entries after
	 * it keep their own indices for tx_status_at().
	 */
	memmove(&st[3], &st[2], (n - 2) * sizeof(st[0]));
	st[2] = st[0];
	n++;
	r = t_complete(hw, radio, st, n, now, &err);
	CHECK(r > 0 && hw->returned == 8, "completing station 1's frames and a stale entry: %d (%d), %u back", r, err,
	      hw->returned);
	r = RADIO_CALL(hw, airtime_radio_reap(radio));
	CHECK(r == 1 && hw->drained == 2 && hw->drained_peers == (BIT(1) | BIT(2)) && hw->released[0] == 1,
	      "reap after the completions: %d, %u drained (peers 0x%x)", r, hw->drained, hw->drained_peers);

	/* Teardown with frames in the hardware: handed back, txq and station too. */
	CHECK(!RADIO_CALL(hw, airtime_sta_add(radio, 3, 256)), "sta_add(3)");
	CHECK(!RADIO_CALL(hw, airtime_txq_add(radio, 3, 0, &hw->txq[0])), "txq_add(3, 0)");
	for (i = 0; i < 8; i++)
		t_enqueue(&hw->txq[0], &hw->frames[i]);
	hw->returned = 0;
	/* A new station, priced without a rate report: AQL may stop it before 8. */
	r = RADIO_CALL(hw, airtime_txq_wake(radio, 3, 0, 1, now));
	CHECK(r > 0 && r <= 8, "wake before teardown pushed %d", r);
	pushed = r;
	n = hw->status_at;
	r = airtime_radio_destroy(radio);
	radio = NULL;
	CHECK(r == pushed && hw->returned == pushed && hw->status_count[AIRTIME_TX_REMOVED] >= pushed,
	      "destroy handed back %d of %u frames in the hardware (%u seen)", r, pushed, hw->returned);
	CHECK(hw->status_at == n, "destroy handed %u frames to tx_status_at(), not tx_status()", hw->status_at - n);
	CHECK(hw->released[0] == 2 && hw->drained == 3 && (hw->drained_peers & BIT(3)),
	      "destroy: txq released %u times, %u stations drained", hw->released[0], hw->drained);
	CHECK(!hw->double_returns && !hw->bad_callbacks, "%u frames handed back twice, %u bad callbacks",
	      hw->double_returns, hw->bad_callbacks);

	done = r;	/* the frames destroy handed back, for the message */

	/* The per-turn budget, on a radio of its own; it writes its own failure. */
	if (t_turn_budget(&turn_rounds, msg, len)) {
		ret = 1;
		goto out;
	}
	/* Gated rounds, on a radio of its own; it writes its own failure. */
	if (t_gated_rounds(msg, len)) {
		ret = 1;
		goto out;
	}

	snprintf(msg, len,
		 "%u frames via C HAL: %u NAPI calls (budget %d, max %u), statuses %u/%u/%u/%u/%u/%u, peak %u us (%u us a frame), 2 txqs + 3 stations reaped, destroy returned %u; turn budget %u: %u frames in %u rounds",
		 T_FRAMES, calls, T_BUDGET, max_pass, hw->status_count[0], hw->status_count[1], hw->status_count[2],
		 hw->status_count[3], hw->status_count[4] - pushed, hw->status_count[5], peak, charge, done,
		 T_TURN_FRAMES, 2 * T_TURN_QUEUED, turn_rounds);
out:
	if (radio)
		airtime_radio_destroy(radio);
	kfree(text);
	kfree(hw);
	return ret;
}

/* Frames of txq[0] (the station's) and txq[1] (the multicast one) handed back. */
static void t_done_per_txq(struct t_hw *hw, u32 done[2])
{
	u32 i;

	done[0] = done[1] = 0;
	for (i = 0; i < T_FRAMES; i++)
		done[i % 2] += hw->frames[i].done;
}

#define T_MCAST_LIMIT_US	4000	/* BE's multicast budget in t_mcast_budget() */

/* What t_mcast_budget() measured, or why it failed. */
struct t_mcast_budget {
	u32 first_round;	/* frames the first round sent */
	u32 charge_us;		/* one frame's charge */
	u32 peak_us;		/* most multicast airtime in flight */
	char why[96];
};

#define MB_CHECK(cond, fmt, ...) do {						\
	if (!(cond)) {								\
		snprintf(mb->why, sizeof(mb->why), "line %d: " fmt, __LINE__, ##__VA_ARGS__); \
		return 1;							\
	}									\
} while (0)

/*
 * The multicast txq @mc again, its 48 frames now priced at 6 Mbit/s and
 * charged to BE's multicast budget of T_MCAST_LIMIT_US: a round sends frames
 * until the budget is reached and no more (the frame that reaches it goes,
 * the next waits), the stations' pending airtime stays 0, the per-txq query
 * agrees with the per-AC one, in flight never exceeds the budget by more than
 * one frame, and everything completes with nothing left pending.
 */
static int t_mcast_budget(struct t_hw *hw, struct airtime_radio *radio, u64 mc, u64 *now, u32 *next_status,
			  struct t_mcast_budget *mb)
{
	static struct airtime_tx_status st[AIRTIME_TCL_RINGS * 8];
	struct airtime_rate rate = { .encoding = AIRTIME_RATE_OFDM, .legacy_100kbps = 60 };
	struct airtime_radio_stats stats;
	u32 i, n, p, q, base = hw->returned;
	int r, why = 0;

	r = RADIO_CALL(hw, airtime_set_multicast_limit_us(radio, AIRTIME_NUM_ACS, 1000));
	MB_CHECK(r == -EINVAL, "limit on AC 4: %d", r);
	r = RADIO_CALL(hw, airtime_multicast_pending_us(radio, AIRTIME_AC_BE, NULL));
	MB_CHECK(r == -EFAULT, "pending into NULL: %d", r);
	r = RADIO_CALL(hw, airtime_mcast_txq_aql_pending_us(radio, mc ^ (1ULL << 32), &p));
	MB_CHECK(r == -ENOENT, "pending of a forged handle: %d", r);
	rate.encoding = AIRTIME_RATE_NONE;
	r = RADIO_CALL(hw, airtime_set_multicast_rate(radio, &rate));
	MB_CHECK(r == -EINVAL, "multicast rate 'none': %d", r);
	rate.encoding = AIRTIME_RATE_OFDM;
	MB_CHECK(!RADIO_CALL(hw, airtime_set_multicast_rate(radio, &rate)), "multicast rate");
	MB_CHECK(!RADIO_CALL(hw, airtime_set_multicast_limit_us(radio, AIRTIME_AC_BE, T_MCAST_LIMIT_US)), "limit");

	for (i = 1; i < T_FRAMES; i += 2)
		t_enqueue(&hw->txq[1], &hw->frames[i]);
	r = RADIO_CALL(hw, airtime_mcast_txq_wake(radio, mc, 0, *now));
	MB_CHECK(r > 0 && r < T_FRAMES / 2, "first budgeted round pushed %d", r);
	mb->first_round = r;
	MB_CHECK(!RADIO_CALL(hw, airtime_multicast_pending_us(radio, AIRTIME_AC_BE, &p)), "pending");
	MB_CHECK(!RADIO_CALL(hw, airtime_mcast_txq_aql_pending_us(radio, mc, &q)), "txq pending");
	MB_CHECK(p == q && p % r == 0, "BE multicast pending %u, the txq's %u, %d frames", p, q, r);
	mb->charge_us = p / r;
	MB_CHECK(p >= T_MCAST_LIMIT_US && p - mb->charge_us < T_MCAST_LIMIT_US,
		 "%d frames of %u us in flight against a %u us budget", r, mb->charge_us, T_MCAST_LIMIT_US);
	MB_CHECK(!RADIO_CALL(hw, airtime_txq_aql_pending_us(radio, 1, 0, &q)) && !q, "station 1 pending %u", q);
	MB_CHECK(!RADIO_CALL(hw, airtime_radio_get_stats(radio, &stats)) && !stats.total_pending_us,
		 "multicast counted as unicast: %u us", stats.total_pending_us);
	MB_CHECK(!RADIO_CALL(hw, airtime_radio_check(radio)), "invariants with multicast charged");
	r = RADIO_CALL(hw, airtime_mcast_txq_wake(radio, mc, 0, *now));
	MB_CHECK(r == 0, "a wake over the budget pushed %d", r);

	/* The completions release the budget and run the next rounds. */
	for (i = 0; i < 400 && hw->returned < base + T_FRAMES / 2; i++) {
		*now += 500;
		n = t_firmware(hw, st, 8, next_status);
		MB_CHECK(t_complete(hw, radio, st, n, *now, &why) >= 0, "tx_complete(%u): %d", n, why);
		MB_CHECK(!RADIO_CALL(hw, airtime_multicast_pending_us(radio, AIRTIME_AC_BE, &p)), "pending");
		MB_CHECK(p < T_MCAST_LIMIT_US + mb->charge_us, "%u us of multicast in flight", p);
		mb->peak_us = max(mb->peak_us, p);
		if (!n)
			RADIO_CALL(hw, airtime_mcast_txq_wake(radio, mc, 0, *now));
	}
	MB_CHECK(hw->returned == base + T_FRAMES / 2, "%u of %u frames back", hw->returned - base, T_FRAMES / 2);
	MB_CHECK(!RADIO_CALL(hw, airtime_multicast_pending_us(radio, AIRTIME_AC_BE, &p)) && !p, "%u us left", p);
	MB_CHECK(!RADIO_CALL(hw, airtime_radio_check_idle(radio)), "invariants after the budgeted drain");
	MB_CHECK(!RADIO_CALL(hw, airtime_set_multicast_rate(radio, NULL)), "multicast uncharged again");
	return 0;
}

/**
 * airtime_capi_mcast() - the C self-test of station-less (multicast) txqs
 * @msg: buffer for the result, always NUL-terminated
 * @len: size of @msg, at least 1
 *
 * A station txq and a station-less one on the same TID (BE), 48 frames each,
 * through the t_* HAL above: the multicast txq's errors and handle checks; its
 * frames go out without a peer and without a charge (pending airtime stays 0
 * while only they are in the hardware); both txqs progress together (neither
 * starves the other); everything completes, pending 0, invariants hold;
 * removal refuses the handle afterwards.
 *
 * Context: Process context (module init).
 * Return: 0 on success, non-zero on failure.
 */
int airtime_capi_mcast(char *msg, size_t len)
{
	static struct airtime_tx_status st[AIRTIME_TCL_RINGS * 8];
	struct airtime_radio_config cfg = {};
	struct airtime_radio_stats stats;
	struct airtime_radio *radio = NULL;
	struct t_hw *hw;
	struct t_mcast_budget mb = {};
	u64 now = 1000, mc = 0, bogus = 0;
	u32 i, n, next_status = 0, mcast_first, at_half[2] = { 0, 0 }, fin[2];
	int ret = 0, err = 0, r;

	if (!msg || !len)
		return -EFAULT;
	msg[0] = '\0';
	hw = t_hw_alloc(msg, len, &cfg);
	if (!hw)
		return -ENOMEM;
	radio = airtime_radio_create(&cfg, &err);
	CHECK(radio, "create: err %d", err);

	CHECK(!RADIO_CALL(hw, airtime_sta_add(radio, 1, 256)), "sta_add(1)");
	CHECK(!RADIO_CALL(hw, airtime_txq_add(radio, 1, 0, &hw->txq[0])), "txq_add(1, 0)");
	r = RADIO_CALL(hw, airtime_mcast_txq_add(radio, 17, &hw->txq[1], &mc));
	CHECK(r == -EINVAL, "mcast_txq_add(tid 17): %d", r);
	r = RADIO_CALL(hw, airtime_mcast_txq_add(radio, 0, NULL, &mc));
	CHECK(r == -EFAULT, "mcast_txq_add(NULL txq): %d", r);
	r = RADIO_CALL(hw, airtime_mcast_txq_add(radio, 0, &hw->txq[1], NULL));
	CHECK(r == -EFAULT, "mcast_txq_add(NULL handle): %d", r);
	CHECK(!RADIO_CALL(hw, airtime_mcast_txq_add(radio, 0, &hw->txq[1], &mc)), "mcast_txq_add(tid 0)");
	/* Same slot, another generation: refused, never aliased. */
	bogus = mc ^ (1ULL << 32);
	r = RADIO_CALL(hw, airtime_mcast_txq_wake(radio, bogus, 0, now));
	CHECK(r == -ENOENT, "wake with a forged handle: %d", r);
	r = RADIO_CALL(hw, airtime_mcast_txq_remove(radio, bogus));
	CHECK(r == -ENOENT, "remove with a forged handle: %d", r);

	/* 48 frames each: even frames the station's, odd ones multicast. */
	for (i = 0; i < T_FRAMES; i++)
		t_enqueue(&hw->txq[i % 2], &hw->frames[i]);

	/* Multicast alone first: sent without a peer, charged nothing. */
	r = RADIO_CALL(hw, airtime_mcast_txq_wake(radio, mc, 0, now));
	CHECK(r > 0, "first multicast round pushed %d", r);
	mcast_first = r;
	CHECK(hw->no_peer_descs == mcast_first, "%u descriptors without a peer, %u multicast frames pushed",
	      hw->no_peer_descs, mcast_first);
	CHECK(!RADIO_CALL(hw, airtime_radio_get_stats(radio, &stats)), "get_stats");
	CHECK(stats.outstanding_msdus == mcast_first && !stats.total_pending_us,
	      "multicast in flight: %u outstanding, %u us pending (must be uncharged)", stats.outstanding_msdus,
	      stats.total_pending_us);
	CHECK(!RADIO_CALL(hw, airtime_radio_check_idle(radio)), "invariants with multicast in flight");
	r = RADIO_CALL(hw, airtime_txq_wake(radio, 1, 0, 0, now));
	CHECK(r >= 0, "station wake: %d", r);

	/* The firmware completes; rounds start from the completions. */
	for (i = 0; i < 400 && hw->returned < T_FRAMES; i++) {
		now += 500;
		n = t_firmware(hw, st, 8, &next_status);
		r = t_complete(hw, radio, st, n, now, &err);
		CHECK(r >= 0, "tx_complete(%u): %d", n, err);
		if (hw->returned >= T_FRAMES / 2 && !at_half[0] && !at_half[1])
			t_done_per_txq(hw, at_half);
		CHECK(!RADIO_CALL(hw, airtime_radio_check_idle(radio)), "invariants after poll %u", i);
		CHECK(!RADIO_CALL(hw, airtime_radio_get_stats(radio, &stats)), "get_stats");
		if (!stats.outstanding_msdus) {
			RADIO_CALL(hw, airtime_mcast_txq_wake(radio, mc, 0, now));
			RADIO_CALL(hw, airtime_txq_wake(radio, 1, 0, 0, now));
		}
	}
	t_done_per_txq(hw, fin);
	CHECK(hw->returned == T_FRAMES && fin[0] == T_FRAMES / 2 && fin[1] == T_FRAMES / 2,
	      "%u of %u frames handed back (station %u, multicast %u) after %u polls", hw->returned, T_FRAMES,
	      fin[0], fin[1], i);
	CHECK(!hw->double_returns && !hw->bad_callbacks, "%u double returns, %u bad callbacks", hw->double_returns,
	      hw->bad_callbacks);
	CHECK(hw->no_peer_descs == T_FRAMES / 2, "%u descriptors without a peer, %u multicast frames",
	      hw->no_peer_descs, T_FRAMES / 2);
	/*
	 * Neither starves the other: of the frames completed by half time, after
	 * the multicast txq's head start, each txq has at least a quarter.
	 */
	n = at_half[0] + at_half[1] - mcast_first;
	CHECK(at_half[0] * 4 >= n && (at_half[1] - mcast_first) * 4 >= n,
	      "at half time: station %u, multicast %u frames done (%u before the station woke): starved",
	      at_half[0], at_half[1], mcast_first);
	CHECK(!RADIO_CALL(hw, airtime_radio_get_stats(radio, &stats)), "get_stats");
	CHECK(!stats.total_pending_us && !stats.outstanding_msdus && !stats.held_frames,
	      "after the drain: %u us pending, %u outstanding, %u held", stats.total_pending_us,
	      stats.outstanding_msdus, stats.held_frames);

	/* The multicast budget: priced at 6 Mbit/s, BE's budget bounds them in flight. */
	r = t_mcast_budget(hw, radio, mc, &now, &next_status, &mb);
	CHECK(!r, "multicast budget: %s", mb.why);

	/* Removal: the handle is refused afterwards, the txq released once. */
	CHECK(!RADIO_CALL(hw, airtime_mcast_txq_remove(radio, mc)), "mcast_txq_remove");
	CHECK(hw->released[1] == 1 && !hw->released[0], "mcast_txq_remove released %u/%u", hw->released[0],
	      hw->released[1]);
	r = RADIO_CALL(hw, airtime_mcast_txq_remove(radio, mc));
	CHECK(r == -ENOENT, "mcast_txq_remove again: %d", r);
	r = RADIO_CALL(hw, airtime_mcast_txq_wake(radio, mc, 0, now));
	CHECK(r == -ENOENT, "wake after removal: %d", r);
	CHECK(!RADIO_CALL(hw, airtime_radio_check_idle(radio)), "invariants after removal");
	r = airtime_radio_destroy(radio);
	radio = NULL;
	CHECK(r == 0, "destroy handed back %d frames", r);

	snprintf(msg, len,
		 "%u station + %u multicast frames, %u multicast in the first round uncharged, at half time %u/%u done, pending 0; budget %u us: %u frames of %u us per round, peak %u us",
		 T_FRAMES / 2, T_FRAMES / 2, mcast_first, at_half[0], at_half[1], T_MCAST_LIMIT_US, mb.first_round,
		 mb.charge_us, mb.peak_us);
out:
	if (radio)
		airtime_radio_destroy(radio);
	kfree(hw);
	return ret;
}

/* Frames in the hardware, read once the pushes counter says @n were written. */
static bool t_pushed(struct t_hw *hw, int n)
{
	return atomic_read_acquire(&hw->pushes) >= n;
}

#define T_WORK_WAIT_US	(5 * 1000 * 1000)	/* how long the module's work may take */

/**
 * airtime_capi_deferred_work() - a concurrent radio without rounds_deferred()
 *	never strands a deferral
 * @msg: buffer for the result, always NUL-terminated
 * @len: size of @msg, at least 1
 *
 * A deferral is forced from one context, deterministically: while hw->flicker
 * counts down, the ring reads full at each round's first check and has room
 * at the re-read that follows (a ring a completion frees each time right
 * after the round read it full). The wake's round and its two follow-up
 * rounds (the adapter's bound for a ring freed after it was read full) all
 * find it full, so the wake pushes nothing, leaves BE waiting
 * (airtime_rounds_waiting()) and counts one deferral, exactly as a round
 * whose follow-up rounds for other contexts' overlapping rounds ran out
 * would (the same state, announced the same way). Nothing is in flight and
 * the test makes no other call: only the module's own work may send the
 * frames. With 12 counts, the work's first run is deferred the same way and
 * must queue itself again; its next run sends the four frames, from a
 * workqueue worker with BHs off, within T_WORK_WAIT_US; then nothing waits.
 *
 * Then the same on a radio whose driver gives the op: it is called with BE
 * from the wake, and the module's work is not used (nothing is sent until
 * the driver's own work, here the test, runs the waiting rounds).
 *
 * Context: Process context (module init); sleeps while it waits.
 * Return: 0 on success, non-zero on failure.
 */
int airtime_capi_deferred_work(char *msg, size_t len)
{
	struct airtime_radio_counters c;
	struct airtime_hal_ops ops;
	struct airtime_radio_config cfg;
	struct airtime_radio *radio = NULL;
	struct t_hw *hw;
	ktime_t t0;
	s64 work_us, waited_us;
	int ret = 0, err = 0, r, waiting;

	if (!msg || !len)
		return -EFAULT;
	msg[0] = '\0';
	hw = t_hw_alloc(msg, len, &cfg);
	if (!hw)
		return -ENOMEM;
	ops = t_ops;
	ops.rounds_deferred = NULL;
	cfg.ops = &ops;
	radio = airtime_radio_create(&cfg, &err);
	CHECK(radio, "create without rounds_deferred(): err %d", err);
	r = t_station_with_four(hw, radio, 1, 0);
	CHECK(!r, "station 1 and its txq: %d", r);

	/* The wake, as mac80211 calls it: BHs off, so the work cannot run on this CPU yet. */
	hw->flicker = 12;
	t0 = ktime_get();
	local_bh_disable();
	r = RADIO_CALL(hw, airtime_txq_wake(radio, 1, 0, 0, div_u64(ktime_get_ns(), NSEC_PER_USEC)));
	waiting = RADIO_CALL(hw, airtime_rounds_waiting(radio));
	local_bh_enable();
	CHECK(r == 0, "the wake's rounds read the ring full, yet it pushed %d", r);
	CHECK(waiting == BIT(AIRTIME_AC_BE), "after the deferred wake, ACs waiting %#x, not BE", waiting);
	CHECK(!RADIO_CALL(hw, airtime_radio_get_counters(radio, &c)) && c.rounds_deferred >= 1,
	      "the wake's rounds were not deferred (%llu)", c.rounds_deferred);

	/* No poll, no completion, no call: the module's work must send them. */
	while (!t_pushed(hw, 4) && ktime_us_delta(ktime_get(), t0) < T_WORK_WAIT_US)
		usleep_range(200, 400);
	work_us = ktime_us_delta(ktime_get(), t0);
	CHECK(t_pushed(hw, 4), "stranded: %d of 4 frames sent %lld us after the deferral, ACs waiting %#x",
	      atomic_read(&hw->pushes), work_us, RADIO_CALL(hw, airtime_rounds_waiting(radio)));
	CHECK(atomic_read(&hw->work_pushes) == 4, "%d of the 4 frames pushed by a worker with BHs off",
	      atomic_read(&hw->work_pushes));
	CHECK(!atomic_read(&hw->wrong_ring), "%d callbacks of the work named a ring not of its CPU",
	      atomic_read(&hw->wrong_ring));
	CHECK(!hw->txq[0].count && !hw->flicker, "txq holds %u, %u flicker counts left", hw->txq[0].count,
	      hw->flicker);
	waiting = RADIO_CALL(hw, airtime_rounds_waiting(radio));
	CHECK(waiting == 0, "ACs %#x still waiting after the work sent the frames", waiting);
	CHECK(!RADIO_CALL(hw, airtime_radio_get_counters(radio, &c)) && c.rounds_deferred == 2 &&
	      c.enqueued == 4, "deferrals %llu (the wake's and the work's first run's: 2), descriptors %llu",
	      c.rounds_deferred, c.enqueued);
	/* Destroy stops the work first, then hands back the four frames in the hardware. */
	r = airtime_radio_destroy(radio);
	radio = NULL;
	CHECK(r == 4, "destroy handed back %d of 4 frames", r);

	/* With the op: the driver is told, and the module's work stays out of it. */
	t_config(hw, &cfg);
	ops = t_ops;
	ops.rounds_deferred = t_rounds_deferred_counted;
	cfg.ops = &ops;
	radio = airtime_radio_create(&cfg, &err);
	CHECK(radio, "create with rounds_deferred(): err %d", err);
	/* Peer 2: peer 1 was drained once already (by the destroy above). */
	r = t_station_with_four(hw, radio, 2, 4);
	CHECK(!r, "station 2 and its txq: %d", r);
	atomic_set(&hw->pushes, 0);
	atomic_set(&hw->work_pushes, 0);
	hw->flicker = 6;
	t0 = ktime_get();
	local_bh_disable();
	r = RADIO_CALL(hw, airtime_txq_wake(radio, 2, 0, 0, div_u64(ktime_get_ns(), NSEC_PER_USEC)));
	local_bh_enable();
	CHECK(r == 0 && atomic_read(&hw->deferred_calls) == 1 && atomic_read(&hw->deferred_mask) == BIT(AIRTIME_AC_BE),
	      "with the op: pushed %d, op called %d times with %#x", r, atomic_read(&hw->deferred_calls),
	      atomic_read(&hw->deferred_mask));
	/* Longer than the work took above: it would have sent them by now. */
	waited_us = max_t(s64, 2 * work_us, 20000);
	while (ktime_us_delta(ktime_get(), t0) < waited_us)
		usleep_range(1000, 2000);
	waiting = RADIO_CALL(hw, airtime_rounds_waiting(radio));
	CHECK(!t_pushed(hw, 1) && waiting == BIT(AIRTIME_AC_BE),
	      "with the op, %d frames went out without the driver's work (ACs waiting %#x)",
	      atomic_read(&hw->pushes), waiting);
	/* The driver's work item. */
	local_bh_disable();
	r = RADIO_CALL(hw, airtime_run_waiting_rounds(radio, 0, div_u64(ktime_get_ns(), NSEC_PER_USEC)));
	local_bh_enable();
	waiting = RADIO_CALL(hw, airtime_rounds_waiting(radio));
	CHECK(r == 4 && waiting == 0 && atomic_read(&hw->work_pushes) == 0,
	      "the driver's run of the waiting rounds: pushed %d, ACs waiting %#x, %d by a worker", r, waiting,
	      atomic_read(&hw->work_pushes));
	r = airtime_radio_destroy(radio);
	radio = NULL;
	CHECK(r == 4, "destroy handed back %d of 4 frames", r);
	CHECK(!hw->bad_callbacks && !hw->double_returns, "%u bad callbacks, %u frames handed back twice",
	      hw->bad_callbacks, hw->double_returns);
	snprintf(msg, len,
		 "no op: the wake and the work's first run deferred, the work's next run sent 4 frames %lld us after the wake; with the op: 1 call, 0 frames sent in %lld us until the driver's run",
		 work_us, waited_us);
out:
	if (radio)
		airtime_radio_destroy(radio);
	kfree(hw);
	return ret;
}

/* A deferral from a wake with BHs off, as mac80211 calls it: the work cannot run on this CPU before it returns. */
static int w_wake(struct airtime_radio *radio, u16 peer)
{
	int r;

	local_bh_disable();
	r = airtime_txq_wake(radio, peer, 0, 0, div_u64(ktime_get_ns(), NSEC_PER_USEC));
	local_bh_enable();
	return r;
}

/* A fresh @hw and a radio without rounds_deferred(), station @peer with four frames queued. */
static struct airtime_radio *w_radio(struct t_hw *hw, struct airtime_hal_ops *ops, u16 peer, int *err)
{
	struct airtime_radio_config cfg;
	struct airtime_radio *radio;

	memset(hw, 0, sizeof(*hw));
	t_config(hw, &cfg);
	*ops = t_ops;
	ops->rounds_deferred = NULL;
	cfg.ops = ops;
	radio = airtime_radio_create(&cfg, err);
	if (radio && t_station_with_four(hw, radio, peer, 0)) {
		airtime_radio_destroy(radio);
		*err = -EINVAL;
		radio = NULL;
	}
	return radio;
}

/*
 * Phase 6's window: a wake whose rounds are deferred, made inside a resume.
 * The deferral is read from the radio's counter, not from the waiting ACs:
 * with full preemption the work its kick queued on this CPU may run (and
 * clear them) as soon as the wake re-enables BHs.
 */
struct w_window {
	struct airtime_radio *radio;
	u16 peer;
	int calls, ret, err;
	u64 deferred;
};

static void w_window_wake(void *arg)
{
	struct w_window *win = arg;
	struct airtime_radio_counters before, after;

	win->calls++;
	win->err = airtime_radio_get_counters(win->radio, &before);
	win->ret = w_wake(win->radio, win->peer);
	win->err |= airtime_radio_get_counters(win->radio, &after);
	win->deferred = after.rounds_deferred - before.rounds_deferred;
}

/* The shim's backoff cap, in jiffies (AIRTIME_WORK_BACKOFF_MAX there). */
static unsigned long w_backoff_cap(void)
{
	return max_t(unsigned long, msecs_to_jiffies(AIRTIME_WORK_BACKOFF_MAX_MS), 1);
}

/*
 * The most runs a work whose runs all push nothing and are deferred again
 * may make in @ms milliseconds after its first: the first at once, then
 * after 1, 2, 4, ... jiffies, capped at w_backoff_cap(), plus 2 for timer
 * and sleep granularity. Without the backoff it re-queues at once and makes
 * thousands. The runs compared with it are counted by one counter for every
 * work (airtime_rounds_work_runs()): fine while the self-tests run one at a
 * time and no other radio's work runs.
 */
static long w_backoff_bound(s64 ms)
{
	unsigned long budget = msecs_to_jiffies(ms), t = 0, d = 1, cap = w_backoff_cap();
	long runs = 1;

	while (t + d <= budget) {
		t += d;
		runs++;
		d = min(d * 2, cap);
	}
	return runs + 2;
}

/*
 * A wake made from a kthread bound to another CPU than the test's: the kick
 * queues the work on that CPU's pool (the workqueue is per-CPU), so its run
 * (BHs off, not preemptible) does not keep the test thread, pinned to its
 * own CPU, from watching it.
 */
struct w_waker {
	struct task_struct *task;	/* until w_waker_stop() */
	struct airtime_radio *radio;
	u16 peer;
	int ret;			/* the wake's */
	ktime_t at;			/* when the wake returned */
	struct completion done;
};

static int w_waker_fn(void *arg)
{
	struct w_waker *k = arg;

	k->ret = w_wake(k->radio, k->peer);
	k->at = ktime_get();
	complete(&k->done);
	/* Wait for kthread_stop(): the test stops it when it no longer matters. */
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

/* Makes the wake on @cpu and waits until it returned (k->ret, k->at); 0 or -errno. */
static int w_wake_on(struct w_waker *k, struct airtime_radio *radio, u16 peer, unsigned int cpu)
{
	struct task_struct *t;

	k->radio = radio;
	k->peer = peer;
	init_completion(&k->done);
	t = kthread_create(w_waker_fn, k, "airtime_waker/%u", cpu);
	if (IS_ERR(t))
		return PTR_ERR(t);
	kthread_bind(t, cpu);
	k->task = t;
	wake_up_process(t);
	wait_for_completion(&k->done);
	return 0;
}

static void w_waker_stop(struct w_waker *k)
{
	if (k->task)
		kthread_stop(k->task);
	k->task = NULL;
}

/* Tries at a quiesce or destroy that begins while the work's run is in progress. */
#define W_STOP_TRIES	8

static int w_calls_during(struct t_hw *hw, unsigned int ms);

/*
 * One try of phase 3 of airtime_capi_work_control(): a fresh radio whose
 * work's first run stalls 30 ms in tcl_free() (BHs off), on @cpu (the wake
 * that kicks it runs there); the test thread, on another CPU, sees the
 * stall begin and quiesces the radio (@destroy false) or destroys it. The
 * stop must return only after the stall ended, and no HAL call may come in
 * the next 30 ms. *@early_us: how long before the stall's end the stop
 * began (stall_end - stop_start; not positive: it began too late to test
 * anything). *@wrong: plus the work's callbacks naming a ring not of its CPU.
 * Return: 0 if tested and passed; 1 if the stop began too late (try again);
 * -1 on a failure, described in @msg.
 */
static int w_stop_during_run(struct t_hw *hw, struct airtime_hal_ops *ops, unsigned int cpu, bool destroy,
			     s64 *early_us, int *wrong, char *msg, size_t len)
{
	const char *what = destroy ? "destroy" : "quiesce";
	struct w_waker k = { 0 };
	struct airtime_radio *radio;
	int err = 0, r, calls, ret = -1;
	ktime_t t0;
	s64 start;

	radio = w_radio(hw, ops, 3, &err);
	if (!radio) {
		snprintf(msg, len, "phase 3: create: err %d", err);
		return -1;
	}
	hw->flicker = 1U << 30;
	hw->stall_ms = 30;
	r = w_wake_on(&k, radio, 3, cpu);
	if (r || k.ret) {
		snprintf(msg, len, "phase 3: the wake on CPU %u: %d, pushed %d", cpu, r, k.ret);
		goto out;
	}
	t0 = ktime_get();
	while (!atomic_read(&hw->stalled) && ktime_us_delta(ktime_get(), t0) < T_WORK_WAIT_US)
		usleep_range(200, 400);
	if (!atomic_read(&hw->stalled)) {
		snprintf(msg, len, "phase 3: the work did not run");
		goto out;
	}
	start = ktime_get_ns();
	if (destroy) {
		r = airtime_radio_destroy(radio);
		radio = NULL;
	} else {
		r = airtime_radio_quiesce(radio);
	}
	/* The stall ended (stall_ms cleared after it) before the stop returned. */
	if (r || READ_ONCE(hw->stall_ms)) {
		snprintf(msg, len, "phase 3: %s returned %d with the work's run still in progress", what, r);
		goto out;
	}
	calls = w_calls_during(hw, 30);
	if (calls) {
		snprintf(msg, len, "phase 3: %d HAL calls after %s", calls, what);
		goto out;
	}
	*early_us = div_s64(atomic64_read(&hw->stall_end) - start, NSEC_PER_USEC);
	ret = *early_us > 0 ? 0 : 1;
out:
	w_waker_stop(&k);
	if (radio)
		airtime_radio_destroy(radio);
	*wrong += atomic_read(&hw->wrong_ring);
	return ret;
}

/* HAL calls over @ms milliseconds from now: none may come from a stopped work. */
static int w_calls_during(struct t_hw *hw, unsigned int ms)
{
	int before = atomic_read(&hw->hal_calls);

	msleep(ms);
	return atomic_read(&hw->hal_calls) - before;
}

/**
 * airtime_capi_work_control() - the module's rounds work stops, backs off
 *	and restarts as documented
 * @msg: buffer for the result, always NUL-terminated
 * @len: size of @msg, at least 1
 *
 * Each phase has a radio without rounds_deferred() and four frames queued.
 *
 * 1. No progress, forever: the ring reads full at each round's first check
 *    and free at the re-read (hw->flicker), so every run is deferred again
 *    and pushes nothing. Over about 200 ms the work runs at most
 *    w_backoff_bound() times (without the backoff: thousands).
 *    airtime_radio_check_idle() in the middle of that loop returns 0, and
 *    the work runs again after it (it was re-kicked: rounds wait). Destroy
 *    during the loop returns, and no HAL call comes after it.
 * 2. msdu_insert() failing (-ENOMEM) while the ring reads free: deferred,
 *    nothing pushed, the runs bounded the same way; once inserts succeed
 *    again a backoff run (at most AIRTIME_WORK_BACKOFF_MAX_MS later) sends
 *    the four frames.
 * 3. Quiesce, then (on another radio) destroy, while a run is in progress
 *    (the work's tcl_free() busy-waits 30 ms, BHs off): each returns only
 *    after that run's stall ended, and no HAL call comes after it
 *    (w_stop_during_run()). The wake is made on another CPU than the test
 *    thread's (pinned to its own), so the run is there and the test sees it
 *    begin while it lasts; a try counts only if the stop began before the
 *    stall ended (stop start < stall_end, both ktime_get_ns()): else, the
 *    test thread having seen the stall too late, it is made again, up to
 *    W_STOP_TRIES times, then FAILs (it tested nothing). Quiesce is the
 *    sharper check of the hold's cancel_delayed_work_sync(): with a plain
 *    cancel_delayed_work() destroy was still seen to return after the stall
 *    (taking the run's txq apart waited for the round), quiesce was not.
 * 4. Quiesce during the loop (twice: idempotent): no HAL call from the work
 *    after it returns while three more wakes defer (they wait in
 *    airtime_rounds_waiting()); resume, with the ring fine again, runs the
 *    work, which sends the four frames.
 * 5. A deferral cuts a backoff short: refused inserts until two runs come a
 *    full backoff cap (AIRTIME_WORK_BACKOFF_MAX_MS) apart; right after a
 *    run (its timer armed for the whole cap), inserts work again and a wake
 *    on the other CPU defers (hw->flicker: three rounds read the ring full
 *    first). Exactly one run must begin between the wake and the last push
 *    (hw->push_runs: the pusher is a new run, not the backoff run still
 *    going), and that push (hw->push_ns, in the HAL) must come before 3/4
 *    of the cap after the test saw that backoff run begin (without the
 *    kick's cut: at the timer, about the whole cap later). Neither figure
 *    includes scheduling delays after the wake, so a stalled vCPU does not
 *    fail it.
 * 6. A deferral between resume's two steps: on a quiesced radio with nothing
 *    waiting, airtime_radio_resume_rounds() clears the hold, and then (the
 *    shim's window, airtime_rounds_work_set_window()) a wake is deferred
 *    (hw->flicker: its three rounds read the ring full first), before the
 *    resume reads the waiting ACs. That deferral found no hold, so its kick
 *    queued the work, which sends the four frames. A resume that read the
 *    waiting ACs before it released the hold would see none, and the
 *    deferral's kick would find the hold: nothing would run the rounds
 *    (build.sh's weakened variant, which the boot test proves this phase
 *    catches).
 * Phases 3 and 5 need two CPUs online; with one they are skipped, and the
 * RESULT line says so. In all phases, every callback of the work names the
 * ring of the CPU it runs on (the work passes smp_processor_id()).
 *
 * Context: Process context (module init); sleeps.
 * Return: 0 on success, non-zero on failure.
 */
int airtime_capi_work_control(char *msg, size_t len)
{
	struct airtime_radio_counters c;
	struct airtime_hal_ops ops;
	struct airtime_radio *radio = NULL;
	struct w_waker waker = { 0 };
	struct w_window window = { 0 };
	cpumask_var_t saved_mask;
	bool pinned = false;
	unsigned int cpu_test, cpu_wake;
	struct t_hw *hw;
	ktime_t t0, t1, t_run;
	s64 ms, ms2, idle_ms, early_us[2] = { 0, 0 }, gap_ms = 0, kick_us = 0, push_ms = 0, window_us;
	long runs, runs2, runs5, runs_after_check, bound, bound2;
	int ret = 0, err = 0, r, waiting, calls, wrong = 0, tries[2] = { 0, 0 }, i;

	if (!msg || !len)
		return -EFAULT;
	msg[0] = '\0';
	hw = kzalloc(sizeof(*hw), GFP_KERNEL);
	if (!hw) {
		snprintf(msg, len, "no memory for the test");
		return -ENOMEM;
	}
	if (!alloc_cpumask_var(&saved_mask, GFP_KERNEL)) {
		kfree(hw);
		snprintf(msg, len, "no memory for the test");
		return -ENOMEM;
	}
	/*
	 * The test thread stays on one CPU; the wakes of phases 3 and 5 run on
	 * another. Saved: its own affinity, cpus_mask (cpus_ptr may point at a
	 * one-CPU mask under migrate_disable()).
	 */
	cpumask_copy(saved_mask, &current->cpus_mask);
	cpu_test = raw_smp_processor_id();
	cpu_wake = cpumask_any_but(cpu_online_mask, cpu_test);
	if (cpu_wake < nr_cpu_ids) {
		r = set_cpus_allowed_ptr(current, cpumask_of(cpu_test));
		CHECK(!r, "pinning the test thread to CPU %u: %d", cpu_test, r);
		pinned = true;
	}

	/* 1. No progress, forever. */
	radio = w_radio(hw, &ops, 1, &err);
	CHECK(radio, "phase 1: create: err %d", err);
	hw->flicker = 1U << 30;
	r = w_wake(radio, 1);
	waiting = airtime_rounds_waiting(radio);
	CHECK(r == 0 && waiting == BIT(AIRTIME_AC_BE), "phase 1: the wake pushed %d, ACs waiting %#x", r, waiting);
	runs = airtime_rounds_work_runs();
	t0 = ktime_get();
	msleep(200);
	runs = airtime_rounds_work_runs() - runs;
	ms = ktime_ms_delta(ktime_get(), t0);
	bound = w_backoff_bound(ms);
	CHECK(runs >= 2 && runs <= bound, "phase 1: %ld runs in %lld ms of no progress (at most %ld with the backoff)",
	      runs, ms, bound);
	CHECK(!atomic_read(&hw->pushes), "phase 1: %d frames pushed to a full ring", atomic_read(&hw->pushes));
	/* The check holds the work, then re-kicks it: rounds still wait. */
	t0 = ktime_get();
	r = airtime_radio_check_idle(radio);
	idle_ms = ktime_ms_delta(ktime_get(), t0);
	CHECK(r == 0, "phase 1: check_idle with the work looping: %d", r);
	runs_after_check = airtime_rounds_work_runs();
	msleep(150);
	runs_after_check = airtime_rounds_work_runs() - runs_after_check;
	CHECK(runs_after_check >= 1, "phase 1: the work did not run after check_idle (rounds waiting %#x)",
	      airtime_rounds_waiting(radio));
	r = airtime_radio_destroy(radio);
	radio = NULL;
	calls = w_calls_during(hw, 30);
	CHECK(r == 0 && calls == 0, "phase 1: destroy during the loop handed back %d, then %d HAL calls", r, calls);
	wrong += atomic_read(&hw->wrong_ring);
	CHECK(atomic_read(&hw->work_calls) > 0, "phase 1: no callback from the work");

	/* 2. msdu_insert() failing while the ring reads free. */
	radio = w_radio(hw, &ops, 2, &err);
	CHECK(radio, "phase 2: create: err %d", err);
	WRITE_ONCE(hw->fail_inserts, true);
	r = w_wake(radio, 2);
	CHECK(r == 0 && !RADIO_CALL(hw, airtime_radio_get_counters(radio, &c)) && c.rounds_deferred >= 1,
	      "phase 2: the wake pushed %d, deferrals %llu", r, c.rounds_deferred);
	runs2 = airtime_rounds_work_runs();
	t0 = ktime_get();
	msleep(200);
	runs2 = airtime_rounds_work_runs() - runs2;
	ms2 = ktime_ms_delta(ktime_get(), t0);
	bound2 = w_backoff_bound(ms2);
	CHECK(runs2 >= 2 && runs2 <= bound2,
	      "phase 2: %ld runs in %lld ms of refused inserts (at most %ld with the backoff)", runs2, ms2, bound2);
	CHECK(!atomic_read(&hw->pushes), "phase 2: %d frames pushed with every insert refused",
	      atomic_read(&hw->pushes));
	WRITE_ONCE(hw->fail_inserts, false);
	t0 = ktime_get();
	while (!t_pushed(hw, 4) && ktime_us_delta(ktime_get(), t0) < T_WORK_WAIT_US)
		usleep_range(1000, 2000);
	ms = ktime_ms_delta(ktime_get(), t0);
	waiting = airtime_rounds_waiting(radio);
	CHECK(t_pushed(hw, 4) && atomic_read(&hw->work_pushes) == 4 && !waiting,
	      "phase 2: %d frames (%d by the work) %lld ms after inserts work again, ACs waiting %#x",
	      atomic_read(&hw->pushes), atomic_read(&hw->work_pushes), ms, waiting);
	r = airtime_radio_destroy(radio);
	radio = NULL;
	CHECK(r == 4, "phase 2: destroy handed back %d of 4 frames", r);
	wrong += atomic_read(&hw->wrong_ring);

	/* 3. Quiesce, then destroy, while a run is in progress on the other CPU. */
	for (i = 0; pinned && i < 2; i++) {
		do {
			CHECK(tries[i] < W_STOP_TRIES,
			      "phase 3: in %d tries %s never began before the work's stall ended (last: %lld us after): nothing tested",
			      tries[i], i ? "destroy" : "quiesce", -early_us[i]);
			tries[i]++;
			r = w_stop_during_run(hw, &ops, cpu_wake, i, &early_us[i], &wrong, msg, len);
			if (r < 0) {
				ret = 1;
				goto out;
			}
		} while (r);
	}

	/* 4. Quiesce and resume. */
	radio = w_radio(hw, &ops, 4, &err);
	CHECK(radio, "phase 4: create: err %d", err);
	hw->flicker = 1U << 30;
	r = w_wake(radio, 4);
	CHECK(r == 0, "phase 4: the wake pushed %d", r);
	msleep(10);
	CHECK(!airtime_radio_quiesce(radio) && !airtime_radio_quiesce(radio), "phase 4: quiesce failed");
	CHECK(airtime_radio_quiesce(NULL) == -EFAULT && airtime_radio_resume_rounds(NULL) == -EFAULT,
	      "phase 4: NULL not refused");
	calls = atomic_read(&hw->work_calls);
	for (r = 0; r < 3; r++)
		w_wake(radio, 4);
	msleep(50);
	waiting = airtime_rounds_waiting(radio);
	CHECK(atomic_read(&hw->work_calls) == calls && waiting == BIT(AIRTIME_AC_BE) && !atomic_read(&hw->pushes),
	      "phase 4: %d HAL calls from the work after quiesce returned (ACs waiting %#x, %d pushed)",
	      atomic_read(&hw->work_calls) - calls, waiting, atomic_read(&hw->pushes));
	hw->flicker = 0;	/* the work is held: nothing else reads it */
	CHECK(!airtime_radio_resume_rounds(radio) && !airtime_radio_resume_rounds(radio), "phase 4: resume failed");
	t0 = ktime_get();
	while (!t_pushed(hw, 4) && ktime_us_delta(ktime_get(), t0) < T_WORK_WAIT_US)
		usleep_range(200, 400);
	ms2 = ktime_us_delta(ktime_get(), t0);
	waiting = airtime_rounds_waiting(radio);
	CHECK(atomic_read(&hw->work_pushes) == 4 && !waiting,
	      "phase 4: after resume %d frames pushed (%d by the work) in %lld us, ACs waiting %#x",
	      atomic_read(&hw->pushes), atomic_read(&hw->work_pushes), ms2, waiting);
	r = airtime_radio_destroy(radio);
	radio = NULL;
	CHECK(r == 4, "phase 4: destroy handed back %d of 4 frames", r);
	wrong += atomic_read(&hw->wrong_ring);
	CHECK(!hw->bad_callbacks && !hw->double_returns, "%u bad callbacks, %u frames handed back twice",
	      hw->bad_callbacks, hw->double_returns);

	/* 5. A deferral cuts a backoff short. */
	if (pinned) {
		radio = w_radio(hw, &ops, 5, &err);
		CHECK(radio, "phase 5: create: err %d", err);
		WRITE_ONCE(hw->fail_inserts, true);
		r = w_wake(radio, 5);
		CHECK(r == 0, "phase 5: the wake pushed %d with inserts refused", r);
		/*
		 * Two runs a whole cap apart: the backoff is at the cap. t_run is
		 * when the test saw the run counter change (the last run began
		 * at most one poll before): the last run's timer is armed for
		 * the cap from about then.
		 */
		t0 = ktime_get();
		t_run = 0;
		do {
			t1 = t_run;
			runs5 = airtime_rounds_work_runs();
			while (airtime_rounds_work_runs() == runs5 && ktime_ms_delta(ktime_get(), t0) < 3000)
				usleep_range(200, 400);
			t_run = ktime_get();
			gap_ms = t1 ? ktime_ms_delta(t_run, t1) : 0;
		} while (gap_ms < AIRTIME_WORK_BACKOFF_MAX_MS * 3 / 4 && ktime_ms_delta(ktime_get(), t0) < 2000);
		CHECK(gap_ms >= AIRTIME_WORK_BACKOFF_MAX_MS * 3 / 4 && gap_ms < 1000,
		      "phase 5: the backoff did not reach its cap (%d ms) in 2 s: last runs %lld ms apart",
		      AIRTIME_WORK_BACKOFF_MAX_MS, gap_ms);
		CHECK(!atomic_read(&hw->pushes), "phase 5: %d frames pushed with inserts refused",
		      atomic_read(&hw->pushes));
		/* That run has ended (a few rounds refused: microseconds); its timer waits the cap. */
		usleep_range(2000, 3000);
		WRITE_ONCE(hw->fail_inserts, false);
		hw->flicker = 6;	/* the work is waiting for its timer: only the wake reads it */
		runs5 = airtime_rounds_work_runs();
		r = w_wake_on(&waker, radio, 5, cpu_wake);
		CHECK(!r && waker.ret == 0, "phase 5: the wake on CPU %u: %d, pushed %d", cpu_wake, r, waker.ret);
		while (!t_pushed(hw, 4) && ktime_us_delta(ktime_get(), waker.at) < T_WORK_WAIT_US)
			usleep_range(100, 200);
		kick_us = ktime_us_delta(ktime_get(), waker.at);
		w_waker_stop(&waker);
		CHECK(t_pushed(hw, 4) && atomic_read(&hw->work_pushes) == 4 && !hw->flicker,
		      "phase 5: %d frames pushed (%d by the work), %u flicker counts left, %lld us after the wake",
		      atomic_read(&hw->pushes), atomic_read(&hw->work_pushes), hw->flicker, kick_us);
		/*
		 * Exactly one run began between the wake and the last push: the
		 * pushing run is a new one (not the backoff run still going), and
		 * it came well before the armed timer (an uncut run: 96-103 ms
		 * after t_run measured), so the kick cut the timer. Measured from
		 * the pushing HAL call, not from when this thread noticed it.
		 */
		push_ms = ktime_ms_delta(ns_to_ktime(atomic64_read(&hw->push_ns)), t_run);
		runs5 = atomic_long_read(&hw->push_runs) - runs5;
		CHECK(runs5 == 1 && push_ms < AIRTIME_WORK_BACKOFF_MAX_MS * 3 / 4,
		      "phase 5: pushed %lld ms after the last backoff run, %ld runs after the wake (want 1, under %d ms): backoff not cut short",
		      push_ms, runs5, AIRTIME_WORK_BACKOFF_MAX_MS * 3 / 4);
		r = airtime_radio_destroy(radio);
		radio = NULL;
		CHECK(r == 4, "phase 5: destroy handed back %d of 4 frames", r);
		wrong += atomic_read(&hw->wrong_ring);
		CHECK(!hw->bad_callbacks && !hw->double_returns, "phase 5: %u bad callbacks, %u frames handed back twice",
		      hw->bad_callbacks, hw->double_returns);
	}

	/* 6. A deferral between resume's release and its read of the waiting ACs. */
	radio = w_radio(hw, &ops, 6, &err);
	CHECK(radio, "phase 6: create: err %d", err);
	CHECK(!airtime_radio_quiesce(radio), "phase 6: quiesce failed");
	waiting = airtime_rounds_waiting(radio);
	CHECK(!waiting, "phase 6: ACs %#x waiting before the resume", waiting);
	window.radio = radio;
	window.peer = 6;
	airtime_rounds_work_set_window(radio, w_window_wake, &window);
	hw->flicker = 6;	/* the work is held: only the window's wake reads it */
	CHECK(!airtime_radio_resume_rounds(radio), "phase 6: resume failed");
	t0 = ktime_get();
	CHECK(window.calls == 1 && !window.err && window.ret == 0 && window.deferred == 1,
	      "phase 6: the window ran %d times (counters %d), its wake pushed %d and deferred %llu times (want 1, 0, 1)",
	      window.calls, window.err, window.ret, window.deferred);
	while (!t_pushed(hw, 4) && ktime_us_delta(ktime_get(), t0) < T_WORK_WAIT_US)
		usleep_range(200, 400);
	window_us = ktime_us_delta(ktime_get(), t0);
	waiting = airtime_rounds_waiting(radio);
	CHECK(atomic_read(&hw->work_pushes) == 4 && !waiting,
	      "phase 6: a deferral between the resume's release and its read was lost: %d frames pushed (%d by the work) in %lld us, ACs waiting %#x",
	      atomic_read(&hw->pushes), atomic_read(&hw->work_pushes), window_us, waiting);
	r = airtime_radio_destroy(radio);
	radio = NULL;
	CHECK(r == 4, "phase 6: destroy handed back %d of 4 frames", r);
	wrong += atomic_read(&hw->wrong_ring);
	CHECK(!hw->bad_callbacks && !hw->double_returns, "phase 6: %u bad callbacks, %u frames handed back twice",
	      hw->bad_callbacks, hw->double_returns);

	CHECK(!wrong, "%d callbacks of the work named a ring not of its CPU", wrong);
	if (pinned)
		snprintf(msg, len,
			 "stuck: %ld, %ld runs/200 ms (max %ld, %ld); check_idle %lld ms; stops %lld, %lld us before stall end (tries %d, %d; CPUs %u, %u); resume: 4 in %lld us; %lld ms backoff cut: 4 sent %lld ms after its run, %lld us after the wake; window: 4 in %lld us",
			 runs, runs2, bound, bound2, idle_ms, early_us[0], early_us[1], tries[0], tries[1], cpu_wake,
			 cpu_test, ms2, gap_ms, push_ms, kick_us, window_us);
	else
		snprintf(msg, len,
			 "one CPU online: phases 3 (destroy during a run) and 5 (a deferral cuts a backoff) SKIPPED; no progress: %ld, %ld runs/200 ms (bounds %ld, %ld); check_idle %lld ms; resume sent 4 in %lld us; window: 4 in %lld us",
			 runs, runs2, bound, bound2, idle_ms, ms2, window_us);
out:
	w_waker_stop(&waker);
	if (pinned)
		set_cpus_allowed_ptr(current, saved_mask);
	free_cpumask_var(saved_mask);
	if (radio)
		airtime_radio_destroy(radio);
	kfree(hw);
	return ret;
}

/* A leaked radio of airtime_capi_leak_radios(): its HAL and ops live as long as it does, for good. */
struct l_leak {
	struct t_hw hw;
	struct airtime_hal_ops ops;
};

/**
 * airtime_capi_leak_radios() - leak two radios whose rounds works are
 *	pending, for the boot test's check that module exit stops them
 * @msg: buffer for the result, always NUL-terminated
 * @len: size of @msg, at least 1
 *
 * A driver that never destroys its radios, on purpose: the boot test's
 * leaked-radio phase loads the module with this scenario alone, unloads it
 * and checks that airtime_exit() warned about the leak and stopped both
 * works (airtime_stop_works()) before destroy_workqueue() and the unload
 * of this module's text, with no fault afterwards.
 *
 * 1. A radio whose work makes no progress, forever (hw->flicker: every round
 *    reads the ring full first and free at the re-read): its runs back off
 *    up to AIRTIME_WORK_BACKOFF_MAX_MS. The test returns only once two of
 *    its runs came at least 3/4 of that cap apart, so from then on the
 *    work waits on its armed timer for the whole cap, a run of a few
 *    rounds taking microseconds: the worst state, which destroy_workqueue()
 *    alone would leave to fire into the freed workqueue.
 * 2. A radio whose work's runs busy-wait in tcl_free() (BHs off) until the
 *    module is going away, and 200 ms more (t_stall_until_unload(): at
 *    most 2 s each before rmmod), kicked
 *    from a kthread on another CPU than the first work's (whose timer is
 *    then not held up by the busy CPU): at rmmod its run is in progress.
 *    Skipped, and said, with one CPU online.
 *
 * Both radios, their HAL contexts and ops are leaked on purpose (the radio
 * owns its work, so the module's exit leaves the works allocated too); the
 * boot test loads this scenario only in its own phase, and the kernel warns
 * (WARN_ON_ONCE in airtime_stop_works()), which taints it W.
 *
 * Context: Process context (module init); sleeps (about 300 ms).
 * Return: 0 on success, non-zero on failure.
 */
int airtime_capi_leak_radios(char *msg, size_t len)
{
	struct l_leak *a = NULL, *b = NULL;
	struct airtime_radio *ra = NULL, *rb = NULL;
	struct w_waker waker = { 0 };
	unsigned int cpu_a, cpu_b;
	ktime_t t0, t_last = 0, t_now;
	s64 gap_ms = 0, stall_wait_us = 0;
	int ret = 0, err = 0, r, calls;

	if (!msg || !len)
		return -EFAULT;
	msg[0] = '\0';
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	CHECK(a && b, "no memory for the test");

	/* 1. No progress, forever: wait until the backoff is at its cap. */
	ra = w_radio(&a->hw, &a->ops, 1, &err);
	CHECK(ra, "radio 1: create: err %d", err);
	a->hw.flicker = 1U << 30;
	r = w_wake(ra, 1);
	CHECK(r == 0 && airtime_rounds_waiting(ra) == BIT(AIRTIME_AC_BE), "radio 1: the wake pushed %d, ACs waiting %#x",
	      r, airtime_rounds_waiting(ra));
	t0 = ktime_get();
	do {
		calls = atomic_read(&a->hw.work_calls);
		while (atomic_read(&a->hw.work_calls) == calls && ktime_ms_delta(ktime_get(), t0) < 3000)
			usleep_range(200, 400);
		t_now = ktime_get();
		gap_ms = t_last ? ktime_ms_delta(t_now, t_last) : 0;
		t_last = t_now;
	} while (gap_ms < AIRTIME_WORK_BACKOFF_MAX_MS * 3 / 4 && ktime_ms_delta(ktime_get(), t0) < 2000);
	CHECK(gap_ms >= AIRTIME_WORK_BACKOFF_MAX_MS * 3 / 4 && gap_ms < 1000,
	      "radio 1: the backoff did not reach its cap (%d ms) in 2 s: last runs %lld ms apart",
	      AIRTIME_WORK_BACKOFF_MAX_MS, gap_ms);
	CHECK(!atomic_read(&a->hw.pushes), "radio 1: %d frames pushed to a full ring", atomic_read(&a->hw.pushes));
	cpu_a = READ_ONCE(a->hw.work_cpu);

	/* 2. A run in progress until rmmod, on another CPU. */
	cpu_b = cpumask_any_but(cpu_online_mask, cpu_a);
	if (cpu_b < nr_cpu_ids) {
		rb = w_radio(&b->hw, &b->ops, 2, &err);
		CHECK(rb, "radio 2: create: err %d", err);
		b->hw.flicker = 1U << 30;
		r = w_wake_on(&waker, rb, 2, cpu_b);
		CHECK(!r && waker.ret == 0, "radio 2: the wake on CPU %u: %d, pushed %d", cpu_b, r, waker.ret);
		/*
		 * The kthread, bound to cpu_b, is stopped before the runs there
		 * begin to busy-wait (it could not run to exit meanwhile); the
		 * work, backing off on cpu_b, stalls from its next run on.
		 */
		w_waker_stop(&waker);
		WRITE_ONCE(b->hw.stall_until_unload, true);
		t0 = ktime_get();
		while (!atomic_read(&b->hw.stalled) && ktime_us_delta(ktime_get(), t0) < T_WORK_WAIT_US)
			usleep_range(200, 400);
		stall_wait_us = ktime_us_delta(ktime_get(), t0);
		CHECK(atomic_read(&b->hw.stalled), "radio 2: the work did not run in %lld us", stall_wait_us);
		CHECK(READ_ONCE(b->hw.work_cpu) == cpu_b, "radio 2: the work ran on CPU %d, not %u",
		      READ_ONCE(b->hw.work_cpu), cpu_b);
		snprintf(msg, len,
			 "leaked 2 radios: 1 backing off at its cap (runs %lld ms apart, CPU %u), 1 with a run in progress until rmmod (CPU %u, began %lld us after its wake)",
			 gap_ms, cpu_a, cpu_b, stall_wait_us);
	} else {
		snprintf(msg, len,
			 "leaked 1 radio backing off at its cap (runs %lld ms apart); one CPU online: the radio with a run in progress SKIPPED",
			 gap_ms);
	}
	/* Leaked on purpose: the module's exit must stop their works. */
	ra = NULL;
	rb = NULL;
	a = NULL;
	b = NULL;
out:
	w_waker_stop(&waker);
	if (rb) {
		WRITE_ONCE(b->hw.stall_until_unload, false);
		airtime_radio_destroy(rb);
	}
	if (ra)
		airtime_radio_destroy(ra);
	kfree(b);
	kfree(a);
	return ret;
}

/* ---- The SMP stress test --------------------------------------------- */

#define S_STATIONS	4
#define S_TIDS		2			/* TID 0 (BE) and TID 5 (VI) per station */
#define S_MCAST		(S_STATIONS * S_TIDS)	/* index of the multicast txq (BE) */
#define S_TXQS		(S_MCAST + 1)
#define S_TXQ_LEN	32
#define S_FRAMES	384
#define S_RING_SLOTS	32
#define S_MSDU_SLOTS	48
#define S_BATCH		24
#define S_ALL_RINGS	(BIT(AIRTIME_TCL_RINGS) - 1)
#define S_BUDGET	8
#define S_RUN_MS	3000
#define S_CHURN_MS	10			/* a station leaves or joins this often */
#define S_FAULT_RUN_MS	1000
/*
 * A run is extended by S_EXTRA_MS at a time, up to S_EXTRA_MAX times, until
 * the events it must see (a removal that waited, a deferral) have happened:
 * a host starving the guest's vCPUs makes them rarer, never impossible.
 */
#define S_EXTRA_MS	500
#define S_EXTRA_MAX	6
/* How long a removal and a dequeue wait for each other (see s_churn()). */
#define S_MEET_NS	(5 * NSEC_PER_MSEC)
#define S_DRAIN_STEPS	20000
#define S_LOSE_AT	100			/* the completion lost with LOSE_COMPLETION */
/* The AIRTIME_STRESS_* flags that are faults (the run must fail). */
#define S_FAULTS	(AIRTIME_STRESS_LOSE_COMPLETION | AIRTIME_STRESS_LOSE_WAKE)

static const u8 s_tids[S_TIDS] = { 0, 5 };

/* Where a frame is: the pool, a txq, or the adapter (rings, tables, retry slot). */
enum { S_FREE, S_QUEUED, S_ADAPTER };

struct s_frame {
	atomic_t state;
	u32 len;
};

/* A driver txq (mac80211's, with its own lock): frame indices. */
struct s_txq {
	spinlock_t lock;
	u16 q[S_TXQ_LEN];
	u32 head;
	u32 count;
	/*
	 * 0 once "mac80211 freed it": after its station's removal and its
	 * txq_released(), as sta_state(NOTEXIST) returning lets mac80211 do.
	 */
	atomic_t live;
};

/* The two contexts, as the per-ring counters name them. */
enum { S_WAKE_CTX, S_NAPI_CTX, S_CTXS };

/*
 * One TCL ring: its descriptors under its own lock (ath11k's tcl_ring->lock,
 * taken in ath11k_dp_tx() around the descriptor write). Both contexts' rounds
 * push into it, the firmware takes from it.
 */
struct s_ring {
	spinlock_t lock;
	u32 desc[S_RING_SLOTS];
	u32 head;
	u32 count;
	atomic_t pushed[S_CTXS];		/* descriptors each context wrote */
	atomic_t pushers;			/* contexts in s_tcl_enqueue() on it now */
};

/*
 * One ring's MSDU table (ath11k's tx_ring->txbuf_idr) under its own lock
 * (tx_ring->tx_idr_lock): the rounds insert, the completions take.
 */
struct s_idr {
	spinlock_t lock;
	struct airtime_msdu msdu[S_MSDU_SLOTS];
	bool used[S_MSDU_SLOTS];
	u32 outstanding;
};

struct s_hw {
	struct airtime_radio *radio;
	u32 flags;				/* AIRTIME_STRESS_* */

	/*
	 * The hardware: a lock per TCL ring and per MSDU table, never two held
	 * at once (ath11k_dp_tx() takes the idr's, then the ring's, in turn).
	 */
	struct s_ring ring[AIRTIME_TCL_RINGS];
	struct s_idr idr[AIRTIME_TCL_RINGS];
	atomic_t ring_contended;		/* a ring lock found taken */
	atomic_t push_contended;		/* ... by an enqueue, while another enqueued */
	atomic_t idr_contended;			/* an MSDU table lock found taken */
	atomic_t enqueue_calls;
	atomic_t tcl_reads;	/* AIRTIME_STRESS_NO_DEFERRED_OP: tcl_free() calls */
	bool quiesced;		/* between airtime_radio_quiesce() and resume */
	atomic_t work_in_quiesce;	/* tcl_free() calls by a worker meanwhile */
	/*
	 * The firmware's descriptor count, shared by the completion passes: the
	 * completion context's over every ring but the wake CPU's, the wake
	 * context's over that one (a second NAPI, as ath11k has one per WBM
	 * ring), then the drain's over all.
	 */
	atomic_t fw_taken;
	/* The ring the wake context completes; AIRTIME_TCL_RINGS: none. */
	u32 wake_ring;
	atomic_t in_complete;			/* completion passes running now */
	atomic_t overlapped;			/* two passes ran at once */
	struct task_struct *task[S_CTXS];	/* the kthreads, set before they run */

	/* The frame pool, under pool_lock. */
	spinlock_t pool_lock;
	struct s_frame frames[S_FRAMES];
	u16 free[S_FRAMES];
	u32 nfree;

	struct s_txq txq[S_TXQS];
	struct s_txq kick_txq[S_TIDS];		/* always empty: run a round on an AC */
	u64 mcast_handle;
	u64 kick_handle[S_TIDS];
	bool present[S_STATIONS];		/* the wake thread's (main's after stop) */
	unsigned long next_churn;		/* jiffies; the wake thread's */

	/* What the test saw. */
	atomic64_t queued;			/* frames put into txqs */
	atomic64_t dequeued;			/* frames the adapter dequeued */
	atomic64_t purged;			/* frames purged from removed stations' txqs */
	atomic64_t returned[T_NUM_STATUS];	/* tx_status() per status */
	atomic_t bad;				/* callbacks on frames in the wrong state */
	atomic_t freed_use;			/* callbacks on a txq mac80211 freed */
	atomic_t sta_txqs[S_STATIONS];		/* txqs added, not yet released */
	u32 remove_waits;			/* removals that waited for a release (wake thread) */
	u32 remove_met;				/* removals that met a dequeue (wake thread) */
	/*
	 * To make removals meet a serving CPU: 1 while a station's
	 * airtime_sta_remove() runs, during which a dequeue from its txqs
	 * waits (bounded) for it to return; and the dequeues in progress.
	 */
	atomic_t removing[S_STATIONS];
	atomic_t dequeuing[S_STATIONS];
	atomic_t released;			/* txq_released() calls */
	atomic_t drained;			/* sta_drained() calls */
	u32 removed_txqs, departures;		/* wake thread (main's after stop) */
	u32 wakes, churns, add_refused;		/* wake thread */
	u32 polls, weights;			/* completion thread */
	u32 wake_polls, wake_steps;		/* wake thread: its NAPI passes */
	atomic_t deferred_acs;			/* ACs rounds_deferred() announced, not yet run */
	atomic_t deferred_calls;		/* rounds_deferred() calls */
	atomic_t waiting_runs;			/* s_run_waiting() calls that ran rounds */
	u32 cpu[S_CTXS];

	atomic_t failed;
	char why[160];
};

/* The kthreads run on two CPUs (not one taking turns): they can meet. */
static bool s_two_cpus(const struct s_hw *s)
{
	return s->cpu[S_WAKE_CTX] != s->cpu[S_NAPI_CTX];
}

static __printf(2, 3) void s_fail(struct s_hw *s, const char *fmt, ...)
{
	va_list args;

	if (atomic_cmpxchg(&s->failed, 0, 1))
		return;
	va_start(args, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, args);
	va_end(args);
}

static u32 s_rand(u32 *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

static u64 s_now(void)
{
	return ktime_to_us(ktime_get());
}

/*
 * Takes @lock, counting in @contended whether another CPU held it: how often the
 * two contexts really met on one ring or table.
 */
static void s_lock(spinlock_t *lock, atomic_t *contended)
{
	if (spin_trylock_bh(lock))
		return;
	atomic_inc(contended);
	spin_lock_bh(lock);
}

static u32 s_tcl_free(void *ctx, u8 ring)
{
	struct s_hw *s = ctx;
	struct s_ring *rg;
	u32 n;

	if (ring >= AIRTIME_TCL_RINGS)
		return 0;
	/*
	 * Without the op, while the kthreads run: in bursts (64 reads of every
	 * 256), every other read says full, so rounds meet a ring freed right
	 * after they read it full and defer now and then, into the module's work.
	 */
	if ((s->flags & AIRTIME_STRESS_NO_DEFERRED_OP) && READ_ONCE(s->task[S_WAKE_CTX])) {
		if (READ_ONCE(s->quiesced) && (current->flags & PF_WQ_WORKER))
			atomic_inc(&s->work_in_quiesce);
		n = atomic_inc_return(&s->tcl_reads);
		if (!((n >> 6) & 3) && (n & 1))
			return 0;
	}
	rg = &s->ring[ring];
	s_lock(&rg->lock, &s->ring_contended);
	n = S_RING_SLOTS - rg->count;
	spin_unlock_bh(&rg->lock);
	return n;
}

/* Which context is calling: one of the kthreads, or the test's own (setup, drain). */
static int s_ctx(struct s_hw *s)
{
	if (current == s->task[S_WAKE_CTX])
		return S_WAKE_CTX;
	if (current == s->task[S_NAPI_CTX])
		return S_NAPI_CTX;
	return -1;
}

static int s_tcl_enqueue(void *ctx, u8 ring, const struct airtime_tcl_desc *desc)
{
	struct s_hw *s = ctx;
	struct s_ring *rg;
	int ret = 0, who = s_ctx(s);
	bool other;

	if (ring >= AIRTIME_TCL_RINGS || !desc)
		return -EINVAL;
	/* The frame named is the one its MSDU entry holds (inserted by this call's round). */
	if (desc->msdu_id >= S_MSDU_SLOTS || READ_ONCE(s->idr[ring].msdu[desc->msdu_id].frame) != desc->frame)
		atomic_inc(&s->bad);
	if (atomic_inc_return(&s->enqueue_calls) % 61 == 0)
		return -ENOMEM;		/* a DMA mapping failure now and then */
	rg = &s->ring[ring];
	/* Another context enqueueing into this ring now: a lock found taken is likely its. */
	other = atomic_inc_return(&rg->pushers) > 1;
	if (!spin_trylock_bh(&rg->lock)) {
		atomic_inc(&s->ring_contended);
		if (other)
			atomic_inc(&s->push_contended);
		spin_lock_bh(&rg->lock);
	}
	if (rg->count == S_RING_SLOTS) {
		ret = -ENOSPC;
	} else {
		rg->desc[(rg->head + rg->count) % S_RING_SLOTS] = desc->msdu_id;
		rg->count++;
	}
	spin_unlock_bh(&rg->lock);
	atomic_dec(&rg->pushers);
	if (!ret && who >= 0)
		atomic_inc(&rg->pushed[who]);
	return ret;
}

static u32 s_msdu_outstanding(void *ctx, u8 ring)
{
	struct s_hw *s = ctx;
	struct s_idr *idr;
	u32 n;

	if (ring >= AIRTIME_TCL_RINGS)
		return 0;
	idr = &s->idr[ring];
	s_lock(&idr->lock, &s->idr_contended);
	n = idr->outstanding;
	spin_unlock_bh(&idr->lock);
	return n;
}

static int s_msdu_insert(void *ctx, u8 ring, const struct airtime_msdu *msdu)
{
	struct s_hw *s = ctx;
	struct s_idr *idr;
	int i, ret = -ENOSPC;

	if (ring >= AIRTIME_TCL_RINGS || !msdu || !msdu->frame)
		return -EINVAL;
	idr = &s->idr[ring];
	s_lock(&idr->lock, &s->idr_contended);
	for (i = 0; i < S_MSDU_SLOTS; i++) {
		if (!idr->used[i]) {
			idr->msdu[i] = *msdu;
			idr->used[i] = true;
			idr->outstanding++;
			ret = i;
			break;
		}
	}
	spin_unlock_bh(&idr->lock);
	return ret;
}

static int s_msdu_take_locked(struct s_idr *idr, u32 id, struct airtime_msdu *msdu)
{
	if (id >= S_MSDU_SLOTS || !idr->used[id])
		return -ENOENT;
	*msdu = idr->msdu[id];
	idr->used[id] = false;
	idr->outstanding--;
	return 0;
}

static int s_msdu_take(void *ctx, u8 ring, u32 id, struct airtime_msdu *msdu)
{
	struct s_hw *s = ctx;
	struct s_idr *idr;
	int ret;

	if (ring >= AIRTIME_TCL_RINGS)
		return -ENOENT;
	idr = &s->idr[ring];
	s_lock(&idr->lock, &s->idr_contended);
	ret = s_msdu_take_locked(idr, id, msdu);
	spin_unlock_bh(&idr->lock);
	return ret;
}

static int s_msdu_take_any(void *ctx, u8 ring, struct airtime_msdu *msdu)
{
	struct s_hw *s = ctx;
	struct s_idr *idr;
	int ret = -ENOENT;
	u32 i;

	if (ring >= AIRTIME_TCL_RINGS)
		return -ENOENT;
	idr = &s->idr[ring];
	s_lock(&idr->lock, &s->idr_contended);
	for (i = 0; i < S_MSDU_SLOTS; i++) {
		if (idr->used[i]) {
			ret = s_msdu_take_locked(idr, i, msdu) ? -ENOENT : i;
			break;
		}
	}
	spin_unlock_bh(&idr->lock);
	return ret;
}

static void s_frame_free(struct s_hw *s, struct s_frame *f)
{
	spin_lock_bh(&s->pool_lock);
	s->free[s->nfree++] = f - s->frames;
	spin_unlock_bh(&s->pool_lock);
}

static struct s_frame *s_frame_alloc(struct s_hw *s)
{
	struct s_frame *f = NULL;

	spin_lock_bh(&s->pool_lock);
	if (s->nfree)
		f = &s->frames[s->free[--s->nfree]];
	spin_unlock_bh(&s->pool_lock);
	return f;
}

static void s_tx_status(void *ctx, void *frame, u8 status)
{
	struct s_hw *s = ctx;
	struct s_frame *f = frame;

	if (f < s->frames || f >= s->frames + S_FRAMES || status >= T_NUM_STATUS ||
	    atomic_cmpxchg(&f->state, S_ADAPTER, S_FREE) != S_ADAPTER) {
		atomic_inc(&s->bad);
		return;
	}
	atomic64_inc(&s->returned[status]);
	s_frame_free(s, f);
}

static void *s_txq_dequeue(void *ctx, void *txq, u32 *len)
{
	struct s_hw *s = ctx;
	struct s_txq *q = txq;
	struct s_frame *f = NULL;
	u32 sta = (q - s->txq) / S_TIDS;
	u64 until;

	if (!atomic_read(&q->live))
		atomic_inc(&s->freed_use);
	/*
	 * Gated, until a round was deferred: a dequeue on the completion CPU (so
	 * inside a gated run there) waits 1 ms, for the wake CPU's requests to
	 * pile up behind the run's budget, even on a host that runs the two
	 * vCPUs in turn rather than at once.
	 */
	if ((s->flags & AIRTIME_STRESS_GATED_ROUNDS) && !atomic_read(&s->deferred_calls) &&
	    s_two_cpus(s) && raw_smp_processor_id() == s->cpu[S_NAPI_CTX])
		for (until = ktime_get_ns() + NSEC_PER_MSEC; ktime_get_ns() < until;)
			cpu_relax();
	if (q >= s->txq && q < s->txq + S_MCAST) {
		/*
		 * Still serving the txq when its station's removal returns. Time-
		 * bounded, not counted: under emulation udelay() drifts, and the
		 * other vCPU may be descheduled by the host for milliseconds. The
		 * full barrier pairs with s_churn()'s: of the two stores (dequeuing
		 * here, removing there), each side's later load sees the other's.
		 */
		atomic_inc(&s->dequeuing[sta]);
		smp_mb__after_atomic();
		if (atomic_read(&s->removing[sta]) && s_two_cpus(s))
			for (until = ktime_get_ns() + 2 * S_MEET_NS;
			     atomic_read(&s->removing[sta]) && ktime_get_ns() < until;)
				cpu_relax();
		atomic_dec(&s->dequeuing[sta]);
	}
	spin_lock_bh(&q->lock);
	if (q->count) {
		f = &s->frames[q->q[q->head]];
		q->head = (q->head + 1) % S_TXQ_LEN;
		q->count--;
	}
	spin_unlock_bh(&q->lock);
	if (!f)
		return NULL;
	if (atomic_cmpxchg(&f->state, S_QUEUED, S_ADAPTER) != S_QUEUED)
		atomic_inc(&s->bad);
	atomic64_inc(&s->dequeued);
	*len = f->len;
	return f;
}

static u32 s_txq_peek_len(void *ctx, void *txq)
{
	struct s_hw *s = ctx;
	struct s_txq *q = txq;
	u32 n = 0;

	if (!atomic_read(&q->live))
		atomic_inc(&s->freed_use);
	spin_lock_bh(&q->lock);
	if (q->count)
		n = s->frames[q->q[q->head]].len;
	spin_unlock_bh(&q->lock);
	return n;
}

static void s_txq_released(void *ctx, void *txq)
{
	struct s_hw *s = ctx;
	struct s_txq *q = txq;

	if ((q < s->txq || q >= s->txq + S_TXQS) && (q < s->kick_txq || q >= s->kick_txq + S_TIDS))
		atomic_inc(&s->bad);
	else if (!atomic_read(&q->live))
		atomic_inc(&s->freed_use);
	else if (q >= s->txq && q < s->txq + S_MCAST)
		/* The last touch of the txq: the remover may free it once it reads 0. */
		atomic_dec_return_release(&s->sta_txqs[(q - s->txq) / S_TIDS]);
	atomic_inc(&s->released);
}

static void s_sta_drained(void *ctx, u16 peer_id)
{
	struct s_hw *s = ctx;

	if (!peer_id || peer_id > S_STATIONS)
		atomic_inc(&s->bad);
	atomic_inc(&s->drained);
}

/* A runner left round requests waiting: schedule the work (s_run_waiting()). */
static void s_rounds_deferred(void *hw, u8 ac_mask)
{
	struct s_hw *s = hw;

	/* Concurrent rounds defer too, when a round's follow-ups run out. */
	if (!ac_mask || ac_mask > 0xf)
		atomic_inc(&s->bad);
	atomic_or(ac_mask, &s->deferred_acs);
	atomic_inc(&s->deferred_calls);
}

static const struct airtime_hal_ops s_ops = {
	.tcl_free = s_tcl_free,
	.tcl_enqueue = s_tcl_enqueue,
	.msdu_outstanding = s_msdu_outstanding,
	.msdu_insert = s_msdu_insert,
	.msdu_take = s_msdu_take,
	.msdu_take_any = s_msdu_take_any,
	.tx_status = s_tx_status,
	.txq_dequeue = s_txq_dequeue,
	.txq_peek_len = s_txq_peek_len,
	.txq_released = s_txq_released,
	.sta_drained = s_sta_drained,
	.rounds_deferred = s_rounds_deferred,
};

/* mac80211's enqueue: a frame from the pool into @q; false if either is full. */
static bool s_enqueue(struct s_hw *s, struct s_txq *q, u32 len)
{
	struct s_frame *f = s_frame_alloc(s);
	bool ok = false;

	if (!f)
		return false;
	if (atomic_cmpxchg(&f->state, S_FREE, S_QUEUED) != S_FREE)
		atomic_inc(&s->bad);
	f->len = len;
	spin_lock_bh(&q->lock);
	if (q->count < S_TXQ_LEN) {
		q->q[(q->head + q->count) % S_TXQ_LEN] = f - s->frames;
		q->count++;
		ok = true;
	}
	spin_unlock_bh(&q->lock);
	if (ok) {
		atomic64_inc(&s->queued);
		return true;
	}
	atomic_set(&f->state, S_FREE);
	s_frame_free(s, f);
	return false;
}

/* The driver frees a removed txq's frames (ieee80211_free_txskb() each). */
static void s_purge(struct s_hw *s, struct s_txq *q)
{
	struct s_frame *f;

	for (;;) {
		f = NULL;
		spin_lock_bh(&q->lock);
		if (q->count) {
			f = &s->frames[q->q[q->head]];
			q->head = (q->head + 1) % S_TXQ_LEN;
			q->count--;
		}
		spin_unlock_bh(&q->lock);
		if (!f)
			return;
		if (atomic_cmpxchg(&f->state, S_QUEUED, S_FREE) != S_QUEUED)
			atomic_inc(&s->bad);
		atomic64_inc(&s->purged);
		s_frame_free(s, f);
	}
}

static u32 s_queued_now(struct s_txq *q)
{
	u32 n;

	spin_lock_bh(&q->lock);
	n = q->count;
	spin_unlock_bh(&q->lock);
	return n;
}

/* A station joins (sta_state to ASSOC) with a txq per TID, or leaves. */
static void s_churn(struct s_hw *s, u32 sta, u16 weight)
{
	u16 peer = sta + 1;
	u32 t;
	u64 until;
	int r;

	s->churns++;
	if (s->present[sta]) {
		/*
		 * Backlog its txqs past what the rings take, so that the completion
		 * CPU serves them, and give it up to S_MEET_NS to be dequeuing from
		 * one (never on one CPU: the other kthread cannot run meanwhile).
		 * The wakes push into the completion CPU's ring: in the wake CPU's
		 * own, nothing would complete while this thread waits, and the
		 * station's AQL limit would keep the other CPU off its txqs.
		 */
		for (t = 0; t < S_TIDS * 16; t++)
			if (!s_enqueue(s, &s->txq[sta * S_TIDS + t % S_TIDS], 1500))
				break;
		for (t = 0; t < S_TIDS; t++)
			RADIO_CALL(s, airtime_txq_wake(s->radio, peer, s_tids[t], s->cpu[S_NAPI_CTX] + AIRTIME_TCL_RINGS,
						       s_now()));
		atomic_set(&s->removing[sta], 1);
		smp_mb__after_atomic();		/* pairs with s_txq_dequeue()'s */
		until = ktime_get_ns() + S_MEET_NS;
		while (s_two_cpus(s) && !atomic_read(&s->dequeuing[sta]) &&
		       ktime_get_ns() < until)
			cpu_relax();
		if (atomic_read(&s->dequeuing[sta]))
			s->remove_met++;
		r = RADIO_CALL(s, airtime_sta_remove(s->radio, peer));
		if (r < 0 || r > S_TIDS)
			s_fail(s, "sta_remove(%u): %d", peer, r);
		else if (!r && atomic_read(&s->sta_txqs[sta]))
			s_fail(s, "sta_remove(%u) said every txq was released, %d were not", peer,
			       atomic_read(&s->sta_txqs[sta]));
		/* A txq not handed back: the wait below is the driver's. */
		if (r > 0)
			WRITE_ONCE(s->remove_waits, s->remove_waits + 1);
		atomic_set(&s->removing[sta], 0);
		s->present[sta] = false;
		s->removed_txqs += S_TIDS;
		s->departures++;
		/*
		 * sta_state(NOTEXIST) waits for the txqs still served elsewhere,
		 * reaping, before mac80211 purges and frees them.
		 */
		for (t = 0; atomic_read_acquire(&s->sta_txqs[sta]) && !atomic_read(&s->failed); t++) {
			RADIO_CALL(s, airtime_radio_reap(s->radio));
			usleep_range(10, 20);
			if (t > 100000)
				s_fail(s, "sta_remove(%u): txqs never released", peer);
		}
		for (t = 0; t < S_TIDS; t++) {
			s_purge(s, &s->txq[sta * S_TIDS + t]);
			atomic_set(&s->txq[sta * S_TIDS + t].live, 0);
		}
		return;
	}
	r = RADIO_CALL(s, airtime_sta_add(s->radio, peer, weight));
	if (r == -ENOSPC) {
		s->add_refused++;	/* its old slot still drains: later */
		return;
	}
	if (r) {
		s_fail(s, "sta_add(%u): %d", peer, r);
		return;
	}
	for (t = 0; t < S_TIDS; t++) {
		atomic_set(&s->txq[sta * S_TIDS + t].live, 1);
		r = RADIO_CALL(s, airtime_txq_add(s->radio, peer, s_tids[t], &s->txq[sta * S_TIDS + t]));
		if (r)
			s_fail(s, "txq_add(%u, %u): %d", peer, s_tids[t], r);
		else
			atomic_inc(&s->sta_txqs[sta]);
	}
	s->present[sta] = true;
}

/*
 * The CPU a wake names, which picks the TCL ring its round pushes into (cpu %
 * 3). The kthreads run on two CPUs whose rings differ (0 and 1 under -smp 2),
 * so half the wakes name a CPU that shares the completion CPU's ring instead
 * (its number plus 3, as CPUs 1 and 4 do on a host with five): then the wake
 * context's rounds and the completion context's push into one ring at once,
 * each under that ring's lock, as on any host with more CPUs than rings.
 */
static u32 s_wake_cpu(struct s_hw *s, u32 r)
{
	return r & (1U << 9) ? s->cpu[S_NAPI_CTX] + AIRTIME_TCL_RINGS : raw_smp_processor_id();
}

/* One step of the wake context: enqueue and wake, or a station joins or leaves. */
static void s_wake_step(struct s_hw *s, u32 *rnd)
{
	u32 r = s_rand(rnd), sta = r % S_STATIONS, txq, k, n, cpu = s_wake_cpu(s, r);
	int ret;

	if (time_after(jiffies, s->next_churn)) {
		s->next_churn = jiffies + msecs_to_jiffies(S_CHURN_MS);
		s_churn(s, sta, 64 + (r >> 12) % 512);
		return;
	}
	txq = (r >> 10) % 8 == 0 ? S_MCAST : sta * S_TIDS + (r >> 14) % S_TIDS;
	if (txq != S_MCAST && !s->present[sta])
		return;
	n = 1 + (r >> 16) % 4;
	for (k = 0; k < n; k++)
		if (!s_enqueue(s, &s->txq[txq], 200 + (r >> 20) % 1301))
			break;
	if (txq == S_MCAST && (s->flags & AIRTIME_STRESS_LOSE_WAKE))
		return;		/* the fault: frames queued, the wake lost */
	s->wakes++;
	if (txq == S_MCAST)
		ret = RADIO_CALL(s, airtime_mcast_txq_wake(s->radio, s->mcast_handle, cpu, s_now()));
	else
		ret = RADIO_CALL(s, airtime_txq_wake(s->radio, sta + 1, s_tids[txq % S_TIDS], cpu, s_now()));
	if (ret < 0)
		s_fail(s, "wake of txq %u: %d", txq, ret);
}

/*
 * The firmware: takes up to @max descriptors from the rings in @rings (a mask;
 * round robin) and writes their completions into @st, mostly acked. With
 * AIRTIME_STRESS_LOSE_COMPLETION it loses the S_LOSE_AT-th one.
 */
static u32 s_firmware(struct s_hw *s, struct airtime_tx_status *st, u32 max, u32 rings)
{
	struct s_ring *rg;
	u32 n = 0, r, id = 0, k;
	bool any = true, took;

	while (n < max && any) {
		any = false;
		for (r = 0; r < AIRTIME_TCL_RINGS && n < max; r++) {
			if (!(rings & BIT(r)))
				continue;
			/* One descriptor at a time, under its ring's lock only. */
			rg = &s->ring[r];
			s_lock(&rg->lock, &s->ring_contended);
			took = rg->count;
			if (took) {
				id = rg->desc[rg->head];
				rg->head = (rg->head + 1) % S_RING_SLOTS;
				rg->count--;
			}
			spin_unlock_bh(&rg->lock);
			if (!took)
				continue;
			any = true;
			k = atomic_inc_return(&s->fw_taken);
			if (k == S_LOSE_AT && (s->flags & AIRTIME_STRESS_LOSE_COMPLETION))
				continue;
			st[n].msdu_id = id;
			st[n].ring = r;
			st[n].status = k % 16 ? AIRTIME_TX_ACKED : (k / 16) % T_NUM_STATUS;
			st[n].reserved = 0;
			n++;
		}
	}
	return n;
}

/* The NAPI poll: hand @n completions to the adapter, @budget at a time. */
static void s_complete(struct s_hw *s, const struct airtime_tx_status *st, u32 n)
{
	u32 done;
	int r;

	if (atomic_inc_return(&s->in_complete) > 1)
		atomic_set(&s->overlapped, 1);
	for (done = 0; done < n;) {
		/* No tx_status_at() in this HAL: nothing reads @pass. */
		r = RADIO_CALL(s, airtime_tx_complete(s->radio, st + done, n - done, S_BUDGET, raw_smp_processor_id(),
						      s_now(), NULL));
		if (r <= 0 || r > S_BUDGET) {
			s_fail(s, "tx_complete(%u left, budget %d): %d", n - done, S_BUDGET, r);
			break;
		}
		done += r;
	}
	atomic_dec(&s->in_complete);
}

/* The invariants the API exposes, between two calls. */
static void s_check(struct s_hw *s, const char *when)
{
	struct airtime_radio_stats stats;
	u32 sum = 0, ac;
	int r;

	r = RADIO_CALL(s, airtime_radio_check(s->radio));
	if (r)
		s_fail(s, "%s: invariants: %d", when, r);
	r = RADIO_CALL(s, airtime_radio_get_stats(s->radio, &stats));
	for (ac = 0; ac < AIRTIME_NUM_ACS; ac++)
		sum += stats.pending_us[ac];
	if (r || sum != stats.total_pending_us || stats.outstanding_msdus > AIRTIME_TCL_RINGS * S_MSDU_SLOTS ||
	    stats.held_frames > S_TXQS + S_TIDS)	/* one kept frame per txq at most */
		s_fail(s, "%s: stats %d: pending %u (sum %u), %u outstanding, %u held", when, r, stats.total_pending_us,
		       sum, stats.outstanding_msdus, stats.held_frames);
}

/* One step of the completion context: a NAPI poll, and now and then the rest. */
static void s_complete_step(struct s_hw *s, u32 *rnd, struct airtime_tx_status *st)
{
	struct airtime_ppdu_stats ppdu = {};
	u32 r = s_rand(rnd), n;
	int ret;

	n = s_firmware(s, st, S_BATCH, S_ALL_RINGS & ~BIT(s->wake_ring));
	if (!n)
		return;		/* nothing completed: no interrupt, no poll */
	s_complete(s, st, n);
	s->polls++;
	if (s->polls % 8 == 0)
		s_check(s, "during the stress");
	if (s->polls % 16 == 4) {
		/* An admin's weight change, on a station that may be gone. */
		s->weights++;
		ret = RADIO_CALL(s, airtime_sta_set_weight(s->radio, 1 + r % S_STATIONS, 16 + (r >> 8) % 1024));
		if (ret && ret != -ENOENT)
			s_fail(s, "sta_set_weight: %d", ret);
	}
	if (s->polls % 64 == 40) {
		/* An admin turns AQL off or back on (mac80211's aql_enable) with frames in flight. */
		ret = RADIO_CALL(s, airtime_set_aql_enabled(s->radio, s->polls % 128 != 40));
		if (ret)
			s_fail(s, "set_aql_enabled: %d", ret);
	}
	if (s->polls % 16 == 8) {
		/* The driver's reap work: txqs the wake CPU removed while this one served them. */
		ret = RADIO_CALL(s, airtime_radio_reap(s->radio));
		if (ret < 0)
			s_fail(s, "radio_reap: %d", ret);
	}
	if (s->polls % 16 == 12) {
		ppdu.duration_us = 200 + r % 800;
		/* Every other record SU, with its MSDUs: a calibration sample. */
		ppdu.n_users = r & (1U << 20) ? 1 : 2;
		ppdu.users[0].peer_id = 1 + r % S_STATIONS;
		ppdu.users[1].peer_id = 1 + (r >> 4) % S_STATIONS;
		ppdu.users[0].rate.encoding = AIRTIME_RATE_HE;
		ppdu.users[0].rate.mcs = (r >> 8) % 12;
		ppdu.users[0].rate.nss = 1;
		ppdu.users[0].rate.bw = 2;
		ppdu.users[0].msdus = 1 + (r >> 12) % 32;
		ppdu.users[0].msdu_bytes = ppdu.users[0].msdus * 1500;
		ret = RADIO_CALL(s, airtime_ppdu_tx_stats(s->radio, &ppdu, s_now()));
		if (ret < 0 || ret > 2)
			s_fail(s, "ppdu_tx_stats: %d", ret);
	}
}

/*
 * The work the rounds_deferred() op scheduled (s->deferred_acs: a gated
 * runner's spent budget, or a concurrent round out of its follow-up rounds),
 * run by either context after its step, as a driver's tx work item or its
 * next NAPI poll would run it.
 */
static void s_run_waiting(struct s_hw *s, u32 cpu)
{
	int r;

	if (!atomic_xchg(&s->deferred_acs, 0))
		return;
	atomic_inc(&s->waiting_runs);
	r = RADIO_CALL(s, airtime_run_waiting_rounds(s->radio, cpu, s_now()));
	if (r < 0)
		s_fail(s, "run_waiting_rounds: %d", r);
}

/* The kthreads run until kthread_stop(); after a failure they only wait for it. */
static int s_wake_thread(void *arg)
{
	static struct airtime_tx_status st[S_BATCH];
	struct s_hw *s = arg;
	u32 rnd = 0x9e3779b9, n;

	while (!kthread_should_stop()) {
		if (atomic_read(&s->failed)) {
			msleep(1);
		} else {
			s_wake_step(s, &rnd);
			/*
			 * Every fourth step, the NAPI poll of its own ring's
			 * completions: two passes on one radio at once.
			 */
			if (s->wake_ring < AIRTIME_TCL_RINGS && ++s->wake_steps % 4 == 0) {
				n = s_firmware(s, st, S_BATCH, BIT(s->wake_ring));
				if (n) {
					s_complete(s, st, n);
					s->wake_polls++;
				}
			}
			s_run_waiting(s, raw_smp_processor_id());
		}
		cond_resched();
	}
	return 0;
}

static int s_complete_thread(void *arg)
{
	static struct airtime_tx_status st[S_BATCH];
	struct s_hw *s = arg;
	u32 rnd = 0x7f4a7c15;

	while (!kthread_should_stop()) {
		if (atomic_read(&s->failed)) {
			msleep(1);
		} else {
			s_complete_step(s, &rnd, st);
			s_run_waiting(s, raw_smp_processor_id());
		}
		cond_resched();
	}
	return 0;
}

/* Starts context @ctx's kthread on @cpu; the HAL knows it by its task from its first step. */
static struct task_struct *s_start(struct s_hw *s, int ctx, int (*fn)(void *), const char *name, u32 cpu)
{
	struct task_struct *t = kthread_create(fn, s, "%s", name);

	if (IS_ERR(t))
		return t;
	kthread_bind(t, cpu);
	s->task[ctx] = t;
	wake_up_process(t);
	return t;
}

/*
 * After the stress: the firmware completes everything and the completions
 * start the rounds; when the rings are empty, a wake of an empty station-less
 * txq runs a round on each AC (as a driver's tx timer would) without waking
 * the data txqs again, so a txq whose wake was lost keeps its frames.
 */
static u32 s_drain(struct s_hw *s)
{
	static struct airtime_tx_status st[S_BATCH];
	u32 step, n, t, idle = 0;
	int pushed, r;

	for (step = 0; step < S_DRAIN_STEPS && !atomic_read(&s->failed) && idle < 8; step++) {
		n = s_firmware(s, st, S_BATCH, S_ALL_RINGS);
		if (n) {
			s_complete(s, st, n);
			idle = 0;
			continue;
		}
		pushed = 0;
		for (t = 0; t < S_TIDS; t++) {
			r = RADIO_CALL(s, airtime_mcast_txq_wake(s->radio, s->kick_handle[t], 0, s_now()));
			if (r < 0)
				s_fail(s, "drain: kick on TID %u: %d", s_tids[t], r);
			else
				pushed += r;
		}
		/* And the tx timer's rounds on every AC, which wake no txq either. */
		r = RADIO_CALL(s, airtime_run_rounds(s->radio, 0xf, 0, s_now()));
		if (r < 0)
			s_fail(s, "drain: run_rounds: %d", r);
		else
			pushed += r;
		s_run_waiting(s, 0);
		idle = pushed ? 0 : idle + 1;
		if (step % 64 == 0)
			s_check(s, "in the drain");
	}
	return step;
}

static u64 s_sum(const u64 *v, u32 n)
{
	u64 sum = 0;

	while (n--)
		sum += v[n];
	return sum;
}

/**
 * airtime_capi_smp_stress() - the SMP stress self-test of the adapter API
 * @flags: 0, AIRTIME_STRESS_GATED_ROUNDS, or AIRTIME_STRESS_* faults that
 *	must make the test fail
 * @msg: buffer for the result, always NUL-terminated
 * @len: size of @msg, at least 1
 *
 * One radio, four stations with a BE and a VI txq each, a multicast txq, and
 * a HAL locked as ath11k's is: a spinlock per TCL ring (tcl_ring->lock) and
 * per ring's MSDU table (tx_idr_lock), never two at once, and no lock over
 * the radio; the frame pool and each txq have their own. Two kthreads, bound
 * to the first two online CPUs, drive it for S_RUN_MS (longer, up to
 * S_EXTRA_MAX * S_EXTRA_MS more, until a removal has waited for the other
 * CPU and, gated, a round was deferred): the wake context
 * enqueues frames and wakes their txqs, and makes stations leave (their txqs
 * purged) and join again; the completion context plays the firmware and the
 * NAPI poll (batches under a budget) for every ring but the wake CPU's, changes
 * weights, feeds PPDU stats and checks the invariants. Every fourth step the
 * wake context runs the NAPI poll of its own CPU's ring (ath11k has one per
 * WBM ring), so two completion passes run on the radio at once. Half the wakes push into the completion CPU's ring
 * (s_wake_cpu()), so both contexts' rounds write descriptors into one ring
 * at once. Every adapter call goes through RADIO_CALL(). Then the drain, and
 * the checks: pending airtime 0, no frame in the hardware or a retry slot, no
 * txq holding frames (a lost wake), every frame accounted for by both the
 * test and the API's counters, no frame handed back twice, one ring written
 * by both contexts, destroy with nothing left. How often a ring's or a
 * table's lock was found taken is reported. The AIRTIME_STRESS_* faults (a
 * run of S_FAULT_RUN_MS) must each fail it. With AIRTIME_STRESS_GATED_ROUNDS
 * the radio's rounds are gated (two rounds a call): its rounds_deferred() op
 * marks the ACs, either kthread runs airtime_run_waiting_rounds() after its
 * next step, and the run must pass with requests handed off and deferred,
 * every AC left waiting when the kthreads stop announced to the op, and
 * nothing waiting after the drain.
 *
 * Context: Process context (module init); sleeps while the kthreads run.
 * Return: 0 on success, non-zero on failure.
 */
int airtime_capi_smp_stress(u32 flags, char *msg, size_t len)
{
	struct airtime_radio_config cfg = {};
	struct airtime_radio_counters c;
	struct airtime_radio_stats stats;
	struct airtime_hal_ops no_op_ops;
	struct task_struct *tw = NULL, *tc = NULL;
	long work_runs = airtime_rounds_work_runs();
	ktime_t t0;
	u32 quiesces = 0;
	struct s_hw *s;
	u64 returned[T_NUM_STATUS], ret_sum, comp_sum, queued, dequeued, purged;
	u32 i, t, cpu0, cpu1, drain_steps, run_ms, shared = 0, shared_ring = 0, pushed[S_CTXS] = { 0, 0 };
	int ret = 0, err = 0, r;

	if (!msg || !len)
		return -EFAULT;
	msg[0] = '\0';
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s) {
		snprintf(msg, len, "no memory for the test");
		return -ENOMEM;
	}
	for (i = 0; i < AIRTIME_TCL_RINGS; i++) {
		spin_lock_init(&s->ring[i].lock);
		spin_lock_init(&s->idr[i].lock);
	}
	spin_lock_init(&s->pool_lock);
	for (i = 0; i < S_TXQS; i++)
		spin_lock_init(&s->txq[i].lock);
	for (i = 0; i < S_TIDS; i++)
		spin_lock_init(&s->kick_txq[i].lock);
	for (i = 0; i < S_FRAMES; i++) {
		atomic_set(&s->frames[i].state, S_FREE);
		s->free[i] = S_FRAMES - 1 - i;
	}
	s->nfree = S_FRAMES;
	s->flags = flags;
	run_ms = flags & (S_FAULTS | AIRTIME_STRESS_NO_DEFERRED_OP) ? S_FAULT_RUN_MS : S_RUN_MS;

	cfg.ops = &s_ops;
	if (flags & AIRTIME_STRESS_NO_DEFERRED_OP) {
		/* The module's rounds work runs the deferrals: a third context. */
		no_op_ops = s_ops;
		no_op_ops.rounds_deferred = NULL;
		cfg.ops = &no_op_ops;
	}
	cfg.hw = s;
	/* With the estimate's calibration: prices move under the wake CPU's charges. */
	cfg.flags = AIRTIME_RADIO_TX_NO_PUSHBACK | AIRTIME_RADIO_CALIBRATE;
	if (flags & AIRTIME_STRESS_GATED_ROUNDS) {
		/* Two rounds a call: runners meet their budget, and rounds wait. */
		cfg.flags |= AIRTIME_RADIO_GATED_ROUNDS;
		cfg.gate_rounds = 2;
	}
	cfg.tcl_descriptors = S_RING_SLOTS;
	cfg.msdu_capacity = S_MSDU_SLOTS;
	cfg.max_stations = 16;
	cfg.max_txqs = 64;
	s->radio = airtime_radio_create(&cfg, &err);
	CHECK(s->radio, "create: err %d", err);
	for (i = 0; i < S_STATIONS; i++)
		s_churn(s, i, 256);
	s->churns = 0;
	atomic_set(&s->txq[S_MCAST].live, 1);
	for (t = 0; t < S_TIDS; t++)
		atomic_set(&s->kick_txq[t].live, 1);
	r = RADIO_CALL(s, airtime_mcast_txq_add(s->radio, 0, &s->txq[S_MCAST], &s->mcast_handle));
	CHECK(!r, "mcast_txq_add: %d", r);
	for (t = 0; t < S_TIDS; t++) {
		r = RADIO_CALL(s, airtime_mcast_txq_add(s->radio, s_tids[t], &s->kick_txq[t], &s->kick_handle[t]));
		CHECK(!r, "mcast_txq_add(kick, TID %u): %d", s_tids[t], r);
	}
	CHECK(!atomic_read(&s->failed), "setup: %s", s->why);

	cpu0 = cpumask_first(cpu_online_mask);
	cpu1 = cpumask_next(cpu0, cpu_online_mask);
	if (cpu1 >= nr_cpu_ids)
		cpu1 = cpu0;
	s->cpu[S_WAKE_CTX] = cpu0;
	s->cpu[S_NAPI_CTX] = cpu1;
	/*
	 * The ring of the wake CPU's own pushes (cpu % rings), completed there;
	 * none if the two CPUs share a ring (one CPU, or CPUs 0 and 3).
	 */
	s->wake_ring = cpu0 % AIRTIME_TCL_RINGS == cpu1 % AIRTIME_TCL_RINGS ? AIRTIME_TCL_RINGS :
									     cpu0 % AIRTIME_TCL_RINGS;
	tw = s_start(s, S_WAKE_CTX, s_wake_thread, "airtime-wake", cpu0);
	if (IS_ERR(tw)) {
		r = PTR_ERR(tw);
		tw = NULL;
		CHECK(0, "kthread_create(wake): %d", r);
	}
	tc = s_start(s, S_NAPI_CTX, s_complete_thread, "airtime-napi", cpu1);
	if (IS_ERR(tc)) {
		r = PTR_ERR(tc);
		tc = NULL;
		CHECK(0, "kthread_create(napi): %d", r);
	}
	if (flags & AIRTIME_STRESS_NO_DEFERRED_OP) {
		/* Quiesce and resume while both kthreads defer into the work. */
		for (t = 0; t < run_ms / 100; t++) {
			msleep(80);
			CHECK(!airtime_radio_quiesce(s->radio), "quiesce failed");
			WRITE_ONCE(s->quiesced, true);
			msleep(20);
			WRITE_ONCE(s->quiesced, false);
			CHECK(!airtime_radio_resume_rounds(s->radio), "resume failed");
			quiesces++;
		}
	} else {
		msleep(run_ms);
	}
	/* On two CPUs, until a removal waited and (gated) a round was deferred. */
	for (t = 0; cpu0 != cpu1 && !(flags & S_FAULTS) && !atomic_read(&s->failed) && t < S_EXTRA_MAX; t++) {
		if (READ_ONCE(s->remove_waits) &&
		    (!(flags & AIRTIME_STRESS_GATED_ROUNDS) || atomic_read(&s->deferred_calls)))
			break;
		msleep(S_EXTRA_MS);
		run_ms += S_EXTRA_MS;
	}
	kthread_stop(tw);
	tw = NULL;
	kthread_stop(tc);
	tc = NULL;
	s->task[S_WAKE_CTX] = s->task[S_NAPI_CTX] = NULL;
	CHECK(!atomic_read(&s->failed), "stress: %s", s->why);
	/*
	 * Every AC left waiting for a runner was announced to the driver; without
	 * the op, the module's work runs them (its run may still be pending or in
	 * a backoff: wait for it, up to T_WORK_WAIT_US).
	 */
	r = RADIO_CALL(s, airtime_rounds_waiting(s->radio));
	for (t0 = ktime_get(); (flags & AIRTIME_STRESS_NO_DEFERRED_OP) && r > 0 &&
	     ktime_us_delta(ktime_get(), t0) < T_WORK_WAIT_US;
	     r = RADIO_CALL(s, airtime_rounds_waiting(s->radio)))
		usleep_range(1000, 2000);
	CHECK(r >= 0 && !(r & ~atomic_read(&s->deferred_acs)),
	      "rounds waiting on ACs %#x, announced %#x: a deferral nobody was told of", r,
	      atomic_read(&s->deferred_acs));

	/* AQL back on (the completion kthread toggles it) for the drain. */
	r = RADIO_CALL(s, airtime_set_aql_enabled(s->radio, true));
	CHECK(!r, "set_aql_enabled: %d", r);
	drain_steps = s_drain(s);
	CHECK(!atomic_read(&s->failed), "%s", s->why);
	r = RADIO_CALL(s, airtime_rounds_waiting(s->radio));
	CHECK(r == 0, "rounds still waiting for a runner after the drain: %d", r);
	for (i = 0; i < S_TXQS; i++) {
		u32 left = s_queued_now(&s->txq[i]);

		CHECK(!left, "lost wake: txq %u still holds %u frames after the drain (%u steps)", i, left,
		      drain_steps);
	}
	CHECK(!RADIO_CALL(s, airtime_radio_get_stats(s->radio, &stats)), "get_stats");
	CHECK(!stats.total_pending_us && !stats.outstanding_msdus && !stats.held_frames,
	      "after the drain: %u us pending, %u frames in the hardware, %u held", stats.total_pending_us,
	      stats.outstanding_msdus, stats.held_frames);
	r = RADIO_CALL(s, airtime_radio_check_idle(s->radio));
	CHECK(!r, "invariants after the drain: %d", r);
	/* Every removed txq released once, every departed station drained once. */
	r = RADIO_CALL(s, airtime_radio_reap(s->radio));
	CHECK(r >= 0, "radio_reap after the drain: %d", r);
	CHECK(atomic_read(&s->released) == s->removed_txqs && atomic_read(&s->drained) == s->departures,
	      "reaped %d of %u removed txqs, %d of %u departed stations", atomic_read(&s->released), s->removed_txqs,
	      atomic_read(&s->drained), s->departures);

	/* Conservation, as the test saw it and as the API counts it. */
	CHECK(!RADIO_CALL(s, airtime_radio_get_counters(s->radio, &c)), "get_counters");
	for (i = 0; i < T_NUM_STATUS; i++)
		returned[i] = atomic64_read(&s->returned[i]);
	ret_sum = s_sum(returned, T_NUM_STATUS);
	comp_sum = s_sum(c.completions, T_NUM_STATUS);
	queued = atomic64_read(&s->queued);
	dequeued = atomic64_read(&s->dequeued);
	purged = atomic64_read(&s->purged);
	CHECK(!atomic_read(&s->bad), "%d callbacks on frames in the wrong state", atomic_read(&s->bad));
	CHECK(queued == ret_sum + purged, "frames lost: %llu queued, %llu handed back, %llu purged", queued, ret_sum,
	      purged);
	CHECK(dequeued == c.enqueued + c.flushed, "%llu dequeued, the API enqueued %llu and flushed %llu", dequeued,
	      c.enqueued, c.flushed);
	CHECK(c.enqueued == comp_sum && ret_sum == comp_sum + c.flushed,
	      "API: %llu enqueued, %llu completed, %llu flushed; test: %llu handed back", c.enqueued, comp_sum,
	      c.flushed, ret_sum);
	for (i = 0; i < T_NUM_STATUS; i++)
		CHECK(returned[i] == c.completions[i] + (i == AIRTIME_TX_REMOVED ? c.flushed : 0),
		      "status %u: test saw %llu, API counted %llu", i, returned[i], c.completions[i]);
	CHECK(!c.unknown_msdu && !c.release_errors, "API: %llu unknown MSDUs, %llu release errors", c.unknown_msdu,
	      c.release_errors);
	CHECK(s->nfree == S_FRAMES, "%u of %u frames back in the pool", s->nfree, S_FRAMES);
	/*
	 * On one CPU the kthreads take turns between steps and never meet in a
	 * round: nothing is handed off, and only the bound on announcements holds.
	 */
	if ((flags & AIRTIME_STRESS_GATED_ROUNDS) && cpu0 == cpu1)
		CHECK(atomic_read(&s->deferred_calls) <= c.rounds_deferred,
		      "gated on one CPU: %llu deferrals, %d announced", c.rounds_deferred,
		      atomic_read(&s->deferred_calls));
	else if (flags & AIRTIME_STRESS_GATED_ROUNDS)
		CHECK(c.rounds_handed_off && c.rounds_deferred && atomic_read(&s->deferred_calls) &&
		      atomic_read(&s->deferred_calls) <= c.rounds_deferred,
		      "gated: %llu requests handed off, %llu deferrals, %d announced", c.rounds_handed_off,
		      c.rounds_deferred, atomic_read(&s->deferred_calls));
	else
		/*
		 * Concurrent rounds never hand off. They defer when a round's
		 * follow-ups run out (overlapping rounds, a ring refusing as full
		 * again and again: this HAL's injected -ENOSPC), and a call also
		 * announces a round another call left waiting, so announcements
		 * are not bounded by the count; the drain checks nothing waits.
		 */
		CHECK(!c.rounds_handed_off, "concurrent rounds handed %llu off (%llu deferrals, %d announced)",
		      c.rounds_handed_off, c.rounds_deferred, atomic_read(&s->deferred_calls));
	CHECK(s->polls > 100 && s->wakes > 100 && s->churns > 2 && c.enqueued > 1000,
	      "too little happened: %u polls, %u wakes, %u churns, %llu frames", s->polls, s->wakes, s->churns,
	      c.enqueued);
	/* Two completion passes ran at once (unless the CPUs share a ring). */
	CHECK(s->wake_ring == AIRTIME_TCL_RINGS || (s->wake_polls > 100 && atomic_read(&s->overlapped)),
	      "completion passes on the wake CPU: %u, overlapping: %d", s->wake_polls, atomic_read(&s->overlapped));
	/* No callback on a txq after mac80211 would have freed it. */
	CHECK(!atomic_read(&s->freed_use), "%d callbacks on txqs freed after their station's removal",
	      atomic_read(&s->freed_use));
	/* And a removal met a serving CPU, so that check was not vacuous. */
	CHECK(cpu0 == cpu1 || s->remove_waits, "no removal had to wait for a txq another CPU served (%u churns)",
	      s->churns);
	/* Both contexts' rounds pushed into one ring: its lock had two users. */
	for (i = 0, shared = 0; i < AIRTIME_TCL_RINGS; i++) {
		u32 w = atomic_read(&s->ring[i].pushed[S_WAKE_CTX]), n = atomic_read(&s->ring[i].pushed[S_NAPI_CTX]);

		if (min(w, n) > shared) {
			shared = min(w, n);
			shared_ring = i;
			pushed[S_WAKE_CTX] = w;
			pushed[S_NAPI_CTX] = n;
		}
	}
	CHECK(shared > 100, "no TCL ring took 100 descriptors from each context (best: ring %u, %u and %u)",
	      shared_ring, pushed[S_WAKE_CTX], pushed[S_NAPI_CTX]);

	for (i = 0, t = 0; i < S_STATIONS; i++)
		t += s->present[i];
	r = airtime_radio_destroy(s->radio);
	s->radio = NULL;
	CHECK(r == 0, "destroy handed back %d frames", r);
	CHECK(atomic_read(&s->released) == s->removed_txqs + t * S_TIDS + 1 + S_TIDS &&
	      atomic_read(&s->drained) == s->departures + t && !atomic_read(&s->bad),
	      "destroy: %d txqs released in all (%u removed before, %u stations left), %d stations drained",
	      atomic_read(&s->released), s->removed_txqs, t, atomic_read(&s->drained));

	if (flags & AIRTIME_STRESS_NO_DEFERRED_OP) {
		CHECK(!atomic_read(&s->work_in_quiesce), "no op: %d callbacks from the work while it was quiesced",
		      atomic_read(&s->work_in_quiesce));
		CHECK(c.rounds_deferred > 0 && airtime_rounds_work_runs() > work_runs,
		      "no op: %llu deferrals, %ld runs of the module's work: the work was not exercised",
		      c.rounds_deferred, airtime_rounds_work_runs() - work_runs);
		snprintf(msg, len,
			 "no op: %llu deferrals, %ld runs of the module's work, %u quiesce/resume cycles; kthreads on CPUs %u/%u, %u ms: %llu frames, %u wakes, %u polls, %u churns, drain %u steps",
			 c.rounds_deferred, airtime_rounds_work_runs() - work_runs, quiesces, cpu0, cpu1, run_ms,
			 c.enqueued, s->wakes, s->polls, s->churns, drain_steps);
		goto out;
	}
	if (flags & AIRTIME_STRESS_GATED_ROUNDS) {
		/* Shorter, so that it fits AIRTIME_SELFTEST_MSG_LEN with the gate's numbers. */
		snprintf(msg, len,
			 "gated rounds: %llu requests handed off, %llu deferrals, %d announced; kthreads on CPUs %u/%u, %u ms: %llu frames, %u wakes, %u polls, %u churns, drain %u steps",
			 c.rounds_handed_off, c.rounds_deferred, atomic_read(&s->deferred_calls), cpu0, cpu1, run_ms,
			 c.enqueued, s->wakes, s->polls, s->churns, drain_steps);
		goto out;
	}
	snprintf(msg, len,
		 "kthreads on CPUs %u/%u, %u ms: %llu frames, %u wakes, %u+%u polls, %u churns (%u met, %u waited), %u weights, %llu held, %llu purged, drain %u; ring %u shared (%u/%u), contended: ring %d (push/push %d), idr %d",
		 cpu0, cpu1, run_ms, c.enqueued, s->wakes, s->polls, s->wake_polls, s->churns, s->remove_met,
		 s->remove_waits, s->weights, c.held_for_retry,
		 purged, drain_steps, shared_ring, pushed[S_WAKE_CTX], pushed[S_NAPI_CTX], atomic_read(&s->ring_contended),
		 atomic_read(&s->push_contended), atomic_read(&s->idr_contended));
out:
	if (tw)
		kthread_stop(tw);
	if (tc)
		kthread_stop(tc);
	if (s->radio)
		airtime_radio_destroy(s->radio);
	kfree(s);
	return ret;
}
