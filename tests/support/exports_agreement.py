"""The agreement between one run's exports (hyperfine JSON, CSV, perflab's JSON) and its raw
samples, checked on a captured run (tests/unit/report) and a live one (tests/cli)."""

from __future__ import annotations

import csv
import io
import math
import statistics
from typing import Any

import pytest

RAW_FIELDS = ("mean", "stddev", "median", "min", "max")


def check_exports_agree(
    hyperfine: list[dict[str, Any]],
    csv_text: str,
    document: dict[str, Any],
    raw: dict[str, list[float]],
) -> None:
    """The agreement every run's exports keep (also run on a live run: tests/cli)."""
    by_variant = {entry["variant"]: entry for entry in hyperfine}
    assert set(by_variant) == set(raw)
    for variant, times in raw.items():
        entry = by_variant[variant]
        assert entry["times"] == pytest.approx(times)
        assert entry["mean"] == pytest.approx(statistics.mean(times))
        assert entry["median"] == pytest.approx(statistics.median(times))
        assert (entry["min"], entry["max"]) == pytest.approx((min(times), max(times)))
        if len(times) > 1:
            assert entry["stddev"] == pytest.approx(statistics.stdev(times))
        for field in ("mean", "median"):
            assert min(times) <= entry[field] <= max(times)
        # perflab's estimate sits in its own interval; the older names hold that interval
        low, high = entry["perflab_ci_low"], entry["perflab_ci_high"]
        assert low <= entry["perflab_estimate"] <= (math.inf if high is None else high)
        assert (entry["ci_low"], entry["ci_high"]) == (low, high)
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert len(rows) == len(hyperfine)
    for row, entry in zip(rows, hyperfine, strict=True):
        for column, cell in row.items():
            value = entry.get(column)
            if isinstance(value, float):
                assert float(cell) == pytest.approx(value), column
            elif value is not None and not column.startswith("parameter_"):
                assert cell == str(value), column
    for own in document["measurements"]:
        entry = by_variant[own["variant"]]
        assert own["value"] / 1e9 == pytest.approx(entry["perflab_estimate"])
        assert own["value_estimator"] == entry["perflab_estimator"]
        assert own["value_preempted"] == entry["perflab_preempted"]
        for field in RAW_FIELDS:
            if own[field] is not None:
                assert own[field] / 1e9 == pytest.approx(entry[field]), field
