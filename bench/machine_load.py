"""A busy machine on demand, for benchmarks of perflab under load.

    with MachineLoad(seconds=3600):
        ...  # every CPU has a busy loop pinned to it, and one process copies memory

The load is bounded three ways, so no process outlives the benchmark that started it: each
load process stops by itself at its deadline, and as soon as its parent is gone (it checks its
parent pid); and leaving the `with` block (normally, by an exception, Ctrl-C or SIGTERM, which
`MachineLoad` turns into SystemExit) kills them and waits for them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from types import FrameType, TracebackType

# A busy loop that stops at its deadline or when its parent dies (re-parented: ppid changes).
_BUSY = """
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[2])})
deadline, parent = time.monotonic() + float(sys.argv[1]), os.getppid()
while time.monotonic() < deadline and os.getppid() == parent:
    for _ in range(10000):
        pass
"""

# Memory-bound: copies a buffer much larger than the last-level cache, again and again.
_MEMORY = """
import os, sys, time
deadline, parent = time.monotonic() + float(sys.argv[1]), os.getppid()
size = int(sys.argv[2]) << 20
source, target = bytearray(os.urandom(1 << 20)) * (size >> 20), bytearray(size)
while time.monotonic() < deadline and os.getppid() == parent:
    target[:] = source
"""


class MachineLoad:
    """Busy loops pinned to every CPU (or `cpus`) plus `memory_processes` memory-bound ones."""

    def __init__(
        self,
        *,
        seconds: float,
        cpus: list[int] | None = None,
        memory_processes: int = 1,
        memory_mb: int = 256,
    ) -> None:
        self.seconds = seconds
        self.cpus = sorted(os.sched_getaffinity(0)) if cpus is None else cpus
        self.memory_processes = memory_processes
        self.memory_mb = memory_mb
        self.processes: list[subprocess.Popen[bytes]] = []
        self._saved_sigterm: signal._HANDLER = None

    def __enter__(self) -> MachineLoad:
        self._saved_sigterm = signal.signal(signal.SIGTERM, _exit_on_sigterm)
        try:
            for cpu in self.cpus:
                self._start(_BUSY, str(self.seconds), str(cpu))
            for _ in range(self.memory_processes):
                self._start(_MEMORY, str(self.seconds), str(self.memory_mb))
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self, source: str, *args: str) -> None:
        self.processes.append(
            subprocess.Popen(
                [sys.executable, "-c", source, *args],
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C reaches us, and we stop them
            )
        )

    def running(self) -> int:
        return sum(p.poll() is None for p in self.processes)

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
        for process in self.processes:
            process.wait()
        self.processes.clear()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()
        signal.signal(signal.SIGTERM, self._saved_sigterm)


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def _seconds(argv: list[str]) -> float:
    """The one optional argument: how long to load the machine, in seconds (default 10)."""
    import argparse

    parser = argparse.ArgumentParser(
        description="Load every CPU (busy loops and a memory-bound process) for SECONDS."
    )
    parser.add_argument("seconds", nargs="?", type=float, default=10.0, help="default 10")
    seconds = float(parser.parse_args(argv).seconds)
    if not 0 < seconds < 7 * 24 * 3600:
        parser.error(f"SECONDS must be more than 0 and less than a week, not {seconds:g}")
    return seconds


if __name__ == "__main__":  # a quick look: load the machine for N seconds
    with MachineLoad(seconds=_seconds(sys.argv[1:])) as load:
        print(f"{load.running()} load processes on CPUs {load.cpus}", flush=True)
        time.sleep(load.seconds)
