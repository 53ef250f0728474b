"""An ELF object as read for its machine code. It gives its symbols at link-time addresses, its
segments and sections, its PLT stubs and GOT slots by name, and a function's code read from it, and
turns a runtime address back into a link-time one."""

from __future__ import annotations

import bisect
import functools
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from perflab.records.errors import PerflabError
from perflab.tool_drivers.process_maps import MappedRegion


class CodeLookupError(PerflabError):
    """A function's code cannot be found or read from the object that should hold it."""


class ElfSymbol(NamedTuple):
    """A tuple rather than a frozen dataclass: libtorch_cpu.so has 500k of them, built in a
    fifth of the time."""

    name: str  # as in the symbol table (mangled)
    demangled: str
    address: int  # link-time virtual address
    size: int
    is_function: bool
    is_global: bool

    def contains(self, address: int) -> bool:
        return self.address <= address < self.address + max(self.size, 1)


@dataclass(frozen=True)
class LoadSegment:
    """One PT_LOAD program header: where the segment is mapped, where its bytes lie in the file, and
    whether it holds code."""

    vaddr: int
    offset: int
    filesz: int
    executable: bool


@dataclass(frozen=True)
class SectionSpan:
    """One section's name and its address range once loaded."""

    name: str
    address: int
    size: int


@dataclass(frozen=True)
class ElfObject:
    """The symbols and layout of one ELF file; code bytes are read on demand."""

    path: str
    position_independent: bool  # ET_DYN: PIE executable or shared object, loaded with a bias
    segments: tuple[LoadSegment, ...]
    sections: tuple[SectionSpan, ...]
    symbols: tuple[ElfSymbol, ...]  # sorted by address, functions and data
    plt: Mapping[int, str]  # PLT stub address -> imported symbol name
    got: Mapping[int, str]  # GOT slot address -> symbol name (for call [rip + slot])
    # where the full symbol table came from: the object itself, its separate debug file
    # (build-id or .gnu_debuglink), or None when only exported (.dynsym) names are known
    symbols_from: str | None = None
    # what everything derived from this object alone is cached under (its identity, its debug
    # file's and the demangler's; see perflab.store.analysis_cache); None: not cacheable
    analysis_key: str | None = field(default=None, compare=False)

    @functools.cached_property
    def _starts(self) -> list[int]:
        return [symbol.address for symbol in self.symbols]

    def functions(self) -> list[ElfSymbol]:
        """The function symbols with a size (computed once: asked often of 500k symbols)."""
        return self._functions

    @functools.cached_property
    def _functions(self) -> list[ElfSymbol]:
        return [symbol for symbol in self.symbols if symbol.is_function and symbol.size > 0]

    def symbol_at(self, address: int) -> ElfSymbol | None:
        """The symbol covering `address`; among aliases, the global one with the shortest name."""
        index = bisect.bisect_right(self._starts, address)
        best: ElfSymbol | None = None
        for symbol in reversed(self.symbols[max(0, index - 8) : index]):
            if symbol.contains(address) and (
                best is None
                or (not best.is_global, len(best.name)) > (not symbol.is_global, len(symbol.name))
            ):
                best = symbol
        return best

    def section_at(self, address: int) -> SectionSpan | None:
        for section in self.sections:
            if section.address <= address < section.address + section.size:
                return section
        return None

    def name_for(self, address: int) -> str | None:
        """A stable name for an address: PLT import, symbol(+offset), or the section."""
        if address in self.plt:
            return f"{self.plt[address]}@plt"
        symbol = self.symbol_at(address)
        if symbol is not None:
            delta = address - symbol.address
            return symbol.demangled if delta == 0 else f"{symbol.demangled}+{delta:#x}"
        section = self.section_at(address)
        # no offset: constant-pool offsets shift with every unrelated change and would pollute diffs
        return section.name if section is not None else None

    @functools.cached_property
    def _by_name(self) -> tuple[list[str], list[ElfSymbol]]:
        ordered = sorted(self.functions(), key=lambda s: s.name)
        return [s.name for s in ordered], ordered

    def with_prefix(self, prefix: str) -> list[ElfSymbol]:
        """Functions whose symbol-table name starts with `prefix` (``foo.`` finds ``foo.cold``,
        ``foo.part.0``): a binary search, not a scan of 10^5 symbols."""
        names, ordered = self._by_name
        start = bisect.bisect_left(names, prefix)
        found = []
        for index in range(start, len(names)):
            if not names[index].startswith(prefix):
                break
            found.append(ordered[index])
        return found

    def find(self, name: str) -> list[ElfSymbol]:
        """Functions whose mangled or demangled name is exactly `name` (the symbol-table name
        by binary search; a demangled name by a scan)."""
        exact = [s for s in self.with_prefix(name) if s.name == name]
        return exact or [s for s in self.functions() if name == s.demangled]

    def search(self, pattern: re.Pattern[str]) -> list[ElfSymbol]:
        return [
            s for s in self.functions() if pattern.search(s.demangled) or pattern.search(s.name)
        ]

    def file_offset(self, address: int) -> int:
        for segment in self.segments:
            if segment.vaddr <= address < segment.vaddr + segment.filesz:
                return address - segment.vaddr + segment.offset
        raise CodeLookupError(
            f"address {address:#x} is not inside a loaded segment of {self.path}",
            hint="the symbol table and the file disagree; is the file stripped or being rebuilt?",
        )

    def read_code(self, symbol: ElfSymbol) -> bytes:
        offset = self.file_offset(symbol.address)
        try:
            with open(self.path, "rb") as elf:
                elf.seek(offset)
                code = elf.read(symbol.size)
        except OSError as error:
            raise CodeLookupError(f"cannot read {self.path}: {error}") from error
        if len(code) != symbol.size:
            raise CodeLookupError(f"{self.path} ends inside {symbol.demangled}")
        return code


def runtime_to_link_address(
    regions: Iterable[MappedRegion], obj: ElfObject, runtime_address: int
) -> int | None:
    """Undo the load bias: a runtime address in `obj`'s mapping -> its link-time address.

    Works through the file offset, so it is right for PIE executables, shared objects and
    non-PIE executables (bias 0) alike."""
    real = os.path.realpath(obj.path)
    for region in regions:
        if region.start <= runtime_address < region.end and os.path.realpath(region.path) == real:
            file_offset = runtime_address - region.start + region.offset
            for segment in obj.segments:
                if segment.offset <= file_offset < segment.offset + segment.filesz:
                    return file_offset - segment.offset + segment.vaddr
    return None
