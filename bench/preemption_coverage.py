"""Does the time lens's interval hold the truth under preemption, and how wide is it?

A pure simulation: synthetic wall-time samples with scheduler accounting go through perflab's
own analysis (`perflab.lenses.time.analyse.analyse_time`, the default `--preempted correct`),
and the interval it reports is checked against the true ratio the samples were drawn with.

Each run is 12 generations (worker processes) of 80 blocks, one sample of each variant per
block (about the 1,762 samples of the A/A the rule was first seen to fail on). A sample's CPU
time is the statement's, times the variant's true ratio, a per-generation process effect (SD
0.5%) and per-sample noise (SD 1%). A preempted sample waited on the run queue for 10-50% of
its CPU time (recorded as its `run_queue_ns`, which the correction takes out) and used 50% more
CPU time (the cost the correction cannot repair: +53% and +66% were measured). An unpreempted
sample carries the same +50% when it started cold, right after another process ran: when the
sample measured just before it (either variant's) was preempted, or when another process ran
in the wait between its worker's samples (a quarter of a sample long). Those are the cases an
interval from the unpreempted pairs alone would miss. The time stamps follow the samples'
lengths and that wait, so the rule reads the wait from them as it does in a real run.

Patterns (baseline's share preempted, variant's): as measured here, rare (1%, 2%, 5%),
frequent (30%, 60%), uneven between variants (2% vs 30%), correlated with the variant (16% vs
98%: the variant's samples nearly always preempted), each at true ratios 1.0, 1.03 and 1.6.

Reported per pattern and ratio: coverage (share of intervals that hold the true ratio; the
interval is a 95% one) with its Monte Carlo standard error, the median width relative to the
interval of the pairs neither of whose samples was preempted (log widths), verdicts (for an A/A
a `faster`/`slower` is false), and how many intervals are finite.

Usage (a cell's runs depend only on the seed, the pattern and the ratio, so cells can run in
parallel processes, `--patterns P --ratios R` each, and their rows be joined):
  PYTHONPATH=src .venv/bin/python bench/preemption_coverage.py --runs 1000 \
      --out bench/results/preemption_coverage_2026-11-29.md
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from perflab.lenses.time.analyse import analyse_time, time_figures
from perflab.measure.lens import BenchmarkData
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Benchmark, Comparison, Experiment, Sample, Variant
from perflab.records.settings import Settings
from perflab.stats.paired import estimate_ratio, pair_samples
from perflab.stats.preemption import Preemption

GENERATIONS = 12
BLOCKS = 80
LOOPS = 100
PER_ITERATION_NS = 20_000.0  # a 2 ms sample
PROCESS_SD = 0.005
SAMPLE_SD = 0.01
GROWTH = 0.5  # extra CPU time of a sample that runs after another process
# the wait between a worker's samples, as a share of a sample: another process that ran in it
# leaves the next sample cold without preempting it
GAP_SHARE = 0.25
BAND = 0.01  # the default equivalence band

PATTERNS: dict[str, tuple[float, float]] = {
    "none": (0.0, 0.0),
    "rare 1%": (0.01, 0.01),
    "rare 2%": (0.02, 0.02),
    "rare 5%": (0.05, 0.05),
    "frequent 30%": (0.30, 0.30),
    "frequent 60%": (0.60, 0.60),
    "uneven 2% vs 30%": (0.02, 0.30),
    "correlated 16% vs 98%": (0.16, 0.98),
}
RATIOS = (1.0, 1.03, 1.6)


def simulate(
    rng: np.random.Generator, preempted: tuple[float, float], ratio: float
) -> tuple[list[Sample], list[Sample]]:
    """Baseline and variant samples of one run (see the module's docstring)."""
    sides: tuple[list[Sample], list[Sample]] = ([], [])
    before_preempted = False  # the sample measured just before this one
    clock_ns = 0.0  # when the last sample ended
    for generation in range(GENERATIONS):
        process = rng.normal(0.0, PROCESS_SD, size=2)
        for block in range(BLOCKS):
            order = (0, 1) if rng.random() < 0.5 else (1, 0)
            for position, side in enumerate(order):
                truth = PER_ITERATION_NS * (ratio if side else 1.0)
                cpu = truth * LOOPS * math.exp(process[side] + rng.normal(0.0, SAMPLE_SD))
                hit = bool(rng.random() < preempted[side])
                gap = bool(rng.random() < GAP_SHARE * preempted[side])
                cpu *= 1 + GROWTH if hit or before_preempted or gap else 1.0
                wait = cpu * rng.uniform(0.1, 0.5) if hit else 0.0
                before_preempted = hit
                # the wait before a sample is a quarter of it (as long as GAP_SHARE says), and
                # the time stamps follow the samples' lengths: a longer variant's samples end
                # further apart, and its wait is no shorter for that
                clock_ns += GAP_SHARE * truth * LOOPS + cpu + wait
                sides[side].append(
                    Sample(
                        benchmark="bench",
                        variant="ab"[side],
                        metric=Metric.TIME,
                        name="wall_ns",
                        value=cpu + wait,
                        loops=LOOPS,
                        generation=generation,
                        block=block,
                        position=position,
                        at_ns=int(clock_ns),
                        run_queue_ns=int(wait),
                        cpu_ns=int(cpu),
                        involuntary_switches=1 if hit else 0,
                    )
                )
    return sides


@dataclass(frozen=True)
class Outcome:
    held: bool
    finite: bool
    verdict: Verdict
    width_vs_unpreempted: float  # log width over the unpreempted pairs' log width (nan: none)
    extra_seconds: float | None


BENCHMARK = Benchmark(name="bench", stmt="pass")
SETTINGS = Settings(preempted="correct", equivalence_band=BAND)
EXPERIMENT = Experiment(
    benchmarks=(BENCHMARK,), variants=(Variant(name="a"), Variant(name="b")), settings=SETTINGS
)


def analyse(baseline: list[Sample], variant: list[Sample], ratio: float) -> Outcome:
    data = BenchmarkData(samples=tuple(baseline + variant))
    # the figures alone (the same to the bit as the whole analysis, at half its cost); the
    # whole analysis only where its details are read: how long an inconclusive one would take
    (comparison,) = time_figures(BENCHMARK, ["a", "b"], data, EXPERIMENT).comparisons
    if comparison.verdict is Verdict.INCONCLUSIVE:
        (comparison,) = analyse_time(BENCHMARK, ["a", "b"], data, SETTINGS).comparisons
    clean = estimate_ratio(pair_samples(baseline, variant, preemption=Preemption.EXCLUDE))
    return Outcome(
        held=comparison.ci_low <= ratio <= comparison.ci_high,
        finite=comparison.ci_low > 0 and math.isfinite(comparison.ci_high),
        verdict=comparison.verdict,
        width_vs_unpreempted=_width(comparison) / _log_width(clean.ci_low, clean.ci_high),
        extra_seconds=_extra(comparison),
    )


def _width(comparison: Comparison) -> float:
    return _log_width(comparison.ci_low, comparison.ci_high)


def _log_width(low: float, high: float) -> float:
    if low <= 0 or not math.isfinite(high):
        return math.inf
    return math.log(high) - math.log(low)


def _extra(comparison: Comparison) -> float | None:
    details = comparison.details.to_json() if comparison.details is not None else {}
    value = details.get("extra_seconds_to_decide")
    return float(value) if isinstance(value, int | float) else None


@dataclass(frozen=True)
class Cell:
    pattern: str
    ratio: float
    runs: int
    held: int
    finite: int
    verdicts: Counter[Verdict]
    median_width: float  # relative to the unpreempted pairs' interval
    with_estimate: int  # inconclusive verdicts that say how long it would take to decide
    inconclusive: int

    def row(self) -> str:
        decided = Verdict.EQUIVALENT if self.ratio == 1.0 else Verdict.SLOWER
        false = self.verdicts[Verdict.SLOWER] + self.verdicts[Verdict.FASTER]
        if self.ratio != 1.0:
            false = self.verdicts[Verdict.FASTER] + self.verdicts[Verdict.EQUIVALENT]
        width = "∞" if math.isinf(self.median_width) else f"{self.median_width:.2f}x"
        return (
            f"| {self.pattern} | {self.ratio:g} | {self.runs} | "
            f"{self.held / self.runs:.1%} ± {_standard_error(self.held, self.runs):.1%} | "
            f"{width} | "
            f"{self.verdicts[decided] / self.runs:.0%} {decided.value} | "
            f"{false / self.runs:.1%} | {self.finite}/{self.runs} | "
            f"{self.with_estimate}/{self.inconclusive} |"
        )


def run_cell(pattern: str, ratio: float, runs: int, seed: int) -> Cell:
    rng = np.random.default_rng([seed, list(PATTERNS).index(pattern), RATIOS.index(ratio)])
    outcomes = [analyse(*simulate(rng, PATTERNS[pattern], ratio), ratio) for _ in range(runs)]
    inconclusive = [o for o in outcomes if o.verdict is Verdict.INCONCLUSIVE]
    return Cell(
        pattern=pattern,
        ratio=ratio,
        runs=runs,
        held=sum(o.held for o in outcomes),
        finite=sum(o.finite for o in outcomes),
        verdicts=Counter(o.verdict for o in outcomes),
        median_width=statistics.median(o.width_vs_unpreempted for o in outcomes),
        with_estimate=sum(o.extra_seconds is not None for o in inconclusive),
        inconclusive=len(inconclusive),
    )


def _standard_error(held: int, runs: int) -> float:
    """The Monte Carlo standard error of a coverage of held/runs (binomial)."""
    share = held / runs
    return math.sqrt(share * (1 - share) / runs)


HEADER = (
    "| pattern (preempted: a, b) | true ratio | runs | coverage ± MC SE "
    "| width vs unpreempted pairs | decided | false verdict | finite "
    "| inconclusive with ~N s more |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="simulated runs per cell")
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument("--patterns", nargs="*", default=list(PATTERNS), choices=list(PATTERNS))
    parser.add_argument("--ratios", nargs="*", type=float, default=list(RATIOS), choices=RATIOS)
    parser.add_argument("--out", type=Path, help="write the Markdown table here too")
    args = parser.parse_args(argv)
    started = time.monotonic()
    lines = [HEADER]
    print(HEADER, flush=True)
    for pattern in args.patterns:
        for ratio in args.ratios:
            line = run_cell(pattern, ratio, args.runs, args.seed).row()
            lines.append(line)
            print(line, flush=True)
    print(f"({time.monotonic() - started:.0f} s)", file=sys.stderr)
    if args.out is not None:
        args.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
