// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * airtime_capi_selftest.c - the adapter's C API, driven from C
 *
 * A small HAL written in C, the way a driver would write one over its
 * hardware: three TCL rings (FIFOs of MSDU ids), an MSDU table per ring (an
 * array standing in for ath11k's idr), txqs of frames, and a status sink that
 * records how each frame ended. The test calls every function of the adapter
 * API through airtime_ath11k.h, each under the radio's spinlock taken with
 * spin_lock_bh() as a driver would, and checks the results: errors for bad
 * arguments, every frame handed back exactly once whatever its completion
 * status, NAPI passes bounded by their budget, no pending airtime left, the
 * debugfs texts, station removal and destroy with frames in flight.
 *
 * Run by the Rust scenario c-api-roundtrip (src/selftest/capi.rs).
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "airtime_ath11k.h"

/*
 * RADIO_CALL() - make one call into the adapter; every test calls it here.
 * @hw: the test's HAL context, which has a spinlock_t radio_lock
 * @call: the adapter call, e.g. airtime_txq_wake(radio, 1, 0, cpu, now)
 *
 * The C API's contract today is that the caller serialises every call on one
 * radio (the adapter takes its radio exclusively): a driver does it with one
 * spinlock per radio taken with spin_lock_bh(), and so does every test in this
 * file, here and nowhere else. When the adapter
 * becomes concurrent (its wake and completion paths on different CPUs at
 * once), this macro drops the lock and the tests run unchanged without it.
 *
 * The arguments of @call are evaluated under the lock.
 */
#define RADIO_CALL(hw, call) ({					\
	typeof(call) __ret;					\
	spin_lock_bh(&(hw)->radio_lock);			\
	__ret = (call);						\
	spin_unlock_bh(&(hw)->radio_lock);			\
	__ret;							\
})

#define T_RING_SLOTS	16	/* descriptors per TCL ring */
#define T_MSDU_SLOTS	24	/* MSDU table entries per ring */
#define T_FRAMES	96
#define T_TXQ_LEN	64
#define T_BUDGET	4
#define T_NUM_STATUS	6

struct t_frame {
	u32 len;
	u8 status;
	bool done;
};

struct t_txq {
	struct t_frame *q[T_TXQ_LEN];
	u32 head;
	u32 count;
};

struct t_hw {
	spinlock_t radio_lock;	/* RADIO_CALL() */
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
};

static u32 t_tcl_free(void *ctx, u8 ring)
{
	struct t_hw *hw = ctx;

	if (ring >= AIRTIME_TCL_RINGS) {
		hw->bad_callbacks++;
		return 0;
	}
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
	if (hw->fail_next_enqueue) {
		hw->fail_next_enqueue = 0;
		return -ENOMEM;
	}
	if (hw->ring_count[ring] == T_RING_SLOTS)
		return -ENOSPC;
	tail = (hw->ring_head[ring] + hw->ring_count[ring]) % T_RING_SLOTS;
	hw->ring[ring][tail] = desc->msdu_id;
	hw->ring_count[ring]++;
	if (!desc->has_peer)
		hw->no_peer_descs++;
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
	for (i = 0; i < T_MSDU_SLOTS; i++) {
		if (!hw->used[ring][i]) {
			hw->msdu[ring][i] = *msdu;
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

static void t_tx_status(void *ctx, void *frame, u8 status)
{
	struct t_hw *hw = ctx;
	struct t_frame *f = frame;

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
};

/* One of every callback but tx_status: creation must refuse it. */
static const struct airtime_hal_ops t_ops_incomplete = {
	.tcl_free = t_tcl_free,
	.tcl_enqueue = t_tcl_enqueue,
	.msdu_outstanding = t_msdu_outstanding,
	.msdu_insert = t_msdu_insert,
	.msdu_take = t_msdu_take,
	.msdu_take_any = t_msdu_take_any,
	.txq_dequeue = t_txq_dequeue,
	.txq_peek_len = t_txq_peek_len,
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
	struct airtime_radio_stats stats;
	struct airtime_ppdu_stats ppdu = {};
	struct airtime_radio *radio = NULL;
	struct t_hw *hw;
	char *text;
	u64 now = 1000;
	u32 i, n, done, next_status = 0, calls = 0, max_pass = 0, peak = 0, pushed = 0;
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
	spin_lock_init(&hw->radio_lock);

	/* Creation: bad configurations are refused. */
	CHECK(!airtime_radio_create(NULL, &err) && err == -EFAULT, "create(NULL): err %d", err);
	cfg.ops = &t_ops_incomplete;
	cfg.hw = hw;
	CHECK(!airtime_radio_create(&cfg, &err) && err == -EINVAL, "create without tx_status: err %d", err);
	cfg.ops = &t_ops;
	cfg.flags = 1U << 7;
	CHECK(!airtime_radio_create(&cfg, &err) && err == -EINVAL, "create with flag 0x80: err %d", err);
	cfg.flags = AIRTIME_RADIO_TX_NO_PUSHBACK;
	cfg.tcl_descriptors = T_RING_SLOTS;
	cfg.msdu_capacity = T_MSDU_SLOTS;
	cfg.max_stations = 8;
	cfg.max_txqs = 32;
	radio = airtime_radio_create(&cfg, &err);
	CHECK(radio, "create: err %d", err);

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

	/* The firmware completes; each NAPI poll takes at most its budget. */
	for (i = 0; i < 400 && hw->returned < T_FRAMES; i++) {
		now += 500;
		n = t_firmware(hw, st, 8, &next_status);
		for (done = 0; done < n;) {
			r = RADIO_CALL(hw, airtime_tx_complete(radio, st + done, n - done, T_BUDGET, 0, now));
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
			ppdu.users[0].rate.encoding = AIRTIME_RATE_HE;
			ppdu.users[0].rate.mcs = 7;
			ppdu.users[0].rate.nss = 1;
			ppdu.users[0].rate.bw = 2;
			r = RADIO_CALL(hw, airtime_ppdu_tx_stats(radio, &ppdu, now));
			CHECK(r == 2, "ppdu_tx_stats: %d users charged", r);
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
	CHECK(!hw->double_returns && !hw->bad_callbacks, "%u frames handed back twice, %u bad callbacks",
	      hw->double_returns, hw->bad_callbacks);
	for (i = 0; i < T_NUM_STATUS; i++)
		CHECK(hw->status_count[i], "no frame completed with status %u", i);
	CHECK(!RADIO_CALL(hw, airtime_radio_get_stats(radio, &stats)), "get_stats");
	CHECK(!stats.total_pending_us && !stats.outstanding_msdus && !stats.held_frames,
	      "after the drain: %u us pending, %u outstanding, %u held", stats.total_pending_us,
	      stats.outstanding_msdus, stats.held_frames);
	CHECK(peak > 0 && max_pass == T_BUDGET, "peak pending %u us, largest pass %u", peak, max_pass);

	/* Bad records change nothing. */
	ppdu.n_users = AIRTIME_PPDU_MAX_USERS + 1;
	r = RADIO_CALL(hw, airtime_ppdu_tx_stats(radio, &ppdu, now));
	CHECK(r == -EINVAL, "ppdu with 9 users: %d", r);
	ppdu.n_users = 1;
	ppdu.users[0].rate.mcs = 12;
	r = RADIO_CALL(hw, airtime_ppdu_tx_stats(radio, &ppdu, now));
	CHECK(r == -EINVAL, "HE MCS 12: %d", r);
	st[0].ring = AIRTIME_TCL_RINGS;
	r = RADIO_CALL(hw, airtime_tx_complete(radio, st, 1, T_BUDGET, 0, now));
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
	CHECK(r > 0 && strstr(text, "Pending tx MSDUs total: 0"), "dp_stats (%d)", r);
	r = RADIO_CALL(hw, airtime_debugfs_aql(radio, 1, text, 8));
	CHECK(r == -ENOSPC && strlen(text) == 7, "aql into 8 bytes: %d", r);
	r = RADIO_CALL(hw, airtime_debugfs_aql(radio, 9, text, 1024));
	CHECK(r == -ENOENT, "aql of an unknown peer: %d", r);

	/* Teardown with frames in the hardware. */
	for (i = 0; i < 8; i++)
		t_enqueue(&hw->txq[0], &hw->frames[i]);
	hw->returned = 0;
	r = RADIO_CALL(hw, airtime_txq_wake(radio, 1, 0, 1, now));
	CHECK(r == 8, "wake before teardown pushed %d", r);
	CHECK(!RADIO_CALL(hw, airtime_sta_remove(radio, 2)), "sta_remove(2)");
	r = RADIO_CALL(hw, airtime_sta_remove(radio, 2));
	CHECK(r == -ENOENT, "sta_remove(2) again: %d", r);
	r = airtime_radio_destroy(radio);
	radio = NULL;
	CHECK(r == 8 && hw->returned == 8 && hw->status_count[AIRTIME_TX_REMOVED] >= 8,
	      "destroy handed back %d frames (%u seen)", r, hw->returned);

	snprintf(msg, len,
		 "%u frames via C HAL: %u NAPI calls (budget %d, max %u), statuses %u/%u/%u/%u/%u/%u, peak %u us, destroy returned %d",
		 T_FRAMES, calls, T_BUDGET, max_pass, hw->status_count[0], hw->status_count[1], hw->status_count[2],
		 hw->status_count[3], hw->status_count[4] - 8, hw->status_count[5], peak, r);
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
	u64 now = 1000, mc = 0, bogus = 0;
	u32 i, n, done, next_status = 0, mcast_first, at_half[2] = { 0, 0 }, fin[2];
	int ret = 0, err = 0, r;

	if (!msg || !len)
		return -EFAULT;
	msg[0] = '\0';
	hw = kzalloc(sizeof(*hw), GFP_KERNEL);
	if (!hw) {
		snprintf(msg, len, "no memory for the test");
		return -ENOMEM;
	}
	spin_lock_init(&hw->radio_lock);
	cfg.ops = &t_ops;
	cfg.hw = hw;
	cfg.flags = AIRTIME_RADIO_TX_NO_PUSHBACK;
	cfg.tcl_descriptors = T_RING_SLOTS;
	cfg.msdu_capacity = T_MSDU_SLOTS;
	cfg.max_stations = 8;
	cfg.max_txqs = 32;
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
	CHECK(!RADIO_CALL(hw, airtime_radio_check(radio)), "invariants with multicast in flight");
	r = RADIO_CALL(hw, airtime_txq_wake(radio, 1, 0, 0, now));
	CHECK(r >= 0, "station wake: %d", r);

	/* The firmware completes; rounds start from the completions. */
	for (i = 0; i < 400 && hw->returned < T_FRAMES; i++) {
		now += 500;
		n = t_firmware(hw, st, 8, &next_status);
		for (done = 0; done < n;) {
			r = RADIO_CALL(hw, airtime_tx_complete(radio, st + done, n - done, T_BUDGET, 0, now));
			CHECK(r > 0 && r <= T_BUDGET, "tx_complete(%u left): %d", n - done, r);
			done += r;
		}
		if (hw->returned >= T_FRAMES / 2 && !at_half[0] && !at_half[1])
			t_done_per_txq(hw, at_half);
		CHECK(!RADIO_CALL(hw, airtime_radio_check(radio)), "invariants after poll %u", i);
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

	/* Removal: the handle is refused afterwards. */
	CHECK(!RADIO_CALL(hw, airtime_mcast_txq_remove(radio, mc)), "mcast_txq_remove");
	r = RADIO_CALL(hw, airtime_mcast_txq_remove(radio, mc));
	CHECK(r == -ENOENT, "mcast_txq_remove again: %d", r);
	r = RADIO_CALL(hw, airtime_mcast_txq_wake(radio, mc, 0, now));
	CHECK(r == -ENOENT, "wake after removal: %d", r);
	CHECK(!RADIO_CALL(hw, airtime_radio_check(radio)), "invariants after removal");
	r = airtime_radio_destroy(radio);
	radio = NULL;
	CHECK(r == 0, "destroy handed back %d frames", r);

	snprintf(msg, len,
		 "%u station + %u multicast frames, %u multicast in the first round uncharged, at half time %u/%u done, pending 0",
		 T_FRAMES / 2, T_FRAMES / 2, mcast_first, at_half[0], at_half[1]);
out:
	if (radio)
		airtime_radio_destroy(radio);
	kfree(hw);
	return ret;
}
