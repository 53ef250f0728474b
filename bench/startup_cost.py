"""perflab's own start-up: the CPU seconds (user + system) of a `perflab` process that only asks
for help or reads a small run back, the median of --repeat runs of each. CPU time rather than wall
time: the machine is shared, and CPU time moves far less with the load (printed alongside).

    PYTHONPATH=src .venv/bin/python bench/startup_cost.py --store /tmp/startup/s.db
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

COMMANDS = (("show", "--help"), ("list",), ("show", "1"))


def _cpu_s(argv: list[str], env: dict[str, str]) -> float:
    """user + system CPU seconds of one child process, from its own rusage."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="made when missing")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    perflab = [sys.executable, "-m", "perflab.cli.main"]
    if not args.store.exists():
        args.store.parent.mkdir(parents=True, exist_ok=True)
        made = [*perflab, "run", "--stmt", "sum(range(100))", "-v", "a", "-v", "b"]
        subprocess.run([*made, "--budget", "1", "--store", str(args.store), "-q"], check=True)
    print("| command | PYTHONDONTWRITEBYTECODE | CPU s, median | runs | load before |")
    print("|---|---|---:|---|---|")
    for words in COMMANDS:
        store = [] if words[-1] == "--help" else ["--store", str(args.store)]
        for no_bytecode in (False, True):
            env = dict(os.environ)
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            if no_bytecode:
                env["PYTHONDONTWRITEBYTECODE"] = "1"
            load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
            runs = [_cpu_s([*perflab, *words, *store], env) for _ in range(args.repeat)]
            shown = " ".join(f"{run:.2f}" for run in runs)
            print(
                f"| `perflab {' '.join(words)}` | {int(no_bytecode)} | "
                f"{statistics.median(runs):.2f} | {shown} | {load} |"
            )


if __name__ == "__main__":
    main()
