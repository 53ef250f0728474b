"""`perflab events` as a user types it (docs/cli.md, "perflab events"): it searches perf's event
list and says whether each event counts here, with or without a PMU; without perf it says how to
install it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.cli_commands import perflab

needs_perf = pytest.mark.skipif(shutil.which("perf") is None, reason="needs perf")


@pytest.mark.integration
@needs_perf
def test_a_software_event_is_found_and_tried(tmp_path: Path) -> None:
    done = perflab("events", "cpu-clock", "--json", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    events = {event["name"]: event for event in json.loads(done.stdout)}
    # every perf lists its software events, PMU or not; whether it may count them depends on
    # perf_event_paranoid, and then the reason says why not
    found = events["cpu-clock"]
    assert found["kind"] == "Software event"
    assert found["countable"] == "yes" or found["reason"]


@pytest.mark.integration
@needs_perf
def test_no_try_only_searches(tmp_path: Path) -> None:
    done = perflab("events", "cpu-clock", "--no-try", "--json", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [e["countable"] for e in json.loads(done.stdout) if e["name"] == "cpu-clock"] == [
        "untried"
    ]


@pytest.mark.integration
@needs_perf
def test_the_table_and_no_match_both_answer_with_status_0(tmp_path: Path) -> None:
    table = perflab("events", "clock", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert "perf events matching 'clock'" in table.stdout
    assert "cpu-clock" in table.stdout
    none = perflab("events", "no-such-event-zq", cwd=tmp_path)
    assert none.returncode == 0, none.stderr
    assert "no perf event matches 'no-such-event-zq'" in none.stdout + none.stderr


def test_without_perf_it_says_how_to_install_it(tmp_path: Path) -> None:
    done = perflab("events", "cycles", cwd=tmp_path, env={"PATH": str(tmp_path)})
    assert done.returncode == 2
    assert "perf is not installed" in done.stderr
    assert "hint: apt-get install" in done.stderr
