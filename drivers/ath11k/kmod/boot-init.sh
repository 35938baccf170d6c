#!/bin/busybox sh
# SPDX-License-Identifier: MIT OR GPL-2.0-only
# shellcheck shell=dash
#
# boot-init.sh - /init of the boot test's initramfs (run by busybox sh as
# PID 1 in the booted kernel). boot-test.sh copies it in with the module and
# /etc/boot-test.conf, which sets EXPECTED_PASS (the scenarios `all` must
# pass, in table order) and MODULE (the .ko path).
#
# Each phase loads the module with some parameters and checks the kernel log
# of that load. Every line the module logged is echoed to the console tagged
# with the phase ("[all] airtime: PASS heap-vec-box") for boot-test.sh, and
# every check prints "BOOT-CHECK ok: ..." or "BOOT-CHECK FAIL: ...". The last
# line is "AIRTIME-BOOT-TEST: PASS ..." or "AIRTIME-BOOT-TEST: FAIL ...", then
# the machine powers off. A crash of this script panics the kernel, which
# reboots, which ends qemu (-no-reboot) without the PASS marker.

/bin/busybox mount -t devtmpfs devtmpfs /dev
[ -c /dev/console ] && exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys

# shellcheck source=/dev/null
. /etc/boot-test.conf

checks=0
failed=0
ok() {
	checks=$((checks + 1))
	echo "BOOT-CHECK ok: $*"
}
bad() {
	checks=$((checks + 1))
	failed=$((failed + 1))
	echo "BOOT-CHECK FAIL: $*"
}
# check DESCRIPTION COMMAND...: ok if COMMAND succeeds.
check() {
	what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
logged() {
	grep -q "$1" "$log"
}
not_logged() {
	! grep -qE "$1" "$log"
}
loaded() {
	[ -d /sys/module/airtime_ath11k ]
}
not_loaded() {
	[ ! -d /sys/module/airtime_ath11k ]
}

# Kernel messages that mean something went wrong, whatever the phase.
TROUBLE='Oops|BUG:|WARNING:|Call Trace|general protection|Rust panic|Unknown symbol|Unknown rela|RIP:'

# phase TAG load|refuse [PARAMETERS...]: insmod with PARAMETERS; the module
# must load (and unload) or be refused. The log is left in $log.
phase() {
	tag=$1
	expect=$2
	shift 2
	log=/tmp/$tag.log
	dmesg -c >/dev/null
	echo "=== phase $tag: insmod $MODULE $* (expect: $expect)"
	insmod "$MODULE" "$@"
	rc=$?
	if [ "$expect" = load ]; then
		check "$tag: insmod succeeded (rc $rc)" [ "$rc" -eq 0 ]
		check "$tag: module is live" loaded
		rmmod airtime_ath11k
		check "$tag: rmmod succeeded" [ $? -eq 0 ]
		check "$tag: module is gone" not_loaded
	else
		check "$tag: insmod refused (rc $rc)" [ "$rc" -ne 0 ]
		check "$tag: module is not loaded" not_loaded
	fi
	dmesg >"$log"
	sed -n "s/^\[[^]]*\] \(airtime: .*\)$/[$tag] \1/p" "$log"
	check "$tag: no oops, BUG, warning or panic in the log" not_logged "$TROUBLE"
}

# stress_on_two_cpus: the RESULT line of c-api-smp-stress in $log names two
# different CPUs for its wake and completion kthreads.
stress_on_two_cpus() {
	# shellcheck disable=SC2046 # split "CPU CPU" into two words on purpose
	set -- $(sed -n 's|.*RESULT c-api-smp-stress: kthreads on CPUs \([0-9]*\)/\([0-9]*\),.*|\1 \2|p' "$log")
	[ $# -eq 2 ] && [ "$1" != "$2" ]
}

# count_passes: number of PASS lines in $log.
count_passes() {
	grep -c 'airtime: PASS ' "$log"
}

# shellcheck disable=SC2086 # split the list into words on purpose
set -- $EXPECTED_PASS
expected_count=$#
first=$1

# Negative first: a failing scenario must make the load fail, and leave the
# kernel able to load the module afterwards.
phase must-fail refuse scenario=selftest-must-fail
check "must-fail: FAIL line logged" logged 'airtime: FAIL selftest-must-fail: deliberate failure'
check "must-fail: load refused in the log" logged 'scenarios failed: refusing to load'

# The SMP stress test's checks must catch each injected fault.
phase stress-lost-completion refuse scenario=c-api-smp-stress-lost-completion
check "stress-lost-completion: FAIL names the frame left in the hardware" \
	logged 'airtime: FAIL c-api-smp-stress-lost-completion: .*pending, 1 frames in the hardware'
phase stress-lost-wake refuse scenario=c-api-smp-stress-lost-wake
check "stress-lost-wake: FAIL names the txq left with frames" \
	logged 'airtime: FAIL c-api-smp-stress-lost-wake: .*lost wake: txq 8 still holds'

phase all load
for name in $EXPECTED_PASS; do
	check "all: PASS $name" grep -qx '.*\] airtime: PASS '"$name" "$log"
done
passes=$(count_passes)
check "all: $passes PASS lines, $expected_count expected" [ "$passes" -eq "$expected_count" ]
check "all: no FAIL line" not_logged 'airtime: FAIL'
check "all: summary line" logged "airtime: all $expected_count scenarios passed"
check "all: the explicit-only scenarios did not run" not_logged 'selftest-must-fail|c-api-smp-stress-lost'
check "all: unload logged" logged 'airtime: unloaded'
check "all: c-api-smp-stress ran its kthreads on two different CPUs" stress_on_two_cpus

phase by-name load scenario=c-api-roundtrip
check "by-name: PASS c-api-roundtrip" logged 'airtime: PASS c-api-roundtrip$'
check "by-name: exactly one scenario ran" [ "$(count_passes)" -eq 1 ]

phase by-index load scenario=0
check "by-index: scenario 0 is $first and passed" logged "airtime: PASS $first\$"
check "by-index: exactly one scenario ran" [ "$(count_passes)" -eq 1 ]

phase unknown refuse scenario=no-such-scenario
check "unknown: reported" logged 'airtime: unknown scenario "no-such-scenario"'

tainted=$(cat /proc/sys/kernel/tainted)
# B bad page (5), D died/oops (7), W warning (9), L soft lockup (14).
check "kernel taint $tainted has no B/D/W/L" [ $((tainted & 0x42a0)) -eq 0 ]

# Last, because it oopses the loading task and leaves the module stuck in
# "coming" state: a Rust panic must reach the panic handler, print the message
# with its source location, and BUG() (the oops names the Rust frames).
dmesg -c >/dev/null
log=/tmp/must-panic.log
echo "=== phase must-panic: insmod $MODULE scenario=selftest-must-panic (expect: oops)"
insmod "$MODULE" scenario=selftest-must-panic
rc=$?
dmesg >"$log"
sed -n "s/^\[[^]]*\] \(airtime: .*\)$/[must-panic] \1/p" "$log"
check "must-panic: insmod did not succeed (rc $rc)" [ "$rc" -ne 0 ]
check "must-panic: panic message with its Rust location" \
	logged 'airtime: Rust panic: index out of bounds: the len is 0 but the index is 3 at drivers/ath11k/kmod/src/selftest.rs:'
check "must-panic: kernel BUG in the panic report" logged 'kernel BUG at .*airtime_shim.c'
check "must-panic: oops names airtime_rust_panic" logged 'RIP: .*airtime_rust_panic'
check "must-panic: call trace names the Rust scenario" logged 'must_panic'
tainted=$(cat /proc/sys/kernel/tainted)
check "must-panic: kernel taint $tainted has D (oops)" [ $((tainted & 0x80)) -ne 0 ]

if [ "$failed" -eq 0 ]; then
	echo "AIRTIME-BOOT-TEST: PASS ($checks checks)"
else
	echo "AIRTIME-BOOT-TEST: FAIL ($failed of $checks checks failed)"
fi
poweroff -f
