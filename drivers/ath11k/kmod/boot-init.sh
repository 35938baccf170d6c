#!/bin/busybox sh
# SPDX-License-Identifier: MIT OR GPL-2.0-only
# shellcheck shell=dash
#
# boot-init.sh - /init of the boot test's initramfs (busybox sh as PID 1 in the
# booted kernel), for both kernel modules: the C-API one (kmod/boot-test.sh)
# and the Rust-for-Linux one (rfl/boot-test.sh). Each copies it in with the
# module and /etc/boot-test.conf, which names the module and its checks:
#
#   MODULE         the .ko path          MOD_NAME  its name in /sys/module
#   TAG            its log prefix        MARKER    the last line's prefix
#   EXPECTED_PASS  the scenarios `all` must pass, in table order
#   MUST_FAIL, MUST_PANIC   the `scenario=` values of the deliberate failure
#                  and the deliberate panic
#   FAULTS         lines "phase|scenario|what the FAIL line shows|its regex":
#                  stress runs with an injected fault, each must be refused
#   STRESS_RESULT  the start of the stress RESULT line up to "CPUs"
#   STRESS_WHAT    what runs on the two CPUs (the check's words)
#   EXPLICIT_ONLY  regex of explicit-only scenarios `all` must not run, or ""
#   BY_NAME        a scenario to load alone by name, or ""
#   UNKNOWN, UNKNOWN_MSG   an unknown `scenario=` value and what it logs
#   PANIC_CHECKS   lines "what|regex" the deliberate panic's log must match
#   LEAK           the explicit-only `scenario=` value that leaks radios with
#                  their works pending (the leaked-radio phase), or ""
#   LEAK_REPORT    extended regex of the exit's report of the works it stopped
#   LEAK_WARN      regex of the one WARNING line that phase allows: the
#                  exit's warning about the leak
#   LEAK_ALLOWED   regex of every kernel trouble line that warning brings
#   LEAK_WAIT      seconds to wait after rmmod (past the longest backoff)
#   LEAK_ONLY      "yes": run the leaked-radio phase alone (boot-test.sh's
#                  proof that it fails on a module whose exit stops nothing)
#   FAULT_ONLY     a line as in FAULTS: run that phase alone (boot-test.sh's
#                  proof that a scenario fails on a weakened module), or ""
#
# Each phase loads the module with some parameters and checks the kernel log
# of that load. Every line the module logged is echoed to the console tagged
# with the phase ("[all] airtime: PASS heap-vec-box") for boot-test.sh, and
# every check prints "BOOT-CHECK ok: ..." or "BOOT-CHECK FAIL: ...". The last
# line is "$MARKER: PASS ..." or "$MARKER: FAIL ...", then the machine powers
# off. A crash of this script panics the kernel, which reboots, which ends
# qemu (-no-reboot) without the PASS marker.

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
# check DESCRIPTION COMMAND...: ok if COMMAND succeeds.
check() {
	what=$1
	shift
	checks=$((checks + 1))
	if "$@"; then
		echo "BOOT-CHECK ok: $what"
	else
		failed=$((failed + 1))
		echo "BOOT-CHECK FAIL: $what"
	fi
}
logged() { grep -q "$1" "$log"; }
not_logged() { ! grep -qE "$1" "$log"; }
loaded() { [ -d "/sys/module/$MOD_NAME" ]; }
not_loaded() { [ ! -d "/sys/module/$MOD_NAME" ]; }
# count_passes: number of PASS lines in $log.
count_passes() { grep -c "$TAG: PASS " "$log"; }
# each_line LINES FUNCTION: FUNCTION with the |-separated fields of each line.
# A here-document, not a pipe: the loop must run in this shell, so that the
# checks it makes are counted.
each_line() {
	while IFS='|' read -r a b c d; do
		if [ -n "$a" ]; then "$2" "$a" "$b" "$c" "$d"; fi
	done <<LINES
$1
LINES
}

# Kernel messages that mean something went wrong, whatever the phase (the C
# module reports a panic as "Rust panic", the kernel's Rust as "panicked").
TROUBLE='Oops|BUG:|WARNING:|Call Trace|general protection|Rust panic|panicked|Unknown symbol|Unknown rela|RIP:'

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
		rmmod "$MOD_NAME"
		check "$tag: rmmod succeeded" [ $? -eq 0 ]
		check "$tag: module is gone" not_loaded
	else
		check "$tag: insmod refused (rc $rc)" [ "$rc" -ne 0 ]
		check "$tag: module is not loaded" not_loaded
	fi
	dmesg >"$log"
	sed -n "s/^\[[^]]*\] \($TAG: .*\)$/[$tag] \1/p" "$log"
	check "$tag: no oops, BUG, warning or panic in the log" not_logged "$TROUBLE"
}

# stress_on_two_cpus: the stress RESULT line in $log names two different CPUs.
stress_on_two_cpus() {
	# shellcheck disable=SC2046 # split "CPU CPU" into two words on purpose
	set -- $(sed -n "s|.*$STRESS_RESULT \([0-9]*\)/\([0-9]*\),.*|\1 \2|p" "$log")
	[ $# -eq 2 ] && [ "$1" != "$2" ]
}

# fault_phase PHASE SCENARIO WHAT REGEX: the faulty stress must be refused.
fault_phase() {
	phase "$1" refuse scenario="$2"
	check "$1: FAIL $3" logged "$TAG: FAIL $4"
}

# panic_check WHAT REGEX
panic_check() { check "must-panic: $1" logged "$2"; }

# finish: the marker line, then power off.
finish() {
	if [ "$failed" -eq 0 ]; then
		echo "$MARKER: PASS ($checks checks)"
	else
		echo "$MARKER: FAIL ($failed of $checks checks failed)"
	fi
	poweroff -f
}

# leak_phase: scenario=$LEAK leaks radios on purpose (their memory stays
# allocated for good), one with its rounds work's backoff timer armed, one
# with a run in progress; rmmod must stop both works before the workqueue
# and the module's text go away. After $LEAK_WAIT s (a timer left armed
# fires meanwhile, into freed memory): the module is gone, the exit reported
# the works it stopped and warned about the leak, and that warning is the
# only kernel trouble in the phase. Its trouble lines are echoed, tagged,
# for boot-test.sh (a warning does not reach the quiet console).
leak_phase() {
	tag=leaked-radio
	log=/tmp/$tag.log
	dmesg -c >/dev/null
	echo "=== phase $tag: insmod $MODULE scenario=$LEAK, rmmod, sleep $LEAK_WAIT (expect: the exit's leak warning only)"
	insmod "$MODULE" scenario="$LEAK"
	rc=$?
	check "$tag: insmod succeeded (rc $rc)" [ "$rc" -eq 0 ]
	rmmod "$MOD_NAME"
	check "$tag: rmmod succeeded" [ $? -eq 0 ]
	sleep "$LEAK_WAIT"
	check "$tag: module is gone" not_loaded
	dmesg >"$log"
	sed -n "s/^\[[^]]*\] \($TAG: .*\)$/[$tag] \1/p" "$log"
	grep -E "$LEAK_TROUBLE" "$log" | sed "s/^/[$tag] kernel: /"
	check "$tag: PASS $LEAK" logged "$TAG: PASS $LEAK\$"
	check "$tag: the exit stopped the leaked works" grep -qE "$LEAK_REPORT" "$log"
	check "$tag: the exit warned about the leak" logged "$LEAK_WARN"
	check "$tag: exactly one warning and one call trace" leak_one_warning
	check "$tag: no oops, BUG or fault, no trouble but that warning" leak_only_allowed
}
# Trouble in the leaked-radio phase (a fault of a freed workqueue's timer
# may also panic in interrupt, which ends the boot without the marker).
LEAK_TROUBLE="$TROUBLE|unable to handle|Kernel panic|kernel BUG"
leak_one_warning() { [ "$(grep -c 'WARNING:' "$log")" -eq 1 ] && [ "$(grep -c 'Call Trace' "$log")" -eq 1 ]; }
leak_only_allowed() { ! grep -E "$LEAK_TROUBLE" "$log" | grep -vqE "$LEAK_ALLOWED"; }

if [ "${LEAK_ONLY:-}" = yes ]; then
	leak_phase
	finish
fi
if [ -n "${FAULT_ONLY:-}" ]; then
	each_line "$FAULT_ONLY" fault_phase
	finish
fi

# shellcheck disable=SC2086 # split the list into words on purpose
set -- $EXPECTED_PASS
expected_count=$#
first=$1

# Negative first: a failing scenario must make the load fail, and leave the
# kernel able to load the module afterwards.
phase must-fail refuse scenario="$MUST_FAIL"
check "must-fail: FAIL line logged" logged "$TAG: FAIL selftest-must-fail: deliberate failure"
check "must-fail: load refused in the log" logged 'scenarios failed: refusing to load'

# The stress test's checks must catch each injected fault.
each_line "$FAULTS" fault_phase

phase all load
for name in $EXPECTED_PASS; do
	check "all: PASS $name" grep -q "\] $TAG: PASS $name\$" "$log"
done
passes=$(count_passes)
check "all: exactly $expected_count PASS lines (saw $passes)" [ "$passes" -eq "$expected_count" ]
check "all: no FAIL line" not_logged "$TAG: FAIL"
check "all: summary line" logged "$TAG: all $expected_count scenarios passed"
if [ -n "$EXPLICIT_ONLY" ]; then
	check "all: the explicit-only scenarios did not run" not_logged "$EXPLICIT_ONLY"
fi
check "all: unload logged" logged "$TAG: unloaded"
check "all: $STRESS_WHAT on two different CPUs" stress_on_two_cpus

if [ -n "$BY_NAME" ]; then
	phase by-name load scenario="$BY_NAME"
	check "by-name: PASS $BY_NAME" logged "$TAG: PASS $BY_NAME\$"
	check "by-name: exactly one scenario ran" [ "$(count_passes)" -eq 1 ]
fi

phase by-index load scenario=0
check "by-index: scenario 0 is $first and passed" logged "$TAG: PASS $first\$"
check "by-index: exactly one scenario ran" [ "$(count_passes)" -eq 1 ]

phase unknown refuse scenario="$UNKNOWN"
check "unknown: reported" logged "$UNKNOWN_MSG"

tainted=$(cat /proc/sys/kernel/tainted)
# B bad page (5), D died/oops (7), W warning (9), L soft lockup (14).
check "kernel taint $tainted has no B/D/W/L" [ $((tainted & 0x42a0)) -eq 0 ]

# After the taint check: its warning taints the kernel W.
if [ -n "${LEAK:-}" ]; then
	leak_phase
	tainted=$(cat /proc/sys/kernel/tainted)
	check "leaked-radio: kernel taint $tainted has W (the warning) and no B/D/L" \
		[ $((tainted & 0x42a0)) -eq $((0x200)) ]
fi

# Last, because it oopses the loading task and leaves the module stuck in
# "coming" state: a Rust panic must reach the panic handler, print the message
# with its source location, and BUG().
dmesg -c >/dev/null
log=/tmp/must-panic.log
echo "=== phase must-panic: insmod $MODULE scenario=$MUST_PANIC (expect: oops)"
insmod "$MODULE" scenario="$MUST_PANIC"
rc=$?
dmesg >"$log"
sed -n "s/^\[[^]]*\] \($TAG: .*\)$/[must-panic] \1/p" "$log"
check "must-panic: insmod did not succeed (rc $rc)" [ "$rc" -ne 0 ]
each_line "$PANIC_CHECKS" panic_check
tainted=$(cat /proc/sys/kernel/tainted)
check "must-panic: kernel taint $tainted has D (oops)" [ $((tainted & 0x80)) -ne 0 ]

finish
