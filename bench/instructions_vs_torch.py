"""perflab's instructions lens vs torch.utils.benchmark's collect_callgrind, in one run.

    .venv/bin/python bench/instructions_vs_torch.py [--number 1000] [--sequential]

An A/B of `torch.add(x, y)` on two 1-element tensors with two variants of the same environment
(they differ in an environment variable nothing reads, `PERFLAB_BENCH_SIDE=a|b`): perflab counts
both with one `perflab.run(..., metrics="instructions")` (the whole run: preflight, both variants,
analysis); torch needs one `Timer.collect_callgrind(number=...)` per variant. Prints instructions
per call and wall time of each, the ratio, and the machine; and the floor of the lens's design:
one interpreter importing the set-up under callgrind (instrumentation off), timed alone, times
the rounds of such imports this machine's CPUs run (`imports_under_callgrind`: one per worker
process where all fit on the CPUs at once, else one per variant, whose fork server's children
count; `speed_up_at_most`: torch's time over that floor, measuring nothing). `--sequential` also
times perflab with the variants counted one after another
(`InstructionsLens(CountOptions(Metric.INSTRUCTIONS, parallel=False))`, the lens alone), as
before they ran side by side. Needs torch in the interpreter running this script
(`.venv/bin/pip install torch==2.13.0`); perflab's own tests never need torch.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from machine_facts import commit, cpu_model

import perflab
from perflab.lenses.instructions.measure import InstructionsLens
from perflab.machine.proc import SubprocessRunner
from perflab.measure.callgrind.artifacts import SAMPLE_NAME
from perflab.measure.callgrind.count import CountOptions
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings

SETUP = "import torch\nx = torch.ones(1)\ny = torch.ones(1)"
STMT = "torch.add(x, y)"
SIDE = "PERFLAB_BENCH_SIDE"
SIDES = ("a", "b")


def perflab_ab() -> tuple[dict[str, float], float, dict[str, object]]:
    """Per-call counts of both variants, the wall time of the whole run, and the comparison."""
    experiment = perflab.make_experiment(
        stmt=STMT,
        setup=SETUP,
        variants=[f"{side} env.{SIDE}={side}" for side in SIDES],
        metrics="instructions",
    )
    start = time.perf_counter()
    result = perflab.run(experiment, store_path=None)
    wall_s = time.perf_counter() - start
    result.raise_on_failure()
    (comparison,) = result.comparisons
    out = comparison.to_json()
    counts = {
        "a": float(out["baseline_per_iteration"]),
        "b": float(out["variant_per_iteration"]),
    }
    summary = {
        "ratio": out["ratio"],
        "ci": [out["ci_low"], out["ci_high"]],
        "verdict": out["verdict"],
        "a_repeats": out.get("baseline_repeats"),
        "b_repeats": out.get("variant_repeats"),
    }
    return counts, wall_s, summary


def perflab_sequential() -> tuple[dict[str, float], float]:
    """The lens alone, variants one after another on one CPU (as before)."""
    benchmark = Benchmark("torch.add", stmt=STMT, setup=SETUP)
    experiment = Experiment(
        (benchmark,),
        tuple(Variant(side, env={SIDE: side}, python=sys.executable) for side in SIDES),
        Settings(metrics=(Metric.INSTRUCTIONS,)),
    )
    lens = InstructionsLens(CountOptions(Metric.INSTRUCTIONS, parallel=False))
    sink = MemorySink()
    runner = SubprocessRunner()
    cpu = sorted(os.sched_getaffinity(0))[-1]
    start = time.perf_counter()
    lens.preflight(experiment, runner)
    lens.measure(
        benchmark, LensContext(experiment, runner, sink, NullProgress(), cpu, sys.executable)
    )
    wall_s = time.perf_counter() - start
    counts = {}
    for side in SIDES:
        per_call = sorted(
            s.per_iteration for s in sink.samples if s.name == SAMPLE_NAME and s.variant == side
        )
        counts[side] = per_call[len(per_call) // 2]
    return counts, wall_s


def torch_ab(number: int) -> tuple[dict[str, float], float]:
    from torch.utils.benchmark import Timer

    # collect_callgrind starts `python` by name: make it this venv's
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    counts = {}
    start = time.perf_counter()
    for side in SIDES:
        os.environ[SIDE] = side  # its valgrind process inherits this environment
        # torch's defaults, named: its overloads declare none of them
        stats = Timer(stmt=STMT, setup=SETUP).collect_callgrind(
            number=number, repeats=None, collect_baseline=True, retain_out_file=False
        )
        counts[side] = stats.counts(denoise=False) / number
    wall_s = time.perf_counter() - start
    os.environ.pop(SIDE, None)
    return counts, wall_s


def setup_under_callgrind_s() -> float:
    """One interpreter importing the set-up under callgrind with instrumentation off, as every
    perflab worker process starts: the part of the run no measurement design on this machine
    avoids paying once per process."""
    start = time.perf_counter()
    subprocess.run(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", "-q",
         "--callgrind-out-file=/dev/null", sys.executable, "-c", SETUP],
        check=True,
    )  # fmt: skip
    return time.perf_counter() - start


def machine() -> dict[str, object]:
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout
    import torch

    return {
        "cpu": f"{cpu_model()}, {len(os.sched_getaffinity(0))} CPUs",
        "software": f"{platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}, torch {torch.__version__}, {valgrind.strip()}",
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=1000, help="torch's number= (calls)")
    parser.add_argument(
        "--sequential", action="store_true", help="also time the variants one after another"
    )
    parser.add_argument(
        "--out", type=Path, default=Path("bench/results/instructions_vs_torch.json")
    )
    args = parser.parse_args()
    load_before = os.getloadavg()
    ours, ours_s, comparison = perflab_ab()
    sequential = perflab_sequential() if args.sequential else None
    theirs, theirs_s = torch_ab(args.number)
    setup_s = setup_under_callgrind_s()
    cpus = len(os.sched_getaffinity(0))
    # the lens's worker processes per variant (the process is the unit of the interval): fresh
    # ones, each importing the set-up under callgrind, where they all fit on the CPUs at once;
    # else children of one fork server per variant, which imports it once
    processes = CountOptions(Metric.INSTRUCTIONS).processes * len(SIDES)
    imports = processes if processes <= cpus else len(SIDES)
    setups_floor_s = math.ceil(imports / cpus) * setup_s
    result: dict[str, object] = {
        **machine(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "perflab_wall_s": round(ours_s, 1),
        "perflab_instructions_per_call": {k: round(v, 1) for k, v in ours.items()},
        "perflab_comparison": comparison,
        "torch_number": args.number,
        "torch_wall_s": round(theirs_s, 1),
        "torch_instructions_per_call": {k: round(v, 1) for k, v in theirs.items()},
        "count_difference": {k: f"{(ours[k] / theirs[k] - 1) * 100:+.2f}%" for k in SIDES},
        "speed_up": round(theirs_s / ours_s, 2),
        "setup_under_callgrind_s": round(setup_s, 1),
        "imports_under_callgrind": imports,
        "setups_floor_s": round(setups_floor_s, 1),
        "speed_up_at_most": round(theirs_s / setups_floor_s, 2),
    }
    if sequential is not None:
        counts, wall_s = sequential
        result["perflab_sequential_wall_s"] = round(wall_s, 1)
        result["perflab_sequential_instructions_per_call"] = {
            k: round(v, 1) for k, v in counts.items()
        }
        result["speed_up_sequential"] = round(theirs_s / wall_s, 2)
    print(json.dumps(result, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
