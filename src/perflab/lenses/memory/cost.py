"""The memory lens's cost model for the budget's plan: the instructions lens's callgrind runs
(with cache simulation, one variant after the other), then the rss lens's workers, each priced
by that lens's own model (through the registry: a lens imports no other lens)."""

from __future__ import annotations

from dataclasses import replace

from perflab.plan.budget import CostModel, CostProbe, LensCost
from perflab.records.model import Metric, Settings


def _model_of(metric: Metric) -> CostModel:
    from perflab.lenses.registry import descriptor_for  # the registry lists this lens too

    model = descriptor_for(metric).cost
    assert model is not None, f"the {metric} lens has a cost model"
    return model


def memory_cost(probe: CostProbe, settings: Settings) -> LensCost:
    # the cache is simulated: the workers switch instrumentation around every loop
    one_variant = _model_of(Metric.INSTRUCTIONS)(
        replace(probe, variants=1), settings.with_options(cache_sim=True)
    )
    peak = _model_of(Metric("rss"))(probe, settings)
    return LensCost(
        Metric("memory"),
        minimum_s=probe.variants * one_variant.minimum_s + peak.minimum_s,
        needs=f"{one_variant.needs} per variant, one after another, then {peak.needs}",
        after_s=probe.variants * one_variant.after_s + peak.after_s,
    )
