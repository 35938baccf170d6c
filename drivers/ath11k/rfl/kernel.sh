# shellcheck shell=bash
# SPDX-License-Identifier: MIT OR GPL-2.0-only
#
# kernel.sh - sourced by ci.sh: find Debian's Rust-enabled kernel in the
# package lists, fetch it through a private apt configuration (the host's
# sources are not touched, nothing from that suite is installed), install the
# toolchain its config names, and prepare (and cache) a kernel tree that
# out-of-tree Rust modules can be built against.
#
# Sets: RFL_KREL (kernel release), RFL_OBJ (prepared tree), RFL_VMLINUZ,
# RFL_RUSTC_VERSION, RFL_MAKE (array: make and its tool variables), and exports
# PATH, LIBCLANG_PATH, RUSTC_FORCE_RUSTC_VERSION, RUSTUP_TOOLCHAIN.

# The suite that carries a kernel built with CONFIG_RUST=y (bookworm's and
# trixie's own kernels are not). Override with RFL_SUITE.
RFL_SUITE=${RFL_SUITE:-trixie-backports}
# Where the downloads, tools and the prepared tree are cached between runs.
RFL_CACHE=${RFL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/airtime-rfl}
# The PyPI libclang wheel (bindgen needs libclang >= the kernel's minimum; the
# host's may be older). Not read from the kernel: Debian records no libclang
# version in its config.
RFL_LIBCLANG=${RFL_LIBCLANG:-18.1.1}

rfl_apt() {
	APT_CONFIG=$RFL_CACHE/apt/apt.conf "$@"
}

# 1. The private apt configuration: one sources line for $RFL_SUITE on the
# Debian mirror the host already uses, its own lists, status and cache.
rfl_apt_setup() {
	local apt=$RFL_CACHE/apt mirror
	mkdir -p "$apt"/{lists/partial,cache/archives/partial,etc/preferences.d,etc/apt.conf.d}
	: >"$apt/status"
	mirror=$(grep -rhoE 'https?://[^ ]*debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
		grep -v security | head -n 1 | tr -d " ") || true
	mirror=${mirror:-http://deb.debian.org/debian}
	printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
		"${mirror%/}" "$RFL_SUITE" >"$apt/sources.list"
	cat >"$apt/apt.conf" <<CONF
Dir::Etc::sourcelist "$apt/sources.list";
Dir::Etc::sourceparts "-";
Dir::Etc::preferencesparts "$apt/etc/preferences.d";
Dir::Etc::parts "$apt/etc/apt.conf.d";
Dir::State::Lists "$apt/lists";
Dir::State::status "$apt/status";
Dir::Cache "$apt/cache";
Dir::Cache::archives "$apt/cache/archives";
APT::Architecture "amd64";
CONF
	# A day-old list is fresh enough; backports move slowly.
	if [[ -z $(find "$apt/lists" -name '*Packages*' -mmin -1440 2>/dev/null | head -n 1) ]]; then
		rfl_apt apt-get update -q -o APT::Update::Error-Mode=any >&2
	fi
}

# 2. The kernel release: what the suite's linux-headers-amd64 depends on.
rfl_kernel_release() {
	rfl_apt apt-cache show linux-headers-amd64 |
		sed -n 's/^Depends:.*linux-headers-\([0-9][^ ,]*-amd64\).*/\1/p' | sort -V | tail -n 1
}

# 3. Download and unpack one package (once; cached).
rfl_unpack() {
	local pkg=$1 dest=$RFL_CACHE/pkgs/$1
	[[ -f $dest/.done ]] && return 0
	rm -rf "$dest" && mkdir -p "$dest"
	(cd "$RFL_CACHE/apt/cache/archives" && rfl_apt apt-get download -q "$pkg" >&2)
	local debs=("$RFL_CACHE/apt/cache/archives/${pkg}_"*.deb)
	dpkg-deb -x "${debs[-1]}" "$dest"
	touch "$dest/.done"
}

# A value of the kernel's config, without quotes.
rfl_config() {
	sed -n "s/^$1=\"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" "$RFL_CONFIG"
}

rfl_prepare() {
	local t0 src_pkg img_pkg bindgen_version wheel p
	mkdir -p "$RFL_CACHE"/{pkgs,tools}
	t0=$(kmod_now)
	rfl_apt_setup
	RFL_KREL=$(rfl_kernel_release)
	[[ -n $RFL_KREL ]] || kmod_die "no linux-headers-amd64 in $RFL_SUITE"
	kmod_log "kernel in $RFL_SUITE: $RFL_KREL"
	# In 7.x the image is split: vmlinuz in linux-binary-*, config in
	# linux-base-*; earlier kernels have both in linux-image-*.
	img_pkg=linux-image-$RFL_KREL
	local pkgs=("$img_pkg")
	if rfl_apt apt-cache show "linux-binary-$RFL_KREL" >/dev/null 2>&1; then
		pkgs=("linux-binary-$RFL_KREL" "linux-base-$RFL_KREL")
	fi
	for p in "${pkgs[@]}"; do rfl_unpack "$p"; done
	# /boot/vmlinuz-REL or /usr/lib/modules/REL/vmlinuz, config alike.
	RFL_VMLINUZ=$(cd "$RFL_CACHE/pkgs" && find "${pkgs[@]/#/$RFL_CACHE/pkgs/}" -type f \( -name "vmlinuz-$RFL_KREL" -o -path "*/$RFL_KREL/vmlinuz" \) | head -n 1)
	RFL_CONFIG=$(cd "$RFL_CACHE/pkgs" && find "${pkgs[@]/#/$RFL_CACHE/pkgs/}" -type f \( -name "config-$RFL_KREL" -o -path "*/$RFL_KREL/config" \) | head -n 1)
	[[ -f $RFL_VMLINUZ && -f $RFL_CONFIG ]] || kmod_die "no vmlinuz/config for $RFL_KREL"
	[[ $(rfl_config CONFIG_RUST) == y ]] || kmod_die "$RFL_KREL is not built with CONFIG_RUST=y"
	rfl_unpack "linux-headers-$RFL_KREL"
	[[ $RFL_KREL =~ ^([0-9]+\.[0-9]+) ]] || kmod_die "cannot read X.Y from $RFL_KREL"
	src_pkg=linux-source-${BASH_REMATCH[1]}
	rfl_unpack "$src_pkg"

	# The toolchain the kernel was built with, from its config.
	RFL_RUSTC_TEXT=$(rfl_config CONFIG_RUSTC_VERSION_TEXT)
	RFL_RUSTC_VERSION=$(awk '{print $2}' <<<"$RFL_RUSTC_TEXT")
	bindgen_version=$(rfl_config CONFIG_BINDGEN_VERSION_TEXT | awk '{print $2}')
	[[ -n $RFL_RUSTC_VERSION && -n $bindgen_version ]] || kmod_die "no rustc/bindgen version in $RFL_CONFIG"
	kmod_log "kernel built with: $RFL_RUSTC_TEXT; bindgen $bindgen_version"
	if ! rustup run "$RFL_RUSTC_VERSION" rustc --version >/dev/null 2>&1 ||
		[[ ! -d $(rustup run "$RFL_RUSTC_VERSION" rustc --print sysroot)/lib/rustlib/src/rust/library/alloc ]]; then
		rustup toolchain install "$RFL_RUSTC_VERSION" --profile minimal --component rust-src --component rustfmt >&2
	fi
	export RUSTUP_TOOLCHAIN=$RFL_RUSTC_VERSION
	# The compiler's version text feeds every crate's hash (StableCrateId):
	# rustup's build must hash like Debian's or nothing links against vmlinux.
	export RUSTC_FORCE_RUSTC_VERSION=${RFL_RUSTC_TEXT#rustc }
	if [[ $("$RFL_CACHE/tools/bin/bindgen" --version 2>/dev/null) != "bindgen $bindgen_version" ]]; then
		kmod_log "installing bindgen-cli $bindgen_version (a few minutes)"
		cargo install --locked --root "$RFL_CACHE/tools" bindgen-cli --version "$bindgen_version" >&2
	fi
	local lc=$RFL_CACHE/tools/libclang-$RFL_LIBCLANG
	if [[ ! -f $lc/.done ]]; then
		wheel=$RFL_CACHE/tools/wheel
		rm -rf "$wheel" "$lc" && mkdir -p "$wheel"
		python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux2010_x86_64 \
			-d "$wheel" "libclang==$RFL_LIBCLANG" >&2
		unzip -q -o "$wheel"/libclang-*.whl -d "$lc"
		touch "$lc/.done"
	fi
	LIBCLANG_PATH=$(dirname "$(find "$lc" -name 'libclang.so*' | head -n 1)")
	export LIBCLANG_PATH
	export PATH=$RFL_CACHE/tools/bin:$PATH
	kmod_log "toolchain: $(rustc --version) ($RUSTC_FORCE_RUSTC_VERSION), $(bindgen --version)"

	# The prepared tree: Debian's config, modules_prepare, Debian's
	# Module.symvers and vmlinux. Cached; rebuilt when the release changes.
	RFL_OBJ=$RFL_CACHE/obj-$RFL_KREL
	RFL_SRC=$RFL_CACHE/pkgs/$src_pkg/usr/src/$src_pkg
	if [[ ! -d $RFL_SRC ]]; then
		local tarballs=("$RFL_CACHE/pkgs/$src_pkg/usr/src/$src_pkg".tar.*) tarball
		tarball=${tarballs[0]}
		kmod_log "unpacking $tarball"
		tar -C "$RFL_CACHE/pkgs/$src_pkg/usr/src" -xf "$tarball"
	fi
	RFL_MAKE=(make -s -C "$RFL_SRC" O="$RFL_OBJ" ARCH=x86 KERNELRELEASE="$RFL_KREL"
		RUSTC=rustc BINDGEN=bindgen HOSTRUSTC=rustc -j"$(nproc)")
	if [[ ! -f $RFL_OBJ/.airtime-prepared ]]; then
		local hdr t1
		t1=$(kmod_now)
		rm -rf "$RFL_OBJ" && mkdir -p "$RFL_OBJ"
		cp "$RFL_CONFIG" "$RFL_OBJ/.config"
		kmod_log "preparing the kernel tree in $RFL_OBJ (about 2 min)"
		"${RFL_MAKE[@]}" rustavailable >&2 || kmod_die "the kernel says Rust is not available with this toolchain"
		"${RFL_MAKE[@]}" olddefconfig >&2
		# olddefconfig silently drops CONFIG_RUST when the toolchain does not fit.
		grep -qx 'CONFIG_RUST=y' "$RFL_OBJ/.config" || kmod_die "CONFIG_RUST=y was dropped by olddefconfig"
		"${RFL_MAKE[@]}" modules_prepare >&2
		hdr=$RFL_CACHE/pkgs/linux-headers-$RFL_KREL/usr/src/linux-headers-$RFL_KREL
		cp "$hdr/Module.symvers" "$RFL_OBJ/Module.symvers"
		[[ -f $hdr/vmlinux ]] && cp "$hdr/vmlinux" "$RFL_OBJ/vmlinux"
		# Every Rust symbol vmlinux exports must be one this tree's crates
		# name: else the hashes differ and modules would not load.
		local want have
		want=$(grep -oE '\b_R[A-Za-z0-9_]+' "$RFL_OBJ/Module.symvers" | sort -u)
		have=$(cat "$RFL_OBJ"/rust/exports_*_generated.h | grep -oE '\b_R[A-Za-z0-9_]+' | sort -u)
		if [[ -n $(comm -23 <(echo "$want") <(echo "$have")) ]]; then
			kmod_die "$(comm -23 <(echo "$want") <(echo "$have") | wc -l) of $(wc -l <<<"$want") Rust symbols of Debian's vmlinux are not in the prepared tree: compiler version text differs?"
		fi
		kmod_log "kernel tree prepared in $(kmod_elapsed "$t1") s; all $(wc -l <<<"$want") Rust exports match"
		touch "$RFL_OBJ/.airtime-prepared"
	fi
	kmod_log "kernel, toolchain and tree ready in $(kmod_elapsed "$t0") s"
}
