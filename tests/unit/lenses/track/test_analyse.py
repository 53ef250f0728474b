"""The track lens's analysis: an exact ratio where every process returned one value, the paired
interval where the value varies, and no ratio where one is zero or negative."""

from __future__ import annotations

import pytest

from perflab.lenses.track import TRACK
from perflab.lenses.track.analyse import UNIT_ARTIFACT, VALUE, analyse_track
from perflab.records.kinds import Verdict
from perflab.records.model import Artifact, Benchmark, BenchmarkData, Sample, Severity
from perflab.records.settings import Settings

BENCHMARK = Benchmark("b", stmt="f()")


def _data(base: list[float], side: list[float], unit: str | None = None) -> BenchmarkData:
    samples = [
        Sample("b", name, TRACK, VALUE, value, generation=g)
        for name, values in (("A", base), ("B", side))
        for g, value in enumerate(values)
    ]
    artifacts = [Artifact("b", "A", TRACK, UNIT_ARTIFACT, unit)] if unit else []
    return BenchmarkData(tuple(samples), tuple(artifacts))


def test_equal_values_are_equivalent_exactly() -> None:
    analysis = analyse_track(BENCHMARK, ["A", "B"], _data([3, 3, 3], [3, 3, 3], "MB"), Settings())
    (comparison,) = analysis.comparisons
    assert (comparison.ratio, comparison.ci_low, comparison.ci_high) == (1.0, 1.0, 1.0)
    assert comparison.verdict is Verdict.EQUIVALENT and comparison.unit == "MB"


def test_a_smaller_value_is_lower() -> None:
    (comparison,) = analyse_track(
        BENCHMARK, ["A", "B"], _data([4, 4], [2, 2]), Settings()
    ).comparisons
    assert comparison.ratio == 0.5 and comparison.verdict is Verdict.FASTER


def test_a_varying_value_gets_the_paired_interval() -> None:
    base = [100.0, 101.0, 99.0, 100.0, 100.5]
    side = [120.0, 121.5, 119.0, 120.0, 120.2]
    (comparison,) = analyse_track(BENCHMARK, ["A", "B"], _data(base, side), Settings()).comparisons
    assert comparison.ratio == pytest.approx(1.2, rel=0.01)
    assert comparison.ci_low < comparison.ratio < comparison.ci_high
    assert comparison.verdict is Verdict.SLOWER
    assert comparison.to_json()["deterministic"] is False


def test_a_value_at_zero_gives_no_ratio_but_a_note() -> None:
    analysis = analyse_track(BENCHMARK, ["A", "B"], _data([0, 0], [2, 2]), Settings())
    assert not analysis.comparisons
    (note,) = analysis.notes
    assert "no verdict" in note.message and note.variant == "B"


def test_an_exact_change_from_zero_is_a_warning_that_names_both_values() -> None:
    # an error that was 0 and is not is a certain change: an info note would hide it
    (note,) = analyse_track(BENCHMARK, ["A", "B"], _data([0, 0], [1e-12, 1e-12]), Settings()).notes
    assert note.severity is Severity.WARNING
    assert "changed from 0 to 1e-12" in note.message


def test_a_varying_value_at_zero_is_an_info_note() -> None:
    (note,) = analyse_track(BENCHMARK, ["A", "B"], _data([0, 1], [2, 2]), Settings()).notes
    assert note.severity is Severity.INFO and "zero or negative" in note.message


def test_the_values_shown_agree_with_the_ratio_decided() -> None:
    """A/A of random.random() showed 0.5132 against 0.545 beside a ratio of 0.986: arithmetic
    means beside a ratio of geometric ones."""
    values = {"a": (0.9, 0.1, 0.5, 0.6), "b": (0.2, 0.8, 0.4, 0.7)}
    samples = tuple(
        Sample("r", variant, TRACK, VALUE, value, generation=generation)
        for variant, row in values.items()
        for generation, value in enumerate(row)
    )
    (c,) = analyse_track(
        Benchmark("r", stmt="random.random()"), ["a", "b"], BenchmarkData(samples), Settings()
    ).comparisons
    assert c.variant_value / c.baseline_value == pytest.approx(c.ratio)
