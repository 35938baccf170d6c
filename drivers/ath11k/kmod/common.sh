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
