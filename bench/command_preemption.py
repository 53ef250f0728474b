"""How often short commands count as preempted, and what their run-queue wait is made of.

    .venv/bin/python bench/command_preemption.py [--samples 30] [--cpu N] [--out FILE]

Runs a C loop (built with cc -O1, about 5 and 12 ms), a `python3 -S -c` loop and a shell loop
through perflab's command launcher pinned to `--cpu` (default: the least busy CPU, found by a
0.1 s busy probe on each), and prints for each program the median wall time, the median
run-queue wait of the command's process (all of it), the launcher's CPU time while the command
ran, the wait left for other processes (perflab.measure.commands.waited_for_others_ns), and how
many samples count as preempted (perflab.stats.preemption.is_preempted) with the whole wait and
with what is left. Also the probe's share before and after: how busy the CPU was.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perflab.machine.proc import SubprocessRunner
from perflab.measure.commands import CommandLauncher, CommandRun
from perflab.records.kinds import Metric
from perflab.records.model import Sample
from perflab.stats.preemption import is_preempted

C_LOOP = "int main(void) { volatile long s = 0; for (long i = 0; i < N; i++) s += i; return 0; }"


def probe_lost_share(cpu: int, duration_s: float = 0.1) -> float:
    """The share of a busy loop pinned to `cpu` that other processes took."""
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        before = _queued_ns()
        start = time.perf_counter()
        while time.perf_counter() - start < duration_s:
            pass
        return (_queued_ns() - before) / ((time.perf_counter() - start) * 1e9)
    finally:
        os.sched_setaffinity(0, allowed)


def _queued_ns() -> int:
    with open("/proc/thread-self/schedstat") as stat:
        return int(stat.read().split()[1])


def programs(folder: Path) -> dict[str, tuple[str, ...]]:
    compiler = shutil.which("cc") or shutil.which("gcc")
    found: dict[str, tuple[str, ...]] = {}
    if compiler is not None:
        (folder / "loop.c").write_text(C_LOOP)
        for name, n in (("c ~5 ms", "8000000L"), ("c ~12 ms", "20000000L")):
            binary = folder / f"loop{n}"
            subprocess.run([compiler, "-O1", f"-DN={n}", "-o", str(binary), str(folder / "loop.c")],
                           check=True)  # fmt: skip
            found[name] = (str(binary),)
    found["python -c"] = (sys.executable, "-S", "-c", "for i in range(20000): pass")
    found["sh loop"] = ("/bin/sh", "-c", "i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done")
    return found


def _preempted(run: CommandRun, waited_ns: int | None) -> bool:
    sample = Sample("b", "A", Metric.TIME, "wall_ns", run.wall_ns, run_queue_ns=waited_ns,
                    cpu_ns=run.user_ns + run.sys_ns)  # fmt: skip
    return is_preempted(sample)


def measure(argv: tuple[str, ...], cpu: int, samples: int) -> dict[str, float]:
    with CommandLauncher(SubprocessRunner(), cpu=cpu) as launcher:
        runs = [
            launcher.run(argv, env=dict(os.environ), cwd=None, timeout_s=60)
            for _ in range(samples + 2)
        ][2:]

    def median_us(values: list[int | None]) -> float:
        return round(statistics.median(v or 0 for v in values) / 1e3, 1)

    return {
        "wall_ms": round(statistics.median(r.wall_ns for r in runs) / 1e6, 2),
        "queued_us": median_us([r.queued_ns for r in runs]),
        "launcher_us": median_us([r.launcher_cpu_ns for r in runs]),
        "others_us": median_us([r.run_queue_ns for r in runs]),
        "preempted_whole_wait": sum(_preempted(r, r.queued_ns) for r in runs) / len(runs),
        "preempted_others": sum(_preempted(r, r.run_queue_ns) for r in runs) / len(runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--cpu", type=int)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    cpu = args.cpu
    if cpu is None:
        cpu = min(cpus, key=probe_lost_share)
    report: dict[str, object] = {
        "cpu": cpu,
        "load": os.getloadavg()[0],
        "probe_before": round(probe_lost_share(cpu), 4),
    }
    with tempfile.TemporaryDirectory() as folder:
        results = {name: measure(argv, cpu, args.samples) for name, argv in
                   programs(Path(folder)).items()}  # fmt: skip
    report["probe_after"] = round(probe_lost_share(cpu), 4)
    report["programs"] = results
    text = json.dumps(report, indent=1)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
