#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR GPL-2.0-only
"""Rewrite GOT-relative references in a relocatable x86_64 object as direct
ones, the way a linker relaxes them in a final link (x86-64 psABI, "Optimize
GOTPCRELX Relocations"), so the Linux module loader can apply them.

Why: Rust's prebuilt standard library for x86_64-unknown-linux-gnu is built
without PLT, which sets LLVM's "RtLibUseGOT" module flag. Fat LTO merges that
flag into the module, so the calls LLVM itself emits to memcpy, memmove and
memset come out as `call *memcpy@GOTPCREL(%rip)`. `ld -r` does not relax, and
the kernel's module loader rejects R_X86_64_GOTPCREL* ("Unknown rela
relocation"). Every module and kernel symbol is within +-2 GiB of module code,
so the direct forms are always valid:

    ff 15  call *sym@GOTPCREL(%rip)   ->  67 e8  addr32 call sym    (PLT32)
    ff 25  jmp  *sym@GOTPCREL(%rip)   ->  e9 .. 90  jmp sym; nop    (PLT32)
    REX 8b mov sym@GOTPCREL(%rip),%r  ->  REX 8d  lea sym(%rip),%r  (PC32)

Only undefined symbols named with --allow are rewritten; any other GOT
reference, or an instruction form not listed above, is an error, and the
object is left unchanged.

Usage: gotrelax.py --allow memcpy --allow memset ... OBJECT
"""

import argparse
import struct
import sys

SHT_RELA = 4
R_X86_64_PC32 = 2
R_X86_64_PLT32 = 4
R_X86_64_GOTPCREL = 9
R_X86_64_GOTPCRELX = 41
R_X86_64_REX_GOTPCRELX = 42
GOT_TYPES = {R_X86_64_GOTPCREL, R_X86_64_GOTPCRELX, R_X86_64_REX_GOTPCRELX}


def sections(data):
    """Section headers as dicts, from an ELF64 little-endian object."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not an ELF64 little-endian object")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    result = []
    for i in range(shnum):
        fields = struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
        keys = ("name", "type", "flags", "addr", "offset", "size", "link", "info",
                "addralign", "entsize")
        result.append(dict(zip(keys, fields)))
    return result


def symbol(data, secs, symtab_index, sym_index):
    """(name, section index) of a symbol."""
    symtab = secs[symtab_index]
    strtab = secs[symtab["link"]]
    st_name, _info, _other, shndx = struct.unpack_from(
        "<IBBH", data, symtab["offset"] + sym_index * 24)
    start = strtab["offset"] + st_name
    end = data.index(b"\0", start)
    return data[start:end].decode(), shndx


def relax(data, allowed):
    """Rewrites `data` in place; returns the number of references relaxed."""
    secs = sections(data)
    count = 0
    for rela in secs:
        if rela["type"] != SHT_RELA:
            continue
        target = secs[rela["info"]]
        for n in range(rela["size"] // 24):
            at = rela["offset"] + n * 24
            r_offset, r_info, r_addend = struct.unpack_from("<QQq", data, at)
            r_type = r_info & 0xFFFFFFFF
            if r_type not in GOT_TYPES:
                continue
            name, shndx = symbol(data, secs, rela["link"], r_info >> 32)
            where = f"{name} at {target['offset']:#x}+{r_offset:#x}"
            if shndx != 0 or name not in allowed:
                raise ValueError(f"GOT reference to {where}: not an allowed undefined symbol")
            if r_offset < 2 or r_offset + 4 > target["size"]:
                raise ValueError(f"GOT reference to {where}: no room for an instruction")
            field = target["offset"] + r_offset
            op, modrm = data[field - 2], data[field - 1]
            if (op, modrm) == (0xFF, 0x15):
                data[field - 2:field] = b"\x67\xe8"
                new_type = R_X86_64_PLT32
            elif (op, modrm) == (0xFF, 0x25):
                data[field - 2:field + 4] = b"\xe9\0\0\0\0\x90"
                r_offset -= 1
                new_type = R_X86_64_PLT32
            elif (op == 0x8B and modrm & 0xC7 == 0x05 and r_offset >= 3
                  and data[field - 3] & 0xF8 == 0x48):
                data[field - 2] = 0x8D
                new_type = R_X86_64_PC32
            else:
                raise ValueError(
                    f"GOT reference to {where}: instruction {bytes(data[field - 3:field]).hex()} "
                    "is not a call, jmp or 64-bit mov")
            struct.pack_into("<QQq", data, at, r_offset,
                             (r_info & ~0xFFFFFFFF) | new_type, r_addend)
            count += 1
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--allow", action="append", default=[], metavar="SYMBOL",
                        help="undefined symbol whose GOT references may be relaxed")
    parser.add_argument("object")
    args = parser.parse_args()
    with open(args.object, "rb") as f:
        data = bytearray(f.read())
    try:
        count = relax(data, set(args.allow))
    except (ValueError, IndexError, struct.error) as e:
        print(f"gotrelax: {args.object}: {e}", file=sys.stderr)
        return 1
    with open(args.object, "wb") as f:
        f.write(data)
    print(count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
