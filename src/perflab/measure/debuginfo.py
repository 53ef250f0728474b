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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from perflab.proc import LaunchSpec, ProcessRunner, which

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


def has_debug_info(path: str) -> bool:
    """The object itself carries DWARF (.debug_info): inline frames can be read from it."""
    # pyelftools is imported here so that lenses which never read debug info load fast
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        with open(path, "rb") as stream:
            return ELFFile(stream).get_section_by_name(".debug_info") is not None
    except (OSError, ELFError):
        return False


def build_id(path: str) -> str | None:
    """The GNU build-id note (hex), or None when the object has none or cannot be read."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        with open(path, "rb") as stream:
            elf = ELFFile(stream)
            for section in elf.iter_sections():
                if section.header["sh_type"] != "SHT_NOTE":
                    continue
                for note in section.iter_notes():  # type: ignore[attr-defined]
                    if note["n_type"] == "NT_GNU_BUILD_ID":
                        return str(note["n_desc"])
    except (OSError, ELFError):
        return None
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


# -- the symboliser (a process) --------------------------------------------------------------


def symbolise(
    runner: ProcessRunner, path: str, addresses: Sequence[int]
) -> dict[int, tuple[SourceFrame, ...]] | None:
    """Inline frames of `addresses` (ELF file addresses) in the object at `path`, innermost
    first. None when it cannot be told: the object has no debug info or no symboliser is
    installed (callers say so; they never guess)."""
    if not addresses or not os.path.isfile(path) or not has_debug_info(path):
        return None
    stdin = "\n".join(f"{address:#x}" for address in addresses) + "\n"
    symbolizer = which("llvm-symbolizer")
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
    if which("addr2line") is not None:
        argv = ("addr2line", "-i", "-f", "-C", "-a", "-e", path)
        completed = runner.run(LaunchSpec(argv), timeout_s=_SYMBOLISE_TIMEOUT_S, stdin_text=stdin)
        return parse_addr2line(completed.stdout, addresses) if completed.ok else None
    return None
