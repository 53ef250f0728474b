"""What debug info says about machine code: inline frames of executed addresses, object identity.

Every explanation lens needs the same two facts before it may claim anything:

- **which source functions an address belongs to**, innermost first: DWARF's inlined-subroutine
  records, read by ``llvm-symbolizer --inlining`` (or ``addr2line -i``). An address whose frames
  are ``(helper, kernel)`` executes ``helper``'s code inlined into ``kernel``; the outer frame's
  line is the call site that was inlined. This is the only evidence for "now inlined" / "now
  outlined" claims (arithmetic on per-function deltas both invents and misses them);
- **whether an object is the same in two variants**: the same build-id (or, without one, the same
  content hash) means byte-identical code, which can carry no inlining or code-change claim.

`symbolise` talks to a process through the runner seam; everything else here is pure or reads
one ELF file.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from perflab.machine.proc import LaunchSpec, ProcessRunner

if TYPE_CHECKING:
    from perflab.store.analysis_cache import AnalysisCache

# one llvm-symbolizer batch over a large object's debug info; only a hung one reaches this
_SYMBOLISE_TIMEOUT_S = 300.0


@dataclass(frozen=True, order=True)
class SourceFrame:
    """One level of an address's inline chain. For an outer frame, `line` is the line of the
    call whose callee was inlined there (the call site)."""

    function: str  # as the symboliser names it (demangled linkage name where DWARF has one)
    file: str = ""
    line: int = 0

    def location(self) -> str:
        if not self.file:
            return "?"
        return f"{os.path.basename(self.file)}:{self.line}"

    def to_json(self) -> list[object]:
        return [self.function, self.file, self.line]

    @classmethod
    def from_json(cls, value: object) -> SourceFrame:
        """Stored frames: ``[function, file, line]``, or a bare function name (older runs)."""
        if isinstance(value, str):
            return cls(value)
        if isinstance(value, list) and value:
            file = str(value[1]) if len(value) > 1 else ""
            line = int(value[2]) if len(value) > 2 and str(value[2]).isdigit() else 0
            return cls(str(value[0]), file, line)
        raise ValueError(f"not a stored source frame: {value!r}")


AddressFrames = Mapping[int, tuple[SourceFrame, ...]]
"""address (in the ELF file) -> source frames, innermost first."""


@dataclass(frozen=True, order=True)
class InlineSite:
    """`callee`'s code inlined into `caller` at the call on `file:line`; `function` is the
    out-of-line function that holds the code (the outermost frame)."""

    callee: str
    caller: str
    function: str
    file: str
    line: int

    def location(self) -> str:
        return SourceFrame(self.caller, self.file, self.line).location()


def inline_sites(frames: AddressFrames) -> dict[InlineSite, tuple[int, ...]]:
    """Every (callee inlined into caller) pair the addresses show, with the addresses that execute
    inlined code of that callee (directly or through deeper inlining)."""
    found: dict[InlineSite, set[int]] = {}
    for address, chain in frames.items():
        if len(chain) < 2:
            continue
        outermost = chain[-1].function
        for inner, outer in zip(chain, chain[1:], strict=False):
            site = InlineSite(inner.function, outer.function, outermost, outer.file, outer.line)
            found.setdefault(site, set()).add(address)
    return {site: tuple(sorted(addresses)) for site, addresses in sorted(found.items())}


# -- reading symboliser output (pure) --------------------------------------------------------


def parse_symbolizer_json(text: str) -> dict[int, tuple[SourceFrame, ...]]:
    """`llvm-symbolizer --inlining --output-style=JSON` output (one JSON object per address)
    -> address -> frames, innermost first. Unknown functions ("??") are dropped."""
    frames: dict[int, tuple[SourceFrame, ...]] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        record = json.loads(line)
        address = int(str(record.get("Address", "0")), 16)
        chain = tuple(
            SourceFrame(
                str(symbol["FunctionName"]),
                str(symbol.get("FileName") or ""),
                int(symbol.get("Line") or 0),
            )
            for symbol in record.get("Symbol", [])
            if symbol.get("FunctionName") not in (None, "", "??")
        )
        if chain:
            frames[address] = chain
    return frames


def parse_addr2line(text: str, addresses: Sequence[int]) -> dict[int, tuple[SourceFrame, ...]]:
    """`addr2line -i -f -C -a -e OBJ` output: per address an `0x...` line, then (function,
    file:line) pairs, innermost first."""
    frames: dict[int, list[SourceFrame]] = {}
    current: int | None = None
    lines = [line.strip() for line in text.splitlines()]
    wanted = set(addresses)
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("0x"):
            current = int(line, 16)
            i += 1
            continue
        where = lines[i + 1] if i + 1 < len(lines) else ""
        if current is not None and current in wanted and line and line != "??":
            file, _, number = where.partition(":")
            number = number.split(" ", 1)[0]
            frames.setdefault(current, []).append(
                SourceFrame(
                    line, "" if file == "??" else file, int(number) if number.isdigit() else 0
                )
            )
        i += 2
    return {address: tuple(chain) for address, chain in frames.items()}


def frames_to_json(frames: AddressFrames) -> dict[str, list[list[object]]]:
    return {
        f"{address:#x}": [frame.to_json() for frame in chain] for address, chain in frames.items()
    }


def frames_from_json(raw: Mapping[str, Iterable[object]]) -> dict[int, tuple[SourceFrame, ...]]:
    return {
        int(address, 16): tuple(SourceFrame.from_json(frame) for frame in chain)
        for address, chain in raw.items()
    }


# -- ELF facts -------------------------------------------------------------------------------


_ELF_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")
_SECTION_HEADER = struct.Struct("<IIQQQQIIQQ")
# ELF's section type and note type (elf.h) of the GNU build-id note
_SHT_NOTE = 7
_NT_GNU_BUILD_ID = 3


@dataclass(frozen=True)
class ElfSection:
    """One section header of an ELF file: name, type, and where its bytes lie in the file."""

    name: str
    type: int
    offset: int
    size: int


def elf_sections(path: str) -> dict[str, ElfSection] | None:
    """The section headers of a 64-bit little-endian ELF file, by name, read with `struct`
    (pyelftools parses some sections eagerly: half a second for libtorch_cpu.so's hash table).
    None when the file cannot be read or is not such an ELF file."""
    try:
        with open(path, "rb") as stream:
            header = stream.read(_ELF_HEADER.size)
            if len(header) < _ELF_HEADER.size or header[:4] != b"\x7fELF" or header[4:6] != b"\2\1":
                return None
            fields = _ELF_HEADER.unpack(header)
            shoff, shentsize, shnum, shstrndx = fields[6], fields[11], fields[12], fields[13]
            if not shoff or shentsize < _SECTION_HEADER.size or shstrndx >= shnum:
                return None
            stream.seek(shoff)
            table = stream.read(shentsize * shnum)
            raw = [
                _SECTION_HEADER.unpack_from(table, index * shentsize)
                for index in range(len(table) // shentsize)
            ]
            if shstrndx >= len(raw):
                return None
            stream.seek(raw[shstrndx][4])
            names = stream.read(raw[shstrndx][5])
    except OSError:
        return None
    sections: dict[str, ElfSection] = {}
    for name_offset, kind, _, _, offset, size, *_ in raw:
        end = names.find(b"\0", name_offset)
        name = names[name_offset : end if end >= 0 else None].decode("utf-8", "replace")
        sections.setdefault(name, ElfSection(name, kind, offset, size))
    return sections


def has_debug_info(path: str) -> bool:
    """The object itself carries DWARF (.debug_info): inline frames can be read from it."""
    sections = elf_sections(path)
    return sections is not None and ".debug_info" in sections


def build_id(path: str) -> str | None:
    """The GNU build-id note (hex), or None when the object has none or cannot be read."""
    sections = elf_sections(path)
    if sections is None:
        return None
    try:
        with open(path, "rb") as stream:
            for section in sections.values():
                if section.type != _SHT_NOTE:
                    continue
                stream.seek(section.offset)
                found = _build_id_note(stream.read(section.size))
                if found is not None:
                    return found
    except OSError:
        return None
    return None


def _build_id_note(notes: bytes) -> str | None:
    position = 0
    while position + 12 <= len(notes):
        name_size, desc_size, kind = struct.unpack_from("<III", notes, position)
        name_start = position + 12
        desc_start = name_start + (name_size + 3) // 4 * 4
        if kind == _NT_GNU_BUILD_ID and notes[name_start : name_start + name_size] == b"GNU\0":
            return notes[desc_start : desc_start + desc_size].hex()
        position = desc_start + (desc_size + 3) // 4 * 4
    return None


def object_identity(path: str) -> str | None:
    """``build-id:HEX`` (or ``sha256:HEX`` for objects without a build-id): equal identities mean
    byte-identical code. None when the file cannot be read (deleted, not a file)."""
    if not os.path.isfile(path):
        return None
    found = build_id(path)
    if found is not None:
        return f"build-id:{found}"
    try:
        with open(path, "rb") as stream:
            return "sha256:" + hashlib.file_digest(stream, "sha256").hexdigest()
    except OSError:
        return None


_IDENTITIES: dict[tuple[str, int, int, int], str | None] = {}


def file_identity(path: str) -> str | None:
    """`object_identity`, computed once per file version in this process (hashing a large
    object without a build-id takes a while): the stat is only this memo's key, never the
    analysis cache's. None when the file cannot be read."""
    try:
        real = os.path.realpath(path)
        stat = os.stat(real)
    except OSError:
        return None
    memo_key = (real, stat.st_ino, stat.st_mtime_ns, stat.st_size)
    if memo_key not in _IDENTITIES:
        _IDENTITIES[memo_key] = object_identity(real)
    return _IDENTITIES[memo_key]


def tool_identity(tool: str | None) -> str | None:
    """A tool binary's identity (its build-id, through symlinks such as llvm-mca -> llvm-mca-14):
    results keyed by it are recomputed when the tool is upgraded."""
    return None if tool is None else file_identity(tool)


# -- the symboliser (a process) --------------------------------------------------------------


SYMBOLISED_KIND = "inline-frames"  # the analysis cache's entries: one listing's inline frames


def symbolise(
    runner: ProcessRunner,
    path: str,
    addresses: Sequence[int],
    *,
    cache: AnalysisCache | None = None,
) -> dict[int, tuple[SourceFrame, ...]] | None:
    """Inline frames of `addresses` (ELF file addresses) in the object at `path`, innermost
    first. None when it cannot be told: the object has no debug info or no symboliser is
    installed (callers say so; they never guess). Answers are kept in the analysis `cache`
    under the object's identity, the symboliser's and the addresses asked about."""
    if not addresses or not os.path.isfile(path) or not has_debug_info(path):
        return None
    symbolizer = runner.which("llvm-symbolizer")
    tool = symbolizer or runner.which("addr2line")
    if tool is None:
        return None
    key: list[object] | None = None
    identity = file_identity(path)
    if cache is not None and identity is not None:
        asked = hashlib.sha256(",".join(map(str, addresses)).encode()).hexdigest()
        key = [identity, tool_identity(tool) or tool, asked]
        stored = cache.get(SYMBOLISED_KIND, key)
        if isinstance(stored, dict):
            try:
                return frames_from_json(stored)
            except (TypeError, ValueError, AttributeError):
                cache.stats.ignored += 1
    frames = _run_symboliser(runner, path, addresses, symbolizer)
    if frames is not None and cache is not None and key is not None:
        cache.put(SYMBOLISED_KIND, key, frames_to_json(frames))
    return frames


def _run_symboliser(
    runner: ProcessRunner, path: str, addresses: Sequence[int], symbolizer: str | None
) -> dict[int, tuple[SourceFrame, ...]] | None:
    stdin = "\n".join(f"{address:#x}" for address in addresses) + "\n"
    if symbolizer is not None:
        argv: tuple[str, ...] = (
            symbolizer,
            "--inlining",
            "--functions=linkage",
            "--demangle",
            "--output-style=JSON",
            f"--obj={path}",
        )
        completed = runner.run(LaunchSpec(argv), timeout_s=_SYMBOLISE_TIMEOUT_S, stdin_text=stdin)
        return parse_symbolizer_json(completed.stdout) if completed.ok else None
    argv = ("addr2line", "-i", "-f", "-C", "-a", "-e", path)
    completed = runner.run(LaunchSpec(argv), timeout_s=_SYMBOLISE_TIMEOUT_S, stdin_text=stdin)
    return parse_addr2line(completed.stdout, addresses) if completed.ok else None
