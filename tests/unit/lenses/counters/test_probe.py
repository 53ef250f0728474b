"""The counters lens's probe of perf's events on `true`: every event perf refuses or cannot count
is set aside with its reason, and a failure that names no event stops the lens."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from perflab.lenses.counters.availability import HostFacts
from perflab.lenses.counters.probe import probe_events
from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed, LaunchSpec
from perflab.records.errors import ToolUnavailableError
from perflab.tool_output.perf_stat import Availability

SUBJECT = "perflab.lenses.counters.probe"

VM = HostFacts(hypervisor=True, paranoid=2, root=True)


def _perf_stat(unknown: set[str]) -> Callable[[LaunchSpec, str | None], Completed]:
    """Answers `perf stat -e LIST -- true` like perf: 129 for an unknown name, else CSV."""

    def reply(spec: LaunchSpec, stdin: str | None) -> Completed:
        events = spec.argv[spec.argv.index("-e") + 1]
        for name in events.split(","):
            if name in unknown:
                offset = events.index(name)
                stderr = (
                    f"event syntax error: '{events}'\n{' ' * (21 + offset)}\\___ parser error\n"
                )
                return Completed(spec.argv, 129, "", stderr, 1)
        lines = [
            f"<not supported>,,{n},0,100.00,," if n == "cycles" else f"5,,{n},1000,100.00,,"
            for n in events.split(",")
        ]
        return Completed(spec.argv, 0, "", "\n".join(lines) + "\n", 1)

    return reply


def ScriptedRunner(unknown: set[str]) -> FakeRunner:  # noqa: N802
    return FakeRunner().on_run(r" stat ", _perf_stat(unknown))


def test_one_bad_event_never_hides_the_others() -> None:
    runner = ScriptedRunner(unknown={"bogus.a", "bogus.b"})
    usable, unavailable, user_only = probe_events(
        runner, ["task-clock", "bogus.a", "cycles", "bogus.b", "page-faults"], perf="perf", facts=VM
    )
    assert usable == ["task-clock", "page-faults"]
    reasons = {u.event: u.reason for u in unavailable}
    assert reasons == {
        "bogus.a": Availability.UNKNOWN_EVENT,
        "bogus.b": Availability.UNKNOWN_EVENT,
        "cycles": Availability.NOT_SUPPORTED,
    }
    assert "VM" in (unavailable[-1].hint or "")
    assert not user_only and len(runner.calls) == 3


def test_a_perf_failure_that_names_no_event_stops_the_lens_with_perfs_words() -> None:
    runner = FakeRunner().on_run(r" stat ", returncode=1, stderr="perf: broken")
    with pytest.raises(ToolUnavailableError, match="perf stat failed") as raised:
        probe_events(runner, ["task-clock", "cycles"], perf="perf", facts=VM)
    assert raised.value.detail == "perf: broken"
