"""The memory lens's name (lenses/memory/metric.py): the one its descriptor and its package
export."""

from __future__ import annotations

from perflab.lenses.memory import DESCRIPTOR, MEMORY
from perflab.records.kinds import Metric


def test_the_lens_is_named_memory_once() -> None:
    assert MEMORY == Metric("memory")
    assert DESCRIPTOR.metric is MEMORY
