"""What the callgrind counter stores of what its processes handed back (measure/callgrind/
counts_to_sink.py): samples as statement minus empty loop, repeats numbered apart per process,
settling repeats marked, the variant info the processes add up to, and a command's dumps that
cannot be read, or a region that never ran, as errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.machine.fake_processes import FakeRunner
from perflab.measure.callgrind.artifacts import (
    KIND_COMMAND,
    KIND_EMPTY,
    KIND_OBJECTS,
    KIND_STATEMENT,
    SAMPLE_NAME,
)
from perflab.measure.callgrind.count_options import MAX_SETTLING_REPEATS, CountOptions, CountRun
from perflab.measure.callgrind.counts_to_sink import fix_plan, store_command, store_statement
from perflab.measure.callgrind.switching import StatementPlan
from perflab.measure.callgrind.workers import CommandCounts, StatementCounts
from perflab.measure.lens import MemorySink
from perflab.measure.worker_client import WorkerInfo
from perflab.records.errors import BenchmarkFailedError, ConfigError
from perflab.records.kinds import Metric
from perflab.records.model import Variant
from tests.support.fast_settings import FAST
from tests.support.lens_contexts import BENCH, lens_context

PARTS = (Path(__file__).parents[3] / "golden" / "data" / "callgrind" / "parts.out").read_text()
INFO = WorkerInfo(7, "3.11.2", "CPython", "/usr/bin/python3")


def _run() -> tuple[CountRun, MemorySink]:
    context, sink = lens_context(FakeRunner(), FAST)
    return CountRun(BENCH, Variant("A"), context, {}, Metric.INSTRUCTIONS), sink


def _counts(plan: StatementPlan) -> StatementCounts:
    """`plan.repeats` repeats, the statement counting 1,000 more instructions each time."""
    texts = tuple(
        {KIND_EMPTY: f"empty {r}", KIND_STATEMENT: f"stmt {r}"} for r in range(plan.repeats)
    )
    totals = tuple(
        ({SAMPLE_NAME: 5_000.0 + 1_000 * r}, {SAMPLE_NAME: 4_000.0}) for r in range(plan.repeats)
    )
    return StatementCounts(INFO, plan, texts, totals, {"/usr/bin/python3": "build-id"}, None)


def test_a_repeat_s_sample_is_the_statement_minus_the_empty_loop() -> None:
    run, sink = _run()
    store_statement(
        CountOptions(Metric.INSTRUCTIONS),
        run,
        _counts(StatementPlan(loops=100, repeats=2)),
        0,
        cpu=3,
    )
    assert [(s.value, s.loops, s.generation, s.block, s.cpu) for s in sink.samples] == [
        (1_000.0, 100, 0, 0, 3),
        (2_000.0, 100, 1, 0, 3),
    ]
    kinds = [(a.kind, a.generation) for a in sink.artifacts]
    # the dumps of every repeat; the objects that ran, once
    assert kinds == [
        (KIND_EMPTY, 0),
        (KIND_STATEMENT, 0),
        (KIND_OBJECTS, 0),
        (KIND_EMPTY, 1),
        (KIND_STATEMENT, 1),
    ]
    assert sink.variant_info["A"]["python_version"] == "3.11.2"


def test_each_process_numbers_its_repeats_apart_and_its_settling_repeats_are_warm_up() -> None:
    run, sink = _run()
    options = CountOptions(Metric.INSTRUCTIONS, repeats=2)
    store_statement(options, run, _counts(StatementPlan(loops=100, repeats=3, warmup=1)), 1, None)
    first = 1 * (2 + MAX_SETTLING_REPEATS)
    assert [(s.generation, s.block, s.warmup) for s in sink.samples] == [
        (first, 1, True),
        (first + 1, 1, False),
        (first + 2, 1, False),
    ]
    assert KIND_OBJECTS not in {a.kind for a in sink.artifacts}  # stored with generation 0


def test_the_variant_info_adds_up_the_processes() -> None:
    run, _ = _run()
    fix_plan(run, StatementPlan(loops=100, repeats=2, toggled=True), 0)
    fix_plan(
        run,
        StatementPlan(
            loops=120, repeats=3, warmup=1, toggled=False, why_not_toggled="valgrind 3.15"
        ),
        1,
    )
    assert run.counted_with.to_json() == {
        "loops_by_process": {"0": 100, "1": 120},
        "loops": 100,  # the first process's
        "repeats": 2,
        "processes": 2,
        "switched_by": "client requests",
        # one process that could not toggle collection makes the variant's answer no, with why
        "collection_toggled": False,
        "why_not_collection_toggled": "valgrind 3.15",
        "settling_repeats": {"1": 1},
    }


def test_a_command_s_repeats_are_stored_with_their_totals() -> None:
    run, sink = _run()
    counts = CommandCounts(
        repeats=((("callgrind.out.1", PARTS),), (("callgrind.out.2", PARTS),)), inline=False
    )
    store_command(CountOptions(Metric.INSTRUCTIONS), run, counts, cpu=2)
    assert [
        (s.name, s.value, s.generation, s.block) for s in sink.samples if s.name == SAMPLE_NAME
    ] == [
        (SAMPLE_NAME, 160.0, 0, 0),
        (SAMPLE_NAME, 160.0, 1, 1),
    ]
    assert [a.kind for a in sink.artifacts].count(KIND_COMMAND) == 2
    assert run.counted_with.to_json() == {"repeats": 2}


def test_a_dump_that_cannot_be_read_fails_the_variant() -> None:
    run, _ = _run()
    counts = CommandCounts(
        repeats=((("callgrind.out.1", "events: Ir\nfn=(1) f\n10 x\n"),),), inline=False
    )
    with pytest.raises(BenchmarkFailedError, match="cannot read callgrind's output") as error:
        store_command(CountOptions(Metric.INSTRUCTIONS), run, counts, cpu=None)
    assert error.value.variant == "A"


def test_a_region_that_counted_nothing_is_a_wrong_or_inlined_name() -> None:
    run, _ = _run()
    empty = "version: 1\ncreator: t\npositions: line\nevents: Ir\nsummary: 0\ntotals: 0\n"
    counts = CommandCounts(repeats=((("callgrind.out.1", empty),),), inline=False)
    with pytest.raises(ConfigError, match="'kernel' never ran"):
        store_command(CountOptions(Metric.INSTRUCTIONS, region="kernel"), run, counts, cpu=None)
