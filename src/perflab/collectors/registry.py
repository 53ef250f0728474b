"""Which lens measures which metric. Imported lazily: a lens's dependencies load only when used."""

from __future__ import annotations

import importlib

from perflab.collectors.base import Lens
from perflab.errors import ConfigError
from perflab.model import Metric

_LENSES: dict[Metric, str] = {
    Metric.TIME: "perflab.collectors.time:TimeLens",
    Metric.INSTRUCTIONS: "perflab.collectors.instructions:InstructionsLens",
    Metric.COUNTERS: "perflab.collectors.counters:CountersLens",
    Metric.PROFILE: "perflab.collectors.profile:ProfileLens",
    Metric.ASM: "perflab.collectors.asm:AsmLens",
    Metric.TORCH: "perflab.collectors.torch_ops:TorchLens",
}


def lens_for(metric: Metric) -> Lens:
    target = _LENSES.get(metric)
    if target is None:
        raise ConfigError(
            f"the {metric.value} lens is not available in this version of perflab",
            hint="available: " + ", ".join(m.value for m in _LENSES),
        )
    module_name, _, class_name = target.partition(":")
    lens: Lens = getattr(importlib.import_module(module_name), class_name)()
    return lens
