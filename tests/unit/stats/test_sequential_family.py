"""The early stop for `--precision` at the level the run's verdicts are decided at: with several
comparisons decided together (stats.family), each confidence sequence is at 1 - 0.05/m."""

from __future__ import annotations

import math

from perflab.lenses.time.bookkeeping import sequences_within_precision
from perflab.stats.family import family_confidence
from perflab.stats.paired import RatioEstimate, student_t_quantile
from perflab.stats.sequential import may_stop_early, sequence_alpha, sequence_interval, settles

BAND = 0.01


def estimate(n: int, log_mean: float, sd: float, confidence: float = 0.95) -> RatioEstimate:
    """What stats.paired.estimate_ratio makes of `n` units with this mean and SD (log ratios)."""
    half = student_t_quantile(0.5 + confidence / 2, n - 1) * sd / math.sqrt(n)
    return RatioEstimate(
        ratio=math.exp(log_mean),
        ci_low=math.exp(log_mean - half),
        ci_high=math.exp(log_mean + half),
        n_groups=n,
        n_pairs=n,
        between_group_sd=sd,
        confidence=confidence,
    )


def test_each_sequence_is_at_the_family_level_when_the_family_is_larger() -> None:
    assert math.isclose(sequence_alpha(0.95, 1), 0.05)
    assert math.isclose(sequence_alpha(0.95, 2), 0.025)
    # a run of 10 comparisons: each at 0.5%, whether one benchmark watches 1 or 2 of them
    assert math.isclose(sequence_alpha(0.95, 1, family=10), 0.005)
    assert math.isclose(sequence_alpha(0.95, 2, family=10), 0.005)
    assert math.isclose(sequence_alpha(0.95, 4, family=2), 0.0125)


def test_precise_at_95_percent_is_not_precise_enough_for_a_family_of_ten() -> None:
    # 30 units, SD 2%: the 95% sequence is within 1.5%, the 99.5% one is not
    found = estimate(30, 0.0, 0.02)
    alone = may_stop_early([found], precision=0.015, equivalence_band=0.05, confidence=0.95)
    together = may_stop_early(
        [found], precision=0.015, equivalence_band=0.05, confidence=0.95, family=10
    )
    assert alone and not together
    # the time lens's rule passes the family through
    assert sequences_within_precision([found], 0.015, equivalence_band=0.05)
    assert not sequences_within_precision([found], 0.015, equivalence_band=0.05, family=10)


def test_an_early_stop_in_a_family_settles_the_verdict_at_the_family_level() -> None:
    """Wherever the rule stops a run of a family of m, the interval the verdict is read off
    (the t interval at 1 - 0.05/m) settles it too: the stop never rests on a laxer level."""
    for family in (1, 2, 5, 20):
        level = family_confidence(0.95, family)
        for n in (10, 20, 40, 80):
            for sd in (0.002, 0.005, 0.01, 0.03):
                for log_mean in (-0.05, -0.02, -0.004, 0.0, 0.003, 0.012, 0.04):
                    found = estimate(n, log_mean, sd, level)
                    if may_stop_early(
                        [found], precision=1.0, equivalence_band=BAND, confidence=0.95,
                        family=family,
                    ):  # fmt: skip
                        assert settles(found.ci_low, found.ci_high, BAND), (family, n, sd)
                        low, high = sequence_interval(found, sequence_alpha(0.95, 1, family))
                        assert low <= found.ci_low and found.ci_high <= high
