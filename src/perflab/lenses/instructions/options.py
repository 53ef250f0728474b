"""The instructions lens's options, declared for its descriptor (the CLI options, experiment-file
keys and API keywords are derived from them), and their typed values in a run's settings."""

from __future__ import annotations

import re
from typing import Any

from perflab.lenses.descriptor import LensOption
from perflab.records.kinds import Metric
from perflab.records.settings import SettingKind, Settings, SettingSpec


def _regexes(layers: Any) -> str | None:
    for name, pattern in layers:
        try:
            re.compile(pattern)
        except re.error as error:
            return f"layer {name!r}: {pattern!r} is not a regular expression ({error})"
    return None


REGION = LensOption(
    "region",
    None,
    SettingSpec(
        SettingKind.TEXT,
        "instructions, memory (commands): count only inside this function",
        key="region",
        flags=("--region",),
        lens=Metric.INSTRUCTIONS,
    ),
)
CACHE_SIM = LensOption(
    "cache_sim",
    False,
    SettingSpec(
        SettingKind.BOOLEAN,
        "instructions: simulate caches and branches",
        key="cache_sim",
        flags=("--cache-sim",),
        lens=Metric.INSTRUCTIONS,
    ),
)
# (layer name, regex on function or object name)
LAYERS = LensOption(
    "layers",
    (),
    SettingSpec(
        SettingKind.LAYERS,
        "instructions: group costs into layers by function or library name (repeatable)",
        key="layers",
        flags=("--layer",),
        lens=Metric.INSTRUCTIONS,
        repeat=True,
        metavar="NAME=REGEX",
        check=_regexes,
    ),
)
OPTIONS = (REGION, CACHE_SIM, LAYERS)


def region_of(settings: Settings) -> str | None:
    """Commands: the function counting is limited to (None: the whole process)."""
    value: str | None = REGION.value(settings)
    return value


def cache_sim_of(settings: Settings) -> bool:
    """Whether callgrind simulates caches and branches."""
    return bool(CACHE_SIM.value(settings))


def layers_of(settings: Settings) -> tuple[tuple[str, str], ...]:
    """(layer name, regex on function or object name) pairs, in the order given."""
    value: tuple[tuple[str, str], ...] = LAYERS.value(settings)
    return value
