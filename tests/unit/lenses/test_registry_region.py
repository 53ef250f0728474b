"""Which lenses see a command's self-reported region alone is their descriptors' word."""

from perflab.lenses.memory import MEMORY
from perflab.lenses.registry import region_metrics
from perflab.records.kinds import Metric


def test_time_instructions_and_memory_see_the_region_alone() -> None:
    assert region_metrics() == (Metric.TIME, Metric.INSTRUCTIONS, MEMORY)
