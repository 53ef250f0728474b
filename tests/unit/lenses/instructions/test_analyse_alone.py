"""A lone variant's own instruction count: what a run of one variant answers."""

from __future__ import annotations

import pytest

from perflab.lenses.instructions.analyse import own_count
from perflab.lenses.instructions.counts import VariantCounts
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark


def test_the_count_is_the_median_repeat_with_the_processes_interval() -> None:
    counts = VariantCounts(
        (9_495.0, 9_495.0, 9_500.0), {}, None, None, processes=((9_495.0, 9_495.0), (9_500.0,))
    )
    own = own_count(Benchmark("b", stmt="x"), "A", counts)
    assert own is not None
    assert (own.metric, own.variant, own.unit) == (Metric.INSTRUCTIONS, "A", "instructions")
    assert (own.value, own.n_groups, own.group_name) == (9_495.0, 2, "process")
    assert own.ci_low < 9_495.0 and own.ci_high > 9_500.0
    assert own.ci_high == pytest.approx(9_500 * 9_500 / 9_495)
    assert (own.min, own.max, own.times) == (9_495.0, 9_500.0, (9_495.0, 9_495.0, 9_500.0))


def test_nothing_counted_is_no_figure() -> None:
    assert own_count(Benchmark("b", stmt="x"), "A", VariantCounts((), {}, None, None)) is None
