"""Google Benchmark's JSON report read (tool_output/gbench.py), on Google Benchmark 1.7.1's
captured output (tests/golden/data/gbench): the time per iteration it reports, its aggregates,
and each failure said with a hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.records.errors import BenchmarkFailedError
from perflab.tool_output.gbench import gbench_run

DATA = Path(__file__).resolve().parents[2] / "golden" / "data" / "gbench"


def test_the_time_is_google_benchmarks_own_per_iteration() -> None:
    run = gbench_run((DATA / "repetitions.json").read_text(), "BM_Copy<std::string>")
    # two repetitions of 10,423 iterations each, the aggregates not counted again
    assert run.iterations == 2 * 10423
    assert run.real_ns / run.iterations == pytest.approx((3778.823 + 3841.055) / 2, rel=1e-6)
    assert run.cpu_ns / run.iterations == pytest.approx((1474.551 + 1534.505) / 2, rel=1e-6)


def test_a_benchmark_reporting_aggregates_only_gives_its_mean_in_its_unit() -> None:
    run = gbench_run((DATA / "aggregates_only.json").read_text(), "BM_Ms/repeats:3")
    assert run.iterations == 1 and not run.counted  # a mean, not the iterations' total
    assert run.real_ns == pytest.approx(7.491825818669578e-07 * 1e6)  # ms


@pytest.mark.parametrize(
    ("text", "stderr", "message"),
    [
        ((DATA / "error.json").read_text(), "", "Google Benchmark reports an error: no input"),
        ("", (DATA / "no_match.stderr").read_text(), "has no benchmark 'BM_x'"),
        ('{"context": {}, "benchmarks": []}', "", "has no benchmark 'BM_x'"),
        ("", "", "wrote no Google Benchmark report"),
        ("hello\n", "", "wrote no Google Benchmark report"),
    ],
)
def test_a_run_without_a_time_fails_the_benchmark_with_a_hint(
    text: str, stderr: str, message: str
) -> None:
    with pytest.raises(BenchmarkFailedError, match=message) as raised:
        gbench_run(text, "BM_x", stderr)
    assert raised.value.hint
