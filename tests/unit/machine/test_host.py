"""A process's age, from its start tick and the uptime; the machine facts a run stores."""

from __future__ import annotations

import json
import os

import pytest

from perflab.machine.fake_processes import FakeRunner
from perflab.machine.host import GATHERED_FACTS, machine_facts, process_age_s
from perflab.records.run_facts import MachineInfo


def test_a_process_age_comes_from_its_start_tick_and_the_uptime() -> None:
    ticks = os.sysconf("SC_CLK_TCK")
    stat = f"4242 (a (strange) name) S 1 {' '.join(['0'] * 17)} {100 * ticks} 0 0"
    assert process_age_s(stat, "130.5 250.0") == pytest.approx(30.5)
    assert process_age_s("garbage", "1.0 1.0") is None
    age = process_age_s()  # this process
    assert age is not None and age >= 0


def test_the_machine_facts_are_a_record_written_with_every_key_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The JSON document's `machine` is a contract: every gathered key, in order, null when
    unknown, arrays as JSON arrays."""
    monkeypatch.setattr(os, "getloadavg", lambda: (1.5, 1.0, 0.5))
    runner = FakeRunner().on_run(r"^perf --version", stdout="perf version 6.1\n")
    runner.on_run(r".", returncode=1)  # the other tools are missing
    facts = machine_facts(runner, cpu=3)
    assert isinstance(facts, MachineInfo) and facts.pinned_cpu == 3
    written = facts.to_json()
    assert tuple(written) == GATHERED_FACTS
    assert written["load_average"] == [1.5, 1.0, 0.5] and isinstance(written["cpu_flags"], list)
    assert written["tools"] == {
        "perf": "perf version 6.1", "valgrind": None, "gcc": None, "objdump": None,
        "llvm-mca": None,
    }  # fmt: skip
    assert json.loads(json.dumps(written)) == written
    assert MachineInfo.from_json(written).to_json() == written
