"""Does the time lens's stopping rule for commands (`--cmd`) make false claims on identical code?

    PYTHONPATH=src .venv/bin/python bench/command_stopping.py --runs 90 --stores DIR
    PYTHONPATH=src .venv/bin/python bench/command_stopping.py --replay DIR

Each run is an A/A of one `python -c` command (the same as bench/time_precision.py's command
mode) measured for its whole budget (`--precision 0.00001`: it never stops early), with its
samples kept in DIR. Then every kept run is replayed block by block under several stopping
rules, with the lens's own pairing and interval: the rule before confidence sequences (the t
interval within the precision from 10 batches, about ten batches re-formed as blocks arrive) with
a look every 0.25 s, once a second, or only when the measured blocks double; the rule now (the
confidence sequence within the precision and settling the verdict, over fixed units of about a
second) with a look every 0.25 s; and no early stop (fixed units).
A rule whose false claims (`slower`/`faster`) exceed about 5% of the runs stops on intervals
that are too narrow. Prints one line per run and the count of verdicts per rule.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from perflab.lenses.time.artifacts import command_batch_blocks
from perflab.lenses.time.bookkeeping import (
    COMMAND_UNIT_S,
    COMMAND_UNITS_IN_SHARE,
    STOP_CHECK_INTERVAL_S,
    sequences_within_precision,
)
from perflab.lenses.time.commands import command_unit_blocks
from perflab.records.kinds import RunStatus
from perflab.records.model import Sample
from perflab.records.settings import Settings
from perflab.stats.comparison import verdict_for
from perflab.stats.paired import RatioEstimate, estimate_ratio, pair_samples
from perflab.stats.preemption import Preemption
from perflab.store import SqliteStore

PYTHON = sys.executable
COMMAND = f"{PYTHON} -c 'for _ in range(2000): sum(range(1000))'"
Look = Callable[[int, float, float], bool]  # (measured blocks, now s, last look s) -> look?


def _quarter(blocks: int, now_s: float, last_s: float) -> bool:
    return now_s - last_s >= STOP_CHECK_INTERVAL_S


# name -> (when to look, stop on the sequence over fixed units, else the t over ~10 batches)
RULES: dict[str, tuple[Look, bool]] = {
    "t interval, a look every 0.25 s (before)": (_quarter, False),
    "t interval, once a second": (lambda blocks, now_s, last_s: now_s - last_s >= 1.0, False),
    "t interval, when blocks double": (
        lambda blocks, now_s, last_s: blocks >= 16 and blocks & (blocks - 1) == 0,
        False,
    ),
    "sequence, fixed units, every 0.25 s (now)": (_quarter, True),
    "never early (fixed units)": (lambda blocks, now_s, last_s: False, True),
}


def measure(stores: Path, runs: int, budget_s: float) -> None:
    stores.mkdir(parents=True, exist_ok=True)
    for i in range(runs):
        store = stores / f"c{i}.db"
        subprocess.run(
            [PYTHON, "-m", "perflab.cli.main", "run", "--cmd", COMMAND, "--variant", "A",
             "--variant", f'B cmd="{COMMAND}"', "--budget", str(budget_s),
             "--precision", "0.00001", "--quiet", "--store", str(store)],
            check=True,
        )  # fmt: skip
        print(f"run {i + 1} of {runs} measured", flush=True)


def _interval(
    a: list[Sample], b: list[Sample], last_block: int, warmup: int, unit: int | None
) -> RatioEstimate:
    batch = unit or command_batch_blocks(last_block + 1 - warmup)
    return estimate_ratio(
        pair_samples(
            [s for s in a if s.block <= last_block],
            [s for s in b if s.block <= last_block],
            batch_blocks=batch,
            preemption=Preemption.CORRECT,
        )
    )


def replay(a: list[Sample], b: list[Sample], warmup: int, min_blocks: int, precision: float,
           look: Look, sequence: bool, budget_s: float) -> tuple[RatioEstimate, int]:  # fmt: skip
    """The interval the run would have ended with under `look` and the rule, and its measured
    blocks."""
    blocks = sorted({s.block for s in a} & {s.block for s in b})
    ended_s = {block: 0.0 for block in blocks}
    for sample in a + b:
        if sample.block in ended_s:
            ended_s[sample.block] = max(ended_s[sample.block], sample.at_ns / 1e9)
    unit = None
    if sequence:  # as the lens fixes it after the minimum blocks
        warmed_s = ended_s[blocks[warmup - 1]] if warmup else 0.0
        fixed_at = blocks[min(len(blocks), min_blocks) - 1]
        block_s = (ended_s[fixed_at] - warmed_s) / max(1, fixed_at + 1 - warmup)
        unit_s = min(COMMAND_UNIT_S, (budget_s - warmed_s) / COMMAND_UNITS_IN_SHARE)
        unit = command_unit_blocks(block_s, unit_s, 2)
    last_s = -math.inf
    for block in blocks:
        measured = block + 1 - warmup
        if block + 1 < min_blocks or not look(measured, ended_s[block], last_s):
            continue
        last_s = ended_s[block]
        estimate = _interval(a, b, block, warmup, unit)
        stop = (
            sequences_within_precision([estimate], precision)
            if sequence
            else estimate.n_groups >= 10 and estimate.log_half_width <= precision
        )
        if stop:
            return estimate, measured
    return _interval(a, b, blocks[-1], warmup, unit), blocks[-1] + 1 - warmup


def replay_all(stores: Path) -> None:
    tally = {name: Counter[str]() for name in RULES}
    for path in sorted(stores.glob("c*.db")):
        opened = SqliteStore.open(path, create=False)
        try:
            run = opened.load_run("latest")
        finally:
            opened.close()
        if run.status is not RunStatus.COMPLETE:
            continue  # cut short: not the whole budget
        settings = run.experiment.settings
        names = [v.name for v in run.experiment.variants]
        samples = [s for s in run.samples if s.name == "wall_ns"]
        a = [s for s in samples if s.variant == names[0]]
        b = [s for s in samples if s.variant == names[1]]
        min_blocks = settings.min_command_blocks
        line = [path.stem]
        span_s = max(s.at_ns for s in samples) / 1e9
        for name, (look, sequence) in RULES.items():
            # the default precision: the runs were measured with a tiny one to use their budget
            estimate, measured = replay(
                a, b, settings.warmup_blocks, min_blocks, Settings().target_precision, look,
                sequence, span_s,
            )  # fmt: skip
            verdict = str(verdict_for(estimate.ci_low, estimate.ci_high, settings.equivalence_band))
            tally[name][verdict] += 1
            line.append(
                f"{name}: {verdict} after {measured} blocks "
                f"[{estimate.ci_low:.4f}, {estimate.ci_high:.4f}]"
            )
        print(" | ".join(line))
    for name, counts in tally.items():
        runs = sum(counts.values())
        false = counts["slower"] + counts["faster"]
        print(f"{name}: {false}/{runs} false, {counts['equivalent']}/{runs} equivalent, "
              f"{dict(counts)}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=0, help="full-length A/A runs to measure")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds per run (20)")
    parser.add_argument("--stores", type=Path, help="where the runs' stores are kept")
    parser.add_argument("--replay", type=Path, metavar="DIR", help="only replay the stores in DIR")
    args = parser.parse_args()
    if args.replay is not None:
        replay_all(args.replay)
        return
    if args.stores is None:
        parser.error("--stores DIR is needed to measure (or --replay DIR)")
    measure(args.stores, args.runs, args.budget)
    replay_all(args.stores)


if __name__ == "__main__":
    main()
