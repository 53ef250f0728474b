"""The fragments every lens's section is built from: a measurement table, a count."""

from __future__ import annotations

from perflab.lenses.fragments import count_per_iteration_text


def test_one_run_is_shown_without_an_interval() -> None:
    """--runs 1: one group has no spread; the table says so instead of [0 ns, inf s]."""
    import math

    from perflab.lenses.fragments import measurement_table
    from perflab.records.kinds import Metric
    from perflab.records.model import Measurement

    def measured(groups: int, low: float, high: float) -> Measurement:
        return Measurement(
            benchmark="b",
            metric=Metric.TIME,
            variant="A",
            value=1e6,
            ci_low=low,
            ci_high=high,
            unit="ns",
            n_groups=groups,
            group_name="batch",
            mean=1e6,
            stddev=math.nan,
            median=1e6,
            min=1e6,
            max=1e6,
            times=(1e6,) * groups,
        )

    (once,) = measurement_table([measured(1, 0.0, math.inf)]).rows
    assert "(one run: no interval)" in once[2].text and "inf" not in once[2].text
    (twice,) = measurement_table([measured(2, 0.9e6, 1.1e6)]).rows
    assert "[" in twice[2].text


def test_tiny_counts_per_iteration_read_as_one_per_n_iterations() -> None:
    assert count_per_iteration_text(9.001e-05, "") == "1 per 11,110 iterations"
    assert count_per_iteration_text(2.5, "D1 misses") == "2.5 D1 misses per iteration"
    assert count_per_iteration_text(0.0, "") == "0 per iteration"
    assert (
        count_per_iteration_text(123456.0, "instructions") == "123,456 instructions per iteration"
    )
