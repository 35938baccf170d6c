# shellcheck shell=bash
# SPDX-License-Identifier: MIT OR GPL-2.0-only
#
# objcheck.sh - checks of the Rust object before it goes into the module
# (sourced by build.sh). Each check prints what it found and returns non-zero
# on a violation. objcheck_prove_checks assembles small objects that violate
# each rule and asserts that every check rejects its bad object and accepts a
# clean one, so a check that silently stopped working fails the build too.

# Relocation types the x86_64 module loader applies to this code.
OBJCHECK_RELOCS=(R_X86_64_64 R_X86_64_32S R_X86_64_PC32 R_X86_64_PLT32 R_X86_64_NONE)
# Undefined symbols the kernel exports and compilers may call on their own.
OBJCHECK_MEM_SYMBOLS=(memcpy memmove memset memcmp bcmp)
# Largest stack frame allowed, in bytes (CONFIG_FRAME_WARN on x86_64).
OBJCHECK_MAX_FRAME=${OBJCHECK_MAX_FRAME:-2048}

# No x87, MMX, SSE or AVX instruction: the kernel does not preserve FPU/SIMD
# state around kernel code. With SSE disabled, a float silently becomes x87
# code; a SIMD register anywhere means the target flags were not applied.
objcheck_instructions() {
	local obj=$1 bad
	bad=$(objdump -d --no-show-raw-insn "$obj" | awk -F'\t' '
		$1 ~ /^ *[0-9a-f]+:$/ && NF >= 2 {
			n = split($2, w, / +/)
			i = 1
			while (i < n && w[i] ~ /^(lock|rep|repz|repe|repnz|repne|notrack|bnd|data16|addr32|cs|ds|ss|es|fs|gs|rex.*)$/)
				i++
			m = w[i]
			if (m ~ /^f/ || (m ~ /^v/ && m !~ /^ver[rw]$/) ||
			    m ~ /^(emms|ldmxcsr|stmxcsr|fxsave|fxrstor|xsave|xrstor)/ ||
			    $2 ~ /%([xyz]mm[0-9]|mm[0-7]|st($|[,(]))/)
				print "  " $0
		}')
	if [[ -n $bad ]]; then
		printf 'objcheck: %s: x87/MMX/SSE/AVX instructions (%s), first ones:\n%s\n' \
			"$obj" "$(wc -l <<<"$bad")" "$(head -n 20 <<<"$bad")" >&2
		return 1
	fi
}

# Only relocations the module loader understands (a GOT relocation makes the
# load fail with "Unknown rela relocation").
objcheck_relocations() {
	local obj=$1 allowed bad
	allowed=$(printf '%s|' "${OBJCHECK_RELOCS[@]}")
	bad=$(readelf -rW "$obj" | awk -v ok="^(${allowed%|})$" '
		/^Relocation section/ { section = $3 }
		$3 ~ /^R_/ && $3 !~ ok { count[section " " $3]++ }
		END { for (k in count) print "  " count[k] " x " k }')
	if [[ -n $bad ]]; then
		printf 'objcheck: %s: relocations the module loader rejects:\n%s\n' "$obj" "$bad" >&2
		return 1
	fi
}

# Undefined symbols: only the shim's functions (given as arguments) and the
# mem* functions. Anything else (__udivti3 from u128 division, a float
# helper, rust_eh_personality) would not resolve in the kernel.
objcheck_undefined() {
	local obj=$1 bad
	shift
	local -A ok=()
	local sym
	for sym in "$@" "${OBJCHECK_MEM_SYMBOLS[@]}"; do
		ok[$sym]=1
	done
	bad=$(nm -u "$obj" | awk '{ print $NF }' | while read -r sym; do
		[[ -n ${ok[$sym]:-} ]] || printf '  %s\n' "$sym"
	done)
	if [[ -n $bad ]]; then
		printf 'objcheck: %s: undefined symbols outside the allowed list:\n%s\n' "$obj" "$bad" >&2
		return 1
	fi
}

# Every entry point the header declares is defined and global.
objcheck_exports() {
	local obj=$1 defined missing=() sym
	shift
	defined=$(nm --defined-only -g "$obj" | awk '$2 ~ /^[TDRB]$/ { print $3 }')
	for sym in "$@"; do
		grep -qxF "$sym" <<<"$defined" || missing+=("$sym")
	done
	if ((${#missing[@]})); then
		printf 'objcheck: %s: entry points not defined: %s\n' "$obj" "${missing[*]}" >&2
		return 1
	fi
}

# No sections the module loader would ignore or mishandle: constructors
# (never run), thread-locals (no TLS in the kernel), GOT/PLT, unwind tables
# and LLVM bitcode (removed by objcopy), debug info (stripped by ld).
objcheck_sections() {
	local obj=$1 bad
	bad=$(readelf -SW "$obj" | sed -n 's/^ *\[ *[0-9]*\] \([^ ]*\).*/\1/p' |
		grep -E '^\.(rela?\.)?(init_array|fini_array|ctors|dtors|tdata|tbss|got|plt|eh_frame|llvmbc|llvmcmd|debug_)' || true)
	if [[ -n $bad ]]; then
		printf 'objcheck: %s: forbidden sections: %s\n' "$obj" "$(tr '\n' ' ' <<<"$bad")" >&2
		return 1
	fi
}

# Stack frames stay small: the kernel stack is 16 KiB for the whole call
# chain. Frames larger than a page are probed in page steps, each of which
# shows up here as a subtraction too large to pass.
objcheck_stack() {
	local obj=$1 max
	# shellcheck disable=SC2016 # a literal $ in the sed pattern
	max=$(objdump -d --no-show-raw-insn "$obj" |
		sed -n 's/.*sub  *\$0x\([0-9a-f]*\),%rsp.*/\1/p' |
		while read -r hex; do printf '%d\n' "$((16#$hex))"; done | sort -n | tail -n 1)
	max=${max:-0}
	if ((max > OBJCHECK_MAX_FRAME)); then
		printf 'objcheck: %s: a stack frame of %d bytes (limit %d)\n' "$obj" "$max" "$OBJCHECK_MAX_FRAME" >&2
		return 1
	fi
	printf '%s\n' "$max"
}

# Relaxes GOT references to the allowed undefined symbols (the shim's, given
# as arguments, and mem*) into direct ones; see gotrelax.py for why.
# Prints how many were relaxed.
objcheck_relax() {
	local obj=$1 sym
	shift
	local -a allow=()
	for sym in "$@" "${OBJCHECK_MEM_SYMBOLS[@]}"; do
		allow+=(--allow "$sym")
	done
	python3 "$KMOD_DIR/gotrelax.py" "${allow[@]}" "$obj"
}

# Test helper: $1 has a direct call (or jump) to each symbol that follows.
objcheck_direct_calls() {
	local obj=$1 sym listing
	shift
	listing=$(objdump -dr --no-show-raw-insn "$obj")
	for sym in "$@"; do
		grep -qE "R_X86_64_PLT32[[:space:]]+$sym-0x4$" <<<"$listing" || return 1
	done
	grep -qE '(call|jmp) +\*' <<<"$listing" && return 1
	return 0
}

# Runs every check on $1; $2 is a space-separated list of required exports,
# the remaining arguments are the shim symbols the object may need.
objcheck_all() {
	local obj=$1 exports=$2 failed=0 frame
	shift 2
	local -a export_list
	read -r -a export_list <<<"$exports"
	objcheck_instructions "$obj" || failed=1
	objcheck_relocations "$obj" || failed=1
	objcheck_undefined "$obj" "$@" || failed=1
	objcheck_exports "$obj" "${export_list[@]}" || failed=1
	objcheck_sections "$obj" || failed=1
	if frame=$(objcheck_stack "$obj"); then
		# shellcheck disable=SC2034 # read by build.sh
		OBJCHECK_LARGEST_FRAME=$frame
	else
		failed=1
	fi
	return "$failed"
}

# Proves each check can fail: assembles one clean object and one object per
# rule that breaks it, and asserts the verdicts.
objcheck_prove_checks() {
	local dir=$1 name wrong=0
	mkdir -p "$dir"
	# shellcheck disable=SC2016 # assembly, not shell: $ is literal
	local -A source=(
		[clean]='call memcpy
			movq $table, %rax
			sub $0x100, %rsp
			ret
			.data
			table: .quad good'
		[sse]='addsd %xmm1, %xmm0
			ret'
		[x87]='fldz
			fistpl (%rsp)
			ret'
		[got]='movq memcpy@GOTPCREL(%rip), %rax
			ret'
		[undefined]='call __udivti3
			ret'
		[missing]='ret'
		[ctor]='ret
			.section .init_array, "aw"
			.quad good'
		[stack]='sub $0x4000, %rsp
			ret'
		[gotrefs]='call *memcpy@GOTPCREL(%rip)
			movq memmove@GOTPCREL(%rip), %r15
			jmp *memset@GOTPCREL(%rip)'
		[gotadd]='addq memcpy@GOTPCREL(%rip), %rax
			ret'
		[gotother]='call *other@GOTPCREL(%rip)
			ret'
	)
	for name in "${!source[@]}"; do
		local fn=good
		[[ $name == missing ]] && fn=other
		printf '\t.text\n\t.globl %s\n%s:\n\t%s\n' "$fn" "$fn" "${source[$name]}" >"$dir/$name.s"
		as --64 -o "$dir/$name.o" "$dir/$name.s"
	done
	expect() {
		local verdict=$1 what=$2
		shift 2
		if "$@" 2>/dev/null >/dev/null; then
			[[ $verdict == pass ]] && return
		else
			[[ $verdict == fail ]] && return
		fi
		printf 'objcheck: self-check: %s should %s but did not\n' "$what" "$verdict" >&2
		wrong=1
	}
	expect pass 'instructions(clean)' objcheck_instructions "$dir/clean.o"
	expect fail 'instructions(sse)' objcheck_instructions "$dir/sse.o"
	expect fail 'instructions(x87)' objcheck_instructions "$dir/x87.o"
	expect pass 'relocations(clean)' objcheck_relocations "$dir/clean.o"
	expect fail 'relocations(got)' objcheck_relocations "$dir/got.o"
	expect pass 'undefined(clean)' objcheck_undefined "$dir/clean.o"
	expect fail 'undefined(__udivti3)' objcheck_undefined "$dir/undefined.o"
	expect pass 'exports(clean)' objcheck_exports "$dir/clean.o" good
	expect fail 'exports(missing)' objcheck_exports "$dir/missing.o" good
	expect pass 'sections(clean)' objcheck_sections "$dir/clean.o"
	expect fail 'sections(ctor)' objcheck_sections "$dir/ctor.o"
	expect pass 'stack(clean)' objcheck_stack "$dir/clean.o"
	expect fail 'stack(16 KiB frame)' objcheck_stack "$dir/stack.o"
	expect fail 'relocations(gotrefs)' objcheck_relocations "$dir/gotrefs.o"
	expect pass 'gotrelax(gotrefs)' objcheck_relax "$dir/gotrefs.o"
	expect pass 'relocations(gotrefs relaxed)' objcheck_relocations "$dir/gotrefs.o"
	expect pass 'instructions(gotrefs relaxed)' objcheck_instructions "$dir/gotrefs.o"
	expect pass 'calls(gotrefs relaxed)' objcheck_direct_calls "$dir/gotrefs.o" memcpy memset
	expect fail 'gotrelax(add)' objcheck_relax "$dir/gotadd.o"
	expect fail 'gotrelax(other symbol)' objcheck_relax "$dir/gotother.o"
	unset -f expect
	return "$wrong"
}
