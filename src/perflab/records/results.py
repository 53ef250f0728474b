"""The analysed run: what `analyse.run.analyse_run` returns and what the renderers format
(terminal, JSON, Markdown, HTML).

A record module of its own, so the renderers (perflab.report) can format it without importing
the engine."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from perflab.records.document import Section
from perflab.records.errors import PerflabError
from perflab.records.explanation import Summary
from perflab.records.kinds import Metric, RunStatus
from perflab.records.lens_findings import LensFindings, top_level_json
from perflab.records.model import Artifact, Comparison, Experiment, Measurement, Note, Sample
from perflab.records.run_facts import MachineInfo, VariantInfo


@dataclass(frozen=True)
class RunResult:
    """A run as analysed: what the renderers format."""

    run_id: int
    status: RunStatus
    created_at: str
    experiment: Experiment
    machine: MachineInfo
    comparisons: tuple[Comparison, ...]
    notes: tuple[Note, ...]
    variant_info: Mapping[str, VariantInfo]  # by variant name
    differences: tuple[str, ...]
    error: str | None = None
    # what each lens found beyond its comparisons, per benchmark, in the order analysed
    findings: tuple[LensFindings, ...] = ()
    failures: tuple[PerflabError, ...] = ()  # benchmarks that failed while measuring this run
    cross_run: bool = False  # a comparison of two stored runs (perflab compare)
    baseline_run_id: int | None = None  # perflab compare: the run compared against
    # perflab compare: how the two sides are named (`run 12`, or a JSON file's name)
    compared_names: tuple[str, str] | None = None

    # What each lens shows beyond its verdict table (built by the lenses' render modules from
    # their analysis), in the order of the experiment's metrics.
    sections: tuple[Section, ...] = ()
    # The raw samples the comparisons were derived from (for `--samples` in the JSON).
    samples: tuple[Sample, ...] = ()
    # what the lenses stored beside them (the small ones go with `--samples` in the JSON)
    artifacts: tuple[Artifact, ...] = ()
    # each variant's own figures (a run of one variant; the hyperfine-style exports)
    measurements: tuple[Measurement, ...] = ()
    stacks: tuple[StackSummary, ...] = ()  # perflab stack: steps against the whole range
    interactions: tuple[Interaction, ...] = ()  # perflab matrix: a change's effect across bases
    # one paragraph per compared pair joining the lenses (made by perflab.analyse.explanation)
    summaries: tuple[Summary, ...] = ()
    # the lenses' top-level JSON lists present in every document, empty or not (the lens
    # descriptors' `top_level_lists`, named by the analysis)
    top_level_lists: tuple[str, ...] = ()
    # the lenses measuring the whole statement's wall time (the descriptors' `Figures.wall_time`,
    # named by the analysis): whose `measurements` the hyperfine-style exports hold
    wall_time_metrics: frozenset[Metric] = frozenset()

    @property
    def title(self) -> str:
        """What the report is of: a run, or a comparison of two runs."""
        if self.cross_run and self.compared_names is not None:
            first, second = self.compared_names
            return f"perflab compare: {second} against {first}"
        if self.cross_run and self.baseline_run_id is not None:
            return f"perflab compare: run {self.run_id} against run {self.baseline_run_id}"
        return f"perflab run {self.run_id}"

    @property
    def top_level(self) -> dict[str, Any]:
        """The lenses' findings as the JSON document's lens-specific top-level fields
        (`unavailable_events`, `profiles` ...): the lists every document has first, then what
        the findings add."""
        return {**{name: [] for name in self.top_level_lists}, **top_level_json(self.findings)}

    def raise_on_failure(self) -> RunResult:
        """Raise the first benchmark failure, if any (for callers that want exceptions)."""
        if self.failures:
            raise self.failures[0]
        return self


# ---- stacks and matrices (perflab.analyse.design_analysis derives them)


class InteractionVerdict(enum.StrEnum):
    """Whether a change does the same on another base as on the reference base (perflab matrix)."""

    NONE = "no-interaction"  # CI inside the band: the change does the same on both bases
    BETTER_ON_BASE = "better-on-base"  # the change's ratio is lower on base than on reference
    WORSE_ON_BASE = "worse-on-base"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Interval:
    """A ratio with a confidence interval (bounds 0/inf when unknown)."""

    ratio: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class Interaction:
    """A change's ratio on `base` over its ratio on `reference_base`, for one benchmark and
    metric (and event)."""

    change: str
    base: str
    reference_base: str
    benchmark: str
    metric: Metric
    ratio: float
    ci_low: float
    ci_high: float
    verdict: InteractionVerdict
    on_base: Comparison
    on_reference: Comparison
    paired: bool  # CI over generations (True) or combined from the two intervals
    event: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "change": self.change,
            "base": self.base,
            "reference_base": self.reference_base,
            "benchmark": self.benchmark,
            "metric": str(self.metric),
            "ratio": self.ratio,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "verdict": str(self.verdict),
            "ratio_on_base": self.on_base.ratio,
            "verdict_on_base": str(self.on_base.verdict),
            "ratio_on_reference": self.on_reference.ratio,
            "verdict_on_reference": str(self.on_reference.verdict),
            "ci_method": "paired-generations" if self.paired else "combined-intervals",
        }
        if self.event is not None:
            out["event"] = self.event
        return out


@dataclass(frozen=True)
class StackSummary:
    """The steps of a stack, the whole range, and whether the steps multiply up to it."""

    benchmark: str
    metric: Metric
    steps: tuple[Comparison, ...]
    whole: Comparison
    product: Interval
    consistent: bool  # the product's CI and the whole's CI overlap
    event: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "benchmark": self.benchmark,
            "metric": str(self.metric),
            "steps": [_brief(c) for c in self.steps],
            "whole": _brief(self.whole),
            "product": {
                "ratio": self.product.ratio,
                "ci_low": self.product.ci_low,
                "ci_high": self.product.ci_high,
            },
            "consistent": self.consistent,
        }
        if self.event is not None:
            out["event"] = self.event
        return out


def _brief(c: Comparison) -> dict[str, Any]:
    return {
        "baseline": c.baseline,
        "variant": c.variant,
        "ratio": c.ratio,
        "ci_low": c.ci_low,
        "ci_high": c.ci_high,
        "verdict": str(c.verdict),
    }
