"""Google Benchmark's JSON report (`--benchmark_out=FILE --benchmark_out_format=json`), read:
each entry of `run_type` "iteration" is one repetition with its `iterations` and its
`real_time`/`cpu_time` per iteration in `time_unit`. A run's reading is the time of all its
repetitions' iterations, so that `value / loops` is Google Benchmark's own time per iteration.
Pure: measure.reported_time writes and reads the files."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from perflab.plan.gbench_suite import GBENCH_NO_MATCH, gbench_filter
from perflab.records.errors import BenchmarkFailedError

_STDERR_LINES = 15  # of the program's stderr, shown when it wrote no report
# nanoseconds per Google Benchmark time_unit
_NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


@dataclass(frozen=True)
class ReportedRun:
    """What one run of the program says it measured: `iterations` iterations taking `real_ns`
    of wall time and `cpu_ns` of the process's CPU time in all. `counted` False: the report
    gave only a mean per iteration (as one iteration here), not how long the iterations took
    together, so nothing of the process's own accounting can be laid on it."""

    real_ns: float
    cpu_ns: float
    iterations: int
    counted: bool = True


def gbench_run(text: str, name: str, stderr: str = "") -> ReportedRun:
    """Benchmark `name`'s repetitions in Google Benchmark's JSON report, summed; a report of an
    error (`error_occurred`), of no such benchmark or no report at all fails the benchmark."""
    entries = _gbench_entries(text, name, stderr)
    # the filter selected this benchmark alone: every entry is one of its repetitions, or an
    # aggregate of them (the only thing reported when its code asks for aggregates only)
    repetitions = [e for e in entries if e.get("run_type", "iteration") == "iteration"]
    if repetitions:
        return _summed(repetitions)
    means = [{**e, "iterations": 1} for e in entries if e.get("aggregate_name") == "mean"]
    if not means:
        raise BenchmarkFailedError(
            f"Google Benchmark reported neither a repetition nor a mean of {name!r}",
            hint="run it by hand with --benchmark_format=json to see what it reports",
        )
    return replace(_summed(means[:1]), counted=False)


def _gbench_entries(text: str, name: str, stderr: str) -> list[dict[str, Any]]:
    """The report's entries of benchmark `name`, which ran without an error."""
    entries = _entries(text)
    if entries is None or not entries:
        if GBENCH_NO_MATCH in stderr or entries is not None:
            raise BenchmarkFailedError(
                f"this variant's program has no benchmark {name!r}",
                hint="list its benchmarks with --benchmark_list_tests; a benchmark only one "
                "variant has cannot be compared",
            )
        raise BenchmarkFailedError(
            "the program wrote no Google Benchmark report (--benchmark_out)",
            hint="is it a Google Benchmark binary (BENCHMARK_MAIN or benchmark::Initialize)? "
            "Run it by hand with --benchmark_list_tests",
            detail="\n".join(stderr.strip().splitlines()[-_STDERR_LINES:]) or None,
        )
    for entry in entries:
        # SkipWithError sets error_occurred; a later version's SkipWithMessage only a message
        if entry.get("error_occurred") or entry.get("error_message"):
            said = entry.get("error_message") or "no message"
            how = "reports an error" if entry.get("error_occurred") else "skipped it"
            raise BenchmarkFailedError(
                f"Google Benchmark {how}: {said}",
                hint="the benchmark's code called state.SkipWithError(...); run it by hand "
                f"with --benchmark_filter={gbench_filter(name)} to see why",
            )
    return entries


def _entries(text: str) -> list[dict[str, Any]] | None:
    """The report's benchmark entries; None when the text is no Google Benchmark report."""
    try:
        document = json.loads(text) if text.strip() else None
    except json.JSONDecodeError:
        return None
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        return None
    return [e for e in document["benchmarks"] if isinstance(e, dict)]


def _summed(repetitions: list[dict[str, Any]]) -> ReportedRun:
    real_ns = cpu_ns = 0.0
    iterations = 0
    for entry in repetitions:
        unit = _NS_PER_UNIT.get(str(entry.get("time_unit", "ns")))
        if unit is None:
            raise BenchmarkFailedError(
                f"Google Benchmark reports an unknown time unit {entry.get('time_unit')!r}",
                hint="perflab reads ns, us, ms and s",
            )
        count = int(entry["iterations"])
        real_ns += float(entry["real_time"]) * unit * count
        cpu_ns += float(entry["cpu_time"]) * unit * count
        iterations += count
    return ReportedRun(real_ns=real_ns, cpu_ns=cpu_ns, iterations=iterations)


def gbench_iterations(text: str, name: str, stderr: str = "") -> int:
    """The iterations of the last repetition of benchmark `name` the report holds."""
    entries = _gbench_entries(text, name, stderr)
    repetitions = [e for e in entries if e.get("run_type", "iteration") == "iteration"]
    if not repetitions:
        raise BenchmarkFailedError(
            f"Google Benchmark reported no iteration count of {name!r} (only aggregates)",
            hint="a benchmark that asks for aggregates only (ReportAggregatesOnly) can be timed "
            "(--metric time), not counted per iteration",
        )
    return max(1, int(repetitions[-1]["iterations"]))
