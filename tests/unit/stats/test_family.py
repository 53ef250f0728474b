"""Several comparisons decided together (stats/family.py): the level each interval is computed
at, and how many comparisons a run's lens decides."""

from __future__ import annotations

import pytest

from perflab.api import make_experiment
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings
from perflab.stats.family import (
    family_confidence,
    family_settings,
    family_size,
    run_family_size,
)


def test_n_intervals_at_the_bonferroni_level_hold_the_confidence_together() -> None:
    assert family_confidence(0.95, 1) == pytest.approx(0.95)
    assert family_confidence(0.95, 5) == pytest.approx(0.99)
    assert family_confidence(0.99, 10) == pytest.approx(0.999)
    assert family_confidence(0.95, 0) == pytest.approx(0.95)  # no comparison: as one


def test_the_family_is_every_benchmarks_pairs_and_interactions() -> None:
    assert family_size(3, 2) == 6
    assert family_size(2, 4, interactions=1) == 10
    assert family_size(0, 0) == 1  # never zero: a level is still asked for


def test_a_run_of_three_variants_decides_two_comparisons_a_benchmark() -> None:
    benchmarks = (Benchmark("a", stmt="pass"), Benchmark("b", stmt="pass"))
    variants = (Variant("base"), Variant("one"), Variant("two"))
    experiment = Experiment(benchmarks, variants, Settings(confidence=0.95))
    assert run_family_size(experiment) == 4
    settings = family_settings(experiment)
    assert settings.confidence == pytest.approx(1 - 0.05 / 4)
    assert experiment.settings.confidence == 0.95  # the experiment's own are left as they were
    assert settings.budget_s == experiment.settings.budget_s


def test_one_comparison_is_decided_at_the_runs_own_confidence() -> None:
    experiment = make_experiment(stmt="pass", variants=["a", "b"])
    assert run_family_size(experiment) == 1
    assert family_settings(experiment) == experiment.settings
