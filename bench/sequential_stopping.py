"""Early stopping on simulated command A/As: false claims per stopping rule, and "~N s more".

    PYTHONPATH=src:. .venv/bin/python bench/sequential_stopping.py [--runs 2000]

Simulated with the unit test's model (tests/unit/test_stats_sequential.py): every run of a
command is a fresh process with heavy-tailed noise of its own; the machine switches between two
speeds 8% apart (bimodal samples); a drift of 6% over the run; the second run of a block 0.5%
faster; blocks alternate AB, BA. Per scenario and rule, the share of A/A runs
that end `slower`/`faster` (a false claim) and `equivalent`, with units as the lens makes them
(about a second of blocks) and with units of two blocks (more units, more looks):

- t interval: the rule before (stop once the Student t interval is within 0.5%, 10 units);
- sequence: the rule now (the confidence sequence within 0.5% and settling the verdict);
- never early: the whole budget, the t interval at its end (fixed horizon).

Then the forecast: first runs of normal units that end `inconclusive` are run again with the
budget their `extra_seconds_to_decide` asked for; printed is how many give the right answer
(`equivalent` for A/As, `slower` for a 3% A/B).
"""

from __future__ import annotations

import argparse

import numpy as np
from tests.unit.test_stats_sequential import (
    BAND,
    command_runs,
    estimate_of,
    never,
    sequence_rule,
    t_interval_rule,
    two_block_units,
    verdicts,
)

from perflab.records.model import Verdict
from perflab.stats.paired import verdict_for
from perflab.stats.sequential import DECIDE_PROBABILITY, seconds_to_decide

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


# (units in the first run, unit SD, true log ratio, the verdict a decided new run should give)
FORECASTS = {
    "A/A, 15 units of SD 2%": (15, 0.02, 0.0, Verdict.EQUIVALENT),
    "A/A, 8 units of SD 2%": (8, 0.02, 0.0, Verdict.EQUIVALENT),
    "A/A, 30 units of SD 4%": (30, 0.04, 0.0, Verdict.EQUIVALENT),
    "A/B 3%, 8 units of SD 5%": (8, 0.05, float(np.log(1.03)), Verdict.SLOWER),
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated A/As per scenario")
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    print("| scenario | rule | false claims | equivalent |")
    print("|---|---|---:|---:|")
    for name, (blocks, per_unit, look, noise) in SCENARIOS.items():
        rng = np.random.default_rng(args.seed)
        pairs = command_runs(rng, args.runs, blocks, noise_sd=noise)
        units = two_block_units(pairs, per_unit)
        for rule_name, rule in RULES.items():
            found = verdicts(units, rule, look)
            false = sum(v in (Verdict.SLOWER, Verdict.FASTER) for v in found)
            equivalent = sum(v is Verdict.EQUIVALENT for v in found)
            print(
                f"| {name} | {rule_name} | {false / len(found):.1%} "
                f"| {equivalent / len(found):.1%} |"
            )
    print(
        f'\n"~N s more" (the forecast at {DECIDE_PROBABILITY:.0%}): inconclusive first runs, '
        "run again with the budget asked for\n"
    )
    print("| case | new run gave the answer | median extra asked (first-run budgets) |")
    print("|---|---:|---:|")
    for name, (units, sd, truth, wanted) in FORECASTS.items():
        decided, tried, asked = forecast(min(args.runs, 500), args.seed, units, sd, truth, wanted)
        print(f"| {name} | {decided}/{tried} ({decided / tried:.1%}) {wanted} | {asked:.1f} |")


if __name__ == "__main__":
    main()
