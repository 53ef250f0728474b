"""`perflab history` over the 64-commit history of bench/bisect_history.py: first every fourth
commit (a sparse first look), then every commit (the next night: the sparse ones are reused),
with the instructions lens; how many commits each run measured, reused and skipped, where the
change point is, and how long each took.

Usage: .venv/bin/python bench/history_64.py [--culprit 41] [--broken 30] [--out FILE]
Writes a JSON file and prints a Markdown table.
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

from bisect_history import BUILD, make_history
from machine_facts import machine

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--culprit", type=int, default=41)
    parser.add_argument("--broken", type=int, default=30)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/history_64.json")
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory(prefix="perflab-history-") as folder:
        repo = Path(folder) / "repo"
        subjects = make_history(repo, culprit=args.culprit, broken=args.broken)
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        for every in (4, 1):
            out = Path(folder) / f"history{every}.json"
            command = [
                sys.executable, "-m", "perflab.cli.main", "history", "good..main",
                "--every", str(every), "--cmd", "./prog", "--build", BUILD,
                "--cache-dir", str(Path(folder) / "cache"),
                "--store", str(Path(folder) / "store" / "p.db"), "--json", str(out),
            ]  # fmt: skip
            started = time.monotonic()
            done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
            seconds = time.monotonic() - started
            if done.returncode != 0:
                sys.exit(f"perflab history exited with {done.returncode}:\n{done.stderr}")
            found = json.loads(out.read_text())
            runs.append(
                {
                    "every": every,
                    "points": len(found["points"]),
                    "measured_now": found["measured_now"],
                    "reused": found["reused"],
                    "skipped": sum(p["value"] is None for p in found["points"]),
                    "changes": [
                        {
                            k: c[k]
                            for k in (
                                "after_subject",
                                "series_ratio",
                                "ratio",
                                "confirmed",
                                "unmeasured_between",
                            )
                        }
                        for c in found["changes"]
                    ],  # fmt: skip
                    "wall_seconds": round(seconds, 1),
                    "load_average_after": [round(x, 2) for x in os.getloadavg()],
                }
            )
    report = {"machine": machine(), "planted": subjects[args.culprit - 1], "runs": runs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print("| --every | commits | measured now | reused | skipped | change point | wall time |")
    print("|---:|---:|---:|---:|---:|---|---:|")
    for run in runs:
        changes = "; ".join(
            f"{c['after_subject']} ({c['series_ratio']:.3f}x, "
            f"{'confirmed' if c['confirmed'] else 'not confirmed'}, "
            f"{c['unmeasured_between']} unmeasured before it)"
            for c in run["changes"]
        )
        print(
            f"| {run['every']} | {run['points']} | {run['measured_now']} | {run['reused']} | "
            f"{run['skipped']} | {changes or '-'} | {run['wall_seconds']:.0f} s |"
        )
    print(f"machine: {report['machine']['cpu']}, load {report['machine']['load_average']}")


if __name__ == "__main__":
    main()
