"""Where an experiment's benchmarks come from when they are given as arguments (the Python API, the
command line). The source is an experiment file, a statement or a command over a grid of parameters,
or a suite (a Google Benchmark binary, an asv directory, a pytest-benchmark suite). One source makes
the benchmarks; the variants, the settings changed and a design are given beside it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from perflab.lenses.registry import DESCRIPTORS, alone_metrics, region_metrics
from perflab.machine.proc import ProcessRunner
from perflab.plan.designs import Design, with_design
from perflab.plan.experiment_file import load_experiment
from perflab.plan.settings_by_name import normalised_settings, setting_fields, settings_with
from perflab.plan.specs import (
    ONLY_VARIANT,
    check_keys_apply,
    check_variants,
    expand_grid,
    parse_variant,
)
from perflab.plan.suite_source import SuiteKind, SuiteSource, suite_given
from perflab.records.errors import ConfigError
from perflab.records.kinds import BenchmarkKind
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings, SettingSpec, setting_specs


def experiment_from(sources: BenchmarkSources, conditions: ExperimentConditions) -> Experiment:
    """The experiment the source given makes, under the variants, settings and design of
    `conditions`; a suite given with another source is refused (a suite's precedence over
    another suite is `suite_given`'s)."""
    for source in (_suite_source, _file_source):
        experiment = source(sources, conditions)
        if experiment is not None:
            return experiment
    return _inline_source(sources, conditions)


# make_experiment's keywords that say where the benchmarks come from (the others are settings):
# inline benchmarks, a suite as a record, or a suite as its keywords (suite_given reads those)
INLINE_KEYWORDS = ("stmt", "setup", "cmd", "name", "params")
SUITE_KEYWORDS = ("gbench", "gbench_filter", "asv", "asv_filter", "pytest", "pytest_filter")
SOURCE_KEYWORDS = frozenset({*INLINE_KEYWORDS, "suite", *SUITE_KEYWORDS})


def sources_and_settings(
    experiment_file: str | Path | None,
    keywords: Mapping[str, Any],
    benchmarks: BenchmarkSources | None = None,
) -> tuple[BenchmarkSources, dict[str, Any]]:
    """make_experiment's keywords told apart: where the benchmarks come from, as one record (a
    suite's keywords as its `SuiteSource`), and the settings by name (the rest, checked later by
    `setting_changes`). `benchmarks`, the record given whole, stands alone: a file or a source
    keyword beside it is refused."""
    given = {k: v for k, v in keywords.items() if k in SOURCE_KEYWORDS}
    settings = {k: v for k, v in keywords.items() if k not in SOURCE_KEYWORDS}
    if benchmarks is None:
        suite_keywords = {k: given.pop(k) for k in SUITE_KEYWORDS if k in given}
        suite = suite_given(given.pop("suite", None), **suite_keywords)
        return BenchmarkSources(experiment_file=experiment_file, suite=suite, **given), settings
    beside = sorted(k for k, v in given.items() if v is not None)  # None: not given
    if beside or experiment_file is not None:
        beside += ["experiment_file"] if experiment_file is not None else []
        raise ConfigError(
            f"benchmarks= says where the benchmarks come from: {', '.join(beside)} cannot be "
            "given beside it",
            hint="put them in the BenchmarkSources record, or give them as keywords alone",
        )
    return benchmarks, settings


def designed_experiment(
    design: Design,
    experiment_file: str | Path | None,
    runner: ProcessRunner,
    arguments: Mapping[str, Any],
) -> Experiment:
    """make_experiment's experiment of the design's variants under its comparisons (a stack's,
    a matrix's): what make_stack and make_matrix build; `arguments` are make_experiment's other
    keywords (stmt=, cmd=, build=, settings ...)."""
    keywords = {k: v for k, v in arguments.items() if k not in ("build", "benchmarks")}
    sources, settings = sources_and_settings(experiment_file, keywords, arguments.get("benchmarks"))
    conditions = ExperimentConditions(
        variants=design.variants,
        changes=setting_changes(settings),
        build=arguments.get("build"),
        design=design,
        runner=runner,
    )
    return experiment_from(sources, conditions)


@dataclass(frozen=True, kw_only=True)
class BenchmarkSources:
    """What the benchmarks are made from, as make_experiment takes it (`benchmarks=`, or its
    keywords): an experiment file, inline arguments (a statement or command, a name, a grid),
    or a suite with its filter."""

    experiment_file: str | Path | None = None
    stmt: str | None = None
    setup: str | None = None
    cmd: str | None = None
    name: str | None = None
    params: Mapping[str, Sequence[Any]] | None = None
    suite: SuiteSource | None = None

    def inline(self) -> bool:
        """Whether arguments (a statement, a command, a name, a grid) define benchmarks."""
        return bool(self.stmt or self.cmd or self.setup or self.name or self.params)

    def defined(self) -> bool:
        """Whether an experiment file or arguments define benchmarks."""
        return self.experiment_file is not None or self.inline()


@dataclass(frozen=True, kw_only=True)
class ExperimentConditions:
    """What every source's benchmarks are measured under: the variants, the settings changed,
    the build command of variants without their own, and a design (a stack, a matrix)."""

    variants: Sequence[str | Variant]  # specs or records; (): the file's, else one alone
    changes: dict[str, Any]  # the settings given by name, checked (`setting_changes`)
    build: str | None  # the build command of every variant without its own build=
    design: Design | None = None  # a stack's or a matrix's comparisons; None: every variant
    runner: ProcessRunner  # lists the suites, finds the repository


def _suite_source(sources: BenchmarkSources, conditions: ExperimentConditions) -> Experiment | None:
    """The benchmarks of the suite given, listed by the variants' own tools."""
    suite = sources.suite
    if suite is None:
        return None
    if sources.defined():
        raise suite.refused_beside()
    experiment_of = {
        SuiteKind.GBENCH: _gbench_experiment,
        SuiteKind.ASV: _asv_experiment,
        SuiteKind.PYTEST: _pytest_experiment,
    }[suite.kind]
    return experiment_of(suite, conditions)


def _gbench_experiment(suite: SuiteSource, conditions: ExperimentConditions) -> Experiment:
    """The benchmarks of a Google Benchmark binary, listed by each variant's binary."""
    from perflab.plan.gbench_suite import gbench_lens_notes, gbench_suite

    checked, listing = _suite_variants(conditions)
    # no shell between perflab and the binary (the filter's ^ and $ would ask for one), unless
    # the user asks for one
    implied = {} if "shell" in conditions.changes else {"shell": "none"}
    settings = settings_with(Settings(), **conditions.changes, **implied)
    suite_found = gbench_suite(
        suite.path, listing, conditions.runner, pattern=suite.filter, shell=settings.shell
    )
    return _suite_experiment(
        checked,
        suite_found.benchmarks,
        conditions,
        notes=(*suite_found.notes, *gbench_lens_notes(settings.metrics, region=region_metrics())),
        implied=implied,
    )


def _asv_experiment(suite: SuiteSource, conditions: ExperimentConditions) -> Experiment:
    """The benchmarks of an asv suite, listed in the variants' interpreters, and the lenses
    its kinds need."""
    from perflab.plan.asv_suite import asv_suite, run_of

    checked, listing = _suite_variants(conditions)
    suite_found = asv_suite(suite.path, listing, conditions.runner, pattern=suite.filter)
    # asv's timeout bounds a benchmark's whole run, so a sample too: the suite's longest is the
    # sample timeout unless one is given
    implied: dict[str, Any] = {}
    if suite_found.timeout_s is not None and "sample_timeout_s" not in conditions.changes:
        implied = {"sample_timeout_s": suite_found.timeout_s}
    metrics = tuple(conditions.changes.get("metrics", Settings().metrics))
    one = len(checked) == 1
    run = run_of(suite_found, metrics, alone_metrics() if one else None)
    # timeraw_'s `python -c CODE` with its code quoted: no shell between perflab and the
    # interpreter, unless the user asks for one
    raw = any(b.kind is BenchmarkKind.COMMAND for b in run.benchmarks)
    if raw and "shell" not in conditions.changes:
        implied["shell"] = "none"
    changes = {**conditions.changes, "metrics": run.metrics}
    return _suite_experiment(
        checked,
        run.benchmarks,
        replace(conditions, changes=changes) if run.metrics != metrics else conditions,
        notes=run.notes,
        implied=implied,
    )


def _pytest_experiment(suite: SuiteSource, conditions: ExperimentConditions) -> Experiment:
    """The tests of a pytest-benchmark suite as benchmarks, listed by the variants' pytest."""
    from perflab.plan.pytest_suite import pytest_benchmarks

    checked, listing = _suite_variants(conditions)
    benchmarks = pytest_benchmarks(suite.path, listing, conditions.runner, keyword=suite.filter)
    return _suite_experiment(checked, benchmarks, conditions)


def _file_source(sources: BenchmarkSources, conditions: ExperimentConditions) -> Experiment | None:
    """The experiment file's, with the variants, settings and design given beside it."""
    if sources.experiment_file is None:
        return None
    base = load_experiment(sources.experiment_file, runner=conditions.runner)
    if sources.inline():
        raise ConfigError(
            "the experiment file defines the benchmarks: --stmt, --setup, --cmd, --name and "
            "--param cannot be combined with it",
            hint="put them in the file's [[benchmark]] tables and [params]",
        )
    parsed = _parsed(conditions.variants)
    chosen = check_variants(parsed) if parsed else base.variants
    check_keys_apply(chosen, base.benchmarks)
    changes = conditions.changes
    planned = replace(base, variants=chosen, settings=settings_with(base.settings, **changes))
    if parsed or conditions.design is not None:  # the file's own design no longer applies
        planned = replace(planned, pairs=(), stack=(), interactions=())
    start = Path(sources.experiment_file).parent
    designed = with_design(
        planned, conditions.design, build=conditions.build, start=start, runner=conditions.runner
    )
    return _checked(designed, explicit=changes)


def _inline_source(sources: BenchmarkSources, conditions: ExperimentConditions) -> Experiment:
    """A statement or a command, over the grid of its parameters, under the variants."""
    stmt, cmd = sources.stmt, sources.cmd
    if stmt is None and cmd is None:
        raise ConfigError(
            "nothing to measure",
            hint="give --stmt (a Python statement), --cmd (a command) or an experiment file",
        )
    grid = {k: [str(v) for v in values] for k, values in (sources.params or {}).items()}
    benchmarks = expand_grid(
        sources.name or (stmt if stmt is not None else cmd) or "benchmark",
        stmt=stmt,
        setup=sources.setup or "pass",
        cmd=cmd,
        params=grid,
    )
    checked = check_variants(_parsed(conditions.variants) or [Variant(ONLY_VARIANT)])
    check_keys_apply(checked, benchmarks)
    changes = conditions.changes
    planned = Experiment(
        benchmarks=tuple(benchmarks),
        variants=checked,
        settings=settings_with(Settings(), **{**_alone_defaults(checked, changes), **changes}),
    )
    designed = with_design(
        planned, conditions.design, build=conditions.build, runner=conditions.runner
    )
    return _checked(designed, explicit=changes)


# One variant timed alone needs one estimate's precision, not a comparison's: a few seconds
# give it, as hyperfine's users expect, unless a budget is sources.
ALONE_BUDGET_S = 5.0


def _alone_defaults(variants: Sequence[Variant], changes: Mapping[str, Any]) -> dict[str, Any]:
    alone = len(variants) == 1 and "budget_s" not in changes
    return {"budget_s": ALONE_BUDGET_S} if alone else {}


def _suite_variants(conditions: ExperimentConditions) -> tuple[tuple[Variant, ...], list[Variant]]:
    """The variants checked, and as the suite's listing sees them: a variant built first (its
    own build= or --build) has no interpreter to list with yet."""
    checked = check_variants(_parsed(conditions.variants) or [Variant(ONLY_VARIANT)])
    return checked, [replace(v, build=v.build or conditions.build) for v in checked]


def _suite_experiment(
    checked: tuple[Variant, ...],
    benchmarks: Sequence[Benchmark],
    conditions: ExperimentConditions,
    *,
    notes: Sequence[str] = (),
    implied: Mapping[str, Any] | None = None,
) -> Experiment:
    """A suite's benchmarks under the variants; `implied`: settings the suite itself asks for
    (the user's `changes` win); `notes`: what its listing left out, said before measuring
    beside a design's own notes."""
    check_keys_apply(checked, list(benchmarks))
    planned = Experiment(
        benchmarks=tuple(benchmarks),
        variants=checked,
        settings=settings_with(Settings(), **conditions.changes, **(implied or {})),
    )
    designed = with_design(
        planned, conditions.design, build=conditions.build, runner=conditions.runner
    )
    designed = replace(designed, plan_notes=(*designed.plan_notes, *notes))
    return _checked(designed, explicit=conditions.changes)


def setting_changes(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings given by name, checked against those users may give and normalised."""
    known = setting_fields()  # the lenses' options as their descriptors declare them now
    unknown = set(settings) - known
    if unknown:
        raise ConfigError(
            f"unknown setting(s) {', '.join(sorted(unknown))}",
            hint="settings are: " + ", ".join(sorted(known)),
        )
    return normalised_settings(settings)


def _parsed(variants: Sequence[str | Variant]) -> list[Variant]:
    return [v if isinstance(v, Variant) else parse_variant(v) for v in variants]


def variant_template(each: str | Variant | None) -> Variant | None:
    """The keys every variant of a design gets (`--each`), as a variant to copy them from."""
    if each is None or isinstance(each, Variant):
        return each
    return parse_variant("each " + each)


def _checked(experiment: Experiment, *, explicit: Mapping[str, Any]) -> Experiment:
    """The experiment, once no setting given (`explicit`) would silently do nothing in it."""
    _check_lone_variant(experiment)
    _check_command_settings(experiment)
    _check_lens_options(experiment, explicit=explicit)
    return experiment


def _check_lone_variant(experiment: Experiment) -> None:
    """One variant is measured alone by the lenses that say they can (`Figures.measures_alone`);
    the others only compare variants."""
    alone = alone_metrics()
    comparing = [m for m in experiment.settings.metrics if m not in alone]
    if len(experiment.variants) == 1 and comparing:
        lenses = (
            f"{', '.join(alone[:-1])} and {alone[-1]} lenses" if alone[1:] else f"{alone[0]} lens"
        )
        raise ConfigError(
            f"one variant is measured alone by the {lenses} only (the others compare "
            f"variants), and --metric asks for {','.join(comparing)}",
            hint=f"use --metric {','.join(alone)}, or give a second variant to compare with, "
            'e.g. --variant A --variant "B env.X=1"',
        )


def _check_command_settings(experiment: Experiment) -> None:
    """Settings that apply to commands (their spec's `applies_to`) need a command to act on."""
    if any(b.kind is BenchmarkKind.COMMAND for b in experiment.benchmarks):
        return
    command_only = {
        name: spec
        for name, spec in setting_specs().items()
        if spec.applies_to is BenchmarkKind.COMMAND
    }
    defaults = Settings()
    changed = [
        name
        for name in command_only
        if getattr(experiment.settings, name) != getattr(defaults, name)
    ]
    if changed:
        names = [_option_names(spec) for spec in command_only.values()]
        raise ConfigError(
            f"{', '.join(names[:-1])} and {names[-1]} apply to commands (--cmd), and this "
            "experiment has none",
            hint="a statement is sampled in worker generations: --min-generations and "
            "--budget bound it",
        )


def _option_names(spec: SettingSpec) -> str:
    """A setting's long option, its other options in brackets: "--ignore-failure (-i)"."""
    others = (*spec.flags[:-1], *spec.alias_flags)
    return f"{spec.flag} ({', '.join(others)})" if others else f"{spec.flag}"


def _check_lens_options(experiment: Experiment, *, explicit: Mapping[str, Any]) -> None:
    """Options that only one lens reads: given without that lens, they would do nothing."""
    selected = experiment.settings.metrics
    borrowed = {key for d in DESCRIPTORS if d.metric in selected for key in d.also_reads}
    for descriptor in DESCRIPTORS:
        metric = descriptor.metric
        for declared in descriptor.options:
            key, spec = declared.name, declared.spec
            option = spec.flag or key
            if spec.lens is None or not explicit.get(key) or metric in selected:
                continue
            if key in borrowed:
                continue
            raise ConfigError(
                f"{option} is an option of the {metric.value} lens, which is not selected",
                hint=f"add --metric {','.join(m.value for m in experiment.settings.metrics)},"
                f"{metric.value}",
            )
