"""What a workflow finds of the runs it measured itself: a run kept after it was measured into a
store answers a later pair of the same two commits, with the lenses it holds."""

from __future__ import annotations

from pathlib import Path

from perflab.engine.reusable_runs import MeasuredCode
from perflab.machine.fake_processes import FakeRunner
from perflab.records.kinds import Metric
from perflab.records.model import Variant
from perflab.records.results import RunResult
from perflab.workflows import Benchmarked
from perflab.workflows.benchmarked import planned_experiment
from tests.support.fake_git import FakeRepository
from tests.support.scripted_runs import ScriptedRuns

SUBJECT = "perflab.engine.reusable_runs"
BEFORE, AFTER = "a" * 40, "b" * 40


def _benchmark(stmt: str = "f()") -> Benchmarked:
    return Benchmarked(
        stmt=stmt, store_path=None, runner=FakeRunner().on_run(r"^git ", FakeRepository())
    )


def _measured(runs: ScriptedRuns, benchmark: Benchmarked, *metrics: Metric) -> RunResult:
    variants = [Variant(name="good", git=BEFORE), Variant(name="step", git=AFTER)]
    return runs(benchmark.experiment(variants, metrics=metrics), benchmark)


def test_a_kept_run_answers_for_the_lenses_it_holds_and_the_most_first() -> None:
    benchmark = _benchmark()
    runs = ScriptedRuns({BEFORE: 100.0, AFTER: 120.0})
    measured = MeasuredCode((), planned_experiment(benchmark), "p.db")
    assert measured.most_of(BEFORE, AFTER, (Metric.TIME,)) is None
    timed = _measured(runs, benchmark, Metric.TIME)
    measured.keep(timed)
    wanted = (Metric.TIME, Metric.INSTRUCTIONS)
    assert measured.pair(BEFORE, AFTER, wanted) is None  # not every lens
    found = measured.most_of(BEFORE, AFTER, wanted)
    assert found is not None and (found.result.run_id, found.before, found.after) == (
        1,
        "good",
        "step",
    )
    # a run holding neither the first lens nor the pair the other way round answers nothing
    assert measured.most_of(BEFORE, AFTER, (Metric.INSTRUCTIONS,)) is None
    assert measured.most_of(AFTER, BEFORE, (Metric.TIME,)) is None
    # a later run holding more of the lenses is preferred
    measured.keep(_measured(runs, benchmark, *wanted))
    again = measured.most_of(BEFORE, AFTER, wanted)
    assert again is not None and again.result.run_id == 2


def test_nothing_is_kept_without_a_store_or_of_another_benchmark() -> None:
    benchmark = _benchmark()
    runs = ScriptedRuns({BEFORE: 100.0, AFTER: 120.0})
    in_memory = MeasuredCode((), planned_experiment(benchmark), "")
    in_memory.keep(_measured(runs, benchmark, Metric.TIME))
    assert in_memory.most_of(BEFORE, AFTER, (Metric.TIME,)) is None
    other = _benchmark("g()")
    stored = MeasuredCode((), planned_experiment(other), "p.db")
    stored.keep(_measured(runs, benchmark, Metric.TIME))
    assert stored.most_of(BEFORE, AFTER, (Metric.TIME,)) is None


def test_what_was_measured_is_read_from_the_store_itself(tmp_path: Path) -> None:
    """No store, or an SQLite file not made yet, holds nothing measured (and is not created by
    asking): a workflow then measures every commit."""
    from perflab.engine.reusable_runs import MeasuredCode
    from perflab.records.kinds import Metric
    from perflab.records.model import Benchmark, Experiment, Variant

    # built directly: make_experiment would resolve git= through git, a process
    planned = Experiment(
        benchmarks=(Benchmark("prog", cmd="./prog"),), variants=(Variant(name="a", git="HEAD"),)
    )
    for location in (None, tmp_path / "new" / "b.db"):
        measured = MeasuredCode.read(location, planned)
        assert measured.value("0" * 40, Metric.INSTRUCTIONS) is None
        assert measured.pair("0" * 40, "1" * 40, (Metric.INSTRUCTIONS,)) is None
    assert not (tmp_path / "new").exists()
