"""A stack of identical steps: does any comparison of a run claim a difference?

Builds a small git repository (a C checksum program, as examples/stack/make_repo.sh) whose four
commits after `base` change only a comment: every step's binary is byte-identical to its
parent's. `perflab stack base..main --cmd ./prog --build make --metric time` then makes five
comparisons per run (four steps and the whole range). Any `faster` or `slower` is a false claim.
Every run is analysed twice from its stored samples: as perflab reports it (the five decided
together, stats.family), and with each comparison decided alone at 95% (as before).

Usage: .venv/bin/python bench/stack_identical.py [--runs 20] [--budget 20] [--out FILE]
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

from machine_facts import cpu_model

PROGRAM = r"""#include <stdio.h>
#include <string.h>
#define N 4000000
static unsigned char buffer[N];
static unsigned checksum(const unsigned char *p, int n) {
    unsigned s = 0;
    for (int i = 0; i < n; i++) s = s * 31 + p[i];
    return s;
}
int main(void) {
    memset(buffer, 7, sizeof buffer);
    printf("%u\n", checksum(buffer, N));
    return 0;
}
"""


def make_repo(path: Path, steps: int) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)

    path.mkdir()
    git("init", "-q", "-b", "main")
    git("config", "user.name", "bench")
    git("config", "user.email", "bench@example.com")
    (path / "Makefile").write_text("prog: prog.c\n\tcc -O1 -o prog prog.c\n")
    (path / "prog.c").write_text(PROGRAM)
    (path / ".gitignore").write_text("prog\n")
    git("add", "-A")
    git("commit", "-q", "-m", "checksum a buffer")
    git("tag", "base")
    for step in range(1, steps + 1):
        source = (path / "prog.c").read_text()
        (path / "prog.c").write_text(source + f"/* comment {step} */\n")
        git("commit", "-q", "-am", f"a comment ({step})")


def run_stack(repo: Path, cache: Path, budget: float, out: Path) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable, "-m", "perflab.cli.main", "stack", "base..main",
            "--cmd", "./prog", "--build", "make", "--metric", "time",
            "--budget", str(budget), "--json", str(out), "--quiet",
            "--store", str(cache / "perflab.db"), "--cache-dir", str(cache),
        ],
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return time.monotonic() - started, done.stderr[-2000:] if done.returncode else ""


def each_alone(store: Path) -> list[dict]:
    """The latest stored run's comparisons, each decided alone at the run's confidence."""
    from perflab.lenses.time.analyse import analyse_time
    from perflab.records.kinds import Metric
    from perflab.store import SqliteStore

    opened = SqliteStore.open(store, create=False)
    try:
        run = opened.load_run("latest")
    finally:
        opened.close()
    experiment = run.experiment
    out = []
    for benchmark in experiment.benchmarks:
        data = run.data_for(benchmark.name, Metric.TIME)
        for baseline, variant in experiment.comparison_pairs:
            analysis = analyse_time(
                benchmark, [baseline, variant], data, experiment.settings, family=1
            )
            for c in analysis.comparisons:
                out.append(_row(c.to_json()))
    return out


def _row(c: dict) -> dict:
    keys = ("baseline", "variant", "ratio", "ci_low", "ci_high", "verdict", "confidence")
    return {k: c.get(k) for k in keys}


def _claims(rows: list[dict]) -> int:
    return sum(r["verdict"] in ("faster", "slower") for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument("--out", type=Path, default=Path("bench/results/stack_identical.json"))
    args = parser.parse_args()
    results = []
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch) / "repo"
        make_repo(repo, args.steps)
        for k in range(args.runs):
            cache = Path(scratch) / f"cache{k}"
            cache.mkdir()
            out = Path(scratch) / f"run{k}.json"
            load_before = os.getloadavg()[0]
            wall_s, failed = run_stack(repo, cache, args.budget, out)
            entry: dict = {"wall_s": wall_s, "load_before": load_before,
                           "load_after": os.getloadavg()[0]}  # fmt: skip
            if failed:
                entry["failed"] = failed
            else:
                document = json.loads(out.read_text())
                entry["together"] = [_row(c) for c in document["comparisons"]]
                entry["alone"] = each_alone(cache / "perflab.db")
            results.append(entry)
            print(k, {key: _claims(entry[key]) for key in ("together", "alone") if key in entry},
                  flush=True)  # fmt: skip
    done = [r for r in results if "together" in r]
    summary = {
        "runs": len(done),
        "failed": len(results) - len(done),
        "runs_with_a_false_claim_together": sum(_claims(r["together"]) > 0 for r in done),
        "runs_with_a_false_claim_alone": sum(_claims(r["alone"]) > 0 for r in done),
        "false_claims_together": sum(_claims(r["together"]) for r in done),
        "false_claims_alone": sum(_claims(r["alone"]) for r in done),
        "equivalent_together": sum(
            c["verdict"] == "equivalent" for r in done for c in r["together"]
        ),
        "comparisons": sum(len(r["together"]) for r in done),
    }
    document = {
        "cpu_model": cpu_model(),
        "started": started,
        "finished": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "command": "bench/stack_identical.py " + " ".join(sys.argv[1:]),
        "summary": summary,
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
