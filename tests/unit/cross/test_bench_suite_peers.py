"""bench/suite_peers.py reads each peer's answer as the peer gives it (shapes as the peers print
them: pytest-benchmark 5.3.1's gate, asv 0.6.6's compare table, compare.py 1.7.1's JSON dump)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"


@pytest.fixture(scope="module")
def peers() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module("suite_peers")
    finally:
        sys.path.remove(str(BENCH))


ASV_COMPARE = """
All benchmarks:

| Change   | Before [418130de] <main~1>   | After [866f13b0] <main>   | Ratio   | Benchmark (Parameter)                            |
|----------|------------------------------|---------------------------|---------|--------------------------------------------------|
|          | 72.5±6μs                     | 61.9±10μs                 | ~0.85   | bench_sort.TimeJoin.time_join                    |
|          | n/a                          | n/a                       | n/a     | bench_sort.TimeSort.time_sorted(100, 'sorted')   |
| +        | 86.8±2μs                     | 99.0±1μs                  | 1.14    | bench_sort.time_sum                              |
"""  # noqa: E501


def test_asv_marks_are_claims_and_skipped_rows_are_left_out(peers: ModuleType) -> None:
    verdicts = peers.asv_compare_verdicts(ASV_COMPARE)
    assert [(v.benchmark, v.different, v.ratio, v.word) for v in verdicts] == [
        ("bench_sort.TimeJoin.time_join", False, 0.85, "not significant"),
        ("bench_sort.time_sum", True, 1.14, "slower"),
    ]


def test_pytest_benchmark_gate_names_the_failed_test(peers: ModuleType) -> None:
    output = (
        "Performance has regressed:\n"
        "\ttest_sorted[10000] (0001_a) - Field 'mean' has failed PercentageRegressionCheck: "
        "20.1 > 3.000000000\n"
    )

    def saved(mean: float) -> dict:
        return {
            "benchmarks": [
                {"name": "test_sorted[10000]", "fullname": "t.py::test_sorted[10000]",
                 "stats": {"mean": mean}},
                {"name": "test_join", "fullname": "t.py::test_join", "stats": {"mean": 1.0}},
            ]
        }  # fmt: skip

    verdicts = peers.pytest_benchmark_verdicts(output, saved(2.0), saved(2.4))
    assert [(v.benchmark, v.different) for v in verdicts] == [
        ("t.py::test_sorted[10000]", True),
        ("t.py::test_join", False),
    ]
    assert verdicts[0].ratio == pytest.approx(1.2)


def test_compare_py_u_test_below_alpha_is_a_claim(peers: ModuleType) -> None:
    def row(name: str, run_type: str, aggregate: str, change: float, pvalue: float | None) -> dict:
        utest = {"time_pvalue": pvalue, "cpu_pvalue": pvalue} if pvalue is not None else {}
        return {"name": name, "run_type": run_type, "aggregate_name": aggregate,
                "measurements": [{"time": change}], "utest": utest}  # fmt: skip

    report = [
        row("BM_Sum", "iteration", "", 0.02, 0.001),
        row("BM_Sum_median", "aggregate", "median", 0.03, None),
        row("BM_Add", "iteration", "", -0.01, 0.4),
        row("OVERALL_GEOMEAN", "aggregate", "geomean", 0.0, None),
    ]
    verdicts = peers.compare_py_verdicts(report)
    assert [(v.benchmark, v.different) for v in verdicts] == [("BM_Sum", True), ("BM_Add", False)]
    assert verdicts[0].ratio == pytest.approx(1.03)
    assert verdicts[1].ratio is None
