#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR GPL-2.0-only
#
# boot-test.sh - boot $KERNEL (Debian's Rust-enabled kernel, fetched by
# ci.sh) under qemu -accel tcg with a busybox initramfs whose /init
# (boot-init.sh) loads airtime_rfl.ko in phases, and judge the serial log.
#
# Usage: KVER=... KERNEL=.../vmlinuz drivers/ath11k/rfl/boot-test.sh MODULE.ko
#
# Fails when a default scenario has no PASS line, any FAIL line other than
# the deliberate one appears, the deliberate failure does not refuse the
# load, the deliberate overflow does not end in BUG(), the kernel reports
# trouble before the panic phase, qemu times out, or the PASS marker is
# missing. The judge is first proven on doctored copies of the log.
set -euo pipefail

RFL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../kmod/common.sh
source "$RFL_DIR/../kmod/common.sh"

module=${1:?usage: boot-test.sh MODULE.ko}
kernel=${KERNEL:?KERNEL: the vmlinuz to boot}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-300}
BOOT_CPUS=${BOOT_CPUS:-2}
boot_dir=$RFL_DIR/build/boot
serial=$boot_dir/serial.log
started=$(kmod_now)

# The scenario table, read from selftest.rs: `s("name", ...)` runs by
# default, `x("name", ...)` only when selected; the index is the position.
mapfile -t table < <(sed -n 's/^    \([sx]\)("\([a-z0-9-]*\)",.*/\1 \2/p' "$RFL_DIR/selftest.rs")
EXPECTED_PASS=()
must_fail='' must_panic='' lost_completion=''
for i in "${!table[@]}"; do
	read -r kind name <<<"${table[$i]}"
	[[ $kind == s ]] && EXPECTED_PASS+=("$name")
	[[ $name == selftest-must-fail ]] && must_fail=$i
	[[ $name == selftest-must-panic ]] && must_panic=$i
	[[ $name == two-context-stress-lost-completion ]] && lost_completion=$i
done
if ((${#EXPECTED_PASS[@]} < 9)) || [[ -z $must_fail || -z $must_panic || -z $lost_completion ]]; then
	kmod_die "could not read the scenario table from selftest.rs"
fi
vermagic=$(modinfo -F vermagic "$module")
[[ $vermagic == "${KVER:?} "* ]] || kmod_die "$module is built for '${vermagic%% *}', the kernel is $KVER"
busybox=$(command -v busybox) || kmod_die "no busybox"
! readelf -lW "$busybox" | grep -q INTERP || kmod_die "$busybox is dynamic: install busybox-static"

check_serial() {
	local log=$1 failed=0 name before after deliberate
	# The FAIL lines the deliberately failing scenarios must print.
	deliberate='airtime_rfl: FAIL (selftest-must-fail: deliberate failure|two-context-stress-lost-completion: )'
	before=$(sed '/^=== phase must-panic/,$d' "$log")
	after=$(sed -n '/^=== phase must-panic/,$p' "$log")
	fail() {
		printf 'boot-test: FAIL: %s\n' "$*"
		failed=1
	}
	grep -qx 'AIRTIME-RFL-BOOT-TEST: PASS ([0-9]* checks)' "$log" || fail "no PASS marker from the guest"
	! grep -q '^BOOT-CHECK FAIL' "$log" || fail "guest checks failed: $(grep '^BOOT-CHECK FAIL' "$log" | tr '\n' ';')"
	for name in "${EXPECTED_PASS[@]}"; do
		grep -qx "\[all\] airtime_rfl: PASS $name" "$log" || fail "no PASS line for $name"
	done
	! grep 'airtime_rfl: FAIL ' "$log" | grep -vqE "$deliberate" ||
		fail "unexpected FAIL lines: $(grep 'airtime_rfl: FAIL ' "$log" | grep -vE "$deliberate" | tr '\n' ';')"
	grep -q '^BOOT-CHECK ok: must-fail: insmod refused' "$log" || fail "the deliberate failure did not refuse the load"
	grep -q '^BOOT-CHECK ok: stress-lost-completion: insmod refused' "$log" ||
		fail "the stress test with a lost completion did not refuse the load"
	! grep -qE 'Kernel panic|Oops|BUG:|kernel BUG|WARNING:|Call Trace|general protection|panicked' <<<"$before" ||
		fail "kernel trouble before the panic phase"
	grep -q 'attempt to add with overflow' <<<"$after" || fail "the deliberate overflow did not panic"
	grep -q 'kernel BUG at' <<<"$after" || fail "the deliberate panic did not end in BUG()"
	unset -f fail
	return "$failed"
}

rm -rf "$boot_dir"
root=$boot_dir/initramfs
mkdir -p "$root"/{bin,dev,etc,proc,sys,tmp}
cp "$busybox" "$root/bin/busybox"
cp "$module" "$root/airtime_rfl.ko"
# The C-API module's /init, with this module's parameters (see kmod/boot-init.sh).
install -m 0755 "$RFL_DIR/../kmod/boot-init.sh" "$root/init"
cat >"$root/etc/boot-test.conf" <<CONF
MODULE=/airtime_rfl.ko
MOD_NAME=airtime_rfl
TAG=airtime_rfl
MARKER=AIRTIME-RFL-BOOT-TEST
EXPECTED_PASS="${EXPECTED_PASS[*]}"
MUST_FAIL=$must_fail
MUST_PANIC=$must_panic
FAULTS='stress-lost-completion|$lost_completion|names the pending airtime|two-context-stress-lost-completion: .*charged, .*released'
STRESS_RESULT='RESULT two-context-stress: work items on CPUs'
STRESS_WHAT='two-context-stress ran its work items'
EXPLICIT_ONLY=''
BY_NAME=''
UNKNOWN=999
UNKNOWN_MSG='airtime_rfl: unknown scenario 999'
PANIC_CHECKS='overflow panic with its Rust location|panicked at .*selftest.rs:[0-9]*:[0-9]*:
the message names the overflow|attempt to add with overflow
kernel BUG in the report|kernel BUG at'
CONF
mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null || true
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 >"$boot_dir/initramfs.gz"

kmod_log "booting $kernel under qemu (tcg, $BOOT_CPUS CPUs, timeout ${BOOT_TIMEOUT} s)"
kmod_boot "$kernel" "$boot_dir/initramfs.gz" "$boot_dir/serial.raw" "$serial"
grep -E '^(\[[a-z-]+\] airtime_rfl: |BOOT-CHECK |AIRTIME-RFL-BOOT-TEST|=== )' "$serial" || true

# Prove the judge on doctored logs.
proof=$boot_dir/parser-proof
mkdir -p "$proof"
grep -v "airtime_rfl: PASS ${EXPECTED_PASS[-1]}\$" "$serial" >"$proof/missing-pass.log" || true
sed 's/^\[all\] airtime_rfl: PASS heap-vec-box$/[all] airtime_rfl: FAIL heap-vec-box: doctored/' "$serial" >"$proof/fail-line.log"
sed 's/must-fail: insmod refused/must-fail: insmod loaded/' "$serial" >"$proof/accepted.log"
grep -v 'kernel BUG at' "$serial" >"$proof/no-bug.log" || true
grep -v 'AIRTIME-RFL-BOOT-TEST' "$serial" >"$proof/no-marker.log" || true
sed 's/stress-lost-completion: insmod refused/stress-lost-completion: insmod loaded/' "$serial" >"$proof/stress-fault-accepted.log"
sed '/^\[all\] airtime_rfl: PASS heap-vec-box$/a [    9.999] BUG: kernel NULL pointer dereference' "$serial" >"$proof/oops.log"
parser_broken=0
for doctored in missing-pass fail-line accepted no-bug no-marker oops stress-fault-accepted; do
	if check_serial "$proof/$doctored.log" >/dev/null; then
		kmod_log "the judge accepted a doctored log ($doctored)"
		parser_broken=1
	fi
done

status=0
((qemu_rc == 0)) || { kmod_log "FAIL: qemu exited with $qemu_rc"; status=1; }
verdict=$(check_serial "$serial") || status=1
[[ -z $verdict ]] || printf '%s\n' "$verdict"
((parser_broken == 0)) || status=1
if ((status != 0)); then
	tail -n 40 "$serial" >&2
	kmod_what_failed "$serial" "$verdict"
	printf 'RFL BOOT TEST: FAIL (%s s)\n' "$(kmod_elapsed "$started")"
	exit 1
fi
printf 'RFL BOOT TEST: PASS (%d guest checks, judge proven on 7 doctored logs, %s s)\n' \
	"$(grep -c '^BOOT-CHECK ok' "$serial")" "$(kmod_elapsed "$started")"
