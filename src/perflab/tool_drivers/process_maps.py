"""The files a live process mapped (/proc/PID/maps): what the profile lens records beside its
samples, and the asm lens reads code from."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from perflab.records.errors import PerflabError


class ProcessMapsError(PerflabError):
    """A process's mappings cannot be read."""


@dataclass(frozen=True)
class MappedRegion:
    """One line of /proc/PID/maps."""

    start: int
    end: int
    perms: str
    offset: int
    path: str

    @property
    def executable(self) -> bool:
        return "x" in self.perms

    @property
    def file_backed(self) -> bool:
        # "[vdso]", "[heap]", anonymous and "(deleted)" regions have no readable file behind them
        return self.path.startswith("/") and not self.path.endswith(" (deleted)")


def parse_proc_maps(text: str) -> tuple[MappedRegion, ...]:
    """The mapped regions of a /proc/PID/maps text (malformed lines skipped)."""
    regions = []
    for line in text.splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) < 5:
            continue
        start, end = (int(part, 16) for part in fields[0].split("-"))
        path = fields[5].strip() if len(fields) == 6 else ""
        regions.append(MappedRegion(start, end, fields[1], int(fields[2], 16), path))
    return tuple(regions)


def read_process_maps(pid: int) -> tuple[MappedRegion, ...]:
    """The mappings of a live process (a file read, not a subprocess)."""
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as maps:
            return parse_proc_maps(maps.read())
    except OSError as error:
        raise ProcessMapsError(
            f"cannot read the mappings of process {pid}: {error}",
            hint="the worker must still be alive and owned by the same user",
        ) from error


def mapped_objects(regions: Iterable[MappedRegion]) -> tuple[str, ...]:
    """Files with executable mappings, in load order: the executable first, then libraries."""
    seen: dict[str, None] = {}
    for region in regions:
        if region.executable and region.file_backed:
            seen.setdefault(region.path, None)
    return tuple(seen)
