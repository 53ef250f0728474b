"""The counters and profile lenses, `events` and `doctor` with the real perf on this machine.

Kept short (a few seconds each): another engineer runs timing benchmarks on the same 2-core VM."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from perflab.diagnose.doctor import diagnose
from perflab.diagnose.events import Countable, search_events
from perflab.lenses.counters.findings import CounterFindings
from perflab.lenses.counters.measure import CountersLens
from perflab.lenses.profile.analyse import ProfileFindings
from perflab.lenses.profile.measure import ProfileLens
from perflab.machine.proc import SubprocessRunner
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.measure.perf.record import RecordedRegion, record_statement_profile
from perflab.measure.worker_client import WorkerLaunch
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings
from perflab.tool_drivers.perf import RecordOptions
from tests.support.fast_settings import MINIMUM_DESIGN

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("perf") is None, reason="perf is not installed"),
]

C_PROGRAM = r"""
#include <stdio.h>
#include <string.h>
__attribute__((noinline)) unsigned long hot_multiply(unsigned long n) {
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++) x = x * 6364136223846793005UL + i;
    return x;
}
__attribute__((noinline)) unsigned long hot_divide(unsigned long n) {
    unsigned long x = 0;
    for (unsigned long i = 1; i < n; i++) x += (n * 7 + x) / i;
    return x;
}
__attribute__((noinline)) unsigned long cold_setup(unsigned long n) {
    unsigned long x = 0;
    for (unsigned long i = 0; i < n / 50; i++) x ^= i * 3;
    return x;
}
int main(int argc, char **argv) {
    unsigned long n = 40000000UL;
    unsigned long r = cold_setup(n);
    if (argc > 1 && strcmp(argv[1], "divide") == 0) r += hot_divide(n / 8);
    else r += hot_multiply(n);
    printf("%lu\n", r);
    return 0;
}
"""


def context_for(experiment: Experiment, sink: MemorySink) -> LensContext:
    return LensContext(
        experiment,
        SubprocessRunner(),
        sink,
        NullProgress(),
        cpu=None,
        default_python=sys.executable,
    )


def test_counters_count_only_the_region_and_report_unavailable_events() -> None:
    # The setup touches ~40 MB (about 10,000 page faults); the statement touches nothing new.
    benchmark = Benchmark("sum", stmt="sum(range(200))", setup="big = bytearray(40_000_000)")
    events = ("task-clock", "page-faults", "context-switches", "cycles", "no_such_event_xyz")
    settings = replace(MINIMUM_DESIGN, metrics=(Metric.COUNTERS,)).with_options(events=events)
    experiment = Experiment((benchmark,), (Variant("a"), Variant("b", env={"B": "1"})), settings)
    lens = CountersLens(blocks_per_generation=3)
    lens.preflight(experiment, SubprocessRunner())
    sink = MemorySink()
    lens.measure(benchmark, context_for(experiment, sink))
    data = sink.data_for("sum", Metric.COUNTERS)
    faults = data.samples_of("a", "page-faults")
    assert faults and max(s.value for s in faults) < 1000  # the setup's faults are not counted
    clock = data.samples_of("a", "task-clock")
    assert all(s.per_iteration < 1e6 for s in clock)  # ns per iteration of a tiny statement
    analysis = lens.analyse(benchmark, ["a", "b"], data, experiment)
    by_event = {c.event: c for c in analysis.comparisons}
    assert {"task-clock", "page-faults", "context-switches"} <= set(by_event)
    assert by_event["task-clock"].verdict in set(Verdict)
    assert by_event["task-clock"].to_json()["metric"] == "counters"
    found = analysis.findings
    assert isinstance(found, CounterFindings)
    unavailable = {u.event: u for u in found.unavailable_events}
    assert str(unavailable["no_such_event_xyz"].reason) == "unknown event"
    if "cycles" not in by_event:  # a machine without a PMU, like the CI VM
        assert str(unavailable["cycles"].reason) == "not supported"
        assert unavailable["cycles"].hint
    avx = {s.variant: s for s in found.avx512}
    arch_status = Path("/proc/self/arch_status")
    if arch_status.exists() and "AVX512_elapsed_ms" in arch_status.read_text():
        assert avx["a"].samples == 6 and avx["a"].control_samples == 2


def test_counters_of_a_command() -> None:
    benchmark = Benchmark("true", cmd="true")
    settings = replace(MINIMUM_DESIGN, metrics=(Metric.COUNTERS,)).with_options(
        events=("task-clock", "page-faults")
    )
    experiment = Experiment((benchmark,), (Variant("a"), Variant("b")), settings)
    lens = CountersLens()
    sink = MemorySink()
    lens.measure(benchmark, context_for(experiment, sink))
    analysis = lens.analyse(
        benchmark, ["a", "b"], sink.data_for("true", Metric.COUNTERS), experiment
    )
    assert {c.event for c in analysis.comparisons} == {"task-clock", "page-faults"}


def test_profile_of_a_python_statement_finds_the_sort() -> None:
    benchmark = Benchmark("sort", stmt="sorted(data)", setup="data = list(range(3000, 0, -1))")
    profile = record_statement_profile(
        SubprocessRunner(),
        benchmark,
        Variant("a"),
        WorkerLaunch(sys.executable, cpu=None, timeout_s=60),
        region=RecordedRegion(seconds=0.3),
        options=RecordOptions(event="cycles"),
    )
    assert profile.samples
    assert profile.sampled_events  # read back from the data file
    top = [s.name for s in profile.hot_symbols().symbols[:5]]
    assert any("sort" in name or "compare" in name for name in top), top
    # the worker's start-up (imports, setup) is outside the region: no samples there
    assert all(s.symbol != "PyImport_ImportModule" for s in profile.samples)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_profile_of_a_c_program_with_known_hot_functions(tmp_path: Path) -> None:
    source = tmp_path / "hot.c"
    source.write_text(C_PROGRAM)
    binary = tmp_path / "hot"
    subprocess.run(
        ["gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-o", str(binary), str(source)], check=True
    )
    benchmark = Benchmark("hot", cmd=str(binary))
    variants = (Variant("multiply"), Variant("divide", cmd=f"{binary} divide"))
    experiment = Experiment((benchmark,), variants, Settings(metrics=(Metric.PROFILE,), seed=1))
    # enough samples for the appeared/disappeared claims to settle on a loaded machine too
    lens = ProfileLens(region_s=1.0, max_command_runs=2)
    notes = lens.preflight(experiment, SubprocessRunner())
    sink = MemorySink()
    lens.measure(benchmark, context_for(experiment, sink))
    analysis = lens.analyse(
        benchmark, ["multiply", "divide"], sink.data_for("hot", Metric.PROFILE), experiment
    )
    assert isinstance(analysis.findings, ProfileFindings)
    summaries = {r.variant: r for r in analysis.findings.recordings}
    assert summaries["multiply"].hot.symbols[0].name == "hot_multiply"
    assert summaries["divide"].hot.symbols[0].name == "hot_divide"
    assert summaries["multiply"].hot.symbols[0].object == "hot"
    comparison = analysis.comparisons[0].to_json()
    assert comparison["metric"] == "profile"
    # main runs hot_divide where it ran hot_multiply: one dispatch change by their caller; on
    # a loaded machine a side can get too few samples to settle it (listed as unsettled, with
    # the samples it needs), but it is never claimed the other way round
    dispatch = [(d["from"], d["to"], d["caller"]) for d in comparison["dispatch_changed"]]
    pending = {u["name"]: u["change"] for u in comparison["unsettled"]}
    assert dispatch == [("hot_multiply", "hot_divide", "main")] or (
        pending.get("hot_divide") == "appeared"
    ), comparison
    assert "hot_multiply" not in comparison["appeared"]
    assert "hot_divide" not in comparison["disappeared"]
    names = [s["name"] for s in comparison["symbols"]]
    assert set(names[:2]) == {"hot_multiply", "hot_divide"}
    if summaries["multiply"].facts["fell_back"]:
        assert any("instead of cycles" in n.message for n in notes)
    folded = sink.artifacts[0].content
    assert "hot`main;hot`hot_multiply" in folded


def test_events_search_and_doctor() -> None:
    found = {e.name: e for e in search_events("task-clock")}
    assert found["task-clock"].countable is Countable.YES
    report = diagnose().to_json()
    lenses = {lens["lens"]: lens for lens in report["lenses"]}
    assert lenses["counters"]["available"]
    assert {check["name"] for check in report["noise"]} >= {"load", "isolated CPUs"}
