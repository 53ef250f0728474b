"""The memory lens's analysis, from stored data only: each variant's memory work per iteration,
the comparisons with the baseline, and whether two variants do the same memory work.

What the numbers are (and are not):

- callgrind's ``Dr``/``Dw`` count data *accesses* (loads and stores of any width), not bytes:
  they are shown as reads and writes per iteration.
- Bytes are derived from simulated cache misses: the simulator brings one line into D1 for every
  D1 miss, read or write (it allocates on writes), and one line into LL for every LL miss. So
  ``(D1mr + D1mw) x line size`` is the bytes brought into D1, and ``(DLmr + DLmw) x line size``
  the bytes brought into the last level from memory, per iteration. The line size is read from
  callgrind's own output (``desc: D1 cache: ... B, 64 B, ...``). Write-backs are not simulated.
- Allocations are the calls to the C allocator (malloc, calloc, realloc, the aligned variants)
  that callgrind counted, per iteration; Python's small-object allocator serves small objects
  without them.
- Peak RSS and peak allocated are the rss lens's measures (tool_output/peak_memory.py).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from perflab.lenses.memory.metric import MEMORY
from perflab.measure.callgrind.artifacts import (
    KIND_COMMAND,
    KIND_EMPTY,
    KIND_STATEMENT,
    SAMPLE_NAME,
    parts_of,
    unexecutable_reason,
)
from perflab.measure.lens import LensAnalysis
from perflab.records.model import (
    Benchmark,
    BenchmarkData,
    Comparison,
    Note,
    Severity,
    Withhold,
)
from perflab.records.settings import Settings
from perflab.stats.comparison import SideValues, Subject, comparison_from, withhold_verdict
from perflab.stats.summary import process_ratio_interval
from perflab.tool_output.callgrind import CallgrindPart, FunctionCosts, combine_parts
from perflab.tool_output.peak_memory import (
    MAXRSS_KB,
    NOT_THE_MEMORY_CHANGE,
    PEAK_ALLOC_BYTES,
    TRACEMALLOC_BLIND,
    RssDetails,
    analyse_peak_memory,
)

KIND_UNAVAILABLE = "memory.unavailable"  # JSON: {"valgrind": its message} per variant

# Two variants do different memory work when the bytes one moves per iteration (at D1 or at the
# last level) differ by more than this, beyond the spread of their repeats: well above how much
# repeats of one variant differ (docs/lenses/memory.md), and below one extra pass in five, the
# smallest unfair benchmark worth catching.
WORK_THRESHOLD = 0.10
# ... and when one of them moves at least this many bytes per iteration: below it, a few lines
# of interpreter and allocator state decide the ratio
WORK_FLOOR_BYTES = 4096.0
# the reason such a comparison gives for no verdict at all: the ratio is not the loop's work
SMALL_WORK = Withhold("below-work-floor")
# where tracemalloc's peak is not the memory change: the footprint is peak RSS, and this lens's
# traffic comparisons are what the loop moves
_TRACEMALLOC_BLIND_HINT = (
    "peak RSS is the footprint; the traffic comparisons count the bytes the loop moves"
)

ALLOCATORS = frozenset(
    {
        "malloc",
        "calloc",
        "realloc",
        "reallocarray",
        "posix_memalign",
        "aligned_alloc",
        "memalign",
        "valloc",
        "pvalloc",
        "__libc_malloc",
        "__libc_calloc",
        "__libc_realloc",
        "__libc_memalign",
        "__posix_memalign",
    }
)

# callgrind events read per repeat, and what each traffic measure is made of
_READS, _WRITES = "Dr", "Dw"
_D1 = ("D1mr", "D1mw")
_LL = ("DLmr", "DLmw")


@dataclass(frozen=True)
class MemoryQuantity:
    """One quantity the lens compares: its JSON name (the comparison's event), unit, label."""

    name: str
    unit: str
    label: str


D1_BYTES = MemoryQuantity("d1_fill_bytes", "B", "bytes brought into D1")
LL_BYTES = MemoryQuantity("ll_fill_bytes", "B", "bytes brought into LL from memory")
DATA_READS = MemoryQuantity("data_reads", "reads", "data reads (accesses, any width)")
DATA_WRITES = MemoryQuantity("data_writes", "writes", "data writes (accesses, any width)")
D1_MISSES = MemoryQuantity("d1_misses", "misses", "D1 misses (read + write)")
LL_MISSES = MemoryQuantity("ll_misses", "misses", "LL data misses (read + write)")
ALLOCATIONS = MemoryQuantity("allocations", "calls", "C allocator calls")
PEAK_RSS = MemoryQuantity(MAXRSS_KB, "kB", "peak RSS of the process")
PEAK_ALLOCATED = MemoryQuantity(PEAK_ALLOC_BYTES, "B", "peak allocated while the loop ran")

TRAFFIC_MEASURES = (D1_BYTES, LL_BYTES, DATA_READS, DATA_WRITES, ALLOCATIONS)
TABLE_MEASURES = (
    DATA_READS,
    DATA_WRITES,
    D1_MISSES,
    D1_BYTES,
    LL_MISSES,
    LL_BYTES,
    ALLOCATIONS,
    PEAK_RSS,
    PEAK_ALLOCATED,
)
MEASURES = {m.name: m for m in TABLE_MEASURES}


# a cache's description: "32768 B, 64 B, 8-way associative" (size, line size, ways)
_CACHE_DESCRIPTION = re.compile(r"\d+ B,\s*(?P<line>\d+) B")


def line_sizes(descriptions: Mapping[str, str]) -> dict[str, int]:
    """The simulated line size of each cache level, from a profile's ``desc:`` lines as the
    parser read them (`CallgrindPart.descriptions`: "D1 cache" -> "32768 B, 64 B, ...")."""
    sizes = {}
    for level in ("I1", "D1", "LL"):
        found = _CACHE_DESCRIPTION.match(descriptions.get(f"{level} cache", ""))
        if found is not None:
            sizes[level] = int(found.group("line"))
    return sizes


def allocator_calls(costs: FunctionCosts) -> float:
    """Calls into the C allocator, not counting the allocator's calls to itself."""
    return sum(
        call.count
        for (caller, callee), call in costs.calls.items()
        if callee.name in ALLOCATORS and caller.name not in ALLOCATORS
    )


@dataclass(frozen=True)
class Traffic:
    """One variant's memory work per iteration under the cache simulation: one value per
    callgrind repeat for each measure, the same values grouped by worker process, and the line
    size that turned misses into bytes."""

    repeats: Mapping[str, tuple[float, ...]]
    line_bytes: Mapping[str, int]
    # measure -> per worker process, its repeats (empty: stored before processes were recorded)
    processes: Mapping[str, tuple[tuple[float, ...], ...]] = field(default_factory=dict)

    def value(self, measure: MemoryQuantity) -> float | None:
        values = self.repeats.get(measure.name)
        return statistics.median(values) if values else None

    def by_process(self, measure: MemoryQuantity) -> tuple[tuple[float, ...], ...]:
        """The measure's repeats per worker process (all in one when processes are unknown)."""
        grouped = self.processes.get(measure.name)
        if grouped:
            return grouped
        values = self.repeats.get(measure.name, ())
        return (values,) if values else ()

    def levels(self, measure: MemoryQuantity) -> tuple[float, ...]:
        """Each worker process's level (the median of its repeats), for the JSON."""
        return tuple(statistics.median(p) for p in self.by_process(measure) if p)


def _repeat_costs(
    data: BenchmarkData, variant: str
) -> list[tuple[int, FunctionCosts, float, Mapping[str, str]]]:
    """Per stored repeat: its worker process, its costs (statement minus empty loop, or the
    whole command), the iterations they cover, and the profile's descriptions (its caches)."""
    measured = [s for s in data.samples_of(variant, SAMPLE_NAME) if not s.warmup]
    loops = {s.generation: s.loops for s in measured}
    process = {s.generation: s.block for s in measured}  # the instructions lens's numbering
    out: list[tuple[int, FunctionCosts, float, Mapping[str, str]]] = []
    for generation in sorted(loops):
        stmt = [a for a in data.artifacts_of(variant, KIND_STATEMENT) if a.generation == generation]
        if stmt:
            empty = [
                a for a in data.artifacts_of(variant, KIND_EMPTY) if a.generation == generation
            ]
            parts = parts_of(stmt)
            costs = combine_parts(parts) - combine_parts(parts_of(empty))
            out.append((process[generation], costs, float(loops[generation]), _described(parts)))
            continue
        whole = [a for a in data.artifacts_of(variant, KIND_COMMAND) if a.generation == generation]
        if whole:
            parts = parts_of(whole)
            out.append(
                (
                    process[generation],
                    combine_parts(parts),
                    float(loops[generation]),
                    _described(parts),
                )
            )
    return out


def _described(parts: Sequence[CallgrindPart]) -> Mapping[str, str]:
    return parts[0].descriptions if parts else {}


def traffic_of(data: BenchmarkData, variant: str) -> Traffic | None:
    """The variant's traffic per iteration from its stored callgrind files, None when none were
    stored or they carry no cache simulation."""
    repeats: dict[str, list[float]] = {}
    grouped: dict[str, dict[int, list[float]]] = {}
    lines: dict[str, int] = {}
    for process, costs, loops, descriptions in _repeat_costs(data, variant):
        if not all(e in costs.events for e in (_READS, _WRITES, *_D1, *_LL)):
            return None
        if not lines:
            lines = line_sizes(descriptions)
        if "D1" not in lines or "LL" not in lines:
            return None
        d1 = sum(costs.total(e) for e in _D1) / loops
        ll = sum(costs.total(e) for e in _LL) / loops
        for measure, value in (
            (DATA_READS, costs.total(_READS) / loops),
            (DATA_WRITES, costs.total(_WRITES) / loops),
            (D1_MISSES, d1),
            (LL_MISSES, ll),
            (D1_BYTES, d1 * lines["D1"]),
            (LL_BYTES, ll * lines["LL"]),
            (ALLOCATIONS, allocator_calls(costs) / loops),
        ):
            repeats.setdefault(measure.name, []).append(value)
            grouped.setdefault(measure.name, {}).setdefault(process, []).append(value)
    if not repeats:
        return None
    return Traffic(
        {k: tuple(v) for k, v in repeats.items()},
        lines,
        {k: tuple(tuple(by[p]) for p in sorted(by)) for k, by in grouped.items()},
    )


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


@dataclass(frozen=True, kw_only=True)
class WorkDifference:
    """Two variants move different amounts of data per iteration at one cache level."""

    measure: MemoryQuantity
    ratio: float  # variant / baseline bytes per iteration
    ci_low: float
    ci_high: float
    line_bytes: int
    baseline_bytes: float  # per iteration
    variant_bytes: float

    def sentence(self, baseline: str, variant: str) -> str:
        level = "D1" if self.measure is D1_BYTES else "LL data"
        what = f"({self.measure.label}: {level} misses × {self.line_bytes} B)"
        if math.isinf(self.ratio):
            moves = (
                f"`{variant}` moves {self.variant_bytes:,.0f} B per iteration where "
                f"`{baseline}` moves none"
            )
        elif self.ratio <= 0:
            moves = (
                f"`{variant}` moves none where `{baseline}` moves "
                f"{self.baseline_bytes:,.0f} B per iteration"
            )
        else:
            moves = f"`{variant}` moves {self.ratio:.3g}x the bytes per iteration of `{baseline}`"
        return f"{moves} {what}: the variants do not do the same memory work"

    def to_json(self, baseline: str, variant: str) -> dict[str, Any]:
        return {
            "measure": self.measure.name,
            # JSON has no infinity: null where the baseline moves nothing
            "ratio": _finite(self.ratio),
            "ci_low": _finite(self.ci_low),
            "ci_high": _finite(self.ci_high),
            "threshold": WORK_THRESHOLD,
            "floor_bytes": WORK_FLOOR_BYTES,
            "message": self.sentence(baseline, variant),
        }


def below_floor(measure: MemoryQuantity, before: Sequence[float], after: Sequence[float]) -> bool:
    """Whether a bytes measure is too small on both sides for its ratio to mean anything."""
    if measure not in (D1_BYTES, LL_BYTES) or not before or not after:
        return False
    return max(statistics.median(before), statistics.median(after)) < WORK_FLOOR_BYTES


def work_difference(
    base: Traffic, other: Traffic, *, threshold: float = WORK_THRESHOLD
) -> WorkDifference | None:
    """The cache level where the two variants' bytes per iteration differ by more than
    `threshold` beyond their repeats' spread (the larger difference when both do); None when
    they do the same memory work."""
    found: list[WorkDifference] = []
    for measure, level in ((LL_BYTES, "LL"), (D1_BYTES, "D1")):
        before, after = base.repeats.get(measure.name), other.repeats.get(measure.name)
        if not before or not after:
            continue
        if max(statistics.median(before), statistics.median(after)) < WORK_FLOOR_BYTES:
            continue
        if min(before) <= 0:  # the baseline moves nothing at this level, the variant does
            ratio, low, high = math.inf, math.inf, math.inf
        else:
            ratio, low, high = process_ratio_interval(
                base.by_process(measure), other.by_process(measure)
            )
        if low > 1 + threshold or high < 1 / (1 + threshold):
            found.append(
                WorkDifference(
                    measure=measure,
                    ratio=ratio,
                    ci_low=low,
                    ci_high=high,
                    line_bytes=other.line_bytes[level],
                    baseline_bytes=statistics.median(before),
                    variant_bytes=statistics.median(after),
                )
            )
    if not found:
        return None
    return max(found, key=lambda d: abs(math.log(d.ratio)) if d.ratio > 0 else math.inf)


@dataclass(frozen=True)
class MemoryDetails:
    """A memory comparison's own JSON fields: what the compared quantity is, both variants'
    memory work per iteration, and whether they do the same memory work."""

    measure: MemoryQuantity
    baseline_memory: Mapping[str, float | None]
    variant_memory: Mapping[str, float | None]
    line_bytes: Mapping[str, int] = field(default_factory=dict)
    work: WorkDifference | None = None
    baseline_unavailable: str | None = None
    variant_unavailable: str | None = None
    baseline_repeats: tuple[float, ...] = ()
    variant_repeats: tuple[float, ...] = ()
    footprint: RssDetails | None = None
    names: tuple[str, str] = ("", "")  # baseline, variant: for the sentence in the JSON
    # each worker process's level of the compared measure (two or more: the interval was
    # widened by how far they are apart)
    baseline_processes: tuple[float, ...] = ()
    variant_processes: tuple[float, ...] = ()
    # the bytes measure is below WORK_FLOOR_BYTES on both sides: shown without a verdict
    below_floor: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "memory_measure": self.measure.label,
            "memory": {
                "baseline": dict(self.baseline_memory),
                "variant": dict(self.variant_memory),
            },
            "line_bytes": dict(self.line_bytes),
            "different_memory_work": None if self.work is None else self.work.to_json(*self.names),
        }
        if self.baseline_repeats:
            out["baseline_repeats"] = list(self.baseline_repeats)
            out["variant_repeats"] = list(self.variant_repeats)
        if len(self.baseline_processes) > 1 or len(self.variant_processes) > 1:
            out["baseline_processes"] = list(self.baseline_processes)
            out["variant_processes"] = list(self.variant_processes)
        if self.below_floor:
            out["verdict_withheld"] = (
                f"fewer than {WORK_FLOOR_BYTES:,.0f} B per iteration on both sides: a few lines "
                "of interpreter and allocator state decide the ratio"
            )
        unavailable = {
            side: reason
            for side, reason in (
                ("baseline", self.baseline_unavailable),
                ("variant", self.variant_unavailable),
            )
            if reason
        }
        if unavailable:
            out["traffic_unavailable"] = unavailable
        if self.footprint is not None:
            out.update(self.footprint.to_json())
        return out


def _profile(
    traffic: Traffic | None, footprint: Mapping[str, float | None]
) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for m in TABLE_MEASURES:
        if m in (PEAK_RSS, PEAK_ALLOCATED):
            out[m.name] = footprint.get(m.name)
        else:
            out[m.name] = traffic.value(m) if traffic is not None else None
    return out


def _footprints(comparisons: Sequence[Comparison]) -> dict[str, dict[str, float | None]]:
    """Per variant, its peak RSS and peak allocated as the rss analysis found them."""
    out: dict[str, dict[str, float | None]] = {}
    for c in comparisons:
        if c.event in (MAXRSS_KB, PEAK_ALLOC_BYTES):
            out.setdefault(c.baseline, {})[c.event] = c.baseline_value
            out.setdefault(c.variant, {})[c.event] = c.variant_value
    return out


def tracemalloc_blind_to_traffic(
    comparison: Comparison, base: Traffic | None, other: Traffic | None
) -> str | None:
    """Why the peak allocated (tracemalloc) is not the memory change, when it is not: it sees
    only memory allocated through Python's allocator, and the loop moved far more than that
    (torch's tensors of 16 and 32 MB: peak allocated 264 B and 344 B). None when it may be."""
    if comparison.event != PEAK_ALLOC_BYTES or base is None or other is None:
        return None
    moved = [t.value(D1_BYTES) for t in (base, other)]
    if any(v is None for v in moved):
        return None
    before, after = comparison.baseline_value, comparison.variant_value
    most = max(v for v in moved if v is not None)
    if most <= TRACEMALLOC_BLIND * max(before, after, 1.0):
        return None
    return (
        f"peak allocated (tracemalloc) {before:,.0f} B → {after:,.0f} B is not the memory "
        f"change: it counts only what is allocated through Python's allocator, while the loop "
        f"brought {moved[0]:,.0f} B → {moved[1]:,.0f} B per iteration into D1; memory a native "
        "library allocates itself (tensors, arrays) is not in it"
    )


def analyse_memory(
    benchmark: Benchmark, variants: Sequence[str], data: BenchmarkData, settings: Settings
) -> LensAnalysis:
    """Compare variants[1:] with variants[0]: the traffic measures (repeats' interval, as the
    instructions lens), peak RSS and peak allocated (the rss lens's analysis), a note for
    every pair that does not do the same memory work, one for every variant valgrind could
    not run, and one where tracemalloc's peak is not the memory change (the traffic's
    evidence where it has some, else peak RSS's: never both)."""
    if not variants:
        return LensAnalysis()
    base_name = variants[0]
    peak = analyse_peak_memory(
        benchmark, variants, data, settings, metric=MEMORY, blind_hint=_TRACEMALLOC_BLIND_HINT
    )
    footprints = _footprints(peak.comparisons)
    traffic = {name: traffic_of(data, name) for name in variants}
    unavailable = {name: unexecutable_reason(data, name, KIND_UNAVAILABLE) for name in variants}
    profiles = {name: _profile(traffic[name], footprints.get(name, {})) for name in variants}
    notes: list[Note] = list(peak.notes)
    notes += [
        _unavailable_note(benchmark, name, reason)
        for name, reason in unavailable.items()
        if reason is not None
    ]
    comparisons: list[Comparison] = []
    for name in variants[1:]:
        base, other = traffic[base_name], traffic[name]
        pair = _TrafficPair(
            benchmark=benchmark,
            settings=settings,
            names=(base_name, name),
            base=base,
            other=other,
            memory=(profiles[base_name], profiles[name]),
            unavailable=(unavailable[base_name], unavailable[name]),
            work=work_difference(base, other) if base is not None and other is not None else None,
        )
        if pair.work is not None:
            notes.append(_work_note(pair, pair.work))
        comparisons += _traffic_comparisons(pair)
        for c in peak.comparisons:
            if c.variant == name:
                footprint, blind = _footprint_comparison(pair, c)
                comparisons.append(footprint)
                notes = [n for n in notes if not blind or n is not peak.blind_notes.get(name)]
                notes += blind
    return LensAnalysis(comparisons=tuple(comparisons), notes=tuple(notes))


@dataclass(frozen=True)
class _TrafficPair:
    """One variant against the baseline: what each of its comparisons' details holds."""

    benchmark: Benchmark
    settings: Settings
    names: tuple[str, str]  # baseline, variant
    base: Traffic | None
    other: Traffic | None
    memory: tuple[dict[str, float | None], dict[str, float | None]]  # each side's `_profile`
    unavailable: tuple[str | None, str | None]  # why valgrind could not run each side
    work: WorkDifference | None

    def details(
        self,
        measure: MemoryQuantity,
        before: tuple[float, ...] = (),
        after: tuple[float, ...] = (),
        footprint: RssDetails | None = None,
    ) -> MemoryDetails:
        lines = self.other or self.base
        return MemoryDetails(
            measure=measure,
            baseline_memory=self.memory[0],
            variant_memory=self.memory[1],
            line_bytes=dict(lines.line_bytes) if lines is not None else {},
            work=self.work,
            baseline_unavailable=self.unavailable[0],
            variant_unavailable=self.unavailable[1],
            baseline_repeats=before,
            variant_repeats=after,
            footprint=footprint,
            names=self.names,
            baseline_processes=self.base.levels(measure) if self.base and before else (),
            variant_processes=self.other.levels(measure) if self.other and after else (),
            below_floor=below_floor(measure, before, after),
        )


def _unavailable_note(benchmark: Benchmark, name: str, reason: str) -> Note:
    return Note(
        Severity.WARNING,
        f"valgrind cannot execute {name!r}'s code, so its memory traffic is not "
        f"known (valgrind: {reason}); its peak RSS is measured natively",
        hint="valgrind 3.19 executes no AVX-512 instruction: build or run that "
        "variant without AVX-512 (e.g. ATEN_CPU_CAPABILITY=avx2) to compare traffic",
        benchmark=benchmark.name,
        variant=name,
        metric=MEMORY,
    )


def _work_note(pair: _TrafficPair, work: WorkDifference) -> Note:
    return Note(
        Severity.WARNING,
        work.sentence(*pair.names),
        hint="compare their times only if the extra memory work is the change "
        "you mean to measure (e.g. out= against a copy)",
        benchmark=pair.benchmark.name,
        variant=pair.names[1],
        metric=MEMORY,
    )


def _traffic_comparisons(pair: _TrafficPair) -> list[Comparison]:
    """One comparison per traffic measure the baseline has, where valgrind ran both sides."""
    base, other = pair.base, pair.other
    if base is None or other is None:
        return []
    comparisons = []
    for measure in TRAFFIC_MEASURES:
        before = base.repeats.get(measure.name, ())
        after = other.repeats.get(measure.name, ())
        # over every worker process, widened by how far each side's processes are apart
        interval = process_ratio_interval(base.by_process(measure), other.by_process(measure))
        if math.isnan(interval[0]):
            continue  # nothing of it in the baseline (no allocations ...): no ratio
        comparison = comparison_from(
            interval,
            Subject(pair.benchmark.name, MEMORY, pair.names[0], pair.names[1]),
            SideValues(statistics.median(before), statistics.median(after), measure.unit),
            equivalence_band=pair.settings.equivalence_band,
            event=measure.name,
            details=pair.details(measure, before, after),
            withhold=SMALL_WORK if below_floor(measure, before, after) else None,
        )
        comparisons.append(comparison)
    return comparisons


def _footprint_comparison(pair: _TrafficPair, rss: Comparison) -> tuple[Comparison, list[Note]]:
    """The rss analysis's comparison filed under this lens, and a note where tracemalloc's
    peak is not the memory the loop used."""
    measure = MEASURES[rss.event or MAXRSS_KB]
    own = rss.details if isinstance(rss.details, RssDetails) else None
    footprint = replace(rss, metric=MEMORY, details=pair.details(measure, footprint=own))
    blind = tracemalloc_blind_to_traffic(rss, pair.base, pair.other)
    if blind is None:
        return footprint, []
    # what Python's allocator saw is not the memory the loop used: never a verdict
    note = Note(
        Severity.INFO,
        blind,
        hint="the bytes brought into D1 and the C allocator calls are the "
        "memory work; peak RSS the footprint",
        benchmark=pair.benchmark.name,
        variant=pair.names[1],
        metric=MEMORY,
    )
    return withhold_verdict(footprint, NOT_THE_MEMORY_CHANGE), [note]
