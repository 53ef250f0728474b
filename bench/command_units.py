"""What is the unit of a command comparison's interval? Autocorrelation of its paired log ratios.

    PYTHONPATH=src .venv/bin/python bench/command_units.py STORE.db [STORE.db ...]

For each stored command run (measured for its whole budget: `--precision 0.00001`), the time
lens's pairs (one per block: the two runs next to each other, preempted time taken out) are read
in block order, and printed are:

- the autocorrelation of the block log ratios at lags 1-4: ABBA alternation with an effect of
  the position in a block (the second run of a block faster, say) shows as a negative lag 1;
  slow machine states that move the *ratio* show as positive lags;
- the variance ratio of batch means: var(mean of k consecutive blocks) * k / var(one block),
  for k = 1, 2, 4, 8, 16. Independent blocks give 1 at every k (relative to k = 2, which
  cancels the position effect); a ratio growing with k means consecutive batches are
  correlated, and the unit of the interval must be longer.

With --json FILE the figures are written there too.

    PYTHONPATH=src .venv/bin/python bench/command_units.py --estimators RESULTS.json STORES CASE

compares, on the stores `bench/command_precision.py --keep-stores STORES` kept (RESULTS.json
names each try's kind), the interval over units of half, once and twice the length the run
used: the units' mean with its t interval, and the 20%-trimmed mean (stats.trimmed): false
A/A claims, the median A/A half-width, and 3% A/Bs found (`slower`).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from perflab.lenses.time.artifacts import KIND_COMMAND_UNITS
from perflab.records.kinds import Verdict
from perflab.stats.comparison import verdict_for
from perflab.stats.paired import RatioEstimate, estimate_ratio, pair_samples
from perflab.stats.preemption import Preemption
from perflab.stats.trimmed import trimmed_ratio
from perflab.store import SqliteStore

LAGS = (1, 2, 3, 4)
BATCHES = (1, 2, 4, 8, 16)


def block_log_ratios(path: Path) -> tuple[list[float], dict[str, object]]:
    opened = SqliteStore.open(path, create=False)
    try:
        run = opened.load_run("latest")
    finally:
        opened.close()
    names = [v.name for v in run.experiment.variants]
    samples = [s for s in run.samples if s.name == "wall_ns"]
    pairs = pair_samples(
        [s for s in samples if s.variant == names[0]],
        [s for s in samples if s.variant == names[1]],
        batch_blocks=1,
        preemption=Preemption.CORRECT,
    )
    pairs.sort(key=lambda p: p.block)
    wall = [s.value for s in samples if not s.warmup]
    facts: dict[str, object] = {"blocks": len(pairs), "median_run_ms": float(np.median(wall)) / 1e6}
    return [p.log_ratio for p in pairs], facts


def _estimates(path: Path, scale: float) -> tuple[RatioEstimate, RatioEstimate]:
    """The mean's and the trimmed mean's estimate of one stored run, with units `scale` times
    as long as it used."""
    opened = SqliteStore.open(path, create=False)
    try:
        run = opened.load_run("latest")
    finally:
        opened.close()
    names = [v.name for v in run.experiment.variants]
    used = next(
        json.loads(a.content)["blocks_per_unit"]
        for a in run.artifacts
        if a.kind == KIND_COMMAND_UNITS
    )
    samples = [s for s in run.samples if s.name == "wall_ns"]
    pairs = pair_samples(
        [s for s in samples if s.variant == names[0]],
        [s for s in samples if s.variant == names[1]],
        batch_blocks=max(1, round(used * scale)),
        preemption=Preemption.CORRECT,
    )
    return estimate_ratio(pairs), trimmed_ratio(pairs)


def compare_estimators(results: Path, stores: Path, case: str) -> None:
    kinds = [t["kind"] for t in json.loads(results.read_text())["cases"][case]["tries"]
             if t["tool"] == "perflab"]  # fmt: skip
    print("| units | interval | A/A false | A/A median half-width | 3% A/B found |")
    print("|---|---|---:|---:|---:|")
    for scale in (0.5, 1.0, 2.0):
        runs = [
            (kind, _estimates(stores / f"{case}-{i}.db", scale)) for i, kind in enumerate(kinds)
        ]
        for which, name in ((0, "mean, t"), (1, "20%-trimmed mean")):
            verdicts = [(kind, pair[which]) for kind, pair in runs]
            aa = [e for kind, e in verdicts if kind == "A/A"]
            ab = [e for kind, e in verdicts if kind == "A/B"]
            false = sum(verdict_for(e.ci_low, e.ci_high, 0.01) in (Verdict.SLOWER, Verdict.FASTER)
                        for e in aa)  # fmt: skip
            found = sum(verdict_for(e.ci_low, e.ci_high, 0.01) is Verdict.SLOWER for e in ab)
            width = float(np.median([e.log_half_width for e in aa]))
            print(f"| x{scale:g} | {name} | {false}/{len(aa)} | ±{width:.1%} | {found}/{len(ab)} |")


def autocorrelation(values: np.ndarray, lag: int) -> float:
    centred = values - values.mean()
    denominator = float(np.sum(centred**2))
    if lag >= len(values) or denominator == 0:
        return math.nan
    return float(np.sum(centred[:-lag] * centred[lag:]) / denominator)


def variance_ratio(values: np.ndarray, k: int) -> float:
    batches = len(values) // k
    if batches < 4:
        return math.nan
    means = values[: batches * k].reshape(batches, k).mean(axis=1)
    return float(np.var(means, ddof=1) * k / np.var(values, ddof=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="*", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--estimators", nargs=3, metavar=("RESULTS", "STORES", "CASE"))
    args = parser.parse_args()
    if args.estimators:
        results, stores, case = args.estimators
        compare_estimators(Path(results), Path(stores), case)
        return
    rows = []
    for path in args.stores:
        ratios, facts = block_log_ratios(path)
        values = np.asarray(ratios)
        row: dict[str, Any] = {
            "store": path.name,
            **facts,
            "sd_block": float(np.std(values, ddof=1)),
            "autocorrelation": {lag: autocorrelation(values, lag) for lag in LAGS},
            "variance_ratio": {k: variance_ratio(values, k) for k in BATCHES},
        }
        rows.append(row)
        print(
            f"{path.name}: {row['blocks']} blocks of ~{row['median_run_ms']:.1f} ms runs, "
            f"block SD {row['sd_block']:.4f}; autocorrelation "
            + ", ".join(f"lag {lag} {v:+.2f}" for lag, v in row["autocorrelation"].items())
            + "; variance ratio "
            + ", ".join(f"k={k} {v:.2f}" for k, v in row["variance_ratio"].items())
        )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
