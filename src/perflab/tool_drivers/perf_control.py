"""What the counters and profile lenses share: finding perf, and perf's control channel.

`perf stat` and `perf record` started with `--control fd:CTL,ACK -D -1` open their events
disabled and switch them on and off when told to on CTL, answering `ack` on ACK. The parent
sends `enable` just before the worker's timed loop and `disable` right after it (through the
worker's handshake), so only the measured region is counted or sampled. Pipes, not named FIFOs:
nothing is left in the file system and the descriptors are simply inherited by perf.
"""

from __future__ import annotations

import os
import select
from collections.abc import Sequence

from perflab.machine.proc import which
from perflab.records.errors import ToolUnavailableError

ACK_TIMEOUT_S = 10.0


def find_perf() -> str:
    path = which("perf")
    if path is None:
        raise ToolUnavailableError(
            "perf is not installed",
            hint="apt-get install linux-perf (Debian) or linux-tools-$(uname -r) (Ubuntu)",
        )
    return path


class PerfControlError(ToolUnavailableError):
    """perf did not acknowledge a control command: it died or does not support --control."""


class PerfControl:
    """One control channel for one perf process."""

    def __init__(self) -> None:
        self._ctl_read, self._ctl_write = os.pipe()
        self._ack_read, self._ack_write = os.pipe()
        self._open = {self._ctl_read, self._ctl_write, self._ack_read, self._ack_write}
        self.enabled = False

    @property
    def perf_options(self) -> tuple[str, ...]:
        """Options for perf: start disabled, obey this channel."""
        return ("--control", f"fd:{self._ctl_read},{self._ack_write}", "--delay", "-1")

    @property
    def pass_fds(self) -> Sequence[int]:
        return (self._ctl_read, self._ack_write)

    def after_spawn(self) -> None:
        """Close perf's ends in the parent: if perf dies, reads of the ack pipe see EOF."""
        self._close(self._ctl_read, self._ack_write)

    def enable(self) -> None:
        self._command("enable")
        self.enabled = True

    def disable(self) -> None:
        self._command("disable")
        self.enabled = False

    def _command(self, command: str) -> None:
        try:
            os.write(self._ctl_write, command.encode() + b"\n")
        except BrokenPipeError:
            raise PerfControlError(f"perf stopped before it could {command} its events") from None
        ready, _, _ = select.select([self._ack_read], [], [], ACK_TIMEOUT_S)
        reply = os.read(self._ack_read, 64) if ready else b""
        if not reply.startswith(b"ack"):
            raise PerfControlError(
                f"perf did not acknowledge {command!r} within {ACK_TIMEOUT_S:g} s",
                hint="perf 5.10 or later is needed for --control; check `perf --version`",
            )

    def close(self) -> None:
        self._close(*tuple(self._open))

    def _close(self, *fds: int) -> None:
        # never close a number twice: by then it may belong to another file
        for fd in fds:
            if fd in self._open:
                self._open.discard(fd)
                os.close(fd)
