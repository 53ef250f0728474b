"""The lenses this version of perflab has: one descriptor each, in the order they are listed
to users. Adding a lens is adding its package and one line here."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from perflab.budget.costs import CostModel, composed_cost
from perflab.budget.perf_costs import Reading
from perflab.lenses.asm import DESCRIPTOR as ASM
from perflab.lenses.counters import DESCRIPTOR as COUNTERS
from perflab.lenses.descriptor import LensDescriptor
from perflab.lenses.instructions import DESCRIPTOR as INSTRUCTIONS
from perflab.lenses.memory import DESCRIPTOR as MEMORY
from perflab.lenses.profile import DESCRIPTOR as PROFILE
from perflab.lenses.rss import DESCRIPTOR as RSS
from perflab.lenses.time import DESCRIPTOR as TIME
from perflab.lenses.torch import DESCRIPTOR as TORCH
from perflab.lenses.track import DESCRIPTOR as TRACK
from perflab.records.errors import ConfigError
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.settings import LensOption, Settings

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
    TRACK,
)


def available_metrics() -> tuple[Metric, ...]:
    """Every registered lens's metric, in the order users see them."""
    return tuple(d.metric for d in DESCRIPTORS)


def descriptor_for(metric: Metric) -> LensDescriptor:
    """The registered lens's descriptor; a ConfigError naming the lenses when none measures
    `metric` (a stored run of another perflab version)."""
    for descriptor in DESCRIPTORS:
        if descriptor.metric == metric:
            return descriptor
    raise ConfigError(
        f"the {metric} lens is not available in this version of perflab",
        hint="available: " + ", ".join(m.value for m in available_metrics()),
    )


def top_level_lists() -> tuple[str, ...]:
    """The JSON document's top-level lists every document has, empty or not (each lens's
    `top_level_lists`), in the order the lenses are listed."""
    return tuple(name for d in DESCRIPTORS for name in d.top_level_lists)


def wall_time_metrics() -> frozenset[Metric]:
    """The lenses measuring the whole statement's wall time (`Figures.wall_time`)."""
    return frozenset(d.metric for d in DESCRIPTORS if d.figures.wall_time)


def countable_metrics() -> frozenset[Metric]:
    """The lenses whose figure counts things (`Figures.countable`): "fewer", not "less"."""
    return frozenset(d.metric for d in DESCRIPTORS if d.figures.countable)


def recording_readers(
    metric: Metric, metrics: Collection[Metric], kind: BenchmarkKind
) -> dict[Metric, Reading]:
    """The lenses of `metrics` reading the recording `metric`'s lens reads of a benchmark of
    `kind` (`Planning.shares_recording`), `metric`'s own included, each with its reading, in
    the order the lenses are listed; empty: it shares none. A command's: `metric`'s alone."""
    own = descriptor_for(metric).planning.shares_recording
    if own is None:
        return {}
    if kind is not BenchmarkKind.STATEMENT:
        return {metric: own.reading}
    return {
        d.metric: shared.reading
        for d in DESCRIPTORS
        if d.metric in metrics
        and (shared := d.planning.shares_recording) is not None
        and shared.name == own.name
    }


def shared_recordings(metrics: Collection[Metric]) -> frozenset[str]:
    """The recordings two or more of `metrics`' lenses read (`Planning.shares_recording`)."""
    named = [
        shared.name
        for d in DESCRIPTORS
        if d.metric in metrics and (shared := d.planning.shares_recording) is not None
    ]
    return frozenset(name for name in named if named.count(name) > 1)


def region_metrics() -> tuple[Metric, ...]:
    """The lenses that see a command's self-reported measured region alone
    (`Figures.sees_region`), in the order they are listed."""
    return tuple(d.metric for d in DESCRIPTORS if d.figures.sees_region)


def suite_kind_metrics(kind: str) -> tuple[Metric, ...]:
    """The lenses that alone give the figure of a suite's benchmarks of `kind` (asv's
    `peakmem` ...: `LensDescriptor.suite_kinds`), in the order they are listed; empty: the
    run's lenses measure them."""
    return tuple(d.metric for d in DESCRIPTORS if kind in d.suite_kinds)


def alone_metrics() -> tuple[Metric, ...]:
    """The lenses that measure a variant alone, with nothing to compare it with
    (`Figures.measures_alone`), in the order they are listed."""
    return tuple(d.metric for d in DESCRIPTORS if d.figures.measures_alone)


def cost_model(metric: Metric) -> CostModel | None:
    """The lens's cost model for the budget's plan: its own, or the one the plan composes from
    the parts it declares (`Planning.cost_parts`); None: the plan's default."""
    planning = descriptor_for(metric).planning
    if planning.cost_parts:
        return composed_cost(metric, planning.cost_parts, cost_model)
    return planning.cost


def lens_for(metric: Metric) -> Lens:
    """The lens measuring `metric`; its module (and dependencies) load only now."""
    return descriptor_for(metric).create()


def declared_options() -> dict[str, LensOption]:
    """Every lens's options by name, in the order the lenses are listed. A name is one lens's
    (the stored settings keep every option under its own name; tests/unit/lenses/test_descriptor.py
    checks that no two lenses and no core setting share one)."""
    return {option.name: option for d in DESCRIPTORS for option in d.options}


def lens_option(settings: Settings, name: str) -> Any:
    """A lens option's value in `settings`: the one given, else its lens's declared default."""
    return declared_options()[name].value(settings)


def with_default_options(settings: Settings) -> Settings:
    """`settings` holding every declared lens option, the defaults for those not given (so that
    a run's stored settings name each option's value, as they always did)."""
    missing = {
        name: option.default
        for name, option in declared_options().items()
        if name not in dict(settings.lens_options)
    }
    return settings.with_options(**missing) if missing else settings
