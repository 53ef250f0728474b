"""Fault tests run perflab as a user would (a real store, real processes) and record, per test,
what bench/reliability_table.py turns into docs/reliability.md: the case (the test's docstring),
the outcome, the samples kept and the processes left behind.

Every test here runs with a unique tag in its environment, which every process it starts
inherits (perflab, its workers, the benchmark's own children, reparented orphans alike): after
the test, any process still carrying the tag was left behind. It is counted, then killed, so one
test's leftovers never disturb the next.

Set PERFLAB_FAULT_REPORT=PATH to have the records written there as JSON at the end.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from tests.support.store_rows import samples_in_stores
from tests.support.tagged_processes import TAG_VARIABLE, Fault, processes_left

REPORT_VARIABLE = "PERFLAB_FAULT_REPORT"


@dataclass
class FaultRecord:
    test: str
    case: str
    outcome: str = "not run"
    samples_kept: int | None = None
    processes_left: int | None = None


_RECORDS: dict[str, FaultRecord] = {}


@pytest.fixture(autouse=True)
def fault(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[Fault]:
    tag = uuid.uuid4().hex
    monkeypatch.setenv(TAG_VARIABLE, tag)
    recorder = Fault(tag)
    yield recorder
    left = processes_left(tag)  # and killed: no test leaves anything running on the machine
    record = _RECORDS.get(request.node.nodeid)
    if record is not None:
        record.processes_left = len(left)
        record.samples_kept = (
            recorder.samples_kept
            if recorder.samples_kept is not None
            else samples_in_stores(tmp_path)
        )


def pytest_runtest_setup(item: pytest.Item) -> None:
    doc = getattr(getattr(item, "function", None), "__doc__", None) or item.name
    case = " ".join(doc.split())
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        case += f" [{callspec.id}]"
    _RECORDS[item.nodeid] = FaultRecord(test=item.nodeid, case=case)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    record = _RECORDS.get(item.nodeid)
    if record is None:
        return
    if report.when == "setup" and report.skipped:
        record.outcome = "skipped"
    elif report.when == "call":
        record.outcome = "skipped" if report.skipped else report.outcome
    elif report.when == "teardown" and report.failed:
        record.outcome = "failed"


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get(REPORT_VARIABLE)
    if target:
        Path(target).write_text(json.dumps([asdict(r) for r in _RECORDS.values()], indent=2) + "\n")
