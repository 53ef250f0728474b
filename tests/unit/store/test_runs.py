"""A stored run read a benchmark at a time (`data_for`: grouped once, in stored order) and
restricted to some benchmarks (`of_benchmarks`: what a published run's page analyses)."""

from __future__ import annotations

from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Artifact, Benchmark, Experiment, Note, Sample, Severity, Variant
from perflab.records.run_facts import MachineInfo
from perflab.store import StoredRun

TIME, CHECK = Metric.TIME, Metric("check")


def _run() -> StoredRun:
    samples = tuple(
        Sample(b, v, TIME, "wall_ns", float(i), block=i)
        for i, (b, v) in enumerate([("x", "a"), ("y", "a"), ("x", "b"), ("y", "b"), ("x", "a")])
    )
    artifacts = (Artifact("y", "a", CHECK, "output", "1"), Artifact("x", "b", TIME, "k", "2"))
    return StoredRun(
        run_id=1,
        created_at="",
        finished_at=None,
        status=RunStatus.COMPLETE,
        perflab_version="0",
        experiment=Experiment(
            (Benchmark("x", stmt="1"), Benchmark("y", stmt="1")), (Variant("a"),)
        ),
        machine=MachineInfo(),
        error=None,
        samples=samples,
        artifacts=artifacts,
        notes=(Note(Severity.INFO, "run"), Note(Severity.INFO, "of y", benchmark="y")),
        variant_info={},
    )


def test_data_for_is_each_benchmark_and_metric_s_share_in_stored_order() -> None:
    run = _run()
    for benchmark in ("x", "y", "z"):
        for metric in (TIME, CHECK):
            data = run.data_for(benchmark, metric)
            assert data.samples == tuple(
                s for s in run.samples if (s.benchmark, s.metric) == (benchmark, metric)
            )
            assert data.artifacts == tuple(
                a for a in run.artifacts if (a.benchmark, a.metric) == (benchmark, metric)
            )
    assert [s.value for s in run.data_for("x", TIME).samples] == [0.0, 2.0, 4.0]


def test_a_run_of_some_benchmarks_keeps_their_data_the_run_s_notes_and_its_experiment() -> None:
    run = _run()
    part = run.of_benchmarks({"x"})
    assert part.experiment == run.experiment
    assert part.data_for("x", TIME) == run.data_for("x", TIME)
    assert part.data_for("y", TIME).samples == () and part.data_for("y", CHECK).artifacts == ()
    assert [n.message for n in part.notes] == ["run"]
