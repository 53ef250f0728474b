"""How far apart separate worker processes of the same environment count a statement.

    PYTHONPATH=src .venv/bin/python bench/instructions_process_spread.py [--workers 4] [--load]
        [--stmt S --setup S] [--keep DIR]

Runs `--workers` statement workers of the same environment under callgrind (the instructions
lens's own measuring code, one variant per worker, side by side on the free CPUs), prints each
worker's per-call counts (every repeat) and the per-function table of the two workers furthest
apart: which functions carry the difference. `--load` makes the machine busy for the run
(bench/machine_load.py: a busy loop on every CPU and a memory-bound process, all stopped on
exit). `--keep DIR` writes every worker's callgrind dumps there. The default statement is the
torch one of bench/instructions_vs_torch.py (needs torch in this interpreter).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from machine_load import MachineLoad

from perflab.lenses.instructions.explain import function_deltas
from perflab.lenses.instructions.measure import InstructionsLens
from perflab.machine.proc import SubprocessRunner
from perflab.measure.callgrind.artifacts import KIND_EMPTY, KIND_STATEMENT, SAMPLE_NAME, parts_of
from perflab.measure.callgrind.count import CountOptions
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings
from perflab.tool_output.callgrind import FunctionCosts, combine_parts, normalise_function_id

SETUP = "import torch\nx = torch.ones(1)\ny = torch.ones(1)"
STMT = "torch.add(x, y)"


def machine() -> dict[str, object]:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "?",
    )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent,
    ).stdout.strip()
    return {
        "cpu": f"{model}, {len(os.sched_getaffinity(0))} CPUs",
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "load_average": os.getloadavg(),
    }


def count(args: argparse.Namespace) -> tuple[MemorySink, float]:
    benchmark = Benchmark("stmt", stmt=args.stmt, setup=args.setup)
    variants = tuple(
        Variant(f"w{i}", python=sys.executable) for i in range(args.workers)
    )  # identical environments: each variant is one worker process
    experiment = Experiment((benchmark,), variants, Settings(metrics=(Metric.INSTRUCTIONS,)))
    lens = InstructionsLens(
        CountOptions(Metric.INSTRUCTIONS, inline_frames=False, repeats=args.repeats, processes=1)
    )
    sink = MemorySink()
    cpu = sorted(os.sched_getaffinity(0))[-1]
    start = time.perf_counter()
    lens.measure(
        benchmark,
        LensContext(experiment, SubprocessRunner(), sink, NullProgress(), cpu, sys.executable),
    )
    return sink, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--stmt", default=STMT)
    parser.add_argument("--setup", default=SETUP)
    parser.add_argument("--load", action="store_true", help="make the machine busy meanwhile")
    parser.add_argument("--keep", type=Path, help="write every worker's callgrind dumps here")
    parser.add_argument("--top", type=int, default=25, help="functions shown in the diff")
    args = parser.parse_args()
    facts = machine()
    load = MachineLoad(seconds=1800) if args.load else None
    if load is not None:
        load.__enter__()
    try:
        sink, wall_s = count(args)
    finally:
        if load is not None:
            load.__exit__(None, None, None)
    facts["load_average_after"] = os.getloadavg()
    per_call: dict[str, list[float]] = {}
    for sample in sorted(sink.samples, key=lambda s: (s.variant, s.generation)):
        if sample.name == SAMPLE_NAME:
            per_call.setdefault(sample.variant, []).append(sample.per_iteration)
    loops = {v: info["instructions"].get("loops") for v, info in sink.variant_info.items()}
    print(json.dumps({**facts, "wall_s": round(wall_s, 1), "loops": loops}, default=str))
    data = sink.data_for("stmt", Metric.INSTRUCTIONS)
    for name, values in per_call.items():
        raw = [
            f"{kind.rsplit('.', 1)[1]} {parts_of([a])[0].total() / loops[name]:,.2f}"
            for a in data.artifacts_of(name)
            for kind in (a.kind,)
            if kind in (KIND_STATEMENT, KIND_EMPTY)
        ]
        print(f"{name}: " + ", ".join(f"{v:,.2f}" for v in values) + "  (" + ", ".join(raw) + ")")
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        for artifact in sink.artifacts:
            if artifact.kind in (KIND_STATEMENT, KIND_EMPTY):
                name = f"{artifact.variant}.{artifact.generation}.{artifact.kind}"
                (args.keep / name).write_text(artifact.content)
        (args.keep / "per_call.json").write_text(json.dumps({**facts, "per_call": per_call}))
    medians = {name: statistics.median(values) for name, values in per_call.items()}
    low = min(medians, key=medians.__getitem__)
    high = max(medians, key=medians.__getitem__)
    print(f"furthest apart: {low} {medians[low]:,.2f} and {high} {medians[high]:,.2f} "
          f"({medians[high] / medians[low] - 1:+.4%})")  # fmt: skip

    def costs(variant: str) -> FunctionCosts:
        stmt = [a for a in data.artifacts_of(variant, KIND_STATEMENT) if a.generation == 0]
        empty = [a for a in data.artifacts_of(variant, KIND_EMPTY) if a.generation == 0]
        raw = combine_parts(parts_of(stmt)) - combine_parts(parts_of(empty))
        return raw.scaled(1.0 / loops[variant]).without_zero().renamed(normalise_function_id)

    deltas = function_deltas(costs(low), costs(high))
    print(f"{'delta/call':>11} {'low':>9} {'high':>9}  function (object)")
    for d in deltas[: args.top]:
        print(
            f"{d.delta_self:>+11.2f} {d.baseline_self:>9.2f} {d.variant_self:>9.2f}  "
            f"{d.name} ({d.object})"
        )


if __name__ == "__main__":
    main()
