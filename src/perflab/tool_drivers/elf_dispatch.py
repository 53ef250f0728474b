"""Which functions an object's IFUNC resolvers choose between, read from its ELF file: evidence
that two functions are versions of one, whatever they are called.

An IFUNC symbol (gcc's ``target_clones``, ``__attribute__((ifunc))``, glibc's string functions)
is what callers call; its address is its resolver, which the dynamic linker runs once to pick
the function the calls reach. The resolver's code takes the address of each candidate (``lea
dot.avx2(%rip)``, a load from a GOT slot the dynamic linker fills with it, or an immediate in
code that is not position-independent): those are its targets. Two functions of two builds that
are targets of an IFUNC of the same name are the same call site's choice (a dispatch), not a
renamed callee. Names are never read for this.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import capstone
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from perflab.tool_drivers.elf_entries import (
    ELF64_RELA,
    ELF64_SYM,
    ST_INFO_OFFSET,
    defined_symbols,
    name_at,
    name_offsets,
)

_R_X86_64_64, _R_X86_64_GLOB_DAT, _R_X86_64_RELATIVE = 1, 6, 8
# ELF's symbol types (elf.h): functions, and IFUNCs whose resolver picks the implementation
_STT_FUNC = 2
_STT_GNU_IFUNC = 10
_CODE_TYPES = frozenset((_STT_FUNC, _STT_GNU_IFUNC))
_LOW_NIBBLE = bytes(byte & 0xF for byte in range(256))  # st_info -> the symbol's type
_IFUNC_TYPE = bytes([_STT_GNU_IFUNC])
# a resolver without a size in the symbol table: read this much of it
_UNSIZED_RESOLVER_BYTES = 256


@dataclass(frozen=True)
class Ifunc:
    """One IFUNC symbol of an object: its resolver and the functions the resolver can return."""

    name: str  # the symbol callers call (`dot`)
    resolver: str  # the function at the IFUNC's address (`dot.resolver`)
    targets: tuple[str, ...]  # functions whose address the resolver's code takes, sorted


@dataclass(frozen=True, kw_only=True)
class SharedResolver:
    """Two functions, each in its own object, that are targets of an IFUNC of the same name:
    one call site whose resolver picked another version."""

    ifunc: str
    old: str
    new: str
    old_object: str
    new_object: str
    old_resolver: Ifunc
    new_resolver: Ifunc

    def evidence(self) -> str:
        def side(name: str, obj: str, found: Ifunc) -> str:
            others = [t for t in found.targets if t != name]
            among = f" (or {', '.join(others)})" if others else ""
            return f"in {obj} its resolver {found.resolver} returns {name}{among}"

        return (
            f"elf: {self.ifunc} is an IFUNC in both objects: "
            f"{side(self.old, self.old_object, self.old_resolver)}; "
            f"{side(self.new, self.new_object, self.new_resolver)}"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "ifunc": self.ifunc,
            "from_resolver": self.old_resolver.resolver,
            "to_resolver": self.new_resolver.resolver,
            "from_targets": list(self.old_resolver.targets),
            "to_targets": list(self.new_resolver.targets),
        }


def shared_resolver(
    old: str,
    old_object: str,
    old_ifuncs: Sequence[Ifunc],
    new: str,
    new_object: str,
    new_ifuncs: Sequence[Ifunc],
) -> SharedResolver | None:
    """The IFUNC of one name whose resolver returns `old` in the baseline's object and `new` in
    the variant's, or None (pure)."""
    for before in old_ifuncs:
        if old not in before.targets:
            continue
        for after in new_ifuncs:
            if after.name == before.name and new in after.targets:
                return SharedResolver(
                    ifunc=before.name,
                    old=old,
                    new=new,
                    old_object=old_object,
                    new_object=new_object,
                    old_resolver=before,
                    new_resolver=after,
                )
    return None


def read_ifuncs(path: str) -> tuple[Ifunc, ...]:
    """Every IFUNC of an x86-64 ELF file, with its resolver and targets; () for a file that is
    gone or is not such a file. Cached by path, size and modification time."""
    try:
        stat = os.stat(path)
    except OSError:
        return ()
    return _read_ifuncs(path, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _read_ifuncs(path: str, size: int, mtime_ns: int) -> tuple[Ifunc, ...]:
    del size, mtime_ns  # the cache key only
    try:
        with open(path, "rb") as handle:
            elf = ELFFile(handle)
            if elf.get_machine_arch() != "x64":
                return ()
            return _ifuncs_of(elf)
    except (OSError, ELFError):
        return ()


def _ifuncs_of(elf: ELFFile) -> tuple[Ifunc, ...]:
    if not _has_ifunc(elf):
        return ()  # most objects: their symbols are not decoded (libtorch_cpu.so has 500k)
    functions: dict[int, list[tuple[str, int]]] = {}  # address -> (name, size)
    ifuncs: dict[str, int] = {}
    for name, kind, value, size in _symbols(elf):
        if kind == _STT_GNU_IFUNC:
            ifuncs.setdefault(name, value)
        elif kind == _STT_FUNC and (name, size) not in functions.get(value, []):
            functions.setdefault(value, []).append((name, size))
    by_name = {name: address for address, names in functions.items() for name, _ in names}
    slots: dict[int, int] | None = None  # read only when a resolver loads from memory
    found = []
    for name, address in sorted(ifuncs.items()):
        at = functions.get(address)
        if not at:
            continue
        resolver, size = at[0]
        taken, loaded = _addresses_taken(_code_at(elf, address, size or _UNSIZED_RESOLVER_BYTES))
        if loaded:
            slots = _slot_contents(elf, by_name) if slots is None else slots
            taken |= {slots[slot] for slot in loaded if slot in slots}
        targets = {n for a in taken if a != address for n, _ in functions.get(a, [])}
        found.append(Ifunc(name, resolver, tuple(sorted(targets - {name}))))
    return tuple(found)


def _symbol_tables(elf: ELFFile) -> Iterator[Any]:
    for table_name in (".symtab", ".dynsym"):
        table = elf.get_section_by_name(table_name)
        if table is not None and table["sh_type"] != "SHT_NOBITS":
            yield table


def _has_ifunc(elf: ELFFile) -> bool:
    """Whether any symbol's type is IFUNC: the low nibble of each entry's st_info byte, read
    without decoding the entries."""
    return any(
        _IFUNC_TYPE in table.data()[ST_INFO_OFFSET :: ELF64_SYM.size].translate(_LOW_NIBBLE)
        for table in _symbol_tables(elf)
    )


def _symbols(elf: ELFFile) -> Iterator[tuple[str, int, int, int]]:
    """(name, type, address, size) of the defined function and IFUNC symbols of .symtab and
    .dynsym."""
    for table in _symbol_tables(elf):
        strings = elf.get_section(table["sh_link"]).data()
        for name, kind, _, value, size in defined_symbols(table.data(), strings, _CODE_TYPES):
            yield name, kind, value, size


def _slot_contents(elf: ELFFile, functions: dict[str, int]) -> dict[int, int]:
    """Memory slot -> the function address the dynamic linker writes there (GOT entries: a
    symbol's address, or the load base plus an offset)."""
    contents: dict[int, int] = {}
    for section in elf.iter_sections():
        if not isinstance(section, RelocationSection) or not section.is_RELA():
            continue
        names: list[str] = []
        if section["sh_link"]:
            table = elf.get_section(section["sh_link"])
            strings = elf.get_section(table["sh_link"]).data()
            names = [name_at(strings, offset) for offset in name_offsets(table.data())]
        for offset, info, addend in ELF64_RELA.iter_unpack(section.data()):
            kind, index = info & 0xFFFFFFFF, info >> 32
            if kind == _R_X86_64_RELATIVE:
                contents[offset] = addend
            elif kind in (_R_X86_64_64, _R_X86_64_GLOB_DAT) and 0 < index < len(names):
                address = functions.get(names[index])
                if address is not None:
                    contents[offset] = address + (addend if kind == _R_X86_64_64 else 0)
    return contents


def _code_at(elf: ELFFile, address: int, size: int) -> tuple[bytes, int]:
    for section in elf.iter_sections():
        start = section["sh_addr"]
        if section["sh_type"] == "SHT_NOBITS" or not start <= address < start + section["sh_size"]:
            continue
        data = section.data()
        return bytes(data[address - start : address - start + size]), address
    return b"", address


def _addresses_taken(code: tuple[bytes, int]) -> tuple[set[int], set[int]]:
    """What a piece of x86-64 code computes as addresses: RIP-relative `lea` operands and
    immediates outside jumps and calls; and the memory slots it loads from RIP-relative."""
    disassembler = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    disassembler.detail = True
    taken: set[int] = set()
    loaded: set[int] = set()
    for insn in disassembler.disasm(*code):
        if insn.group(capstone.CS_GRP_JUMP) or insn.group(capstone.CS_GRP_CALL):
            continue
        for operand in insn.operands:
            if operand.type == capstone.x86.X86_OP_IMM:
                taken.add(int(operand.imm))
            elif (
                operand.type == capstone.x86.X86_OP_MEM
                and operand.mem.base == capstone.x86.X86_REG_RIP
            ):
                place = int(insn.address + insn.size + operand.mem.disp)
                (taken if insn.mnemonic == "lea" else loaded).add(place)
    return taken, loaded
