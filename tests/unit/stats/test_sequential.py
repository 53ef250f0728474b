"""Confidence sequences and the early-stopping rule, on simulated command runs (known truth)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
import pytest

from perflab.records.kinds import Verdict
from perflab.stats.comparison import verdict_for
from perflab.stats.paired import RatioEstimate, student_t_quantile
from perflab.stats.sequential import (
    decide_probability,
    forecast_truths,
    may_stop_early,
    seconds_to_decide,
    sequence_interval,
    sequence_log_half_width,
    settles,
)

BAND = 0.01
PRECISION = 0.005


@functools.cache
def t_quantile(df: int) -> float:
    return student_t_quantile(0.975, df)


def estimate_of(units: np.ndarray) -> RatioEstimate:
    """What stats.paired.estimate_ratio makes of these unit values (log ratios)."""
    n = len(units)
    centre = float(np.mean(units))
    sd = float(np.std(units, ddof=1)) if n > 1 else math.nan
    if n < 2:
        return RatioEstimate(
            ratio=math.exp(centre),
            ci_low=0.0,
            ci_high=math.inf,
            n_groups=n,
            n_pairs=n,
            between_group_sd=sd,
            confidence=0.95,
        )
    half = t_quantile(n - 1) * sd / math.sqrt(n)
    return RatioEstimate(
        ratio=math.exp(centre),
        ci_low=math.exp(centre - half),
        ci_high=math.exp(centre + half),
        n_groups=n,
        n_pairs=n,
        between_group_sd=sd,
        confidence=0.95,
    )


def command_runs(
    rng: np.random.Generator,
    runs: int,
    blocks: int,
    *,
    true_log_ratio: float = 0.0,
    noise_sd: float = 0.02,
    slow_state: float = math.log(1.08),
    switch_chance: float = 0.05,
    drift_over_run: float = 0.06,
    position_effect: float = 0.005,
    heavy_tails: bool = True,
) -> np.ndarray:
    """Per-block paired log ratios (variant - baseline) of simulated command runs, as the time
    lens pairs them: each run a fresh process with its own noise (heavy-tailed: a few runs
    land far off); the machine switches between two speeds (bimodal samples) for a while;
    a drift over the run; the second run of a block a little faster; blocks alternate AB, BA."""
    slots = 2 * blocks
    switches = rng.random((runs, slots)) < switch_chance
    machine = slow_state * (np.cumsum(switches, axis=1) % 2)
    machine += drift_over_run * np.arange(slots) / slots
    if heavy_tails:
        noise = noise_sd * rng.standard_t(3, (runs, slots)) / math.sqrt(3)
    else:
        noise = rng.normal(0, noise_sd, (runs, slots))
    times = machine + noise
    times[:, 1::2] -= position_effect
    first, second = times[:, 0::2], times[:, 1::2]
    variant_first = np.arange(blocks) % 2 == 1  # AB, BA, AB, ...
    variant = np.where(variant_first, first, second) + true_log_ratio
    baseline = np.where(variant_first, second, first)
    return np.asarray(variant - baseline)


def two_block_units(pairs: np.ndarray, blocks_per_unit: int = 2) -> np.ndarray:
    """Units of consecutive blocks (as many AB as BA with an even count): the median of each
    unit's pairs, as the lens takes it."""
    units = pairs.shape[1] // blocks_per_unit
    shaped = pairs[:, : units * blocks_per_unit].reshape(len(pairs), units, blocks_per_unit)
    return np.asarray(np.median(shaped, axis=2))


StopRule = Callable[[RatioEstimate], bool]


def sequence_rule(estimate: RatioEstimate) -> bool:
    return may_stop_early([estimate], precision=PRECISION, equivalence_band=BAND, confidence=0.95)


def t_interval_rule(estimate: RatioEstimate) -> bool:
    """The rule before confidence sequences: the t interval within the precision, 10 units."""
    return estimate.n_groups >= 10 and estimate.log_half_width <= PRECISION


def never(estimate: RatioEstimate) -> bool:
    return False


def estimate_from(n: int, mean: float, sd: float) -> RatioEstimate:
    half = t_quantile(n - 1) * sd / math.sqrt(n)
    return RatioEstimate(
        ratio=math.exp(mean),
        ci_low=math.exp(mean - half),
        ci_high=math.exp(mean + half),
        n_groups=n,
        n_pairs=n,
        between_group_sd=sd,
        confidence=0.95,
    )


def verdicts(units: np.ndarray, rule: StopRule, look_every: int = 1) -> list[Verdict]:
    """The verdict of each simulated run: the t interval where `rule` stopped it, or at the
    end of its budget (all its units)."""
    n = np.arange(1, units.shape[1] + 1)
    means = np.cumsum(units, axis=1) / n
    squares = np.cumsum(units**2, axis=1)
    sds = np.sqrt(np.maximum(0, (squares - n * means**2) / np.maximum(1, n - 1)))
    found = []
    for row_means, row_sds in zip(means, sds, strict=True):
        last = len(row_means)
        estimate = estimate_from(last, float(row_means[-1]), float(row_sds[-1]))
        for k in range(2, last + 1, look_every):
            looked = estimate_from(k, float(row_means[k - 1]), float(row_sds[k - 1]))
            if rule(looked):
                estimate = looked
                break
        found.append(verdict_for(estimate.ci_low, estimate.ci_high, BAND))
    return found


def false_claims(found: list[Verdict]) -> float:
    return sum(v in (Verdict.SLOWER, Verdict.FASTER) for v in found) / len(found)


def test_the_sequence_is_wider_than_the_t_interval_and_narrows() -> None:
    widths = [sequence_log_half_width(n, 1.0, 0.05) for n in (10, 20, 50, 200, 1000)]
    t_widths = [student_t_quantile(0.975, n - 1) / math.sqrt(n) for n in (10, 20, 50, 200, 1000)]
    assert all(w > t for w, t in zip(widths, t_widths, strict=True))
    assert widths == sorted(widths, reverse=True)
    assert math.isinf(sequence_log_half_width(2, 1.0, 0.05))
    assert math.isinf(sequence_log_half_width(20, math.nan, 0.05))


@pytest.mark.slow
def test_the_sequence_holds_at_every_look_for_normal_units() -> None:
    """Ville's inequality: the chance that the sequence ever misses the mean, over all looks,
    is at most alpha."""
    rng = np.random.default_rng(7)
    units = rng.normal(0, 1, (1000, 200))
    n = np.arange(1, 201)
    means = np.cumsum(units, axis=1) / n
    sds = np.sqrt(
        np.maximum(0, (np.cumsum(units**2, axis=1) - n * means**2) / np.maximum(1, n - 1))
    )
    missed = 0
    for row_means, row_sds in zip(means, sds, strict=True):
        missed += any(
            abs(row_means[k]) > sequence_log_half_width(k + 1, float(row_sds[k]), 0.05)
            for k in range(1, 200)
        )
    assert missed / len(units) <= 0.05


def test_sequence_interval_is_around_the_estimate_and_contains_its_t_interval() -> None:
    estimate = estimate_of(np.array([0.01, -0.005, 0.002, 0.004, 0.0, 0.003] * 4))
    low, high = sequence_interval(estimate, 0.05)
    assert low < estimate.ci_low < estimate.ratio < estimate.ci_high < high
    assert math.log(high) + math.log(low) == pytest.approx(2 * math.log(estimate.ratio))


def test_settles() -> None:
    assert settles(0.995, 1.005, 0.01)
    assert settles(1.001, 1.05, 0.01)
    assert settles(0.9, 0.99, 0.01)
    assert not settles(0.98, 1.005, 0.01)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("blocks", "look_every", "noise_sd", "hazard"),
    [
        (100, 1, 0.015, True),  # ~100 ms command, 20 s: 50 units, a look at every one
        (100, 1, 0.03, False),  # noisier: neither rule stops early often
        (800, 5, 0.02, True),  # ~10 ms command: 400 units, a look every 5
    ],
)
def test_early_stopping_on_the_sequence_keeps_false_claims_at_5_percent(
    blocks: int, look_every: int, noise_sd: float, hazard: bool
) -> None:
    """A/A command runs with bimodal, drifting, heavy-tailed per-process noise: stopping on the
    confidence sequence makes no more false claims than the nominal 5%, where stopping on the
    t interval does (the hazard this rule removes)."""
    rng = np.random.default_rng(29)
    units = two_block_units(command_runs(rng, 400, blocks, noise_sd=noise_sd))
    with_sequence = false_claims(verdicts(units, sequence_rule, look_every))
    with_t_interval = false_claims(verdicts(units, t_interval_rule, look_every))
    without = false_claims(verdicts(units, never))
    # 400 runs: the binomial SD at 5% is 1.1%
    assert with_sequence <= 0.06
    assert with_sequence <= without + 0.01
    if hazard:
        assert with_t_interval > with_sequence + 0.01


@pytest.mark.slow
def test_a_true_difference_is_still_found_and_a_precise_one_stops_early() -> None:
    rng = np.random.default_rng(3)
    noisy = two_block_units(command_runs(rng, 100, 100, true_log_ratio=math.log(1.03)))
    assert sum(v is Verdict.SLOWER for v in verdicts(noisy, sequence_rule)) >= 95
    quiet = two_block_units(
        command_runs(rng, 100, 100, true_log_ratio=math.log(1.03), noise_sd=0.003,
                     switch_chance=0.0)
    )  # fmt: skip
    stopped = sum(
        any(sequence_rule(estimate_of(row[:n])) for n in range(2, len(row) + 1)) for row in quiet
    )
    assert stopped >= 90


def test_decide_probability_grows_with_units() -> None:
    estimate = estimate_of(np.random.default_rng(1).normal(0.002, 0.02, 20))
    chances = [decide_probability(estimate, u, BAND) for u in (20, 40, 80, 160, 640)]
    assert chances == sorted(chances)
    assert chances[-1] == 1.0


def test_seconds_to_decide_is_zero_when_decided_and_none_without_spread() -> None:
    decided = estimate_of(np.array([0.001, -0.001] * 20))
    assert seconds_to_decide(decided, BAND, 10.0) == 0.0
    assert seconds_to_decide(estimate_of(np.array([0.01])), BAND, 10.0) is None


@pytest.mark.slow
def test_seconds_to_decide_is_enough_in_80_percent_of_inconclusive_a_a_runs() -> None:
    """An A/A that ends inconclusive says "~N s more": a new run with that much more budget
    (more units at the same rate) ends `equivalent` in at least 80% of cases."""
    rng = np.random.default_rng(21)
    budget_units = 15
    sd = 0.02  # the unit SD: 15 units give a t half-width of about 1.1%, often inconclusive
    decided = tried = 0
    for _ in range(3000):
        first = rng.normal(0, sd, budget_units)
        estimate = estimate_of(first)
        if verdict_for(estimate.ci_low, estimate.ci_high, BAND) is not Verdict.INCONCLUSIVE:
            continue
        extra = seconds_to_decide(estimate, BAND, float(budget_units))
        assert extra is not None
        again = estimate_of(rng.normal(0, sd, max(2, round(budget_units + extra))))
        tried += 1
        decided += verdict_for(again.ci_low, again.ci_high, BAND) is Verdict.EQUIVALENT
        if tried == 300:
            break
    assert tried == 300
    assert decided / tried >= 0.8


def test_an_estimate_inside_the_band_counts_on_no_difference_as_well() -> None:
    """An inconclusive interval holds 1: while the estimate points to `equivalent` (inside the
    band), the forecast counts on no difference as well, and asks at least what that needs."""
    rng = np.random.default_rng(5)
    units = rng.normal(0, 0.03, 10)
    inside = estimate_of(units - units.mean() + math.log(1.006))
    assert verdict_for(inside.ci_low, inside.ci_high, BAND) is Verdict.INCONCLUSIVE
    assert forecast_truths(inside, BAND) == (pytest.approx(math.log(1.006)), 0.0)
    no_difference = estimate_of(units - units.mean())
    extra_inside = seconds_to_decide(inside, BAND, 20.0)
    extra_none = seconds_to_decide(no_difference, BAND, 20.0)
    assert extra_inside is not None and extra_none is not None
    assert extra_inside >= extra_none


def test_an_estimate_outside_the_band_is_planned_for_the_difference_it_points_to() -> None:
    """Inconclusive 3% A/Bs: the estimate outside the band points to a difference, and the
    forecast plans to exclude 1 at it rather than to settle `equivalent` as well (which asked
    for far more than the difference needs); a new run with what it asks still finds it."""
    rng = np.random.default_rng(29)
    units, sd, truth = 15, 0.04, math.log(1.03)
    asked, found = [], 0
    while len(asked) < 200:
        estimate = estimate_of(rng.normal(truth, sd, units))
        if verdict_for(estimate.ci_low, estimate.ci_high, BAND) is not Verdict.INCONCLUSIVE:
            continue
        extra = seconds_to_decide(estimate, BAND, float(units))
        assert extra is not None
        if abs(math.log(estimate.ratio)) > math.log(1 + BAND):
            assert forecast_truths(estimate, BAND) == (math.log(estimate.ratio),)
        asked.append(extra / units)
        again = estimate_of(rng.normal(truth, sd, max(2, round(units + extra))))
        found += verdict_for(again.ci_low, again.ci_high, BAND) is Verdict.SLOWER
    assert found / len(asked) >= 0.9
    # planning for no difference as well asked several times the first run's budget here
    assert float(np.median(asked)) < 6
