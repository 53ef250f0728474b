"""What a workflow benchmarks (a statement, a command or a suite, and how it is built), the
lenses it measures with, and the comparisons a run of it decides; bisect, check and history
share it."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from perflab import api
from perflab.engine.benchmark_plan import SpeedsMeasured
from perflab.lenses.descriptor import ProbeFacts
from perflab.lenses.registry import descriptor_for
from perflab.machine.proc import ProcessRunner, SubprocessRunner
from perflab.plan.experiment_arguments import variant_template
from perflab.plan.gbench_suite import gbench_filter
from perflab.plan.specs import parse_metrics
from perflab.plan.suite_source import SuiteKind, SuiteSource, suite_given
from perflab.records.kinds import Metric
from perflab.records.model import Comparison, Experiment, Variant
from perflab.records.results import RunResult
from perflab.records.settings import Settings
from perflab.store.sqlite import DEFAULT_STORE_PATH


@dataclass(frozen=True)
class Suite:
    """A suite the workflow measures whole, as `run` does: its benchmarks listed in the current
    directory (the repository's root), each run in every commit's checkout. The workflows'
    spelling of a `SuiteSource`, with make_experiment's keywords."""

    pytest: str | None = None
    pytest_filter: str | None = None
    asv: str | None = None
    asv_filter: str | None = None
    gbench: str | None = None
    gbench_filter: str | None = None

    @classmethod
    def of(cls, source: SuiteSource) -> Suite:
        """The suite a record names (as the command line's options hold it)."""
        match source.kind:
            case SuiteKind.GBENCH:
                return cls(gbench=source.path, gbench_filter=source.filter)
            case SuiteKind.ASV:
                return cls(asv=source.path, asv_filter=source.filter)
            case SuiteKind.PYTEST:
                return cls(pytest=source.path, pytest_filter=source.filter)

    def source(self) -> SuiteSource | None:
        """The suite as make_experiment takes it (None: none is given); a filter without its
        suite, or two suites, are refused."""
        return suite_given(
            gbench=self.gbench,
            gbench_filter=self.gbench_filter,
            asv=self.asv,
            asv_filter=self.asv_filter,
            pytest=self.pytest,
            pytest_filter=self.pytest_filter,
        )

    def flags(self) -> tuple[str, ...]:
        """The suite as the command line gives it: --pytest PATH -k EXPR, --asv DIR --bench
        REGEX or --gbench BINARY --filter REGEX."""
        source = self.source()
        return () if source is None else source.flags()

    def filter_flags(self) -> tuple[str, ...]:
        """The suite's filter as the command line gives it (-k, --bench, --filter)."""
        source = self.source()
        return () if source is None else source.filter_flags()

    def selecting(self, name: str, listed: Sequence[str]) -> Suite | None:
        """This suite narrowed to benchmark `name` alone of `listed` (those it selects now);
        None when its filter cannot say that one (a pytest test whose name -k cannot tell
        from the others')."""
        if self.gbench is not None:
            return replace(self, gbench_filter=gbench_filter(name))
        if self.asv is not None:
            return replace(self, asv_filter="^" + re.escape(name) + "$")
        keyword = _pytest_keyword(name, listed)
        if keyword is None:
            return None
        current = self.pytest_filter
        narrowed = keyword if current is None else f"({current}) and {keyword}"
        return replace(self, pytest_filter=narrowed)


# a word pytest's -k takes as a name (its grammar's `ident`)
_PYTEST_IDENT = re.compile(r"[\w:+\-.\[\]\\/]+")


def _pytest_keyword(node_id: str, listed: Sequence[str]) -> str | None:
    """The -k word that selects test `node_id` alone of `listed`: its name (with its
    parameters), when no other listed test's path or name holds it, as -k matches (case
    aside, a part of any name)."""
    keyword = node_id.rsplit("::", 1)[-1]
    if not _PYTEST_IDENT.fullmatch(keyword) or keyword in ("and", "or", "not"):
        return None
    lowered = keyword.lower()
    for other in listed:
        parts = re.split("::|/", other.lower())
        if other != node_id and any(lowered in part for part in parts):
            return None
    return keyword


class Measure(Protocol):
    """How a workflow's experiment (its repository set) becomes a stored, analysed run: the
    engine's run (`run_in_the_engine`), or a script in the workflows' unit tests."""

    def __call__(self, experiment: Experiment, benchmarked: Benchmarked) -> RunResult: ...


def run_in_the_engine(experiment: Experiment, benchmarked: Benchmarked) -> RunResult:
    """The real `Measure`: an ordinary run (`perflab run`), into the benchmark's store."""
    return api.run(
        experiment,
        store_path=benchmarked.store_path,
        cache_dir=benchmarked.cache_dir,
        runner=benchmarked.runner,
        speeds=benchmarked.speeds,
    )


@dataclass(frozen=True)
class Benchmarked:
    """What every run of a workflow measures: the benchmark, the build, the settings; and the
    two seams a workflow reaches the outside through, so its logic is tested with fakes."""

    stmt: str | None = None
    setup: str | None = None
    cmd: str | None = None
    name: str | None = None
    build: str | None = None
    each: str | None = None
    settings: Mapping[str, Any] | None = None
    store_path: str | Path | None = DEFAULT_STORE_PATH
    cache_dir: str | Path | None = None
    suite: Suite | None = None
    # every process: git's answers, a suite's listing, and a run's builds and workers
    runner: ProcessRunner = field(default_factory=SubprocessRunner, compare=False, repr=False)
    # how each experiment becomes a run
    measure: Measure = field(default=run_in_the_engine, compare=False, repr=False)
    # the machine speeds its runs measured: the next run (a bisect's step, a history's point)
    # plans with a recent one rather than measure it again
    speeds: SpeedsMeasured = field(default_factory=SpeedsMeasured, compare=False, repr=False)

    def experiment(
        self, variants: list[Variant], *, metrics: tuple[Metric, ...], budget_scale: float = 1.0
    ) -> Experiment:
        settings = dict(self.settings or {})
        settings["metrics"] = ",".join(m.value for m in metrics)
        if budget_scale != 1.0:
            budget = settings.get("budget_s") or Settings().budget_s
            settings["budget_s"] = float(budget) * budget_scale
        template = variant_template(self.each)
        if template is not None:
            variants = [replace(template, name=v.name, git=v.git, apply=v.apply) for v in variants]
        return api.make_experiment(
            stmt=self.stmt,
            setup=self.setup,
            cmd=self.cmd,
            name=self.name,
            variants=variants,
            build=self.build,
            runner=self.runner,
            suite=None if self.suite is None else self.suite.source(),
            **settings,
        )

    def run(self, experiment: Experiment, repository: str) -> RunResult:
        return self.measure(replace(experiment, repository=repository), self)


def planned_experiment(benchmark: Benchmarked) -> Experiment:
    """The benchmark's experiment as any two commits measure it (a suite: listed now)."""
    variants = [Variant(name="a", git="HEAD"), Variant(name="b", git="HEAD")]
    return benchmark.experiment(variants, metrics=(Metric.TIME,))


def _path_facts(runner: ProcessRunner) -> ProbeFacts:
    """What a lens's probe may read without running anything: the tools on the runner's PATH;
    modules and perf are not probed here (a lens needing them reads as unavailable)."""
    return ProbeFacts(
        which=runner.which,
        find_llvm=lambda tool: None,
        has_module=lambda name: False,
        perf_present=False,
        perf_software=False,
        perf_hardware=False,
        perf_sampled_event=None,
    )


def instructions_available(runner: ProcessRunner | None = None) -> bool:
    """Whether the instructions lens runs where `runner` starts processes (None: here), as its
    own probe says (valgrind on PATH)."""
    facts = _path_facts(runner or SubprocessRunner())
    return descriptor_for(Metric.INSTRUCTIONS).probe(facts).available


# the lenses a workflow is given, as `run` takes them: a lens, "time,instructions", or a list
Lenses = str | Sequence[str] | None


def given_lenses(metric: Lenses, benchmark: Benchmarked) -> tuple[Metric, ...]:
    """The lenses asked for, parsed as `run` parses --metric: `metric`, else the benchmark's
    `metrics` setting; the first decides, the others are evidence. (): none was given, the
    workflow chooses."""
    chosen = metric if metric is not None else (benchmark.settings or {}).get("metrics")
    return () if chosen is None else parse_metrics(chosen)


def evidence_lenses(decider: Metric, given: Sequence[Metric]) -> tuple[Metric, ...]:
    """The lenses a workflow's answer is measured with: the deciding one, the others given,
    and time and instructions beside them (instructions where valgrind is installed), so an
    answer says when the two disagree."""
    both = (Metric.TIME, Metric.INSTRUCTIONS) if instructions_available() else (Metric.TIME,)
    return tuple(dict.fromkeys((decider, *given, *both)))


def main_comparisons(
    result: RunResult, metric: Metric, baseline: str, variant: str
) -> list[Comparison]:
    """The run's comparisons of `variant` with `baseline` through `metric`, its events left out."""
    return [
        c
        for c in result.comparisons
        if c.metric is metric and c.event is None and (c.baseline, c.variant) == (baseline, variant)
    ]
