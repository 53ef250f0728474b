"""The budget with real workers: a run stays inside it, expensive imports are forked, a
measured slowdown of the machine plans longer tool costs."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from perflab.api import make_experiment
from perflab.budget.costs import lens_costs
from perflab.budget.machine_speed import REFERENCE_PROGRAM
from perflab.budget.plan import BudgetError, plan_budget
from perflab.engine import run_experiment
from perflab.engine.prepare.probe import ProbeHost, probe_benchmark
from perflab.lenses.registry import descriptor_for
from perflab.lenses.rss import RSS
from perflab.machine.proc import Completed, LaunchSpec, SubprocessRunner
from perflab.measure.fork_server import ForkServerClient
from perflab.measure.worker_client import WorkerLaunch
from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Benchmark, Experiment, Severity, Variant
from perflab.store import SqliteStore
from tests.support.fast_settings import FAST

pytestmark = pytest.mark.integration


def experiment(
    budget_s: float, settings: dict[str, Any] | None = None, **kwargs: object
) -> Experiment:
    made = make_experiment(**kwargs)  # type: ignore[arg-type]
    settings = dataclasses.replace(
        FAST, metrics=(Metric.TIME,), budget_s=budget_s, **(settings or {})
    )
    return dataclasses.replace(made, settings=settings)


def test_a_run_ends_near_its_budget_and_says_its_plan() -> None:
    # a behaviour check with a generous margin, not a speed assertion: 4 s must not take 30
    # (the time lens and the rss lens together; on a loaded machine the minimums may need
    # more than 4 s, and are then measured anyway: the bound is theirs)
    exp = experiment(4.0, stmt="sum(range(100))", variants=["A", "B"])
    exp = dataclasses.replace(
        exp,
        settings=dataclasses.replace(exp.settings, metrics=(Metric.TIME, RSS)),
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
    # the bound is the budget's, or the minimums' where they did not fit
    need = re.search(r"the minimums need ([0-9.]+) s", plan.message)
    assert elapsed < max(30.0, 4 * float(need.group(1)) if need else 0.0)


def test_strict_a_budget_that_cannot_hold_the_minimum_is_refused_before_anything_is_stored(
    tmp_path: Path,
) -> None:
    store = SqliteStore.open(tmp_path / "s.db")
    # every fresh worker sleeps 0.3 s in its set-up: 2 generations of 2 need more than 1 s
    exp = experiment(
        0.5,
        {"strict_budget": True},
        stmt="pass",
        setup="import time; time.sleep(0.3)",
        variants=["A", "B"],
    )
    with pytest.raises(BudgetError) as refused:
        run_experiment(exp, store=store)
    assert "the time lens alone needs" in refused.value.message
    assert refused.value.benchmark == "pass"
    assert store.list_runs() == []


def test_by_default_the_minimums_are_measured_and_the_overrun_is_a_warning() -> None:
    # the budget is a target: the same too-small budget measures, and ends with a warning
    exp = experiment(0.5, stmt="pass", setup="import time; time.sleep(0.3)", variants=["A", "B"])
    result = run_experiment(exp)
    assert result.status is RunStatus.COMPLETE and result.comparisons
    (plan,) = [n for n in result.notes if n.message.startswith("used ")]
    assert "measured anyway" in plan.message
    (over,) = [n for n in result.notes if n.message.startswith("took ")]
    assert over.severity is Severity.WARNING
    assert "of --budget 0.5: the time lens needs about" in over.message
    assert over.hint is not None and "--strict-budget" in over.hint


def test_a_fork_server_imports_once_and_forks_fresh_workers(tmp_path: Path) -> None:
    (tmp_path / "slow_module.py").write_text("import time\ntime.sleep(0.4)\nCALLS = []\n")
    benchmark = Benchmark(
        name="b", stmt="slow_module.CALLS.append(1)", setup="import os, slow_module"
    )
    variant = Variant("A", env={"PYTHONPATH": str(tmp_path)})
    server = ForkServerClient(
        SubprocessRunner(), benchmark, variant, WorkerLaunch(sys.executable, cpu=None, timeout_s=20)
    )
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


class _Slowed(SubprocessRunner):
    """Runs the probe's reference program for real and reports it 4x slower: busy processes
    crowding its CPU slowed it by a factor the machine's own load decided (at load 10 the
    crowded run was no slower than the plain one)."""

    def run(
        self, spec: LaunchSpec, *, timeout_s: float | None = None, stdin_text: str | None = None
    ) -> Completed:
        done = super().run(spec, timeout_s=timeout_s, stdin_text=stdin_text)
        if REFERENCE_PROGRAM not in spec.argv:
            return done
        return dataclasses.replace(done, wall_ns=4 * done.wall_ns)


def test_a_measured_slowdown_plans_longer_shares() -> None:
    # the same benchmark probed twice on one CPU; the second time the reference runs (not the
    # benchmark's own probe) are reported 4x slower
    exp = experiment(60.0, stmt="sum(range(100))", variants=["A", "B"])
    settings = dataclasses.replace(exp.settings, metrics=(Metric.PROFILE, Metric.TIME))
    plans = []
    for runner in (SubprocessRunner(), _Slowed()):
        host = ProbeHost(runner, sys.executable, cpu=0, allowed_cpus=lambda: [0])
        probe = probe_benchmark(exp.benchmarks[0], exp, host)
        models = {m: descriptor_for(m).planning.cost for m in settings.metrics}
        plans.append(plan_budget(60.0, probe, lens_costs(probe, settings, models)))
    quiet, crowded = plans
    assert quiet.probe.speed.measured and crowded.probe.speed.measured
    assert crowded.probe.speed.factor > quiet.probe.speed.factor
    # perf's start-up and perf script scale: the profile lens (a fixed cost) plans longer
    assert crowded.share_of(Metric.PROFILE).share_s > quiet.share_of(Metric.PROFILE).share_s
    assert crowded.after_s > quiet.after_s
    assert "a reference process took" in crowded.describe() and "tool costs x" in (
        crowded.describe()
    )


def test_perflabs_start_up_is_counted_from_perflab_not_from_the_process() -> None:
    # a shell that sleeps, then execs perflab in the process it created before the sleep
    program = (
        "import time, perflab.machine.started as s, perflab.machine.host as h; "
        "print(time.monotonic() - s.STARTED_AT_S, h.process_age_s())"
    )
    done = subprocess.run(
        ["sh", "-c", f'sleep 2 && exec "{sys.executable}" -c "{program}"'],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    since_started, process_age = map(float, done.stdout.split())
    assert process_age >= 2.0  # the process's age holds the shell's sleep
    assert since_started < process_age - 1.5  # perflab's own start does not


def test_a_time_lens_that_stops_once_precise_says_so() -> None:
    # a precision and a band any A/A reaches at its minimums (an interval narrower than the
    # target that still straddles the band's edge settles nothing): the lens stops long before
    # its share ends, and the run says why its lens took less than planned
    settings = {"target_precision": 0.5, "equivalence_band": 0.5}
    exp = experiment(60.0, settings, stmt="sum(range(100))", variants=["A", "B"])
    result = run_experiment(exp)
    stopped = [n for n in result.notes if n.message.startswith("the time lens stopped")]
    if not stopped:
        # a busy machine may keep even this band unsettled until most of the share is spent:
        # then the rule under test did not apply (the unit tests hold the note's wording)
        verdicts = {c.verdict.value for c in result.comparisons if c.metric is Metric.TIME}
        pytest.skip(f"the machine was too busy for an A/A to settle early: {verdicts}")
    (note,) = stopped
    assert "every comparison was precise enough" in note.message
    assert note.severity is Severity.INFO and note.metric is Metric.TIME
