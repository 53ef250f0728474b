"""Which process owns a running run, so a run whose process died (SIGKILL, a full disk, a power
cut) can be told from one still measuring.

A pid alone is not enough: pids are reused. The process's start time (field 22 of
/proc/PID/stat, in clock ticks since boot) and the boot id make the identity exact; the host name
keeps a store shared between machines from declaring another machine's runs dead.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def _start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after its last ')'
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(fields[19])  # field 22 overall; fields[0] is field 3
    except (IndexError, ValueError):
        return None


def _boot_id() -> str | None:
    try:
        return _BOOT_ID.read_text().strip() or None
    except OSError:
        return None


@dataclass(frozen=True)
class ProcessIdentity:
    """A process, exactly: its pid, its start time and the boot and host it runs on (pids are
    reused)."""

    pid: int
    start_ticks: int | None
    boot_id: str | None
    host: str

    @classmethod
    def current(cls) -> ProcessIdentity:
        pid = os.getpid()
        return cls(pid, _start_ticks(pid), _boot_id(), socket.gethostname())

    def is_alive(self) -> bool | None:
        """True or False when this machine can tell; None for another host's process."""
        if self.host != socket.gethostname():
            return None
        boot_id = _boot_id()
        if self.boot_id is not None and boot_id is not None and self.boot_id != boot_id:
            return False  # the machine rebooted since
        ticks = _start_ticks(self.pid)
        if ticks is None:
            return False
        return self.start_ticks is None or ticks == self.start_ticks
