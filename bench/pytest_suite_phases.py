"""Where a pytest-benchmark test's time goes in the time lens's fork servers.

    PYTHONPATH=src .venv/bin/python bench/pytest_suite_phases.py NODEID [--python PY]
        [--cwd DIR] [--forks 3] [--servers 3]

NODEID is a test as perflab lists it (`bench/test_primitives.py::test_unstructure_int[Converter]`),
relative to `--cwd` (the suite's root, where pytest runs). Starts `--servers` fork servers of
that test's benchmark, one after another, as the time lens does for one variant, and forks
`--forks` children from each. Prints, per server, its start-up (the interpreter, the set-up's
imports and what the plugin does once there) and per child its fork and set-up (up to the
test's benchmark(...) call), each as wall time and the process's CPU time (from /proc).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from perflab.machine.proc import SubprocessRunner
from perflab.measure.fork_server import ForkServerClient
from perflab.measure.worker_client import WorkerLaunch
from perflab.plan.pytest_suite import PytestTest
from perflab.records.model import Variant


def cpu_s(pid: int) -> float:
    """The process's user and system time, its waited-for children's included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("nodeid")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--cwd", default=".")
    parser.add_argument("--forks", type=int, default=3)
    parser.add_argument("--servers", type=int, default=3)
    args = parser.parse_args()
    path = args.nodeid.split("::")[0]
    benchmark = PytestTest(args.nodeid, path, ".").benchmark()
    variant = Variant("a", python=args.python, cwd=args.cwd)
    print(f"load average before: {Path('/proc/loadavg').read_text().strip()}")
    for round_index in range(args.servers):
        started = time.monotonic()
        server = ForkServerClient(
            SubprocessRunner(), benchmark, variant,
            WorkerLaunch(args.python, cpu=None, timeout_s=300),
        )  # fmt: skip
        try:
            print(
                f"server {round_index}: start-up {time.monotonic() - started:.3f} s wall, "
                f"{cpu_s(server.process.pid):.2f} s CPU (its imports {server.import_s:.3f} s)"
            )
            for fork_index in range(args.forks):
                forked = time.monotonic()
                with server.worker() as child:  # forked, then set up
                    ready_s = time.monotonic() - forked
                    print(
                        f"  child {fork_index}: fork and set-up {ready_s:.3f} s wall, "
                        f"{cpu_s(child.pid):.2f} s CPU"
                    )
        finally:
            server.close()
    print(f"load average after: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
