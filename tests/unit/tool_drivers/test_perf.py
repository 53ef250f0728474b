"""perf's driver: the command lines every caller starts perf with, which events `perf stat` counts
here (each refused one set aside, one round per event at most), and `perf record -- true` probed
once per process on the real machine (the asm and profile lenses would each probe it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed, LaunchSpec
from perflab.records.errors import ToolUnavailableError
from perflab.tool_drivers.perf import (
    CallGraph,
    PerfControl,
    RecordingAnswers,
    RecordOptions,
    Refusal,
    probe_recording,
    probe_stat,
    record_argv,
    stat_argv,
)

OPTIONS = RecordOptions(event="cycles", call_graph=CallGraph.DWARF)
PERF_MESSAGES = Path(__file__).parents[2] / "golden" / "data" / "perf"
PERMISSION = (PERF_MESSAGES / "stat_permission.stderr").read_text()  # cycles refused


def _perf(refuse_dwarf: bool = False) -> FakeRunner:
    runner = FakeRunner()
    if refuse_dwarf:
        runner.on_run(r"^perf record .*--call-graph dwarf", returncode=1, stderr="no dwarf")
    runner.on_run(r"^perf record ", stdout="")
    return runner.on_run(r"^perf evlist ", stdout="cpu-clock\n")


def _probes(runner: FakeRunner) -> int:
    return sum(1 for spec, _ in runner.calls if spec.argv[1] == "record")


def test_the_machine_is_probed_once_per_perf_and_options() -> None:
    # the fake runners stand for one machine, its answers remembered in `answers`
    answers: RecordingAnswers = {}
    runner = _perf(refuse_dwarf=True)
    first = probe_recording(runner, OPTIONS, perf="perf", answers=answers)
    again = probe_recording(_perf(), OPTIONS, perf="perf", answers=answers)  # another runner
    assert first == again == (RecordOptions(event="cycles", call_graph=CallGraph.FP), ["cpu-clock"])
    assert _probes(runner) == 2  # dwarf refused, frame pointers accepted: probed once
    other = RecordOptions(event="cpu-clock", call_graph=CallGraph.NONE)
    fresh = _perf()
    probe_recording(fresh, other, perf="perf", answers=answers)
    assert _probes(fresh) == 1  # other options are probed


def test_a_refusal_is_not_remembered() -> None:
    answers: RecordingAnswers = {}
    refusing = FakeRunner().on_run(r"^perf record ", returncode=1, stderr="paranoid")
    with pytest.raises(ToolUnavailableError):
        probe_recording(refusing, OPTIONS, perf="perf", answers=answers)
    runner = _perf()
    assert probe_recording(runner, OPTIONS, perf="perf", answers=answers)[0] == OPTIONS
    assert _probes(runner) == 1


def test_a_fake_machine_is_probed_every_time() -> None:
    runner = _perf()
    probe_recording(runner, OPTIONS, perf="perf")
    probe_recording(runner, OPTIONS, perf="perf")
    assert _probes(runner) == 2


def test_a_perf_without_no_bpf_event_records_with_bpf_events() -> None:
    """--no-bpf-event (perf 5.1+) saves 0.6-0.9 s per recording; an older perf refuses it."""
    runner = FakeRunner()
    runner.on_run(r"^perf record .*--no-bpf-event", returncode=129, stderr="unknown option")
    runner.on_run(r"^perf record ", stdout="").on_run(r"^perf evlist ", stdout="cpu-clock\n")
    chosen, _ = probe_recording(runner, OPTIONS, perf="perf")
    assert chosen == RecordOptions(event="cycles", call_graph=CallGraph.DWARF, no_bpf_event=False)
    assert "--no-bpf-event" not in chosen.perf_options()
    assert "--no-bpf-event" in OPTIONS.perf_options()


def test_perf_stat_counts_as_csv_to_a_file_or_stderr_obeying_its_control_channel() -> None:
    assert stat_argv("perf", ["cycles", "instructions"]) == (
        "perf", "stat", "-x,", "-e", "cycles,instructions", "--",
    )  # fmt: skip
    control = PerfControl()
    try:
        argv = stat_argv("perf", ["cycles"], output=Path("out.csv"), control=control)
    finally:
        control.close()
    assert argv[:5] == ("perf", "stat", "-x,", "-o", "out.csv")
    assert argv[5:9] == control.perf_options and argv[-3:] == ("-e", "cycles", "--")


def test_perf_record_writes_its_data_file_with_the_options_given() -> None:
    options = RecordOptions(event="cycles", call_graph=CallGraph.NONE, no_bpf_event=False)
    argv = record_argv("perf", Path("x.data"), options)
    assert argv == ("perf", "record", "-q", "-o", "x.data", "-e", "cycles", "-F", "999", "--")


def _stat(replies: dict[str, Completed]) -> FakeRunner:
    """perf stat answering by the -e list it is given."""

    def answer(spec: LaunchSpec, stdin: str | None) -> Completed:
        return replies[spec.argv[spec.argv.index("-e") + 1]]

    return FakeRunner().on_run(r"^perf stat ", answer)


def _unknown(events: str, name: str) -> Completed:
    """perf's exit 129 for an unknown name, its marker under the name."""
    marker = " " * (21 + events.index(name))
    return Completed(
        (), 129, "", f"event syntax error: '{events}'\n{marker}\\___ parser error\n", 1
    )


def test_each_unknown_event_is_set_aside_and_the_rest_counted() -> None:
    first, second = "task-clock,bogus.a,cycles,bogus.b", "task-clock,cycles,bogus.b"
    runner = _stat(
        {
            first: _unknown(first, "bogus.a"),
            second: _unknown(second, "bogus.b"),
            "task-clock,cycles": Completed((), 0, "", "5,,task-clock,9,100.00,,\n", 1),
        }
    )
    probe = probe_stat(runner, [*first.split(","), "cycles"], perf="perf")
    assert probe.accepted == ("task-clock", "cycles")
    assert [(r.event, r.refusal, r.message) for r in probe.refused] == [
        ("bogus.a", Refusal.UNKNOWN_EVENT, "parser error"),
        ("bogus.b", Refusal.UNKNOWN_EVENT, "parser error"),
    ]
    assert probe.counts["task-clock"].value == 5 and "cycles" not in probe.counts
    assert len(runner.calls) == 3


def test_a_permission_refusal_sets_aside_the_event_perf_names() -> None:
    runner = _stat(
        {
            "task-clock,cycles": Completed((), 255, "", PERMISSION, 1),
            "task-clock": Completed((), 0, "", "5,,task-clock,9,100.00,,\n", 1),
        }
    )
    probe = probe_stat(runner, ["task-clock", "cycles"], perf="perf")
    assert [(r.event, r.refusal) for r in probe.refused] == [("cycles", Refusal.PERMISSION)]
    assert probe.accepted == ("task-clock",)


def test_a_failure_naming_no_event_sets_the_first_aside_and_ends_after_one_round_per_event() -> (
    None
):
    runner = FakeRunner().on_run(r"^perf stat ", returncode=1, stderr="perf: broken")
    probe = probe_stat(runner, ["task-clock", "cycles"], perf="perf")
    assert [(r.event, r.refusal) for r in probe.refused] == [
        ("task-clock", Refusal.FAILED),
        ("cycles", Refusal.FAILED),
    ]
    assert probe.refused[0].detail == "perf: broken" and "1" in probe.refused[0].message
    assert probe.accepted == () and len(runner.calls) == 2


def test_a_perf_that_hangs_is_asked_once() -> None:
    """A round that ran out of time would do so again: every event is refused at once."""

    def hangs(spec: LaunchSpec, stdin: str | None) -> Completed:
        return Completed(spec.argv, None, "", "", 10, timed_out=True)

    runner = FakeRunner().on_run(r"^perf stat ", hangs)
    probe = probe_stat(runner, ["task-clock", "cycles", "instructions"], perf="perf", timeout_s=1)
    assert [(r.event, r.refusal) for r in probe.refused] == [
        ("task-clock", Refusal.FAILED),
        ("cycles", Refusal.FAILED),
        ("instructions", Refusal.FAILED),
    ]
    assert "timed out" in probe.refused[0].message and len(runner.calls) == 1
