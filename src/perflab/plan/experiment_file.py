"""Experiment files (TOML) -> the model, with precise errors: the [settings], [params],
[[variant]] and [[benchmark]] tables (and a design: build, [stack] or [matrix]) read and checked.
The command line's and the API's arguments become an experiment in `experiment_arguments.py`,
their specs are read in `specs.py`, the settings by name in `settings_by_name.py`."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from perflab.machine.proc import ProcessRunner
from perflab.plan.settings_by_name import (
    normalised_settings,
    setting_keys,
    settings_with,
    user_setting_specs,
)
from perflab.plan.specs import (
    VARIANT_HINT,
    VARIANT_KEYS,
    check_keys_apply,
    check_variant_name,
    check_variants,
    checked_git_keys,
    expand_grid,
)
from perflab.records.errors import ConfigError
from perflab.records.model import VARIANT_FIELDS, Benchmark, Experiment, Variant, VariantFieldKind
from perflab.records.settings import SettingKind, Settings


def load_experiment(path: str | Path, *, runner: ProcessRunner | None = None) -> Experiment:
    """The experiment a TOML file describes; ConfigError naming the problem when it cannot be read
    or is not valid."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"experiment file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read {str(path)!r}: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(
            f"{path}: not valid TOML: {error}", hint="see docs/experiment-files.md"
        ) from None
    return experiment_from_mapping(data, source=str(path), base_dir=path.parent, runner=runner)


def _expect(value: Any, kind: type | tuple[type, ...], where: str, what: str) -> Any:
    if not isinstance(value, kind):
        raise ConfigError(f"{where}: {what}", hint="see docs/experiment-files.md")
    return value


def experiment_from_mapping(
    data: Mapping[str, Any],
    *,
    source: str = "<experiment>",
    base_dir: Path | None = None,
    runner: ProcessRunner | None = None,
) -> Experiment:
    """The experiment a parsed experiment file (or its equivalent mapping) describes, checked."""
    from perflab.plan.designs import DESIGN_KEYS, design_from_mapping, with_design

    unknown = set(data) - {"settings", "variant", "benchmark", "params", *DESIGN_KEYS}
    if unknown:
        raise ConfigError(
            f"{source}: unknown top-level key(s) {', '.join(sorted(unknown))}",
            hint="an experiment has [settings], [params], [[variant]] and [[benchmark]] tables "
            "(and build, [stack] or [matrix])",
        )
    settings = _settings_from(data.get("settings", {}), source)
    design = design_from_mapping(data, source=source, base_dir=base_dir, runner=runner)
    variants = (
        design.variants
        if design is not None
        else check_variants(
            [
                _variant_from(v, f"{source}: variant #{i + 1}", base_dir)
                for i, v in enumerate(
                    _expect(data.get("variant", []), list, source, "[[variant]] must be tables")
                )
            ]
        )
    )
    benchmarks = _benchmarks_of(data, source)
    check_keys_apply(variants, benchmarks)
    experiment = Experiment(benchmarks=tuple(benchmarks), variants=variants, settings=settings)
    build = _expect(data.get("build"), (str, type(None)), source, "build must be a string")
    return with_design(experiment, design, build=build, start=base_dir, runner=runner)


def _benchmarks_of(data: Mapping[str, Any], source: str) -> list[Benchmark]:
    """The [[benchmark]] tables, each over the grid of its [params] and the file's, named
    once each."""
    common = _params_from(data.get("params", {}), f"{source}: [params]")
    raw_benchmarks = _expect(
        data.get("benchmark", []), list, source, "[[benchmark]] must be tables"
    )
    if not raw_benchmarks:
        raise ConfigError(f"{source}: no [[benchmark]] table", hint="see docs/experiment-files.md")
    benchmarks: list[Benchmark] = []
    for i, raw in enumerate(raw_benchmarks):
        benchmarks += _benchmarks_from(raw, f"{source}: benchmark #{i + 1}", common)
    names = [b.name for b in benchmarks]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"{source}: benchmark names repeat: {', '.join(repeated)}")
    return benchmarks


# what an experiment file may give for each kind of setting (TOML types)
_FILE_TYPES: dict[SettingKind, tuple[type, ...]] = {
    SettingKind.NUMBER: (int, float),
    SettingKind.WHOLE: (int,),
    SettingKind.OPTIONAL_WHOLE: (int,),
    SettingKind.BOOLEAN: (bool,),
    SettingKind.TEXT: (str,),
    SettingKind.TEXTS: (list,),
    SettingKind.METRICS: (list, str),
    SettingKind.LAYERS: (dict,),
}
_TYPE_WORDS = {int: "number", float: "number", bool: "boolean", str: "string", list: "list"}


def _settings_from(raw: Any, source: str) -> Settings:
    _expect(raw, dict, source, "[settings] must be a table")
    keys = setting_keys()
    specs = user_setting_specs()
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in keys:
            raise ConfigError(
                f"{source}: unknown setting {key!r}",
                hint="settings are: " + ", ".join(sorted(keys)),
            )
        field = keys[key]
        kind = specs[field].kind
        expected = _FILE_TYPES[kind]
        if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
            if kind is SettingKind.TEXTS:
                raise ConfigError(
                    f"{source}: {key} must be a list of strings",
                    hint="see docs/experiment-files.md",
                )
            if kind is SettingKind.LAYERS:
                raise ConfigError(
                    f"{source}: {key} must be a table of NAME = REGEX",
                    hint="see docs/experiment-files.md",
                )
            names = " or ".join(dict.fromkeys(_TYPE_WORDS[t] for t in expected))
            if expected == (int,):
                names = "whole number"
            raise ConfigError(
                f"{source}: setting {key!r} must be a {names}, not {value!r}",
                hint="see docs/experiment-files.md",
            )
        changes[field] = value
    try:
        return settings_with(Settings(), **normalised_settings(changes))
    except ConfigError as error:
        raise ConfigError(f"{source}: {error.message}", hint=error.hint) from None
    except TypeError as error:
        raise ConfigError(f"{source}: bad setting: {error}") from None


def _variant_from(raw: Any, where: str, base_dir: Path | None) -> Variant:
    name = _variant_name(raw, where)
    env = _variant_env(raw, where, name)
    fields = _variant_fields(raw, where, base_dir)
    if base_dir is not None and "git" not in fields:  # with git=, paths are in the checkout
        fields = _paths_from_file(fields, base_dir)
    return checked_git_keys(Variant(name=name, env=env, **fields))


def _variant_name(raw: Any, where: str) -> str:
    """The variant table's name, once its keys are known ones."""
    _expect(raw, dict, where, "must be a table")
    allowed = {"name", "env", *VARIANT_KEYS}
    unknown = set(raw) - allowed
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))}", hint=VARIANT_HINT
        )
    if "name" not in raw:
        raise ConfigError(f"{where}: needs a name", hint='e.g. name = "after"')
    return check_variant_name(raw["name"], where)


def _variant_env(raw: Mapping[str, Any], where: str, name: str) -> dict[str, str]:
    """The variant's `env` table, every value a string."""
    env = _expect(raw.get("env", {}), dict, where, "env must be a table of strings")
    for key, value in env.items():
        if not isinstance(value, str):
            raise ConfigError(
                f"{where}: env.{key} must be a string, not {value!r}",
                hint=f'environment values are text: write {key} = "{_toml_text(value)}"',
                variant=name,
            )
    return {str(k): str(v) for k, v in env.items()}


def _variant_fields(raw: Mapping[str, Any], where: str, base_dir: Path | None) -> dict[str, Any]:
    """The variant's text fields as written, and `apply`'s changes: a change naming a file
    beside the experiment file is that file's path."""
    fields: dict[str, Any] = {
        f.name: _string(raw, f.name, where)
        for f in VARIANT_FIELDS
        if f.kind is VariantFieldKind.TEXT and f.name in raw
    }
    if "apply" in raw:
        changes = raw["apply"] if isinstance(raw["apply"], list) else [raw["apply"]]
        fields["apply"] = tuple(
            str(base_dir / str(c))
            if base_dir is not None and (base_dir / str(c)).is_file()
            else str(c)
            for c in changes
        )
    return fields


def _paths_from_file(fields: Mapping[str, Any], base_dir: Path) -> dict[str, Any]:
    """`cwd` and a relative `python` resolved against the experiment file's folder: paths in a
    file are relative to the file, wherever perflab is started from."""
    resolved = dict(fields)
    if "cwd" in resolved and not Path(resolved["cwd"]).is_absolute():
        resolved["cwd"] = str(base_dir / resolved["cwd"])
    python = resolved.get("python")
    if python and "/" in python and not Path(python).is_absolute() and "cwd" not in resolved:
        resolved["python"] = str(base_dir / python)
    return resolved


def _params_from(raw: Any, where: str) -> dict[str, list[str]]:
    _expect(raw, dict, where, "params must be a table of NAME = [values]")
    params = {}
    for key, values in raw.items():
        if not isinstance(values, list):
            values = [values]
        params[str(key)] = [str(v) for v in values]
    return params


def _benchmarks_from(raw: Any, where: str, common: Mapping[str, list[str]]) -> list[Benchmark]:
    _expect(raw, dict, where, "must be a table")
    unknown = set(raw) - {"name", "stmt", "setup", "cmd", "params"}
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))}",
            hint="a benchmark has name, stmt and setup, or cmd, and optional params",
        )
    if "name" not in raw:
        raise ConfigError(f"{where}: needs a name", hint='e.g. name = "sort"')
    name = _string(raw, "name", where)
    params = {**common, **_params_from(raw.get("params", {}), where)}
    return expand_grid(
        name,
        stmt=_string(raw, "stmt", where) if "stmt" in raw else None,
        setup=_string(raw, "setup", where) if "setup" in raw else "pass",
        cmd=_string(raw, "cmd", where) if "cmd" in raw else None,
        params=params,
    )


def _string(raw: Mapping[str, Any], key: str, where: str) -> str:
    value = raw[key]
    if not isinstance(value, str):
        raise ConfigError(
            f"{where}: {key} must be a string, not {value!r}",
            hint='a multi-line statement is one string: stmt = """..."""'
            if key in ("stmt", "setup")
            else "see docs/experiment-files.md",
        )
    return value


def _toml_text(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)
