"""perflab's instructions lens vs torch.utils.benchmark's collect_callgrind, in one run.

    .venv/bin/python bench/instructions_vs_torch.py [--number 1000]

Both count `torch.add(x, y)` on two 1-element tensors under callgrind. Prints instructions per
call and wall time of each, and the machine. Needs torch in the interpreter running this script
(`.venv/bin/pip install torch==2.13.0`); perflab's own tests never need torch.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from perflab.lenses.instructions.compare import SAMPLE_NAME
from perflab.lenses.instructions.measure import InstructionsLens
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.model import Benchmark, Experiment, Metric, Settings, Variant
from perflab.proc import SubprocessRunner

SETUP = "import torch\nx = torch.ones(1)\ny = torch.ones(1)"
STMT = "torch.add(x, y)"


def perflab_per_call() -> tuple[float, float, dict[str, object]]:
    benchmark = Benchmark("torch.add", stmt=STMT, setup=SETUP)
    experiment = Experiment(
        (benchmark,),
        (Variant("venv", python=sys.executable),),
        Settings(metrics=(Metric.INSTRUCTIONS,)),
    )
    lens = InstructionsLens()
    sink = MemorySink()
    runner = SubprocessRunner()
    start = time.perf_counter()
    lens.preflight(experiment, runner)
    lens.measure(
        benchmark, LensContext(experiment, runner, sink, NullProgress(), None, sys.executable)
    )
    wall_s = time.perf_counter() - start
    per_call = [s.per_iteration for s in sink.samples if s.name == SAMPLE_NAME]
    return sorted(per_call)[len(per_call) // 2], wall_s, sink.variant_info["venv"]["instructions"]


def torch_per_call(number: int) -> tuple[float, float]:
    from torch.utils.benchmark import Timer

    # collect_callgrind starts `python` by name: make it this venv's
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    start = time.perf_counter()
    stats = Timer(stmt=STMT, setup=SETUP).collect_callgrind(number=number)
    wall_s = time.perf_counter() - start
    return stats.counts(denoise=False) / number, wall_s


def machine() -> str:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout
    import torch

    return (
        f"{model}, {os.cpu_count()} vCPUs, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, torch {torch.__version__}, {valgrind.strip()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=1000, help="torch's number= (calls)")
    args = parser.parse_args()
    ours, ours_s, fixed = perflab_per_call()
    theirs, theirs_s = torch_per_call(args.number)
    result = {
        "machine": machine(),
        "perflab_instructions_per_call": round(ours, 1),
        "perflab_loops": fixed.get("loops"),
        "perflab_wall_s": round(ours_s, 1),
        "torch_instructions_per_call": round(theirs, 1),
        "torch_number": args.number,
        "torch_wall_s": round(theirs_s, 1),
        "count_difference": f"{(ours / theirs - 1) * 100:+.2f}%",
        "wall_ratio": round(ours_s / theirs_s, 3),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
