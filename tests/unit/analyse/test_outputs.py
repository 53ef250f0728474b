"""The output checks' verdicts (analyse/outputs.py) from stored check values: a variant that
computes something else than its baseline makes that pair's comparisons `invalid`; a value
that moves within one variant is not compared."""

from __future__ import annotations

import json
from typing import Any

from perflab.analyse.outputs import judge_outputs
from perflab.records.kinds import ArtifactScope, Metric, RunStatus, Verdict
from perflab.records.model import Artifact, Benchmark, Comparison, Experiment, Severity, Variant
from perflab.records.run_facts import MachineInfo
from perflab.records.settings import Settings
from perflab.stats.outputs import CHECK_ARTIFACT
from perflab.store.runs import StoredRun
from perflab.worker.statement_values import encode_value

SUBJECT = "perflab.analyse.outputs"

BENCHMARKS = (Benchmark("sum", stmt="f()"), Benchmark("sort", stmt="g()"))
VARIANTS = ("A", "B", "C")


def _check(value: Any, *, after_measuring: Any = None) -> dict[str, Any]:
    """One variant's stored check of `result`: its value after setup and after measuring."""
    after = value if after_measuring is None else after_measuring
    return {
        "expression": "result",
        "after_setup": encode_value(value),
        "after_measuring": encode_value(after),
    }


def _run(checks: dict[str, dict[str, Any]], *, rtol: float = 0.0) -> StoredRun:
    """A run whose benchmark `sum` stored these checks, by variant (`sort` stored none)."""
    experiment = Experiment(
        benchmarks=BENCHMARKS,
        variants=tuple(Variant(name) for name in VARIANTS),
        settings=Settings(metrics=(Metric.TIME,), check="result", check_rtol=rtol),
    )
    artifacts = tuple(
        Artifact("sum", variant, ArtifactScope.OUTPUT_CHECK, CHECK_ARTIFACT, json.dumps(check))
        for variant, check in checks.items()
    )
    return StoredRun(
        run_id=1,
        created_at="2026-01-01T00:00:00+00:00",
        finished_at=None,
        status=RunStatus.COMPLETE,
        perflab_version="0",
        experiment=experiment,
        machine=MachineInfo(),
        error=None,
        samples=(),
        artifacts=artifacts,
        notes=(),
        variant_info={},
    )


def _comparison(benchmark: str, variant: str) -> Comparison:
    return Comparison(
        benchmark=benchmark,
        metric=Metric.TIME,
        baseline="A",
        variant=variant,
        ratio=0.9,
        ci_low=0.85,
        ci_high=0.95,
        verdict=Verdict.FASTER,
        baseline_value=1.0,
        variant_value=0.9,
        unit="ns",
    )


COMPARISONS = [_comparison(b.name, v) for b in BENCHMARKS for v in VARIANTS[1:]]


def _verdicts(comparisons: list[Comparison]) -> dict[tuple[str, str], Verdict]:
    return {(c.benchmark, c.variant): c.verdict for c in comparisons}


def test_a_variant_that_computes_something_else_makes_its_comparisons_invalid() -> None:
    run = _run({"A": _check([1, 2, 3]), "B": _check([1, 2, 4]), "C": _check([1, 2, 3])})
    judged, notes = judge_outputs(run, COMPARISONS)
    assert _verdicts(judged) == {
        ("sum", "B"): Verdict.INVALID,
        ("sum", "C"): Verdict.FASTER,
        ("sort", "B"): Verdict.FASTER,
        ("sort", "C"): Verdict.FASTER,
    }
    invalid = judged[0]
    assert invalid.interval_verdict is Verdict.FASTER
    assert invalid.output_check is not None
    assert invalid.output_check["expression"] == "result"
    assert invalid.output_check["where"] == "element [2]"
    warnings = [n for n in notes if n.severity is Severity.WARNING]
    assert [(n.benchmark, n.variant) for n in warnings] == [("sum", "B")]
    assert "B computes something else than A" in warnings[0].message
    same = [n for n in notes if n.severity is Severity.INFO]
    assert [n.message for n in same] == [
        "output check `result`: C computed the same value as the baseline"
    ]


def test_the_json_of_an_invalid_comparison_names_the_check_and_no_withheld_verdict() -> None:
    run = _run({"A": _check(1.0), "B": _check(2.0), "C": _check(1.0)})
    judged, _ = judge_outputs(run, COMPARISONS)
    out = judged[0].to_json()
    assert out["verdict"] == "invalid" and out["output_check"]["expression"] == "result"
    assert "interval_verdict" not in out and "withheld_reason" not in out


def test_values_within_the_relative_tolerance_are_the_same() -> None:
    checks = {"A": _check(1.0), "B": _check(1.0 + 1e-9), "C": _check(1.1)}
    judged, _ = judge_outputs(_run(checks, rtol=1e-6), COMPARISONS)
    assert _verdicts(judged)[("sum", "B")] is Verdict.FASTER
    assert _verdicts(judged)[("sum", "C")] is Verdict.INVALID
    judged, _ = judge_outputs(_run(checks), COMPARISONS)
    assert _verdicts(judged)[("sum", "B")] is Verdict.INVALID


def test_a_value_that_moves_within_a_variant_is_not_compared() -> None:
    run = _run({"A": _check(1), "B": _check(5, after_measuring=6), "C": _check(1)})
    judged, notes = judge_outputs(run, COMPARISONS)
    assert Verdict.INVALID not in _verdicts(judged).values()
    unstable = [n for n in notes if n.severity is Severity.WARNING]
    assert [(n.benchmark, n.variant) for n in unstable] == [("sum", "B")]
    assert "is not deterministic" in unstable[0].message and unstable[0].hint


def test_an_unstable_baseline_leaves_every_comparison_as_it_was() -> None:
    run = _run({"A": _check(1, after_measuring=2), "B": _check(7), "C": _check(1)})
    judged, notes = judge_outputs(run, COMPARISONS)
    assert judged == COMPARISONS
    assert [n.variant for n in notes] == ["A"]


def test_a_run_without_checks_changes_nothing() -> None:
    judged, notes = judge_outputs(_run({}), COMPARISONS)
    assert (judged, notes) == (COMPARISONS, [])
