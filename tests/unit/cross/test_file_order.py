"""The suite runs its costliest files first (tests/support/file_order.py), so pytest-xdist's workers
finish together."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.support.file_order import (
    COSTS_PATH,
    costliest_files_first,
    estimated_costs_s,
    read_costs,
)

ROOT = Path(__file__).resolve().parents[3]


def _items(*nodeids: str) -> list[Any]:
    return [SimpleNamespace(nodeid=nodeid) for nodeid in nodeids]


def test_files_run_costliest_first_and_each_file_stays_whole_in_its_order() -> None:
    items = _items("a/t1.py::x", "a/t2.py::y", "a/t1.py::z", "a/t3.py::w", "a/t2.py::v")
    ordered = costliest_files_first(items, {"a/t1.py": 1.0, "a/t2.py": 9.0, "a/t3.py": 1.0})
    assert [item.nodeid for item in ordered] == [
        "a/t2.py::y", "a/t2.py::v", "a/t1.py::x", "a/t1.py::z", "a/t3.py::w",
    ]  # fmt: skip


def test_a_file_not_measured_costs_its_tests_at_its_folders_rate() -> None:
    known = {"cli/a.py": 30.0, "cli/b.py": 10.0, "unit/c.py": 2.0}
    tests = {"cli/a.py": 2, "cli/b.py": 2, "unit/c.py": 20, "cli/new.py": 3, "other/new.py": 2}
    costs = estimated_costs_s(tests, known)
    assert costs["cli/new.py"] == 3 * 40.0 / 4
    assert costs["other/new.py"] == 2 * 42.0 / 24  # no folder measured: the suite's rate
    assert costs["unit/c.py"] == 2.0


def test_every_measured_file_is_in_the_suite() -> None:
    stale = [name for name in read_costs(COSTS_PATH) if not (ROOT / name).is_file()]
    assert not stale, f"{COSTS_PATH.name} names files that are gone: {stale}"
