"""What one variant's stored samples and callgrind artifacts say once read back. They give counts
per repeat and per worker process, costs per function (per iteration, names normalised, the main
program's object named `[main]`), the inline evidence, and a note when its worker processes counted
differently. Pure: no processes."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from perflab.lenses.instructions.evidence import (
    InlineEvidence,
    inline_evidence,
    reattribute_inlined,
)
from perflab.lenses.instructions.explain import FunctionDelta, function_deltas
from perflab.lenses.instructions.metric import INSTRUCTIONS
from perflab.measure.callgrind.artifacts import (
    KIND_COMMAND,
    KIND_EMPTY,
    KIND_INLINE_FRAMES,
    KIND_OBJECTS,
    KIND_STATEMENT,
    SAMPLE_NAME,
    parts_of,
)
from perflab.measure.callgrind.dumps import instructions_of
from perflab.records.model import Artifact, Benchmark, BenchmarkData, Note, Severity
from perflab.stats.summary import ProcessLevels, process_levels
from perflab.tool_drivers.debuginfo import AddressFrames, frames_from_json
from perflab.tool_output.callgrind import (
    CallgrindPart,
    FunctionCosts,
    FunctionId,
    InstructionCost,
    InstructionCosts,
    combine_parts,
    function_parts,
    normalise_function_id,
)
from perflab.tool_output.symbol_names import NamePairing

# programs a command may run its benchmark's program through: never the program itself
_LAUNCHERS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "env", "time", "nice", "taskset"})


def instructions_difference(
    minuend: Sequence[CallgrindPart], subtrahend: Sequence[CallgrindPart]
) -> InstructionCosts | None:
    """Per-instruction costs of the statement's loop minus the empty loop's (the statement
    alone), instructions whose costs cancel out dropped."""
    first, second = instructions_of(minuend), instructions_of(subtrahend)
    if first is None or second is None or first.events != second.events:
        return None
    # sums kept in lists beside the first row seen, rows built once at the end: there is a row
    # per executed instruction on each side, so per-row records would dominate the cost
    totals: dict[tuple[FunctionId, int], tuple[InstructionCost, list[float]]] = {}
    for sign, rows in ((1.0, first.rows), (-1.0, second.rows)):
        for row in rows:
            key = (row.function, row.address)
            have = totals.get(key)
            if have is None:
                totals[key] = (row, [sign * x for x in row.cost])
                continue
            sums = have[1]
            if len(sums) != len(row.cost):
                raise ValueError(f"rows of {len(sums)} and {len(row.cost)} costs at {key}")
            for i, x in enumerate(row.cost):
                sums[i] += sign * x
    return InstructionCosts(
        first.events,
        tuple(
            InstructionCost(row.function, row.address, row.file, row.line, tuple(sums))
            for row, sums in totals.values()
            if any(sums)
        ),
    )


@dataclass(frozen=True)
class VariantCounts:
    """What analyse derives for one variant from the store."""

    per_iteration_by_repeat: tuple[float, ...]  # in repeat order
    samples: Mapping[str, tuple[float, ...]]  # derived events per repeat
    costs: FunctionCosts | None  # per iteration, normalised, repeat 0
    attributed: FunctionCosts | None  # inline-aware view, when frames were stored
    evidence: InlineEvidence = field(default_factory=InlineEvidence)
    parts: Mapping[FunctionId, tuple[str, ...]] = field(default_factory=dict)
    program: str | None = None
    # per worker process (Sample.block): its repeats' per-iteration counts, and its first
    # repeat's generation (where its callgrind files are)
    processes: tuple[tuple[float, ...], ...] = ()
    first_generations: tuple[int, ...] = ()
    # the same grouping for every counted event (cache events under the cache simulation)
    processes_by_name: Mapping[str, tuple[tuple[float, ...], ...]] = field(default_factory=dict)
    # how this variant's names were respelled as the baseline's (`respelled`)
    spellings: NamePairing = field(default_factory=NamePairing)

    @property
    def levels(self) -> ProcessLevels | None:
        return process_levels(self.processes)


def _per_process(
    data: BenchmarkData, variant: str, name: str = SAMPLE_NAME
) -> tuple[tuple[tuple[float, ...], ...], tuple[int, ...]]:
    """The variant's counts of `name` grouped by worker process (a command's repeats: each a
    process; runs stored before processes were recorded: one process)."""
    grouped: dict[int, list[tuple[int, float]]] = {}
    for sample in data.samples_of(variant, name):
        if not sample.warmup:
            grouped.setdefault(sample.block, []).append((sample.generation, sample.per_iteration))
    ordered = [sorted(grouped[block]) for block in sorted(grouped)]
    return (
        tuple(tuple(v for _, v in group) for group in ordered),
        tuple(group[0][0] for group in ordered),
    )


def _per_iteration_by_name(data: BenchmarkData, variant: str) -> dict[str, tuple[float, ...]]:
    grouped: dict[str, list[tuple[int, float]]] = {}
    for sample in data.samples_of(variant):
        if not sample.warmup:  # repeats counted before the allocator's state settled
            grouped.setdefault(sample.name, []).append((sample.generation, sample.per_iteration))
    return {name: tuple(v for _, v in sorted(values)) for name, values in grouped.items()}


def _loops_of(data: BenchmarkData, variant: str, generation: int) -> int:
    for sample in data.samples_of(variant, SAMPLE_NAME):
        if sample.generation == generation:
            return sample.loops
    return 1


class DumpsRead:
    """What one analysis read from stored callgrind artifacts, by their text: variants that ran
    the same code (an A/A, a setting nothing reads) store the same dumps but for the process id
    and the same inline frames, each parsed once (torch.add's A/A: a third of the analysis)."""

    def __init__(self) -> None:
        self._repeats: dict[
            tuple[tuple[str, ...], tuple[str, ...]], tuple[FunctionCosts, InstructionCosts | None]
        ] = {}
        self._frames: dict[str, dict[str, AddressFrames]] = {}

    def statement(
        self, stmt: Sequence[Artifact], empty: Sequence[Artifact]
    ) -> tuple[FunctionCosts, InstructionCosts | None]:
        """The statement's loop minus the empty loop's: per function, and per instruction."""
        key = (_parts_key(stmt), _parts_key(empty))
        if key not in self._repeats:
            stmt_parts, empty_parts = parts_of(stmt), parts_of(empty)
            costs = combine_parts(stmt_parts) - combine_parts(empty_parts)
            self._repeats[key] = (costs, instructions_difference(stmt_parts, empty_parts))
        return self._repeats[key]

    def frames(self, content: str) -> dict[str, AddressFrames]:
        """Stored inline frames (by object, then address), read back."""
        if content not in self._frames:
            raw: dict[str, dict[str, list[object]]] = json.loads(content)
            self._frames[content] = {
                obj: frames_from_json(by_address) for obj, by_address in raw.items()
            }
        return self._frames[content]


# callgrind's header line naming the process: its parts are the same whichever process it was
_PID_LINE = re.compile(r"^pid:[^\n]*\n", re.MULTILINE)


def _parts_key(artifacts: Sequence[Artifact]) -> tuple[str, ...]:
    """The texts that parse to these artifacts' parts: each without its process id."""
    return tuple(_PID_LINE.sub("", a.content, count=1) for a in artifacts)


def _costs_of_repeat(
    data: BenchmarkData, variant: str, generation: int, read: DumpsRead
) -> tuple[FunctionCosts, InstructionCosts | None, float] | None:
    """Costs of one repeat (statement minus empty loop, or the whole command), the raw
    per-instruction costs, and the scale to per-iteration."""
    scale = 1.0 / _loops_of(data, variant, generation)
    stmt = [a for a in data.artifacts_of(variant, KIND_STATEMENT) if a.generation == generation]
    if stmt:
        empty = [a for a in data.artifacts_of(variant, KIND_EMPTY) if a.generation == generation]
        return *read.statement(stmt, empty), scale
    whole = [a for a in data.artifacts_of(variant, KIND_COMMAND) if a.generation == generation]
    if not whole:
        return None
    parts = parts_of(whole)
    return combine_parts(parts), instructions_of(parts), scale


def _frames_of(
    data: BenchmarkData, variant: str, read: DumpsRead
) -> dict[str, AddressFrames] | None:
    stored = data.artifacts_of(variant, KIND_INLINE_FRAMES)
    if not stored:
        return None
    return read.frames(stored[0].content)


def _identities_of(data: BenchmarkData, variant: str) -> dict[str, str]:
    stored = data.artifacts_of(variant, KIND_OBJECTS)
    if not stored:
        return {}
    raw: dict[str, str | None] = json.loads(stored[0].content)
    return {path: identity for path, identity in raw.items() if identity}


_COMMAND_LINE = re.compile(r"^cmd:\s*(\S+)", re.MULTILINE)
_TOTAL_LINE = re.compile(r"^(?:summary|totals):\s*(\d+)", re.MULTILINE)
MAIN_OBJECT = "[main]"


def main_program(commands: Sequence[tuple[str, float]]) -> str | None:
    """The benchmark's program among the processes callgrind followed ((program, instructions)
    each): not a shell or launcher it ran through, the busiest of the rest. Variants often run
    differently named programs (build-a/bench vs bench-noinline, python3.11 vs python3.12),
    whose own functions must still be compared with each other."""
    named = [(os.path.basename(program), total) for program, total in commands]
    candidates = [(name, total) for name, total in named if name not in _LAUNCHERS] or named
    if not candidates:
        return None
    return max(candidates, key=lambda item: item[1])[0]


def _main_object(data: BenchmarkData, variant: str) -> str | None:
    commands = []
    for artifact in data.artifacts_of(variant):
        match = _COMMAND_LINE.search(artifact.content)
        if match:
            totals = _TOTAL_LINE.findall(artifact.content)
            commands.append((match.group(1), float(sum(int(t) for t in totals))))
    return main_program(commands)


def _renamer(main: str | None) -> Callable[[FunctionId], FunctionId]:
    def rename(fid: FunctionId) -> FunctionId:
        out = normalise_function_id(fid)
        return FunctionId(out.name, MAIN_OBJECT) if main and out.object == main else out

    return rename


def variant_counts(
    data: BenchmarkData, variant: str, read: DumpsRead | None = None
) -> VariantCounts:
    """One variant's counts and function costs read back from its stored samples and callgrind
    artifacts (`read`: what this analysis read already, shared by its variants)."""
    read = read or DumpsRead()
    by_name = _per_iteration_by_name(data, variant)
    processes, first_generations = _per_process(data, variant)
    # the function table: the first process's first compared repeat
    generation = first_generations[0] if first_generations else 0
    repeat = _costs_of_repeat(data, variant, generation, read)
    main = _main_object(data, variant)
    rename = _renamer(main)
    costs = attributed = None
    parts: dict[FunctionId, tuple[str, ...]] = {}
    evidence = InlineEvidence()
    if repeat is not None:
        raw, instructions, scale = repeat
        raw = raw.scaled(scale).without_zero()
        costs = raw.renamed(rename)
        parts = function_parts(raw, rename)
        frames = _frames_of(data, variant, read)
        per_iteration = None
        if instructions is not None:
            per_iteration = instructions.scaled(scale)
        if frames is not None and per_iteration is not None:
            view = reattribute_inlined(per_iteration, frames)
            attributed = view.renamed(rename)
            parts = {**function_parts(view, rename), **parts}
        evidence = inline_evidence(
            raw, per_iteration, frames or {}, rename, _identities_of(data, variant)
        )
    return VariantCounts(
        per_iteration_by_repeat=by_name.get(SAMPLE_NAME, ()),
        samples=by_name,
        costs=costs,
        attributed=attributed,
        evidence=evidence,
        parts=parts,
        program=main,
        processes=processes,
        first_generations=first_generations,
        processes_by_name={name: _per_process(data, variant, name)[0] for name in by_name},
    )


# functions named in the note on disagreeing processes
_NAMED_FUNCTIONS = 3


def process_difference(
    data: BenchmarkData, variant: str, low: int, high: int
) -> tuple[FunctionDelta, ...]:
    """Per-function costs (per iteration) of two repeats of one variant compared, the largest
    differences first: where two worker processes that counted differently differ."""
    read = DumpsRead()
    first = _costs_of_repeat(data, variant, low, read)
    second = _costs_of_repeat(data, variant, high, read)
    if first is None or second is None:
        return ()
    rename = _renamer(_main_object(data, variant))

    def costs_per_iteration(
        repeat: tuple[FunctionCosts, InstructionCosts | None, float],
    ) -> FunctionCosts:
        costs, _, scale = repeat
        return costs.scaled(scale).without_zero().renamed(rename)

    return function_deltas(costs_per_iteration(first), costs_per_iteration(second))


def process_note(
    benchmark: Benchmark, variant: str, counts: VariantCounts, data: BenchmarkData
) -> Note | None:
    """A warning when a variant's worker processes settled at different levels: identical code
    counted differently by process, so the interval spans every process, and which functions
    the difference is in (the lowest process against the highest)."""
    levels = counts.levels
    if levels is None or not levels.disagree:
        return None
    low = min(range(len(levels.levels)), key=levels.levels.__getitem__)
    high = max(range(len(levels.levels)), key=levels.levels.__getitem__)
    deltas = process_difference(
        data, variant, counts.first_generations[low], counts.first_generations[high]
    )
    named = [d for d in deltas if abs(d.delta_self) > 0][:_NAMED_FUNCTIONS]
    where = ""
    if named:
        where = "; the highest differs from the lowest most in " + ", ".join(
            f"{d.name} ({d.object}, {d.delta_self:+,.1f})" for d in named
        )
    counted = ", ".join(f"{level:,.1f}" for level in levels.levels)
    return Note(
        Severity.WARNING,
        f"the {len(levels.levels)} worker processes of `{variant}` counted {counted} "
        f"instructions per iteration ({levels.between:.2%} apart; repeats inside one process "
        f"within {levels.within:.3%}): the count depends on the process, not only on the code, "
        f"so the interval spans every process{where}",
        hint="a verdict needs a difference larger than this spread; docs/lenses/instructions.md "
        "lists what makes processes differ",
        benchmark=benchmark.name,
        variant=variant,
        metric=INSTRUCTIONS,
    )
