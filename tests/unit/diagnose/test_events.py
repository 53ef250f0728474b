"""Which perf events this machine counts (diagnose/events.py): a search matches every word,
each event is tried with `perf stat` until perf says why one cannot be counted, and a missing
PMU stays the reason. `perf list`'s real output is parsed in tests/golden/test_perf_list_golden.py;
perf's own messages here are captured ones (tests/golden/data/perf)."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.diagnose.events import NO_PMU, list_events, matches, try_events, with_trial
from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed, LaunchSpec
from perflab.records.checks import Countable, EventInfo
from perflab.records.errors import ToolUnavailableError

PERF = Path(__file__).parents[2] / "golden" / "data" / "perf"
UNKNOWN = (PERF / "stat_unknown_event.stderr").read_text()  # bogus.event rejected
PERMISSION = (PERF / "stat_permission.stderr").read_text()  # cycles refused


def test_a_search_matches_every_word_anywhere_in_the_event() -> None:
    event = EventInfo("fp_arith.512b", ("fp512",), "floating point", "AVX-512 packed doubles")
    assert matches(event, "512 PACKED") and matches(event, "fp512") and matches(event, "")
    assert not matches(event, "512 single")


def test_a_missing_pmu_stays_the_reason_an_event_cannot_be_counted() -> None:
    generic = EventInfo("cpu-cycles", countable=Countable.NO, reason=NO_PMU)
    assert with_trial(generic, (Countable.NO, "<not supported>")).reason == NO_PMU
    listed = EventInfo("uops_issued.any")
    assert with_trial(listed, (Countable.NO, "<not supported>")).reason == "<not supported>"
    assert with_trial(generic, (Countable.YES, None)).reason is None


def stat(replies: dict[str, Completed]) -> FakeRunner:
    """perf stat answering by the -e list it is given."""

    def answer(spec: LaunchSpec, stdin: str | None) -> Completed:
        return replies[spec.argv[spec.argv.index("-e") + 1]]

    return FakeRunner().on_run(r"^perf stat ", answer)


def test_events_are_tried_together_and_a_rejected_one_is_set_aside_with_perfs_words() -> None:
    counted = "1000,,task-clock,100,100.00,,\n<not supported>,,cycles,0,100.00,,\n"
    runner = stat(
        {
            "task-clock,bogus.event,cycles": Completed((), 129, "", UNKNOWN, 1),
            "task-clock,cycles": Completed((), 0, "", counted, 1),
        }
    )
    tried = try_events(runner, ["task-clock", "bogus.event", "cycles", "cycles"], perf="perf")
    assert tried["task-clock"] == (Countable.YES, None)
    assert tried["cycles"][0] is Countable.NO and "not supported" in str(tried["cycles"][1])
    assert tried["bogus.event"][0] is Countable.NO
    assert str(tried["bogus.event"][1]).startswith("unknown event")
    assert len(runner.calls) == 2  # the duplicate asked once


def test_without_permission_the_event_perf_names_is_refused_and_the_rest_tried() -> None:
    runner = stat(
        {
            "cycles,task-clock": Completed((), 255, "", PERMISSION, 1),
            "task-clock": Completed((), 0, "", "5,,task-clock,100,100.00,,\n", 1),
        }
    )
    tried = try_events(runner, ["cycles", "task-clock"], perf="perf")
    assert tried["cycles"][0] is Countable.NO and tried["task-clock"] == (Countable.YES, None)


def test_a_perf_list_that_fails_says_so_with_its_output() -> None:
    runner = FakeRunner().on_run(r"^perf list", returncode=1, stderr="perf: not found here")
    with pytest.raises(ToolUnavailableError, match="perf list failed") as raised:
        list_events(runner, perf="perf")
    assert raised.value.detail == "perf: not found here"
