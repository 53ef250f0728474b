"""Load that correcting preempted samples cannot repair: unequal preemption, CPU time that grows
in preempted samples. Synthetic samples reproduce both; the interval must widen (or the verdict
fall back to inconclusive), never stay tight around a biased ratio."""

from __future__ import annotations

import math
import random

from perflab.records.model import Metric, Sample, Verdict
from perflab.stats.overload import (
    NONE,
    UNBOUNDED,
    WIDENED_BOTH,
    WIDENED_BY_GROWTH,
    cpu_growth,
    overload_check,
    uneven_preemption,
)
from perflab.stats.paired import estimate_ratio, pair_samples, verdict_for
from perflab.stats.preemption import Preemption

LOOPS = 10


def _sample(
    variant: str,
    generation: int,
    block: int,
    per_iteration_ns: float,
    *,
    preempted: bool,
    growth: float,
) -> Sample:
    """A sample whose CPU time is the statement's, grown by `growth` when preempted, and whose
    wall time adds the run-queue wait of a preemption."""
    cpu = per_iteration_ns * LOOPS * ((1 + growth) if preempted else 1.0)
    wait = 0.5 * cpu if preempted else 0.0
    return Sample(
        benchmark="b",
        variant=variant,
        metric=Metric.TIME,
        name="wall_ns",
        value=cpu + wait,
        loops=LOOPS,
        generation=generation,
        block=block,
        run_queue_ns=int(wait),
        cpu_ns=int(cpu),
    )


def _run(
    rng: random.Random,
    *,
    ratio: float,
    preempted: tuple[float, float],
    growth: tuple[float, float],
    generations: int = 12,
    blocks: int = 20,
    process_sd: float = 0.01,
) -> tuple[list[Sample], list[Sample]]:
    """Baseline and variant samples: per-generation (process) effects, per-sample noise,
    each side preempted with its own probability and growing its CPU time by its own factor."""
    base: list[Sample] = []
    other: list[Sample] = []
    for g in range(generations):
        offsets = (rng.gauss(0, process_sd), rng.gauss(0, process_sd))
        for b in range(blocks):
            for side, (target, truth) in enumerate(((base, 100_000.0), (other, 100_000 * ratio))):
                value = truth * math.exp(offsets[side] + rng.gauss(0, 0.01))
                hit = rng.random() < preempted[side]
                target.append(
                    _sample(
                        "base" if side == 0 else "other",
                        g,
                        b,
                        value,
                        preempted=hit,
                        growth=growth[side],
                    )
                )
    return base, other


def _corrected(base: list[Sample], other: list[Sample]):  # type: ignore[no-untyped-def]
    return estimate_ratio(pair_samples(base, other, preemption=Preemption.CORRECT))


def test_unequal_preemption_with_cpu_growth_widens_to_hold_the_truth() -> None:
    # the reported situation: one variant preempted 63% of the time, the other 18%, and
    # preempted samples using 60% more CPU per iteration
    base, other = _run(random.Random(1), ratio=1.3, preempted=(0.18, 0.63), growth=(0.6, 0.6))
    estimate = _corrected(base, other)
    assert estimate.ci_low > 1.3  # correction leaves a tight interval that misses the truth
    check = overload_check(base, other, estimate)
    assert check is not None
    assert check.uneven and check.grows
    assert check.action == WIDENED_BOTH
    assert check.ci_low <= 1.3 <= check.ci_high
    assert check.ci_low < estimate.ci_low and check.ci_high >= estimate.ci_high
    message = check.message("base", "other")
    assert "`other`'s samples were preempted 62% of the time and `base`'s 19%" in message
    assert "+60%" in message and "cannot repair" in message


def test_cpu_growth_alone_is_seen_and_widens() -> None:
    base, other = _run(random.Random(2), ratio=1.0, preempted=(0.4, 0.4), growth=(0.2, 0.2))
    estimate = _corrected(base, other)
    check = overload_check(base, other, estimate)
    assert check is not None
    assert check.grows and not check.uneven
    assert check.cpu_growth_baseline is not None and 0.15 < check.cpu_growth_baseline < 0.25
    assert check.ci_low <= estimate.ci_low and check.ci_high >= estimate.ci_high
    assert check.ci_low <= 1.0 <= check.ci_high


def test_a_quiet_machine_changes_nothing() -> None:
    base, other = _run(random.Random(3), ratio=1.1, preempted=(0.0, 0.0), growth=(0.0, 0.0))
    estimate = _corrected(base, other)
    check = overload_check(base, other, estimate)
    assert check is not None and not check.seen
    assert check.action == NONE
    assert (check.ci_low, check.ci_high) == (estimate.ci_low, estimate.ci_high)


def test_preemption_that_costs_nothing_more_is_left_to_the_correction() -> None:
    # both preempted alike, no growth: the correction repairs it, nothing is widened
    base, other = _run(random.Random(4), ratio=1.0, preempted=(0.3, 0.3), growth=(0.0, 0.0))
    check = overload_check(base, other, _corrected(base, other))
    assert check is not None and not check.seen


def test_samples_without_accounting_are_not_checked() -> None:
    base, other = _run(random.Random(5), ratio=1.0, preempted=(0.0, 0.0), growth=(0.0, 0.0))
    strip = [s.__class__(**{**s.__dict__, "run_queue_ns": None}) for s in base]
    assert overload_check(strip, other, _corrected(strip, other)) is None


def test_every_sample_of_one_variant_preempted_is_inconclusive() -> None:
    # no unpreempted sample of the variant: neither its growth nor a clean ratio can be
    # measured, so nothing bounds the bias
    base, other = _run(random.Random(6), ratio=1.3, preempted=(0.1, 1.0), growth=(0.5, 0.5))
    estimate = _corrected(base, other)
    check = overload_check(base, other, estimate)
    assert check is not None and check.uneven
    assert check.action == UNBOUNDED
    assert verdict_for(check.ci_low, check.ci_high, 0.01) is Verdict.INCONCLUSIVE
    assert "inconclusive" in check.message("base", "other")


def test_no_clean_pairs_widen_by_the_growth() -> None:
    # whenever one side ran undisturbed the other was preempted: no pair is clean, but each
    # side has undisturbed samples in every generation, so its growth is measured
    rng = random.Random(7)
    base: list[Sample] = []
    other: list[Sample] = []
    for g in range(8):
        for b in range(20):
            base_hit, other_hit = (b % 4 != 0), (b % 4 == 0 or b % 2 == 1)
            noise = math.exp(rng.gauss(0, 0.01))
            base.append(_sample("base", g, b, 1e5 * noise, preempted=base_hit, growth=0.3))
            other.append(_sample("other", g, b, 1.3e5 * noise, preempted=other_hit, growth=0.3))
    estimate = _corrected(base, other)
    check = overload_check(base, other, estimate)
    assert check is not None and check.grows
    assert check.action == WIDENED_BY_GROWTH
    assert check.unpreempted is not None and check.unpreempted.n_groups == 0
    assert check.ci_low < estimate.ci_low and check.ci_high > estimate.ci_high
    assert check.ci_low <= 1.3 <= check.ci_high
    assert "a preemption costs, which any sample may carry once" in check.message("base", "other")


def test_uneven_needs_more_than_chance() -> None:
    assert not uneven_preemption(0.30, 0.36, 400)  # within chance and within 10 points
    assert not uneven_preemption(0.30, 0.42, 20)  # 12 points, but 20 samples: chance
    assert uneven_preemption(0.18, 0.63, 400)


def test_cpu_growth_is_within_groups() -> None:
    # generation 1's process is 50% slower, and has all the preempted samples: compared
    # within generations, preemption costs nothing more
    rng = random.Random(8)
    samples = []
    for g in range(4):
        slow = 1.5 if g % 2 else 1.0
        for b in range(10):
            hit = g % 2 == 1 and b % 2 == 0 or g % 2 == 0 and b == 0
            samples.append((g, _sample("a", g, b, 1000 * slow * (1 + rng.gauss(0, 0.001)),
                                       preempted=hit, growth=0.0)))  # fmt: skip
    growth = cpu_growth(samples)
    assert growth is not None and abs(growth) < 0.01


def test_coverage_under_unequal_load_holds() -> None:
    """Over many simulated runs with uneven preemption and CPU growth, the widened interval
    holds the truth in at least 95% of them; the corrected one alone does in far fewer."""
    rng = random.Random(9)
    runs, held_before, held_after = 60, 0, 0
    for _ in range(runs):
        p_base = rng.uniform(0.05, 0.3)
        base, other = _run(
            rng,
            ratio=1.3,
            preempted=(p_base, p_base + rng.uniform(0.2, 0.5)),
            growth=(rng.uniform(0.2, 0.6),) * 2,
            generations=10,
            blocks=12,
            process_sd=0.02,
        )
        estimate = _corrected(base, other)
        check = overload_check(base, other, estimate)
        assert check is not None
        held_before += estimate.ci_low <= 1.3 <= estimate.ci_high
        held_after += check.ci_low <= 1.3 <= check.ci_high
    assert held_after >= 0.95 * runs
    assert held_before < 0.5 * runs
