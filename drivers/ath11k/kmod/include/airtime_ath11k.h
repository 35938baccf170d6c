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
 * and memcpy/memmove/memset/memcmp/bcmp. The planned adapter API (per-radio
 * state, stations, txq wake, tx completion, PPDU stats, debugfs text) is
 * described in README.md and will be declared here when it is implemented.
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
 * @name: static NUL-terminated name, e.g. "drr-weighted"; valid for the
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
 * success it is empty.
 *
 * Context: Process context, no spinlock held (module init). Does not sleep
 * (allocations are GFP_ATOMIC), but may run for milliseconds. Not reentrant:
 * the heap scenarios count live Rust allocations, so nothing else may
 * allocate on the Rust heap while one runs.
 * Return: AIRTIME_SELFTEST_PASS or AIRTIME_SELFTEST_FAIL; -ENOENT if @index
 * is out of range; -EFAULT if @msg is NULL and @len is not 0.
 */
int airtime_selftest_run(u32 index, char *msg, size_t len);

/* ---- Imported by the Rust object (implemented in airtime_shim.c) ------- */

/**
 * airtime_kmalloc() - kmalloc() for the Rust global allocator
 * @size: bytes to allocate, non-zero
 *
 * Uses GFP_ATOMIC | __GFP_NOWARN: the adapter's data path runs in softirq
 * (NAPI) context and must not sleep, and allocation failures are reported by
 * the Rust side.
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

#endif /* AIRTIME_ATH11K_H */
