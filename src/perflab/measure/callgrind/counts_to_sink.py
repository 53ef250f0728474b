"""Storing what the counting processes handed back, from the calling thread. Each repeat's dumps are
stored as artifacts, its totals as samples (statement minus empty loop), with the objects that ran
and their inline frames, and what the variant was counted with (its variant info)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from perflab.measure.callgrind.artifacts import (
    KIND_COMMAND,
    KIND_EMPTY,
    KIND_INLINE_FRAMES,
    KIND_OBJECTS,
    KIND_STATEMENT,
    SAMPLE_NAME,
)
from perflab.measure.callgrind.count_options import MAX_SETTLING_REPEATS, CountOptions, CountRun
from perflab.measure.callgrind.dumps import (
    analysis_cache,
    derived_totals,
    instructions_of,
    object_identities,
    symbolise_inline_frames,
)
from perflab.measure.callgrind.switching import StatementPlan
from perflab.measure.callgrind.workers import CommandCounts, StatementCounts
from perflab.records.errors import ConfigError
from perflab.records.model import Artifact
from perflab.records.run_facts import VariantInfo
from perflab.tool_output.callgrind import (
    CallgrindPart,
    FunctionCosts,
    InstructionCosts,
    combine_parts,
)
from perflab.tool_output.callgrind_format import CallgrindFormatError, parse_callgrind


def store_statement(
    options: CountOptions, run: CountRun, counts: StatementCounts, process: int, cpu: int | None
) -> None:
    """One worker process's repeats: generation numbers every repeat of the variant (the
    process's repeats follow each other), block is the process."""
    run.context.sink.add_variant_info(
        run.variant.name,
        VariantInfo(python_version=counts.info.python_version, executable=counts.info.executable),
    )
    for repeat in range(len(counts.texts)):
        store_repeat(options, run, counts, process, repeat, cpu)
    fix_plan(run, counts.plan, process)


def store_repeat(
    options: CountOptions,
    run: CountRun,
    counts: StatementCounts,
    process: int,
    repeat: int,
    cpu: int | None,
) -> None:
    """Stores one counted repeat of a statement: its dumps as artifacts and its totals (statement
    minus empty loop) as samples."""
    texts, (stmt_totals, empty_totals) = counts.texts[repeat], counts.totals[repeat]
    # processes number their repeats apart: each may add settling repeats
    generation = process * (max(1, options.repeats) + MAX_SETTLING_REPEATS) + repeat
    for kind in (KIND_EMPTY, KIND_STATEMENT):
        run.context.sink.add_artifact(
            Artifact(
                run.benchmark.name,
                run.variant.name,
                run.metric,
                kind,
                texts[kind],
                generation=generation,
            )
        )
    if generation == 0:
        add_identities(run, counts.identities)
        if counts.frames is not None:
            add_frames(run, counts.frames)
    for name, value in stmt_totals.items():
        run.context.sink.add_sample(
            run.sample(
                name,
                value - empty_totals.get(name, 0.0),
                loops=counts.plan.loops,
                generation=generation,
                block=process,
                cpu=cpu,
                warmup=repeat < counts.plan.warmup,
            )
        )


def fix_plan(run: CountRun, plan: StatementPlan, process: int) -> None:
    """What the variant's processes were counted with, for its variant info."""
    counted_with = run.counted_with
    loops = counted_with.loops_by_process
    loops[str(process)] = plan.loops
    counted_with.loops = loops.get("0", plan.loops)
    counted_with.repeats = plan.repeats - plan.warmup
    counted_with.processes = len(loops)
    counted_with.switched_by = plan.switch
    # every process of the variant toggled collection (else: why not, in one of them)
    counted_with.collection_toggled = counted_with.collection_toggled is not False and plan.toggled
    if plan.why_not_toggled is not None:
        counted_with.why_not_collection_toggled = plan.why_not_toggled
    if plan.warmup:
        counted_with.settling_repeats[str(process)] = plan.warmup


def store_frames(options: CountOptions, run: CountRun, instructions: InstructionCosts) -> None:
    cache = analysis_cache(options)
    add_frames(run, symbolise_inline_frames(run.context.runner, instructions, cache))


def add_frames(run: CountRun, frames: Mapping[str, Mapping[str, Any]]) -> None:
    """Stores the inline frames of the code a variant ran."""
    run.context.sink.add_artifact(
        Artifact(
            run.benchmark.name,
            run.variant.name,
            run.metric,
            KIND_INLINE_FRAMES,
            json.dumps(frames, sort_keys=True),
        )
    )
    run.counted_with.inline_frames = sorted(frames)


def store_identities(run: CountRun, costs: FunctionCosts) -> None:
    add_identities(run, object_identities(fid.object for fid in costs.functions))


def add_identities(run: CountRun, identities: Mapping[str, str | None]) -> None:
    """Stores the identities of the objects a variant ran."""
    run.context.sink.add_artifact(
        Artifact(
            run.benchmark.name,
            run.variant.name,
            run.metric,
            KIND_OBJECTS,
            json.dumps(identities, sort_keys=True),
        )
    )


def store_command(
    options: CountOptions, run: CountRun, counts: CommandCounts, cpu: int | None
) -> None:
    for repeat, dumps in enumerate(counts.repeats):
        loops = counts.loops[repeat] if counts.loops else 1
        store_command_dumps(options, run, dumps, repeat, inline=counts.inline, cpu=cpu, loops=loops)
    run.counted_with.repeats = len(counts.repeats)
    if options.region is not None:
        run.counted_with.region = options.region


def store_command_dumps(
    options: CountOptions,
    run: CountRun,
    dumps: Sequence[tuple[str, str]],
    repeat: int,
    *,
    inline: bool,
    cpu: int | None,
    loops: int = 1,
) -> None:
    """Stores one counted run of a command: its dumps as artifacts and its totals as samples."""
    parts = stored_parts(run, dumps, repeat)
    costs = combine_parts(parts)
    totals = derived_totals(costs)
    check_region_ran(options.region, run, totals)
    for name, value in totals.items():
        # each repeat of a command is a process of its own
        run.context.sink.add_sample(
            run.sample(name, value, loops=loops, generation=repeat, block=repeat, cpu=cpu)
        )
    if repeat == 0:
        store_identities(run, costs)
    if inline and repeat == 0:
        instructions = instructions_of(parts)
        if instructions is not None:
            store_frames(options, run, instructions)


def stored_parts(
    run: CountRun, dumps: Sequence[tuple[str, str]], repeat: int
) -> list[CallgrindPart]:
    """One repeat's callgrind files, each stored as an artifact, parsed."""
    parts: list[CallgrindPart] = []
    for _, text in dumps:
        try:
            parts.extend(parse_callgrind(text).parts)
        except CallgrindFormatError as error:
            raise run.error(f"cannot read callgrind's output: {error}") from error
        run.context.sink.add_artifact(
            Artifact(
                run.benchmark.name,
                run.variant.name,
                run.metric,
                KIND_COMMAND,
                text,
                generation=repeat,
            )
        )
    return parts


def check_region_ran(region: str | None, run: CountRun, totals: Mapping[str, float]) -> None:
    """A --region function that counted nothing never ran: a wrong or inlined name."""
    if region is not None and totals[SAMPLE_NAME] == 0:
        raise ConfigError(
            f"the region function {region!r} never ran: callgrind counted nothing inside it",
            hint="check the name (callgrind matches the demangled name; * is a wildcard, "
            "e.g. 'ns::kernel*'); an inlined function never runs as a function of its own "
            "and yields zero: mark it __attribute__((noinline)) or name its caller",
            variant=run.variant.name,
            benchmark=run.benchmark.name,
        )
