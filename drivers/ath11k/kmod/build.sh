#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR GPL-2.0-only
#
# build.sh - build airtime_ath11k.ko: the Rust staticlib, linked into one
# checked relocatable object, plus the C shim, through Kbuild.
#
# Usage: drivers/ath11k/kmod/build.sh
#
# Environment:
#   KVER              kernel release (default: newest /boot/vmlinuz-*-amd64)
#   CARGO_TARGET_DIR  cargo's target directory (default: cargo's own)
#   CARGO             cargo to run (default: cargo)
#
# Output (all under drivers/ath11k/kmod/build/, ignored by git):
#   airtime_ath11k.ko   the module
#   kbuild/             the Kbuild tree: shim sources, the Rust object
#                       (airtime_ath11k_rust.o_shipped) and make's products
#   cargo.json, kbuild.log, objcheck/   logs and the checks' own test objects
#
# The build fails when the Rust object has an x87/SSE/AVX instruction, a
# relocation other than R_X86_64_{64,32S,PC32,PLT32,NONE}, an undefined
# symbol other than the shim's and mem*, a missing entry point, a forbidden
# section, a stack frame over 2 KiB, a kernel-doc warning, or when
# Kbuild/modpost warns. The checks are first run on small deliberately bad
# objects to prove that each one can fail.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source=objcheck.sh
source "$KMOD_DIR/objcheck.sh"

CRATE=airtime-ath11k-kmod
TARGET=x86_64-unknown-linux-gnu
RUST_OBJ=${KMOD_NAME}_rust.o
# Entry points the Rust object exports (include/airtime_ath11k.h).
EXPORTS=(
	airtime_version airtime_selftest_count airtime_selftest_info airtime_selftest_run
	airtime_radio_create airtime_radio_destroy airtime_sta_add airtime_sta_remove airtime_txq_add
	airtime_sta_set_weight airtime_sta_set_aql_limits airtime_set_aql_limits airtime_set_aql_threshold
	airtime_txq_wake airtime_tx_complete airtime_ppdu_tx_stats airtime_rx_duration airtime_radio_get_stats
	airtime_debugfs_aql airtime_debugfs_airtime airtime_debugfs_dp_stats
	airtime_mcast_txq_add airtime_mcast_txq_wake airtime_mcast_txq_remove airtime_radio_get_counters
	airtime_radio_check airtime_radio_check_idle airtime_radio_reap
	airtime_set_multicast_rate airtime_set_multicast_limit_us airtime_multicast_pending_us
	airtime_txq_aql_pending_us airtime_mcast_txq_aql_pending_us
	airtime_rounds_waiting airtime_run_waiting_rounds airtime_run_rounds airtime_set_aql_enabled
)
# Functions the shim provides to the Rust object (include/airtime_ath11k.h).
SHIM_SYMBOLS=(
	airtime_kmalloc airtime_kzalloc airtime_krealloc airtime_kfree airtime_rust_panic
	airtime_alloc_may_sleep_begin airtime_alloc_may_sleep_end
	airtime_capi_selftest airtime_capi_mcast airtime_capi_smp_stress
)
# The C sources of the module (Kbuild).
C_SOURCES=(airtime_shim.c airtime_capi_selftest.c)

KBUILD_DIR=$KMOD_BUILD_DIR/kbuild
started=$(kmod_now)
mkdir -p "$KMOD_BUILD_DIR"

kver=$(kmod_kver)
kdir=/usr/src/linux-headers-$kver
[[ -f $kdir/Makefile ]] || kmod_die "no kernel headers at $kdir: install linux-headers-amd64 matching /boot/vmlinuz-$kver (ci.sh does)"

# 1. The checks themselves: each must reject an object that breaks its rule.
objcheck_prove_checks "$KMOD_BUILD_DIR/objcheck" ||
	kmod_die "the object checks do not work (see above)"
kmod_log "object checks proven on deliberately bad objects"

# 2. The staticlib. Kernel code-generation flags come from kmod.toml and only
# from there: RUSTFLAGS would silently replace them, so it is dropped here.
if [[ -n ${RUSTFLAGS:-}${CARGO_ENCODED_RUSTFLAGS:-} ]]; then
	kmod_log "ignoring RUSTFLAGS/CARGO_ENCODED_RUSTFLAGS: kmod.toml holds the kernel flags"
fi
kmod_log "cargo build -p $CRATE (profile kmod, target $TARGET)"
env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS \
	"${CARGO:-cargo}" build \
	--manifest-path "$KMOD_DIR/Cargo.toml" \
	--config "$KMOD_DIR/kmod.toml" \
	--target "$TARGET" --profile kmod -p "$CRATE" \
	--message-format=json-render-diagnostics >"$KMOD_BUILD_DIR/cargo.json"
staticlib=$(grep -o '"[^"]*/lib'"${CRATE//-/_}"'\.a"' "$KMOD_BUILD_DIR/cargo.json" | tail -n 1 | tr -d '"') ||
	true
[[ -n $staticlib && -f $staticlib ]] || kmod_die "cargo reported no lib${CRATE//-/_}.a (see $KMOD_BUILD_DIR/cargo.json)"

# 3. One relocatable object holding only what the entry points reach.
# Never --whole-archive: it would drag in all of compiler_builtins.
require=()
for sym in "${EXPORTS[@]}"; do
	require+=("--require-defined=$sym")
done
rm -rf "$KBUILD_DIR"
mkdir -p "$KBUILD_DIR"
ld -r --gc-sections --strip-debug "${require[@]}" -o "$KBUILD_DIR/rust.tmp" "$staticlib"
# GNU nm misreads objects that still carry LLVM bitcode; unwind tables are
# useless with panic = "abort".
objcopy -R .llvmbc -R .llvmcmd -R .comment -R .eh_frame -R .rela.eh_frame \
	"$KBUILD_DIR/rust.tmp" "$KBUILD_DIR/${RUST_OBJ}_shipped"
rm -f "$KBUILD_DIR/rust.tmp"
# LLVM's own calls to mem* come out GOT-relative after LTO: make them direct.
# On failure the checks below still run, to report everything at once.
relaxed=$(objcheck_relax "$KBUILD_DIR/${RUST_OBJ}_shipped" "${SHIM_SYMBOLS[@]}") || relaxed=failed

# 4. Check the object.
OBJCHECK_LARGEST_FRAME=
objcheck_all "$KBUILD_DIR/${RUST_OBJ}_shipped" "${EXPORTS[*]}" "${SHIM_SYMBOLS[@]}" ||
	kmod_die "the Rust object fails the kernel checks (see above)"
[[ $relaxed != failed ]] || kmod_die "cannot relax the GOT references of the Rust object (see above)"
kmod_log "Rust object ok: $(stat -c %s "$KBUILD_DIR/${RUST_OBJ}_shipped") bytes," \
	"relocations $(readelf -rW "$KBUILD_DIR/${RUST_OBJ}_shipped" | awk '$3 ~ /^R_/ { print $3 }' | sort -u | tr '\n' ' ')" \
	"undefined: $(nm -u "$KBUILD_DIR/${RUST_OBJ}_shipped" | awk '{ print $NF }' | tr '\n' ' ')" \
	"largest stack frame ${OBJCHECK_LARGEST_FRAME} bytes, $relaxed GOT references made direct"

# 5. The constants both sides of the boundary define must agree, and the
# kernel-doc of the C interface must be well-formed.
constant_value() { # FILE PATTERN: the value, normalised ("(1U << 0)" -> "1<<0")
	sed -n "s/$2/\1/p" "$1" | tr -d ' ()U'
}
while read -r macro file name; do
	c=$(constant_value "$KMOD_DIR/include/airtime_ath11k.h" "^#define ${macro}[[:space:]][[:space:]]*\(.*\)\$")
	rust=$(constant_value "$KMOD_DIR/$file" "^pub const $name: [a-z0-9]* = \(.*\);\$")
	[[ -n $c && $c == "$rust" ]] || kmod_die "$macro is '$c' in the header but $name is '$rust' in $file"
done <<'EOF_CONSTANTS'
AIRTIME_KMALLOC_MIN_ALIGN src/kalloc.rs KMALLOC_MIN_ALIGN
AIRTIME_KMALLOC_MAX_ALIGN src/kalloc.rs MAX_ALIGN
AIRTIME_SELFTEST_PASS src/selftest.rs PASS
AIRTIME_SELFTEST_FAIL src/selftest.rs FAIL
AIRTIME_SELFTEST_EXPLICIT_ONLY src/selftest.rs EXPLICIT_ONLY
AIRTIME_RADIO_TX_NO_PUSHBACK src/api.rs RADIO_TX_NO_PUSHBACK
AIRTIME_RADIO_AQL_DISABLED src/api.rs RADIO_AQL_DISABLED
AIRTIME_PPDU_MAX_USERS src/api.rs PPDU_MAX_USERS
EOF_CONSTANTS
perl "$kdir/scripts/kernel-doc" -none -Werror "$KMOD_DIR/include/airtime_ath11k.h" "${C_SOURCES[@]/#/$KMOD_DIR/}" ||
	kmod_die "kernel-doc warnings in the header or the shim"

# 6. Kbuild, in a copy of the sources next to the object (6.1 cannot put an
# external module's output elsewhere).
cp "$KMOD_DIR/Kbuild" "${C_SOURCES[@]/#/$KMOD_DIR/}" "$KBUILD_DIR/"
cp -r "$KMOD_DIR/include" "$KBUILD_DIR/"
# modpost reads a .cmd file for every object of the module.
printf 'cmd_%s := cp %s %s\n' "$KBUILD_DIR/$RUST_OBJ" "${RUST_OBJ}_shipped" "$RUST_OBJ" \
	>"$KBUILD_DIR/.$RUST_OBJ.cmd"
kmod_log "make -C $kdir M=$KBUILD_DIR modules"
if ! make -C "$kdir" M="$KBUILD_DIR" modules >"$KMOD_BUILD_DIR/kbuild.log" 2>&1; then
	cat "$KMOD_BUILD_DIR/kbuild.log" >&2
	kmod_die "Kbuild failed"
fi
if grep -iE '(^|[^a-z])(warning|error):' "$KMOD_BUILD_DIR/kbuild.log" >&2; then
	kmod_die "Kbuild or modpost warned (above; full log $KMOD_BUILD_DIR/kbuild.log)"
fi

# 7. Check the module's metadata, then publish it.
ko=$KBUILD_DIR/$KMOD_NAME.ko
license=$(modinfo -F license "$ko")
vermagic=$(modinfo -F vermagic "$ko")
[[ $license == "Dual MIT/GPL" ]] || kmod_die "MODULE_LICENSE is '$license', want 'Dual MIT/GPL'"
[[ $vermagic == "$kver "* ]] || kmod_die "vermagic '$vermagic' is not for $kver"
modinfo -F parm "$ko" | grep -q '^scenario:' || kmod_die "module parameter scenario missing"
cp "$ko" "$KMOD_BUILD_DIR/$KMOD_NAME.ko"
kmod_log "built $KMOD_BUILD_DIR/$KMOD_NAME.ko for $kver ($(stat -c %s "$ko") bytes) in $(kmod_elapsed "$started") s"
