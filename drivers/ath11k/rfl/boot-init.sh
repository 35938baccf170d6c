#!/bin/busybox sh
# SPDX-License-Identifier: MIT OR GPL-2.0-only
# shellcheck shell=dash
#
# boot-init.sh - /init of the Rust-for-Linux module's boot test (busybox sh as
# PID 1). /etc/boot-test.conf sets MODULE, EXPECTED_PASS (the default
# scenarios, in table order), MUST_FAIL, MUST_PANIC and LOST_COMPLETION
# (scenario indices).
# Prints "BOOT-CHECK ok|FAIL: ..." per check, the module's lines tagged with
# the phase ("[all] airtime_rfl: PASS heap-vec-box"), then
# "AIRTIME-RFL-BOOT-TEST: PASS|FAIL ...", and powers off.

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
check() {
	what=$1
	shift
	checks=$((checks + 1))
	if "$@"; then echo "BOOT-CHECK ok: $what"; else
		failed=$((failed + 1))
		echo "BOOT-CHECK FAIL: $what"
	fi
}
logged() { grep -q "$1" "$log"; }
not_logged() { ! grep -qE "$1" "$log"; }
loaded() { [ -d /sys/module/airtime_rfl ]; }
not_loaded() { [ ! -d /sys/module/airtime_rfl ]; }
TROUBLE='Oops|BUG:|WARNING:|Call Trace|general protection|panicked|Unknown symbol|Unknown rela|RIP:'

# phase TAG load|refuse [PARAMETERS...]
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
		rmmod airtime_rfl
		check "$tag: rmmod succeeded" [ $? -eq 0 ]
		check "$tag: module is gone" not_loaded
	else
		check "$tag: insmod refused (rc $rc)" [ "$rc" -ne 0 ]
		check "$tag: module is not loaded" not_loaded
	fi
	dmesg >"$log"
	sed -n "s/^\[[^]]*\] \(airtime_rfl: .*\)$/[$tag] \1/p" "$log"
	check "$tag: no oops, BUG, warning or panic in the log" not_logged "$TROUBLE"
}

# stress_on_two_cpus: the RESULT line of two-context-stress in $log names two
# different CPUs for its wake and completion work items.
stress_on_two_cpus() {
	# shellcheck disable=SC2046 # split "CPU CPU" into two words on purpose
	set -- $(sed -n 's|.*RESULT two-context-stress: work items on CPUs \([0-9]*\)/\([0-9]*\),.*|\1 \2|p' "$log")
	[ $# -eq 2 ] && [ "$1" != "$2" ]
}

# shellcheck disable=SC2086 # split the list on purpose
set -- $EXPECTED_PASS
expected_count=$#

phase must-fail refuse scenario="$MUST_FAIL"
check "must-fail: FAIL line logged" logged 'airtime_rfl: FAIL selftest-must-fail: deliberate failure'
check "must-fail: load refused in the log" logged 'scenarios failed: refusing to load'

# The stress test's checks must catch a completion that never comes.
phase stress-lost-completion refuse scenario="$LOST_COMPLETION"
check "stress-lost-completion: FAIL names the pending airtime" \
	logged 'airtime_rfl: FAIL two-context-stress-lost-completion: .*charged, .*released'

phase all load
for name in $EXPECTED_PASS; do
	check "all: PASS $name" grep -q "airtime_rfl: PASS $name\$" "$log"
done
passes=$(grep -c 'airtime_rfl: PASS ' "$log")
check "all: $passes PASS lines, $expected_count expected" [ "$passes" -eq "$expected_count" ]
check "all: no FAIL line" not_logged 'airtime_rfl: FAIL'
check "all: summary line" logged "airtime_rfl: all $expected_count scenarios passed"
check "all: unload logged" logged 'airtime_rfl: unloaded'
check "all: two-context-stress ran its work items on two different CPUs" stress_on_two_cpus

phase by-index load scenario=0
check "by-index: exactly one scenario ran" [ "$(grep -c 'airtime_rfl: PASS ' "$log")" -eq 1 ]

phase unknown refuse scenario=999
check "unknown: reported" logged 'airtime_rfl: unknown scenario 999'

tainted=$(cat /proc/sys/kernel/tainted)
check "kernel taint $tainted has no B/D/W/L" [ $((tainted & 0x42a0)) -eq 0 ]

# Last: it oopses the loading task. An overflow must panic (overflow checks
# are on), reach the kernel's panic handler, and BUG().
dmesg -c >/dev/null
log=/tmp/must-panic.log
echo "=== phase must-panic: insmod $MODULE scenario=$MUST_PANIC (expect: oops)"
insmod "$MODULE" scenario="$MUST_PANIC"
rc=$?
dmesg >"$log"
sed -n "s/^\[[^]]*\] \(airtime_rfl: .*\)$/[must-panic] \1/p" "$log"
check "must-panic: insmod did not succeed (rc $rc)" [ "$rc" -ne 0 ]
check "must-panic: overflow panic with its Rust location" logged 'panicked at .*selftest.rs:[0-9]*:[0-9]*:'
check "must-panic: the message names the overflow" logged 'attempt to add with overflow'
check "must-panic: kernel BUG in the report" logged 'kernel BUG at'
tainted=$(cat /proc/sys/kernel/tainted)
check "must-panic: kernel taint $tainted has D (oops)" [ $((tainted & 0x80)) -ne 0 ]

if [ "$failed" -eq 0 ]; then
	echo "AIRTIME-RFL-BOOT-TEST: PASS ($checks checks)"
else
	echo "AIRTIME-RFL-BOOT-TEST: FAIL ($failed of $checks checks failed)"
fi
poweroff -f
