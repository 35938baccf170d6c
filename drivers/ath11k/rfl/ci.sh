#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR GPL-2.0-only
#
# ci.sh - the Rust-for-Linux module's CI job, from a fresh machine: host
# packages; Debian's Rust-enabled kernel, its rustc and bindgen versions read
# from the package lists and the kernel's config (kernel.sh); the prepared,
# cached kernel tree; the module built by Kbuild; a boot of that kernel under
# qemu (tcg) with a busybox initramfs that loads, checks and unloads it.
#
# Usage: drivers/ath11k/rfl/ci.sh   (as root, or with sudo for missing packages)
# Environment: RFL_CACHE (default ~/.cache/airtime-rfl: downloads, tools,
# the prepared tree), RFL_SUITE (default trixie-backports), BOOT_TIMEOUT.
# Output under drivers/ath11k/rfl/build/ (ignored by git).
set -euo pipefail

RFL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../kmod/common.sh
source "$RFL_DIR/../kmod/common.sh"
# shellcheck source=kernel.sh
source "$RFL_DIR/kernel.sh"
RFL_BUILD=$RFL_DIR/build
ROOT=$(cd "$RFL_DIR/../../.." && pwd)

PACKAGES=(flex bison bc make gcc libelf-dev libssl-dev dwarves cpio busybox-static qemu-system-x86
	kmod python3 python3-pip unzip xz-utils binutils gzip shellcheck)
ci_started=$(kmod_now)
on_exit() {
	local rc=$?
	((rc == 0)) || printf 'rfl ci.sh: FAIL (exit %d after %s s)\n' "$rc" "$(kmod_elapsed "$ci_started")"
}
trap on_exit EXIT

# 1. Host packages (the host's own sources; only what is missing).
missing=()
for pkg in "${PACKAGES[@]}"; do
	[[ $(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true) == installed ]] || missing+=("$pkg")
done
if ((${#missing[@]})); then
	sudo=()
	((EUID == 0)) || sudo=(sudo)
	kmod_log "installing ${missing[*]}"
	"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -q
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}"
fi

# Style of the scripts.
(cd "$RFL_DIR" && shellcheck -x ci.sh kernel.sh boot-test.sh)
kmod_log "shellcheck clean"

# 2. Kernel, toolchain, prepared tree (cached).
step=$(kmod_now)
rfl_prepare
prepare_time=$(kmod_elapsed "$step")

# 3. The crates, with exactly the kernel's rustc, as cargo builds them
# (no_std) and under the kernel build's conditions (overflow checks): a language
# feature or API newer than the kernel's compiler fails here, with cargo's
# message, before Kbuild. The no_std crates declare that compiler as their
# rust-version, so cargo refuses a workspace that needs a newer one.
step=$(kmod_now)
(cd "$ROOT" && RUSTFLAGS="-Coverflow-checks=on" \
	CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}/rfl-msrv" \
	cargo "+$RFL_RUSTC_VERSION" build -q --no-default-features \
	-p airtime-est -p airtime-sched -p airtime-ath11k -p airtime-mt76)
kmod_log "crates built with $(rustc "+$RFL_RUSTC_VERSION" --version) in $(kmod_elapsed "$step") s"

# 4. The module, through Kbuild.
step=$(kmod_now)
kb=$RFL_BUILD/kbuild
rm -rf "$kb" && mkdir -p "$kb"
cp "$RFL_DIR"/Kbuild "$RFL_DIR"/*.rs "$kb/"
# The C-API module's scenario sources, shared rather than copied.
ln -s "$RFL_DIR/../kmod/src" "$kb/kmod-src"
if ! "${RFL_MAKE[@]}" M="$kb" AIRTIME_ROOT="$ROOT" modules >"$RFL_BUILD/kbuild.log" 2>&1; then
	cat "$RFL_BUILD/kbuild.log" >&2
	kmod_die "Kbuild failed"
fi
# Any warning fails the build, objtool's included.
if grep -iE 'warning|error' "$RFL_BUILD/kbuild.log" >&2; then
	kmod_die "Kbuild warned (see $RFL_BUILD/kbuild.log)"
fi
cp "$kb/airtime_rfl.ko" "$RFL_BUILD/"
kmod_log "built $(modinfo -F vermagic "$RFL_BUILD/airtime_rfl.ko") in $(kmod_elapsed "$step") s"
build_time=$(kmod_elapsed "$step")

# 5. Boot, load, check, unload.
step=$(kmod_now)
KVER=$RFL_KREL KERNEL=$RFL_VMLINUZ "$RFL_DIR/boot-test.sh" "$RFL_BUILD/airtime_rfl.ko"
boot_time=$(kmod_elapsed "$step")

printf 'rfl ci.sh: PASS (kernel %s, %s; prepare %s s, build %s s, boot test %s s, total %s s)\n' \
	"$RFL_KREL" "$(rustc --version)" "$prepare_time" "$build_time" "$boot_time" "$(kmod_elapsed "$ci_started")"
