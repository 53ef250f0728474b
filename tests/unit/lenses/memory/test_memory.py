"""The memory lens's descriptor (lenses/memory/__init__.py): the lens is known by it alone."""

from __future__ import annotations

from perflab.lenses.memory import MEMORY
from perflab.plan.specs import parse_metrics
from perflab.records.kinds import Metric


def test_the_lens_is_registered_by_its_descriptor_alone() -> None:
    assert parse_metrics("time,memory") == (Metric.TIME, MEMORY)
