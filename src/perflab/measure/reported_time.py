"""A command's own report of its time (`Benchmark.reports`). Here are the arguments that ask for it,
the files it is written to, and the pure reading of it; and, for callgrind, the dumps that hold the
measured region alone with the iterations in it.

Google Benchmark: `--benchmark_out=FILE --benchmark_out_format=json` writes the run's JSON to a
file (the console output stays as it is, and perflab discards it); each entry of `run_type`
"iteration" is one repetition with its `iterations` and its `real_time`/`cpu_time` per
iteration in `time_unit`. A run's sample is the time of all its repetitions' iterations, so
that `value / loops` is Google Benchmark's own time per iteration; perflab repeats the process
itself, interleaved with the other variants, rather than asking for repetitions. Under
callgrind, a dump before `State::StartKeepRunning()` and after `State::FinishKeepRunning()`
holds one run's iterations alone; the last such dump is the run the report counts."""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from perflab.plan.gbench_suite import GBENCH_NO_MATCH, gbench_filter
from perflab.records.errors import BenchmarkFailedError
from perflab.records.kinds import TimeReport

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


def report_arguments(report: TimeReport, path: str) -> str:
    """The shell words that make the program write its report to `path`."""
    if report is TimeReport.GBENCH:
        return shlex.join((f"--benchmark_out={path}", "--benchmark_out_format=json"))
    raise AssertionError(report)


class ReportFiles:
    """Where each variant's runs write their report, read (and removed) after each run."""

    def __init__(self, report: TimeReport, folder: str, variants: int) -> None:
        self.report = report
        self.paths = [os.path.join(folder, f"{index}.json") for index in range(variants)]

    def arguments(self, index: int) -> str:
        return report_arguments(self.report, self.paths[index])

    def take(self, index: int, name: str, stderr: str) -> ReportedRun:
        """The run variant `index` just made; a run that wrote nothing reads as an empty report."""
        path = self.paths[index]
        try:
            with open(path, encoding="utf-8", errors="replace") as file:
                text = file.read()
            os.unlink(path)  # the next run's report is its own
        except FileNotFoundError:
            text = ""
        return read_report(self.report, text, name, stderr)


# Google Benchmark's loop over a run's iterations begins and ends in these (exported) calls:
# a dump before the one and after the other holds the iterations alone (no set-up, no trial
# runs' bookkeeping), one dump per run, the last run the one its report counts
_GBENCH_LOOP_START = "benchmark::State::StartKeepRunning()"
_GBENCH_LOOP_END = "benchmark::State::FinishKeepRunning()"


def region_dump_options(report: TimeReport) -> tuple[str, ...]:
    """callgrind's options that dump the measured region of each run on its own."""
    if report is TimeReport.GBENCH:
        return (f"--dump-before={_GBENCH_LOOP_START}", f"--dump-after={_GBENCH_LOOP_END}")
    raise AssertionError(report)


def last_region_dump(
    report: TimeReport, dumps: Sequence[tuple[str, str]]
) -> tuple[str, str] | None:
    """The last of callgrind's dumps ((file name, text), in the order written) that holds a
    run's measured region alone; None when there is none."""
    if report is not TimeReport.GBENCH:
        raise AssertionError(report)
    trigger = f"desc: Trigger: --dump-after={_GBENCH_LOOP_END}"
    regions = [dump for dump in dumps if trigger in dump[1].split("\nevents:", 1)[0]]
    return regions[-1] if regions else None


def reported_iterations(report: TimeReport, text: str, name: str, stderr: str = "") -> int:
    """The iterations of the last run the report counts: those of the last region dump."""
    entries = _checked_entries(text, name, stderr)
    repetitions = [e for e in entries if e.get("run_type", "iteration") == "iteration"]
    if not repetitions:
        raise BenchmarkFailedError(
            f"Google Benchmark reported no iteration count of {name!r} (only aggregates)",
            hint="a benchmark that asks for aggregates only (ReportAggregatesOnly) can be timed "
            "(--metric time), not counted per iteration",
        )
    return max(1, int(repetitions[-1]["iterations"]))


def read_report(report: TimeReport, text: str, name: str, stderr: str = "") -> ReportedRun:
    """The run of benchmark `name` the report holds (`stderr`: the program's, which may say
    why there is none); a BenchmarkFailedError says why none."""
    if report is TimeReport.GBENCH:
        return gbench_run(text, name, stderr)
    raise AssertionError(report)


def gbench_run(text: str, name: str, stderr: str = "") -> ReportedRun:
    """Benchmark `name`'s repetitions in Google Benchmark's JSON report, summed; a report of an
    error (`error_occurred`), of no such benchmark or no report at all fails the benchmark."""
    entries = _checked_entries(text, name, stderr)
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


def _checked_entries(text: str, name: str, stderr: str) -> list[dict[str, Any]]:
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
