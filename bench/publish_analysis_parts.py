"""What a site-only analysis of a history run could save: one run of `bench/publish_scale.py`'s
store (a history run of consecutive commits, the time lens) analysed whole by perflab, then with
the forecast of "~N s more" left out, then with only what a trend point needs (each pair's
estimate, interval, verdict and values: no forecast, no per-variant measurements, no noise or
preemption notes, no scatter series), and perflab's own figures-only analysis (`run_figures`,
which `perflab publish` reads). The parts are left out by replacing the time lens's functions
in this process, for the measurement only; the script checks that every comparison's figures
are the same to the bit. Prints CPU seconds (the best of --repeat).

Usage: python bench/publish_analysis_parts.py [--benchmarks 10] [--commits 50] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from machine_facts import machine
from publish_scale import commits, write_run

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import perflab.lenses.time.analyse as time_analyse  # noqa: E402
from perflab.analyse.run import analyse_run, run_figures  # noqa: E402
from perflab.records.model import Comparison  # noqa: E402
from perflab.records.results import RunResult  # noqa: E402
from perflab.store import SqliteStore, StoredRun  # noqa: E402


def best_figures_cpu(run: StoredRun, repeat: int) -> tuple[float, tuple[Comparison, ...]]:
    """perflab's own figures-only analysis (what `perflab publish` reads for its trends)."""
    seconds, found = [], run_figures(run)
    for _ in range(repeat):
        started = time.process_time()
        found = run_figures(run)
        seconds.append(time.process_time() - started)
    return min(seconds), found


def best_cpu(run: StoredRun, repeat: int) -> tuple[float, RunResult]:
    seconds, result = [], analyse_run(run)
    for _ in range(repeat):
        started = time.process_time()
        result = analyse_run(run)
        seconds.append(time.process_time() - started)
    return min(seconds), result


def figures(result: RunResult | tuple[Comparison, ...]) -> list[tuple[Any, ...]]:
    found = result if isinstance(result, tuple) else result.comparisons
    return [
        (c.benchmark, c.baseline, c.variant, c.ratio, c.ci_low, c.ci_high, c.verdict,
         c.baseline_value, c.variant_value)
        for c in found
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmarks", type=int, default=10)
    parser.add_argument("--commits", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="perflab-parts-") as folder:
        store = SqliteStore.open(Path(folder) / "p.db")
        try:
            run_id = write_run(store, args.benchmarks, commits(args.commits), 0, args.commits, 0)
            run = store.load_run(run_id)
        finally:
            store.close()
    whole, full = best_cpu(run, args.repeat)
    own, own_figures = best_figures_cpu(run, args.repeat)
    time_analyse.seconds_to_decide = lambda *a, **k: None
    time_analyse.seconds_to_decide_under_load = lambda *a, **k: None
    no_forecast, without = best_cpu(run, args.repeat)
    time_analyse.own_time = lambda *a, **k: None
    time_analyse.noise_notes = lambda *a, **k: []
    time_analyse.preemption_notes = lambda *a, **k: []
    time_analyse.time_series = lambda *a, **k: ()
    figures_only, least = best_cpu(run, args.repeat)
    same = figures(full) == figures(without) == figures(least) == figures(own_figures)
    n = len(full.comparisons)
    print(f"{args.benchmarks} benchmarks x {args.commits} commits, one run: {n} comparisons; "
          f"{machine()}")  # fmt: skip
    print("| analysis | CPU s | ms per comparison |")
    print("|---|---:|---:|")
    for label, seconds in (("whole", whole), ("without the forecast", no_forecast),
                           ("what a trend point needs", figures_only),
                           ("perflab's figures-only analysis (run_figures)", own)):  # fmt: skip
        print(f"| {label} | {seconds:.2f} | {1000 * seconds / n:.2f} |")
    print(f"figures the same to the bit: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
