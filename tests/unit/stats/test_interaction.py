"""Ratios of ratios (stats/interaction.py), and variants as templates."""

from __future__ import annotations

import math

import pytest
from scipy import stats as scipy_stats

from perflab.plan.specs import parse_variant
from perflab.records.errors import ConfigError
from perflab.records.model import Variant
from perflab.records.results import InteractionVerdict, Interval
from perflab.stats.interaction import (
    interaction_from_intervals,
    interaction_verdict,
    intervals_overlap,
    paired_interaction,
    product_of_steps,
)


def test_paired_interaction_is_a_t_interval_over_generations_of_the_difference() -> None:
    on_base = {0: math.log(0.80), 1: math.log(0.82), 2: math.log(0.78), 3: math.log(0.81)}
    on_reference = {0: math.log(1.00), 1: math.log(1.01), 2: math.log(0.99), 3: math.log(1.0)}
    result = paired_interaction(on_base, on_reference, confidence=0.95)
    differences = [on_base[g] - on_reference[g] for g in range(4)]
    mean = sum(differences) / 4
    sd = math.sqrt(sum((d - mean) ** 2 for d in differences) / 3)
    half = scipy_stats.t.ppf(0.975, df=3) * sd / 2
    assert result.ratio == pytest.approx(math.exp(mean))
    assert result.ci_low == pytest.approx(math.exp(mean - half))
    assert result.ci_high == pytest.approx(math.exp(mean + half))
    assert result.ci_high < 1  # helps more on base than on the reference


def test_paired_interaction_uses_only_shared_generations() -> None:
    result = paired_interaction({0: 0.1, 1: 0.1, 5: 9.0}, {0: 0.0, 1: 0.0, 7: -9.0})
    assert result.ratio == pytest.approx(math.exp(0.1))
    assert result.ci_low == pytest.approx(result.ci_high)
    assert math.isnan(paired_interaction({0: 0.1}, {1: 0.1}).ratio)
    assert paired_interaction({0: 0.1}, {0: 0.0}).ci_high == math.inf


def test_intervals_combine_in_log_space() -> None:
    exact = interaction_from_intervals(Interval(0.5, 0.5, 0.5), Interval(1.0, 1.0, 1.0))
    assert (exact.ratio, exact.ci_low, exact.ci_high) == pytest.approx((0.5, 0.5, 0.5))
    wide = interaction_from_intervals(Interval(1.0, 0.9, 1.1), Interval(1.0, 0.9, 1.1))
    down = math.sqrt(math.log(1 / 0.9) ** 2 + math.log(1.1) ** 2)
    assert wide.ci_low == pytest.approx(math.exp(-down))
    unknown = interaction_from_intervals(Interval(1.0, 0.0, math.inf), Interval(1.0, 1.0, 1.0))
    assert unknown.ci_high == math.inf


def test_steps_multiply_up_to_the_whole() -> None:
    steps = [Interval(0.5, 0.5, 0.5), Interval(1.8, 1.8, 1.8), Interval(1.0, 1.0, 1.0)]
    product = product_of_steps(steps)
    assert product.ratio == pytest.approx(0.9)
    assert intervals_overlap(product, Interval(0.9 * (1 + 1e-12), 0.9, 0.9 * (1 + 1e-12)))
    assert not intervals_overlap(product, Interval(1.2, 1.15, 1.25))


def test_interaction_verdicts() -> None:
    assert interaction_verdict(0.995, 1.004, 0.01) is InteractionVerdict.NONE
    assert interaction_verdict(0.7, 0.8, 0.01) is InteractionVerdict.BETTER_ON_BASE
    assert interaction_verdict(1.2, 1.3, 0.01) is InteractionVerdict.WORSE_ON_BASE
    assert interaction_verdict(0.9, 1.1, 0.01) is InteractionVerdict.INCONCLUSIVE


def test_variant_specs_take_git_refs_and_changes() -> None:
    variant = parse_variant("mine git=HEAD apply=a.patch,1234abc cwd=build")
    assert (variant.git, variant.apply, variant.cwd) == ("HEAD", ("a.patch", "1234abc"), "build")
    assert "git=HEAD" in variant.describe()
    with pytest.raises(ConfigError, match="apply= applies changes on top of a git= ref"):
        parse_variant("mine apply=a.patch")


def test_params_are_substituted_in_every_variant_field() -> None:
    variant = Variant(
        "v",
        python="envs/$py/bin/python",
        env={"N": "${n}", "HOME_IS": "$HOME"},
        cwd="build-$n",
        cmd="./bench $n",
        build="make N=$n",
        git="release-$rel",
        apply=("fix-$n.patch",),
    )
    at = variant.at({"n": "100", "py": "3.11", "rel": "2.1"})
    assert at.python == "envs/3.11/bin/python"
    assert dict(at.env) == {"N": "100", "HOME_IS": "$HOME"}
    assert (at.cwd, at.cmd, at.build, at.git) == ("build-100", "./bench 100", "make N=100",
                                                  "release-2.1")  # fmt: skip
    assert at.apply == ("fix-100.patch",)
    assert variant.at({}) is variant
