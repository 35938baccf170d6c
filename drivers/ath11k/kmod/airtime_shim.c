// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * airtime_shim.c - C side of airtime_ath11k.ko
 *
 * The module is this shim plus one object built from the Rust crate
 * airtime-ath11k-kmod (see build.sh). The shim provides what Rust cannot
 * reach without the kernel's C headers: the allocator wrappers behind the
 * Rust global allocator, the panic report, the work item that runs a
 * concurrent radio's deferred rounds when its driver gave no
 * rounds_deferred() op, and module init/exit with the load-time self-test.
 *
 * At load the self-test runs the scenarios selected by scenario= and prints
 * one line per scenario:
 *
 *	airtime: PASS <name>
 *	airtime: RESULT <name>: <measured numbers>	(after a PASS, if any)
 *	airtime: FAIL <name>: <why>
 *
 * Any FAIL makes init return -EINVAL, so the module does not load.
 */
#define pr_fmt(fmt) "airtime: " fmt

#include <linux/bottom_half.h>
#include <linux/build_bug.h>
#include <linux/bug.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "airtime_ath11k.h"

/*
 * Rust allocations: atomic because the adapter's data path runs in softirq
 * (NAPI) context, except in airtime_radio_create() (airtime_gfp()); no
 * warning because the Rust side reports failures.
 */
#define AIRTIME_GFP (GFP_ATOMIC | __GFP_NOWARN)

/* The Rust allocator relies on these kmalloc guarantees (src/kalloc.rs). */
static_assert(ARCH_KMALLOC_MINALIGN >= AIRTIME_KMALLOC_MIN_ALIGN);
static_assert(AIRTIME_KMALLOC_MAX_ALIGN <= PAGE_SIZE);
/* Same layout as SelftestInfo in src/entry.rs. */
static_assert(sizeof(struct airtime_selftest_info) == 16);
/* Same layouts as the #[repr(C)] types of src/api.rs and src/chal.rs. */
static_assert(sizeof(struct airtime_radio_config) == 48);
static_assert(offsetof(struct airtime_radio_config, turn_frames) == 32);
static_assert(offsetof(struct airtime_radio_config, gate_rounds) == 40);
static_assert(offsetof(struct airtime_radio_config, max_tx_ring) == 44);
static_assert(sizeof(struct airtime_rate) == 8);
static_assert(sizeof(struct airtime_ppdu_user) == 24);
static_assert(offsetof(struct airtime_ppdu_user, msdus) == 16);
static_assert(offsetof(struct airtime_ppdu_user, reserved2) == 18);
static_assert(offsetof(struct airtime_ppdu_user, msdu_bytes) == 20);
static_assert(sizeof(struct airtime_ppdu_stats) == 200);
static_assert(sizeof(struct airtime_radio_stats) == 32);
static_assert(sizeof(struct airtime_radio_counters) == 168);
static_assert(offsetof(struct airtime_radio_counters, uncharged) == 96);
static_assert(offsetof(struct airtime_radio_counters, calib_accepted) == 104);
static_assert(offsetof(struct airtime_radio_counters, calib_rejected) == 112);
static_assert(offsetof(struct airtime_radio_counters, calib_busy) == 120);
static_assert(offsetof(struct airtime_radio_counters, calib_stale) == 128);
static_assert(offsetof(struct airtime_radio_counters, calib_mu_users) == 136);
static_assert(offsetof(struct airtime_radio_counters, calib_no_rate) == 144);
static_assert(offsetof(struct airtime_radio_counters, rounds_handed_off) == 152);
static_assert(sizeof(struct airtime_tx_status) == 8);
static_assert(sizeof(struct airtime_msdu) == 24);
static_assert(sizeof(struct airtime_tcl_desc) == 24);
static_assert(offsetof(struct airtime_tcl_desc, msdu_id) == 8);
static_assert(sizeof(struct airtime_hal_ops) == 13 * sizeof(void *));
/* The last op added: in place, so the Rust side's order is the header's. */
static_assert(offsetof(struct airtime_hal_ops, tx_status_at) == 12 * sizeof(void *));

static char *scenario = "all";
module_param(scenario, charp, 0444);
MODULE_PARM_DESC(scenario,
		 "self-test to run at load: \"all\" (default; skips explicit-only scenarios), a scenario name, or its index");

/*
 * The tasks inside airtime_radio_create() (process context, may sleep), whose
 * allocations may then sleep; NULL slots are free. A few, for radios probed
 * at once; a create that finds none free allocates atomically.
 */
#define AIRTIME_SLEEPERS 4
static struct task_struct *airtime_alloc_sleepers[AIRTIME_SLEEPERS];
/* Allocations that were allowed to sleep, for the self-test. */
static atomic_long_t airtime_sleeping_allocs = ATOMIC_LONG_INIT(0);

/* The slot this task holds, or -1. */
static int airtime_alloc_slot(void)
{
	int i;

	for (i = 0; i < AIRTIME_SLEEPERS; i++)
		if (READ_ONCE(airtime_alloc_sleepers[i]) == current)
			return i;
	return -1;
}

bool airtime_alloc_may_sleep_begin(void)
{
	int i;

	if (airtime_alloc_slot() >= 0)
		return false;	/* nested: the outer scope ends the mode */
	for (i = 0; i < AIRTIME_SLEEPERS; i++)
		if (!cmpxchg(&airtime_alloc_sleepers[i], NULL, current))
			return true;
	return false;
}

void airtime_alloc_may_sleep_end(void)
{
	int i = airtime_alloc_slot();

	if (i >= 0)
		WRITE_ONCE(airtime_alloc_sleepers[i], NULL);
}

long airtime_alloc_sleeping_count(void)
{
	return atomic_long_read(&airtime_sleeping_allocs);
}

/*
 * GFP_KERNEL for a creating task itself, as long as nothing made it atomic: a
 * softirq that interrupts it is not the task (though current says so), nor
 * is the task with BHs or IRQs off, a lock held or, under PREEMPT_RCU, in an
 * RCU read-side section; without a preempt count a held spinlock cannot be
 * seen, so never. __GFP_RETRY_MAYFAIL: a failure is -ENOMEM, not the OOM
 * killer. GFP_ATOMIC for everything else: the data path runs in softirq.
 */
static gfp_t airtime_gfp(void)
{
	if (!IS_ENABLED(CONFIG_PREEMPT_COUNT) || !in_task() || in_atomic() || irqs_disabled() ||
	    rcu_preempt_depth() || airtime_alloc_slot() < 0)
		return AIRTIME_GFP;
	atomic_long_inc(&airtime_sleeping_allocs);
	return GFP_KERNEL | __GFP_RETRY_MAYFAIL | __GFP_NOWARN;
}

void *airtime_kmalloc(size_t size)
{
	return kmalloc(size, airtime_gfp());
}

void *airtime_kzalloc(size_t size)
{
	return kzalloc(size, airtime_gfp());
}

void *airtime_krealloc(void *ptr, size_t size)
{
	return krealloc(ptr, size, airtime_gfp());
}

void airtime_kfree(void *ptr)
{
	kfree(ptr);
}

void __noreturn airtime_rust_panic(const char *msg, size_t len)
{
	/* No Drop runs after a panic: a create's mode must not outlive its task. */
	airtime_alloc_may_sleep_end();
	pr_err("Rust panic: %.*s\n", (int)min_t(size_t, len, INT_MAX), msg);
	BUG();
}

/**
 * struct airtime_rounds_work - the module's own runner of a radio's deferred
 *	rounds
 * @work: queued on system_wq by airtime_rounds_work_kick()
 * @radio: the radio whose waiting rounds it runs; set once, by
 *	airtime_rounds_work_bind(), before the radio is handed to the driver
 * @stopped: set by airtime_rounds_work_stop(): no kick queues @work again
 *
 * Owned by the Rust radio (its HAL), which allocates one only for a radio
 * whose driver gave no rounds_deferred() op (such a radio's rounds are
 * concurrent: a gated one requires the op).
 */
struct airtime_rounds_work {
	struct work_struct work;
	struct airtime_radio *radio;
	bool stopped;
};

/*
 * The work: what a driver's own work item would do, in the context a NAPI
 * poll runs the rounds in (BHs off, so the HAL ops see the context of the
 * data path's other callers, and smp_processor_id() is stable), with the
 * clock the header names for now_us. Rounds of its own that are deferred
 * again queue it again (airtime_run_waiting_rounds() calls
 * airtime_rounds_work_kick() for them).
 */
static void airtime_rounds_work_fn(struct work_struct *work)
{
	struct airtime_rounds_work *w = container_of(work, struct airtime_rounds_work, work);

	local_bh_disable();
	airtime_run_waiting_rounds(w->radio, smp_processor_id(), div_u64(ktime_get_ns(), NSEC_PER_USEC));
	local_bh_enable();
}

struct airtime_rounds_work *airtime_rounds_work_alloc(void)
{
	struct airtime_rounds_work *w = kzalloc(sizeof(*w), airtime_gfp());

	if (w)
		INIT_WORK(&w->work, airtime_rounds_work_fn);
	return w;
}

void airtime_rounds_work_bind(struct airtime_rounds_work *w, struct airtime_radio *radio)
{
	w->radio = radio;
}

void airtime_rounds_work_kick(struct airtime_rounds_work *w)
{
	if (w->radio && !READ_ONCE(w->stopped))
		queue_work(system_wq, &w->work);
}

void airtime_rounds_work_stop(struct airtime_rounds_work *w)
{
	WRITE_ONCE(w->stopped, true);
	/* Waits for a run in progress; a run that queues itself again is cancelled too. */
	cancel_work_sync(&w->work);
}

void airtime_rounds_work_free(struct airtime_rounds_work *w)
{
	kfree(w);
}

/**
 * airtime_run_one() - run one scenario and print its PASS or FAIL line
 * @index: scenario index
 * @name: scenario name, for the line
 *
 * Context: Process context (module init).
 * Return: true if the scenario passed.
 */
static bool airtime_run_one(u32 index, const char *name)
{
	char msg[AIRTIME_SELFTEST_MSG_LEN];
	int ret;

	ret = airtime_selftest_run(index, msg, sizeof(msg));
	if (ret == AIRTIME_SELFTEST_PASS) {
		pr_info("PASS %s\n", name);
		if (msg[0])
			pr_info("RESULT %s: %s\n", name, msg);
		return true;
	}
	if (ret == AIRTIME_SELFTEST_FAIL)
		pr_err("FAIL %s: %s\n", name, msg);
	else
		pr_err("FAIL %s: could not run it (%d)\n", name, ret);
	return false;
}

/**
 * airtime_find() - resolve the scenario= parameter to one scenario
 * @param: a scenario name or a decimal index
 * @count: number of scenarios
 * @index: the scenario's index, on success
 * @info: the scenario's name and flags, on success
 *
 * Context: Process context (module init).
 * Return: 0, or -ENOENT if @param names no scenario.
 */
static int airtime_find(const char *param, u32 count, u32 *index,
			struct airtime_selftest_info *info)
{
	u32 i;

	if (!kstrtou32(param, 10, &i)) {
		if (airtime_selftest_info(i, info))
			return -ENOENT;
		*index = i;
		return 0;
	}

	for (i = 0; i < count; i++) {
		if (airtime_selftest_info(i, info))
			return -ENOENT;
		if (sysfs_streq(param, info->name)) {
			*index = i;
			return 0;
		}
	}
	return -ENOENT;
}

/**
 * airtime_init() - module init: run the self-test, refuse to load on failure
 *
 * Context: Process context; may sleep (the Rust code only in a create's
 * allocations).
 * Return: 0 if every selected scenario passed; -EINVAL if one failed or
 * scenario= names no scenario.
 */
static int __init airtime_init(void)
{
	struct airtime_selftest_info info;
	u32 count = airtime_selftest_count();
	u32 i, ran = 0, failed = 0;

	pr_info("%s: %u self-test scenarios, scenario=%s\n",
		airtime_version(), count, scenario);

	if (sysfs_streq(scenario, "all")) {
		for (i = 0; i < count; i++) {
			if (airtime_selftest_info(i, &info)) {
				pr_err("FAIL scenario %u: no description\n", i);
				failed++;
				continue;
			}
			if (info.flags & AIRTIME_SELFTEST_EXPLICIT_ONLY)
				continue;
			ran++;
			if (!airtime_run_one(i, info.name))
				failed++;
		}
	} else {
		if (airtime_find(scenario, count, &i, &info)) {
			pr_err("unknown scenario \"%s\": use all, a name, or an index below %u\n",
			       scenario, count);
			return -EINVAL;
		}
		ran = 1;
		if (!airtime_run_one(i, info.name))
			failed = 1;
	}

	if (failed) {
		pr_err("%u of %u scenarios failed: refusing to load\n", failed, ran);
		return -EINVAL;
	}
	pr_info("all %u scenarios passed\n", ran);
	return 0;
}

/**
 * airtime_exit() - module exit
 *
 * Every radio was destroyed before (the self-tests destroy theirs before
 * init returns; a driver using the API destroys its radios before it can be
 * unloaded, and this module cannot be unloaded before it), and
 * airtime_radio_destroy() cancels the radio's rounds work: no work item of
 * this module is queued or running here.
 *
 * Context: Process context.
 */
static void __exit airtime_exit(void)
{
	pr_info("unloaded\n");
}

module_init(airtime_init);
module_exit(airtime_exit);

MODULE_DESCRIPTION("Airtime fairness and AQL core for ath11k (Rust), with a load-time self-test");
MODULE_AUTHOR("The airtime developers");
MODULE_LICENSE("Dual MIT/GPL");
