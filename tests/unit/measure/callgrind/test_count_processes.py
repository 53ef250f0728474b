"""Several worker processes per variant in the instructions lens: the process is the unit of the
interval, and processes that settle at different levels are reported with where they differ."""

from __future__ import annotations

from typing import Any

import pytest

from perflab.lenses.instructions.measure import InstructionsLens
from perflab.machine.fake_processes import FakeRunner
from perflab.measure.callgrind import count as callgrind_count
from perflab.measure.callgrind import workers as callgrind_workers
from perflab.measure.callgrind.artifacts import KIND_EMPTY, KIND_STATEMENT, SAMPLE_NAME
from perflab.measure.callgrind.count import CountOptions
from perflab.measure.callgrind.count_options import settled
from perflab.measure.callgrind.switching import StatementPlan
from perflab.measure.lens import LensAnalysis, LensContext, MemorySink, NullProgress
from perflab.measure.worker_client import WorkerInfo
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Artifact, Benchmark, Experiment, Sample, Severity, Variant
from perflab.records.settings import Settings

_DUMP = """# callgrind format
events: Ir
cmd: python -u worker.py
desc: Trigger: dump {hint}
ob=(1) /usr/lib/libpython3.11.so.1.0
fl=(1) Objects/typeobject.c
fn=(1) _PyType_Lookup
1 {lookup}
fl=(2) Python/ceval.c
fn=(2) _PyEval_EvalFrameDefault
2 {eval}
"""


def _process(sink: MemorySink, variant: str, process: int, lookup_per_loop: int) -> None:
    """One worker process of two repeats of 10 loops; the type lookup's cost is its level."""
    for repeat in range(2):
        generation = process * 2 + repeat
        empty = _DUMP.format(hint="perflab-empty", lookup=0, eval=50)
        stmt = _DUMP.format(hint="perflab-stmt", lookup=10 * lookup_per_loop, eval=1050)
        for kind, text in ((KIND_EMPTY, empty), (KIND_STATEMENT, stmt)):
            sink.add_artifact(Artifact("b", variant, Metric.INSTRUCTIONS, kind, text, generation))
        sink.add_sample(
            Sample(
                "b",
                variant,
                Metric.INSTRUCTIONS,
                "instructions",
                1000 + 10 * lookup_per_loop,
                loops=10,
                generation=generation,
                block=process,
            )
        )


def _analyse(levels: dict[str, tuple[int, ...]]) -> LensAnalysis:
    sink = MemorySink()
    for variant, lookups in levels.items():
        for process, lookup in enumerate(lookups):
            _process(sink, variant, process, lookup)
    benchmark = Benchmark("b", stmt="x")
    experiment = Experiment((benchmark,), tuple(Variant(v) for v in levels), Settings())
    return InstructionsLens().analyse(
        benchmark, list(levels), sink.data_for("b", Metric.INSTRUCTIONS), experiment
    )


def test_processes_that_agree_give_a_point_and_no_note() -> None:
    analysis = _analyse({"A": (2, 2), "B": (2, 2)})
    (comparison,) = analysis.comparisons
    assert comparison.verdict is Verdict.EQUIVALENT
    assert comparison.ci_low == comparison.ci_high == 1.0
    assert analysis.notes == ()
    out = comparison.to_json()
    assert out["baseline_processes"] == [102.0, 102.0]
    assert out["baseline_repeats"] == [102.0] * 4  # every repeat of every process


def test_a_process_at_another_level_widens_the_interval_and_is_named() -> None:
    # A/A: B's second process settled 2% higher (its type lookups missed the cache)
    analysis = _analyse({"A": (2, 2), "B": (2, 4)})
    (comparison,) = analysis.comparisons
    # the interval spans both of B's processes, widened by how far they are apart: no claim
    assert comparison.verdict is Verdict.INCONCLUSIVE
    spread = 104 / 102
    assert comparison.ci_low == pytest.approx(1.0 / spread)
    assert comparison.ci_high == pytest.approx(104 / 102 * spread)
    (note,) = analysis.notes
    assert note.severity is Severity.WARNING and note.variant == "B"
    assert "the 2 worker processes of `B` counted 102.0, 104.0" in note.message
    assert "_PyType_Lookup (libpython3.11.so.1.0, +2.0)" in note.message


def test_repeats_settle_when_two_in_a_row_agree() -> None:
    assert not settled([9_833.62])
    # torch.add: a process's first repeat before glibc's fastbins settled, then its level
    assert not settled([9_833.62, 9_866.71])
    assert settled([9_833.62, 9_866.71, 9_866.70])
    assert settled([8_743.435, 8_743.435])
    # the handshake's residue between repeats (2.6e-4 on a loaded machine) is settled
    assert settled([9_785.098, 9_783.053])


def test_repeats_counted_before_the_allocator_settled_are_not_compared() -> None:
    sink = MemorySink()
    for process, lookups in enumerate((2, 2)):
        _process(sink, "A", process, lookups)
        _process(sink, "B", process, lookups)
    # B's first process counted one more repeat first, at another level: warm-up
    sink.add_sample(
        Sample("b", "B", Metric.INSTRUCTIONS, "instructions", 900.0, loops=10, generation=9,
               block=0, warmup=True)
    )  # fmt: skip
    benchmark = Benchmark("b", stmt="x")
    experiment = Experiment((benchmark,), (Variant("A"), Variant("B")), Settings())
    analysis = InstructionsLens().analyse(
        benchmark, ["A", "B"], sink.data_for("b", Metric.INSTRUCTIONS), experiment
    )
    (comparison,) = analysis.comparisons
    assert comparison.ci_low == comparison.ci_high == 1.0
    assert comparison.to_json()["variant_repeats"] == [102.0] * 4


def test_two_processes_a_side_at_their_own_levels_make_no_claim() -> None:
    # A/A: both of B's processes happened to settle above both of A's (a third of such pairs
    # when process levels differ beyond the band): the bare interval [103/102, 105/101] would
    # have said `slower`
    analysis = _analyse({"A": (1, 2), "B": (3, 5)})
    (comparison,) = analysis.comparisons
    assert comparison.verdict is Verdict.INCONCLUSIVE
    assert comparison.ci_low < 1 < comparison.ci_high


def test_a_difference_larger_than_the_processes_spread_is_decided() -> None:
    # B really does more: every process ~10% more, processes within 1% of each other
    analysis = _analyse({"A": (2, 2), "B": (12, 13)})
    (comparison,) = analysis.comparisons
    assert comparison.verdict is Verdict.SLOWER
    assert comparison.ci_low > 1.05


def _counted(level: float) -> callgrind_workers.StatementCounts:
    """What a stand-in worker process counted: two repeats at `level` instructions per
    iteration (one loop each, the empty loop counting nothing)."""
    repeat = ({SAMPLE_NAME: level}, {SAMPLE_NAME: 0.0})
    return callgrind_workers.StatementCounts(
        info=WorkerInfo(pid=1, python_version="3.11", implementation="cpython", executable="x"),
        plan=StatementPlan(loops=1, repeats=2),
        texts=({}, {}),
        totals=(repeat, repeat),
        identities={},
        frames=None,
    )


def _measure_processes(
    monkeypatch: pytest.MonkeyPatch, levels: dict[str, list[float]], budget_s: float = 600.0
) -> tuple[list[tuple[str, int]], MemorySink]:
    """InstructionsLens.measure with stand-in valgrind processes (one CPU): which (variant,
    process) it counted, and the notes it left. `levels`: per variant, each process's level."""
    counted: list[tuple[str, int]] = []

    def count(options: Any, job: Any, cpu: Any, workers: Any, done: Any) -> None:
        for process in job.processes:
            counted.append((job.run.variant.name, process))
            done(process, _counted(levels[job.run.variant.name][process]))

    monkeypatch.setattr(callgrind_count, "count_statements", count)
    monkeypatch.setattr(callgrind_count, "store_statement", lambda *args: None)
    benchmark = Benchmark("b", stmt="x")
    experiment = Experiment((benchmark,), tuple(Variant(v) for v in levels), Settings())
    sink = MemorySink()
    # the worker ops' check, in the variant's interpreter: client requests work (no reason against)
    runner = FakeRunner().on_run(r"callgrind_ops\.py$", stdout="")
    context = LensContext(
        experiment, runner, sink, NullProgress(), None, "python3", budget_s=budget_s
    )
    InstructionsLens(CountOptions(Metric.INSTRUCTIONS, parallel=False)).measure(benchmark, context)
    return counted, sink


def test_processes_that_agree_are_two_per_variant(monkeypatch: pytest.MonkeyPatch) -> None:
    counted, sink = _measure_processes(
        monkeypatch, {"A": [9_867.0, 9_867.2, 0.0], "B": [9_867.1, 9_867.0, 0.0]}
    )
    assert sorted(counted) == [("A", 0), ("A", 1), ("B", 0), ("B", 1)]
    assert not sink.notes


def test_processes_that_disagree_get_a_third_per_variant(monkeypatch: pytest.MonkeyPatch) -> None:
    # B's two processes settled 1.2% apart (glibc's allocator state): one more process for
    # every variant, so the widened interval rests on three levels a side
    counted, _ = _measure_processes(
        monkeypatch, {"A": [9_867.0, 9_867.2, 9_867.1], "B": [9_867.1, 9_985.0, 9_867.0]}
    )
    assert sorted(counted) == [(v, p) for v in "AB" for p in range(3)]


def test_a_third_process_the_share_cannot_hold_is_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    counted, sink = _measure_processes(
        monkeypatch, {"A": [9_867.0, 9_867.2, 0.0], "B": [9_867.1, 9_985.0, 0.0]}, budget_s=0.0
    )
    assert len(counted) == 4
    (note,) = sink.notes
    assert "`B`" in note.message and "third process" in note.message
