"""Values formatted by unit (records/units.py): a readable unit for times, separators for large
counts, the interval beside a ratio, "-" for what is undefined."""

from __future__ import annotations

import math

import pytest

from perflab.records.units import format_ns, format_ratio, format_seconds, format_value


@pytest.mark.parametrize(
    ("value_ns", "shown"),
    [
        (0.0, "0 ns"),
        (999.0, "999 ns"),
        (1_000.0, "1 µs"),
        (12_345.0, "12.3 µs"),
        (2_500_000.0, "2.5 ms"),
        (3.2e9, "3.2 s"),
        (-1_500.0, "-1.5 µs"),
        (math.nan, "-"),
    ],
)
def test_nanoseconds_in_the_unit_that_reads(value_ns: float, shown: str) -> None:
    assert format_ns(value_ns) == shown


def test_values_by_unit() -> None:
    assert format_value(2_500.0, "ns") == "2.5 µs"
    assert format_value(12_345.0, "B") == "12,345 B"
    assert format_value(1.23456, "reads") == "1.235 reads"
    assert format_value(42.0, "") == "42"
    assert format_value(math.nan, "B") == "-"


def test_a_ratio_with_its_interval() -> None:
    assert format_ratio(1.0234, 1.01, 1.04) == "1.023 [1.010, 1.040]"
    assert format_ratio(2.0, 2.0, 2.0) == "2.000"  # a count that never varies: no interval
    assert format_ratio(1.5, 0.0, math.inf) == "1.500 [0.000, ∞]"
    assert format_ratio(math.nan, 0.0, math.inf) == "-"


def test_seconds_minutes_and_hours() -> None:
    assert format_seconds(89.4) == "89 s"
    assert format_seconds(90.0) == "2 min"
    assert format_seconds(5399.0) == "90 min"
    assert format_seconds(5400.0) == "1.5 h"
