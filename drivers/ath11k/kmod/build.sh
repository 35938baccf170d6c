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
#   weakened/airtime_ath11k.ko   a variant whose exit does not stop leaked
#                       radios' works (never shipped: boot-test.sh proves its
#                       leaked-radio phase fails on it)
#   weakened-resume/airtime_ath11k.ko   a variant whose resume reads the
#                       waiting ACs before it releases the work (never
#                       shipped: boot-test.sh proves c-api-work-control
#                       fails on it)
#   kbuild/             the Kbuild tree: shim sources, the Rust object
#                       (airtime_ath11k_rust.o_shipped) and make's products
#   cargo.json, kbuild.log, objcheck/   logs and the checks' own test objects
#
# The build fails when the Rust object has an x87/SSE/AVX instruction, a
# relocation other than R_X86_64_{64,32S,PC32,PLT32,NONE}, an undefined
# symbol other than the shim's, mem* and the kernel's thunks, its own mem*, a
# missing entry point, a forbidden section, a stack frame over 2 KiB, an
# indirect branch or bare return the kernel's configuration forbids (or a
# global function without endbr64 under IBT), when objtool warns on it, on a
# kernel-doc warning, or when Kbuild/modpost warns. The checks are first run
# on small deliberately bad objects to prove that each one can fail.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source=objcheck.sh
source "$KMOD_DIR/objcheck.sh"

CRATE=airtime-ath11k-kmod
TARGET=x86_64-unknown-none
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
	airtime_radio_quiesce airtime_radio_resume_rounds airtime_rounds_work_run
)
# Functions the shim provides to the Rust object (include/airtime_ath11k.h).
SHIM_SYMBOLS=(
	airtime_kmalloc airtime_kzalloc airtime_krealloc airtime_kfree airtime_rust_panic
	airtime_alloc_may_sleep_begin airtime_alloc_may_sleep_end
	airtime_rounds_work_alloc airtime_rounds_work_bind airtime_rounds_work_kick
	airtime_rounds_work_hold airtime_rounds_work_release airtime_rounds_work_free
	airtime_radio_created airtime_radio_destroying airtime_might_sleep
	airtime_capi_selftest airtime_capi_mcast airtime_capi_deferred_work airtime_capi_work_control
	airtime_capi_leak_radios
	airtime_capi_smp_stress
)
# The C sources of the module (Kbuild).
C_SOURCES=(airtime_shim.c airtime_capi_selftest.c)

KBUILD_DIR=$KMOD_BUILD_DIR/kbuild
started=$(kmod_now)
mkdir -p "$KMOD_BUILD_DIR"

kver=$(kmod_kver)
kdir=/usr/src/linux-headers-$kver
[[ -f $kdir/Makefile ]] || kmod_die "no kernel headers at $kdir: install linux-headers-amd64 matching /boot/vmlinuz-$kver (ci.sh does)"

# The kernel's configuration decides the branch mitigations, as it does for
# its C code (arch/x86/Makefile): the same code-generation flags, the same
# objtool run (scripts/Makefile.lib), and the thunks they call.
kconfig=$kdir/include/config/auto.conf
[[ -f $kconfig ]] || kmod_die "no $kconfig: the kernel headers are incomplete"
# kconfig_on NAME: CONFIG_NAME=y. Kernels from 6.9 call the mitigations
# CONFIG_MITIGATION_NAME (the objtool cross-check below catches any other
# drift in the mapping).
kconfig_on() { grep -qxE "CONFIG_(MITIGATION_)?$1=y" "$kconfig"; }
mitigation_flags=()
kernel_symbols=()
OBJCHECK_RETPOLINE=n OBJCHECK_RETHUNK=n OBJCHECK_IBT=n
if kconfig_on RETPOLINE; then
	# The kernel's -mindirect-branch=thunk-extern -mindirect-branch-cs-prefix.
	mitigation_flags+=(-Zretpoline-external-thunk -Zindirect-branch-cs-prefix)
	kernel_symbols+=(__x86_indirect_thunk_r11)
	OBJCHECK_RETPOLINE=y
fi
if kconfig_on RETHUNK; then
	mitigation_flags+=(-Zfunction-return=thunk-extern)
	kernel_symbols+=(__x86_return_thunk)
	OBJCHECK_RETHUNK=y
fi
if kconfig_on X86_KERNEL_IBT; then
	# The kernel runs with NOTRACK_EN=0 and builds with -fno-jump-tables:
	# a `notrack jmp *` through a jump table would fault.
	mitigation_flags+=(-Zcf-protection=branch -Cjump-tables=no)
	OBJCHECK_IBT=y
fi
# CONFIG_SLS (-mharden-sls=all) has no rustc flag; with both thunks on there
# is no `ret` or indirect `jmp` to pad, and objtool --sls checks that.
objtool_args=()
objtool=
# With IBT or Clang LTO, Kbuild runs objtool on the linked module object
# (the Rust object included) instead of on each object.
if kconfig_on OBJTOOL && ! kconfig_on X86_KERNEL_IBT && ! kconfig_on LTO_CLANG; then
	objtool=$kdir/tools/objtool/objtool
	[[ -x $objtool ]] || kmod_die "CONFIG_OBJTOOL=y but no $objtool: the kernel headers are incomplete"
	while read -r options arg; do
		for option in ${options//|/ }; do
			if kconfig_on "$option"; then
				objtool_args+=("$arg")
				break
			fi
		done
	done <<'EOF_OBJTOOL'
HAVE_JUMP_LABEL_HACK --hacks=jump_label
HAVE_NOINSTR_HACK --hacks=noinstr
FTRACE_MCOUNT_USE_OBJTOOL --mcount
UNWINDER_ORC --orc
RETPOLINE --retpoline
RETHUNK --rethunk
SLS --sls
STACK_VALIDATION --stackval
HAVE_STATIC_CALL_INLINE --static-call
HAVE_UACCESS_VALIDATION --uaccess
GCOV_KERNEL|KCOV --no-unreachable
EOF_OBJTOOL
	objtool_args+=(--module)
fi
kmod_log "kernel $kver: retpoline $OBJCHECK_RETPOLINE, return thunks $OBJCHECK_RETHUNK, IBT $OBJCHECK_IBT," \
	"objtool ${objtool_args[*]:-(run by Kbuild or off)}"

# 1. The checks themselves: each must reject an object that breaks its rule.
objcheck_prove_checks "$KMOD_BUILD_DIR/objcheck" ||
	kmod_die "the object checks do not work (see above)"
if [[ -n $objtool ]]; then
	objcheck_prove_objtool "$KMOD_BUILD_DIR/objcheck" "$objtool" "${objtool_args[@]}" ||
		kmod_die "the objtool check does not work (see above)"
fi
kmod_log "object checks proven on deliberately bad objects"

# 2. The staticlib. Kernel code-generation flags come from kmod.toml and the
# kernel's configuration only: RUSTFLAGS would silently replace them, so it is
# dropped here. RUSTC_BOOTSTRAP=1 allows build-std and the -Z flags on a
# stable toolchain, as the kernel's own Makefile does for its Rust.
target_env=CARGO_TARGET_$(tr 'a-z-' 'A-Z_' <<<"$TARGET")_RUSTFLAGS
if [[ -n ${RUSTFLAGS:-}${CARGO_ENCODED_RUSTFLAGS:-}${!target_env:-} ]]; then
	kmod_log "ignoring RUSTFLAGS/CARGO_ENCODED_RUSTFLAGS/$target_env: kmod.toml and the kernel's configuration hold the flags"
fi
config_flags=
for flag in "${mitigation_flags[@]}"; do config_flags+="\"$flag\","; done
cargo_env=(env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS -u "$target_env" RUSTC_BOOTSTRAP=1)
cargo_config=(--config "$KMOD_DIR/kmod.toml" --config "target.$TARGET.rustflags=[${config_flags%,}]")
# A user's or a directory's cargo configuration would add its own flags to
# these, silently: the flags cargo will pass must be exactly the two above.
rustflags_from() { # DIR [CARGO_HOME]: the target's rustflags as cargo sees them from DIR
	(cd "$1" && "${cargo_env[@]}" ${2:+CARGO_HOME="$2"} "${CARGO:-cargo}" -Zunstable-options config get \
		--format json-value "${cargo_config[@]}" "target.$TARGET.rustflags")
}
mkdir -p "$KMOD_BUILD_DIR/empty-cargo-home"
want=$(rustflags_from / "$KMOD_BUILD_DIR/empty-cargo-home") || kmod_die "cargo config get failed"
got=$(rustflags_from "$PWD") || kmod_die "cargo config get failed"
[[ $got == "$want" ]] ||
	kmod_die "a cargo configuration outside kmod.toml changes the module's rustflags: $got, not $want"
kmod_log "cargo build -p $CRATE (profile kmod, target $TARGET, build-std, ${mitigation_flags[*]:-no mitigation flags})"
"${cargo_env[@]}" "${CARGO:-cargo}" build \
	--manifest-path "$KMOD_DIR/Cargo.toml" "${cargo_config[@]}" \
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
members=$KBUILD_DIR/members
mkdir -p "$members"
(cd "$members" && ar x "$staticlib")
[[ $(ar t "$staticlib" | sort | uniq -d) == "" ]] || kmod_die "$staticlib has two members of one name"
for member in "$members"/*; do
	# GNU nm and ld's LTO plugin misread objects that still carry LLVM
	# bitcode (LTO is done); unwind tables are useless with panic = "abort".
	objcopy -R .llvmbc -R .llvmcmd -R .comment -R .eh_frame -R .rela.eh_frame "$member"
	# compiler_builtins, built from source, brings weak mem* (and strlen) of
	# its own: drop those symbols so that the kernel's are the ones called.
	mapfile -t own < <(nm --defined-only "$member" |
		awk -v own=" ${OBJCHECK_OWN_MEM_SYMBOLS[*]} " 'index(own, " " $3 " ") { print "--strip-symbol=" $3 }')
	if ((${#own[@]})); then objcopy "${own[@]}" "$member"; fi
done
ld -r --gc-sections --strip-debug "${require[@]}" -o "$KBUILD_DIR/${RUST_OBJ}_shipped" "$members"/*
rm -rf "$members"
# objtool writes the ORC tables and the thunk sites; on failure the checks
# below still run, to report everything at once.
objtool_ok=yes
if [[ -n $objtool ]]; then
	objcheck_objtool "$objtool" "${objtool_args[@]}" "$KBUILD_DIR/${RUST_OBJ}_shipped" || objtool_ok=no
fi

# 4. Check the object.
OBJCHECK_LARGEST_FRAME=
objcheck_all "$KBUILD_DIR/${RUST_OBJ}_shipped" "${EXPORTS[*]}" "${SHIM_SYMBOLS[@]}" "${kernel_symbols[@]}" ||
	kmod_die "the Rust object fails the kernel checks (see above)"
[[ $objtool_ok == yes ]] || kmod_die "objtool warns on the Rust object (see above)"
if kconfig_on UNWINDER_ORC && [[ -n $objtool ]]; then
	# grep reads all of readelf's output (not -q): under pipefail, a grep that quits
	# at the match while readelf still writes fails the pipeline (SIGPIPE).
	readelf -SW "$KBUILD_DIR/${RUST_OBJ}_shipped" | grep ' \.orc_unwind ' >/dev/null ||
		kmod_die "objtool wrote no ORC unwind table into the Rust object"
fi
kmod_log "Rust object ok: $(stat -c %s "$KBUILD_DIR/${RUST_OBJ}_shipped") bytes," \
	"relocations $(readelf -rW "$KBUILD_DIR/${RUST_OBJ}_shipped" | awk '$3 ~ /^R_/ { print $3 }' | sort -u | tr '\n' ' ')" \
	"undefined: $(nm -u "$KBUILD_DIR/${RUST_OBJ}_shipped" | awk '{ print $NF }' | tr '\n' ' ')" \
	"largest stack frame ${OBJCHECK_LARGEST_FRAME} bytes"

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
# The objtool options above are derived from the configuration; Kbuild's own
# run on the shim must have used the same ones.
if [[ -n $objtool ]]; then
	kbuild_objtool=$(grep -o 'objtool/objtool [^;]*' "$KBUILD_DIR/.airtime_shim.o.cmd" | head -n 1 |
		sed -e 's|^objtool/objtool ||' -e 's| [^ ]*airtime_shim\.o *$||' | tr -s ' ') ||
		kmod_die "Kbuild ran no objtool on the shim (.airtime_shim.o.cmd), although CONFIG_OBJTOOL=y"
	[[ $kbuild_objtool == "${objtool_args[*]}" ]] ||
		kmod_die "Kbuild ran objtool on the shim with '$kbuild_objtool', the Rust object got '${objtool_args[*]}'"
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

# 8. The weakened variants, never shipped: the same objects with one of the
# shim's defines. boot-test.sh boots each where its check must catch it:
#   weakened/            -DAIRTIME_WEAKENED_NO_STOP_WORKS: airtime_stop_works()
#                        stops no leaked radio's work; the leaked-radio phase
#                        must fail (a module exit that leaves a timer armed)
#   weakened-resume/     -DAIRTIME_WEAKENED_RESUME_READ_FIRST: a release reads
#                        the waiting ACs before it clears the hold;
#                        c-api-work-control's phase 6 must fail (a deferral
#                        between the two is lost)
# build_weakened NAME DEFINE WHAT
build_weakened() {
	local name=$1 define=$2 what=$3
	local weak_dir=$KMOD_BUILD_DIR/kbuild-$name
	rm -rf "$weak_dir"
	mkdir -p "$weak_dir"
	cp -r "$KBUILD_DIR/Kbuild" "$KBUILD_DIR/include" "${C_SOURCES[@]/#/$KBUILD_DIR/}" "$KBUILD_DIR/${RUST_OBJ}_shipped" "$weak_dir/"
	printf 'cmd_%s := cp %s %s\n' "$weak_dir/$RUST_OBJ" "${RUST_OBJ}_shipped" "$RUST_OBJ" >"$weak_dir/.$RUST_OBJ.cmd"
	if ! make -C "$kdir" M="$weak_dir" KCFLAGS="-D$define" modules >"$KMOD_BUILD_DIR/kbuild-$name.log" 2>&1; then
		cat "$KMOD_BUILD_DIR/kbuild-$name.log" >&2
		kmod_die "Kbuild failed on the weakened variant $name"
	fi
	if grep -iE '(^|[^a-z])(warning|error):' "$KMOD_BUILD_DIR/kbuild-$name.log" >&2; then
		kmod_die "Kbuild or modpost warned on the weakened variant $name (full log $KMOD_BUILD_DIR/kbuild-$name.log)"
	fi
	mkdir -p "$KMOD_BUILD_DIR/$name"
	cp "$weak_dir/$KMOD_NAME.ko" "$KMOD_BUILD_DIR/$name/$KMOD_NAME.ko"
	kmod_log "built the weakened variant ($what): $KMOD_BUILD_DIR/$name/$KMOD_NAME.ko"
}
build_weakened weakened AIRTIME_WEAKENED_NO_STOP_WORKS "no stop of leaked works at exit"
build_weakened weakened-resume AIRTIME_WEAKENED_RESUME_READ_FIRST "a release reads the waiting ACs first"
