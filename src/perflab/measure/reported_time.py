"""A command's own report of its time (`Benchmark.reports`). Here are the arguments that ask for it,
the files it is written to, and which reading of it (tool_output.gbench) applies; and, for
callgrind, the dumps that hold the measured region alone with the iterations in it.

Google Benchmark: `--benchmark_out=FILE --benchmark_out_format=json` writes the run's JSON to a
file (the console output stays as it is, and perflab discards it); perflab repeats the process
itself, interleaved with the other variants, rather than asking for repetitions. Under
callgrind, a dump before `State::StartKeepRunning()` and after `State::FinishKeepRunning()`
holds one run's iterations alone; the last such dump is the run the report counts."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

from perflab.records.kinds import TimeReport
from perflab.tool_output.gbench import ReportedRun, gbench_iterations, gbench_run


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
    if report is TimeReport.GBENCH:
        return gbench_iterations(text, name, stderr)
    raise AssertionError(report)


def read_report(report: TimeReport, text: str, name: str, stderr: str = "") -> ReportedRun:
    """The run of benchmark `name` the report holds (`stderr`: the program's, which may say
    why there is none); a BenchmarkFailedError says why none."""
    if report is TimeReport.GBENCH:
        return gbench_run(text, name, stderr)
    raise AssertionError(report)
