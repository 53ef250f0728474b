"""The counters lens's name (lenses/counters/metric.py): the one its descriptor and package export,
and the public spelling `Metric.COUNTERS`."""

from __future__ import annotations

from perflab.lenses.counters import COUNTERS, DESCRIPTOR
from perflab.records.kinds import Metric


def test_the_lens_is_named_counters_once() -> None:
    assert COUNTERS == Metric("counters")
    assert DESCRIPTOR.metric is COUNTERS
    assert Metric.COUNTERS is COUNTERS
