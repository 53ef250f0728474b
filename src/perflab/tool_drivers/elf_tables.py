"""An ELF file's tables read into an `ElfObject`: its symbols (from a separate debug file where
the object is stripped), its segments and sections, its GOT slots and PLT stubs by name."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import capstone
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection
from elftools.elf.sections import SymbolTableSection

from perflab.tool_drivers.demangling import Demangler
from perflab.tool_drivers.elf_entries import ELF64_RELA, defined_symbols, name_at, name_offsets
from perflab.tool_drivers.elf_objects import (
    CodeLookupError,
    ElfObject,
    ElfSymbol,
    LoadSegment,
    SectionSpan,
)


def read_elf_file(path: str, demangler: Demangler) -> ElfObject:
    try:
        with open(path, "rb") as stream:
            return _read_elf(ELFFile(stream), path, demangler)
    except (OSError, ELFError) as error:
        raise CodeLookupError(
            f"cannot read {path} as an ELF file: {error}",
            hint="the asm lens reads native x86-64 ELF executables and shared libraries",
        ) from error


def _read_elf(elf: ELFFile, path: str, demangler: Demangler) -> ElfObject:
    if elf["e_machine"] != "EM_X86_64":
        raise CodeLookupError(f"{path} is {elf['e_machine']}, not x86-64")
    segments = tuple(
        LoadSegment(seg["p_vaddr"], seg["p_offset"], seg["p_filesz"], bool(seg["p_flags"] & 1))
        for seg in elf.iter_segments()
        if seg["p_type"] == "PT_LOAD"
    )
    sections = tuple(
        SectionSpan(section.name, section["sh_addr"], section["sh_size"])
        for section in elf.iter_sections()
        if section["sh_addr"] and section["sh_flags"] & 2  # SHF_ALLOC
    )
    symbols, symbols_from = _symbols(elf, path, demangler)
    got = _got_names(elf)
    plt = _plt_stubs(elf, got)
    return ElfObject(
        path=path,
        position_independent=elf["e_type"] == "ET_DYN",
        segments=segments,
        sections=sections,
        symbols=symbols,
        plt=plt,
        got={address: name for address, name in got.items()},
        symbols_from=symbols_from,
    )


def _symbols(
    elf: ELFFile, path: str, demangler: Demangler
) -> tuple[tuple[ElfSymbol, ...], str | None]:
    """The object's symbols, by address (the full table, from a separate debug file where the
    object is stripped, and the exported ones), and the file the full table came from (None:
    the exported names only)."""
    raw: dict[tuple[str, int], tuple[int, bool, bool]] = {}
    symbols_from: str | None = None
    if isinstance(elf.get_section_by_name(".symtab"), SymbolTableSection):
        symbols_from = path
        _add_symbols(elf, ".symtab", raw)
    else:
        debug_file = separate_debug_file(path, _build_id_of(elf), _debuglink_of(elf))
        if debug_file is not None:
            try:
                with open(debug_file, "rb") as stream:
                    _add_symbols(ELFFile(stream), ".symtab", raw)
                symbols_from = debug_file
            except (OSError, ELFError):
                symbols_from = None  # an unreadable debug file: the exported names only
    _add_symbols(elf, ".dynsym", raw)
    demangled = demangler.demangle(sorted({name for name, _ in raw}))
    symbols = sorted(
        (
            ElfSymbol(name, demangled.get(name, name), address, size, is_function, is_global)
            for (name, address), (size, is_function, is_global) in raw.items()
        ),
        key=lambda s: (s.address, s.name),
    )
    return tuple(symbols), symbols_from


def _add_symbols(elf: ELFFile, table_name: str, raw: dict[tuple[str, int], Any]) -> None:
    table = elf.get_section_by_name(table_name)
    if isinstance(table, SymbolTableSection):
        strings = elf.get_section(table["sh_link"]).data()
        # (name, address) -> (size, is_function, is_global); one loop, no generator between
        # (libtorch_cpu.so has half a million symbols)
        for name, kind, binding, value, size in defined_symbols(table.data(), strings, _KEPT_TYPES):
            raw.setdefault((name, value), (size, _KEPT_TYPES[kind], binding != _STB_LOCAL))


DEBUG_ROOT = "/usr/lib/debug"


def separate_debug_file(
    path: str, build_id: str | None, debuglink: str | None, root: str = DEBUG_ROOT
) -> str | None:
    """Where a stripped object's symbols live, searched as gdb and perf do: by build-id
    (``ROOT/.build-id/xx/rest.debug``, what Debian's ``-dbg``/``-dbgsym`` packages install),
    then by ``.gnu_debuglink`` name next to the object, in its ``.debug/`` directory and under
    ROOT with the object's directory."""
    candidates = []
    if build_id and len(build_id) > 2:
        candidates.append(os.path.join(root, ".build-id", build_id[:2], build_id[2:] + ".debug"))
    if debuglink:
        directory = os.path.dirname(os.path.realpath(path))
        candidates += [
            os.path.join(directory, debuglink),
            os.path.join(directory, ".debug", debuglink),
            os.path.join(root + directory, debuglink),
        ]
    real = os.path.realpath(path)
    for candidate in candidates:
        if os.path.isfile(candidate) and os.path.realpath(candidate) != real:
            return candidate
    return None


def _build_id_of(elf: ELFFile) -> str | None:
    for section in elf.iter_sections():
        if section["sh_type"] != "SHT_NOTE":
            continue
        for note in section.iter_notes():  # type: ignore[attr-defined]
            if note["n_type"] == "NT_GNU_BUILD_ID":
                return str(note["n_desc"])
    return None


def _debuglink_of(elf: ELFFile) -> str | None:
    section = elf.get_section_by_name(".gnu_debuglink")
    if section is None:
        return None
    data = section.data()
    name = data[: data.find(b"\0")].decode("utf-8", "replace")
    return name or None


_KEPT_TYPES = {1: False, 2: True, 10: True}  # STT_OBJECT, STT_FUNC, STT_GNU_IFUNC -> is code
_STB_LOCAL = 0  # ELF's symbol binding (elf.h) of a symbol not visible outside its object


def _got_names(elf: ELFFile) -> dict[int, str]:
    """GOT slot -> symbol, from the dynamic relocations (JUMP_SLOT and GLOB_DAT)."""
    names: dict[int, str] = {}
    for section in elf.iter_sections():
        if not isinstance(section, RelocationSection) or section["sh_link"] == 0:
            continue
        if not section.is_RELA():
            continue  # x86-64 uses RELA only
        symtab = elf.get_section(section["sh_link"])
        if not isinstance(symtab, SymbolTableSection):
            continue
        strings = elf.get_section(symtab["sh_link"]).data()
        offsets = name_offsets(symtab.data())
        # struct again: libtorch_cpu.so has 360k relocations, mostly RELATIVE (no symbol)
        for offset, info, _ in ELF64_RELA.iter_unpack(section.data()):
            index = info >> 32
            if index and index < len(offsets) and offsets[index]:
                names[offset] = name_at(strings, offsets[index])
    return names


_PLT_SECTIONS = (".plt", ".plt.sec", ".plt.got")


def _plt_stubs(elf: ELFFile, got: Mapping[int, str]) -> dict[int, str]:
    """PLT stub address -> name: each stub jumps through a GOT slot whose relocation names it.

    Reading the jumps instead of assuming a stub size handles .plt (16-byte stubs), .plt.sec
    (endbr64 + bnd jmp) and .plt.got (8 bytes without IBT, 16 with) alike: a stub starts at its
    jump, or at the endbr64 just before it."""
    disassembler = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    disassembler.detail = True
    stubs: dict[int, str] = {}
    for section_name in _PLT_SECTIONS:
        section = elf.get_section_by_name(section_name)
        if section is None or section["sh_type"] == "SHT_NOBITS":
            continue
        previous = None
        for insn in disassembler.disasm(section.data(), section["sh_addr"]):
            slot = _rip_jump_slot(insn)
            if slot is not None and slot in got:
                start = (
                    previous.address
                    if previous is not None and previous.mnemonic == "endbr64"
                    else insn.address
                )
                stubs.setdefault(start, got[slot])
            previous = insn
    return stubs


def _rip_jump_slot(insn: Any) -> int | None:
    """The memory slot of `jmp qword ptr [rip + X]` (also `bnd jmp`, `notrack jmp`)."""
    if not insn.mnemonic.endswith("jmp"):
        return None
    for operand in insn.operands:
        if operand.type == capstone.x86.X86_OP_MEM and operand.mem.base == capstone.x86.X86_REG_RIP:
            return int(insn.address + insn.size + operand.mem.disp)
    return None
