"""The order the suite's files run in: the costliest first. pytest-xdist (`--dist loadfile`)
hands each idle worker the next file of the collection, so the files started last are short
ones and the workers finish together, instead of one worker running the slowest files alone
while the other waits. The costs are the seconds each file kept a worker busy in a measured run
(`tests/file_costs.json`); `pytest --write-file-costs PATH` measures them again."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pytest

COSTS_PATH = Path(__file__).parents[1] / "file_costs.json"


def file_of(nodeid: str) -> str:
    """The file a test's node id names: its scope under `--dist loadfile`."""
    return nodeid.split("::", 1)[0]


def read_costs(path: Path = COSTS_PATH) -> dict[str, float]:
    """Seconds per test file, as measured; empty when the file is missing."""
    if not path.is_file():
        return {}
    return {name: float(seconds) for name, seconds in json.loads(path.read_text()).items()}


def estimated_costs_s(tests_by_file: dict[str, int], known_s: dict[str, float]) -> dict[str, float]:
    """Each file's measured cost; a file not measured yet is costed as its tests times the mean
    cost of a test in its folder's measured files (a new CLI test is slow, a new unit test not)."""
    seconds_by_folder: dict[str, float] = defaultdict(float)
    tests_by_folder: dict[str, int] = defaultdict(int)
    for name, tests in tests_by_file.items():
        if name in known_s:
            folder = name.rsplit("/", 1)[0]
            seconds_by_folder[folder] += known_s[name]
            tests_by_folder[folder] += tests
    mean_s = sum(seconds_by_folder.values()) / max(1, sum(tests_by_folder.values()))
    costs = {}
    for name, tests in tests_by_file.items():
        folder = name.rsplit("/", 1)[0]
        per_test_s = (
            seconds_by_folder[folder] / tests_by_folder[folder]
            if tests_by_folder[folder]
            else mean_s
        )
        costs[name] = known_s.get(name, tests * per_test_s)
    return costs


def costliest_files_first(
    items: list[pytest.Item], known_s: dict[str, float] | None = None
) -> list[pytest.Item]:
    """The items grouped by file, the costliest file first; within a file, and between files of
    one cost, the collection's order (the same on every worker, as xdist requires)."""
    by_file: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        by_file[file_of(item.nodeid)].append(item)
    costs = estimated_costs_s(
        {name: len(tests) for name, tests in by_file.items()},
        read_costs() if known_s is None else known_s,
    )
    ordered = sorted(by_file, key=lambda name: -costs[name])  # stable: ties keep their order
    return [item for name in ordered for item in by_file[name]]


def seconds_by_file(reports: Iterable[pytest.TestReport]) -> dict[str, float]:
    """The seconds each file's tests took, set-up and teardown included (a module fixture's
    cost lands on the file that builds it), rounded to tenths."""
    seconds: dict[str, float] = defaultdict(float)
    for report in reports:
        seconds[file_of(report.nodeid)] += report.duration
    return {name: round(seconds[name], 1) for name in sorted(seconds)}


class FileCostsWriter:
    """A plugin: keeps every test's reports and writes `seconds_by_file` to `path` (JSON) when
    the session ends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.reports: list[pytest.TestReport] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.reports.append(report)

    def pytest_sessionfinish(self) -> None:
        self.path.write_text(json.dumps(seconds_by_file(self.reports), indent=1) + "\n")
