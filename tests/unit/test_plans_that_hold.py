"""Cost models that hold on a loaded machine: what each counts of the machine's speed, and the
share a sampling lens gets once the lenses before it overran."""

from __future__ import annotations

import dataclasses

import pytest

from perflab.lenses.rss.cost import REFERENCE_CPU_S, RSS_BLOCKS, RSS_TRACED_SLOWDOWN, rss_cost
from perflab.lenses.time.cost import TIME_GENERATION_CLOSE_S, time_cost
from perflab.plan.budget import REFERENCE_S, CostProbe, MachineSpeed, elastic_share, plan_budget
from perflab.records.model import BenchmarkKind, Metric, Settings

QUICK = CostProbe(
    BenchmarkKind.STATEMENT,
    variants=2,
    startup_s=0.05,
    import_s=0.01,
    fork_s=0.01,
    sample_s=0.01,
    probe_s=0.2,
)


def _at(speed: MachineSpeed) -> CostProbe:
    return dataclasses.replace(QUICK, speed=speed)


def test_rss_counts_the_load_not_a_slower_cpu_twice() -> None:
    """The probe's sample ran on this CPU: a CPU twice as slow but idle (wall and CPU time of
    the reference both doubled) plans the traced loops as the reference machine does; a loaded
    one (wall three times its CPU time's share) three times as long."""
    settings = Settings()
    quiet = rss_cost(_at(MachineSpeed(REFERENCE_S, REFERENCE_CPU_S)), settings)
    slower_cpu = rss_cost(_at(MachineSpeed(2 * REFERENCE_S, 2 * REFERENCE_CPU_S)), settings)
    loaded = rss_cost(_at(MachineSpeed(3 * REFERENCE_S, REFERENCE_CPU_S)), settings)
    assert slower_cpu.minimum_s == pytest.approx(quiet.minimum_s)
    traced_s = RSS_BLOCKS * (1 + RSS_TRACED_SLOWDOWN) * QUICK.sample_s
    generations = settings.min_generations
    assert quiet.minimum_s == pytest.approx(generations * 2 * (QUICK.startup_s + traced_s))
    assert loaded.minimum_s == pytest.approx(generations * 2 * (QUICK.startup_s + 3 * traced_s))
    # a faster or less loaded machine than the reference never plans below it
    fast = rss_cost(_at(MachineSpeed(REFERENCE_S / 2, REFERENCE_CPU_S)), settings)
    assert fast.minimum_s == pytest.approx(quiet.minimum_s)
    # without the reference's CPU time, the machine's factor as before
    unknown = rss_cost(_at(MachineSpeed(3 * REFERENCE_S)), settings)
    assert unknown.minimum_s == pytest.approx(loaded.minimum_s)


def test_every_time_generation_pays_for_closing_its_workers() -> None:
    settings = Settings()
    quiet = time_cost(_at(MachineSpeed(REFERENCE_S, REFERENCE_CPU_S)), settings)
    slow = time_cost(_at(MachineSpeed(3 * REFERENCE_S, REFERENCE_CPU_S)), settings)
    closing_s = settings.min_generations * 2 * TIME_GENERATION_CLOSE_S
    assert slow.minimum_s - quiet.minimum_s == pytest.approx(closing_s * (3 - 1))


def test_a_sampling_lens_after_an_overrun_is_given_its_minimum() -> None:
    """The lenses before it took all the time: the time lens measures its minimum, and is given
    that (what it will take), not less."""
    settings = Settings(budget_s=30)
    costs = [rss_cost(QUICK, settings), time_cost(QUICK, settings)]
    plan = plan_budget(30, QUICK, costs)
    minimum_s = plan.share_of(Metric.TIME).cost.minimum_s
    assert elastic_share(plan, Metric.TIME, 0.0, [Metric.TIME]) == pytest.approx(minimum_s)
    # with room, its share grows with what is left
    roomy = elastic_share(plan, Metric.TIME, 20.0, [Metric.TIME])
    assert roomy > minimum_s
