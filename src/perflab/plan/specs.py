"""Variants and benchmarks as the command line (and the API) gives them, one argument at a
time, checked: `NAME key=value` variant specs, metric lists, `--param NAME=V1,V2`, `--layer
NAME=REGEX`, and the grid of benchmarks a benchmark's parameters make. The arguments become one
experiment in `experiment_arguments.py`; an experiment file's tables in `experiment_file.py`."""

from __future__ import annotations

import itertools
import re
import shlex
import string
from collections.abc import Mapping, Sequence
from typing import Any

from perflab.git.repo import check_ref_text
from perflab.lenses.registry import available_metrics
from perflab.records.errors import ConfigError
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.model import (
    VARIANT_FIELD_BY_NAME,
    VARIANT_FIELDS,
    Benchmark,
    Variant,
    VariantFieldKind,
)

# a variant's keys besides its name and env (model.VARIANT_FIELDS)
VARIANT_KEYS = tuple(f.name for f in VARIANT_FIELDS if f.kind is not VariantFieldKind.TABLE)
# the lenses this version has (the registry's descriptors)
AVAILABLE_METRICS = available_metrics()
# letters and digits of any script, and a few punctuation marks safe in a shell, a file name,
# a table and a URL; not: spaces, quotes, <>|&;$`\ or control characters
_NAME = re.compile(r"^[\w.+-][\w.+@:-]*$")
VARIANT_HINT = (
    'a variant is NAME followed by KEY=VALUE words, e.g. "after python=/envs/after/bin/python '
    'env.OMP_NUM_THREADS=1"; keys: python, env.VAR, cwd, cmd, build, git (a ref), apply '
    "(commits or patch files, comma-separated, applied on top of git=)"
)


def parse_variant(spec: str) -> Variant:
    """`NAME key=value ...`, split the way a shell splits words."""
    try:
        words = shlex.split(spec)
    except ValueError as error:
        raise ConfigError(f"cannot split variant {spec!r}: {error}", hint=VARIANT_HINT) from None
    if not words:
        raise ConfigError("a variant spec is empty", hint=VARIANT_HINT)
    name, *assignments = words
    if "=" in name:
        raise ConfigError(
            f"variant {spec!r} must start with a name (letters, digits, _ . + -)",
            hint=VARIANT_HINT,
        )
    check_variant_name(name, f"variant {spec!r}")
    fields: dict[str, Any] = {
        "name": name,
        **{f.name: {} for f in VARIANT_FIELDS if f.kind is VariantFieldKind.TABLE},
    }
    for word in assignments:
        key, equals, value = word.partition("=")
        if not equals:
            raise ConfigError(f"{word!r} is not KEY=VALUE", hint=VARIANT_HINT, variant=name)
        table, dot, entry = key.partition(".")
        known = VARIANT_FIELD_BY_NAME.get(table if dot else key)
        if known is None or (known.kind is VariantFieldKind.TABLE) != bool(dot and entry):
            raise ConfigError(f"unknown key {key!r}", hint=VARIANT_HINT, variant=name)
        if known.kind is VariantFieldKind.TABLE:
            fields[known.name][entry] = value
        elif not value:
            raise ConfigError(f"{key}= has no value", hint=VARIANT_HINT, variant=name)
        else:
            fields[key] = known.from_text(value)
    return checked_git_keys(Variant(**fields))


def checked_git_keys(variant: Variant) -> Variant:
    """`variant` itself, once its git= ref and apply= changes are checked to make sense."""
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
    # an asv timeraw_ benchmark is a command its variant's python= runs
    runs_python = BenchmarkKind.STATEMENT in kinds or any(b.cmd_is_python for b in benchmarks)
    for variant in variants:
        if variant.cmd and BenchmarkKind.COMMAND not in kinds:
            raise ConfigError(
                "cmd= applies to command benchmarks (--cmd), and this experiment has none",
                hint="use python= or env.VAR= to vary a statement benchmark",
                variant=variant.name,
            )
        if variant.python and not runs_python:
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
    items = [text] if isinstance(text, str) else list(text)
    words = [word for item in items for word in str(item).split(",")]
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
