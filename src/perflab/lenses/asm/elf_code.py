"""Where a function's machine code really lives for one variant, and how to read it.

A variant's process decides which file holds a function: its executable, or a shared library found
through *its* environment (another venv's ``libtorch_cpu.so``). So the object paths come from the
live process's mappings (``/proc/PID/maps``) or from the dso paths a profiler saw, never from a
guess at install locations. Symbols are read from ``.symtab`` and ``.dynsym`` with pyelftools, and
addresses are kept as link-time virtual addresses (``st_value``), which are the same in every run
of a PIE or shared object; :func:`runtime_to_link_address` removes the load bias.
"""

from __future__ import annotations

import array
import base64
import bisect
import functools
import os
import re
import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, Protocol

import capstone
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection
from elftools.elf.sections import SymbolTableSection

from perflab.machine.proc import LaunchSpec, ProcessRunner, which
from perflab.records.errors import PerflabError
from perflab.tools.analysis_cache import AnalysisCache
from perflab.tools.debuginfo import elf_sections, file_identity, tool_identity
from perflab.tools.process_maps import MappedRegion


class CodeLookupError(PerflabError):
    """A function's code cannot be found or read from the object that should hold it."""


# ---------------------------------------------------------------------------------------------
# demangling


class Demangler(Protocol):
    def demangle(self, names: Sequence[str]) -> dict[str, str]:
        """Demangled form of each name (names that are not mangled map to themselves)."""
        ...


class IdentityDemangler:
    cache_tag = "identity"  # what the analysis cache keys demangled names by

    def demangle(self, names: Sequence[str]) -> dict[str, str]:
        return {name: name for name in names}


PARALLEL_DEMANGLE_NAMES = 20000  # below this, one c++filt is quicker than starting several


class CxxFiltDemangler:
    """c++filt through the process seam, all names in one batch (one process per object file)."""

    def __init__(self, runner: ProcessRunner, tool: str = "c++filt", *, jobs: int = 1) -> None:
        """`jobs`: how many c++filt processes share a large batch (analysis after measuring
        may use every CPU; a large library's names take c++filt seconds)."""
        self.runner = runner
        self.tool = tool
        self.jobs = max(1, jobs)

    @property
    def cache_tag(self) -> str:
        """The demangler's identity for the analysis cache: c++filt's own build-id."""
        return f"c++filt:{tool_identity(which(self.tool) or self.tool) or self.tool}"

    def demangle(self, names: Sequence[str]) -> dict[str, str]:
        out = {name: name for name in names}
        mangled = [name for name in names if name.startswith("_Z")]
        if not mangled:
            return out
        jobs = self.jobs if len(mangled) >= PARALLEL_DEMANGLE_NAMES else 1
        size = -(-len(mangled) // jobs)
        chunks = [mangled[start : start + size] for start in range(0, len(mangled), size)]
        if len(chunks) == 1:
            answers = [self._demangle(chunks[0])]
        else:
            with ThreadPoolExecutor(max_workers=len(chunks)) as pool:
                answers = list(pool.map(self._demangle, chunks))
        for chunk, answer in zip(chunks, answers, strict=True):
            if answer is not None:
                out.update(zip(chunk, answer, strict=True))
        return out

    def _demangle(self, mangled: Sequence[str]) -> list[str] | None:
        done = self.runner.run(LaunchSpec(argv=(self.tool,)), stdin_text="\n".join(mangled) + "\n")
        lines = done.stdout.splitlines()
        # c++filt answers line for line; anything else means it failed and names stay mangled
        return lines if done.ok and len(lines) == len(mangled) else None


def default_demangler(runner: ProcessRunner, *, jobs: int = 1) -> Demangler:
    return CxxFiltDemangler(runner, jobs=jobs) if which("c++filt") else IdentityDemangler()


# ---------------------------------------------------------------------------------------------
# ELF objects


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
    vaddr: int
    offset: int
    filesz: int
    executable: bool


@dataclass(frozen=True)
class SectionSpan:
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
    # file's and the demangler's; see perflab.tools.analysis_cache); None: not cacheable
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


def _file_key(path: str) -> tuple[str, int, int]:
    try:
        stat = os.stat(path)
    except OSError as error:
        raise CodeLookupError(
            f"cannot open {path}: {error}",
            hint="the object was mapped by the variant's process; was it deleted or rebuilt since?",
        ) from error
    return (os.path.realpath(path), stat.st_mtime_ns, stat.st_size)


def load_elf_object(
    path: str, demangler: Demangler, cache: AnalysisCache | None = None
) -> ElfObject:
    """Read an object's symbols (cached per file version in this process, and by the object's
    identity in the analysis `cache` across runs: libtorch_cpu.so has ~500k of them)."""
    key = _file_key(path)
    cached = _CACHE.get(key)
    if cached is None:
        cached = _CACHE[key] = _load(path, demangler, cache or AnalysisCache.disabled())
        while len(_CACHE) > _CACHE_SIZE:
            del _CACHE[next(iter(_CACHE))]
    return cached


_CACHE: dict[tuple[str, int, int], ElfObject] = {}
_CACHE_SIZE = 16
SYMBOLS_KIND = "elf-symbols-2"  # the analysis cache's entries of whole symbol tables


def _load(path: str, demangler: Demangler, cache: AnalysisCache) -> ElfObject:
    """From the analysis cache when this object (and its debug file, and the demangler) were
    read before; otherwise read, and stored for the next time."""
    analysis_key, debug_file = _analysis_key(path, demangler)
    if analysis_key is not None:
        stored = cache.get(SYMBOLS_KIND, [analysis_key])
        if stored is not None:
            try:
                return _object_from_json(stored, path, debug_file, analysis_key)
            except (KeyError, TypeError, ValueError, IndexError):
                cache.stats.ignored += 1  # a damaged entry: read the file and rewrite it
    obj = _read_elf_file(path, demangler)
    if analysis_key is None:
        return obj
    obj = replace(obj, analysis_key=analysis_key)
    if obj.symbols_from == debug_file or obj.symbols_from == path:
        cache.put(SYMBOLS_KIND, [analysis_key], _object_to_json(obj))
    return obj


def _analysis_key(path: str, demangler: Demangler) -> tuple[str | None, str | None]:
    """(The key of what this object's bytes decide, the separate debug file symbols would come
    from); the key is None when the object cannot be identified or the demangler has no tag."""
    tag = getattr(demangler, "cache_tag", None)
    identity = file_identity(path)
    sections = elf_sections(path)
    if not isinstance(tag, str) or identity is None or sections is None:
        return None, None
    debug_file = None
    if ".symtab" not in sections:
        build_id = identity.removeprefix("build-id:") if identity.startswith("build-id:") else None
        debug_file = separate_debug_file(path, build_id, _debuglink_at(path, sections))
    debug_identity = file_identity(debug_file) if debug_file else None
    return f"{identity}|debug={debug_identity}|demangler={tag}", debug_file


def _debuglink_at(path: str, sections: Mapping[str, Any]) -> str | None:
    section = sections.get(".gnu_debuglink")
    if section is None:
        return None
    try:
        with open(path, "rb") as stream:
            stream.seek(section.offset)
            data = stream.read(section.size)
    except OSError:
        return None
    name = data[: data.find(b"\0")].decode("utf-8", "replace")
    return name or None


def _object_to_json(obj: ElfObject) -> dict[str, Any]:
    """Columns rather than records, names as newline-separated text and numbers as base64
    arrays: parsing 500k JSON records took longer than reading the ELF file's tables."""
    return {
        "position_independent": obj.position_independent,
        "segments": [[s.vaddr, s.offset, s.filesz, s.executable] for s in obj.segments],
        "sections": [[s.name, s.address, s.size] for s in obj.sections],
        "count": len(obj.symbols),
        "names": "\n".join(s.name for s in obj.symbols),
        # an empty line: the demangled name is the name
        "demangled": "\n".join(s.demangled if s.demangled != s.name else "" for s in obj.symbols),
        "addresses": _pack("Q", [s.address for s in obj.symbols]),
        "sizes": _pack("Q", [s.size for s in obj.symbols]),
        "flags": _pack("B", [int(s.is_function) | int(s.is_global) << 1 for s in obj.symbols]),
        "plt": sorted(obj.plt.items()),
        "got": sorted(obj.got.items()),
        "symbols_from": (
            None
            if obj.symbols_from is None
            else "self"
            if obj.symbols_from == obj.path
            else "debug"
        ),
    }


def _pack(code: str, values: Sequence[int]) -> str:
    return base64.b64encode(array.array(code, values).tobytes()).decode("ascii")


def _unpack(code: str, text: str) -> array.array[int]:
    values = array.array(code)
    values.frombytes(base64.b64decode(text.encode("ascii"), validate=True))
    return values


def _object_from_json(
    data: Mapping[str, Any], path: str, debug_file: str | None, analysis_key: str
) -> ElfObject:
    count = int(data["count"])
    names = data["names"].split("\n") if count else []
    demangled = data["demangled"].split("\n") if count else []
    addresses, sizes = _unpack("Q", data["addresses"]), _unpack("Q", data["sizes"])
    flags = _unpack("B", data["flags"])
    if not count == len(names) == len(demangled) == len(addresses) == len(sizes) == len(flags):
        raise ValueError("the columns of a stored symbol table differ in length")
    symbols = tuple(
        map(
            ElfSymbol,
            names,
            [shown or name for name, shown in zip(names, demangled, strict=True)],
            addresses,
            sizes,
            [bool(flag & 1) for flag in flags],
            [bool(flag & 2) for flag in flags],
        )
    )
    source = data["symbols_from"]
    return ElfObject(
        path=path,
        position_independent=bool(data["position_independent"]),
        segments=tuple(
            LoadSegment(int(a), int(b), int(c), bool(d)) for a, b, c, d in data["segments"]
        ),
        sections=tuple(SectionSpan(str(n), int(a), int(z)) for n, a, z in data["sections"]),
        symbols=symbols,
        plt={int(address): str(name) for address, name in data["plt"]},
        got={int(address): str(name) for address, name in data["got"]},
        symbols_from=path if source == "self" else debug_file if source == "debug" else None,
        analysis_key=analysis_key,
    )


def _read_elf_file(path: str, demangler: Demangler) -> ElfObject:
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
        for entry in _symbol_entries(table.data(), strings):
            raw.setdefault(entry[0], entry[1])


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


_ELF64_SYM = struct.Struct("<IBBHQQ")  # st_name, st_info, st_other, st_shndx, st_value, st_size
_ELF64_RELA = struct.Struct("<QQq")  # r_offset, r_info, r_addend
_KEPT_TYPES = {1: False, 2: True, 10: True}  # STT_OBJECT, STT_FUNC, STT_GNU_IFUNC -> is code
_STB_LOCAL = 0


def _symbol_entries(
    table: bytes, strings: bytes
) -> Iterator[tuple[tuple[str, int], tuple[int, bool, bool]]]:
    """Defined function and data symbols as ((name, address), (size, is_function, is_global)).

    Decoded with struct rather than pyelftools' per-symbol objects, which cost too much per
    symbol for a library of hundreds of thousands (libtorch_cpu.so)."""
    for name_offset, info, _, shndx, value, size in _ELF64_SYM.iter_unpack(table):
        is_function = _KEPT_TYPES.get(info & 0xF)
        if is_function is None or shndx == 0 or name_offset == 0:  # 0: SHN_UNDEF / no name
            continue
        end = strings.find(b"\0", name_offset)
        name = strings[name_offset:end].decode("utf-8", "replace")
        yield (name, value), (size, is_function, info >> 4 != _STB_LOCAL)


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
        name_offsets = [entry[0] for entry in _ELF64_SYM.iter_unpack(symtab.data())]
        # struct again: libtorch_cpu.so has 360k relocations, mostly RELATIVE (no symbol)
        for offset, info, _ in _ELF64_RELA.iter_unpack(section.data()):
            index = info >> 32
            if index and index < len(name_offsets) and name_offsets[index]:
                start = name_offsets[index]
                names[offset] = strings[start : strings.find(b"\0", start)].decode(
                    "utf-8", "replace"
                )
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
