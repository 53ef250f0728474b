"""Plans from more than one probe: the last minutes' probes on this machine join this one's
(budget/machine_speed.py RECENT_PROBES, engine/prepare/recent_probes.py)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from perflab.budget.costs import CostProbe
from perflab.budget.machine_speed import RECENT_PROBES, RECENT_PROBES_S, REFERENCE_S, MachineSpeed
from perflab.budget.plan import plan_budget
from perflab.engine import benchmark_plan
from perflab.engine.benchmark_plan import BenchmarkPlanner, SpeedsMeasured
from perflab.engine.prepare import recent_probes
from perflab.engine.prepare.recent_probes import RecentProbes
from perflab.lenses.rss import RSS
from perflab.machine.fake_processes import FakeRunner
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.model import Benchmark, Experiment, Variant
from tests.support.clocks import SetClockS

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.engine.prepare.recent_probes"

PROBE = CostProbe(
    BenchmarkKind.STATEMENT,
    variants=2,
    startup_s=0.18,
    import_s=0.01,
    fork_s=0.01,
    sample_s=0.01,
    probe_s=0.7,
    speed=MachineSpeed(reference_s=0.24),
)


def _memory(tmp_path: Path) -> tuple[RecentProbes, SetClockS]:
    clock = SetClockS(1_000_000.0)
    directory = tmp_path / "locks"
    return RecentProbes(directory, clock=clock), clock


def test_a_probe_is_joined_by_the_recent_ones_of_its_benchmark_and_machine(
    tmp_path: Path,
) -> None:
    memory, clock = _memory(tmp_path)
    quick = dataclasses.replace(PROBE, startup_s=0.09, speed=MachineSpeed(reference_s=0.18))
    for probe in (quick, quick):
        memory.remember("A", probe, speed_measured=True)
        clock.now_s += 30
    memory.remember("B", dataclasses.replace(quick, startup_s=5.0), speed_measured=True)
    recalled = memory.recall("A", BenchmarkKind.STATEMENT, 2)
    assert len(recalled.same_benchmark) == 2 and len(recalled.speeds) == 3
    joined = PROBE.with_recent(recalled.same_benchmark)
    speed = PROBE.speed.with_recent(recalled.speeds)
    # the medians: this probe's outlier does not move the plan
    assert joined.startup_s == pytest.approx(0.09) and joined.recent == 2
    assert speed.factor == pytest.approx(0.18 / REFERENCE_S)
    assert speed.reference_s == 0.24  # what this probe measured is kept, and said
    plan = plan_budget(30.0, dataclasses.replace(joined, speed=speed), [])
    words = plan.describe()
    assert "the median with two recent probes of this benchmark" in words
    assert "a reference process took 0.24 s, 0.18 s with three recent probes" in words


def test_old_probes_and_torn_lines_are_left_out(tmp_path: Path) -> None:
    memory, clock = _memory(tmp_path)
    memory.remember("A", PROBE, speed_measured=True)
    clock.now_s += RECENT_PROBES_S + 1
    path = tmp_path / "locks" / recent_probes.FILE_NAME
    with path.open("a") as file:
        file.write('{"at": 1, "key": "A"}\n{"at": \n')
    assert memory.recall("A", BenchmarkKind.STATEMENT, 2) == recent_probes.Recalled()


def test_only_the_last_few_join_and_a_carried_speed_is_not_remembered(tmp_path: Path) -> None:
    memory, clock = _memory(tmp_path)
    for index in range(RECENT_PROBES + 3):
        memory.remember("A", PROBE, speed_measured=index % 2 == 0)
        clock.now_s += 1
    recalled = memory.recall("A", BenchmarkKind.STATEMENT, 2)
    assert len(recalled.speeds) == 4  # the probes that measured the speed
    assert PROBE.with_recent(recalled.same_benchmark).recent == RECENT_PROBES


def test_the_file_stays_short_private_and_a_bad_one_is_ignored(tmp_path: Path) -> None:
    memory, clock = _memory(tmp_path)
    for _ in range(800):
        memory.remember("A", PROBE, speed_measured=True)
    path = tmp_path / "locks" / recent_probes.FILE_NAME
    assert path.stat().st_size <= 2 * recent_probes.KEEP_BYTES
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert all(json.loads(line)["key"] == "A" for line in path.read_text().splitlines())
    # a link where the file should be: neither followed nor a failure
    path.unlink()
    target = tmp_path / "elsewhere"
    target.write_text("")
    os.symlink(target, path)
    memory.remember("A", PROBE, speed_measured=True)
    assert target.read_text() == ""
    assert memory.recall("A", BenchmarkKind.STATEMENT, 2) == recent_probes.Recalled()


def test_a_would_fit_counts_perflabs_usual_start_up_from_recent_runs(tmp_path: Path) -> None:
    memory, clock = _memory(tmp_path)
    for before_s in (0.7, 0.6):
        memory.remember("A", PROBE, speed_measured=True, before_s=before_s)
        clock.now_s += 10
    recalled = memory.recall("A", BenchmarkKind.STATEMENT, 2)
    assert recalled.startups_s == (0.7, 0.6)
    slow = dataclasses.replace(PROBE, recent_before_s=recalled.startups_s)
    plan = plan_budget(1.0, slow, [], before_s=1.7)
    # this run's 1.7 s start-up stalled: a next run counts the usual 0.7 s
    assert plan.usual_before_s == pytest.approx(0.7)
    assert "perflab's start-up as 0.7 s (this run's took 1.7 s)" in plan.counted_for_fit()


def test_the_counting_cpus_are_the_lower_median_of_recent_looks(tmp_path: Path) -> None:
    memory, clock = _memory(tmp_path)
    for cpus in (1, 1, 2):  # another run held the second CPU at two of three looks
        memory.remember("B", dataclasses.replace(PROBE, counting_cpus=cpus), speed_measured=True)
        clock.now_s += 10
    recalled = memory.recall("A", BenchmarkKind.STATEMENT, 2)
    assert recalled.counting_cpus == (1, 1, 2)
    assert (
        dataclasses.replace(PROBE, counting_cpus=2)
        .with_recent_cpus(recalled.counting_cpus)
        .counting_cpus
        == 1
    )


def test_a_fixed_cost_lens_learns_what_its_recent_runs_took(tmp_path: Path) -> None:
    from perflab.budget.costs import LensCost, learned_costs
    from perflab.records.kinds import Metric

    memory, clock = _memory(tmp_path)
    rss, time_lens = RSS, Metric.TIME
    for ratio in (1.6, 1.4):
        memory.remember_lens("A", rss, ratio)
        clock.now_s += 10
    memory.remember_lens("B", rss, 3.0)  # another benchmark's: not this one's
    recalled = memory.recall("A", BenchmarkKind.STATEMENT, 2)
    assert recalled.lens_ratios == {rss: (1.6, 1.4)}
    costs = [
        LensCost(rss, minimum_s=10.0, needs="6 generations of 2 workers"),
        LensCost(time_lens, minimum_s=2.0, needs="6 generations", elastic=True),
    ]
    fixed, elastic = learned_costs(costs, {**recalled.lens_ratios, time_lens: (2.0, 2.0)})
    # the median of the model's own 1 and the recent 1.6 and 1.4
    assert fixed.minimum_s == pytest.approx(14.0) and fixed.learned == pytest.approx(1.4)
    assert "x1.40 as its recent runs here took" in fixed.needs
    assert elastic == costs[1]  # a sampling lens takes what it is given: nothing to learn


def test_a_workflows_next_run_plans_with_the_speed_its_last_one_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a bisect makes one run per step in one process: each measured the machine's speed again
    # (0.4 CPU s, 1.6 with valgrind's reference), half of each step's cost
    carried: list[MachineSpeed | None] = []

    def probe(*_: object, speed: MachineSpeed | None, **__: object) -> CostProbe:
        carried.append(speed)
        return dataclasses.replace(PROBE, speed=speed or MachineSpeed(reference_s=0.3))

    monkeypatch.setattr(benchmark_plan, "probe_benchmark", probe)
    speeds = SpeedsMeasured()  # this test's process, measuring nothing yet
    benchmark = Benchmark("b", stmt="pass")
    experiment = Experiment(benchmarks=(benchmark,), variants=(Variant("a"), Variant("b")))
    counted = dataclasses.replace(
        experiment,
        settings=dataclasses.replace(experiment.settings, metrics=(Metric.INSTRUCTIONS,)),
    )
    now_s = [100.0]  # the runs' clock (RunServices.clock)
    for each in (experiment, experiment, counted, counted):
        recent = RecentProbes(tmp_path)
        planner = BenchmarkPlanner(
            FakeRunner(), "python3", None, recent=recent, speeds=speeds, clock=lambda: now_s[0]
        )
        planner.plan(benchmark, each)
    # measured, carried; valgrind's reference missing from it: measured, carried
    assert [speed is None for speed in carried] == [True, False, True, False]
    # a speed older than SPEED_REUSE_S on the runs' clock is measured again
    now_s[0] += benchmark_plan.SPEED_REUSE_S + 1
    BenchmarkPlanner(
        FakeRunner(),
        "python3",
        None,
        recent=RecentProbes(tmp_path),
        speeds=speeds,
        clock=lambda: now_s[0],
    ).plan(benchmark, experiment)
    assert carried[-1] is None
    # runs that must not read what others measured (recent=None) measure their own
    BenchmarkPlanner(FakeRunner(), "python3", None, speeds=speeds).plan(benchmark, experiment)
    assert carried[-1] is None
