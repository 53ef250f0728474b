"""Experiment files (TOML) and command-line specs -> the model, with precise errors."""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
import shlex
import string
import tomllib
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from perflab.git.repo import check_ref_text
from perflab.lenses.registry import available_metrics, declared_options, with_default_options
from perflab.machine.proc import ProcessRunner
from perflab.records.errors import ConfigError, RetiredSettingWarning
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.model import VARIANT_FIELDS, Benchmark, Experiment, Variant, VariantFieldKind
from perflab.records.settings import (
    SettingKind,
    Settings,
    SettingSpec,
    normalise_setting,
    setting_specs,
)

# a variant's keys besides its name and env (model.VARIANT_FIELDS)
VARIANT_KEYS = tuple(f.name for f in VARIANT_FIELDS if f.kind is not VariantFieldKind.TABLE)
_VARIANT_FIELD = {f.name: f for f in VARIANT_FIELDS}
# the lenses this version has (the registry's descriptors)
AVAILABLE_METRICS = available_metrics()
# letters and digits of any script, and a few punctuation marks safe in a shell, a file name,
# a table and a URL; not: spaces, quotes, <>|&;$`\ or control characters
_NAME = re.compile(r"^[\w.+-][\w.+@:-]*$")
_VARIANT_HINT = (
    'a variant is NAME followed by KEY=VALUE words, e.g. "after python=/envs/after/bin/python '
    'env.OMP_NUM_THREADS=1"; keys: python, env.VAR, cwd, cmd, build, git (a ref), apply '
    "(commits or patch files, comma-separated, applied on top of git=)"
)


def parse_variant(spec: str) -> Variant:
    """`NAME key=value ...`, split the way a shell splits words."""
    try:
        words = shlex.split(spec)
    except ValueError as error:
        raise ConfigError(f"cannot split variant {spec!r}: {error}", hint=_VARIANT_HINT) from None
    if not words:
        raise ConfigError("a variant spec is empty", hint=_VARIANT_HINT)
    name, *assignments = words
    if "=" in name:
        raise ConfigError(
            f"variant {spec!r} must start with a name (letters, digits, _ . + -)",
            hint=_VARIANT_HINT,
        )
    check_variant_name(name, f"variant {spec!r}")
    fields: dict[str, Any] = {
        "name": name,
        **{f.name: {} for f in VARIANT_FIELDS if f.kind is VariantFieldKind.TABLE},
    }
    for word in assignments:
        key, equals, value = word.partition("=")
        if not equals:
            raise ConfigError(f"{word!r} is not KEY=VALUE", hint=_VARIANT_HINT, variant=name)
        table, dot, entry = key.partition(".")
        known = _VARIANT_FIELD.get(table if dot else key)
        if known is None or (known.kind is VariantFieldKind.TABLE) != bool(dot and entry):
            raise ConfigError(f"unknown key {key!r}", hint=_VARIANT_HINT, variant=name)
        if known.kind is VariantFieldKind.TABLE:
            fields[known.name][entry] = value
        elif not value:
            raise ConfigError(f"{key}= has no value", hint=_VARIANT_HINT, variant=name)
        else:
            fields[key] = known.from_text(value)
    return checked_git_keys(Variant(**fields))


def checked_git_keys(variant: Variant) -> Variant:
    if variant.git is not None:
        check_ref_text(variant.git, variant=variant.name)
    if variant.apply and not variant.git:
        raise ConfigError(
            "apply= applies changes on top of a git= ref, and this variant has none",
            hint="add git=REF (e.g. git=HEAD) to apply the changes to",
            variant=variant.name,
        )
    return variant


def check_variant_name(name: object, where: str) -> str:
    """One rule for variant names, on the command line and in experiment files."""
    if not isinstance(name, str):
        raise ConfigError(
            f"{where}: the variant name must be a string, not {name!r}",
            hint='e.g. name = "after"',
        )
    if not _NAME.match(name):
        bad = sorted({c for c in name if not _NAME.match(c + "x") and c not in "@:"})
        shown = " ".join(repr(c) for c in bad) or "its first character"
        raise ConfigError(
            f"{where}: variant name {name!r} cannot contain {shown}",
            hint="a variant name is letters and digits (any script) and _ . + - @ :, starting "
            "with a letter, digit, _ . + or -",
        )
    return name


def check_keys_apply(variants: Sequence[Variant], benchmarks: Sequence[Benchmark]) -> None:
    """python= only matters to statements and cmd= only to commands: a key that changes nothing
    would still show as a difference between the variants, so refuse it."""
    check_no_nul(variants, benchmarks)
    kinds = {b.kind for b in benchmarks}
    for variant in variants:
        if variant.cmd and BenchmarkKind.COMMAND not in kinds:
            raise ConfigError(
                "cmd= applies to command benchmarks (--cmd), and this experiment has none",
                hint="use python= or env.VAR= to vary a statement benchmark",
                variant=variant.name,
            )
        if variant.python and BenchmarkKind.STATEMENT not in kinds:
            raise ConfigError(
                "python= applies to statement benchmarks (--stmt), and this experiment has none",
                hint="vary a command with cmd=, cwd= or env.VAR=",
                variant=variant.name,
            )


def check_no_nul(variants: Sequence[Variant], benchmarks: Sequence[Benchmark]) -> None:
    """A NUL byte cannot be passed to a process (arguments and the environment are C strings):
    refuse it before anything starts, naming where it is, rather than fail in a launcher."""
    for variant in variants:
        for spec in VARIANT_FIELDS:
            value = getattr(variant, spec.name)
            if spec.kind is VariantFieldKind.TABLE:
                texts = [(f"{spec.name}.{k}", t) for k, v in value.items() for t in (k, v)]
            elif spec.kind is VariantFieldKind.TEXTS:
                texts = [(spec.name, t) for t in value]
            else:
                texts = [] if value is None else [(spec.name, value)]
            for key, text in texts:
                if "\0" in text:
                    raise ConfigError(
                        f"{key} holds a NUL byte (\\0), which no program can be given",
                        hint="remove the NUL byte from the value",
                        variant=variant.name,
                    )
    for benchmark in benchmarks:
        for key in ("stmt", "setup", "cmd"):
            if "\0" in (getattr(benchmark, key) or ""):
                raise ConfigError(
                    f"{key} holds a NUL byte (\\0), which no program can be given",
                    hint="remove the NUL byte from the text",
                    benchmark=benchmark.name,
                )


# the one variant of a run given none (`perflab run --cmd X`): measured alone, no ratio
ONLY_VARIANT = "A"


def check_variants(variants: Sequence[Variant]) -> tuple[Variant, ...]:
    """A run measures one variant alone (its own time) or compares the others with the
    first."""
    if not variants:
        raise ConfigError(
            "an experiment needs at least one variant, got none",
            hint='give --variant once to measure alone, twice to compare; "--variant A '
            '--variant B" with no keys is an A/A test',
        )
    names = [v.name for v in variants]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(
            f"variant names must be unique; repeated: {', '.join(duplicates)}",
            hint="name each variant differently, e.g. A and B",
        )
    return tuple(variants)


def parse_metrics(text: str | Sequence[str]) -> tuple[Metric, ...]:
    """The lenses of "time,instructions", or of a list whose items may hold commas too (a
    repeated --metric, a TOML list), in order, each once: the first is the one that decides."""
    given = [text] if isinstance(text, str) else list(text)
    words = [word for item in given for word in str(item).split(",")]
    metrics = []
    for word in (w.strip() for w in words):
        if not word:
            continue
        try:
            metric = Metric(word)
        except ValueError:
            metric = None
        if metric not in AVAILABLE_METRICS:
            raise ConfigError(
                f"unknown metric {word!r}",
                hint="metrics are: " + ", ".join(m.value for m in AVAILABLE_METRICS),
            )
        metrics.append(metric)
    if not metrics:
        raise ConfigError("no metric given", hint="e.g. --metric time,instructions")
    return tuple(dict.fromkeys(metrics))


def parse_param(text: str) -> tuple[str, list[str]]:
    """`NAME=V1,V2,...` (command line parameter grid)."""
    name, equals, values = text.partition("=")
    if not equals or not name.isidentifier() or not values:
        raise ConfigError(
            f"parameter {text!r} is not NAME=V1,V2,...",
            hint="e.g. --param n=1,100,10000, used as $n or ${n} in --stmt/--setup/--cmd",
        )
    return name, [v.strip() for v in values.split(",")]


def parse_layer(text: str) -> tuple[str, str]:
    """`NAME=REGEX` (a layer of the instructions lens)."""
    name, equals, pattern = text.partition("=")
    if not equals or not name or not pattern:
        raise ConfigError(
            f"layer {text!r} is not NAME=REGEX",
            hint="e.g. --layer 'dispatcher=c10::Dispatcher|c10::impl' --layer 'kernel=at::native'",
        )
    return name, pattern


def expand_grid(
    name: str,
    *,
    stmt: str | None,
    setup: str,
    cmd: str | None,
    params: Mapping[str, Sequence[str]],
) -> list[Benchmark]:
    """One benchmark per parameter point; `$name`/`${name}` are substituted (others are left
    alone, so `$HOME` in a command survives; with a grid, `$$` stands for a literal `$`)."""
    _check_benchmark(name, stmt=stmt, cmd=cmd, params=params)
    keys = list(params)
    return [
        _benchmark_at(name, dict(zip(keys, values, strict=True)), stmt=stmt, setup=setup, cmd=cmd)
        for values in itertools.product(*params.values())
    ]


def _check_benchmark(
    name: str, *, stmt: str | None, cmd: str | None, params: Mapping[str, Sequence[str]]
) -> None:
    if stmt is None and cmd is None:
        raise ConfigError(
            "the benchmark has neither stmt nor cmd",
            hint="give a Python statement (--stmt) or a command (--cmd)",
            benchmark=name,
        )
    if stmt is not None and cmd is not None:
        raise ConfigError(
            "the benchmark has both stmt and cmd",
            hint="a benchmark is a Python statement or a command, not both",
            benchmark=name,
        )
    for key, values in params.items():
        if not values or any(value == "" for value in values):
            raise ConfigError(
                f"parameter {key!r} has an empty value list or an empty value",
                hint="give at least one value, e.g. --param n=1,100 or n = [1, 100]",
                benchmark=name,
            )


def _benchmark_at(
    name: str, point: Mapping[str, str], *, stmt: str | None, setup: str, cmd: str | None
) -> Benchmark:
    """The benchmark at one parameter point, named after it."""

    def fill(text: str | None) -> str | None:
        if text is None or not point:
            return text
        return string.Template(text).safe_substitute(point)

    label = name + ("[" + ",".join(f"{k}={v}" for k, v in point.items()) + "]" if point else "")
    return Benchmark(
        name=label, stmt=fill(stmt), setup=fill(setup) or "pass", cmd=fill(cmd), params=point
    )


# ---- experiment files


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


def load_experiment(path: str | Path, *, runner: ProcessRunner | None = None) -> Experiment:
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
    check_keys_apply(variants, benchmarks)
    experiment = Experiment(benchmarks=tuple(benchmarks), variants=variants, settings=settings)
    build = _expect(data.get("build"), (str, type(None)), source, "build must be a string")
    return with_design(experiment, design, build=build, start=base_dir, runner=runner)


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
    _expect(raw, dict, where, "must be a table")
    allowed = {"name", "env", *VARIANT_KEYS}
    unknown = set(raw) - allowed
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))}", hint=_VARIANT_HINT
        )
    if "name" not in raw:
        raise ConfigError(f"{where}: needs a name", hint='e.g. name = "after"')
    name = check_variant_name(raw["name"], where)
    env = _expect(raw.get("env", {}), dict, where, "env must be a table of strings")
    for key, value in env.items():
        if not isinstance(value, str):
            raise ConfigError(
                f"{where}: env.{key} must be a string, not {value!r}",
                hint=f'environment values are text: write {key} = "{_toml_text(value)}"',
                variant=name,
            )
    fields: dict[str, Any] = {
        f.name: _string(raw, f.name, where)
        for f in VARIANT_FIELDS
        if f.kind is VariantFieldKind.TEXT and f.name in raw
    }
    if "apply" in raw:
        changes = raw["apply"] if isinstance(raw["apply"], list) else [raw["apply"]]
        fields["apply"] = tuple(
            str(base_dir / str(c)) if base_dir is not None and (base_dir / str(c)).is_file()
            else str(c)
            for c in changes
        )  # fmt: skip
    if base_dir is not None and "git" not in fields:  # with git=, paths are in the checkout
        # paths in a file are relative to the file, wherever perflab is started from
        if "cwd" in fields and not Path(fields["cwd"]).is_absolute():
            fields["cwd"] = str(base_dir / fields["cwd"])
        python = fields.get("python")
        if python and "/" in python and not Path(python).is_absolute() and "cwd" not in fields:
            fields["python"] = str(base_dir / python)
    return checked_git_keys(
        Variant(name=name, env={str(k): str(v) for k, v in env.items()}, **fields)
    )


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
