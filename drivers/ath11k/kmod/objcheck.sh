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
# The string functions compiler_builtins defines (weakly) for itself: the kernel's
# must be the ones called (objcheck_kernel_mem; build.sh strips them).
OBJCHECK_OWN_MEM_SYMBOLS=("${OBJCHECK_MEM_SYMBOLS[@]}" strlen)
# Largest stack frame allowed, in bytes (CONFIG_FRAME_WARN on x86_64).
OBJCHECK_MAX_FRAME=${OBJCHECK_MAX_FRAME:-2048}
# The kernel's branch mitigations the object must carry (y or n each), set by
# build.sh from the kernel's configuration: CONFIG_RETPOLINE (indirect calls
# and jumps only through __x86_indirect_thunk_*), CONFIG_RETHUNK (returns only
# through __x86_return_thunk) and CONFIG_X86_KERNEL_IBT (endbr64 landing pads).
OBJCHECK_RETPOLINE=${OBJCHECK_RETPOLINE:-n}
OBJCHECK_RETHUNK=${OBJCHECK_RETHUNK:-n}
OBJCHECK_IBT=${OBJCHECK_IBT:-n}

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

# Undefined symbols: only the shim's functions and the kernel's thunks (given
# as arguments) and the mem* functions. Anything else would not resolve in
# the kernel (compiler helpers such as __udivti3 come from compiler_builtins,
# built into the object; the check proves itself on a call to one).
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

# The kernel's mem* are the ones called: the object defines none of its own
# (compiler_builtins brings weak ones, which build.sh strips).
objcheck_kernel_mem() {
	local obj=$1 bad
	local names
	names=$(IFS='|' && printf '%s' "${OBJCHECK_OWN_MEM_SYMBOLS[*]}")
	bad=$(nm --defined-only "$obj" | awk '{ print $NF }' | grep -xE "$names" || true)
	if [[ -n $bad ]]; then
		printf 'objcheck: %s: defines its own %s instead of calling the kernel'"'"'s\n' "$obj" "$(tr '\n' ' ' <<<"$bad")" >&2
		return 1
	fi
}

# The branch mitigations the kernel is built with (OBJCHECK_RETPOLINE,
# OBJCHECK_RETHUNK, OBJCHECK_IBT, or y/n as $2 $3 $4): with retpolines no
# indirect call or jump (`call *%reg` is a Spectre v2 gadget the kernel cannot
# patch), with return thunks no `ret` (the kernel's untraining or safe-return
# thunk must run on every return), with IBT an endbr64 at every global
# function (an indirect call to one without it faults on an IBT kernel) and
# no `notrack` branch (the kernel runs with NOTRACK_EN=0). Under IBT the
# address-taken local functions are checked by objtool --ibt, which Kbuild
# runs on the linked module.
objcheck_mitigations() {
	local obj=$1 retpoline=${2:-$OBJCHECK_RETPOLINE} rethunk=${3:-$OBJCHECK_RETHUNK} ibt=${4:-$OBJCHECK_IBT} bad globals
	globals=$(nm --defined-only -g "$obj" | awk '$2 == "T" { printf "%s ", $3 }')
	bad=$(objdump -d --no-show-raw-insn "$obj" | awk -F'\t' -v retpoline="$retpoline" -v rethunk="$rethunk" \
		-v ibt="$ibt" -v globals=" $globals" '
		/^[0-9a-f]+ <.*>:$/ {
			name = $0
			sub(/^[0-9a-f]+ </, "", name)
			sub(/>:$/, "", name)
			first = index(globals, " " name " ") > 0
			next
		}
		$1 ~ /^ *[0-9a-f]+:$/ && NF >= 2 {
			n = split($2, w, / +/)
			i = 1
			notrack = 0
			while (i < n && w[i] ~ /^(cs|ds|es|ss|notrack|bnd|rex.*|data16|addr32|rep|repz|repe|repnz|repne|lock)$/) {
				if (w[i] == "notrack")
					notrack = 1
				i++
			}
			m = w[i]
			if (first && ibt == "y" && m != "endbr64")
				print "  no endbr64 at global function " name ": " $0
			first = 0
			if (retpoline == "y" && m ~ /^l?(call|jmp)[wlq]?$/ && w[i + 1] ~ /^\*/)
				print "  indirect branch in " name ": " $0
			if (rethunk == "y" && m ~ /^(l?ret|iret)[wlq]?$/)
				print "  bare return in " name ": " $0
			if (ibt == "y" && notrack)
				print "  notrack branch in " name ": " $0
		}')
	if [[ -n $bad ]]; then
		printf 'objcheck: %s: branches the kernel'"'"'s mitigations (retpoline %s, rethunk %s, IBT %s) forbid, %s, first ones:\n%s\n' \
			"$obj" "$retpoline" "$rethunk" "$ibt" "$(wc -l <<<"$bad")" "$(head -n 20 <<<"$bad")" >&2
		return 1
	fi
}

# Runs the kernel's objtool ($1, then its arguments, the object last), as
# Kbuild runs it on every C object of a module: it validates the code's stack
# and control flow and writes the ORC unwind tables and the lists of thunk
# call and return sites that the module loader patches. Any warning fails,
# since a function objtool could not follow gets wrong or no unwind data.
objcheck_objtool() {
	local out
	if ! out=$("$@" 2>&1) || grep -qiE 'warning|error' <<<"$out"; then
		printf 'objcheck: objtool %s:\n%s\n' "${*: -1}" "$(head -n 20 <<<"$out")" >&2
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
	objcheck_kernel_mem "$obj" || failed=1
	objcheck_mitigations "$obj" || failed=1
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
		[hardened]='endbr64
			call __x86_indirect_thunk_r11
			jmp __x86_return_thunk'
		[indcall]='endbr64
			call *%r11
			jmp __x86_return_thunk'
		[indjmp]='endbr64
			notrack jmp *%rax'
		[bareret]='endbr64
			ret'
		[repret]='endbr64
			repz ret'
		[a32call]='endbr64
			addr32 call *%rax
			jmp __x86_return_thunk'
		[noendbr]='call __x86_indirect_thunk_r11
			jmp __x86_return_thunk'
		[memdef]='jmp __x86_return_thunk
			.weak memcpy
			memcpy: jmp __x86_return_thunk'
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
	expect pass 'kernel mem(clean)' objcheck_kernel_mem "$dir/clean.o"
	expect fail 'kernel mem(weak memcpy defined)' objcheck_kernel_mem "$dir/memdef.o"
	expect pass 'mitigations(hardened)' objcheck_mitigations "$dir/hardened.o" y y y
	expect fail 'mitigations(call *%r11)' objcheck_mitigations "$dir/indcall.o" y n n
	expect fail 'mitigations(notrack jmp *%rax)' objcheck_mitigations "$dir/indjmp.o" y n n
	expect fail 'mitigations(notrack under IBT)' objcheck_mitigations "$dir/indjmp.o" n n y
	expect fail 'mitigations(addr32 call *%rax)' objcheck_mitigations "$dir/a32call.o" y n n
	expect fail 'mitigations(repz ret)' objcheck_mitigations "$dir/repret.o" n y n
	expect fail 'mitigations(ret)' objcheck_mitigations "$dir/bareret.o" n y n
	expect pass 'mitigations(ret, no return thunks)' objcheck_mitigations "$dir/bareret.o" n n n
	expect fail 'mitigations(no endbr64)' objcheck_mitigations "$dir/noendbr.o" n n y
	unset -f expect
	return "$wrong"
}

# Proves objcheck_objtool on two functions, run with the arguments given
# (objtool and its options): a clean one must pass, and one that ends in a
# call to a function outside the object (as the panic handler would without
# its ud2) must fail.
objcheck_prove_objtool() {
	local dir=$1 name wrong=0
	shift
	mkdir -p "$dir"
	# shellcheck disable=SC2016 # assembly, not shell: $ is literal
	local -A source=(
		[objtool-clean]='push %rbp
			mov %rsp, %rbp
			call memcpy
			pop %rbp
			jmp __x86_return_thunk'
		[objtool-falls-off]='push %rbp
			mov %rsp, %rbp
			call airtime_rust_panic'
	)
	for name in "${!source[@]}"; do
		printf '\t.section .text.good, "ax"\n\t.globl good\n\t.type good, @function\ngood:\n\t%s\n\t.size good, .-good\n' \
			"${source[$name]}" >"$dir/$name.s"
		as --64 -o "$dir/$name.o" "$dir/$name.s"
	done
	if ! objcheck_objtool "$@" "$dir/objtool-clean.o" 2>/dev/null; then
		printf 'objcheck: self-check: objtool(clean) should pass but did not\n' >&2
		objcheck_objtool "$@" "$dir/objtool-clean.o" || true
		wrong=1
	fi
	if objcheck_objtool "$@" "$dir/objtool-falls-off.o" 2>/dev/null; then
		printf 'objcheck: self-check: objtool(function running off its end) should fail but did not\n' >&2
		wrong=1
	fi
	return "$wrong"
}
