"""Notes on hot code the asm lens cannot name or show: objects without symbols, code without a
file behind it, objects deleted or replaced after the variant ran."""

from __future__ import annotations

import os

from perflab.lenses.asm.locate import MIN_HOT_SHARE
from perflab.lenses.asm.metric import ASM
from perflab.lenses.asm.sources import ProfiledRegion
from perflab.records.model import Note, Severity
from perflab.tool_output.object_names import object_basename


def symbol_notes(region: ProfiledRegion) -> list[Note]:
    """Hot code that cannot be named or shown: say so, with how to get the names."""
    total = region.total or 1.0
    return [
        *_unnamed_notes(region, total),
        *_fileless_notes(region, total),
        *_deleted_notes(region, total),
    ]


def _unnamed_notes(region: ProfiledRegion, total: float) -> list[Note]:
    """Objects whose samples perf could not name (no symbols)."""
    unnamed: dict[str, float] = {}
    for sample in region.samples:
        if not sample.symbol and sample.object_path.startswith("/"):
            unnamed[sample.object_path] = unnamed.get(sample.object_path, 0.0) + sample.weight
    return [
        Note(
            Severity.WARNING,
            f"no symbols for {object_basename(path)} ({weight / total:.0%} of the samples): "
            "its hot code cannot be named or shown",
            hint="install its debug package (e.g. the -dbg or -dbgsym package) or build with -g",
            metric=ASM,
        )
        for path, weight in unnamed.items()
        if weight / total >= MIN_HOT_SHARE
    ]


def _fileless_notes(region: ProfiledRegion, total: float) -> list[Note]:
    """Samples in code without a file behind it (JIT code, anonymous memory)."""
    fileless = sum(
        sample.weight
        for sample in region.samples
        if (not sample.object_path.startswith("/") or sample.object_path.startswith("//"))
        and "kernel" not in sample.object_path
    )
    if fileless / total < MIN_HOT_SHARE:
        return []
    return [
        Note(
            Severity.WARNING,
            f"{fileless / total:.0%} of the samples ran in code without a file (JIT code "
            "without a perf map, or anonymous memory): it cannot be named or shown",
            hint="let the JIT write /tmp/perf-PID.map (python -X perf, "
            "PYTHONPERFSUPPORT=1; node --perf-basic-prof)",
            metric=ASM,
        )
    ]


def _deleted_notes(region: ProfiledRegion, total: float) -> list[Note]:
    """Objects deleted or replaced on disk after the variant ran."""
    notes: list[Note] = []
    sampled: dict[str, float] = {}
    for (path, _), weight in region.by_function().items():
        if not path.startswith("//"):  # "//anon": no file was ever behind it
            sampled[path] = sampled.get(path, 0.0) + weight
    for path, weight in sampled.items():
        clean = path.removesuffix(" (deleted)")
        if weight / total >= MIN_HOT_SHARE and (clean != path or not os.path.isfile(clean)):
            notes.append(
                Note(
                    Severity.WARNING,
                    f"{clean} was deleted or replaced after the variant ran "
                    f"({weight / total:.0%} of the samples): its functions are not shown",
                    hint="do not rebuild the code under test while perflab measures it",
                    metric=ASM,
                )
            )
    return notes
