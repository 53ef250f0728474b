"""The options several lenses read: each declared once, listed by the one lens that owns it, and
read through a typed accessor by every lens that needs it."""

from __future__ import annotations

from perflab import api
from perflab.lenses.registry import DESCRIPTORS
from perflab.lenses.shared_options import (
    ANALYSIS_CACHE,
    CACHE_SIM,
    REGION,
    analysis_cache_of,
    cache_sim_of,
    region_of,
)
from perflab.records.kinds import Metric
from perflab.records.settings import Settings

SUBJECT = "perflab.lenses.shared_options"


def test_each_shared_option_is_listed_by_its_owning_lens_alone() -> None:
    owners = {
        option.name: [d.metric for d in DESCRIPTORS if option in d.options]
        for option in (REGION, CACHE_SIM, ANALYSIS_CACHE)
    }
    assert owners == {
        "region": [Metric.INSTRUCTIONS],
        "cache_sim": [Metric.INSTRUCTIONS],
        "analysis_cache": [Metric.ASM],
    }


def test_not_given_each_reads_its_default() -> None:
    settings = Settings()
    assert region_of(settings) is None
    assert cache_sim_of(settings) is False
    assert analysis_cache_of(settings) is True


def test_given_each_reads_the_value_given() -> None:
    settings = Settings().with_options(region="kernel", cache_sim=True, analysis_cache=False)
    assert region_of(settings) == "kernel"
    assert cache_sim_of(settings) is True
    assert analysis_cache_of(settings) is False


def test_the_memory_lens_reads_the_region_given_for_it() -> None:
    memory = api.make_experiment(cmd="true", variants=["A", "B"], metrics="memory", region="kernel")
    assert region_of(memory.settings) == "kernel"
