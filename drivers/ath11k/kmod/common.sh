# shellcheck shell=bash disable=SC2034 # variables here are used by the sourcing scripts
# SPDX-License-Identifier: MIT OR GPL-2.0-only
#
# common.sh - helpers shared by build.sh, boot-test.sh and ci.sh (sourced).

KMOD_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Everything the scripts produce goes here (ignored by git).
KMOD_BUILD_DIR=$KMOD_DIR/build
# Name of the kernel module (airtime_ath11k.ko).
KMOD_NAME=airtime_ath11k

# Seconds since the epoch with microseconds, for timings.
kmod_now() {
	printf '%s\n' "${EPOCHREALTIME/,/.}"
}

# Elapsed seconds since $1 (a kmod_now value), with one decimal.
kmod_elapsed() {
	awk -v start="$1" -v now="$(kmod_now)" 'BEGIN { printf "%.1f", now - start }'
}

kmod_log() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
}

kmod_die() {
	kmod_log "error: $*"
	exit 1
}

# The kernel release to build for and boot: $KVER if set, otherwise the
# newest /boot/vmlinuz-*-amd64 (never hard-coded: the image package decides).
kmod_kver() {
	if [[ -n ${KVER:-} ]]; then
		printf '%s\n' "$KVER"
		return
	fi
	local images=(/boot/vmlinuz-*-amd64)
	[[ -e ${images[0]} ]] || kmod_die "no /boot/vmlinuz-*-amd64: install linux-image-amd64 (ci.sh does)"
	printf '%s\n' "${images[@]}" | sed 's|^/boot/vmlinuz-||' | sort -V | tail -n 1
}

# kmod_boot KERNEL INITRD RAW SERIAL: boots KERNEL with INITRD under qemu
# (software emulation: nested KVM hangs on these machines; $BOOT_CPUS CPUs,
# $BOOT_TIMEOUT s), the serial console in RAW and, without carriage returns
# and terminal controls, in SERIAL; sets qemu_rc. A guest kernel that oopses
# or panics before /init starts its first phase, so before any module is
# loaded, is booted once more, and the log says so: under TCG the kernel's
# own code patching at boot has been seen to trap (an int3 oops in
# sched_clock_cpu() on a secondary CPU). A second such crash stands.
kmod_boot() {
	local kernel=$1 initrd=$2 raw=$3 serial=$4 attempt
	for attempt in 1 2; do
		set +e
		timeout "$BOOT_TIMEOUT" qemu-system-x86_64 -accel tcg -smp "$BOOT_CPUS" -nic none -m 512 -no-reboot \
			-nographic -kernel "$kernel" -initrd "$initrd" -append "console=ttyS0 panic=-1 quiet" \
			</dev/null >"$raw" 2>&1
		qemu_rc=$?
		set -e
		tr -d '\r' <"$raw" | sed -e $'s/\x1b\\[[0-9;?]*[A-Za-z]//g' -e $'s/\x1bc//g' >"$serial"
		# Not anchored: a phase's first line may follow the firmware's last
		# output (anchored, the leaked-radio phase's expected fault was taken
		# for a boot crash and booted again).
		if ((attempt == 1)) && ! grep -q '=== phase ' "$serial" && grep -qE 'Kernel panic|Oops' "$serial"; then
			kmod_log "the guest kernel crashed before /init's first phase, with no module loaded; booting again:"
			grep -E 'Oops|RIP:|Kernel panic' "$serial" | head -n 4 >&2 || true
			continue
		fi
		return 0
	done
}

# kmod_what_failed SERIAL VERDICT: the guest's failed checks and the judge's
# verdict, again, on stderr: printed last, since a CI log often keeps only its
# tail.
kmod_what_failed() {
	kmod_log "what failed:"
	grep '^BOOT-CHECK FAIL' "$1" >&2 || true
	[[ -z $2 ]] || printf '%s\n' "$2" | cut -c1-400 >&2
}
