"""Which lenses see a command's self-reported region alone, and which measure a lone variant,
is their descriptors' word."""

from perflab.lenses.memory import MEMORY
from perflab.lenses.registry import region_metrics
from perflab.records.kinds import Metric


def test_time_instructions_and_memory_see_the_region_alone() -> None:
    assert region_metrics() == (Metric.TIME, Metric.INSTRUCTIONS, MEMORY)


def test_time_instructions_and_rss_measure_a_lone_variant() -> None:
    from perflab.lenses.registry import alone_metrics
    from perflab.lenses.rss import RSS

    assert alone_metrics() == (Metric.TIME, Metric.INSTRUCTIONS, RSS)
