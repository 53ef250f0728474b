"""A command's own report of its time (measure/reported_time.py), on Google Benchmark 1.7.1's
captured output (tests/golden/data/gbench): a variant's report read once, and the callgrind dump
that holds the reported run's iterations alone."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from perflab.measure.reported_time import (
    ReportFiles,
    last_region_dump,
    region_dump_options,
    reported_iterations,
)
from perflab.records.errors import BenchmarkFailedError
from perflab.records.kinds import TimeReport

DATA = Path(__file__).resolve().parents[2] / "golden" / "data" / "gbench"


def test_each_variants_report_is_read_once(tmp_path: Path) -> None:
    files = ReportFiles(TimeReport.GBENCH, str(tmp_path), 2)
    assert shlex.split(files.arguments(1)) == [
        f"--benchmark_out={tmp_path / '1.json'}", "--benchmark_out_format=json",
    ]  # fmt: skip
    (tmp_path / "1.json").write_text((DATA / "repetitions.json").read_text())
    assert files.take(1, "BM_Copy<std::string>", "").iterations == 2 * 10423
    with pytest.raises(BenchmarkFailedError, match="wrote no Google Benchmark report"):
        files.take(1, "BM_Copy<std::string>", "")  # a later run that wrote nothing


def _dump(trigger: str) -> str:
    # the head of a callgrind dump (valgrind 3.19) as --dump-before/--dump-after write it
    return (
        "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 12659\n"
        "cmd:  ./bench_old --benchmark_filter=^BM_Sum$\npart: 6\n\n\ndesc: I1 cache: \n"
        f"desc: D1 cache: \ndesc: LL cache: \ndesc: Timerange: Basic block 0 - 1\n"
        f"desc: Trigger: {trigger}\n"
    )


def test_callgrind_counts_the_last_runs_iterations_alone() -> None:
    assert region_dump_options(TimeReport.GBENCH) == (
        "--dump-before=benchmark::State::StartKeepRunning()",
        "--dump-after=benchmark::State::FinishKeepRunning()",
    )
    before = _dump("--dump-before=benchmark::State::StartKeepRunning()")
    after = _dump("--dump-after=benchmark::State::FinishKeepRunning()")
    dumps = [
        ("callgrind.out.1.1", before), ("callgrind.out.1.2", after),  # a trial run
        ("callgrind.out.1.3", before), ("callgrind.out.1.4", after),  # the run reported
        ("callgrind.out.1", _dump("Program termination")),
    ]  # fmt: skip
    assert last_region_dump(TimeReport.GBENCH, dumps) == ("callgrind.out.1.4", after)
    assert last_region_dump(TimeReport.GBENCH, dumps[-1:]) is None
    report = (DATA / "repetitions.json").read_text()
    assert reported_iterations(TimeReport.GBENCH, report, "BM_Copy<std::string>") == 10423
    with pytest.raises(BenchmarkFailedError, match="only aggregates"):
        reported_iterations(
            TimeReport.GBENCH, (DATA / "aggregates_only.json").read_text(), "BM_Ms/repeats:3"
        )
