"""The budget with real workers: a run stays inside it, expensive imports are forked, a
measured slowdown of the machine plans longer tool costs."""

from __future__ import annotations

import dataclasses
import re
import sys
import time
from pathlib import Path

import pytest

from perflab.api import make_experiment
from perflab.budget import REFERENCE_PROGRAM, BudgetError, lens_costs, plan_budget
from perflab.engine import run_experiment
from perflab.lenses.registry import descriptor_for
from perflab.measure.fork_server import ForkServer
from perflab.measure.probe import probe_benchmark
from perflab.model import Benchmark, Experiment, Metric, RunStatus, Severity, Variant
from perflab.proc import Completed, LaunchSpec, SubprocessRunner
from perflab.store import Store
from tests.conftest import FAST

pytestmark = pytest.mark.integration


def experiment(budget_s: float, **kwargs: object) -> Experiment:
    made = make_experiment(**kwargs)  # type: ignore[arg-type]
    settings = dataclasses.replace(
        FAST, metrics=(Metric.TIME,), budget_s=budget_s, min_measurements_anyway=False
    )
    return dataclasses.replace(made, settings=settings)


def test_a_run_ends_near_its_budget_and_says_its_plan() -> None:
    # a behaviour check with a generous margin, not a speed assertion: 4 s must not take 30
    # (the time lens and the rss lens together; on a loaded machine the minimums may need
    # more than 4 s, and are then measured anyway: the bound is theirs)
    exp = experiment(4.0, stmt="sum(range(100))", variants=["A", "B"])
    exp = dataclasses.replace(
        exp,
        settings=dataclasses.replace(
            exp.settings, metrics=(Metric.TIME, Metric("rss")), min_measurements_anyway=True
        ),
    )
    started = time.monotonic()
    result = run_experiment(exp)
    elapsed = time.monotonic() - started
    assert result.status is RunStatus.COMPLETE and result.comparisons
    (plan,) = [n for n in result.notes if n.message.startswith("used ")]
    assert "of the budget 4 s" in plan.message and "time " in plan.message
    assert "rss " in plan.message
    # each lens's own time beside its share: the parts are what happened, not only the plan
    assert re.search(r"time [0-9.]+ s of its [0-9.]+ s", plan.message), plan.message
    assert re.search(r"rss [0-9.]+ s of its [0-9.]+ s", plan.message), plan.message
    assert elapsed < 30.0


def test_a_budget_that_cannot_hold_the_minimum_is_refused_before_anything_is_stored(
    tmp_path: Path,
) -> None:
    store = Store.open(tmp_path / "s.db")
    # every fresh worker sleeps 0.3 s in its set-up: 2 generations of 2 need more than 1 s
    exp = experiment(0.5, stmt="pass", setup="import time; time.sleep(0.3)", variants=["A", "B"])
    with pytest.raises(BudgetError) as refused:
        run_experiment(exp, store=store)
    assert "the time lens alone needs" in refused.value.message
    assert refused.value.benchmark == "pass"
    assert store.list_runs() == []


def test_min_measurements_anyway_measures_the_minimums_and_says_so() -> None:
    exp = experiment(0.5, stmt="pass", setup="import time; time.sleep(0.3)", variants=["A", "B"])
    exp = dataclasses.replace(
        exp, settings=dataclasses.replace(exp.settings, min_measurements_anyway=True)
    )
    result = run_experiment(exp)
    assert result.status is RunStatus.COMPLETE and result.comparisons
    (plan,) = [n for n in result.notes if n.message.startswith("used ")]
    assert plan.severity is Severity.WARNING and "measured anyway" in plan.message


def test_a_fork_server_imports_once_and_forks_fresh_workers(tmp_path: Path) -> None:
    (tmp_path / "slow_module.py").write_text("import time\ntime.sleep(0.4)\nCALLS = []\n")
    benchmark = Benchmark(
        name="b", stmt="slow_module.CALLS.append(1)", setup="import os, slow_module"
    )
    variant = Variant("A", env={"PYTHONPATH": str(tmp_path)})
    server = ForkServer(
        SubprocessRunner(), benchmark, variant, default_python=sys.executable, cpu=None,
        timeout_s=20,
    )  # fmt: skip
    try:
        assert server.modules == ("os", "slow_module") and server.import_s >= 0.4
        pids = set()
        for generation in range(3):
            started = time.monotonic()
            with server.worker(padding=100 * generation) as worker:
                assert time.monotonic() - started < 0.4  # the import is the server's
                pids.add(worker.pid)
                assert worker.sample(10).wall_ns > 0
                # each child's set-up is its own: what it appended stays in that child
                reply = worker.call({"op": "evaluate", "expr": "len(slow_module.CALLS)"})
                assert reply["value"]["text"] == str(10 + 1)  # + the check's one iteration
        assert len(pids) == 3 and server.forked == 3
    finally:
        server.close()
    assert server.process.poll() is not None


class _Crowded(SubprocessRunner):
    """Runs the probe's reference program with busy processes on its CPU: a real slowdown."""

    def run(
        self, spec: LaunchSpec, *, timeout_s: float | None = None, stdin_text: str | None = None
    ) -> Completed:
        if REFERENCE_PROGRAM not in spec.argv:
            return super().run(spec, timeout_s=timeout_s, stdin_text=stdin_text)
        busy = [
            self.spawn(LaunchSpec((sys.executable, "-c", "while True: pass"), cpu=spec.cpu))
            for _ in range(3)
        ]
        try:
            return super().run(spec, timeout_s=timeout_s, stdin_text=stdin_text)
        finally:
            for process in busy:
                process.kill()
                process.close()


def test_a_measured_slowdown_plans_longer_shares() -> None:
    # the same benchmark probed twice on one CPU; the second time three busy processes share
    # the CPU with the reference runs (not with the benchmark's own probe)
    exp = experiment(60.0, stmt="sum(range(100))", variants=["A", "B"])
    settings = dataclasses.replace(exp.settings, metrics=(Metric.PROFILE, Metric.TIME))
    plans = []
    for runner in (SubprocessRunner(), _Crowded()):
        probe = probe_benchmark(
            exp.benchmarks[0], exp, runner, default_python=sys.executable, cpu=0,
            allowed_cpus=lambda: [0],
        )  # fmt: skip
        models = {m: descriptor_for(m).cost for m in settings.metrics}
        plans.append(plan_budget(60.0, probe, lens_costs(probe, settings, models), anyway=True))
    quiet, crowded = plans
    assert quiet.probe.speed.measured and crowded.probe.speed.measured
    assert crowded.probe.speed.factor > quiet.probe.speed.factor
    # perf's start-up and perf script scale: the profile lens (a fixed cost) plans longer
    assert crowded.share_of(Metric.PROFILE).share_s > quiet.share_of(Metric.PROFILE).share_s
    assert crowded.after_s > quiet.after_s
    assert "a reference process took" in crowded.describe() and "tool costs x" in (
        crowded.describe()
    )
