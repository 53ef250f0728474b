"""The budget's plan (perflab/budget.py) from a fake probe: shares, refusals, forking, the
machine's measured speed."""

from __future__ import annotations

import dataclasses
import math

import pytest

from perflab.budget.costs import (
    ANALYSIS_S,
    VALGRIND_SETUP_SLOWDOWN,
    CostProbe,
    LensCost,
    lens_costs,
)
from perflab.budget.machine_speed import (
    REFERENCE_S,
    VALGRIND_REFERENCE_S,
    MachineSpeed,
)
from perflab.budget.plan import REPORT_S, BudgetError, elastic_share, plan_budget
from perflab.lenses.instructions.cost import (
    CALLGRIND_COUNTED_S,
    CALLGRIND_TOGGLED_COUNTED_S,
    VALGRIND_START_S,
    instructions_cost,
)
from perflab.lenses.memory import MEMORY
from perflab.lenses.registry import cost_model, shared_recordings
from perflab.lenses.rss.cost import rss_cost
from perflab.lenses.time.cost import server_rounds, time_generation_s
from perflab.lenses.torch.cost import (
    TORCH_BLOCKS,
    TORCH_DEVICE_PROFILER_START_S,
    TORCH_PROFILE_OVERHEAD,
    TORCH_PROFILER_START_S,
)
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.settings import Settings
from tests.support.cost_probes import QUICK, TORCH

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.budget.plan"


def _costs(probe: CostProbe, settings: Settings, *metrics: Metric) -> list[LensCost]:
    """The lenses' costs as the engine prices them, with the recordings they share named."""
    shared = dataclasses.replace(probe, shared_recordings=shared_recordings(settings.metrics))
    return lens_costs(shared, settings, {m: cost_model(m) for m in metrics})


def test_the_time_lens_alone_gets_the_whole_budget_but_the_probe_and_the_analysis() -> None:
    settings = Settings(budget_s=10)
    plan = plan_budget(10, QUICK, _costs(QUICK, settings, Metric.TIME))
    assert plan.fits
    # its statistics and the report after measuring, at the reference machine's speed
    assert plan.after_s == pytest.approx(2 * ANALYSIS_S + REPORT_S)
    assert plan.share_of(Metric.TIME).share_s == pytest.approx(10 - QUICK.probe_s - plan.after_s)
    assert plan.measuring_s == pytest.approx(10 - plan.after_s)
    assert plan.eta_s == 10
    assert "time 9.6 s, analysis and report 0.2 s" in plan.describe()
    assert "machine speed not measured" in plan.describe()


def test_the_note_gives_a_lens_the_share_it_was_given_beside_the_planned_one() -> None:
    """A sampling lens's share is re-planned from what the lenses before it left: the note
    compares what it took with that, and names the plan's share where the two differ."""
    settings = Settings(budget_s=10)
    plan = plan_budget(10, QUICK, _costs(QUICK, settings, Metric.TIME))
    assert "time 9.0 s of its 9.6 s;" in plan.describe({Metric.TIME: 9.0})
    described = plan.describe({Metric.TIME: 9.0}, {Metric.TIME: 8.1})
    assert "time 9.0 s of its 8.1 s (planned 9.6 s);" in described
    assert "(planned" not in plan.describe({Metric.TIME: 9.0}, {Metric.TIME: 9.6})


def test_the_note_says_which_lens_failed_after_how_long_and_which_did_not_run() -> None:
    settings = Settings(budget_s=30)
    plan = plan_budget(30, QUICK, _costs(QUICK, settings, Metric.TIME, Metric.INSTRUCTIONS))
    planned = {s.metric: s.share_s for s in plan.shares}
    described = plan.describe({}, {}, {Metric.INSTRUCTIONS: 0.9})
    assert f"instructions failed after 0.9 s (planned {planned[Metric.INSTRUCTIONS]:.1f} s)" in (
        described
    )
    assert f"time not run (planned {planned[Metric.TIME]:.1f} s)" in described


def test_fixed_costs_come_first_and_sampling_lenses_share_the_rest_by_weight() -> None:
    settings = Settings(budget_s=60)
    costs = _costs(QUICK, settings, Metric.TIME, Metric.INSTRUCTIONS, Metric.COUNTERS)
    plan = plan_budget(60, QUICK, costs)
    instructions = plan.share_of(Metric.INSTRUCTIONS)
    assert not instructions.cost.elastic
    assert instructions.share_s == instructions.cost.minimum_s
    time, counters = plan.share_of(Metric.TIME), plan.share_of(Metric.COUNTERS)
    assert time.cost.elastic and counters.cost.elastic
    total = QUICK.probe_s + sum(s.share_s for s in plan.shares) + plan.after_s
    assert total == pytest.approx(60)
    surplus_time = time.share_s - time.cost.minimum_s
    surplus_counters = counters.share_s - counters.cost.minimum_s
    assert surplus_time == pytest.approx(3 * surplus_counters)  # weights 3:1


def test_a_budget_too_small_is_refused_with_the_budget_that_fits_when_strict() -> None:
    settings = Settings(budget_s=2, strict_budget=True)
    costs = _costs(QUICK, settings, Metric.TIME, Metric.INSTRUCTIONS)
    with pytest.raises(BudgetError) as refused:
        plan_budget(2, QUICK, costs, strict=True)
    error = refused.value
    assert error.exit_code == 2
    assert "the instructions lens alone needs" in error.message
    after = sum(c.after_s for c in costs) + REPORT_S  # analysis and report after measuring
    needed = QUICK.probe_s + sum(c.minimum_s for c in costs) + after
    assert f"--budget {int(needed * 1.1) + 1} would fit" in error.message
    assert error.hint is not None
    assert "--strict-budget" in error.hint and "--metric" in error.hint
    assert error.detail is not None and "time:" in error.detail


def test_by_default_a_budget_too_small_gives_each_lens_its_minimum() -> None:
    settings = Settings(budget_s=2)
    costs = _costs(QUICK, settings, Metric.TIME, Metric.INSTRUCTIONS)
    plan = plan_budget(2, QUICK, costs)
    assert not plan.fits
    assert plan.eta_s == pytest.approx(plan.needed_s) and plan.eta_s > 2
    for share in plan.shares:
        assert share.share_s == pytest.approx(share.cost.minimum_s)
    assert "the minimums need" in plan.describe()


def test_an_expensive_import_forks_the_torch_lens_and_the_time_lens_in_rounds() -> None:
    settings = Settings()
    assert not QUICK.fork and TORCH.fork
    time_cost, torch_cost = _costs(TORCH, settings, Metric.TIME, Metric.TORCH)
    # the time lens starts its own rounds of servers (the engine starts none for it): 3 rounds
    # of 2 servers at 2.1 s, each forking 2 generations, instead of 6 x 2 fresh imports
    rounds = time_cost.server_rounds
    assert rounds is not None and not time_cost.forked
    assert (rounds.min_rounds, rounds.forks_per_round) == (3, 2)
    assert "3 rounds of 2 fork servers" in time_cost.needs
    assert 3 * 2 * 2.1 < time_cost.minimum_s < 6 * 2 * 2.1
    # the torch lens forks: its servers' imports once, then 2 generations of cheap children
    assert torch_cost.forked and torch_cost.once_s == pytest.approx(2 * 2.1)
    assert torch_cost.minimum_s < 2 * 2.1 + 2 * 2 * 1.0
    # each server warms the profiler once (its first session), no forked generation pays it
    generation_s = 2 * (TORCH.fork_s + TORCH_BLOCKS * TORCH_PROFILE_OVERHEAD * TORCH.sample_s)
    assert torch_cost.minimum_s == pytest.approx(
        2 * 2.1 + 2 * TORCH_PROFILER_START_S + 2 * generation_s
    )
    plan = plan_budget(
        200, TORCH, _costs(TORCH, settings, Metric.TIME, Metric.TORCH, Metric.COUNTERS)
    )
    assert plan.fits and "; torch forks its workers" in plan.describe()


def test_the_time_lens_keeps_fresh_workers_when_imports_are_cheap() -> None:
    settings = Settings()
    assert server_rounds(QUICK, settings) is None
    (cost,) = _costs(QUICK, settings, Metric.TIME)
    assert cost.server_rounds is None and "fresh workers" in cost.needs
    # imports of a tenth of a generation are the threshold (20 s: 0.83 s generations)
    generation_s = time_generation_s(settings.budget_s)
    below = dataclasses.replace(QUICK, import_s=0.09 * generation_s / 2)
    above = dataclasses.replace(QUICK, import_s=0.11 * generation_s / 2)
    assert server_rounds(below, settings) is None
    assert server_rounds(above, settings) is not None
    failed = dataclasses.replace(TORCH, failed=True)
    assert server_rounds(failed, settings) is None


def test_commands_cost_their_runs() -> None:
    probe = CostProbe(BenchmarkKind.COMMAND, 2, 0.0, 0.0, 0.0, sample_s=0.5, probe_s=0.5)
    cost = _costs(probe, Settings(), Metric.TIME)[0]
    assert cost.minimum_s == pytest.approx((2 + 6) * 2 * 0.5)  # warm-up + 6 blocks of 2 runs
    assert not probe.fork


def test_a_lens_without_a_cost_model_gets_one_generation() -> None:
    costs = lens_costs(QUICK, Settings(), {Metric("custom"): None})
    assert costs[0].minimum_s == pytest.approx(2 * (0.05 + 1.0)) and not costs[0].elastic


def test_an_elastic_share_comes_from_the_time_really_left() -> None:
    settings = Settings(budget_s=30)
    costs = _costs(QUICK, settings, Metric.TIME, Metric.COUNTERS, Metric.PROFILE)
    plan = plan_budget(30, QUICK, costs)
    profile = plan.share_of(Metric.PROFILE).cost.minimum_s
    time_cost = plan.share_of(Metric.TIME).cost
    counters = plan.share_of(Metric.COUNTERS).cost
    # the profile lens (fixed) is still to run: its estimate is kept for it
    left = 20.0
    share = elastic_share(plan, Metric.TIME, left, [Metric.TIME, Metric.COUNTERS, Metric.PROFILE])
    free = left - profile - time_cost.minimum_s - counters.minimum_s
    expected = time_cost.minimum_s + free * 3 / 4 - time_cost.overshoot_s / 2
    assert share == pytest.approx(expected)
    # the last lens gets all that is left (less half a step)
    last = elastic_share(plan, Metric.COUNTERS, 10.0, [Metric.COUNTERS])
    assert last == pytest.approx(10.0 - counters.overshoot_s / 2)
    # late (the fixed lenses took longer than planned): the minimum, no more, and no less
    # (at its minimum a lens stops there, not a step past its share)
    late = elastic_share(plan, Metric.COUNTERS, -3.0, [Metric.COUNTERS])
    assert late == pytest.approx(counters.minimum_s)
    nearly = elastic_share(plan, Metric.COUNTERS, counters.minimum_s + 0.1, [Metric.COUNTERS])
    assert nearly == pytest.approx(counters.minimum_s)


def test_a_forked_lens_share_leaves_out_its_servers_started_before_it() -> None:
    settings = Settings(budget_s=30)
    plan = plan_budget(30, TORCH, _costs(TORCH, settings, Metric.TORCH))
    cost = plan.share_of(Metric.TORCH).cost
    assert cost.forked and cost.started_before_s == pytest.approx(2 * 2.1)
    # the servers took their 4.2 s before the lens: what is left is the lens's own
    share = elastic_share(plan, Metric.TORCH, 10.0, [Metric.TORCH])
    assert share == pytest.approx(10.0 - cost.overshoot_s / 2)
    late = elastic_share(plan, Metric.TORCH, 0.0, [Metric.TORCH])
    assert late == pytest.approx(cost.minimum_s - cost.once_s - cost.overshoot_s / 2)


# -- the machine's speed, measured by the probe ---------------------------------------------


def test_a_slow_machine_plans_longer_fixed_costs_and_leaves_less_to_sample() -> None:
    metrics = (Metric.TIME, Metric.INSTRUCTIONS, Metric.PROFILE, Metric.ASM)
    settings = Settings(budget_s=120)
    slow = dataclasses.replace(
        QUICK, speed=MachineSpeed(reference_s=3 * REFERENCE_S, valgrind_s=2 * VALGRIND_REFERENCE_S)
    )
    quiet = plan_budget(120, QUICK, _costs(QUICK, settings, *metrics))
    loaded = plan_budget(120, slow, _costs(slow, settings, *metrics))
    for metric in (Metric.INSTRUCTIONS, Metric.PROFILE, Metric.ASM):
        assert loaded.share_of(metric).share_s > quiet.share_of(metric).share_s
    # callgrind's constants scale by valgrind's factor, the interpreter's start-up is measured;
    # two variants of two processes do not fit on two CPUs at once: two fork servers per
    # variant in turn, the variants side by side, each server starting and counting its one
    # child (toggling collection: no cache simulation)
    instructions = loaded.share_of(Metric.INSTRUCTIONS).cost.minimum_s
    counted = CALLGRIND_TOGGLED_COUNTED_S
    assert instructions == pytest.approx(
        2 * (2 * VALGRIND_START_S + VALGRIND_SETUP_SLOWDOWN * 0.05) + 2 * 2 * counted
    )
    one_variant = dataclasses.replace(slow, variants=1)
    alone = instructions_cost(one_variant, settings).minimum_s  # its two processes at once
    assert alone == pytest.approx(2 * (VALGRIND_START_S + counted) + VALGRIND_SETUP_SLOWDOWN * 0.05)
    # with the cache simulated, instrumentation is switched around every loop, as before
    simulated = instructions_cost(one_variant, settings.with_options(cache_sim=True))
    assert simulated.minimum_s == pytest.approx(
        2 * (VALGRIND_START_S + CALLGRIND_COUNTED_S) + VALGRIND_SETUP_SLOWDOWN * 0.05
    )
    assert loaded.after_s == pytest.approx(3 * quiet.after_s)
    # the budget is the same: the sampling lens gets what the fixed costs leave
    assert loaded.share_of(Metric.TIME).share_s < quiet.share_of(Metric.TIME).share_s
    assert "tool costs x3.0" in loaded.describe() and "valgrind costs x2.0" in loaded.describe()


def test_a_budget_that_fits_a_quiet_machine_is_refused_on_a_slow_one_when_strict() -> None:
    settings = Settings(budget_s=20)
    costs = _costs(QUICK, settings, Metric.TIME, Metric.INSTRUCTIONS)
    assert plan_budget(20, QUICK, costs).fits
    slow = dataclasses.replace(QUICK, speed=MachineSpeed(valgrind_s=4 * VALGRIND_REFERENCE_S))
    with pytest.raises(BudgetError) as refused:
        plan_budget(20, slow, _costs(slow, settings, Metric.TIME, Metric.INSTRUCTIONS), strict=True)
    assert "the instructions lens alone needs" in refused.value.message
    assert refused.value.detail is not None and "valgrind costs x4.0" in refused.value.detail


def test_perflabs_own_start_up_counts_in_the_first_benchmarks_budget() -> None:
    settings = Settings(budget_s=10)
    costs = _costs(QUICK, settings, Metric.TIME)
    plain = plan_budget(10, QUICK, costs)
    started = plan_budget(10, QUICK, costs, before_s=1.5)
    assert started.share_of(Metric.TIME).share_s == pytest.approx(
        plain.share_of(Metric.TIME).share_s - 1.5
    )
    assert started.needed_s == pytest.approx(plain.needed_s + 1.5)
    assert "budget 10 s: perflab's start-up 1.5 s, probe 0.2 s" in started.describe()
    with pytest.raises(BudgetError) as refused:
        plan_budget(2, QUICK, costs, before_s=1.5, strict=True)
    assert refused.value.detail is not None
    assert refused.value.detail.startswith("perflab's start-up 1.5 s")


def test_a_wait_for_a_cpu_is_said_and_not_charged_to_the_budget() -> None:
    costs = _costs(QUICK, Settings(budget_s=40), Metric.TIME)
    plain = plan_budget(40, QUICK, costs, before_s=1.5)
    waited = plan_budget(40, QUICK, costs, before_s=1.5, waited_s=30.0)
    assert waited.needed_s == pytest.approx(plain.needed_s)
    assert waited.share_of(Metric.TIME).share_s == pytest.approx(
        plain.share_of(Metric.TIME).share_s
    )
    described = waited.describe()
    assert "perflab's start-up 1.5 s" in described
    assert "30.0 s waiting for a CPU other perflab runs held (not counted)" in described


def test_a_loaded_machine_is_given_a_larger_margin_in_the_budget_that_would_fit() -> None:
    settings = Settings(budget_s=2)
    loaded = dataclasses.replace(QUICK, speed=MachineSpeed(reference_s=3 * REFERENCE_S))
    for probe, margin in ((QUICK, 1.1), (loaded, 1.25)):
        with pytest.raises(BudgetError) as refused:
            plan_budget(
                2, probe, _costs(probe, settings, Metric.TIME, Metric.INSTRUCTIONS), strict=True
            )
        plan = plan_budget(2, probe, _costs(probe, settings, Metric.TIME, Metric.INSTRUCTIONS))
        fits = math.ceil(plan.needed_s * margin)
        assert f"--budget {fits} would fit" in refused.value.message


def test_a_set_up_that_initialised_a_gpu_plans_fresh_workers_and_the_device_tracing() -> None:
    # CUDA does not survive fork: on an H100 and an H200 the plan forked torch.mm's workers
    # (16.7 s) where 4 fresh ones took 51-70 s, and the servers started for them went unused
    device = dataclasses.replace(TORCH, device_runtimes=("cuda",))
    assert TORCH.fork and not device.fork
    time_cost, torch_cost = _costs(device, Settings(), Metric.TIME, Metric.TORCH)
    assert not torch_cost.forked and torch_cost.once_s == 0.0
    assert time_cost.server_rounds is None  # no rounds of fork servers either
    per_worker_s = device.startup_s + TORCH_PROFILER_START_S + TORCH_DEVICE_PROFILER_START_S
    per_worker_s += TORCH_BLOCKS * TORCH_PROFILE_OVERHEAD * device.sample_s
    assert torch_cost.minimum_s == pytest.approx(2 * 2 * per_worker_s)


def test_the_memory_lens_counts_its_variants_one_after_another() -> None:
    """The memory lens runs the instructions lens on one variant at a time: each variant's two
    processes fresh and at once, the variants in turn (not a fork server per variant)."""
    settings = Settings(budget_s=60)
    # switched around every loop (cache simulation), not toggled as the instructions lens does
    one = instructions_cost(dataclasses.replace(QUICK, variants=1), settings, toggled=False)
    one_s = one.minimum_s
    toggled = instructions_cost(dataclasses.replace(QUICK, variants=1), settings).minimum_s
    assert toggled < one_s
    (memory,) = _costs(QUICK, settings, MEMORY)  # composed by the plan
    assert memory.minimum_s == pytest.approx(2 * one_s + rss_cost(QUICK, settings).minimum_s)
    assert "per variant, one after another" in memory.needs and "fork" not in memory.needs


def test_a_benchmark_over_its_budget_is_told_what_took_longer_and_why() -> None:
    settings = Settings(budget_s=2)
    costs = _costs(QUICK, settings, Metric.TIME, Metric.INSTRUCTIONS)
    plan = plan_budget(2, QUICK, costs)  # the minimums do not fit: measured anyway
    took = {s.metric: s.cost.minimum_s for s in plan.shares}
    assert plan.overrun(2.1, took, {}) is None  # within the margin
    said = plan.overrun(plan.needed_s, took, {})
    assert said is not None
    assert said.startswith(f"took {plan.needed_s:.0f} s of --budget 2: two lenses need about")
    assert "the instructions lens's minimum measurement" in said
    # a plan that fit, and one lens that took longer than its share
    roomy = plan_budget(60, QUICK, costs)
    given = {s.metric: s.share_s for s in roomy.shares}
    slow = {**given, Metric.INSTRUCTIONS: given[Metric.INSTRUCTIONS] + 40}
    said = roomy.overrun(100, slow, given)
    assert said is not None and said.startswith("took 100 s of --budget 60: the instructions lens")


def test_an_overrun_never_says_the_minimums_need_more_than_the_run_took() -> None:
    costs = _costs(QUICK, Settings(budget_s=1), Metric.INSTRUCTIONS)
    plan = plan_budget(1, QUICK, costs)
    took = {s.metric: 0.0 for s in plan.shares}
    used_s = plan.usual_needed_s / 3  # the plan estimated three times what the run took
    said = plan.overrun(used_s, took, {})
    assert said is not None
    assert f"more than that: about {used_s:.0f} s this time" in said
    assert f"planned at {plan.usual_needed_s:.0f} s" in said
    assert f"need about {plan.usual_needed_s:.0f} s" not in said


def test_a_loaded_machine_plans_the_asm_lens_disassembly_side_by_side() -> None:
    # one job 5x slower: the variants' disassembly takes less than 5x as long side by side
    # (budget/test_costs.py: side_by_side_s)
    slow = dataclasses.replace(QUICK, speed=MachineSpeed(reference_s=5 * REFERENCE_S))
    asm = cost_model(Metric.ASM)
    assert asm is not None
    assert asm(slow, Settings()).minimum_s < 2 * asm(QUICK, Settings()).minimum_s * 5


def test_an_overrun_is_blamed_on_the_lens_that_took_far_longer_than_planned() -> None:
    costs = _costs(QUICK, Settings(budget_s=2), Metric.TIME, Metric.INSTRUCTIONS)
    plan = plan_budget(2, QUICK, costs)  # the minimums do not fit, by a few seconds
    given = {s.metric: s.share_s for s in plan.shares}
    took = {**given, Metric.INSTRUCTIONS: given[Metric.INSTRUCTIONS] + 60}
    said = plan.overrun(plan.needed_s + 60, took, given)
    assert said is not None and ": the instructions lens took" in said
    assert f"the minimums alone need about {plan.needed_s:.0f} s" in said


@pytest.mark.parametrize("order", [(Metric.PROFILE, Metric.ASM), (Metric.ASM, Metric.PROFILE)])
def test_profile_and_asm_pay_their_shared_recording_once_whichever_runs_first(
    order: tuple[Metric, Metric],
) -> None:
    alone = {
        m: _costs(QUICK, Settings(metrics=(m,)), m)[0].minimum_s
        for m in (Metric.PROFILE, Metric.ASM)
    }
    settings = Settings(metrics=order)
    plan = plan_budget(60, QUICK, _costs(QUICK, settings, *order))
    first, second = (plan.share_of(m).cost for m in order)
    # the first lens makes the recording; the second only reads it
    assert first.minimum_s > second.minimum_s
    together = first.minimum_s + second.minimum_s
    assert together < alone[Metric.PROFILE] + alone[Metric.ASM]
    # the profile's recording (with the asm lens's reading of it), then asm's disassembly
    disassembly = _costs(QUICK, settings, Metric.ASM)[0].minimum_s
    profile = _costs(QUICK, settings, Metric.PROFILE)[0].minimum_s
    assert together == pytest.approx(profile + disassembly)
    assert profile > alone[Metric.PROFILE]


def test_one_run_without_warm_up_is_one_block() -> None:
    probe = CostProbe(BenchmarkKind.COMMAND, 2, 0.0, 0.0, 0.0, sample_s=0.5, probe_s=0.5)
    cost = _costs(probe, Settings(runs=1, warmup_blocks=0), Metric.TIME)[0]
    assert cost.needs.startswith("1 block of 2 runs")


def test_the_used_line_lists_only_parts_of_what_was_used() -> None:
    """ "used 4.5 s of the budget: probe 2.4 s, instructions 2.0 s, analysis and report 5.4 s"
    added up to more than it used: analysis and report run after the figure, so they are said
    apart from its parts."""
    from perflab.budget.costs import lens_costs
    from perflab.budget.plan import plan_budget
    from perflab.lenses.registry import cost_model
    from perflab.records.kinds import Metric
    from perflab.records.settings import Settings

    costs = lens_costs(QUICK, Settings(budget_s=10), {Metric.TIME: cost_model(Metric.TIME)})
    plan = plan_budget(10, QUICK, costs)
    used = plan.describe({Metric.TIME: 2.0})
    parts = used.split(";")[0]
    assert "analysis and report" not in parts
    assert "; analysis and report follow (0.2 s kept for them)" in used
    assert ", analysis and report 0.2 s" in plan.describe()  # the plan before measuring
