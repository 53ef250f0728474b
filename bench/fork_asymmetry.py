"""Why forked time-lens workers broke A/A honesty: a small experiment on torch.add.

    PYTHONPATH=src .venv/bin/python bench/fork_asymmetry.py [--generations 6] [--fresh 2]
        [--blocks 10] [--servers 1] [--stmt ...] [--setup ...] [--out FILE]

Two variants of the same code (an A/A). `--servers K` starts K rounds of one fork server per
variant (each round its own hash seed, both variants' servers alike, ASLR off, pinned to the
measuring CPU as perflab pins them) and forks `--generations` generations of one worker per
variant from each round; `--fresh G` also runs G generations of fresh workers for comparison.
Each worker registers one op that times a sample as the time lens does and reads, around it, the
process's page faults (getrusage minflt/majflt), its voluntary and involuntary context switches
and its run-queue wait. Per generation it prints each variant's median time per iteration, the
trimmed mean log ratio (the time lens's unit), and the page faults per sample: a fault inside the
timed loop is work one variant's worker does and the other's may not.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from perflab.machine.proc import SubprocessRunner  # noqa: E402
from perflab.measure.fork_server import ForkServerClient  # noqa: E402
from perflab.measure.worker_client import StatementWorker, WorkerLaunch, WorkerOps  # noqa: E402
from perflab.plan.schedule import block_orders  # noqa: E402
from perflab.records.model import Benchmark, Variant  # noqa: E402

PROBE_OPS = WorkerOps(
    "fork-probe",
    """
import resource

def _usage():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_minflt, u.ru_majflt, u.ru_nvcsw, u.ru_nivcsw

def probe_sample(worker, request):
    loops = int(request["loops"])
    before = _usage()
    wall_ns, cpu_ns, queued = worker.accounted(loops)
    after = _usage()
    return {"ok": True, "wall_ns": wall_ns, "cpu_ns": cpu_ns, "run_queue_ns": queued,
            "minflt": after[0] - before[0], "majflt": after[1] - before[1],
            "nvcsw": after[2] - before[2], "nivcsw": after[3] - before[3]}

OPS = {"probe_sample": probe_sample}
""",
)


def measuring_cpu() -> int:
    return max(os.sched_getaffinity(0))


def sample(worker: StatementWorker, loops: int) -> dict[str, Any]:
    reply = worker.call({"op": "probe_sample", "loops": loops})
    if not reply.get("ok"):
        raise worker.failure(reply)
    return reply


def trimmed_mean(values: list[float], cut: float = 0.2) -> float:
    """The 20%-trimmed mean of a generation's pair log ratios (the time lens's per-generation
    value when this experiment was made; it takes the median since)."""
    ordered = sorted(values)
    k = max(int(cut * len(ordered)), 1 if len(ordered) >= 3 else 0)
    kept = ordered[k : len(ordered) - k]
    return sum(kept) / len(kept)


def _unpreempted(reply: dict[str, Any]) -> float:
    """The sample without the time other processes took (as perflab's --preempted correct)."""
    wall = float(reply["wall_ns"])
    queued = reply.get("run_queue_ns") or 0
    off_cpu = wall if reply.get("cpu_ns") is None else max(0.0, wall - reply["cpu_ns"])
    return wall - min(queued, off_cpu)


def generation(
    workers: list[StatementWorker], loops: int, blocks: int, rng: random.Random
) -> dict[str, Any]:
    rows: list[list[dict[str, Any]]] = [[], []]
    log_ratios: list[float] = []
    corrected_log_ratios: list[float] = []
    for block, order in enumerate(block_orders(2, rng)):
        if block >= blocks:
            break
        got = {index: sample(workers[index], loops) for index in order}
        if block < 2:  # warm-up, as the time lens
            continue
        for index in (0, 1):
            rows[index].append(got[index])
        log_ratios.append(math.log(got[1]["wall_ns"] / got[0]["wall_ns"]))
        corrected_log_ratios.append(math.log(_unpreempted(got[1]) / _unpreempted(got[0])))
    return {
        "corrected_log_ratio": trimmed_mean(corrected_log_ratios),
        "per_iteration_ns": [
            statistics.median(r["wall_ns"] for r in side) / loops for side in rows
        ],
        "log_ratio": trimmed_mean(log_ratios),
        "minflt_per_sample": [statistics.mean(r["minflt"] for r in side) for side in rows],
        "first_minflt": [side[0]["minflt"] for side in rows],
        "nivcsw_per_sample": [statistics.mean(r["nivcsw"] for r in side) for side in rows],
        "run_queue_ms": [sum((r["run_queue_ns"] or 0) for r in side) / 1e6 for side in rows],
    }


def show(label: str, row: dict[str, Any]) -> None:
    a, b = row["per_iteration_ns"]
    print(
        f"{label:>14}  A {a:8.0f} ns  B {b:8.0f} ns  ratio {math.exp(row['log_ratio']):7.3f}  "
        f"corrected {math.exp(row['corrected_log_ratio']):7.3f}  "
        f"minflt/sample A {row['minflt_per_sample'][0]:7.1f} B {row['minflt_per_sample'][1]:7.1f}  "
        f"nivcsw A {row['nivcsw_per_sample'][0]:.1f} B {row['nivcsw_per_sample'][1]:.1f}  "
        f"runq ms A {row['run_queue_ms'][0]:.1f} B {row['run_queue_ms'][1]:.1f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stmt", default="torch.add(x, y)")
    parser.add_argument("--setup", default="import torch; x = torch.ones(1); y = torch.ones(1)")
    parser.add_argument("--generations", type=int, default=6, help="forked, per server round")
    parser.add_argument("--servers", type=int, default=1, help="rounds of one server per variant")
    parser.add_argument("--fresh", type=int, default=2, help="generations of fresh workers")
    parser.add_argument("--blocks", type=int, default=10)
    parser.add_argument("--sample-ms", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    runner = SubprocessRunner()
    cpu = measuring_cpu()
    benchmark = Benchmark(name=args.stmt, stmt=args.stmt, setup=args.setup)
    variants = [Variant(name="A"), Variant(name="B")]
    python = sys.executable
    print(f"load {os.getloadavg()}, measuring CPU {cpu}", flush=True)
    result: dict[str, Any] = {"load_before": os.getloadavg(), "forked": [], "fresh": []}
    loops = 0
    for round_index in range(args.servers):
        layout = {"PYTHONHASHSEED": str(rng.randrange(1, 2**32 - 1))}
        started = time.monotonic()
        servers = [
            ForkServerClient(
                runner,
                benchmark,
                v,
                WorkerLaunch(python, cpu, 60, extra_env=layout, disable_aslr=True),
            )
            for v in variants
        ]
        print(f"round {round_index}: servers up in {time.monotonic() - started:.1f} s", flush=True)
        try:
            for g in range(args.generations):
                order = [0, 1] if rng.random() < 0.5 else [1, 0]
                padding = rng.randrange(4096)
                workers: dict[int, StatementWorker] = {}
                for index in order:
                    workers[index] = servers[index].worker(padding=padding, ops=(PROBE_OPS,))
                pair = [workers[0], workers[1]]
                try:
                    if not loops:
                        loops = pair[0].calibrate(int(args.sample_ms * 1e6))
                    row = generation(pair, loops, args.blocks, rng)
                finally:
                    for w in pair:
                        w.close()
                row.update(round=round_index, forked_first="AB"[order[0]])
                result["forked"].append(row)
                show(f"r{round_index} fork {g} ({row['forked_first']}1st)", row)
        finally:
            for s in servers:
                s.close()
    for g in range(args.fresh):
        layout = {"PYTHONHASHSEED": str(rng.randrange(1, 2**32 - 1))}
        pair = [
            StatementWorker.start(
                runner,
                benchmark,
                v,
                WorkerLaunch(python, cpu, 60, extra_env=layout, disable_aslr=True),
                ops=(PROBE_OPS,),
            )
            for v in variants
        ]
        try:
            if not loops:
                loops = pair[0].calibrate(int(args.sample_ms * 1e6))
            row = generation(pair, loops, args.blocks, rng)
        finally:
            for w in pair:
                w.close()
        result["fresh"].append(row)
        show(f"fresh {g}", row)
    result["load_after"] = os.getloadavg()
    result["loops"] = loops
    print(f"loops {loops}; load {os.getloadavg()}", flush=True)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
