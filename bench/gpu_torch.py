"""The torch and time lenses on a CUDA GPU: the torch lens's worker replies captured for the
golden tests, and the issue's comparisons through the real command line.

    PYTHONPATH=src python3 bench/gpu_torch.py --out DIR [--budget 40] [--skip-runs]

Needs a machine where torch sees a CUDA device. `DIR/captured.json` holds, per case, the
`torch_profile` reply of a fresh statement worker (what `tests/golden/data/torch/` keeps);
`DIR/runs.md` the comparisons (`perflab run --metric time,torch`), each with its verdict, the
torch lens's host and device time and what bounds each variant; `DIR/run-*.json|txt` each
run's JSON and terminal output.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from perflab.lenses.torch.measure import WORKER_OPS
from perflab.machine.proc import SubprocessRunner
from perflab.measure.worker_client import StatementWorker, WorkerLaunch, WorkerOps
from perflab.records.model import Benchmark, Variant

SMALL = "import torch; x = torch.ones(1, device='cuda'); y = torch.ones(1, device='cuda')"
MM = "import torch; a = torch.randn(4096, 4096, device='cuda'); b = torch.randn_like(a)"
CHAIN = (
    "import torch; a = torch.randn(256, 256, device='cuda'); b = torch.randn_like(a); "
    "c = torch.randn(256, device='cuda')"
)
HOST = "import torch; torch.ones(1, device='cuda'); h = torch.ones(1 << 20)"
TF32 = "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"

# case -> (statement, set-up, the variant's environment, loops profiled)
CAPTURES: dict[str, tuple[str, str, dict[str, str], int]] = {
    "add_small": ("torch.add(x, y)", SMALL, {}, 500),
    "add_small_blocking": ("torch.add(x, y)", SMALL, {"CUDA_LAUNCH_BLOCKING": "1"}, 500),
    "mm_fp32": ("torch.mm(a, b)", MM, {}, 20),
    "mm_tf32": ("torch.mm(a, b)", MM, {TF32: "1"}, 20),
    "chain": ("torch.relu(torch.mm(a, b) + c)", CHAIN, {}, 200),
    "round_trip": ("h.to('cuda').sum().item()", HOST, {}, 100),
}

# title -> (statement, set-up, variants, lenses)
RUNS: dict[str, tuple[str, str, tuple[str, ...], str]] = {
    "mm-tf32": ("torch.mm(a, b)", MM, ("fp32", f"tf32 env.{TF32}=1"), "time,torch"),
    "add-blocking": (
        "torch.add(x, y)",
        SMALL,
        ("async", "blocking env.CUDA_LAUNCH_BLOCKING=1"),
        "time,torch",
    ),
    "add-aa": ("torch.add(x, y)", SMALL, ("A", "B"), "time,torch"),
}


def capture(case: str) -> dict[str, Any]:
    stmt, setup, env, loops = CAPTURES[case]
    ops = WorkerOps.from_module(WORKER_OPS)
    benchmark = Benchmark(case, stmt=stmt, setup=setup)
    with StatementWorker.start(
        SubprocessRunner(),
        benchmark,
        Variant(case, env=env),
        WorkerLaunch(sys.executable, cpu=None, timeout_s=300),
        ops=(ops,),
    ) as worker:
        worker.call({"op": "torch_profile", "loops": min(loops, 20)}, timeout_s=300)  # warm-up
        reply = worker.call({"op": "torch_profile", "loops": loops}, timeout_s=300)
    return {"stmt": stmt, "setup": setup, "env": env, "reply": reply}


def device_name() -> str:
    probe = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.cuda.get_device_name(0))"],
        capture_output=True,
        text=True,
    )
    return probe.stdout.strip() or probe.stderr.strip()[-200:]


def run(title: str, budget_s: float, out: Path) -> str:
    stmt, setup, variants, metrics = RUNS[title]
    with tempfile.TemporaryDirectory(prefix="perflab-bench-gpu-") as tmp:
        argv = [sys.executable, "-m", "perflab.cli.main", "run", "--stmt", stmt, "--setup", setup]
        for variant in variants:
            argv += ["--variant", variant]
        argv += ["--metric", metrics, "--budget", f"{budget_s:g}"]
        argv += ["--json", str(out / f"run-{title}.json"), "--store", str(Path(tmp) / "s.db")]
        completed = subprocess.run(
            argv, capture_output=True, text=True, env={**os.environ, "COLUMNS": "120"}
        )
    (out / f"run-{title}.txt").write_text(completed.stdout + completed.stderr)
    if completed.returncode != 0:
        return f"## {title}\n\nexit {completed.returncode}: {completed.stderr[-2000:]}\n"
    return summary(title, json.loads((out / f"run-{title}.json").read_text()))


def summary(title: str, document: dict[str, Any]) -> str:
    lines = [f"## {title}", ""]
    for comparison in document["comparisons"]:
        ratio = comparison.get("ratio")
        low, high = comparison.get("ci_low"), comparison.get("ci_high")
        lines.append(
            f"- {comparison['metric']}: {comparison['baseline']} → {comparison['variant']} "
            f"{comparison.get('verdict')} ratio {ratio} [{low}, {high}]"
        )
        details = comparison.get("details") or {}
        for side in ("baseline_device", "variant_device"):
            device = details.get(side) or comparison.get(side)
            if device:
                lines.append(
                    f"  - {side}: host {device['host_us_per_iteration']:.3g} µs, device "
                    f"{device['device_us_per_iteration']:.3g} µs, launches "
                    f"{device['launches_per_iteration']:.3g}, {device['bound']}"
                )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="directory for the results")
    parser.add_argument("--budget", type=float, default=40.0, help="seconds per run")
    parser.add_argument("--skip-runs", action="store_true", help="capture only")
    parser.add_argument("--skip-capture", action="store_true", help="runs only")
    parser.add_argument("--run", action="append", choices=sorted(RUNS), help="these runs only")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    device = device_name()
    if not args.skip_capture:
        captured: dict[str, Any] = {"device": device}
        for case in CAPTURES:
            try:
                captured[case] = capture(case)
            except Exception as error:  # one failing case must not lose the others
                captured[case] = {"error": repr(error)}
            print(f"captured {case}", flush=True)
        (args.out / "captured.json").write_text(json.dumps(captured, indent=1))
    if args.skip_runs:
        return 0
    report = [f"# perflab on {device}\n"]
    for title in args.run or RUNS:
        report.append(run(title, args.budget, args.out))
        print(report[-1], flush=True)
    (args.out / "runs.md").write_text("\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
