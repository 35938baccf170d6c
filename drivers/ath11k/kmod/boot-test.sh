#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR GPL-2.0-only
#
# boot-test.sh - boot the packaged kernel under qemu (software emulation)
# with a busybox initramfs that loads airtime_ath11k.ko in several phases
# (boot-init.sh), and check the serial output.
#
# Usage: drivers/ath11k/kmod/boot-test.sh [MODULE.ko]   (default: build/airtime_ath11k.ko)
#
# Environment: KVER (default: newest /boot/vmlinuz-*-amd64),
#              BOOT_TIMEOUT seconds (default 300).
#
# Fails (exit 1) when the module does not load, a scenario FAILs or is
# missing, the deliberately failing scenario does NOT refuse the load, the
# kernel logs an oops/BUG/warning, the kernel is tainted by one, qemu times
# out or exits abnormally, or the PASS marker is missing. Before judging the
# real log, the parser is run on doctored copies of it to prove it rejects
# each kind of failure.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The scenarios the default `all` run must pass, in table order
# (src/selftest.rs). The boot test fails on any difference in either
# direction, so add a new scenario's name here.
EXPECTED_PASS=(
	heap-vec-box
	heap-btreemap
	heap-alignment
	heap-failure-is-reported
	int-arithmetic
	aql-pending-returns-to-zero
	aql-limit-bounds-inflight
	weights-reach-air-with-no-pushback
	napi-budget-bounds-a-pass
	ring-full-loses-no-frame
	round-fix-no-skip
	debugfs-text
	multicast-budget-bounds-inflight
	departed-station-drains-once
	c-api-roundtrip
	c-api-mcast
	c-api-deferred-work
	c-api-work-control
	c-api-smp-stress
	c-api-smp-stress-gated
	c-api-smp-stress-no-op
)

BOOT_TIMEOUT=${BOOT_TIMEOUT:-300}
# Two CPUs at least: c-api-smp-stress binds its wake and completion kthreads
# to different CPUs (the guest check requires it).
BOOT_CPUS=${BOOT_CPUS:-2}
started=$(kmod_now)
kver=$(kmod_kver)
kernel=/boot/vmlinuz-$kver
module=${1:-$KMOD_BUILD_DIR/$KMOD_NAME.ko}
boot_dir=$KMOD_BUILD_DIR/boot
serial=$boot_dir/serial.log

[[ -r $kernel ]] || kmod_die "cannot read $kernel (install linux-image-amd64; reading /boot needs root)"
[[ -f $module ]] || kmod_die "no module at $module: run build.sh first"
vermagic=$(modinfo -F vermagic "$module")
[[ $vermagic == "$kver "* ]] || kmod_die "$module is built for '${vermagic%% *}', the kernel to boot is $kver"
busybox=$(command -v busybox) || kmod_die "no busybox: install busybox-static"
if readelf -lW "$busybox" | grep -q 'INTERP'; then
	kmod_die "$busybox is dynamically linked: install busybox-static"
fi
command -v qemu-system-x86_64 >/dev/null || kmod_die "no qemu-system-x86_64: install qemu-system-x86"
command -v cpio >/dev/null || kmod_die "no cpio: install cpio"

# The leaked-radio phase (boot-init.sh's leak_phase): the exit's report of
# the works it stopped (one of each kind the scenario leaves), its warning
# about the leak (the phase's only warning), and every kernel trouble line
# that warning brings (the guest echoes them tagged "[leaked-radio] kernel: ").
LEAK_SCENARIO=c-api-leak-radios
# Radio 1's timer armed; in the rare case rmmod lands in its run (microseconds
# every 100 ms) or between its timer and its run, running or queued instead.
LEAK_REPORT='airtime: stopped 2 rounds works of leaked radios: (1 with the timer armed, 0 queued, 1|0 with the timer armed, 1 queued, 1|0 with the timer armed, 0 queued, 2) running$'
LEAK_WARN='WARNING: CPU: [0-9]* PID: [0-9]* at .*airtime_shim[.]c:[0-9]* airtime_stop_works[+]0x'
LEAK_ALLOWED="$LEAK_WARN|RIP: 0010:airtime_stop_works[+]0x|RIP: 0033:|Call Trace:"

# check_serial LOG: judges a serial log; prints each failed check, returns 1
# if any failed.
check_serial() {
	local log=$1 failed=0 name before after leak trouble deliberate
	# The FAIL lines the deliberately failing scenarios must print.
	deliberate='airtime: FAIL (selftest-must-fail|c-api-smp-stress-lost-completion|c-api-smp-stress-lost-wake): '
	# Up to the last phase nothing may go wrong, but for the leaked-radio
	# phase's one warning; the last phase must oops.
	before=$(sed -e '/^=== phase must-panic/,$d' -e '/^=== phase leaked-radio/,/^=== phase /{/^=== phase leaked-radio/d;/^=== phase /!d}' "$log")
	leak=$(sed -n '/^=== phase leaked-radio/,/^=== phase must-panic/{/^=== phase must-panic/!p}' "$log")
	after=$(sed -n '/^=== phase must-panic/,$p' "$log")
	trouble='Kernel panic|Oops|BUG:|kernel BUG|WARNING:|Call Trace|general protection fault|Rust panic|unable to handle'
	fail() {
		printf 'boot-test: FAIL: %s\n' "$*"
		failed=1
	}
	grep -qx 'AIRTIME-BOOT-TEST: PASS ([0-9]* checks)' "$log" ||
		fail "no 'AIRTIME-BOOT-TEST: PASS' marker from the guest"
	! grep -q 'AIRTIME-BOOT-TEST: FAIL' "$log" ||
		fail "the guest reported: $(grep 'AIRTIME-BOOT-TEST: FAIL' "$log")"
	! grep -q '^BOOT-CHECK FAIL' "$log" ||
		fail "guest checks failed: $(grep '^BOOT-CHECK FAIL' "$log" | tr '\n' ';')"
	for name in "${EXPECTED_PASS[@]}"; do
		grep -qx "\[all\] airtime: PASS $name" "$log" || fail "no PASS line for $name"
	done
	! grep -E 'airtime: FAIL ' "$log" | grep -vqE "$deliberate" ||
		fail "unexpected FAIL lines: $(grep 'airtime: FAIL ' "$log" | grep -vE "$deliberate" | tr '\n' ';')"
	grep -q '^\[must-fail\] airtime: FAIL selftest-must-fail: ' "$log" ||
		fail "the deliberately failing scenario printed no FAIL line"
	grep -q '^BOOT-CHECK ok: must-fail: insmod refused' "$log" ||
		fail "the deliberately failing scenario did not refuse the load"
	for name in lost-completion lost-wake; do
		grep -q "^\[stress-$name\] airtime: FAIL c-api-smp-stress-$name: " "$log" ||
			fail "the stress test with a $name printed no FAIL line"
		grep -q "^BOOT-CHECK ok: stress-$name: insmod refused" "$log" ||
			fail "the stress test with a $name did not refuse the load"
	done
	! grep -qE "$trouble" <<<"$before" ||
		fail "kernel trouble: $(grep -E "$trouble" <<<"$before" | head -n 3 | tr '\n' ';')"
	grep -qx "\[leaked-radio\] airtime: PASS $LEAK_SCENARIO" <<<"$leak" ||
		fail "the leaked-radio phase did not leak its radios ($LEAK_SCENARIO passed)"
	grep -qE "^\[leaked-radio\] $LEAK_REPORT" <<<"$leak" ||
		fail "the leaked-radio phase: no report of the leaked works stopped at exit"
	[[ $(grep -c "^\[leaked-radio\] kernel: .*$LEAK_WARN" <<<"$leak") == 1 ]] ||
		fail "the leaked-radio phase: not exactly one leak warning from the exit"
	! grep -E "$trouble" <<<"$leak" | grep -vqE "^\[leaked-radio\] kernel: .*($LEAK_ALLOWED)" ||
		fail "kernel trouble in the leaked-radio phase: $(grep -E "$trouble" <<<"$leak" |
			grep -vE "^\[leaked-radio\] kernel: .*($LEAK_ALLOWED)" | head -n 3 | tr '\n' ';')"
	grep -q '^BOOT-CHECK ok: leaked-radio: no oops, BUG or fault' <<<"$leak" ||
		fail "the leaked-radio phase's guest check of the log did not pass"
	grep -q '^\[must-panic\] airtime: Rust panic: index out of bounds' <<<"$after" ||
		fail "the deliberate Rust panic was not reported by the panic handler"
	grep -q 'kernel BUG at' <<<"$after" ||
		fail "the deliberate Rust panic did not end in BUG()"
	unset -f fail
	return "$failed"
}

# 1. The initramfs: static busybox, the module, /init and its configuration.
rm -rf "$boot_dir"
root=$boot_dir/initramfs
mkdir -p "$root"/{bin,dev,etc,proc,sys,tmp}
cp "$busybox" "$root/bin/busybox"
cp "$module" "$root/$KMOD_NAME.ko"
install -m 0755 "$KMOD_DIR/boot-init.sh" "$root/init"
# /init's parameters (see boot-init.sh, shared with the Rust-for-Linux module).
cat >"$root/etc/boot-test.conf" <<CONF
MODULE=/$KMOD_NAME.ko
MOD_NAME=$KMOD_NAME
TAG=airtime
MARKER=AIRTIME-BOOT-TEST
EXPECTED_PASS="${EXPECTED_PASS[*]}"
MUST_FAIL=selftest-must-fail
MUST_PANIC=selftest-must-panic
FAULTS='stress-lost-completion|c-api-smp-stress-lost-completion|names the frame left in the hardware|c-api-smp-stress-lost-completion: .*pending, 1 frames in the hardware
stress-lost-wake|c-api-smp-stress-lost-wake|names the txq left with frames|c-api-smp-stress-lost-wake: .*lost wake: txq 8 still holds'
STRESS_RESULT='RESULT c-api-smp-stress: kthreads on CPUs'
STRESS_WHAT='c-api-smp-stress ran its kthreads'
EXPLICIT_ONLY='selftest-must-fail|c-api-smp-stress-lost|c-api-leak'
BY_NAME=c-api-roundtrip
UNKNOWN=no-such-scenario
UNKNOWN_MSG='airtime: unknown scenario "no-such-scenario"'
PANIC_CHECKS='panic message with its Rust location|airtime: Rust panic: index out of bounds: the len is 0 but the index is 3 at drivers/ath11k/kmod/src/selftest.rs:
kernel BUG in the panic report|kernel BUG at .*airtime_shim.c
oops names airtime_rust_panic|RIP: .*airtime_rust_panic
call trace names the Rust scenario|must_panic
the Rust frames unwind reliably (ORC data from objtool)|]  [^? ][^ ]*must_panic'
LEAK=$LEAK_SCENARIO
LEAK_REPORT='$LEAK_REPORT'
LEAK_WARN='$LEAK_WARN'
LEAK_ALLOWED='$LEAK_ALLOWED'
LEAK_WAIT=0.3
CONF
# The kernel opens /dev/console before /init runs; without the node (making
# it needs root) /init reopens it after mounting devtmpfs.
mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null || true
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 >"$boot_dir/initramfs.gz"

# 2. Boot. Software emulation: nested KVM hangs at boot on these machines.
kmod_log "booting $kernel under qemu (tcg, timeout ${BOOT_TIMEOUT} s)"
boot_started=$(kmod_now)
kmod_boot "$kernel" "$boot_dir/initramfs.gz" "$boot_dir/serial.raw" "$serial"
kmod_log "qemu exited with $qemu_rc after $(kmod_elapsed "$boot_started") s; serial log $serial"
grep -E '^(\[[a-z-]+\] airtime: |BOOT-CHECK |AIRTIME-BOOT-TEST|=== )' "$serial" || true

# 3. Prove the parser rejects each kind of failure, on doctored copies.
proof=$boot_dir/parser-proof
mkdir -p "$proof"
grep -v "airtime: PASS ${EXPECTED_PASS[-1]}\$" "$serial" >"$proof/missing-pass.log" || true
sed 's/^\[all\] airtime: PASS heap-btreemap$/[all] airtime: FAIL heap-btreemap: doctored/' "$serial" >"$proof/fail-line.log"
sed '/^\[all\] airtime: PASS heap-vec-box$/a [    9.999] BUG: kernel NULL pointer dereference, address: 0000000000000000' \
	"$serial" >"$proof/oops.log"
grep -vE '^\[must-panic\]|kernel BUG' "$serial" >"$proof/no-panic-report.log" || true
grep -v '^\[must-fail\]' "$serial" | sed 's/must-fail: insmod refused/must-fail: insmod loaded/' >"$proof/accepted.log"
grep -v 'AIRTIME-BOOT-TEST' "$serial" >"$proof/no-marker.log" || true
grep -v '^\[stress-lost-wake\]' "$serial" | sed 's/stress-lost-wake: insmod refused/stress-lost-wake: insmod loaded/' \
	>"$proof/stress-fault-accepted.log"
grep -v '^\[leaked-radio\] kernel: .*WARNING:' "$serial" >"$proof/no-leak-warning.log" || true
sed '/^\[leaked-radio\] airtime: stopped /a [   99.999] BUG: unable to handle page fault for address: ffffffffc0a01234' \
	"$serial" >"$proof/leak-fault.log"
parser_broken=0
doctored_logs=(missing-pass fail-line oops accepted no-marker no-panic-report stress-fault-accepted no-leak-warning
	leak-fault)
for doctored in "${doctored_logs[@]}"; do
	if check_serial "$proof/$doctored.log" >/dev/null; then
		kmod_log "the serial-log parser accepted a doctored log ($doctored)"
		parser_broken=1
	fi
done

# 4. Prove that two phases catch what they test, each on a weakened variant
# built by build.sh. boot_weakened NAME CONF: boots $KMOD_BUILD_DIR/NAME's
# module with the line CONF added to /init's configuration; its serial log is
# left in $weak_log.
boot_weakened() {
	local name=$1 conf=$2 real_qemu_rc=$qemu_rc
	local weak_module=$KMOD_BUILD_DIR/$name/$KMOD_NAME.ko weak_dir=$boot_dir/$name
	[[ -f $weak_module ]] || kmod_die "no weakened variant at $weak_module: run build.sh first"
	mkdir -p "$weak_dir"
	cp "$weak_module" "$root/$KMOD_NAME.ko"
	cp "$root/etc/boot-test.conf" "$weak_dir/boot-test.conf"
	echo "$conf" >>"$root/etc/boot-test.conf"
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 >"$weak_dir/initramfs.gz"
	mv "$weak_dir/boot-test.conf" "$root/etc/boot-test.conf"
	weak_started=$(kmod_now)
	BOOT_TIMEOUT=${WEAK_BOOT_TIMEOUT:-120} kmod_boot "$kernel" "$weak_dir/initramfs.gz" "$weak_dir/serial.raw" \
		"$weak_dir/serial.log"
	weak_qemu_rc=$qemu_rc
	qemu_rc=$real_qemu_rc
	weak_log=$weak_dir/serial.log
}

# 4a. The leaked-radio phase catches an exit that leaves a leaked radio's
# work pending: the variant whose airtime_stop_works() holds nothing, booted
# in that phase alone, must fail, its guest check or the kernel reporting the
# fault of a timer firing into the freed workqueue and unloaded module.
kmod_log "booting the weakened variant (exit stops no leaked work) in the leaked-radio phase alone: it must fail"
boot_weakened weakened 'LEAK_ONLY=yes'
# What the catch looks like: the guest's failed checks, the fault.
weak_caught=$(grep -E '^BOOT-CHECK FAIL|^\[leaked-radio\] kernel: |BUG: unable to handle|general protection|Kernel panic' \
	"$weak_log" | grep -vE "^\[leaked-radio\] kernel: .*($LEAK_ALLOWED)" | head -n 6 || true)
weak_proven=0
# (Not anchored: the phase's first line may follow the firmware's last output.)
if grep -q '=== phase leaked-radio' "$weak_log" && [[ -n $weak_caught ]] &&
	! grep -q 'AIRTIME-BOOT-TEST: PASS' "$weak_log"; then
	weak_proven=1
	kmod_log "weakened variant caught (qemu exit $weak_qemu_rc after $(kmod_elapsed "$weak_started") s):"
	printf '  %s\n' "${weak_caught//$'\n'/$'\n'  }" >&2
else
	kmod_log "FAIL: the leaked-radio phase did not catch the weakened variant (qemu exit $weak_qemu_rc; $weak_log):"
	tail -n 20 "$weak_log" >&2
fi

# 4b. c-api-work-control's phase 6 catches a resume that reads the waiting
# ACs before it releases the work: on that variant, loaded alone, the
# scenario must fail there (and only there: its earlier phases pass on it),
# refusing the load; the guest's checks of that all pass.
kmod_log "booting the weakened variant (a release reads the waiting ACs first) with c-api-work-control alone: phase 6 must fail"
boot_weakened weakened-resume \
	"FAULT_ONLY='resume-window|c-api-work-control|phase 6 (a deferral in the resume window lost)|c-api-work-control: line [0-9]*: phase 6: a deferral between the resume.s release and its read was lost'"
if grep -q '^BOOT-CHECK ok: resume-window: FAIL phase 6' "$weak_log" &&
	grep -q '^BOOT-CHECK ok: resume-window: insmod refused' "$weak_log" &&
	! grep -q '^BOOT-CHECK FAIL' "$weak_log" && grep -q 'AIRTIME-BOOT-TEST: PASS' "$weak_log"; then
	kmod_log "weakened variant caught (qemu exit $weak_qemu_rc after $(kmod_elapsed "$weak_started") s):"
	grep '^\[resume-window\] airtime: FAIL' "$weak_log" | sed 's/^/  /' >&2 || true
else
	weak_proven=0
	kmod_log "FAIL: c-api-work-control did not catch the weakened resume (qemu exit $weak_qemu_rc; $weak_log):"
	tail -n 20 "$weak_log" >&2
fi

# 5. Judge.
status=0
if ((qemu_rc == 124)); then
	kmod_log "FAIL: timeout after ${BOOT_TIMEOUT} s"
	status=1
elif ((qemu_rc != 0)); then
	kmod_log "FAIL: qemu exited with $qemu_rc"
	status=1
fi
verdict=$(check_serial "$serial") || status=1
[[ -z $verdict ]] || printf '%s\n' "$verdict"
((parser_broken == 0)) || status=1
((weak_proven == 1)) || status=1
guest_checks=$(grep -c '^BOOT-CHECK ' "$serial" || true)
guest_failed=$(grep -c '^BOOT-CHECK FAIL' "$serial" || true)
if ((status != 0)); then
	kmod_log "last 40 lines of the serial log:"
	tail -n 40 "$serial" >&2
	kmod_what_failed "$serial" "$verdict"
	printf 'boot-test: %d passed, %d failed\n' "$((guest_checks - guest_failed))" "$((guest_failed > 0 ? guest_failed : 1))"
	printf 'KMOD BOOT TEST: FAIL (%s s)\n' "$(kmod_elapsed "$started")"
	exit 1
fi
printf 'boot-test: %d passed, 0 failed\n' "$guest_checks"
printf 'KMOD BOOT TEST: PASS (%d guest checks, parser proven on %d doctored logs, weakened exit and resume caught, %s s)\n' \
	"$guest_checks" "${#doctored_logs[@]}" "$(kmod_elapsed "$started")"
