"""The run loop (`perflab.engine.run`) in memory: an experiment of variants measured through
the time lens with scripted workers behind `FakeRunner`, stored and analysed, no process
started; a variant whose worker fails is recorded and the others compared; a path that does
not exist stops the run before anything is stored."""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from perflab.engine import RunServices, run_experiment
from perflab.engine.run import probed_natively
from perflab.machine.fake_processes import FakeProcess, FakeRunner
from perflab.machine.proc import Completed, LaunchSpec, count_stopped
from perflab.records.errors import ConfigError
from perflab.records.kinds import BenchmarkKind, Metric, RunStatus, Verdict
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.store import SqliteStore
from tests.support.clocks import FakeClockS
from tests.support.cost_probes import QUICK
from tests.support.fast_settings import FAST
from tests.support.scripted_worker import ScriptedWorker

SUBJECT = "perflab.engine.run"

BENCH = Benchmark("b", stmt="f()", setup="pass")
# unpinned (no CPU lock to take) and without per-run caches: nothing outside the test is touched
SETTINGS = dataclasses.replace(
    FAST, metrics=(Metric.TIME,), pin=False, share_caches=True, budget_s=0.2
)


def _ns_per_loop(spec: LaunchSpec) -> float:
    return 800.0 if (spec.env or {}).get("FAST") == "1" else 1000.0


def _runner(worker: Callable[[LaunchSpec], FakeProcess] | None = None) -> FakeRunner:
    """The processes a run starts besides its workers: the machine's reference loop and the
    tools' versions it records."""
    runner = FakeRunner()
    runner.on_spawn("statement_worker", worker or ScriptedWorker(_ns_per_loop))
    runner.on_run(r"--version$", stdout="tool 1.0\n")
    runner.on_run("import time", Completed((), 0, "0.05\n", "", 50_000_000))
    return runner


def _services(runner: FakeRunner) -> RunServices:
    """The run's services with every outside thing faked: processes, interpreter, clock."""
    return RunServices(runner=runner, default_python="/usr/bin/python3", clock=FakeClockS())


def _experiment(*variants: Variant) -> Experiment:
    return Experiment(benchmarks=(BENCH,), variants=variants, settings=SETTINGS)


def test_two_variants_through_one_lens_are_measured_stored_and_compared() -> None:
    store = SqliteStore.in_memory()
    runner = _runner()
    experiment = _experiment(Variant("A"), Variant("B", env={"FAST": "1"}))
    result = run_experiment(experiment, store=store, services=_services(runner))
    assert result.status is RunStatus.COMPLETE and result.failures == ()
    [comparison] = result.comparisons
    assert (comparison.baseline, comparison.variant) == ("A", "B")
    assert comparison.metric is Metric.TIME and comparison.verdict is Verdict.FASTER
    assert comparison.ratio == pytest.approx(0.8)
    # what was measured is in the store the run was given, as the result says
    stored = store.load_run(result.run_id)
    assert stored.status is RunStatus.COMPLETE
    assert {s.variant for s in stored.samples if s.metric is Metric.TIME} == {"A", "B"}
    assert stored.machine["tools"]["perf"] == "tool 1.0"
    # every process the run started has ended: the workers quit, anything else was stopped
    assert runner.spawned and all(p.returncode is not None for p in runner.spawned)
    assert any(p.returncode == 0 for p in runner.spawned)
    assert {(p.spec.env or {}).get("FAST") for p in runner.spawned if p.returncode == 0} == {
        None,
        "1",
    }


def test_a_benchmark_measured_by_some_lenses_is_measured_and_compared_by_those_alone() -> None:
    timed = dataclasses.replace(BENCH, measured_by=(Metric.TIME,))
    tracked = Benchmark("t", stmt="f()", measured_by=(Metric("track"),))

    def value(spec: LaunchSpec, request: object) -> dict[str, object]:
        fast = (spec.env or {}).get("FAST") == "1"
        return {"ok": True, "value": 2.0 if fast else 4.0, "type": "int", "unit": None}

    runner = _runner(ScriptedWorker(_ns_per_loop, handlers={"track_value": value}))
    settings = dataclasses.replace(SETTINGS, metrics=(Metric.TIME, Metric("track")))
    experiment = Experiment(
        benchmarks=(timed, tracked),
        variants=(Variant("A"), Variant("B", env={"FAST": "1"})),
        settings=settings,
    )
    result = run_experiment(experiment, store=SqliteStore.in_memory(), services=_services(runner))
    assert result.status is RunStatus.COMPLETE
    measured = {(c.benchmark, c.metric) for c in result.comparisons}
    assert measured == {("b", Metric.TIME), ("t", Metric("track"))}
    (track,) = [c for c in result.comparisons if c.benchmark == "t"]
    assert track.ratio == 0.5 and track.verdict is Verdict.FASTER


def test_a_variant_whose_worker_fails_is_recorded_and_the_others_are_compared() -> None:
    good = ScriptedWorker(_ns_per_loop)
    broken = ScriptedWorker(_ns_per_loop, fail_setup="Traceback ...\nNameError: f")

    def spawn(spec: LaunchSpec) -> FakeProcess:
        return (broken if (spec.env or {}).get("BROKEN") == "1" else good)(spec)

    runner = _runner(spawn)
    experiment = _experiment(
        Variant("A"), Variant("B", env={"FAST": "1"}), Variant("C", env={"BROKEN": "1"})
    )
    result = run_experiment(experiment, services=_services(runner))
    assert result.status is RunStatus.INCOMPLETE
    assert len(result.failures) == 1 and "NameError: f" in str(result.failures[0])
    assert [(c.baseline, c.variant) for c in result.comparisons] == [("A", "B")]
    with pytest.raises(type(result.failures[0])):
        result.raise_on_failure()


def test_the_leftovers_noted_are_the_lens_s_own_not_another_thread_s() -> None:
    """A bisect builds one commit on another thread while it measures another: what the build
    left and perflab stopped is not said of the benchmark."""
    worker = ScriptedWorker(_ns_per_loop, left_at_quit=2)

    def spawn(spec: LaunchSpec) -> FakeProcess:
        build = threading.Thread(target=count_stopped, args=(1000,))  # a build's leftovers
        build.start()
        build.join()
        return worker(spec)

    result = run_experiment(
        _experiment(Variant("A"), Variant("B")), services=_services(_runner(spawn))
    )
    (left,) = [n.message for n in result.notes if "the benchmark left" in n.message]
    said = re.search(r"the benchmark left (\d+) processes running", left)
    # each worker quit in the lens says 2 (a probe's worker quits before the lens measures)
    assert said is not None and 0 < int(said.group(1)) <= 2 * worker.started, left


def test_a_variant_directory_that_does_not_exist_stops_the_run_before_it_is_stored(
    tmp_path: Path,
) -> None:
    store = SqliteStore.in_memory()
    missing = Variant("B", cwd=str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="missing"):
        run_experiment(
            _experiment(Variant("A"), missing), store=store, services=RunServices(runner=_runner())
        )
    assert store.list_runs() == []


def test_perflab_s_start_up_is_read_on_the_run_s_clock() -> None:
    # the fake clock starts at 0: a process started 5 s before it spent 5 s starting up
    services = dataclasses.replace(_services(_runner()), started_at_s=-5.0)
    experiment = _experiment(Variant("A"), Variant("B"))
    result = run_experiment(experiment, store=SqliteStore.in_memory(), services=services)
    assert any(re.search(r"perflab's start-up 5\.\d s", note.message) for note in result.notes)


def test_runs_sharing_their_services_plan_with_the_speed_the_first_measured() -> None:
    def references(runner: FakeRunner) -> int:
        return sum("import time" in " ".join(spec.argv) for spec, _ in runner.calls)

    runner = _runner()
    services = _services(runner)
    experiment = _experiment(Variant("A"), Variant("B"))
    run_experiment(experiment, store=SqliteStore.in_memory(), services=services)
    measured = references(runner)
    run_experiment(experiment, store=SqliteStore.in_memory(), services=services)
    again = references(runner) - measured
    # a run with services of its own measures the speed again
    run_experiment(experiment, store=SqliteStore.in_memory(), services=_services(runner))
    assert (measured > 0, again, references(runner) - measured - again) == (True, 0, measured)


def test_the_probe_ran_the_baseline_natively_where_it_probed_its_statement() -> None:
    experiment = _experiment(Variant("a"), Variant("b"))
    # the probe's child ran the set-up and the statement: the baseline's native run is done
    assert probed_natively(experiment, QUICK) == {"a"}
    # a probe that failed ran nothing to the end; a command's probe fills no statement's JIT
    assert probed_natively(experiment, dataclasses.replace(QUICK, failed=True)) == set()
    command = dataclasses.replace(QUICK, kind=BenchmarkKind.COMMAND)
    assert probed_natively(experiment, command) == set()
