"""`perflab history --metric instructions` over a synthetic N-commit history: wall time, CPU
seconds per commit, and the peak RSS of perflab's own process apart from its children's
(builds, valgrind, the benchmark).

Makes a repository of a tiny C program whose every commit changes its tree (a comment) and
every twentieth doubles the loop bound or halves it back (so a long history's commits cost alike
and every twentieth is a change point), then runs the history from the command line with an empty
build cache and store. perflab runs inside a small wrapper process that records, when it
exits, `getrusage` of itself (perflab's own peak RSS and CPU time) and of its children.

Usage: .venv/bin/python bench/history_scale.py [--commits 60] [--out FILE]
Writes a JSON file and prints a Markdown table row.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine_facts import machine

ROOT = Path(__file__).resolve().parents[1]
BUILD = "cc -O1 -o prog prog.c"
PROG_C = """#include <stdio.h>
#include "work.h"
int main(void) {
    volatile unsigned s = 0;
    for (int i = 0; i < N; i++) s += (unsigned)i * 7u;
    printf("%u\\n", s);
    return 0;
}
"""
# Runs perflab's command line in this process and writes this process's own rusage and its
# children's to the file named by the first argument when it exits (whatever the exit status).
WRAPPER = """
import atexit, json, resource, runpy, sys
out = sys.argv.pop(1)
def record():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as f:
        json.dump({"own_maxrss_kib": own.ru_maxrss, "own_cpu_s": own.ru_utime + own.ru_stime,
                   "children_maxrss_kib": kids.ru_maxrss,
                   "children_cpu_s": kids.ru_utime + kids.ru_stime}, f)
atexit.register(record)
sys.argv[0] = "perflab"
runpy.run_module("perflab.cli.main", run_name="__main__")
"""


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def make_history(repo: Path, commits: int) -> None:
    """A tagged base `good`, then `commits` commits, each a new tree."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "prog.c").write_text(PROG_C)
    (repo / ".gitignore").write_text("prog\n")
    for number in range(commits + 1):
        # doubled in odd blocks of twenty only: doubling on and on made a 500-commit history's
        # last commits cost thousands of times its first (the run stopped at 313 of 500, 2026-11-29)
        n = 20000 * (2 if (number // 20) % 2 else 1)
        (repo / "work.h").write_text(f"/* commit {number} */\n#define N {n}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"commit {number}")
        if number == 0:
            git(repo, "tag", "good")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=60, help="commits after the base")
    parser.add_argument("--out", type=Path, default=None, help="JSON file (default: printed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="perflab-history-scale-") as folder:
        repo = Path(folder) / "repo"
        make_history(repo, args.commits)
        usage = Path(folder) / "usage.json"
        out = Path(folder) / "history.json"
        command = [
            sys.executable, "-c", WRAPPER, str(usage), "history", "good..main",
            "--metric", "instructions", "--cmd", "./prog", "--build", BUILD,
            "--cache-dir", str(Path(folder) / "cache"),
            "--store", str(Path(folder) / "store" / "p.db"), "--json", str(out),
        ]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        load_before = os.getloadavg()
        started = time.monotonic()
        done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
        seconds = time.monotonic() - started
        if done.returncode != 0:
            sys.exit(f"perflab history exited with {done.returncode}:\n{done.stderr}")
        rusage = json.loads(usage.read_text())
        found = json.loads(out.read_text())
    points = len(found["points"])
    report = {
        "machine": machine(),
        "commits": points,
        "measured_now": found["measured_now"],
        "changes": len(found["changes"]),
        "wall_seconds": round(seconds, 1),
        "wall_seconds_per_commit": round(seconds / points, 2),
        "own_peak_rss_mib": round(rusage["own_maxrss_kib"] / 1024, 1),
        "own_cpu_seconds": round(rusage["own_cpu_s"], 1),
        "own_cpu_seconds_per_commit": round(rusage["own_cpu_s"] / points, 3),
        "children_peak_rss_mib": round(rusage["children_maxrss_kib"] / 1024, 1),
        "children_cpu_seconds": round(rusage["children_cpu_s"], 1),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }
    text = json.dumps(report, indent=2) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(text)
    print(
        "| commits | wall | wall/commit | perflab CPU (/commit) | children CPU | "
        "perflab peak RSS | children peak RSS | load before/after |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---|")
    print(
        f"| {points} | {seconds:.0f} s | {seconds / points:.2f} s | "
        f"{report['own_cpu_seconds']} s ({report['own_cpu_seconds_per_commit']} s) | "
        f"{report['children_cpu_seconds']} s | {report['own_peak_rss_mib']} MiB | "
        f"{report['children_peak_rss_mib']} MiB | {load_before[0]:.1f} / "
        f"{report['load_average_after'][0]:.1f} |"
    )


if __name__ == "__main__":
    main()
