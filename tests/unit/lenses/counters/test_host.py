"""The machine facts the counters lens's hints depend on, read from this machine's /proc."""

from __future__ import annotations

import os

from perflab.lenses.counters.host import host_facts
from perflab.machine.host import cpu_flags, read_text

SUBJECT = "perflab.lenses.counters.host"


def test_the_facts_are_this_machines() -> None:
    facts = host_facts()
    assert facts.root == (os.geteuid() == 0)
    assert facts.hypervisor == ("hypervisor" in cpu_flags(read_text("/proc/cpuinfo") or ""))
    paranoid = read_text("/proc/sys/kernel/perf_event_paranoid")
    assert facts.paranoid == (int(paranoid) if paranoid is not None else None)
