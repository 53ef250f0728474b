"""A stack of three changes measured with the time lens: do the steps' verdicts match the
known changes, and do they multiply up to the whole range?

Builds the example repository (examples/stack/make_repo.sh: a C checksum program; step 1 reads
every other byte, step 2 adds a second pass, step 3 changes only a comment), then runs
`perflab stack base..main --metric time,instructions` N times. The instructions lens gives
the deterministic truth each time (0.56x, 1.79x, 1.00x); the time lens must agree with it
in direction and say whether the three steps multiply up to the whole.

Usage: .venv/bin/python bench/stack_time.py [--runs 3] [--budget 20] [--out FILE]
Writes a JSON file with every run and prints a Markdown summary.
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

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "stack" / "make_repo.sh"


def perflab_stack(repo: Path, cache: Path, budget: float, out: Path) -> float:
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable, "-m", "perflab.cli.main", "stack", "base..main",
            "--cmd", "./prog", "--build", "make", "--metric", "time,instructions",
            "--budget", str(budget), "--json", str(out), "--quiet",
            "--store", str(cache / "perflab.db"), "--cache-dir", str(cache),
        ],
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"perflab stack failed ({done.returncode}):\n{done.stderr}")
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "stack_time.json")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch) / "repo"
        subprocess.run([str(EXAMPLE), str(repo)], check=True, capture_output=True)
        cache = Path(scratch) / "cache"
        for run_number in range(args.runs):
            load_before = os.getloadavg()[0]
            out = Path(scratch) / f"run{run_number}.json"
            wall_s = perflab_stack(repo, cache, args.budget, out)
            document = json.loads(out.read_text())
            results.append(
                {
                    "wall_s": wall_s,
                    "load_before": load_before,
                    "load_after": os.getloadavg()[0],
                    "comparisons": [
                        {
                            k: c.get(k)
                            for k in (
                                "metric",
                                "baseline",
                                "variant",
                                "ratio",
                                "ci_low",
                                "ci_high",
                                "verdict",
                            )
                        }  # fmt: skip
                        for c in document["comparisons"]
                        if "event" not in c
                    ],
                    "stack": document["stack"],
                }
            )
    summary = {
        "cpu": cpu_model(),
        "budget_s": args.budget,
        "python": sys.version.split()[0],
        "runs": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"Machine: {summary['cpu']}, budget {args.budget:g} s per run\n")
    print("| run | load | step | instructions | time [95% CI] | time verdict |")
    print("|---|---|---|---|---|---|")
    for index, run in enumerate(results):
        by = {(c["metric"], c["baseline"], c["variant"]): c for c in run["comparisons"]}
        for metric, baseline, variant in by:
            if metric != "time":
                continue
            t = by[(metric, baseline, variant)]
            i = by.get(("instructions", baseline, variant), {})
            print(
                f"| {index + 1} | {run['load_before']:.1f} | {variant} vs {baseline} | "
                f"{i.get('ratio', float('nan')):.3f} | {t['ratio']:.3f} "
                f"[{t['ci_low']:.3f}, {t['ci_high']:.3f}] | {t['verdict']} |"
            )
        for stack in run["stack"]:
            product = stack["product"]
            print(
                f"| {index + 1} | | steps multiplied ({stack['metric']}) | | "
                f"{product['ratio']:.3f} [{product['ci_low']:.3f}, {product['ci_high']:.3f}] | "
                f"{'adds up' if stack['consistent'] else 'does not add up'} |"
            )
        print(f"| {index + 1} | | wall time of the whole command | | {run['wall_s']:.0f} s | |")


if __name__ == "__main__":
    main()
