"""What the workflows share: what is benchmarked (a statement, a command or a suite, and how
it is built), which lenses a workflow measures, and the comparisons a run decides."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from perflab import api
from perflab.plan.specs import parse_metrics
from perflab.records.kinds import Metric
from perflab.records.model import Experiment, Variant
from perflab.records.results import RunResult
from perflab.records.settings import Settings
from perflab.store.sqlite import DEFAULT_STORE_PATH


@dataclass(frozen=True)
class Suite:
    """A suite the workflow measures whole, as `run` does: its benchmarks listed in the current
    directory (the repository's root), each run in every commit's checkout."""

    pytest: str | None = None
    pytest_filter: str | None = None
    asv: str | None = None
    asv_filter: str | None = None
    gbench: str | None = None
    gbench_filter: str | None = None

    def arguments(self) -> dict[str, Any]:
        """make_experiment's keyword arguments for the suite (those given)."""
        given = {
            "pytest": self.pytest,
            "pytest_filter": self.pytest_filter,
            "asv": self.asv,
            "asv_filter": self.asv_filter,
            "gbench": self.gbench,
            "gbench_filter": self.gbench_filter,
        }
        return {key: value for key, value in given.items() if value is not None}


@dataclass(frozen=True)
class Benchmarked:
    """What every run of a workflow measures: the benchmark, the build, the settings."""

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

    def experiment(
        self, variants: list[Variant], *, metrics: tuple[Metric, ...], budget_scale: float = 1.0
    ) -> Experiment:
        settings = dict(self.settings or {})
        settings["metrics"] = ",".join(m.value for m in metrics)
        if budget_scale != 1.0:
            budget = settings.get("budget_s") or Settings().budget_s
            settings["budget_s"] = float(budget) * budget_scale
        template = api._template(self.each)
        if template is not None:
            variants = [replace(template, name=v.name, git=v.git, apply=v.apply) for v in variants]
        return api.make_experiment(
            stmt=self.stmt,
            setup=self.setup,
            cmd=self.cmd,
            name=self.name,
            variants=variants,
            build=self.build,
            **(self.suite.arguments() if self.suite is not None else {}),
            **settings,
        )

    def run(self, experiment: Experiment, repository: str) -> RunResult:
        return api.run(
            replace(experiment, repository=repository),
            store_path=self.store_path,
            cache_dir=self.cache_dir,
        )


def instructions_available() -> bool:
    return shutil.which("valgrind") is not None


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


def main_comparisons(result: RunResult, metric: Metric, baseline: str, variant: str) -> list[Any]:
    return [
        c
        for c in result.comparisons
        if c.metric is metric and c.event is None and (c.baseline, c.variant) == (baseline, variant)
    ]
