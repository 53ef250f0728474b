"""Which lens measures which metric. Imported lazily: a lens's dependencies load only when used."""

from __future__ import annotations

import importlib

from perflab.errors import ConfigError
from perflab.measure.lens import Lens
from perflab.model import Metric

_LENSES: dict[Metric, str] = {
    Metric.TIME: "perflab.lenses.time.measure:TimeLens",
    Metric.INSTRUCTIONS: "perflab.lenses.instructions.measure:InstructionsLens",
    Metric.COUNTERS: "perflab.lenses.counters.measure:CountersLens",
    Metric.PROFILE: "perflab.lenses.profile.measure:ProfileLens",
    Metric.ASM: "perflab.lenses.asm.measure:AsmLens",
    Metric.TORCH: "perflab.lenses.torch.measure:TorchLens",
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
