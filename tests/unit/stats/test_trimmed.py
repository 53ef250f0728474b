"""The commands' interval: a trimmed mean of their units (stats.trimmed), on known truths."""

from __future__ import annotations

import math

import numpy as np
import pytest

from perflab.lenses.time.analyse import analyse_time
from perflab.lenses.time.artifacts import KIND_COMMAND_UNITS
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Artifact, Benchmark, BenchmarkData, Sample
from perflab.records.settings import Settings
from perflab.stats.comparison import verdict_for
from perflab.stats.paired import PairedLogRatio, estimate_ratio, pair_samples
from perflab.stats.sequential import sequence_interval
from perflab.stats.trimmed import (
    MIN_UNITS_TO_TRIM,
    trimmed_agree,
    trimmed_interval,
    trimmed_ratio,
)

BAND = 0.01


def unit_pairs(values: list[float]) -> list[PairedLogRatio]:
    """One pair per unit, so the unit values are these log ratios."""
    return [PairedLogRatio(group=i, block=i, log_ratio=v) for i, v in enumerate(values)]


def test_trimmed_interval_by_hand() -> None:
    values = [0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 1.0]  # one spoiled unit
    centre, half, sd = trimmed_interval(values, 0.95)  # type: ignore[misc]
    # g = 2 of 10 trimmed at each end: the mean of 0.02..0.07; winsorized at 0.02 and 0.07
    assert centre == pytest.approx(0.045)
    winsorized = [0.02, 0.02, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.07, 0.07]
    standard_error = float(np.std(winsorized, ddof=1)) / (0.6 * math.sqrt(10))
    assert half == pytest.approx(2.5706 * standard_error, rel=1e-3)  # t, 5 df
    assert sd == pytest.approx(half * math.sqrt(10) / 2.2622, rel=1e-3)  # as wide as t, 9 df


def test_few_units_keep_the_t_interval_of_the_mean() -> None:
    values = [0.01 * k for k in range(MIN_UNITS_TO_TRIM - 1)]
    assert trimmed_interval(values, 0.95) is None
    pairs = unit_pairs(values)
    assert trimmed_ratio(pairs) == estimate_ratio(pairs)


def test_a_spoiled_unit_moves_the_mean_but_not_the_trimmed_interval() -> None:
    rng = np.random.default_rng(3)
    values = list(rng.normal(math.log(1.03), 0.01, 14))
    values[5] += 0.5  # a unit whose pairs met a slow CPU
    pairs = unit_pairs(values)
    mean, robust = estimate_ratio(pairs), trimmed_ratio(pairs)
    assert verdict_for(mean.ci_low, mean.ci_high, BAND) is Verdict.INCONCLUSIVE
    assert robust.ci_low < 1.03 < robust.ci_high
    assert verdict_for(robust.ci_low, robust.ci_high, BAND) is Verdict.SLOWER
    assert robust.log_half_width < mean.log_half_width / 3


@pytest.mark.slow
@pytest.mark.parametrize("units", [10, 14, 30])
def test_trimmed_interval_covers_at_95_percent_with_heavy_tails(units: int) -> None:
    rng = np.random.default_rng(units)
    runs = 2000
    values = rng.standard_t(3, (runs, units)) * 0.02
    missed = 0
    for row in values:
        centre, half, _ = trimmed_interval(list(row), 0.95)  # type: ignore[misc]
        missed += abs(centre) > half
    assert missed / runs <= 0.06


def test_an_early_stop_needs_the_trimmed_verdict_to_be_the_sequences() -> None:
    clear = unit_pairs([math.log(1.05) + 0.001 * (k % 3) for k in range(20)])
    mean, robust = estimate_ratio(clear), trimmed_ratio(clear)
    assert trimmed_agree([mean], [robust], equivalence_band=BAND, confidence=0.95)
    # a mean the sequence cannot settle next to a trimmed interval that claims
    spoiled = [math.log(1.03) + 0.001 * (k % 3) for k in range(20)]
    spoiled[:3] = [-0.6, -0.5, 0.7]
    pairs = unit_pairs(spoiled)
    robust = trimmed_ratio(pairs)
    assert verdict_for(robust.ci_low, robust.ci_high, BAND) is Verdict.SLOWER
    assert not trimmed_agree(
        [estimate_ratio(pairs)], [robust], equivalence_band=BAND, confidence=0.95
    )


def _command_samples(rng: np.random.Generator, blocks: int, truth: float) -> list[Sample]:
    """A command A/B: ~100 ms runs, ABBA blocks, 1% noise, and a fifth of the runs 20-80%
    slow (a spell of a slow CPU)."""
    samples = []
    for block in range(blocks):
        for name, ratio in (("a", 1.0), ("b", truth)):
            slow = rng.uniform(1.2, 1.8) if rng.random() < 0.2 else 1.0
            value = 1e8 * ratio * slow * math.exp(rng.normal(0, 0.01))
            samples.append(
                Sample("c", name, Metric.TIME, "wall_ns", value, loops=1, block=block,
                       run_queue_ns=0, cpu_ns=int(value))
            )  # fmt: skip
    return samples


def test_the_time_lens_decides_commands_on_the_trimmed_mean_and_stops_on_the_mean() -> None:
    rng = np.random.default_rng(29)
    samples = _command_samples(rng, blocks=56, truth=1.03)
    units = Artifact("c", "a", Metric.TIME, KIND_COMMAND_UNITS, '{"blocks_per_unit": 4}')
    data = BenchmarkData(tuple(samples), (units,))
    analysis = analyse_time(Benchmark("c", cmd="./w"), ["a", "b"], data, Settings())
    (comparison,) = analysis.comparisons
    details = comparison.to_json()
    pairs = pair_samples(data.samples_of("a"), data.samples_of("b"), batch_blocks=4)
    assert details["n_groups"] == 14
    mean, robust = estimate_ratio(pairs), trimmed_ratio(pairs)
    assert comparison.ratio == pytest.approx(robust.ratio)
    assert comparison.ci_low == pytest.approx(robust.ci_low)
    assert comparison.verdict is Verdict.SLOWER
    assert comparison.ci_low < 1.03 < comparison.ci_high
    # the stopping rule's sequence is around the units' mean, and holds the reported interval
    low, high = sequence_interval(mean, 0.05)
    assert details["sequence_ci_low"] == pytest.approx(min(low, comparison.ci_low))
    assert details["sequence_ci_high"] == pytest.approx(max(high, comparison.ci_high))
