"""The time lens's name (lenses/time/metric.py): the one its descriptor and package export,
and the public spelling `Metric.TIME`."""

from __future__ import annotations

from perflab.lenses.time import DESCRIPTOR, TIME
from perflab.records.kinds import Metric


def test_the_lens_is_named_time_once() -> None:
    assert TIME == Metric("time")
    assert DESCRIPTOR.metric is TIME
    assert Metric.TIME is TIME
