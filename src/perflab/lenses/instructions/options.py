"""The instructions lens's options, declared for its descriptor (the CLI options, experiment-file
keys and API keywords are derived from them), and their typed values in a run's settings."""

from __future__ import annotations

import re
from typing import Any

from perflab.lenses.instructions.metric import INSTRUCTIONS
from perflab.lenses.shared_options import CACHE_SIM, REGION
from perflab.records.settings import LensOption, SettingKind, Settings, SettingSpec


def _regexes(layers: Any) -> str | None:
    for name, pattern in layers:
        try:
            re.compile(pattern)
        except re.error as error:
            return f"layer {name!r}: {pattern!r} is not a regular expression ({error})"
    return None


# (layer name, regex on function or object name)
LAYERS = LensOption(
    "layers",
    (),
    SettingSpec(
        SettingKind.LAYERS,
        "instructions: group costs into layers by function or library name (repeatable)",
        key="layers",
        flags=("--layer",),
        lens=INSTRUCTIONS,
        repeat=True,
        metavar="NAME=REGEX",
        check=_regexes,
    ),
)
# REGION and CACHE_SIM: the memory lens counts with them too, so they are declared with the
# shared options
OPTIONS = (REGION, CACHE_SIM, LAYERS)


def layers_of(settings: Settings) -> tuple[tuple[str, str], ...]:
    """(layer name, regex on function or object name) pairs, in the order given."""
    value: tuple[tuple[str, str], ...] = LAYERS.value(settings)
    return value
