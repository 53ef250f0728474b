"""The settings users may give, by name: the core `Settings` fields, each lens's options (from
its descriptor) and the retired ones; their defaults, and values normalised and checked, shared
by the CLI, experiment files and the API."""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping
from typing import Any

from perflab.lenses.registry import declared_options, with_default_options
from perflab.plan.specs import parse_layer, parse_metrics
from perflab.records.errors import ConfigError, RetiredSettingWarning
from perflab.records.settings import (
    SettingKind,
    Settings,
    SettingSpec,
    normalise_setting,
    setting_specs,
)

# settings that no longer do anything: accepted with a warning, so that older files, command
# lines and calls keep working
RETIRED: dict[str, tuple[SettingSpec, str]] = {
    "min_measurements_anyway": (
        SettingSpec(
            SettingKind.BOOLEAN,
            "deprecated, no effect: every lens's minimum is measured even when --budget cannot "
            "hold it; --strict-budget refuses instead",
            key="min_measurements_anyway",
            flags=("--min-measurements-anyway",),
        ),
        "min_measurements_anyway (--min-measurements-anyway) is deprecated and does nothing: "
        "measuring every lens's minimum is the default (strict_budget, --strict-budget, "
        "refuses instead)",
    ),
}


def user_setting_specs() -> dict[str, SettingSpec]:
    """Every setting users may give, by name: the core `Settings` fields, then each lens's
    options (declared by its descriptor), then the retired ones; the CLI options, the
    experiment-file keys and the API's keyword arguments are derived from these."""
    return {
        **setting_specs(),
        **{name: option.spec for name, option in declared_options().items()},
        **{name: spec for name, (spec, _) in RETIRED.items()},
    }


def setting_default(name: str) -> Any:
    """The value a setting has when not given."""
    options = declared_options()
    if name in options:
        return options[name].default
    if name in RETIRED:
        return False
    return getattr(Settings(), name)


def setting_keys() -> dict[str, str]:
    """Experiment-file key -> setting name, for every setting users may set."""
    return {spec.key: name for name, spec in user_setting_specs().items() if spec.key is not None}


def setting_fields() -> frozenset[str]:
    """The `Settings` fields users may set (the API's keyword arguments)."""
    return frozenset(setting_keys().values())


def normalised_settings(changes: Mapping[str, Any]) -> dict[str, Any]:
    """Settings given by field name (API keyword arguments, CLI options; None: not given) as the
    types `Settings` holds: metrics parsed and checked, lists and tables as tuples."""
    specs = user_setting_specs()
    out: dict[str, Any] = {}
    for name, value in changes.items():
        if value is None:
            continue
        if name in RETIRED:
            warnings.warn(RETIRED[name][1], RetiredSettingWarning, stacklevel=4)
            continue
        kind = specs[name].kind
        if kind is SettingKind.METRICS:
            out[name] = parse_metrics(value)
            continue
        if kind is SettingKind.LAYERS and not isinstance(value, Mapping):
            # the CLI's NAME=REGEX words, or (name, regex) pairs
            value = [parse_layer(v) if isinstance(v, str) else v for v in value]
        out[name] = normalise_setting(kind, value)
    return out


def finite_number_problems(settings: Settings) -> list[str]:
    """Every number must be finite: NaN compares false with every bound (`--budget nan` ran
    forever) and infinity is no budget or timeout either. TOML accepts nan and inf too."""
    keys = {field: key for key, field in setting_keys().items()}
    values = [(f.name, getattr(settings, f.name)) for f in dataclasses.fields(settings)]
    return [
        f"{keys.get(name, name)} must be a finite number, not {value!r}"
        for name, value in [*values, *settings.lens_options]
        if isinstance(value, float) and not math.isfinite(value)
    ]


def settings_with(settings: Settings, **changes: Any) -> Settings:
    """Validated replacement of settings (shared by the CLI, experiment files and the API), by
    name: core fields, and lens options (every declared one then holds its value or default)."""
    options = declared_options()
    merged = dataclasses.replace(
        settings, **{name: value for name, value in changes.items() if name not in options}
    ).with_options(**{name: value for name, value in changes.items() if name in options})
    merged = with_default_options(merged)
    problems = finite_number_problems(merged)
    if problems:
        raise ConfigError("; ".join(problems), hint="give a number such as 3 or 0.5")
    problems = merged.problems() + [
        problem
        for name, option in options.items()
        if option.spec.check is not None
        and (problem := option.spec.check(option.value(merged))) is not None
    ]
    if problems:
        raise ConfigError("; ".join(problems))
    return merged
