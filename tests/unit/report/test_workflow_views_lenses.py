"""An answer that says where another lens measured beside the deciding one disagrees (a
constructed disagreement: more instructions, less time), in the check's comment and verdict, the
bisect answer and a history's change point; and the comment's link, escaped."""

from __future__ import annotations

from dataclasses import replace

from perflab.analyse.same_work import gate_disagreement
from perflab.cli.workflows.check.handler import checked_link
from perflab.records.bisect import BisectResult, Commit, StepOutcome, StepState
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison
from perflab.records.workflow_results import (
    CheckResult,
    HistoryChange,
    HistoryPoint,
    HistoryResult,
)
from perflab.report.workflow_formats import check_headline, check_markdown, history_markdown
from perflab.report.workflow_views import bisect_section, disagreement_text
from tests.support.report_runs import synthetic_run


def _compared(metric: Metric, ratio: float, low: float, high: float, verdict: Verdict,
              pair: tuple[str, str] = ("base", "head")) -> Comparison:  # fmt: skip
    return Comparison(
        benchmark="./prog",
        metric=metric,
        baseline=pair[0],
        variant=pair[1],
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        verdict=verdict,
        baseline_value=100.0,
        variant_value=100.0 * ratio,
        unit="ns",
    )


# the xxHash #521 shape: 7.3% more instructions, 12.6% less time
INSTRUCTIONS_MORE = _compared(Metric.INSTRUCTIONS, 1.073, 1.073, 1.073, Verdict.SLOWER)
TIME_LESS = _compared(Metric.TIME, 0.874, 0.85, 0.90, Verdict.FASTER)


def test_a_disagreement_is_found_and_said() -> None:
    found = gate_disagreement([INSTRUCTIONS_MORE, TIME_LESS], Metric.INSTRUCTIONS,
                              ("base", "head"), 0.02)  # fmt: skip
    assert found is not None and found.other is Metric.TIME and found.decisively_faster
    assert found.gate_countable and not found.other_countable  # the descriptors' word
    assert disagreement_text(found, "the gate") == (
        "7.3% more instructions, but 12.6% less time: the gate follows instructions (--metric)"
    )
    # agreeing lenses, another pair, or a lens alone: nothing to say
    slower = replace(TIME_LESS, ratio=1.1, ci_low=1.05, ci_high=1.15, verdict=Verdict.SLOWER)
    assert gate_disagreement([INSTRUCTIONS_MORE, slower], Metric.INSTRUCTIONS,
                             ("base", "head"), 0.02) is None  # fmt: skip
    assert gate_disagreement([INSTRUCTIONS_MORE, TIME_LESS], Metric.INSTRUCTIONS,
                             ("good", "head"), 0.02) is None  # fmt: skip
    assert gate_disagreement([INSTRUCTIONS_MORE], Metric.INSTRUCTIONS,
                             ("base", "head"), 0.02) is None  # fmt: skip
    # the gate's lens beyond the threshold while time saw no change is said too
    unchanged = replace(TIME_LESS, ratio=1.001, ci_low=0.99, ci_high=1.01,
                        verdict=Verdict.EQUIVALENT)  # fmt: skip
    same = gate_disagreement([INSTRUCTIONS_MORE, unchanged], Metric.INSTRUCTIONS,
                             ("base", "head"), 0.02)  # fmt: skip
    assert same is not None and not same.decisive
    assert disagreement_text(same, "the gate").startswith(
        "7.3% more instructions, but time unchanged (1.001)"
    )


def _checked(*, overruled: bool, lenses: tuple[Metric, ...]) -> CheckResult:
    result, _ = synthetic_run()
    result = replace(result, comparisons=(INSTRUCTIONS_MORE, TIME_LESS))
    disagreement = gate_disagreement(result.comparisons, lenses[0], ("base", "head"), 0.02)
    return CheckResult(
        base_ref="origin/main",
        base=Commit("a" * 40, "base"),
        head=Commit("b" * 40, "XXH64: the switch finalizer removed"),
        metric=lenses[0],
        threshold=0.02,
        outcome=StepOutcome(StepState.BAD, 1.073, 1.073, 1.073),
        result=result,
        lenses=lenses,
        disagreement=disagreement,
        overruled=overruled,
        base_from="GITHUB_BASE_REF",
    )


def test_the_comment_never_calls_a_speed_up_only_a_regression() -> None:
    # --metric instructions,time: the gate follows instructions, and its first line says time
    # disagrees
    followed = _checked(overruled=False, lenses=(Metric.INSTRUCTIONS, Metric.TIME))
    assert followed.regression
    first = check_markdown(followed).splitlines()[0]
    assert first == (
        "### perflab check: ❌ regression: instructions more than 2.0% worse; 7.3% more "
        "instructions, but 12.6% less time: the gate follows instructions (--metric)"
    )
    comment = check_markdown(followed)
    assert "the instructions lens gates (time beside it)" in comment
    assert "(base `origin/main`, from GITHUB\\_BASE\\_REF)" in comment
    assert "| ./prog | instructions |" in comment and "| ./prog | time |" in comment
    # the CI's default gate: time decisively faster, so it does not fail, and says why first
    overruled = _checked(overruled=True, lenses=(Metric.INSTRUCTIONS, Metric.TIME))
    assert not overruled.regression
    headline = check_headline(overruled)
    assert headline.startswith("⚠️ not failed: 7.3% more instructions, but 12.6% less time")
    assert check_markdown(overruled).splitlines()[0] == f"### perflab check: {headline}"
    document = overruled.to_json()
    assert document["regression"] is False and document["overruled"] is True
    assert document["metrics"] == ["instructions", "time"]
    assert document["disagreement"]["other_metric"] == "time"
    assert document["base_from"] == "GITHUB_BASE_REF"


def test_the_bisect_answer_and_the_change_point_say_the_lenses_disagree() -> None:
    culprit = Commit("c" * 40, "XXH64: the switch finalizer removed")
    evidence = [
        replace(c, baseline="parent", variant="culprit") for c in (INSTRUCTIONS_MORE, TIME_LESS)
    ]
    disagreement = gate_disagreement(evidence, Metric.INSTRUCTIONS, ("parent", "culprit"), 0.02)
    found = BisectResult(
        good=Commit("a" * 40, "good"), bad=culprit, metric=Metric.INSTRUCTIONS,
        threshold=0.02, line=(culprit,), steps=(), culprit=culprit, candidates=(),
        stopped="", seconds=1.0, evidence_run=3, disagreement=disagreement,
    )  # fmt: skip
    texts = [getattr(b, "text", "") for b in bisect_section(found).blocks]
    at = texts.index(f"first bad commit: {'c' * 10} XXH64: the switch finalizer removed")
    assert texts[at + 1] == (
        "against its parent: 7.3% more instructions, but 12.6% less time: the search follows "
        "instructions (--metric)"
    )
    assert found.to_json()["disagreement"]["ratio"] == 1.073

    points = tuple(
        HistoryPoint(f"{i:040x}", f"c{i}", "t", v, "instructions")
        for i, v in enumerate([100.0, 100.0, 107.3])
    )
    change = HistoryChange(
        index=2,
        before=points[1],
        after=points[2],
        series_ratio=1.073,
        ratio=1.073,
        ci_low=1.073,
        ci_high=1.073,
        confirmed=True,
        run_id=7,
        disagreement=disagreement,
    )
    page = history_markdown(
        HistoryResult(
            range_text="a..b",
            metric=Metric.INSTRUCTIONS,
            threshold=0.02,
            points=points,
            changes=(change,),
            measured_now=3,
            seconds=1.0,
        )
    )
    assert (
        f"{2:040x}"[:10] + ": 7.3% more instructions, but 12.6% less time: the history follows "
        "instructions (--metric)"
    ) in page


def test_a_report_link_is_escaped_in_the_comment() -> None:
    checked = _checked(overruled=False, lenses=(Metric.INSTRUCTIONS,))
    link = checked_link(
        "https://ci.example/r.html?x=<img/src=x/onerror=alert(1)>)[more](https://evil.example)"
        "@everyone"
    )
    comment = check_markdown(checked, report_link=link)
    (line,) = [x for x in comment.splitlines() if "The full report" in x]
    assert "<" not in line and ">" not in line and "@everyone" not in line
    target = line.split("](", 1)[1]
    assert line.count("](") == 1 and "(" not in target and target.count(")") == 1  # one link
    assert line.endswith(
        "(https://ci.example/r.html?x=%3Cimg/src=x/onerror=alert%281%29%3E%29%5Bmore%5D%28"
        "https://evil.example%29%40everyone)"
    )
