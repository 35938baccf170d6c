#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR GPL-2.0-only
#
# ci.sh - the kernel-module CI job: install what is missing, build the
# module (build.sh), boot it in the packaged kernel under qemu and check it
# (boot-test.sh). Exits non-zero on any failure; prints timings.
#
# Usage: drivers/ath11k/kmod/ci.sh   (from anywhere; as root, or with sudo,
# when packages are missing)
#
# Works from a fresh clone: CARGO_TARGET_DIR may be unset (cargo's default
# target dir is used), and build products go to drivers/ath11k/kmod/build/.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# Debian packages the job needs. The kernel image and headers come from the
# same meta-packages, so their ABI versions match.
PACKAGES=(
	linux-headers-amd64 linux-image-amd64 qemu-system-x86 busybox-static cpio
	make binutils kmod gzip shellcheck
)
ci_started=$(kmod_now)
on_exit() {
	local rc=$?
	((rc == 0)) || printf 'ci.sh: FAIL (exit %d after %s s)\n' "$rc" "$(kmod_elapsed "$ci_started")"
}
trap on_exit EXIT

# 1. Packages: install only what is missing (apt-get update first).
missing=()
for pkg in "${PACKAGES[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
	[[ $status == installed ]] || missing+=("$pkg")
done
if ((${#missing[@]})); then
	step_started=$(kmod_now)
	sudo=()
	if ((EUID != 0)); then
		command -v sudo >/dev/null || kmod_die "missing packages (${missing[*]}) and not root"
		sudo=(sudo)
	fi
	kmod_log "installing ${missing[*]}"
	# Wait for a concurrent apt/dpkg instead of failing on its lock.
	"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -q
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}"
	kmod_log "packages installed in $(kmod_elapsed "$step_started") s"
else
	kmod_log "packages present: ${PACKAGES[*]}"
fi

# 2. Rust: the module's core and alloc are built from source (build-std, for
# x86_64-unknown-none with the kernel's flags), which needs the rust-src
# component; add it if this toolchain lacks it.
command -v cargo >/dev/null || kmod_die "no cargo on PATH"
if command -v rustup >/dev/null; then
	if ! rustup component list --installed | grep -qx 'rust-src'; then
		kmod_log "rustup component add rust-src"
		rustup component add rust-src
	fi
fi
kmod_log "$(rustc --version), $(cargo --version)"

# 3. Style of the scripts.
(cd "$KMOD_DIR" && shellcheck -x build.sh boot-test.sh ci.sh common.sh objcheck.sh boot-init.sh)
kmod_log "shellcheck clean"

# 4. Build and boot-test.
step_started=$(kmod_now)
"$KMOD_DIR/build.sh"
build_time=$(kmod_elapsed "$step_started")

step_started=$(kmod_now)
"$KMOD_DIR/boot-test.sh"
boot_time=$(kmod_elapsed "$step_started")

printf 'ci.sh: PASS (build %s s, boot test %s s, total %s s)\n' \
	"$build_time" "$boot_time" "$(kmod_elapsed "$ci_started")"
