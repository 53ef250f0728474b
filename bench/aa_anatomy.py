"""Why did an A/A claim a difference? The anatomy of stored time-lens runs of identical code.

Reads the stores `bench/time_precision.py --keep-stores DIR` leaves (one run per `*.db`) and, per
run, shows what the time lens's interval rests on (docs/statistics.md, "The statistics"):

  * generations, pairs per generation, the SD of the generation medians (what the t interval is
    over) and the median within-generation SD of the pairs' log ratios (the machine's noise);
  * the lag-1 autocorrelation of the generation medians: the t interval assumes independent
    units, and a persistent phase of the machine spanning generations would show here (about
    -1/n is what independent units give);
  * the order effect: the median log ratio of the pairs whose baseline sample ran first, and of
    those whose variant ran first (the schedule alternates; a position effect would split them);
  * the interval and verdict with three per-generation centres: the median (what perflab uses),
    a 25% trimmed mean and the mean, with the same t interval over generations and band.

Usage: .venv/bin/python bench/aa_anatomy.py DIR [--glob 'p*.db']
(time_precision.py names its perflab tries p0.db, p1.db ...; run it with --ab 0 so that they
are all A/As.)
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from scipy import stats

from perflab.stats.comparison import verdict_for
from perflab.stats.paired import kept_pairs
from perflab.stats.preemption import Preemption
from perflab.store import SqliteStore

CENTRES: dict[str, Callable[[Sequence[float]], float]] = {
    "median": lambda values: float(np.median(values)),
    "trimmed 25%": lambda values: float(stats.trim_mean(values, 0.25)),
    "mean": lambda values: float(np.mean(values)),
}


def interval(values: Sequence[float], confidence: float) -> tuple[float, float, float]:
    """(ratio, low, high) of the t interval over `values` (log ratios)."""
    centre = float(np.mean(values))
    half = stats.t.ppf(0.5 + confidence / 2, len(values) - 1) * np.std(values, ddof=1)
    half /= math.sqrt(len(values))
    return math.exp(centre), math.exp(centre - half), math.exp(centre + half)


def anatomy(path: Path) -> dict[str, str]:
    """One run's row: what its interval rests on, and its verdict under each centre."""
    opened = SqliteStore.open(path, create=False)
    try:
        run = opened.load_run("latest")
    finally:
        opened.close()
    settings = run.experiment.settings
    baseline_name, variant_name = (variant.name for variant in run.experiment.variants[:2])
    time_samples = [sample for sample in run.samples if sample.name == "wall_ns"]
    pairs = kept_pairs(
        [sample for sample in time_samples if sample.variant == baseline_name],
        [sample for sample in time_samples if sample.variant == variant_name],
        preemption=Preemption(settings.preempted),
    )
    by_generation: dict[int, list[float]] = defaultdict(list)
    baseline_first: list[float] = []
    variant_first: list[float] = []
    for group, sample, partner in pairs:
        log_ratio = math.log(sample.per_iteration / partner.per_iteration)
        by_generation[group].append(log_ratio)
        (baseline_first if partner.position < sample.position else variant_first).append(log_ratio)
    medians = np.array([np.median(values) for _, values in sorted(by_generation.items())])
    deviations = medians - medians.mean()
    lag1 = float((deviations[:-1] * deviations[1:]).sum() / (deviations**2).sum())
    within_sd = statistics.median(
        float(np.std(values, ddof=1)) for values in by_generation.values() if len(values) > 1
    )
    order = f"{np.median(baseline_first):+.2%} / {np.median(variant_first):+.2%}"
    row = {
        "run": path.name,
        "generations": str(len(medians)),
        "pairs/gen": f"{statistics.median(len(v) for v in by_generation.values()):.0f}",
        "SD of gen medians": f"{np.std(medians, ddof=1):.2%}",
        "SD within gen": f"{within_sd:.1%}",
        "lag-1": f"{lag1:+.2f}",
        "order (base first / variant first)": order,
    }
    for name, centre in CENTRES.items():
        values = [centre(v) for _, v in sorted(by_generation.items())]
        ratio, low, high = interval(values, settings.confidence)
        verdict = verdict_for(low, high, settings.equivalence_band)
        row[name] = f"{ratio:.4f} [{low:.4f}, {high:.4f}] {verdict}"
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", type=Path, help="a directory of stores, one run each")
    parser.add_argument("--glob", default="p*.db", help="which stores in it (p*.db)")
    args = parser.parse_args()
    rows = [anatomy(path) for path in sorted(args.stores.glob(args.glob))]
    if not rows:
        raise SystemExit(f"no store matching {args.glob} in {args.stores}")
    header = list(rows[0])
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row[key] for key in header) + " |")
    print()
    for name in CENTRES:
        verdicts = [row[name].rsplit(" ", 1)[1] for row in rows]
        claims = sum(verdict in ("slower", "faster") for verdict in verdicts)
        print(
            f"{name}: {verdicts.count('equivalent')} of {len(rows)} equivalent, "
            f"{claims} claimed a difference"
        )
    lags = [float(row["lag-1"]) for row in rows]
    generations = statistics.mean(int(row["generations"]) for row in rows)
    print(
        f"mean lag-1 autocorrelation {statistics.mean(lags):+.2f} "
        f"(independent units: about {-1 / generations:+.2f})"
    )


if __name__ == "__main__":
    main()
