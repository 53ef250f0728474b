"""Parse `perf script` and `perf evlist` output into samples and event names. Pure.

The `perf script` format perflab asks for (`-F comm,pid,tid,time,event,period,ip,sym,symoff,dso`):

    python  5645/5645    550.900275:    1001001 cpu-clock:
    \t          16e040 __memset_avx512_unaligned_erms+0x0 (/usr/lib/x86_64-linux-gnu/libc.so.6)
    \t          19513d new_keys_object+0xdd (/usr/lib/libpython3.11.so.1.0)
    <blank line>

The first frame is the sampled instruction; callers follow. Without call graphs the one frame is on
the header line. Addresses in call chains are object-relative; a lone sampled ip is absolute. Use
`symbol` + `offset` (the place inside the function) to find an instruction in a disassembly: it
does not depend on where the object was loaded.

With `--show-mmap-events` perf also prints the mappings it saw, one line each:

    python 5645/5645 550.900100: PERF_RECORD_MMAP2 5645/5645: [0x7f..(0x1000) @ ..]: r-xp /lib/x.so

:func:`executable_mappings` reads the executable files from them; the sample parser skips them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

UNKNOWN = "[unknown]"


@dataclass(frozen=True)
class Frame:
    """One frame of a sampled call stack: the address, its symbol and offset, and the object it is
    in."""

    ip: int
    symbol: str  # `[unknown] <object>` when perf could not resolve it
    offset: int | None  # bytes from the start of the symbol (perf's symoff)
    dso: str  # path of the object (`[kernel.kallsyms]`, `[unknown]` ...)

    @property
    def object(self) -> str:
        """The object's file name without its directory: stable across build trees."""
        return object_file_name(self.dso)


def object_file_name(dso: str) -> str:
    """`/usr/lib/libc.so.6` -> `libc.so.6`; pseudo objects (`[kernel.kallsyms]`) unchanged."""
    return dso if dso.startswith("[") else os.path.basename(dso)


@dataclass(frozen=True)
class ProfileSample:
    """One sample perf script printed: the thread, when, the event count it stands for, and its call
    stack."""

    comm: str
    pid: int
    tid: int
    time_s: float
    period: int  # event count this sample stands for (ns for cpu-clock)
    event: str
    frames: tuple[Frame, ...]  # leaf first

    @property
    def leaf(self) -> Frame | None:
        return self.frames[0] if self.frames else None

    @property
    def ip(self) -> int | None:
        return self.frames[0].ip if self.frames else None

    @property
    def symbol(self) -> str:
        return self.frames[0].symbol if self.frames else UNKNOWN

    @property
    def dso(self) -> str:
        return self.frames[0].dso if self.frames else UNKNOWN


_HEADER = re.compile(
    r"^\s*(?P<comm>.*?)\s+(?P<pid>\d+)/(?P<tid>\d+)\s+(?P<time>\d+\.\d+):\s+"
    r"(?:(?P<period>\d+)\s+)?(?P<event>\S+):(?:\s+(?P<rest>.*))?$"
)
_FRAME = re.compile(r"^\s*(?P<ip>[0-9a-fA-F]+)\s+(?P<body>.*)$")
_SIDE_BAND = "PERF_RECORD_"  # mmap, comm, fork ... records (--show-mmap-events): not samples
_MMAP = re.compile(r"PERF_RECORD_MMAP2?\s.*\]:\s+(?P<perms>\S+)\s+(?P<path>.+?)\s*$")


def _parse_frame(text: str) -> Frame | None:
    match = _FRAME.match(text)
    if match is None:
        return None
    body = match.group("body").rstrip()
    dso = UNKNOWN
    if body.endswith(")"):
        # the object is the last parenthesised group; C++ symbols contain parentheses too
        open_at = body.rfind(" (")
        if open_at >= 0:
            dso = body[open_at + 2 : -1]
            body = body[:open_at]
    symbol, offset = body, None
    plus = body.rfind("+0x")
    if plus > 0:
        try:
            offset = int(body[plus + 3 :], 16)
            symbol = body[:plus]
        except ValueError:
            pass
    if not symbol or symbol == UNKNOWN:
        symbol = f"{UNKNOWN} {object_file_name(dso)}"
    return Frame(ip=int(match.group("ip"), 16), symbol=symbol, offset=offset, dso=dso)


def parse_perf_script(text: str, *, keep_inlined: bool = False) -> list[ProfileSample]:
    """Samples from `perf script` text. `(inlined)` pseudo-frames (perf adds them when it can
    read inline debug info) are dropped unless `keep_inlined`: they have no address of their
    own and would count one instruction twice."""
    samples: list[ProfileSample] = []
    header: re.Match[str] | None = None
    frames: list[Frame] = []

    def flush() -> None:
        if header is not None:
            samples.append(
                ProfileSample(
                    comm=header.group("comm").strip(),
                    pid=int(header.group("pid")),
                    tid=int(header.group("tid")),
                    time_s=float(header.group("time")),
                    period=int(header.group("period") or 1),
                    event=header.group("event"),
                    frames=tuple(frames),
                )
            )

    for line in text.splitlines():
        if not line.strip() or _SIDE_BAND in line:
            continue
        match = _HEADER.match(line)
        if match is None:
            # a call-chain line (indented), or noise such as perf's own warnings
            if header is None or not line[:1].isspace():
                continue
            if not keep_inlined and line.rstrip().endswith("(inlined)"):
                continue
            frame = _parse_frame(line)
            if frame is not None:
                frames.append(frame)
            continue
        flush()
        header, frames = match, []
        rest = (match.group("rest") or "").strip()
        if rest:
            frame = _parse_frame(rest)
            if frame is not None:
                frames.append(frame)
    flush()
    return samples


def executable_mappings(text: str) -> tuple[str, ...]:
    """Files mapped executable, in the order perf saw them mapped (`--show-mmap-events` lines);
    the kernel, `[vdso]` and anonymous code are left out."""
    seen: dict[str, None] = {}
    for line in text.splitlines():
        if "PERF_RECORD_MMAP" not in line:
            continue
        match = _MMAP.search(line)
        if match and "x" in match.group("perms") and match.group("path").startswith("/"):
            seen.setdefault(match.group("path"), None)
    return tuple(seen)


def parse_evlist(text: str) -> list[str]:
    """Event names from `perf evlist -i FILE` (optionally `-F`: `name: attr=...`)."""
    names = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name = line.split(":", 1)[0].strip() if ": " in line else line
        # perf adds a `dummy` event of its own (side-band records with --control / -D)
        if name.split(":")[0] != "dummy":
            names.append(name)
    return names
