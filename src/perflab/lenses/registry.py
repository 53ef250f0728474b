"""The lenses this version of perflab has: one descriptor each, in the order they are listed
to users. Adding a lens is adding its package and one line here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from perflab.lenses.asm import DESCRIPTOR as ASM
from perflab.lenses.counters import DESCRIPTOR as COUNTERS
from perflab.lenses.descriptor import LensDescriptor
from perflab.lenses.instructions import DESCRIPTOR as INSTRUCTIONS
from perflab.lenses.memory import DESCRIPTOR as MEMORY
from perflab.lenses.profile import DESCRIPTOR as PROFILE
from perflab.lenses.rss import DESCRIPTOR as RSS
from perflab.lenses.time import DESCRIPTOR as TIME
from perflab.lenses.torch import DESCRIPTOR as TORCH
from perflab.records.errors import ConfigError
from perflab.records.model import Metric

if TYPE_CHECKING:
    from perflab.measure.lens import Lens

DESCRIPTORS: tuple[LensDescriptor, ...] = (
    TIME,
    INSTRUCTIONS,
    COUNTERS,
    PROFILE,
    ASM,
    TORCH,
    RSS,
    MEMORY,
)


def available_metrics() -> tuple[Metric, ...]:
    return tuple(d.metric for d in DESCRIPTORS)


def descriptor_for(metric: Metric) -> LensDescriptor:
    for descriptor in DESCRIPTORS:
        if descriptor.metric == metric:
            return descriptor
    raise ConfigError(
        f"the {metric} lens is not available in this version of perflab",
        hint="available: " + ", ".join(m.value for m in available_metrics()),
    )


def lens_for(metric: Metric) -> Lens:
    """The lens measuring `metric`; its module (and dependencies) load only now."""
    return descriptor_for(metric).create()
