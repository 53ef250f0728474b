"""The machine facts the counters lens's hints depend on: a hypervisor, kernel.perf_event_paranoid
and whether perflab runs as root."""

from __future__ import annotations

import os

from perflab.lenses.counters.availability import HostFacts
from perflab.machine.host import cpu_flags, read_text


def host_facts() -> HostFacts:
    paranoid_text = read_text("/proc/sys/kernel/perf_event_paranoid")
    return HostFacts(
        hypervisor="hypervisor" in cpu_flags(read_text("/proc/cpuinfo") or ""),
        paranoid=int(paranoid_text)
        if paranoid_text and paranoid_text.lstrip("-").isdigit()
        else None,
        root=_is_root(),
    )


def _is_root() -> bool:
    return os.geteuid() == 0
