"""ELF64 symbol and relocation entries, decoded with struct rather than pyelftools' per-entry
objects, which cost too much per entry for a library of hundreds of thousands of symbols or
relocations (libtorch_cpu.so). x86-64 little-endian layouts (elf.h)."""

from __future__ import annotations

import struct
from collections.abc import Collection, Iterator

ELF64_SYM = struct.Struct("<IBBHQQ")  # st_name, st_info, st_other, st_shndx, st_value, st_size
# r_offset, r_info (the symbol's index above bit 32, the relocation's type below), r_addend;
# read with iter_unpack where it is read, no generator between (libtorch_cpu.so has 360k)
ELF64_RELA = struct.Struct("<QQq")
ST_INFO_OFFSET = 4  # of st_info in an Elf64_Sym entry


# one defined, named symbol: (name, type, binding, address, size), its type the low nibble of
# st_info (STT_FUNC ...) and its binding the high one (STB_LOCAL ...); a tuple, not a record,
# since a library yields hundreds of thousands
SymbolEntry = tuple[str, int, int, int, int]


def name_at(strings: bytes, offset: int) -> str:
    """The NUL-terminated name at `offset` of a string table."""
    return strings[offset : strings.find(b"\0", offset)].decode("utf-8", "replace")


def defined_symbols(table: bytes, strings: bytes, kinds: Collection[int]) -> Iterator[SymbolEntry]:
    """The entries of symbol table `table` (names in `strings`) whose type is one of `kinds`,
    defined (st_shndx not SHN_UNDEF) and named; only those names are decoded."""
    for name_offset, info, _, shndx, value, size in ELF64_SYM.iter_unpack(table):
        if shndx == 0 or name_offset == 0 or info & 0xF not in kinds:
            continue
        yield name_at(strings, name_offset), info & 0xF, info >> 4, value, size


def name_offsets(table: bytes) -> list[int]:
    """Each entry's st_name, by symbol index (what a relocation's r_info names)."""
    return [entry[0] for entry in ELF64_SYM.iter_unpack(table)]
