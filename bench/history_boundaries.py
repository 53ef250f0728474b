"""A time-lens history measured in small parts on a loaded machine: the candidates found at run
boundaries on the values as measured, scaled at every shared commit, and levelled (scaled only
where the shared commit moved beyond the noise: what `history` does), from the same runs.

Makes a repository of a C loop (~6 ms) whose every commit changes a comment and whose commit
STEP_AT makes the loop 4% longer (a real step inside a run), then runs `perflab.history` with
`--metric time` through the Python API in runs of PART commits (the module's COMMITS_PER_RUN,
set here: there is no option for it), each run after the first measuring the last commit of the
run before again.

Usage: .venv/bin/python bench/history_boundaries.py [--commits 25] [--part 4] [--step-at 14]
       [--repeats 1] [--out FILE]
Writes a JSON file (one entry per repeat) and prints a Markdown table row per repeat.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from machine_facts import machine

from perflab.records.workflow_results import HistoryResult
from perflab.stats.changepoints import change_points
from perflab.workflows import Benchmarked, history

# the module, not the function `perflab.workflows.history` the package exports under its name
# (an import statement finds the function); the type checker reads the module's names
if TYPE_CHECKING:
    import perflab.workflows.history as series
else:
    series = importlib.import_module("perflab.workflows.history")
PROG_C = """/* {number} */
#include <stdio.h>
int main(void) {{
    volatile unsigned s = 0;
    for (int r = 0; r < 40; r++) for (int i = 0; i < {n}; i++) s += (unsigned)i * 7u;
    printf("%u\\n", s);
    return 0;
}}
"""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def make_repo(repo: Path, commits: int, step_at: int) -> None:
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "bench@example.invalid")
    _git(repo, "config", "user.name", "bench")
    for number in range(commits):
        n = int(500_000 * (1.04 if number >= step_at else 1.0))
        (repo / "prog.c").write_text(PROG_C.format(number=number, n=n))
        (repo / ".gitignore").write_text("prog\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"commit {number}")
        if number == 0:
            _git(repo, "tag", "good")


def _candidates(values: list[float]) -> list[int]:
    return [c.index for c in change_points(values, min_step=0.02)]


def summary(found: HistoryResult) -> dict[str, Any]:
    """The candidates of the three series and where the runs begin."""
    points = found.points
    assert all(p.value is not None for p in points), "every commit builds and runs"
    measured = [p.value or 0.0 for p in points]
    always = {points[0].run_id: 1.0}
    for s in found.run_scales:
        always[s.run_id] = always[s.against_run] * s.shared_ratio
    boundaries = [i for i in range(1, len(points)) if points[i].run_id != points[i - 1].run_id]
    found_in = {
        "as_measured": _candidates(measured),
        "always_scaled": _candidates(
            [v * always[p.run_id] for v, p in zip(measured, points, strict=True)]
        ),
        "levelled": _candidates([p.series_value or 0.0 for p in points]),
    }
    return {
        "boundaries": boundaries,
        "candidates": found_in,
        "at_boundaries": {k: [i for i in v if i in boundaries] for k, v in found_in.items()},
        "changes": [
            {
                "index": c.index,
                "series_ratio": c.series_ratio,
                "ratio": c.ratio,
                "confirmed": c.confirmed,
            }  # fmt: skip
            for c in found.changes
        ],
        "links": [
            {"run": s.run_id, "shared_ratio": s.shared_ratio, "moved": s.moved, "scale": s.scale}
            for s in found.run_scales
        ],
        "values_ns": measured,
        "notes": list(found.notes),
    }


def one(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    make_repo(folder / "repo", args.commits, args.step_at)
    bench = Benchmarked(cmd="./prog", build="cc -O1 -o prog prog.c", store_path=folder / "p.db",
                        cache_dir=folder / "cache", settings={"budget_s": 3.0})  # fmt: skip
    before = machine()["load_average"]
    started = time.monotonic()
    found = history("good..main", benchmark=bench, metric="time", repository=folder / "repo")
    return {
        **summary(found),
        "seconds": round(time.monotonic() - started, 1),
        "load_before_after": [before[0], machine()["load_average"][0]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=25)
    parser.add_argument("--part", type=int, default=4)
    parser.add_argument("--step-at", type=int, default=14)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("history_boundaries.json"))
    args = parser.parse_args()
    series.COMMITS_PER_RUN = args.part
    repeats = []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="history-boundaries-") as folder:
            repeats.append(one(Path(folder), args))
        done = repeats[-1]
        at = done["at_boundaries"]
        print(
            f"| {len(done['boundaries'])} | {at['as_measured']} | {at['always_scaled']} | "
            f"{at['levelled']} | {done['candidates']['levelled']} | "
            f"{sum(c['confirmed'] for c in done['changes'])} | "
            f"{done['load_before_after'][0]} / {done['load_before_after'][1]} |"
        )
    report = {"machine": machine(), "args": vars(args) | {"out": str(args.out)}, "runs": repeats}
    args.out.write_text(json.dumps(report, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
