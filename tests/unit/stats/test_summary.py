"""One variant's samples summarised: spread and the interval of repeated counts."""

from __future__ import annotations

import math
import statistics

import pytest

from perflab.records.kinds import Metric
from perflab.records.model import Sample
from perflab.stats.summary import (
    mean_per_iteration,
    process_levels,
    process_ratio_interval,
    ratio_interval,
    relative_spread,
)


def test_relative_spread_is_the_mad_over_the_median() -> None:
    assert relative_spread([90.0, 100.0, 110.0, 100.0, 500.0]) == pytest.approx(0.1)
    assert math.isnan(relative_spread([]))
    assert math.isnan(relative_spread([0.0, 0.0]))


def test_ratio_interval_spans_every_combination_of_repeats() -> None:
    assert ratio_interval([100.0, 110.0], [90.0, 99.0]) == pytest.approx(
        (94.5 / 105.0, 90.0 / 110.0, 99.0 / 100.0)
    )
    assert all(math.isnan(x) for x in ratio_interval([], [1.0]))


def _sample(value: float, loops: int, *, warmup: bool = False) -> Sample:
    return Sample("b", "v", Metric.COUNTERS, "instructions", value, loops=loops, warmup=warmup)


def test_per_iteration_weighs_samples_by_their_loops_and_skips_warmup() -> None:
    samples = [_sample(1000.0, 10), _sample(3000.0, 20), _sample(1e9, 1, warmup=True)]
    assert mean_per_iteration(samples) == pytest.approx(4000.0 / 30)
    assert math.isnan(mean_per_iteration([_sample(5.0, 1, warmup=True)]))


def test_process_ratio_interval_widens_by_each_sides_process_spread() -> None:
    ratio, low, high = process_ratio_interval(((100.0, 100.0), (102.0,)), ((103.0,), (104.0,)))
    # every repeat: [103/102, 104/100]; A's processes 2% apart, B's ~0.97%
    widening = 1.02 * (104 / 103)
    assert low == pytest.approx(103 / 102 / widening)
    assert high == pytest.approx(104 / 100 * widening)
    assert low < 1 < high  # an A/A whose processes settled apart is not a difference
    assert ratio == pytest.approx(103.5 / 100)


def test_process_ratio_interval_of_one_process_a_side_is_the_repeats_interval() -> None:
    assert process_ratio_interval(((10.0, 11.0),), ((12.0,),)) == ratio_interval(
        (10.0, 11.0), (12.0,)
    )


def test_process_levels_compare_processes_with_the_repeats_inside_them() -> None:
    assert process_levels([[100.0, 100.0]]) is None  # one process: nothing to say
    agree = process_levels([[100.0, 100.01], [100.02, 100.0]])
    assert agree is not None and not agree.disagree
    assert agree.levels == pytest.approx((100.005, 100.01))
    apart = process_levels([[9695.51, 9695.25], [9814.78, 9816.97]])
    assert apart is not None and apart.disagree
    assert apart.between == pytest.approx(9815.875 / 9695.38 - 1)
    assert apart.within == pytest.approx(9816.97 / 9814.78 - 1)
    # repeats that scatter as much as the processes: no level of its own per process
    noisy = process_levels([[100.0, 103.0], [101.0, 104.0]])
    assert noisy is not None and not noisy.disagree


def test_a_variant_s_own_count_spans_its_repeats_widened_by_its_processes() -> None:
    from perflab.stats.summary import process_count_interval

    value, low, high = process_count_interval(((100.0, 100.0), (102.0,)))
    assert value == 100.0
    assert (low, high) == (pytest.approx(100 / 1.02), pytest.approx(102 * 1.02))
    assert process_count_interval(((7.0, 7.0),)) == (7.0, 7.0, 7.0)  # one process widens nothing
    assert all(math.isnan(x) for x in process_count_interval(()))


# time_waverec of PyWavelets's asv suite, every process of an A/A alike: the first call ~9% more
WAVEREC = (187_454.0, 172_049.0, 172_385.0, 172_036.0)


def test_repeats_that_vary_alike_in_every_process_span_the_processes_levels() -> None:
    from perflab.stats.summary import repeats_vary_alike

    assert repeats_vary_alike((WAVEREC, WAVEREC, WAVEREC))
    assert process_ratio_interval((WAVEREC, WAVEREC), (WAVEREC, WAVEREC)) == (1.0, 1.0, 1.0)
    # a real difference, every repeat 3% more: the interval is the processes' 1.03, exactly
    more = tuple(v * 1.03 for v in WAVEREC)
    assert process_ratio_interval((WAVEREC, WAVEREC), (more, more)) == pytest.approx(
        (1.03, 1.03, 1.03)
    )


def test_repeats_that_do_not_vary_alike_keep_the_interval_of_every_repeat() -> None:
    from perflab.stats.summary import repeats_vary_alike

    scattered = (172_049.0, 187_454.0, 172_385.0, 172_036.0)  # the extra call elsewhere
    assert not repeats_vary_alike((WAVEREC, scattered))
    assert not repeats_vary_alike(((100.0, 103.0), (104.0, 101.0)))  # noise, not a course
    assert not repeats_vary_alike(((100.0, 100.0), (102.0, 102.0)))  # flat: nothing to explain
    wide = process_ratio_interval((WAVEREC, scattered), (WAVEREC, WAVEREC))
    assert wide[1] < 0.92 and wide[2] > 1.08
    # one process a side: nothing is known of the processes, every repeat spans it
    assert process_ratio_interval((WAVEREC,), (WAVEREC,)) == ratio_interval(WAVEREC, WAVEREC)


def test_a_variant_s_own_count_spans_its_levels_where_its_processes_repeated_alike() -> None:
    from perflab.stats.summary import process_count_interval

    value, low, high = process_count_interval((WAVEREC, WAVEREC))
    assert low == high == value == statistics.median(WAVEREC)
