"""A run as analysed (records/results.py): what a report is of, a failure raised on request, and
the JSON of a stack's steps and of a matrix's interactions."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from perflab.analyse.run import analyse_run
from perflab.records.errors import BenchmarkFailedError
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison
from perflab.records.results import (
    Interaction,
    InteractionVerdict,
    Interval,
    RunResult,
    StackSummary,
)
from perflab.store.json_runs import load_document

SUBJECT = "perflab.records.results"

CAPTURE = Path(__file__).parents[2] / "golden" / "data" / "runs" / "gzip_preempted.json"


@pytest.fixture(scope="module")
def result() -> RunResult:
    return analyse_run(load_document(CAPTURE))


def compared(baseline: str, variant: str, ratio: float) -> Comparison:
    return Comparison(
        "b", Metric.TIME, baseline, variant, ratio, ratio * 0.99, ratio * 1.01,
        Verdict.SLOWER if ratio > 1 else Verdict.FASTER, 1.0, ratio, "ns",
    )  # fmt: skip


def test_a_report_is_of_a_run_or_of_two_runs_compared(result: RunResult) -> None:
    assert result.title == f"perflab run {result.run_id}"
    by_id = dataclasses.replace(result, cross_run=True, baseline_run_id=3)
    assert by_id.title == f"perflab compare: run {result.run_id} against run 3"
    named = dataclasses.replace(by_id, compared_names=("run 3", "new.json"))
    assert named.title == "perflab compare: new.json against run 3"


def test_a_failure_is_raised_only_when_asked_for(result: RunResult) -> None:
    assert result.raise_on_failure() is result
    failed = dataclasses.replace(
        result, failures=(BenchmarkFailedError("crashed"), BenchmarkFailedError("also"))
    )
    with pytest.raises(BenchmarkFailedError, match="crashed"):
        failed.raise_on_failure()


def test_a_stacks_json_gives_its_steps_whole_range_and_product() -> None:
    steps = (compared("base", "one", 1.1), compared("one", "two", 1.2))
    whole = compared("base", "two", 1.32)
    stack = StackSummary("b", Metric.TIME, steps, whole, Interval(1.32, 1.3, 1.34), True)
    written = stack.to_json()
    assert [s["variant"] for s in written["steps"]] == ["one", "two"]
    assert written["whole"]["verdict"] == "slower"
    assert written["product"] == {"ratio": 1.32, "ci_low": 1.3, "ci_high": 1.34}
    assert written["consistent"] and "event" not in written
    assert dataclasses.replace(stack, event="cycles").to_json()["event"] == "cycles"


def test_an_interactions_json_gives_both_bases_and_how_its_interval_was_made() -> None:
    interaction = Interaction(
        change="fix", base="new", reference_base="old", benchmark="b", metric=Metric.TIME,
        ratio=0.9, ci_low=0.85, ci_high=0.95, verdict=InteractionVerdict.BETTER_ON_BASE,
        on_base=compared("new", "new+fix", 0.8), on_reference=compared("old", "old+fix", 0.89),
        paired=False,
    )  # fmt: skip
    written = interaction.to_json()
    assert written["verdict"] == "better-on-base"
    assert (written["ratio_on_base"], written["verdict_on_base"]) == (0.8, "faster")
    assert written["ci_method"] == "combined-intervals" and "event" not in written
    assert dataclasses.replace(interaction, paired=True).to_json()["ci_method"] == (
        "paired-generations"
    )


@dataclasses.dataclass(frozen=True)
class _Found:
    rows: dict[str, list[str]]

    def to_json(self) -> dict[str, list[str]]:
        return self.rows


def test_the_lists_every_document_has_come_first_and_findings_fill_them(result: RunResult) -> None:
    assert result.top_level_lists == ("unavailable_events",)  # the counters lens's
    assert result.top_level == {"unavailable_events": []}
    found = dataclasses.replace(result, findings=(_Found({"profiles": ["p"]}),))
    assert list(found.top_level) == ["unavailable_events", "profiles"]
    filled = dataclasses.replace(result, findings=(_Found({"unavailable_events": ["e"]}),))
    assert filled.top_level == {"unavailable_events": ["e"]}
