"""Early stopping on simulated command A/As: false claims per stopping rule, and "~N s more".

    PYTHONPATH=src:. .venv/bin/python bench/sequential_stopping.py [--runs 2000]

Simulated with the unit test's model (tests/unit/stats/test_sequential.py): every run of a
command is a fresh process with heavy-tailed noise of its own; the machine switches between two
speeds 8% apart (bimodal samples); a drift of 6% over the run; the second run of a block 0.5%
faster; blocks alternate AB, BA. Per scenario and rule, the share of A/A runs
that end `slower`/`faster` (a false claim) and `equivalent`, with units as the lens makes them
(about a second of blocks) and with units of two blocks (more units, more looks):

- t interval: the rule before (stop once the Student t interval is within 0.5%, 10 units);
- sequence: the rule now (the confidence sequence within 0.5% and settling the verdict);
- never early: the whole budget, the t interval at its end (fixed horizon);
- trimmed (the lens's rule for commands): stop on the sequence of the units' mean as above,
  and only when the 20%-trimmed mean's interval gives the same verdict; the verdict is the
  trimmed interval's (stats.trimmed), at the stop or at the end.

A loaded machine is simulated too: a fifth of the runs land 5-80% slow (their CPU slowed, as
seen on the 2-vCPU VM at load 4-8), as A/As and as 3% A/Bs (the share found: `slower`).

Then the forecast: first runs of normal units that end `inconclusive` are run again with the
budget their `extra_seconds_to_decide` asked for; printed is how many give the right answer
(`equivalent` for A/As, `slower` for a 3% A/B).
"""

from __future__ import annotations

import argparse

import numpy as np
from tests.unit.stats.test_sequential import (
    BAND,
    command_runs,
    estimate_of,
    never,
    sequence_rule,
    t_interval_rule,
    two_block_units,
    verdicts,
)

from perflab.records.kinds import Verdict
from perflab.stats.comparison import verdict_for
from perflab.stats.paired import RatioEstimate
from perflab.stats.sequential import (
    DECIDE_PROBABILITY,
    seconds_to_decide,
    sequence_alpha,
    sequence_interval,
)
from perflab.stats.trimmed import trimmed_interval

# (blocks in 20 s, blocks per unit as the lens makes them: about 1 s; a look every N units,
# per-run noise SD)
SCENARIOS = {
    "~100 ms command: 100 blocks, units of 6, a look per unit, noise 1.5%": (100, 6, 1, 0.015),
    "~100 ms command, noise 3%": (100, 6, 1, 0.03),
    "~100 ms command, units of 2 blocks, noise 1.5%": (100, 2, 1, 0.015),
    "~10 ms command: 800 blocks, units of 40, noise 2%": (800, 40, 1, 0.02),
    "~10 ms command, units of 2 blocks (400), a look per 5, noise 2%": (800, 2, 5, 0.02),
    "~1 s command: 8 blocks, units of 1, noise 1%": (8, 1, 1, 0.01),
}
RULES = {"t interval": t_interval_rule, "sequence": sequence_rule, "never early": never}

# A loaded machine: (blocks in 20 s, blocks per unit, share of runs slowed, true log ratio)
LOADED = {
    "~100 ms command, loaded: 56 blocks, units of 4, A/A": (56, 4, 0.2, 0.0),
    "~100 ms command, loaded: 56 blocks, units of 4, 3% A/B": (56, 4, 0.2, float(np.log(1.03))),
    "~100 ms command, loaded: 56 blocks, units of 2, A/A": (56, 2, 0.2, 0.0),
    "~10 ms command, loaded: 400 blocks, units of 20, A/A": (400, 20, 0.2, 0.0),
}


def loaded_runs(
    rng: np.random.Generator, runs: int, blocks: int, slowed: float, truth: float
) -> np.ndarray:
    """Block log ratios as `command_runs` makes them (noise 3%), and in addition a share
    `slowed` of the runs 5-80% slower, each on its own (a spell of a slow CPU)."""
    pairs = command_runs(rng, runs, blocks, noise_sd=0.03, true_log_ratio=truth)
    hit = rng.random((runs, blocks, 2)) < slowed
    slow = np.log(1 + rng.uniform(0.05, 0.8, (runs, blocks, 2))) * hit
    return np.asarray(pairs + slow[:, :, 0] - slow[:, :, 1])


def _mean_estimate(values: np.ndarray) -> RatioEstimate:
    return estimate_of(values)


def trimmed_verdict(units: np.ndarray, look_every: int = 1) -> Verdict:
    """The lens's rule for commands on one run's units: an early stop needs the sequence of
    the mean to stop and the trimmed interval to give its verdict; the verdict is the trimmed
    interval's, where it stopped or at the end."""
    alpha = sequence_alpha(0.95, 1)
    last = len(units)
    for k in range(2, last + 1, look_every):
        mean = _mean_estimate(units[:k])
        if not sequence_rule(mean):
            continue
        verdict = _trimmed_verdict_of(units[:k])
        if verdict is verdict_for(*sequence_interval(mean, alpha), BAND):
            return verdict
    return _trimmed_verdict_of(units)


def _trimmed_verdict_of(units: np.ndarray) -> Verdict:
    trimmed = trimmed_interval(list(units), 0.95)
    if trimmed is None:
        estimate = _mean_estimate(units)
        return verdict_for(estimate.ci_low, estimate.ci_high, BAND)
    centre, half, _ = trimmed
    return verdict_for(float(np.exp(centre - half)), float(np.exp(centre + half)), BAND)


def loaded_table(runs: int, seed: int) -> None:
    print("\n| loaded scenario | rule | slower | faster | equivalent |")
    print("|---|---|---:|---:|---:|")
    for name, (blocks, per_unit, slowed, truth) in LOADED.items():
        rng = np.random.default_rng(seed)
        units = two_block_units(loaded_runs(rng, runs, blocks, slowed, truth), per_unit)
        for rule_name, found in (
            ("sequence, mean", verdicts(units, sequence_rule)),
            ("trimmed", [trimmed_verdict(row) for row in units]),
        ):
            share = {v: sum(f is v for f in found) / len(found) for v in Verdict}
            print(
                f"| {name} | {rule_name} | {share[Verdict.SLOWER]:.1%} "
                f"| {share[Verdict.FASTER]:.1%} | {share[Verdict.EQUIVALENT]:.1%} |"
            )


# (units in the first run, unit SD, true log ratio, the verdict a decided new run should give)
FORECASTS = {
    "A/A, 15 units of SD 2%": (15, 0.02, 0.0, Verdict.EQUIVALENT),
    "A/A, 8 units of SD 2%": (8, 0.02, 0.0, Verdict.EQUIVALENT),
    "A/A, 30 units of SD 4%": (30, 0.04, 0.0, Verdict.EQUIVALENT),
    "A/B 3%, 8 units of SD 5%": (8, 0.05, float(np.log(1.03)), Verdict.SLOWER),
    "A/B 3%, 15 units of SD 4%": (15, 0.04, float(np.log(1.03)), Verdict.SLOWER),
    "A/B 3%, 30 units of SD 8%": (30, 0.08, float(np.log(1.03)), Verdict.SLOWER),
}


def forecast(
    runs: int, seed: int, units: int, sd: float, truth: float, wanted: Verdict
) -> tuple[int, int, float]:
    """Of `runs` first runs that end inconclusive: how many new runs with the budget asked for
    end `wanted`, and the median extra asked for (in first-run budgets)."""
    rng = np.random.default_rng(seed)
    decided = tried = 0
    asked = []
    while tried < runs:
        first = rng.normal(truth, sd, units)
        estimate = estimate_of(first)
        if verdict_for(estimate.ci_low, estimate.ci_high, BAND) is not Verdict.INCONCLUSIVE:
            continue
        extra = seconds_to_decide(estimate, BAND, float(units))
        if extra is None:
            continue
        asked.append(extra / units)
        again = estimate_of(rng.normal(truth, sd, max(2, round(units + extra))))
        tried += 1
        decided += verdict_for(again.ci_low, again.ci_high, BAND) is wanted
    return decided, tried, float(np.median(asked))


def sufficed(
    seed: int, units: int, sd: float, truth: float, wanted: Verdict, runs: int = 4000
) -> float:
    """The extra budget (first-run budgets) that actually suffices, knowing the truth: the
    least with which a new run ends `wanted` in DECIDE_PROBABILITY of cases (t interval of
    normal units of SD `sd`), by bisection on the number of units."""
    from scipy.special import stdtrit

    def chance(total: int) -> float:
        rng = np.random.default_rng(seed)
        centres = rng.normal(truth, sd / np.sqrt(total), runs)
        sds = sd * np.sqrt(rng.chisquare(total - 1, runs) / (total - 1))
        half = stdtrit(total - 1, 0.975) * sds / np.sqrt(total)
        ends = zip(np.exp(centres - half), np.exp(centres + half), strict=True)
        return float(np.mean([verdict_for(a, b, BAND) is wanted for a, b in ends]))

    low, high = 2, 2 * units
    while chance(high) < DECIDE_PROBABILITY:
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if chance(middle) >= DECIDE_PROBABILITY else (middle, high)
    return max(0.0, high / units - 1)


def forecast_table(runs: int, seed: int) -> None:
    print(
        f'\n"~N s more" (the forecast at {DECIDE_PROBABILITY:.0%}): inconclusive first runs, '
        "run again with the budget asked for; and the extra that suffices, knowing the truth\n"
    )
    print(
        "| case | new run gave the answer | median extra asked (first-run budgets) "
        f"| extra that suffices in {DECIDE_PROBABILITY:.0%} |"
    )
    print("|---|---:|---:|---:|")
    for name, (units, sd, truth, wanted) in FORECASTS.items():
        decided, tried, asked = forecast(runs, seed, units, sd, truth, wanted)
        enough = sufficed(seed, units, sd, truth, wanted)
        print(
            f"| {name} | {decided}/{tried} ({decided / tried:.1%}) {wanted} | {asked:.1f} "
            f"| {enough:.1f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated A/As per scenario")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument(
        "--forecast-only", action="store_true", help='only the "~N s more" forecast table'
    )
    args = parser.parse_args()
    if args.forecast_only:
        forecast_table(min(args.runs, 500), args.seed)
        return
    print("| scenario | rule | false claims | equivalent |")
    print("|---|---|---:|---:|")
    for name, (blocks, per_unit, look, noise) in SCENARIOS.items():
        rng = np.random.default_rng(args.seed)
        pairs = command_runs(rng, args.runs, blocks, noise_sd=noise)
        units = two_block_units(pairs, per_unit)
        rows = [(rule_name, verdicts(units, rule, look)) for rule_name, rule in RULES.items()]
        rows.append(("trimmed", [trimmed_verdict(row, look) for row in units]))
        for rule_name, found in rows:
            false = sum(v in (Verdict.SLOWER, Verdict.FASTER) for v in found)
            equivalent = sum(v is Verdict.EQUIVALENT for v in found)
            print(
                f"| {name} | {rule_name} | {false / len(found):.1%} "
                f"| {equivalent / len(found):.1%} |"
            )
    loaded_table(args.runs, args.seed)
    forecast_table(min(args.runs, 500), args.seed)


if __name__ == "__main__":
    main()
